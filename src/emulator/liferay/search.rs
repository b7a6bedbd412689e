//! Liferay's document lists narrowed by `search`, `filter` and `flatten` (what readers beside
//! an import query with): `search` matches documents whose title or file name holds the
//! words (case-insensitive), `filter` takes the OData subset below over Document's filterable
//! fields, and `flatten=true` takes every folder below the listed one (for the site: the
//! whole site, not only its root folder). The real server searches its index (which lags, and
//! matches content, description and keywords too, word by word); the emulation searches the
//! store, at once. Strict where Liferay is: a filter that does not parse, names a field
//! Document does not filter on, or compares a field with the wrong kind of value is 400 with
//! a Problem body; a filter Liferay would take but the emulation does not (`or`, `not`,
//! dates, categories) is 400 saying so, never ignored.

use super::{Resp, State, folder_by_num, page_json, problem, site_root};

/// A page request's narrowing, parsed from its query string.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Criteria {
    /// Lower-case, trimmed; None or empty: no search.
    search: Option<String>,
    filter: Vec<Cond>,
    flatten: bool,
}

/// One comparison of a filter (comparisons are joined with `and`).
#[derive(Debug, PartialEq)]
enum Cond {
    TitleEq(String),
    TitleContains(String),
    TitleStartsWith(String),
    ExtensionEq(String),
    FolderEq(i64),
}

/// Document's filterable fields (`DocumentEntityModel`); those the emulation compares are
/// `title`, `fileExtension` and `documentFolderId`.
const FILTERABLE: &[&str] = &[
    "assetLibraryKey",
    "creatorId",
    "dateCreated",
    "dateModified",
    "documentFolderId",
    "fileExtension",
    "keywords",
    "taxonomyCategoryIds",
    "title",
];

impl Criteria {
    /// The criteria of `query`, None when it asks for none (a plain page of a folder).
    pub(super) fn of(query: &[(String, String)]) -> Result<Option<Criteria>, Resp> {
        let get = |k: &str| query.iter().find(|(q, _)| q == k).map(|(_, v)| v.as_str());
        let flatten = match get("flatten") {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("true") => true,
            Some(v) if v.eq_ignore_ascii_case("false") => false,
            Some(v) => return Err(problem(400, &format!("Invalid flatten {v}"))),
        };
        let search = get("search")
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty());
        let filter = match get("filter").map(str::trim).filter(|f| !f.is_empty()) {
            None => Vec::new(),
            Some(f) => parse_filter(f).map_err(|m| problem(400, &m))?,
        };
        let c = Criteria {
            search,
            filter,
            flatten,
        };
        Ok((c != Criteria::default()).then_some(c))
    }
}

/// `title eq 'A'`, `contains(title,'a')`, `startswith(title,'a')`, `fileExtension eq 'pdf'`,
/// `documentFolderId eq 42`, joined by ` and `.
fn parse_filter(f: &str) -> Result<Vec<Cond>, String> {
    let invalid = |why: &str| format!("Invalid filter {f}: {why}");
    let mut out = Vec::new();
    let mut rest = f.trim();
    loop {
        let (cond, after) = comparison(rest).map_err(|e| match e {
            Bad::Syntax(why) => invalid(&why),
            Bad::Field(name) => {
                format!("A property used in the filter criteria is not supported: {name}")
            }
            Bad::Unemulated(what) => {
                format!("The embedded target does not emulate {what} in a filter")
            }
        })?;
        out.push(cond);
        let after = after.trim_start();
        if after.is_empty() {
            return Ok(out);
        }
        let word_end = after.find(' ').unwrap_or(after.len());
        match &after[..word_end] {
            "and" => rest = after[word_end..].trim_start(),
            "or" => return Err("The embedded target does not emulate or in a filter".into()),
            w => return Err(invalid(&format!("unexpected {w}"))),
        }
    }
}

enum Bad {
    Syntax(String),
    Field(String),
    Unemulated(String),
}

