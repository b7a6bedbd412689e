//! Repository APIs. One file per API (`alfresco`, later `liferay`, `cmis`) behind the
//! [`Protocol`] trait; every URL, auth and multipart detail of a system stays in its file.
//! This module holds only what they share: the zero-copy request body, the multipart
//! builder, credentials that never print, and the per-worker auth cache.

pub mod alfresco;
pub mod cmis;
pub mod liferay;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use reqwest::header::HeaderValue;

use crate::fixtures::Doc;
use crate::metrics::UploadError;

/// The repository APIs ingestbench speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ProtocolKind {
    /// Alfresco public REST API v1.
    Alfresco,
    /// Liferay headless-delivery v1.0.
    Liferay,
    /// CMIS 1.1 browser binding (--url is the service URL, e.g. http://host/cmis/browser).
    Cmis,
}

impl ProtocolKind {
    pub fn name(self) -> &'static str {
        match self {
            ProtocolKind::Alfresco => "alfresco",
            ProtocolKind::Liferay => "liferay",
            ProtocolKind::Cmis => "cmis",
        }
    }
    /// The metadata profile used when none is given.
    pub fn default_profile(self) -> &'static str {
        match self {
            ProtocolKind::Alfresco => "acme",
            ProtocolKind::Liferay => "liferay",
            ProtocolKind::Cmis => "cmis",
        }
    }
    /// Where documents go when no `--parent` is given.
    pub fn default_parent(self) -> &'static str {
        match self {
            ProtocolKind::Alfresco => "-my-",
            ProtocolKind::Liferay => "guest",
            ProtocolKind::Cmis => "/",
        }
    }
    pub fn default_auth(self) -> AuthMode {
        match self {
            ProtocolKind::Alfresco => AuthMode::Ticket,
            ProtocolKind::Liferay | ProtocolKind::Cmis => AuthMode::Basic,
        }
    }
    pub fn auth_modes(self) -> &'static [AuthMode] {
        match self {
            ProtocolKind::Alfresco => &[AuthMode::Ticket, AuthMode::Basic],
            ProtocolKind::Liferay => &[AuthMode::Basic, AuthMode::Oauth2],
            ProtocolKind::Cmis => &[AuthMode::Basic],
        }
    }
}

/// How requests authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Alfresco: log in once (POST /tickets), send the ticket, log in again once on 401.
    Ticket,
    /// HTTP Basic user:password on every request.
    Basic,
    /// Liferay: OAuth2 client credentials (--user is the client id, the password its
    /// secret); the token is renewed before it expires and once on 403.
    Oauth2,
}

impl AuthMode {
    pub fn name(self) -> &'static str {
        match self {
            AuthMode::Ticket => "ticket",
            AuthMode::Basic => "basic",
            AuthMode::Oauth2 => "oauth2",
        }
    }
}

/// Everything a client needs to talk to one repository; each protocol uses what applies.
#[derive(Debug, Clone)]
pub struct RepoOptions {
    /// Server root, e.g. `http://localhost:8080` (the API paths are appended).
    pub url: reqwest::Url,
    pub user: String,
    pub password: Secret,
    pub auth: AuthMode,
    /// Alfresco: parent folder (`-my-`, `-root-`, `-shared-` or a node id). Liferay: the site
    /// (id or key). CMIS: a folder path (`/` = the root folder).
    pub parent: String,
    pub profile: std::sync::Arc<crate::fixtures::Profile>,
    /// Alfresco: `false` sends `versioningEnabled=false`.
    pub versioning: bool,
    /// Response header naming the backend node, if the access path sets one.
    pub node_header: Option<reqwest::header::HeaderName>,
    /// Or a cookie carrying a `.route` suffix (`JSESSIONID=abc.node1`).
    pub node_cookie: Option<String>,
    /// The upload fast path (per-worker hyper connections), when the access path allows it.
    pub fast: Option<Arc<crate::http1::Endpoint>>,
}

/// A connected client of any protocol (static dispatch, no boxing on the hot path).
pub enum Repo {
    Alfresco(alfresco::Alfresco),
    Liferay(liferay::Liferay),
    Cmis(cmis::Cmis),
}

