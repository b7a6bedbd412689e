//! Alfresco REST v1 emulation: tickets, create node (multipart, or JSON for folders), get
//! node (and `?relativePath=`), get content, list children with paging, delete; updates and
//! version history in `alfresco/versions.rs`; tickets and who a request is in `alfresco/auth.rs`. Status codes,
//! error bodies and the NodeEntry shape follow `tests/specs/alfresco/alfresco-core.yaml`.
//!
//! The routes and handlers of the REST v1 surface the tool uses read as one API top to bottom
//! here; tickets (`auth`), the findNodes search (`query`) and versions are its children.

/// Tickets and who a request is.
mod auth;
mod query;
/// Content updates and version history.
mod versions;

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::header::{CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use hyper::http::request::Parts;
use serde_json::{Value, json};

use super::State;
use super::multipart;
use super::store::{COMPANY_HOME, NewNode, Node, SHARED, StoreError, USER_HOMES, blocking};
use crate::protocol::alfresco::model::valid_name;
use crate::timefmt;
use auth::{authenticate, tickets};

const CORE: &str = "/alfresco/api/-default-/public/alfresco/versions/1/";
const AUTH: &str = "/alfresco/api/-default-/public/authentication/versions/1/";

type Resp = Response<Full<Bytes>>;

pub(super) fn json_resp(status: u16, v: &Value) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(serde_json::to_vec(v).expect("json"))));
    *r.status_mut() = hyper::StatusCode::from_u16(status).expect("status");
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json;charset=UTF-8"),
    );
    r
}

/// Alfresco's error body, with the 8-digit log number the real server puts before the text.
pub fn error(status: u16, key: &str, summary: &str) -> Resp {
    let log = (timefmt::now_ms().rem_euclid(100_000_000)) as u64;
    json_resp(
        status,
        &json!({"error": {
            "errorKey": key,
            "statusCode": status,
            "briefSummary": format!("{log:08} {summary}"),
            "stackTrace": "For security reasons the stack trace is no longer displayed, but the property is kept for previous versions",
            "descriptionURL": "https://api-explorer.alfresco.com",
            "logId": uuid::Uuid::new_v4().simple().to_string(),
        }}),
    )
}

pub(super) fn unauthorized() -> Resp {
    let mut r = error(
        401,
        "framework.exception.ApiDefault",
        "Authentication failed",
    );
    r.headers_mut().insert(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"Alfresco DEFAULT tenant\""),
    );
    r
}

pub(super) fn not_found(id: &str) -> Resp {
    error(
        404,
        "framework.exception.EntityNotFound",
        &format!("The entity with id: {id} was not found"),
    )
}

pub(super) fn store_failure(e: StoreError) -> Resp {
    match e {
        StoreError::ParentNotFound => error(
            404,
            "framework.exception.EntityNotFound",
            "The parent node was not found",
        ),
        StoreError::NotAFolder(n) => error(
            409,
            "framework.exception.ConstraintViolated",
            &format!("{n} is not a folder"),
        ),
        StoreError::Duplicate(n) | StoreError::DuplicateTitle(n) | StoreError::DuplicateErc(n) => {
            error(
                409,
                "framework.exception.ConstraintViolated",
                &format!("{n} already exists."),
            )
        }
        StoreError::Internal(m) => error(500, "framework.exception.ApiDefault", &m),
    }
}

/// Query parameter `k` as a whole number, or why it is not one; None when it is absent.
pub(super) fn number_param(
    query: &[(String, String)],
    k: &str,
) -> Option<Result<u64, std::num::ParseIntError>> {
    query.iter().find(|(q, _)| q == k).map(|(_, v)| v.parse())
}

