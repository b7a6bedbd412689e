//! Liferay headless-delivery v1.0 emulation over the same store: documents and document
//! folders (create, get, list with pages, delete), get by external reference code, and the
//! OAuth2 client-credentials token endpoint with expiring tokens. Like Liferay: success is
//! 200 (not 201); a title or file-name clash in a folder is 409; a malformed or unknown
//! property in the `document` part is 400; an expired or unknown bearer token makes the
//! caller Guest, so writes get 403 and lists come back empty, never 401; an unknown document
//! type is dropped silently. Shapes follow `tests/specs/liferay/headless-delivery-documents.yaml`.
//! File versions (`PUT /documents/{id}` and reading them back) are in `liferay/versions.rs`;
//! document lists narrowed by `search`, `filter` and `flatten` (readers' queries) in
//! `liferay/search.rs`.
//!
//! The routes, the token, folders, documents and the `document` part's shape checks are kept
//! together here, so the surface the tool uses reads as one API top to bottom.

// Handlers return a ready error response as `Err`: it is the early return of a route, not a
// value passed around, so its size does not matter.
#![allow(clippy::result_large_err)]

/// Document lists narrowed by `search`, `filter` and `flatten`.
mod search;
/// File versions and the portal's JSON web service for them.
mod versions;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::http::request::Parts;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::State;
use super::multipart;
use super::store::{COMPANY_HOME, NewNode, Node, Store, StoreError, blocking};
use crate::timefmt;

pub const API: &str = "/o/headless-delivery/v1.0/";
pub const TOKEN: &str = "/o/oauth2/token";
/// The portal's JSON web service listing a document's file versions.
pub const JSONWS_VERSIONS: &str = "/api/jsonws/dlfileversion/get-file-versions/";
/// The portal's document servlet (a version's bytes).
pub const SERVLET: &str = "/documents/";
/// The one site: group id 20117, key `guest`.
const SITE_ID: i64 = 20117;
/// The store folder holding the site's document library.
pub const SITE_FOLDER: &str = "Liferay site 20117";
/// Document types the site knows; any other `documentType.name` is dropped, as Liferay does.
const DOCUMENT_TYPES: &[&str] = &["IngestBench Document", "Basic Document"];
/// Writable and read-only fields of Document (read-only ones are ignored on input).
const DOCUMENT_FIELDS: &[&str] = &[
    "actions",
    "adaptedImages",
    "aggregateRating",
    "assetLibraryKey",
    "contentUrl",
    "contentValue",
    "creator",
    "customFields",
    "dateCreated",
    "dateExpired",
    "dateModified",
    "datePublished",
    "description",
    "documentFolderExternalReferenceCode",
    "documentFolderId",
    "documentType",
    "encodingFormat",
    "externalReferenceCode",
    "fileExtension",
    "fileName",
    "friendlyUrlPath",
    "id",
    "keywords",
    "numberOfComments",
    "permissions",
    "relatedContents",
    "renderedContents",
    "siteId",
    "sizeInBytes",
    "taxonomyCategoryBriefs",
    "taxonomyCategoryIds",
    "title",
    "viewableBy",
];

type Resp = Response<Full<Bytes>>;

pub(super) fn json_resp(status: u16, v: &Value) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(serde_json::to_vec(v).expect("json"))));
    *r.status_mut() = hyper::StatusCode::from_u16(status).expect("status");
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// A vulcan `Problem`: `status` is the JAX-RS status *name*.
pub(super) fn problem(status: u16, title: &str) -> Resp {
    let name = match status {
        400 => "BAD_REQUEST",
        401 => "UNAUTHORIZED",
        403 => "FORBIDDEN",
        404 => "NOT_FOUND",
        409 => "CONFLICT",
        415 => "UNSUPPORTED_MEDIA_TYPE",
        _ => "INTERNAL_SERVER_ERROR",
    };
    json_resp(status, &json!({"status": name, "title": title}))
}

fn no_content() -> Resp {
    Response::builder()
        .status(204)
        .body(Full::new(Bytes::new()))
        .expect("response")
}

