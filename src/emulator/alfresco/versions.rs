//! Alfresco REST v1 emulation of what changes a document after its upload and what reads its
//! history: `PUT nodes/{id}` (properties, validated as on create), `PUT nodes/{id}/content`
//! (a new version: minor by default, major with `majorVersion=true`, with `comment`; a node
//! that is not versionable is overwritten unless either parameter asks for versioning, which
//! makes it versionable), `GET nodes/{id}/versions` (newest first; properties only with
//! `include=properties`, as the real server), `GET …/versions/{versionId}` and its content.
//! Shapes follow `tests/specs/alfresco/alfresco-core.yaml`.

#![allow(clippy::result_large_err)]

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use serde_json::{Value, json};

use super::{
    bad, blocking, content_resp, error, json_resp, lookup, mime_for, node_json, not_found,
    raw_properties, store_failure,
};
use crate::emulator::State;
use crate::emulator::store::{ContentUpdate, Increase, Node, Version};
use crate::timefmt;

type Resp = Response<Full<Bytes>>;

const LABEL: &str = "cm:versionLabel";

/// The document `id` (not a folder), or the answer to give.
async fn document(state: &State, user: &str, id: &str) -> Result<Node, Resp> {
    let n = lookup(state, user, id, None).await?;
    if n.is_folder {
        return Err(bad(&format!("Node {id} is not a file")));
    }
    Ok(n)
}

/// `PUT nodes/{id}` with a NodeBodyUpdate: its `properties`, typed and checked as on create
/// (unknown → 400, unconvertible → 400), merged into the node's; the aspects they bring are
/// added. Other fields of the body are not emulated and are refused (400), not ignored.
pub async fn update_node(state: &Arc<State>, user: &str, id: &str, body: Bytes) -> Resp {
    let n = match document(state, user, id).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    let v: Value = match serde_json::from_slice(&body) {
        Ok(Value::Object(v)) => Value::Object(v),
        _ => return bad("Could not read content from HTTP request body"),
    };
    if let Some(k) = v
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "properties"))
    {
        return bad(&format!(
            "The embedded target does not emulate updating {k}"
        ));
    }
    let (typed, added) = match state.dict.convert_update(&raw_properties(&v)) {
        Ok(x) => x,
        Err(r) => return error(r.status, "framework.exception.InvalidArgument", &r.message),
    };
    let mut props: serde_json::Map<String, Value> =
        serde_json::from_str(&n.properties).unwrap_or_default();
    props.extend(typed);
    let mut aspects: Vec<String> = serde_json::from_str(&n.aspects).unwrap_or_default();
    for a in added {
        if !aspects.contains(&a) {
            aspects.push(a);
        }
    }
    let (p, a, nid) = (
        Value::Object(props).to_string(),
        json!(aspects).to_string(),
        n.id.clone(),
    );
    match blocking(&state.store, move |s| {
        s.update_properties(&nid, &p, &a, LABEL)
    })
    .await
    {
        Ok(n) => json_resp(200, &json!({"entry": node_json(&n)})),
        Err(e) => store_failure(e),
    }
}