pub(super) fn query_params(q: Option<&str>) -> Vec<(String, String)> {
    q.unwrap_or("")
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (pct_decode(k), pct_decode(v))
        })
        .collect()
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
                {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub async fn route(state: &Arc<State>, parts: &Parts, body: Bytes) -> Resp {
    let path = parts.uri.path().to_string();
    let query = query_params(parts.uri.query());
    let method = parts.method.as_str();
    if let Some(rest) = path.strip_prefix(AUTH) {
        return tickets(state, parts, method, rest, &query, body).await;
    }
    let Some(rest) = path.strip_prefix(CORE) else {
        return error(
            404,
            "framework.exception.ApiDefault",
            &format!("Unknown API path {path}"),
        );
    };
    let Some(user) = authenticate(state, parts, &query).await else {
        return unauthorized();
    };
    let segs: Vec<&str> = rest.split('/').collect();
    match (method, segs.as_slice()) {
        ("POST", ["nodes", id, "children"]) => create(state, parts, &user, id, &query, body).await,
        ("GET", ["nodes", id, "children"]) => children(state, &user, id, &query).await,
        ("GET", ["queries", "nodes"]) => query::find_nodes(state, &user, &query).await,
        ("GET", ["nodes", id]) => get_node(state, &user, id, &query).await,
        ("GET", ["nodes", id, "content"]) => content(state, &user, id).await,
        ("DELETE", ["nodes", id]) => delete(state, &user, id).await,
        ("PUT", ["nodes", id]) => versions::update_node(state, &user, id, body).await,
        ("PUT", ["nodes", id, "content"]) => {
            versions::put_content(state, &user, id, &query, body).await
        }
        ("GET", ["nodes", id, "versions"]) => versions::list(state, &user, id, &query).await,
        ("GET", ["nodes", id, "versions", vid]) => versions::one(state, &user, id, vid).await,
        ("GET", ["nodes", id, "versions", vid, "content"]) => {
            versions::content(state, &user, id, vid).await
        }
        _ => error(
            405,
            "framework.exception.UnsupportedResourceOperation",
            &format!("{method} is not supported for {path}"),
        ),
    }
}

/// Resolves `-my-`, `-root-`, `-shared-` or an id.
async fn resolve_alias(state: &State, user: &str, id: &str) -> Result<String, StoreError> {
    match id {
        "-root-" => Ok(COMPANY_HOME.into()),
        "-shared-" => Ok(SHARED.into()),
        "-my-" => {
            let u = user.to_string();
            blocking(&state.store, move |s| s.user_home(&u)).await
        }
        other => Ok(other.to_string()),
    }
}

pub(super) fn mime_for(name: &str) -> (&'static str, &'static str) {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "pdf" => ("application/pdf", "Adobe PDF Document"),
        "xml" => ("text/xml", "XML"),
        "txt" => ("text/plain", "Plain Text"),
        "json" => ("application/json", "JSON"),
        "html" | "htm" => ("text/html", "HTML"),
        _ => ("application/octet-stream", "Binary File (Octet Stream)"),
    }
}

pub(super) fn node_json(n: &Node) -> Value {
    let created = timefmt::alfresco_datetime_ms(n.created_at_ms);
    let user = json!({"id": n.creator, "displayName": n.creator});
    let mut props: serde_json::Map<String, Value> =
        serde_json::from_str(&n.properties).unwrap_or_default();
    if n.is_folder && props.is_empty() {
        props = serde_json::Map::new();
    }
    let aspects: Value = serde_json::from_str(&n.aspects).unwrap_or(json!([]));
    let mut v = json!({
        "id": n.id,
        "name": n.name,
        "nodeType": n.node_type,
        "isFolder": n.is_folder,
        "isFile": !n.is_folder,
        "createdAt": created,
        "modifiedAt": created,
        "createdByUser": user,
        "modifiedByUser": user,
        "aspectNames": aspects,
        "properties": props,
    });
    if let Some(p) = &n.parent_id {
        v["parentId"] = json!(p);
    }
    if !n.is_folder {
        let (mime, mime_name) = mime_for(&n.name);
        v["content"] = json!({"mimeType": n.mime.as_deref().unwrap_or(mime), "mimeTypeName": mime_name, "sizeInBytes": n.size, "encoding": "UTF-8"});
    }
    v
}