pub(super) fn store_failure(e: StoreError) -> Resp {
    match e {
        StoreError::Duplicate(n) => problem(
            409,
            &format!("A file entry already exists with file name {n}"),
        ),
        StoreError::DuplicateTitle(t) => {
            problem(409, &format!("A file entry already exists with title {t}"))
        }
        StoreError::DuplicateErc(e) => {
            problem(400, &format!("Duplicate external reference code {e}"))
        }
        StoreError::ParentNotFound => problem(404, "No DLFolder exists with the primary key"),
        StoreError::NotAFolder(n) => problem(400, &format!("{n} is not a folder")),
        StoreError::Internal(m) => problem(500, &m),
    }
}

/// Who is calling.
pub(super) enum Caller {
    User(String),
    /// No credentials, or an expired/unknown token: Liferay runs the request as Guest.
    Guest,
    /// Basic credentials that do not match (verify: Liferay's BasicAuthHeader verifier).
    BadCredentials,
}

pub(super) fn caller(state: &State, parts: &Parts) -> Caller {
    let Some(h) = parts
        .headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return Caller::Guest;
    };
    if let Some(token) = h.strip_prefix("Bearer ") {
        let tokens = state.lr_tokens.lock().expect("tokens");
        return match tokens.get(token.trim()) {
            Some((user, expires)) if Instant::now() < *expires => Caller::User(user.clone()),
            _ => Caller::Guest,
        };
    }
    let Some(b64) = h.strip_prefix("Basic ") else {
        return Caller::Guest;
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    match decoded.as_deref().and_then(|d| d.split_once(':')) {
        Some((u, p)) if state.users.get(u).is_some_and(|s| s.expose() == p) => {
            Caller::User(u.to_string())
        }
        _ => Caller::BadCredentials,
    }
}

fn form_params(body: &[u8]) -> Vec<(String, String)> {
    super::alfresco::query_params(Some(&String::from_utf8_lossy(body)))
}

/// POST /o/oauth2/token, client credentials (in the form or in Basic).
pub async fn token(state: &State, parts: &Parts, body: Bytes) -> Resp {
    let form = form_params(&body);
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    if get("grant_type").as_deref() != Some("client_credentials") {
        return json_resp(400, &json!({"error": "unsupported_grant_type"}));
    }
    let (id, secret) = match (get("client_id"), get("client_secret")) {
        (Some(i), Some(s)) => (i, s),
        _ => match parts
            .headers
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|h| h.strip_prefix("Basic "))
            .and_then(|b| {
                base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .ok()
            })
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| {
                s.split_once(':')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
            }) {
            Some(x) => x,
            None => return json_resp(401, &json!({"error": "invalid_client"})),
        },
    };
    if state.users.get(&id).is_none_or(|s| s.expose() != secret) {
        return json_resp(401, &json!({"error": "invalid_client"}));
    }
    let token =
        uuid::Uuid::new_v4().simple().to_string() + &uuid::Uuid::new_v4().simple().to_string();
    let ttl = state.token_lifetime;
    state
        .lr_tokens
        .lock()
        .expect("tokens")
        .insert(token.clone(), (id, Instant::now() + ttl));
    state
        .logins
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    json_resp(
        200,
        &json!({"access_token": token, "token_type": "Bearer", "expires_in": ttl.as_secs().max(1), "scope": "Liferay.Headless.Delivery.everything"}),
    )
}

fn site_ok(site: &str) -> bool {
    site == "guest" || site == SITE_ID.to_string()
}

async fn site_root(state: &State) -> Result<String, StoreError> {
    blocking(&state.store, |s| s.system_folder(COMPANY_HOME, SITE_FOLDER)).await
}

fn creator(user: &str) -> Value {
    json!({"name": user, "givenName": user, "contentType": "UserAccount"})
}

async fn folder_num(state: &State, parent: Option<&String>) -> i64 {
    let root = site_root(state).await.ok();
    match parent {
        Some(p) if Some(p) != root.as_ref() => {
            let p = p.clone();
            blocking(&state.store, move |s| s.get(&p))
                .await
                .ok()
                .flatten()
                .map_or(0, |n| n.num)
        }
        _ => 0,
    }
}

