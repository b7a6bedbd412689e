//! Liferay emulation of a document's file versions: `PUT /documents/{id}` (multipart `file`
//! and `document`, as on create) stores the bytes as a new file version (1.0, 1.1, 1.2, ...:
//! an automatic increase on new content is a minor one) and replaces the metadata; the folder
//! is not changed by it (`documentFolderId` is ignored, as `updateFileEntry` has no folder),
//! and a different file name or title is refused (renaming is not emulated). The history is
//! read through the portal's JSON web service `dlfileversion/get-file-versions` (newest
//! first) and each version's bytes through the document servlet
//! `/documents/{group}/{folder}/{name}/{uuid}?version=`, which headless-delivery does not
//! replace.

#![allow(clippy::result_large_err)]

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::http::request::Parts;
use serde_json::{Value, json};

use super::{
    Caller, blocking, caller, document_by_num, document_json, json_resp, problem, store_failure,
};
use crate::emulator::State;
use crate::emulator::store::{ContentUpdate, Increase};
use crate::timefmt;

type Resp = Response<Full<Bytes>>;

/// Where a Liferay document's version label is kept among its stored metadata.
pub const LABEL: &str = "version";

/// `PUT /documents/{id}`.
pub async fn put_document(
    state: &Arc<State>,
    parts: &Parts,
    user: &str,
    num: &str,
    body: Bytes,
) -> Resp {
    let node = match document_by_num(state, num).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    let (file, doc) = match super::upload_request(parts, &body) {
        Ok(x) => x,
        Err(r) => return r,
    };
    if doc.file_name != node.name || Some(&doc.title) != node.title.as_ref() {
        return problem(
            400,
            "The embedded target does not emulate renaming a document on update",
        );
    }
    let meta = doc.stored_metadata();
    let update = ContentUpdate {
        increase: Some(Increase::Minor),
        comment: None,
        first_label: "1.0",
        label_key: LABEL,
        user: user.to_string(),
    };
    let (id, data) = (node.id.clone(), file.data.clone());
    let r = blocking(&state.store, move |s| {
        s.update_content(&id, &data, &update, |label, n| {
            let mut m = meta;
            m[LABEL] = json!(label);
            (m.to_string(), n.aspects.clone())
        })
    })
    .await;
    match r {
        Ok(n) => json_resp(200, &document_json(state, &n, false).await),
        Err(e) => store_failure(e),
    }
}

/// The caller of a portal call outside headless-delivery, or the answer to give.
fn user_of(state: &State, parts: &Parts) -> Result<String, Resp> {
    match caller(state, parts) {
        Caller::User(u) => Ok(u),
        Caller::Guest => Err(problem(403, "Guest may not read file versions")),
        Caller::BadCredentials => Err(problem(401, "Authentication failed")),
    }
}

/// `GET /api/jsonws/dlfileversion/get-file-versions/file-entry-id/{id}/status/{status}`:
/// the file versions, newest first.
pub async fn file_versions(state: &Arc<State>, parts: &Parts, rest: &str) -> Resp {
    if let Err(r) = user_of(state, parts) {
        return r;
    }
    let segs: Vec<&str> = rest.split('/').collect();
    let ["file-entry-id", num, "status", _] = segs.as_slice() else {
        return problem(404, &format!("No JSON web service action at {rest}"));
    };
    let node = match document_by_num(state, num).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    let id = node.id.clone();
    let vs = match blocking(&state.store, move |s| s.versions(&id, LABEL)).await {
        Ok(Some(v)) => v,
        Ok(None) => return problem(404, &format!("No FileEntry exists with the key {num}")),
        Err(e) => return store_failure(e),
    };
    let items: Vec<Value> = vs
        .iter()
        .rev()
        .map(|v| {
            json!({
                "fileVersionId": node.num * 1000 + v.seq,
                "fileEntryId": node.num,
                "version": v.label,
                "size": v.size,
                "fileName": node.name,
                "title": node.title.clone().unwrap_or_else(|| node.name.clone()),
                "mimeType": node.mime.clone().unwrap_or_default(),
                "changeLog": v.comment.clone().unwrap_or_default(),
                "createDate": v.created_at_ms,
                "modifiedDate": timefmt::datetime_ms(v.created_at_ms),
                "status": 0,
            })
        })
        .collect();
    json_resp(200, &Value::Array(items))
}

/// `GET /documents/{group}/{folder}/{name}/{uuid}?version=X`: a version's bytes (the
/// current one without `version`).
pub async fn servlet(state: &Arc<State>, parts: &Parts, rest: &str) -> Resp {
    if let Err(r) = user_of(state, parts) {
        return r;
    }
    let Some(uuid) = rest.rsplit('/').next().filter(|u| !u.is_empty()) else {
        return problem(404, "No document at this address");
    };
    let query = crate::emulator::alfresco::query_params(parts.uri.query());
    let (id, version) = (
        uuid.to_string(),
        query
            .iter()
            .find(|(k, _)| k == "version")
            .map(|(_, v)| v.clone()),
    );
    let store = state.store.clone();
    let read = tokio::task::spawn_blocking(move || match version {
        Some(v) => store.read_version(&id, &v, LABEL),
        None => store
            .read_content(&id)
            .map(Some)
            .map_err(|e| crate::emulator::store::StoreError::Internal(e.to_string())),
    })
    .await;
    match read {
        Ok(Ok(Some(bytes))) => {
            let mut r = Response::new(Full::new(Bytes::from(bytes)));
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            r
        }
        Ok(Ok(None)) | Ok(Err(_)) => problem(404, "No such file version"),
        Err(e) => problem(500, &e.to_string()),
    }
}