pub(super) fn bad(summary: &str) -> Resp {
    error(400, "framework.exception.InvalidArgument", summary)
}

/// A listing's `skipCount` (default 0) and `maxItems` (default 100, at least 1), or the 400
/// the real server answers for either (an early return of the route, so its size is no cost).
#[allow(clippy::result_large_err)]
pub(super) fn paging(query: &[(String, String)]) -> Result<(u64, u64), Resp> {
    let num = |k| number_param(query, k);
    let skip = match num("skipCount") {
        None => 0,
        Some(Ok(v)) => v,
        Some(Err(_)) => return Err(bad("Invalid paging parameter skipCount")),
    };
    let max = match num("maxItems") {
        None => 100,
        Some(Ok(v)) if v >= 1 => v,
        _ => return Err(bad("Invalid paging parameter maxItems")),
    };
    Ok((skip, max))
}

async fn create(
    state: &Arc<State>,
    parts: &Parts,
    user: &str,
    id: &str,
    query: &[(String, String)],
    body: Bytes,
) -> Resp {
    let ct = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let parent = match resolve_alias(state, user, id).await {
        Ok(p) => p,
        Err(e) => return store_failure(e),
    };
    let parent_id = parent.clone();
    match blocking(&state.store, move |s| s.get(&parent_id)).await {
        Ok(Some(n)) if n.is_folder => {}
        Ok(Some(_)) => return bad(&format!("Parent {id} is not a folder")),
        Ok(None) => return not_found(id),
        Err(e) => return store_failure(e),
    }
    let mime_base = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if mime_base == "application/json" {
        return create_json(state, user, parent, &body).await;
    }
    let form = match UploadForm::parse(ct, &body, query) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let (typed, aspects) = match form.properties(state) {
        Ok(x) => x,
        Err(r) => return r,
    };
    store_upload(state, user, parent, form, typed, aspects).await
}

/// What a multipart create-node request carries, as Alfresco reads it. Its checks return
/// the HTTP answer itself as the error (a large value, but only on the rejection path).
struct UploadForm {
    file: multipart::Part,
    name: String,
    node_type: String,
    relative_path: Option<String>,
    auto_rename: bool,
    versioning: bool,
    /// Prefixed property fields, in order, multi-valued when repeated.
    props: Vec<(String, Vec<String>)>,
}

#[allow(clippy::result_large_err)]
impl UploadForm {
    /// Parses and checks the form: file part present, no overwrite with autoRename, a
    /// valid name. Unprefixed unknown fields are ignored, as Alfresco does.
    fn parse(ct: &str, body: &Bytes, query: &[(String, String)]) -> Result<UploadForm, Resp> {
        let Some(boundary) = multipart::boundary(ct) else {
            return Err(bad(
                "Could not read content from HTTP request body: expected multipart/form-data or application/json",
            ));
        };
        let parts = multipart::parse(body, &boundary)
            .map_err(|m| bad(&format!("Could not read multipart body: {m}")))?;
        let mut file = None;
        let mut name = None;
        let mut node_type = "cm:content".to_string();
        let mut relative_path = None;
        let mut auto_rename = query
            .iter()
            .any(|(k, v)| k == "autoRename" && v.eq_ignore_ascii_case("true"));
        let mut overwrite = false;
        let mut versioning = !query
            .iter()
            .any(|(k, v)| k == "versioningEnabled" && v.eq_ignore_ascii_case("false"));
        let mut props: Vec<(String, Vec<String>)> = Vec::new();
        for p in parts {
            let text = || String::from_utf8_lossy(&p.data).into_owned();
            match p.name.to_ascii_lowercase().as_str() {
                "filedata" => {
                    if p.filename.is_none() {
                        return Err(bad("filedata must be a file part"));
                    }
                    file = Some(p);
                }
                "name" => name = Some(text()),
                "nodetype" => node_type = text(),
                "relativepath" => relative_path = Some(text()),
                "autorename" => auto_rename = text().eq_ignore_ascii_case("true"),
                "overwrite" => overwrite = text().eq_ignore_ascii_case("true"),
                "versioningenabled" => versioning = !text().eq_ignore_ascii_case("false"),
                "majorversion" | "comment" | "renditions" | "aspectnames" => {}
                other if other.contains(':') => {
                    let v = text();
                    match props.iter_mut().find(|(n, _)| *n == p.name) {
                        Some((_, vs)) => vs.push(v),
                        None => props.push((p.name.clone(), vec![v])),
                    }
                }
                _ => {} // Alfresco silently ignores fields without a prefix.
            }
        }
        let Some(file) = file else {
            return Err(bad("Required field missing: filedata"));
        };
        if auto_rename && overwrite {
            return Err(bad(
                "Both 'overwrite' and 'autoRename' have been specified - only one can be used",
            ));
        }
        let name = name.or(file.filename.clone()).unwrap_or_default();
        // The folders relativePath creates are cm:folder nodes: cm:name's constraint holds
        // for each of them too.
        let folders = relative_path.as_deref().unwrap_or("");
        if let Some(bad_name) = std::iter::once(name.as_str())
            .chain(folders.split('/').filter(|s| !s.is_empty()))
            .find(|n| !valid_name(n))
        {
            return Err(error(
                422,
                "framework.exception.ConstraintViolated",
                &format!("Name contains invalid characters: {bad_name}"),
            ));
        }
        Ok(UploadForm {
            file,
            name,
            node_type,
            relative_path,
            auto_rename,
            versioning,
            props,
        })
    }