pub(super) async fn document_json(state: &State, n: &Node, with_content: bool) -> Value {
    let meta: Value = serde_json::from_str(&n.properties).unwrap_or(json!({}));
    let created = timefmt::datetime_ms(n.created_at_ms);
    let folder = folder_num(state, n.parent_id.as_ref()).await;
    let ext = n
        .name
        .rsplit_once('.')
        .map(|(_, e)| e.to_string())
        .unwrap_or_default();
    let mut v = json!({
        "id": n.num,
        "title": n.title.clone().unwrap_or_else(|| n.name.clone()),
        "fileName": n.name,
        "description": meta.get("description").cloned().unwrap_or(json!("")),
        "externalReferenceCode": n.erc.clone().unwrap_or_else(|| n.id.clone()),
        "encodingFormat": n.mime.clone().unwrap_or_else(|| "application/octet-stream".into()),
        "fileExtension": ext,
        "sizeInBytes": n.size,
        "contentUrl": format!(
            "/documents/{SITE_ID}/{folder}/{}/{}?version={}",
            n.name,
            n.id,
            meta.get(versions::LABEL).and_then(Value::as_str).unwrap_or("1.0")
        ),
        "documentFolderId": folder,
        "siteId": SITE_ID,
        "dateCreated": created,
        "dateModified": created,
        "creator": creator(&n.creator),
        "customFields": meta.get("customFields").cloned().unwrap_or(json!([])),
        "keywords": meta.get("keywords").cloned().unwrap_or(json!([])),
        "taxonomyCategoryBriefs": [],
        "adaptedImages": [],
        "relatedContents": [],
        "numberOfComments": 0,
    });
    if let Some(t) = meta.get("documentType") {
        v["documentType"] = t.clone();
    }
    let read = |store: Arc<Store>, id: String| {
        tokio::task::spawn_blocking(move || store.read_content(&id).ok())
    };
    if with_content && let Ok(Some(bytes)) = read(state.store.clone(), n.id.clone()).await {
        v["contentValue"] = json!(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    v
}

async fn folder_json(state: &State, n: &Node) -> Value {
    let created = timefmt::datetime_ms(n.created_at_ms);
    let parent = folder_num(state, n.parent_id.as_ref()).await;
    let id = n.id.clone();
    let docs = blocking(&state.store, move |s| s.children_of_kind(&id, false, 0, 0))
        .await
        .map_or(0, |x| x.1);
    let id = n.id.clone();
    let folders = blocking(&state.store, move |s| s.children_of_kind(&id, true, 0, 0))
        .await
        .map_or(0, |x| x.1);
    json!({
        "id": n.num,
        "name": n.name,
        "description": "",
        "externalReferenceCode": n.erc.clone().unwrap_or_else(|| n.id.clone()),
        "parentDocumentFolderId": parent,
        "siteId": SITE_ID,
        "dateCreated": created,
        "dateModified": created,
        "creator": creator(&n.creator),
        "numberOfDocuments": docs,
        "numberOfDocumentFolders": folders,
        "customFields": [],
    })
}

fn page_params(query: &[(String, String)]) -> Result<(u64, u64), Resp> {
    let get = |k| super::alfresco::number_param(query, k);
    let page = match get("page") {
        None => 1,
        Some(Ok(p)) if p >= 1 => p,
        _ => return Err(problem(400, "Invalid page")),
    };
    let size = match get("pageSize") {
        None => 20,
        Some(Ok(s)) if s >= 1 => s,
        _ => return Err(problem(400, "Invalid pageSize")),
    };
    Ok((page, size))
}

fn page_json(items: Vec<Value>, page: u64, size: u64, total: u64) -> Value {
    json!({"items": items, "page": page, "pageSize": size, "lastPage": total.div_ceil(size).max(1), "totalCount": total, "actions": {}, "facets": []})
}

/// The folder (store id) for a Liferay folder number, 404 when missing.
async fn folder_by_num(state: &State, num: &str) -> Result<Node, Resp> {
    by_num(state, num, true).await
}

pub(super) async fn document_by_num(state: &State, num: &str) -> Result<Node, Resp> {
    by_num(state, num, false).await
}

/// The folder (when `folder`) or else the document with a Liferay number; 404 when none.
async fn by_num(state: &State, num: &str, folder: bool) -> Result<Node, Resp> {
    let missing = || {
        let what = if folder { "DLFolder" } else { "FileEntry" };
        Err(problem(
            404,
            &format!("No {what} exists with the primary key {num}"),
        ))
    };
    let Ok(n) = num.parse::<i64>() else {
        return missing();
    };
    match blocking(&state.store, move |s| s.get_by_num(n)).await {
        Ok(Some(x)) if x.is_folder == folder => Ok(x),
        Ok(_) => missing(),
        Err(e) => Err(store_failure(e)),
    }
}

pub async fn route(state: &Arc<State>, parts: &Parts, body: Bytes) -> Resp {
    // The routing table: one arm per endpoint the tool uses.
    let path = parts.uri.path().to_string();
    if path == TOKEN {
        return if parts.method == "POST" {
            token(state, parts, body).await
        } else {
            problem(405, "Method not allowed")
        };
    }
    if let Some(rest) = path.strip_prefix(JSONWS_VERSIONS) {
        return versions::file_versions(state, parts, rest).await;
    }
    if let Some(rest) = path.strip_prefix(SERVLET) {
        return versions::servlet(state, parts, rest).await;
    }
    let Some(rest) = path.strip_prefix(API) else {
        return problem(404, &format!("No resource at {path}"));
    };
    let user = match caller(state, parts) {
        Caller::User(u) => Some(u),
        Caller::Guest => None,
        Caller::BadCredentials => return problem(401, "Authentication failed"),
    };
    let method = parts.method.as_str();
    let segs: Vec<&str> = rest.split('/').collect();
    // Guest may read nothing here: lists come back empty, writes are refused.
    let Some(user) = user else {
        return match (method, segs.as_slice()) {
            ("GET", [.., "documents"]) | ("GET", [.., "document-folders"]) => {
                json_resp(200, &page_json(vec![], 1, 20, 0))
            }
            ("GET", _) => problem(404, "The resource was not found"),
            _ => problem(403, "User does not have permission (Guest)"),
        };
    };
    endpoint(state, parts, &user, &segs, body).await
}

/// The headless-delivery endpoints, for a signed-in `user`; `segs` is the path below the API.
async fn endpoint(
    state: &Arc<State>,
    parts: &Parts,
    user: &str,
    segs: &[&str],
    body: Bytes,
) -> Resp {
    let query = super::alfresco::query_params(parts.uri.query());
    let method = parts.method.as_str();
    match (method, segs) {
        (_, ["sites", site, ..]) if !site_ok(site) => {
            problem(404, &format!("Unable to get a valid site with ID {site}"))
        }
        ("POST", ["sites", _, "document-folders"]) => {
            let root = match site_root(state).await {
                Ok(r) => r,
                Err(e) => return store_failure(e),
            };
            create_folder(state, user, root, &body).await
        }
        ("POST", ["document-folders", id, "document-folders"]) => {
            match folder_by_num(state, id).await {
                Ok(f) => create_folder(state, user, f.id, &body).await,
                Err(r) => r,
            }
        }
        ("GET", ["sites", _, "document-folders"]) => match site_root(state).await {
            Ok(root) => list(state, root, true, &query).await,
            Err(e) => store_failure(e),
        },
        ("GET", ["document-folders", id, "document-folders"]) => {
            match folder_by_num(state, id).await {
                Ok(f) => list(state, f.id, true, &query).await,
                Err(r) => r,
            }
        }
        ("GET", ["sites", _, "documents"]) => match site_root(state).await {
            Ok(root) => list(state, root, false, &query).await,
            Err(e) => store_failure(e),
        },
        ("GET", ["document-folders", id, "documents"]) => match folder_by_num(state, id).await {
            Ok(f) => list(state, f.id, false, &query).await,
            Err(r) => r,
        },
        ("POST", ["sites", _, "documents"]) => {
            create_document(state, parts, user, None, body).await
        }
        ("POST", ["document-folders", id, "documents"]) => match folder_by_num(state, id).await {
            Ok(f) => create_document(state, parts, user, Some(f.id), body).await,
            Err(r) => r,
        },
        ("GET", ["document-folders", id]) => match folder_by_num(state, id).await {
            Ok(f) => json_resp(200, &folder_json(state, &f).await),
            Err(r) => r,
        },
        ("DELETE", ["document-folders", id]) => match folder_by_num(state, id).await {
            Ok(f) => delete(state, f.id).await,
            Err(r) => r,
        },
        ("GET", ["documents", id]) => match document_by_num(state, id).await {
            Ok(d) => {
                let content = query
                    .iter()
                    .any(|(k, v)| k == "nestedFields" && v.split(',').any(|f| f == "contentValue"));
                json_resp(200, &document_json(state, &d, content).await)
            }
            Err(r) => r,
        },
        ("PUT", ["documents", id]) => versions::put_document(state, parts, user, id, body).await,
        ("DELETE", ["documents", id]) => match document_by_num(state, id).await {
            Ok(d) => delete(state, d.id).await,
            Err(r) => r,
        },
        ("GET", ["sites", _, "documents", "by-external-reference-code", erc])
        | ("DELETE", ["sites", _, "documents", "by-external-reference-code", erc]) => {
            by_erc(state, method, erc).await
        }
        _ => problem(
            404,
            &format!("No resource for {method} {}", parts.uri.path()),
        ),
    }
}

/// `GET` or `DELETE` of the document with external reference code `erc`.
async fn by_erc(state: &State, method: &str, erc: &str) -> Resp {
    let e = erc.to_string();
    match blocking(&state.store, move |s| s.get_by_erc(&e)).await {
        Ok(Some(d)) if !d.is_folder => {
            if method == "DELETE" {
                delete(state, d.id).await
            } else {
                json_resp(200, &document_json(state, &d, false).await)
            }
        }
        Ok(_) => problem(
            404,
            &format!("No FileEntry exists with the external reference code {erc}"),
        ),
        Err(e) => store_failure(e),
    }
}

async fn create_folder(state: &State, user: &str, parent: String, body: &Bytes) -> Resp {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v @ Value::Object(_)) => v,
        _ => return problem(400, "Unable to map JSON path: not a DocumentFolder"),
    };
    let Some(name) = v
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        return problem(400, "Folder name is required");
    };
    // DLValidatorImpl.validateDirectoryName: the same rule as file names.
    if !valid_dl_name(name) {
        return problem(400, &format!("Invalid folder name {name}"));
    }
    let new = NewNode {
        parent_id: parent,
        relative_path: None,
        name: name.to_string(),
        node_type: "cm:folder".into(),
        is_folder: true,
        creator: user.to_string(),
        mime: None,
        properties: "{}".into(),
        aspects: "[]".into(),
        served_by: state.node_name.clone(),
        content: None,
        title: None,
        erc: v
            .get("externalReferenceCode")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    match blocking(&state.store, move |s| s.create(new)).await {
        Ok(n) => json_resp(200, &folder_json(state, &n).await),
        Err(StoreError::Duplicate(n)) => {
            problem(409, &format!("A folder with the name {n} already exists"))
        }
        Err(e) => store_failure(e),
    }
}