impl Repo {
    /// Logs in and checks the parent (folder or site), so bad credentials, URLs and
    /// parents are setup errors before anything is measured.
    pub async fn connect(
        kind: ProtocolKind,
        client: reqwest::Client,
        opts: RepoOptions,
    ) -> anyhow::Result<Repo> {
        if !kind.auth_modes().contains(&opts.auth) {
            anyhow::bail!(
                "--auth {}: {} takes {}",
                opts.auth.name(),
                kind.name(),
                kind.auth_modes()
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(" or ")
            );
        }
        Ok(match kind {
            ProtocolKind::Alfresco => {
                Repo::Alfresco(alfresco::Alfresco::connect(client, opts).await?)
            }
            ProtocolKind::Liferay => Repo::Liferay(liferay::Liferay::connect(client, opts).await?),
            ProtocolKind::Cmis => Repo::Cmis(cmis::Cmis::connect(client, opts).await?),
        })
    }
}

impl Protocol for Repo {
    async fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        auth: &mut AuthCache,
    ) -> Result<Uploaded, UploadError> {
        match self {
            Repo::Alfresco(r) => r.upload(doc, folder, auth).await,
            Repo::Liferay(r) => r.upload(doc, folder, auth).await,
            Repo::Cmis(r) => r.upload(doc, folder, auth).await,
        }
    }
    async fn lookup(&self, doc: &Doc<'_>, folder: &str) -> Result<Option<String>, UploadError> {
        match self {
            Repo::Alfresco(r) => r.lookup(doc, folder).await,
            Repo::Liferay(r) => r.lookup(doc, folder).await,
            Repo::Cmis(r) => r.lookup(doc, folder).await,
        }
    }
    async fn prepare_folder(&self, path: &str) -> anyhow::Result<String> {
        match self {
            Repo::Alfresco(r) => r.prepare_folder(path).await,
            Repo::Liferay(r) => r.prepare_folder(path).await,
            Repo::Cmis(r) => r.prepare_folder(path).await,
        }
    }
    fn auth_cache(&self) -> AuthCache {
        match self {
            Repo::Alfresco(r) => r.auth_cache(),
            Repo::Liferay(r) => r.auth_cache(),
            Repo::Cmis(r) => r.auth_cache(),
        }
    }
}

/// A document read back by id, for verification.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub name: String,
    pub size: u64,
    /// SHA-256 of the content read back, lowercase hex.
    pub sha256: String,
    /// Metadata by the profile's property names, values as strings.
    pub props: std::collections::BTreeMap<String, Vec<String>>,
}

impl Repo {
    /// Reads a document back by id (never by search, which lags); None when it is gone.
    pub async fn fetch(&self, id: &str) -> Result<Option<Fetched>, String> {
        match self {
            Repo::Alfresco(r) => r.fetch(id).await,
            Repo::Liferay(r) => r.fetch(id).await,
            Repo::Cmis(r) => r.fetch(id).await,
        }
    }
    /// Documents in the run folder at `path` (relative to the parent); None when missing.
    pub async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        match self {
            Repo::Alfresco(r) => r.count_folder(path).await,
            Repo::Liferay(r) => r.count_folder(path).await,
            Repo::Cmis(r) => r.count_folder(path).await,
        }
    }
}

impl Repo {
    /// Deletes the folder at `path` (relative to the parent) with everything below it,
    /// permanently where the API allows; returns false when it does not exist.
    pub async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        match self {
            Repo::Alfresco(r) => r.delete_folder(path).await,
            Repo::Liferay(r) => r.delete_folder(path).await,
            Repo::Cmis(r) => r.delete_folder(path).await,
        }
    }
}

/// Sends one upload body: over the worker's own connection when the fast path applies
/// (`path` is the request target there), else through reqwest (`url()`, built only then).
/// Returns the status,
/// the backend node that served it, and the answer's body.
pub(crate) async fn send_upload(
    opts: &RepoOptions,
    client: &reqwest::Client,
    conn: &mut Option<crate::http1::Conn>,
    url: impl FnOnce() -> String,
    path: &str,
    auth: &HeaderValue,
    body: ChunkBody,
) -> Result<(reqwest::StatusCode, Option<String>, Bytes), UploadError> {
    use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
    let ct = multipart_content_type();
    if let Some(fast) = &opts.fast {
        let a = fast
            .send(
                conn,
                reqwest::Method::POST,
                path,
                &[(AUTHORIZATION, auth), (CONTENT_TYPE, &ct)],
                body,
            )
            .await?;
        return Ok((
            a.status,
            node_of(
                &a.headers,
                opts.node_header.as_ref(),
                opts.node_cookie.as_deref(),
            ),
            a.body,
        ));
    }
    let resp = client
        .post(url())
        .header(AUTHORIZATION, auth.clone())
        .header(CONTENT_TYPE, ct)
        .body(reqwest::Body::wrap(body))
        .send()
        .await
        .map_err(|e| UploadError::transport(&e))?;
    let status = resp.status();
    let node = node_of(
        resp.headers(),
        opts.node_header.as_ref(),
        opts.node_cookie.as_deref(),
    );
    let bytes = resp.bytes().await.map_err(|e| UploadError::transport(&e))?;
    Ok((status, node, bytes))
}