    /// The typed properties and aspects, validated against the content model (400 for an
    /// unknown property or bad value, 422 for a missing mandatory one), plus what Alfresco
    /// adds itself (auditable, versionable with label 1.0).
    fn properties(
        &self,
        state: &State,
    ) -> Result<(serde_json::Map<String, Value>, Vec<String>), Resp> {
        state
            .dict
            .check_content_type(&self.node_type)
            .map_err(|r| bad(&r.message))?;
        let (mut typed, mut aspects) = match state.dict.convert(&self.node_type, &self.props) {
            Ok(x) => x,
            Err(r) if r.status == 422 => {
                return Err(error(
                    422,
                    "framework.exception.ConstraintViolated",
                    &r.message,
                ));
            }
            Err(r) => return Err(bad(&r.message)),
        };
        aspects.push("cm:auditable".into());
        if self.versioning {
            aspects.push("cm:versionable".into());
            typed.insert("cm:versionLabel".into(), json!("1.0"));
            typed.insert("cm:versionType".into(), json!("MAJOR"));
        }
        Ok((typed, aspects))
    }
}

/// Stores the document: 201 with the node entry, 409 on a duplicate name (or, with
/// autoRename, the next free `name-N.ext`).
async fn store_upload(
    state: &Arc<State>,
    user: &str,
    parent: String,
    form: UploadForm,
    typed: serde_json::Map<String, Value>,
    aspects: Vec<String>,
) -> Resp {
    let name = form.name;
    let mime = mime_for(&name).0.to_string();
    let properties = Value::Object(typed).to_string();
    let aspects = json!(aspects).to_string();
    let mut attempt = 0u32;
    loop {
        let try_name = if attempt == 0 {
            name.clone()
        } else {
            match name.rsplit_once('.') {
                Some((stem, ext)) => format!("{stem}-{attempt}.{ext}"),
                None => format!("{name}-{attempt}"),
            }
        };
        let new = NewNode {
            parent_id: parent.clone(),
            relative_path: form.relative_path.clone(),
            name: try_name,
            node_type: form.node_type.clone(),
            is_folder: false,
            creator: user.to_string(),
            mime: Some(mime.clone()),
            properties: properties.clone(),
            aspects: aspects.clone(),
            served_by: state.node_name.clone(),
            content: Some(form.file.data.clone()),
            title: None,
            erc: None,
        };
        match blocking(&state.store, move |s| s.create(new)).await {
            Ok(n) => return json_resp(201, &json!({"entry": node_json(&n)})),
            Err(StoreError::Duplicate(_)) if form.auto_rename && attempt < 1000 => attempt += 1,
            Err(e) => return store_failure(e),
        }
    }
}