/// `PUT nodes/{id}/content`: the body is the new content.
pub async fn put_content(
    state: &Arc<State>,
    user: &str,
    id: &str,
    query: &[(String, String)],
    body: Bytes,
) -> Resp {
    let n = match document(state, user, id).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    let q = |k: &str| query.iter().find(|(q, _)| q == k).map(|(_, v)| v.clone());
    if q("name").is_some() {
        return bad("The embedded target does not emulate renaming on a content update");
    }
    let major = match q("majorVersion").as_deref() {
        None => None,
        Some(v) if v.eq_ignore_ascii_case("true") => Some(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Some(false),
        Some(v) => return bad(&format!("Invalid value for majorVersion: {v}")),
    };
    let comment = q("comment");
    let versionable = n.aspects.contains("\"cm:versionable\"");
    let increase = if versionable || major.is_some() || comment.is_some() {
        Some(if major == Some(true) {
            Increase::Major
        } else {
            Increase::Minor
        })
    } else {
        None
    };
    let update = ContentUpdate {
        increase,
        comment,
        first_label: "1.0",
        label_key: LABEL,
        user: user.to_string(),
    };
    let nid = n.id.clone();
    let r = blocking(&state.store, move |s| {
        s.update_content(&nid, &body, &update, |label, node| {
            let mut props: serde_json::Map<String, Value> =
                serde_json::from_str(&node.properties).unwrap_or_default();
            props.insert(LABEL.into(), json!(label));
            let kind = if label.ends_with(".0") {
                "MAJOR"
            } else {
                "MINOR"
            };
            props.insert("cm:versionType".into(), json!(kind));
            let mut aspects: Vec<String> = serde_json::from_str(&node.aspects).unwrap_or_default();
            if !aspects.iter().any(|a| a == "cm:versionable") {
                aspects.push("cm:versionable".into());
            }
            (Value::Object(props).to_string(), json!(aspects).to_string())
        })
    })
    .await;
    match r {
        Ok(n) => json_resp(200, &json!({"entry": node_json(&n)})),
        Err(e) => store_failure(e),
    }
}

fn version_json(n: &Node, v: &Version, with_props: bool) -> Value {
    let (mime, mime_name) = mime_for(&n.name);
    let user = json!({"id": v.creator, "displayName": v.creator});
    let mut e = json!({
        "id": v.label,
        "name": n.name,
        "nodeType": n.node_type,
        "isFolder": false,
        "isFile": true,
        "modifiedAt": timefmt::alfresco_datetime_ms(v.created_at_ms),
        "modifiedByUser": user,
        "content": {"mimeType": n.mime.as_deref().unwrap_or(mime), "mimeTypeName": mime_name, "sizeInBytes": v.size, "encoding": "UTF-8"},
    });
    if let Some(c) = &v.comment {
        e["versionComment"] = json!(c);
    }
    if with_props {
        let props: Value = serde_json::from_str(&v.properties).unwrap_or(json!({}));
        e["properties"] = props;
        e["aspectNames"] = serde_json::from_str(&n.aspects).unwrap_or(json!([]));
    }
    e
}

async fn history(state: &State, user: &str, id: &str) -> Result<(Node, Vec<Version>), Resp> {
    let n = document(state, user, id).await?;
    let nid = n.id.clone();
    match blocking(&state.store, move |s| s.versions(&nid, LABEL)).await {
        Ok(Some(v)) => Ok((n, v)),
        Ok(None) => Err(not_found(id)),
        Err(e) => Err(store_failure(e)),
    }
}

/// `GET nodes/{id}/versions`: newest first, paged.
pub async fn list(state: &State, user: &str, id: &str, query: &[(String, String)]) -> Resp {
    let (n, mut vs) = match history(state, user, id).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let num = |k: &str, d: u64| {
        query
            .iter()
            .find(|(q, _)| q == k)
            .map_or(Ok(d), |(_, v)| v.parse::<u64>())
    };
    let (Ok(skip), Ok(max)) = (num("skipCount", 0), num("maxItems", 100)) else {
        return bad("Invalid paging parameter");
    };
    if max == 0 {
        return bad("Invalid paging parameter maxItems");
    }
    let with_props = query
        .iter()
        .any(|(k, v)| k == "include" && v.split(',').any(|i| i == "properties"));
    vs.reverse();
    let total = vs.len() as u64;
    let entries: Vec<Value> = vs
        .iter()
        .skip(skip as usize)
        .take(max as usize)
        .map(|v| json!({"entry": version_json(&n, v, with_props)}))
        .collect();
    super::list_page(entries, total, skip, max)
}

/// `GET nodes/{id}/versions/{versionId}`.
pub async fn one(state: &State, user: &str, id: &str, vid: &str) -> Resp {
    let (n, vs) = match history(state, user, id).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    match vs.iter().find(|v| v.label == vid) {
        Some(v) => json_resp(200, &json!({"entry": version_json(&n, v, true)})),
        None => not_found(vid),
    }
}

/// `GET nodes/{id}/versions/{versionId}/content`.
pub async fn content(state: &State, user: &str, id: &str, vid: &str) -> Resp {
    let n = match document(state, user, id).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    let (nid, v) = (n.id.clone(), vid.to_string());
    match blocking(&state.store, move |s| s.read_version(&nid, &v, LABEL)).await {
        Ok(Some(bytes)) => content_resp(&n, bytes),
        Ok(None) => not_found(vid),
        Err(e) => store_failure(e),
    }
}