/// Sends a read request: `Ok(Some(body))` on success, `Ok(None)` on 404, otherwise the
/// message the protocol's `describe` makes of the answer. For read-back and cleanup, not for
/// uploads.
pub(crate) async fn read(
    req: reqwest::RequestBuilder,
    describe: fn(u16, &[u8]) -> String,
) -> Result<Option<Bytes>, String> {
    let resp = req
        .send()
        .await
        .map_err(|e| crate::metrics::error_chain(&e))?;
    let status = resp.status();
    let body = resp
        .bytes()
        .await
        .map_err(|e| crate::metrics::error_chain(&e))?;
    match status {
        s if s.is_success() => Ok(Some(body)),
        reqwest::StatusCode::NOT_FOUND => Ok(None),
        s => Err(describe(s.as_u16(), &body)),
    }
}

/// [`read`] of a JSON document.
pub(crate) async fn read_json(
    req: reqwest::RequestBuilder,
    describe: fn(u16, &[u8]) -> String,
) -> Result<Option<serde_json::Value>, String> {
    match read(req, describe).await? {
        Some(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| format!("not JSON: {e}")),
        None => Ok(None),
    }
}

/// A read-back document from its name, content and (JSON) properties.
pub(crate) fn fetched(name: &str, content: &[u8], props: &serde_json::Value) -> Fetched {
    let props = props
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), json_strings(v)))
                .collect()
        })
        .unwrap_or_default();
    Fetched {
        name: name.to_string(),
        size: content.len() as u64,
        sha256: sha256_hex(content),
        props,
    }
}

/// SHA-256 of bytes, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    crate::fixtures::body::hex(&sha2::Sha256::digest(bytes))
}

/// A JSON value as the strings a profile compares against (arrays: one per element).
pub fn json_strings(v: &serde_json::Value) -> Vec<String> {
    let one = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match v {
        serde_json::Value::Array(a) => a.iter().map(one).collect(),
        other => vec![one(other)],
    }
}

/// A setup error for a transport failure: names the URL and what to check.
pub fn unreachable_err(url: &reqwest::Url, e: &reqwest::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot reach {url}: {}; check --url and that the repository is running",
        crate::metrics::error_chain(e)
    )
}

/// `Authorization: Basic base64(user:password)`, marked sensitive.
pub fn basic_header(user: &str, password: &str) -> HeaderValue {
    use base64::Engine;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let mut v = HeaderValue::from_str(&format!("Basic {token}")).expect("base64 is a valid header");
    v.set_sensitive(true);
    v
}

/// A secret (password, ticket, token). Its `Debug` and `Display` never show the value.
#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    /// The value, for building a request. Never log what this returns.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// What a successful upload returns.
#[derive(Debug, Clone)]
pub struct Uploaded {
    /// The repository's id for the new document.
    pub id: String,
    /// The backend node that served the request, when the access path names it.
    pub node: Option<String>,
}

/// One repository API, as seen by an upload worker.
pub trait Protocol: Send + Sync + 'static {
    /// Uploads one document into `folder` (as returned by `prepare_folder`), with the
    /// profile's metadata. Counts as success only on the API's documented success status
    /// with the new id read from the body.
    fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        auth: &mut AuthCache,
    ) -> impl Future<Output = Result<Uploaded, UploadError>> + Send;

    /// After an ambiguous failure: is the document already there (the failed attempt had
    /// committed)? Looks it up by its deterministic name (Liferay: external reference code),
    /// never by search. `Ok(Some(id))` when found.
    fn lookup(
        &self,
        doc: &Doc<'_>,
        folder: &str,
    ) -> impl Future<Output = Result<Option<String>, UploadError>> + Send;

    /// Makes sure the folder at `path` (relative to the run's parent, `/`-separated) exists
    /// and returns what `upload` takes as its `folder`. Called before the start barrier.
    fn prepare_folder(&self, path: &str) -> impl Future<Output = anyhow::Result<String>> + Send;

    /// A fresh per-worker auth cache.
    fn auth_cache(&self) -> AuthCache;
}