/// JSON create: folders (and empty content nodes), as `POST children` with a NodeBodyCreate.
async fn create_json(state: &Arc<State>, user: &str, parent: String, body: &Bytes) -> Resp {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => return bad("Could not read content from HTTP request body"),
    };
    let Some(name) = v.get("name").and_then(Value::as_str) else {
        return bad("Required field missing: name");
    };
    let Some(node_type) = v.get("nodeType").and_then(Value::as_str) else {
        return bad("Required field missing: nodeType");
    };
    if !valid_name(name) {
        return error(
            422,
            "framework.exception.ConstraintViolated",
            &format!("Name contains invalid characters: {name}"),
        );
    }
    let is_folder = state.dict.is_subtype(node_type, "cm:folder");
    if !is_folder && state.dict.check_content_type(node_type).is_err() {
        return bad(&format!("Unknown type: {node_type}"));
    }
    let raw = raw_properties(&v);
    let (typed, mut aspects) = match state.dict.convert(node_type, &raw) {
        Ok(x) => x,
        Err(r) => return error(r.status, "framework.exception.InvalidArgument", &r.message),
    };
    aspects.push("cm:auditable".into());
    let new = NewNode {
        parent_id: parent,
        relative_path: v
            .get("relativePath")
            .and_then(Value::as_str)
            .map(str::to_string),
        name: name.to_string(),
        node_type: node_type.to_string(),
        is_folder,
        creator: user.to_string(),
        mime: None,
        properties: Value::Object(typed).to_string(),
        aspects: json!(aspects).to_string(),
        served_by: state.node_name.clone(),
        content: (!is_folder).then(Bytes::new),
        title: None,
        erc: None,
    };
    match blocking(&state.store, move |s| s.create(new)).await {
        Ok(n) => json_resp(201, &json!({"entry": node_json(&n)})),
        Err(e) => store_failure(e),
    }
}

/// The body's `properties` as the dictionary takes them: each value a list of texts (a
/// string unquoted, any other value as JSON); none when there is no such object.
pub(super) fn raw_properties(body: &Value) -> Vec<(String, Vec<String>)> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let Some(m) = body.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    m.iter()
        .map(|(k, v)| match v {
            Value::Array(a) => (k.clone(), a.iter().map(text).collect()),
            other => (k.clone(), vec![text(other)]),
        })
        .collect()
}

pub(super) async fn lookup(
    state: &State,
    user: &str,
    id: &str,
    relative_path: Option<String>,
) -> Result<Node, Resp> {
    let resolved = resolve_alias(state, user, id)
        .await
        .map_err(store_failure)?;
    let r = match relative_path {
        Some(p) => blocking(&state.store, move |s| s.resolve_path(&resolved, &p)).await,
        None => blocking(&state.store, move |s| s.get(&resolved)).await,
    };
    match r {
        Ok(Some(n)) => Ok(n),
        Ok(None) => Err(not_found(id)),
        Err(e) => Err(store_failure(e)),
    }
}

async fn get_node(state: &State, user: &str, id: &str, query: &[(String, String)]) -> Resp {
    let rp = query
        .iter()
        .find(|(k, _)| k == "relativePath")
        .map(|(_, v)| v.clone());
    match lookup(state, user, id, rp).await {
        Ok(n) => json_resp(200, &json!({"entry": node_json(&n)})),
        Err(r) => r,
    }
}

async fn content(state: &State, user: &str, id: &str) -> Resp {
    let n = match lookup(state, user, id, None).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    if n.is_folder {
        return bad(&format!("Node {id} is a folder and has no content"));
    }
    let (store, nid) = (state.store.clone(), n.id.clone());
    let read = tokio::task::spawn_blocking(move || store.read_content(&nid))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)));
    match read {
        Ok(bytes) => content_resp(&n, bytes),
        Err(e) => error(
            500,
            "framework.exception.ApiDefault",
            &format!("content of {} unreadable: {e}", n.id),
        ),
    }
}