async fn list(state: &State, parent: String, folders: bool, query: &[(String, String)]) -> Resp {
    let (page, size) = match page_params(query) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let narrowed = ["search", "filter", "flatten"]
        .iter()
        .any(|k| query.iter().any(|(q, _)| q == k));
    if folders && narrowed {
        return problem(
            400,
            "The embedded target does not emulate search, filter or flatten on document folders",
        );
    }
    match search::Criteria::of(query) {
        Err(r) => return r,
        Ok(Some(c)) => return search::page(state, parent, c, page, size).await,
        Ok(None) => {}
    }
    let skip = (page - 1) * size;
    match blocking(&state.store, move |s| {
        s.children_of_kind(&parent, folders, skip, size)
    })
    .await
    {
        Ok((nodes, total)) => {
            let mut items = Vec::with_capacity(nodes.len());
            for n in &nodes {
                items.push(if folders {
                    folder_json(state, n).await
                } else {
                    document_json(state, n, false).await
                });
            }
            json_resp(200, &page_json(items, page, size, total))
        }
        Err(e) => store_failure(e),
    }
}

async fn delete(state: &State, id: String) -> Resp {
    match blocking(&state.store, move |s| s.delete_tree(&id)).await {
        Ok(_) => no_content(),
        Err(e) => store_failure(e),
    }
}