/// The shared `Authorization` header, renewed at most once per expiry however many workers
/// notice it. Workers read it through an [`AuthCache`]: an atomic load per upload, no lock.
pub struct SharedAuth {
    header: RwLock<HeaderValue>,
    generation: AtomicU64,
}

impl SharedAuth {
    pub fn new(header: HeaderValue) -> SharedAuth {
        SharedAuth {
            header: RwLock::new(header),
            generation: AtomicU64::new(0),
        }
    }
    pub fn cache(self: &Arc<Self>) -> AuthCache {
        let header = self.header.read().expect("auth lock").clone();
        AuthCache {
            shared: self.clone(),
            generation: self.generation.load(Ordering::Acquire),
            header,
            conn: None,
        }
    }
    /// Replaces the header if nobody did since `seen` (a worker's generation).
    pub fn replace_if_current(&self, seen: u64, header: HeaderValue) {
        let mut h = self.header.write().expect("auth lock");
        if self.generation.load(Ordering::Acquire) == seen {
            *h = header;
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
    }
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

/// A worker's own state: its copy of the shared auth header, and its own connection for
/// the upload fast path ([`crate::http1`]).
pub struct AuthCache {
    shared: Arc<SharedAuth>,
    pub generation: u64,
    header: HeaderValue,
    pub conn: Option<crate::http1::Conn>,
}

impl AuthCache {
    /// The current header (refreshed from the shared one only when it changed).
    pub fn header(&mut self) -> &HeaderValue {
        let g = self.shared.generation.load(Ordering::Acquire);
        if g != self.generation {
            self.header = self.shared.header.read().expect("auth lock").clone();
            self.generation = g;
        }
        &self.header
    }
    pub fn shared(&self) -> &Arc<SharedAuth> {
        &self.shared
    }
}

/// The backend node that served a response: the node header, else the route suffix of a
/// session cookie (`Set-Cookie: JSESSIONID=1A2B.node2; Path=/` → `node2`).
pub fn node_of(
    headers: &reqwest::header::HeaderMap,
    header: Option<&reqwest::header::HeaderName>,
    cookie: Option<&str>,
) -> Option<String> {
    if let Some(v) = header
        .and_then(|h| headers.get(h))
        .and_then(|v| v.to_str().ok())
    {
        return Some(v.to_string());
    }
    let name = cookie?;
    headers
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| {
            let (k, v) = c.split(';').next()?.split_once('=')?;
            if k.trim() != name {
                return None;
            }
            let (_, route) = v.trim().rsplit_once('.')?;
            (!route.is_empty()).then(|| route.to_string())
        })
}

/// A request body made of shared chunks, with an exact length (so `Content-Length` is sent
/// and nothing is copied): multipart head, the shared document prefix, the tail.
pub struct ChunkBody {
    chunks: [Option<Bytes>; 3],
    next: usize,
    remaining: u64,
}

impl ChunkBody {
    pub fn new(head: Bytes, shared: Bytes, tail: Bytes) -> ChunkBody {
        let remaining = (head.len() + shared.len() + tail.len()) as u64;
        ChunkBody {
            chunks: [Some(head), Some(shared), Some(tail)],
            next: 0,
            remaining,
        }
    }
    pub fn len(&self) -> u64 {
        self.remaining
    }
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }
}