/// One comparison at the start of `s`, and what follows it.
fn comparison(s: &str) -> Result<(Cond, &str), Bad> {
    for (func, make) in [
        ("contains(", Cond::TitleContains as fn(String) -> Cond),
        ("startswith(", Cond::TitleStartsWith),
    ] {
        if let Some(args) = s.strip_prefix(func) {
            let (field, args) = args
                .split_once(',')
                .ok_or_else(|| Bad::Syntax(format!("{func}field, 'text') expected")))?;
            let field = field.trim();
            let (lit, rest) = literal(args.trim_start())?;
            let rest = rest
                .trim_start()
                .strip_prefix(')')
                .ok_or_else(|| Bad::Syntax(format!("{func} is not closed")))?;
            return match (field, lit) {
                ("title", Lit::Str(v)) => Ok((make(v.to_lowercase()), rest)),
                ("title", Lit::Int(_)) => Err(Bad::Syntax("title is a string".into())),
                (f, _) if FILTERABLE.contains(&f) => Err(Bad::Unemulated(format!("{func}{f})"))),
                (f, _) => Err(Bad::Field(f.to_string())),
            };
        }
    }
    if s.starts_with('(') || s.starts_with("not ") {
        return Err(Bad::Unemulated("groups or not".into()));
    }
    let mut words = s.splitn(3, ' ');
    let field = words.next().unwrap_or("");
    let op = words.next().unwrap_or("");
    let rest = words.next().unwrap_or("");
    if !FILTERABLE.contains(&field) {
        return Err(if field.is_empty() || field.contains(['(', '\'']) {
            Bad::Syntax("a field name expected".into())
        } else {
            Bad::Field(field.to_string())
        });
    }
    if !matches!(op, "eq" | "ne" | "gt" | "ge" | "lt" | "le") {
        return Err(Bad::Syntax(format!(
            "{field}: an operator expected, not {op:?}"
        )));
    }
    let (lit, rest) = literal(rest.trim_start())?;
    let cond = match (field, op, lit) {
        ("title", "eq", Lit::Str(v)) => Cond::TitleEq(v),
        ("fileExtension", "eq", Lit::Str(v)) => Cond::ExtensionEq(v.to_lowercase()),
        ("documentFolderId", "eq", Lit::Int(n)) => Cond::FolderEq(n),
        ("title" | "fileExtension", _, Lit::Int(_)) | ("documentFolderId", _, Lit::Str(_)) => {
            return Err(Bad::Syntax(format!(
                "{field} compared with the wrong kind of value"
            )));
        }
        (f, o, _) => return Err(Bad::Unemulated(format!("{f} {o}"))),
    };
    Ok((cond, rest))
}

enum Lit {
    Str(String),
    Int(i64),
}

/// A quoted string (`''` is a quote) or an integer at the start of `s`, and what follows.
fn literal(s: &str) -> Result<(Lit, &str), Bad> {
    if let Some(body) = s.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = body.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|x| x.1) == Some('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Ok((Lit::Str(out), &body[i + 1..]));
                }
            } else {
                out.push(c);
            }
        }
        return Err(Bad::Syntax("a string is not closed".into()));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(s.len());
    match s[..end].parse::<i64>() {
        Ok(n) => Ok((Lit::Int(n), &s[end..])),
        Err(_) => Err(Bad::Syntax("a value ('text' or a number) expected".into())),
    }
}