/// `n`'s bytes (its content or one of its versions') as the body, typed by its MIME type,
/// else by its name.
pub(super) fn content_resp(n: &Node, bytes: Vec<u8>) -> Resp {
    let mime = n
        .mime
        .clone()
        .unwrap_or_else(|| mime_for(&n.name).0.to_string());
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_str(&mime)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    r
}

async fn children(state: &State, user: &str, id: &str, query: &[(String, String)]) -> Resp {
    let (skip, max) = match paging(query) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let rp = query
        .iter()
        .find(|(k, _)| k == "relativePath")
        .map(|(_, v)| v.clone());
    let n = match lookup(state, user, id, rp).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    if !n.is_folder {
        return bad(&format!("Node {id} is not a folder"));
    }
    // `where`: only the file/folder filters are emulated; anything else is refused, not
    // ignored (a listing that quietly ignored it would count the wrong nodes).
    let kind = match query
        .iter()
        .find(|(k, _)| k == "where")
        .map(|(_, v)| v.as_str())
    {
        None => None,
        Some("(isFile=true)") | Some("(isFolder=false)") => Some(false),
        Some("(isFolder=true)") | Some("(isFile=false)") => Some(true),
        Some(w) => return bad(&format!("The embedded target does not emulate where={w}")),
    };
    let nid = n.id.clone();
    let listed = blocking(&state.store, move |s| match kind {
        None => s.children(&nid, skip, max),
        Some(folders) => s.children_of_kind(&nid, folders, skip, max),
    });
    node_page(listed.await, skip, max)
}

/// A page of a public REST v1 list (`list.pagination`, `list.entries`), as the repository
/// returns children, search results and versions.
pub(super) fn list_page(entries: Vec<Value>, total: u64, skip: u64, max: u64) -> Resp {
    json_resp(
        200,
        &json!({"list": {
            "pagination": {"count": entries.len(), "hasMoreItems": skip + (entries.len() as u64) < total, "totalItems": total, "skipCount": skip, "maxItems": max},
            "entries": entries,
        }}),
    )
}

/// A page of nodes as `list_page` lays it out, or the store's failure.
pub(super) fn node_page(listed: Result<(Vec<Node>, u64), StoreError>, skip: u64, max: u64) -> Resp {
    match listed {
        Ok((nodes, total)) => {
            let entries = nodes.iter().map(|n| json!({"entry": node_json(n)}));
            list_page(entries.collect(), total, skip, max)
        }
        Err(e) => store_failure(e),
    }
}

async fn delete(state: &State, user: &str, id: &str) -> Resp {
    let n = match lookup(state, user, id, None).await {
        Ok(n) => n,
        Err(r) => return r,
    };
    if [COMPANY_HOME, SHARED, USER_HOMES].contains(&n.id.as_str())
        || n.parent_id.as_deref() == Some(USER_HOMES)
    {
        return error(
            403,
            "framework.exception.PermissionDenied",
            "Permission was denied",
        );
    }
    match blocking(&state.store, move |s| s.delete_tree(&n.id)).await {
        Ok(_) => Response::builder()
            .status(204)
            .body(Full::new(Bytes::new()))
            .expect("response"),
        Err(e) => store_failure(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(pct_decode("a%2Fb+c"), "a/b c");
        assert_eq!(pct_decode("100%"), "100%");
        assert_eq!(pct_decode("%zz"), "%zz");
    }

    #[test]
    fn paging_defaults_and_refusals() {
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(paging(&q(&[])).ok(), Some((0, 100)));
        assert_eq!(
            paging(&q(&[("maxItems", "5"), ("skipCount", "10")])).ok(),
            Some((10, 5))
        );
        for bad in [
            [("skipCount", "x")],
            [("maxItems", "0")],
            [("maxItems", "-1")],
        ] {
            assert_eq!(paging(&q(&bad)).unwrap_err().status(), 400, "{bad:?}");
        }
    }
}