impl http_body::Body for ChunkBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        while self.next < self.chunks.len() {
            let i = self.next;
            self.next += 1;
            if let Some(c) = self.chunks[i].take() {
                if c.is_empty() {
                    continue;
                }
                self.remaining -= c.len() as u64;
                return Poll::Ready(Some(Ok(Frame::data(c))));
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

/// Boundary of every multipart body ingestbench sends. Generated content is words, digits
/// and markup, so it never contains this string.
pub const BOUNDARY: &str = "ingestbench-7d3f1a9c2b6e4058";

/// Builds the head of a `multipart/form-data` body: text fields, then the file part header.
/// The file part is always last so the document tail and the closing boundary are one chunk.
pub struct MultipartHead {
    buf: Vec<u8>,
}

impl Default for MultipartHead {
    fn default() -> Self {
        Self::new()
    }
}

impl MultipartHead {
    pub fn new() -> MultipartHead {
        MultipartHead {
            buf: Vec::with_capacity(2048),
        }
    }
    pub fn text(&mut self, name: &str, value: &str) -> &mut Self {
        self.buf.extend_from_slice(b"--");
        self.buf.extend_from_slice(BOUNDARY.as_bytes());
        self.buf
            .extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\"\r\n\r\n");
        self.buf.extend_from_slice(value.as_bytes());
        self.buf.extend_from_slice(b"\r\n");
        self
    }
    /// A field with its own content type (Liferay's `document` JSON part).
    pub fn typed(&mut self, name: &str, content_type: &str, value: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b"--");
        self.buf.extend_from_slice(BOUNDARY.as_bytes());
        self.buf
            .extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\"\r\nContent-Type: ");
        self.buf.extend_from_slice(content_type.as_bytes());
        self.buf.extend_from_slice(b"\r\n\r\n");
        self.buf.extend_from_slice(value);
        self.buf.extend_from_slice(b"\r\n");
        self
    }
    /// Starts the file part; returns the head bytes.
    pub fn file(mut self, name: &str, filename: &str, mime: &str) -> Bytes {
        self.buf.extend_from_slice(b"--");
        self.buf.extend_from_slice(BOUNDARY.as_bytes());
        self.buf
            .extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\"; filename=\"");
        self.buf.extend_from_slice(filename.as_bytes());
        self.buf.extend_from_slice(b"\"\r\nContent-Type: ");
        self.buf.extend_from_slice(mime.as_bytes());
        self.buf.extend_from_slice(b"\r\n\r\n");
        Bytes::from(self.buf)
    }
}

/// The document tail followed by the closing boundary.
pub fn multipart_tail(doc: &Doc<'_>) -> Bytes {
    let mut t = Vec::with_capacity(doc.template.tail_len() + BOUNDARY.len() + 8);
    doc.template.write_tail(&doc.marker, &mut t);
    t.extend_from_slice(b"\r\n--");
    t.extend_from_slice(BOUNDARY.as_bytes());
    t.extend_from_slice(b"--\r\n");
    Bytes::from(t)
}

pub fn multipart_content_type() -> HeaderValue {
    HeaderValue::from_static("multipart/form-data; boundary=ingestbench-7d3f1a9c2b6e4058")
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn node_from_header_or_route_cookie() {
        use reqwest::header::{HeaderMap, HeaderName, HeaderValue, SET_COOKIE};
        let mut h = HeaderMap::new();
        h.append(SET_COOKIE, HeaderValue::from_static("other=1; Path=/"));
        h.append(
            SET_COOKIE,
            HeaderValue::from_static("JSESSIONID=8F1A2B3C.node2; Path=/alfresco; HttpOnly"),
        );
        assert_eq!(
            node_of(&h, None, Some("JSESSIONID")).as_deref(),
            Some("node2")
        );
        let name = HeaderName::from_static("x-node");
        assert_eq!(node_of(&h, Some(&name), None), None);
        h.insert(name.clone(), HeaderValue::from_static("n1"));
        assert_eq!(
            node_of(&h, Some(&name), Some("JSESSIONID")).as_deref(),
            Some("n1")
        );
    }

    #[test]
    fn content_type_matches_boundary() {
        assert!(
            multipart_content_type()
                .to_str()
                .unwrap()
                .ends_with(BOUNDARY)
        );
        assert_eq!(format!("{:?}", Secret::new("hunter2")), "Secret(***)");
    }

    #[tokio::test]
    async fn chunk_body_has_exact_length() {
        let b = ChunkBody::new(
            Bytes::from_static(b"ab"),
            Bytes::new(),
            Bytes::from_static(b"cde"),
        );
        assert_eq!(http_body::Body::size_hint(&b).exact(), Some(5));
        let all = b.collect().await.unwrap().to_bytes();
        assert_eq!(&all[..], b"abcde");
    }
}
