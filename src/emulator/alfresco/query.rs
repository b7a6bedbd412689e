//! Alfresco REST v1 `GET queries/nodes` (findNodes), what readers beside an import search
//! with: the term (required, at least 3 alphanumeric characters, `*` as a wildcard, quotes
//! allowed) matched against node names below `rootNodeId` (default the repository's root;
//! aliases as elsewhere; 404 when missing), optionally only `nodeType` `cm:content` or
//! `cm:folder` (other types are refused, not ignored), paged with `skipCount`/`maxItems`, as a
//! `NodePaging`. The real server also matches titles, descriptions, content and tags through
//! its search index (which lags); the emulation searches names, at once. Shapes follow
//! `tests/specs/alfresco/alfresco-core.yaml`.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;

use super::{bad, blocking, lookup, node_page, paging};
use crate::emulator::State;

type Resp = Response<Full<Bytes>>;

/// A search term as a lower-case LIKE pattern matching names that hold it; `None` when it has
/// fewer than 3 alphanumeric characters.
fn pattern(term: &str) -> Option<String> {
    let t = term.trim();
    let t = t
        .strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(t);
    if t.chars().filter(|c| c.is_alphanumeric()).count() < 3 {
        return None;
    }
    let mut like = String::from("%");
    for c in t.to_lowercase().chars() {
        match c {
            '*' => like.push('%'),
            '%' | '_' | '\\' => {
                like.push('\\');
                like.push(c);
            }
            c => like.push(c),
        }
    }
    like.push('%');
    Some(like)
}

pub(super) async fn find_nodes(state: &State, user: &str, query: &[(String, String)]) -> Resp {
    let param = |k: &str| query.iter().find(|(q, _)| q == k).map(|(_, v)| v.as_str());
    let Some(term) = param("term") else {
        return bad("Query 'term' not specified");
    };
    let Some(like) = pattern(term) else {
        return bad("Query 'term' must contain at least 3 alphanumeric characters");
    };
    let (skip, max) = match paging(query) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let kind = match param("nodeType") {
        None => None,
        Some("cm:content") => Some(false),
        Some("cm:folder") => Some(true),
        Some(t) => {
            return bad(&format!(
                "The embedded target does not emulate nodeType={t}"
            ));
        }
    };
    let root = match lookup(state, user, param("rootNodeId").unwrap_or("-root-"), None).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    let rid = root.id.clone();
    let found = blocking(&state.store, move |s| {
        s.search_names(&rid, &like, kind, skip, max)
    });
    node_page(found.await, skip, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_become_name_patterns_and_short_ones_are_refused() {
        assert_eq!(pattern("Doc").as_deref(), Some("%doc%"));
        assert_eq!(pattern("\"ib-00*\"").as_deref(), Some("%ib-00%%"));
        assert_eq!(pattern("a_b%c").as_deref(), Some("%a\\_b\\%c%"));
        assert_eq!(pattern("ab"), None);
        assert_eq!(pattern("a**b"), None);
    }
}