/// `%text%`-style LIKE pattern pieces escaped for `ESCAPE '\'`.
fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The page of documents in folder `parent` (a store id) that `c` selects.
pub(super) async fn page(state: &State, parent: String, c: Criteria, page: u64, size: u64) -> Resp {
    let mut cond = vec!["1 = 1".to_string()];
    let mut args: Vec<String> = Vec::new();
    let arg = |v: String, args: &mut Vec<String>| {
        args.push(v);
        format!("?{}", args.len() + 3)
    };
    if let Some(s) = &c.search {
        let a = arg(format!("%{}%", like_escape(s)), &mut args);
        cond.push(format!(
            "(title_key LIKE {a} ESCAPE '\\' OR name_key LIKE {a} ESCAPE '\\')"
        ));
    }
    for f in &c.filter {
        cond.push(match f {
            Cond::TitleEq(v) => format!("title = {}", arg(v.clone(), &mut args)),
            Cond::TitleContains(v) => format!(
                "title_key LIKE {} ESCAPE '\\'",
                arg(format!("%{}%", like_escape(v)), &mut args)
            ),
            Cond::TitleStartsWith(v) => format!(
                "title_key LIKE {} ESCAPE '\\'",
                arg(format!("{}%", like_escape(v)), &mut args)
            ),
            Cond::ExtensionEq(v) => format!(
                "name_key LIKE {} ESCAPE '\\'",
                arg(format!("%.{}", like_escape(v)), &mut args)
            ),
            Cond::FolderEq(n) => {
                // 0 is the site's root folder; a folder that does not exist matches nothing.
                let id = if *n == 0 {
                    site_root(state).await.unwrap_or_default()
                } else {
                    folder_by_num(state, &n.to_string())
                        .await
                        .map(|f| f.id)
                        .unwrap_or_default()
                };
                format!("parent_id = {}", arg(id, &mut args))
            }
        });
    }
    let cond = cond.join(" AND ");
    let skip = (page - 1) * size;
    let found = super::blocking(&state.store, move |s| {
        s.documents_where(&parent, c.flatten, &cond, &args, skip, size)
    })
    .await;
    match found {
        Ok((nodes, total)) => {
            let mut items = Vec::with_capacity(nodes.len());
            for n in &nodes {
                items.push(super::document_json(state, n, false).await);
            }
            super::json_resp(200, &page_json(items, page, size, total))
        }
        Err(e) => super::store_failure(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn filters_parse_into_comparisons() {
        assert_eq!(
            parse_filter("title eq 'It''s A' and contains(title, 'Doc-0') and fileExtension eq 'PDF' and documentFolderId eq 42")
                .unwrap(),
            vec![
                Cond::TitleEq("It's A".into()),
                Cond::TitleContains("doc-0".into()),
                Cond::ExtensionEq("pdf".into()),
                Cond::FolderEq(42)
            ]
        );
        assert_eq!(
            parse_filter("startswith(title,'x')").unwrap(),
            vec![Cond::TitleStartsWith("x".into())]
        );
    }

    #[test]
    fn bad_filters_are_refused_and_say_why() {
        for (f, want) in [
            ("title eq 'open", "Invalid filter"),
            ("title eq", "Invalid filter"),
            ("title like 'x'", "Invalid filter"),
            ("title eq 5", "Invalid filter"),
            ("documentFolderId eq 'x'", "Invalid filter"),
            ("title eq 'a' xor title eq 'b'", "Invalid filter"),
            ("bogus eq 'x'", "not supported: bogus"),
            ("contains(fileName,'x')", "not supported: fileName"),
            ("title eq 'a' or title eq 'b'", "does not emulate"),
            ("dateCreated gt 2020", "does not emulate"),
            ("(title eq 'a')", "does not emulate"),
        ] {
            let e = parse_filter(f).unwrap_err();
            assert!(e.contains(want), "{f}: {e}");
        }
    }

    #[test]
    fn a_plain_page_has_no_criteria() {
        assert_eq!(Criteria::of(&q(&[("page", "2")])).unwrap(), None);
        assert_eq!(Criteria::of(&q(&[("search", "  ")])).unwrap(), None);
        let c = Criteria::of(&q(&[("flatten", "true"), ("search", " Doc-1 ")]))
            .unwrap()
            .unwrap();
        assert_eq!((c.search.as_deref(), c.flatten), (Some("doc-1"), true));
        assert!(Criteria::of(&q(&[("flatten", "yes")])).is_err());
        assert!(Criteria::of(&q(&[("filter", "nope")])).is_err());
    }
}