async fn create_document(
    state: &State,
    parts: &Parts,
    user: &str,
    folder: Option<String>,
    body: Bytes,
) -> Resp {
    let (file, doc) = match upload_request(parts, &body) {
        Ok(x) => x,
        Err(r) => return r,
    };
    // The folder: the path's, else documentFolderId, else the site root.
    let parent = match folder {
        Some(f) => f,
        None => match doc.json.get("documentFolderId").and_then(Value::as_i64) {
            Some(0) | None => match site_root(state).await {
                Ok(r) => r,
                Err(e) => return store_failure(e),
            },
            Some(n) => match folder_by_num(state, &n.to_string()).await {
                Ok(f) => f.id,
                Err(r) => return r,
            },
        },
    };
    // Liferay stores the file part's Content-Type as sent (parameters stripped).
    let mime = file
        .content_type
        .as_deref()
        .map(|c| c.split(';').next().unwrap_or("").trim().to_string())
        .filter(|c| !c.is_empty());
    let new = NewNode {
        parent_id: parent,
        relative_path: None,
        name: doc.file_name.clone(),
        node_type: "DLFileEntry".into(),
        is_folder: false,
        creator: user.to_string(),
        mime: Some(mime.unwrap_or_else(|| "application/octet-stream".into())),
        properties: doc.stored_metadata().to_string(),
        aspects: "[]".into(),
        served_by: state.node_name.clone(),
        content: Some(file.data.clone()),
        title: Some(doc.title),
        erc: Some(doc.erc.unwrap_or_else(|| uuid::Uuid::new_v4().to_string())),
    };
    match blocking(&state.store, move |s| s.create(new)).await {
        Ok(n) => json_resp(200, &document_json(state, &n, false).await),
        Err(e) => store_failure(e),
    }
}

/// An upload's multipart body as Liferay reads it, for a new document or a new file version:
/// its `file` part and its checked `document` part; otherwise the error response.
pub(super) fn upload_request(
    parts: &Parts,
    body: &Bytes,
) -> Result<(multipart::Part, DocumentPart), Resp> {
    let ct = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(boundary) = multipart::boundary(ct) else {
        return Err(problem(415, "Content type must be multipart/form-data"));
    };
    let mut mparts = multipart::parse(body, &boundary)
        .map_err(|m| problem(400, &format!("Unable to read the multipart body: {m}")))?;
    let Some(i) = mparts
        .iter()
        .position(|p| p.name == "file" && p.filename.is_some())
    else {
        return Err(problem(400, "No file part (`file`) in the request"));
    };
    let doc = DocumentPart::parse(mparts.iter().find(|p| p.name == "document"), &mparts[i])?;
    let size = mparts[i].data.len() as u64;
    if size > DL_MAX_SIZE {
        return Err(problem(
            400,
            &format!(
                "{size} exceeds the global maximum permitted size of {DL_MAX_SIZE} for file {}",
                doc.file_name
            ),
        ));
    }
    Ok((mparts.swap_remove(i), doc))
}

/// Liferay's global upload limit by default: `UploadServletRequestConfiguration.maxSize`
/// (104857600), `DLSizeLimitConfiguration.fileMaxSize` being 0 (no limit of its own), as
/// `DLValidatorImpl.validateFileSize` takes the smallest non-zero of them
/// ([`crate::protocol::liferay::FACTS`]).
const DL_MAX_SIZE: u64 = match crate::protocol::liferay::FACTS.max_size {
    Some(limit) => limit.value,
    None => u64::MAX,
};

/// `DLValidatorImpl.isValidName` with portal.properties' defaults: not empty, none of
/// `dl.char.blacklist` (`\\ // : * ? " < > | ../ /..`) in it, not ending with one of
/// `dl.char.last.blacklist` (space, `.`), and its name without extension none of
/// `dl.name.blacklist` (CON, PRN, AUX, NUL, COM1-9, LPT1-9; any case). Titles and file names
/// are 255-character columns (`DLFileEntry`).
pub(super) fn valid_dl_name(name: &str) -> bool {
    const BLACKLIST: [&str; 11] = ["\\", "//", ":", "*", "?", "\"", "<", ">", "|", "../", "/.."];
    const RESERVED: [&str; 4] = ["con", "prn", "aux", "nul"];
    let stem = match name.rfind('.') {
        Some(i) => &name[..i],
        None => name,
    }
    .to_ascii_lowercase();
    let device = |p: &str| {
        stem.strip_prefix(p)
            .is_some_and(|d| d.len() == 1 && (b'1'..=b'9').contains(&d.as_bytes()[0]))
    };
    !name.is_empty()
        && !BLACKLIST.iter().any(|b| name.contains(b))
        && !name.ends_with(' ')
        && !name.ends_with('.')
        && !RESERVED.contains(&stem.as_str())
        && !device("com")
        && !device("lpt")
        && name.chars().count() <= 255
}

/// The optional `document` JSON part of an upload, checked as Liferay maps it: only
/// Document's fields, strings where strings go, keywords and customFields in their shapes.
pub(super) struct DocumentPart {
    json: serde_json::Map<String, Value>,
    pub(super) file_name: String,
    pub(super) title: String,
    description: Option<String>,
    erc: Option<String>,
}

impl DocumentPart {
    pub(super) fn parse(
        part: Option<&multipart::Part>,
        file: &multipart::Part,
    ) -> Result<DocumentPart, Resp> {
        let json: serde_json::Map<String, Value> = match part {
            None => serde_json::Map::new(),
            Some(p) => match serde_json::from_slice::<Value>(&p.data) {
                Ok(Value::Object(m)) => m,
                Ok(_) | Err(_) => {
                    return Err(problem(
                        400,
                        "Unable to map JSON path: the document part is not a Document",
                    ));
                }
            },
        };
        if let Some(bad) = json.keys().find(|k| !DOCUMENT_FIELDS.contains(&k.as_str())) {
            return Err(problem(
                400,
                &format!("The property \"{bad}\" is not defined in Document."),
            ));
        }
        let str_field = |k: &str| -> Result<Option<String>, Resp> {
            match json.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(problem(
                    400,
                    &format!("Unable to map JSON path: {k} must be a string"),
                )),
            }
        };
        let file_name = str_field("fileName")?;
        let title = str_field("title")?;
        let description = str_field("description")?;
        let erc = str_field("externalReferenceCode")?;
        let file_name = file_name.or(file.filename.clone()).unwrap_or_default();
        if file_name.contains('/') || !valid_dl_name(&file_name) {
            return Err(problem(400, &format!("Invalid file name {file_name}")));
        }
        let title = title.unwrap_or_else(|| file_name.clone());
        if !valid_dl_name(&title) {
            return Err(problem(400, &format!("Invalid file name {title}")));
        }
        check_shapes(&json)?;
        Ok(DocumentPart {
            json,
            file_name,
            title,
            description,
            erc,
        })
    }

    /// What the store keeps besides name, title and ERC: description, keywords, custom
    /// fields, viewableBy, and the document type when it is a known one.
    pub(super) fn stored_metadata(&self) -> Value {
        let mut meta = serde_json::Map::new();
        // Every Liferay document is versioned: its first file version is 1.0.
        meta.insert(versions::LABEL.into(), json!("1.0"));
        meta.insert(
            "description".into(),
            json!(self.description.clone().unwrap_or_default()),
        );
        for k in ["keywords", "customFields", "viewableBy"] {
            if let Some(v) = self.json.get(k) {
                meta.insert(k.into(), v.clone());
            }
        }
        if let Some(t) = self.json.get("documentType")
            && t.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| DOCUMENT_TYPES.contains(&n))
        {
            meta.insert("documentType".into(), t.clone());
        }
        Value::Object(meta)
    }
}

/// keywords must be strings; customFields `[{name, customValue: {...}}]`.
fn check_shapes(doc: &serde_json::Map<String, Value>) -> Result<(), Resp> {
    if let Some(k) = doc.get("keywords")
        && !k.as_array().is_some_and(|a| a.iter().all(Value::is_string))
    {
        return Err(problem(
            400,
            "Unable to map JSON path: keywords must be an array of strings",
        ));
    }
    if let Some(c) = doc.get("customFields")
        && !c.as_array().is_some_and(|a| {
            a.iter().all(|f| {
                f.get("name").is_some_and(Value::is_string)
                    && f.get("customValue").is_some_and(Value::is_object)
            })
        })
    {
        return Err(problem(
            400,
            "Unable to map JSON path: customFields must be [{name, customValue}]",
        ));
    }
    Ok(())
}

/// Default OAuth2 token lifetime.
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(600);
