//! Repository APIs: one upload, one lookup, one folder chain and one read-back, written once
//! over the small [`Api`] trait, which each API (`alfresco`, `liferay`, `cmis`) implements
//! with only what differs: the request head, the status that means created, where the new id
//! is in the answer, the folder and version calls and the read-back URLs. Every URL, auth and
//! body detail of a system stays in its module. This module holds the two traits, the
//! [`Repo`] enum and its dispatch, and the types they exchange; the names of the APIs and auth
//! modes are below it, in `crate::protocol_kind`; the generic code in `upload`, `folders` and `readback`, and the pieces
//! the APIs share in `auth`, `multipart` and `versions`. What each repository *is* (name
//! rules, size limit, metadata checking, requests per version and folder) is data in its
//! module, reached through `facts`; Alfresco's content-model dictionary is
//! `alfresco::model`. Protocols build requests; `transport` sends them.

pub mod alfresco;
pub mod auth;
pub mod cmis;
pub mod facts;
pub mod folders;
pub mod liferay;
pub mod multipart;
pub mod readback;
pub mod reads;
pub mod upload;
pub mod versions;

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;

use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::transport::fast::Lane;
use crate::transport::route::Route;
pub use auth::{AuthCache, Secret, SharedAuth};
pub use folders::Folders;
pub use readback::{Content, Version};

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
    /// How uploads travel: the fast path, if any, and where the node name is found.
    pub route: Route,
}

/// What every API's client holds: the HTTP client, the options and the shared login.
pub struct Connection {
    pub client: reqwest::Client,
    pub opts: RepoOptions,
    pub auth: Arc<SharedAuth>,
}

impl Connection {
    pub fn new(
        client: reqwest::Client,
        opts: RepoOptions,
        header: reqwest::header::HeaderValue,
    ) -> Connection {
        Connection {
            client,
            opts,
            auth: Arc::new(SharedAuth::new(header)),
        }
    }

    /// `req` with the current login.
    pub fn authed(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        req.header(AUTHORIZATION, self.auth.cache().header().clone())
    }

    /// A setup call (a check at connect, a folder): `req` sent with the current login.
    pub async fn call(&self, req: reqwest::RequestBuilder) -> anyhow::Result<(StatusCode, Bytes)> {
        send_setup(self.authed(req), &self.opts.url).await
    }
}

/// A measured call (a version step, a lookup, a read): `req` sent as it is, its body when
/// `ok(status)`; else the failure, counted under its status with what `message` reads in the
/// error body. A transport failure is classified (`UploadError::transport`).
pub async fn expect(
    req: reqwest::RequestBuilder,
    ok: impl Fn(StatusCode) -> bool,
    message: fn(u16, &[u8]) -> String,
) -> Result<(StatusCode, Bytes), UploadError> {
    let resp = req.send().await.map_err(|e| UploadError::transport(&e))?;
    let status = resp.status();
    let body = resp.bytes().await.map_err(|e| UploadError::transport(&e))?;
    if ok(status) {
        Ok((status, body))
    } else {
        Err(UploadError::http(
            status.as_u16(),
            message(status.as_u16(), &body),
        ))
    }
}

/// `req` sent as it is, its status and body; a transport failure is a setup error naming the
/// repository's `url`.
pub async fn send_setup(
    req: reqwest::RequestBuilder,
    url: &reqwest::Url,
) -> anyhow::Result<(StatusCode, Bytes)> {
    let resp = req
        .send()
        .await
        .map_err(|e| readback::unreachable_err(url, &e))?;
    let status = resp.status();
    Ok((status, resp.bytes().await.unwrap_or_default()))
}

impl ProtocolKind {
    /// What this repository is ([`facts`]): each API's module states its own.
    pub fn facts(self) -> &'static facts::Repository {
        match self {
            ProtocolKind::Alfresco => &alfresco::FACTS,
            ProtocolKind::Liferay => &liferay::FACTS,
            ProtocolKind::Cmis => &cmis::FACTS,
        }
    }
}

/// A connected client of any API (static dispatch, no boxing on the hot path).
pub enum Repo {
    Alfresco(alfresco::Alfresco),
    Liferay(liferay::Liferay),
    Cmis(cmis::Cmis),
}

/// `$e` with `$r` bound to the API client inside a [`Repo`].
macro_rules! each {
    ($repo:expr, $r:ident => $e:expr) => {
        match $repo {
            Repo::Alfresco($r) => $e,
            Repo::Liferay($r) => $e,
            Repo::Cmis($r) => $e,
        }
    };
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

    /// Reads a document back by id (never by search, which lags); None when it is gone.
    pub async fn fetch(&self, id: &str) -> Result<Option<Fetched>, String> {
        each!(self, r => readback::fetch(r, id).await)
    }
    /// Every version of a document, oldest first (the head last), read back by id: each
    /// one's size, hash and properties (`name` is the repository's version label); None
    /// when the document is gone.
    pub async fn fetch_versions(&self, id: &str) -> Result<Option<Vec<Fetched>>, String> {
        each!(self, r => readback::fetch_versions(r, id).await)
    }
    /// Documents in the run folder at `path` (relative to the parent); None when missing.
    pub async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        each!(self, r => r.count_folder(path).await)
    }
    /// Deletes the folder at `path` (relative to the parent) with everything below it,
    /// permanently where the API allows; returns false when it does not exist.
    pub async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        each!(self, r => r.delete_folder(path).await)
    }
}

impl Protocol for Repo {
    async fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        worker: &mut WorkerState,
    ) -> Result<Uploaded, UploadError> {
        each!(self, r => r.upload(doc, folder, worker).await)
    }
    async fn lookup(&self, doc: &Doc<'_>, folder: &str) -> Result<Option<String>, UploadError> {
        each!(self, r => r.lookup(doc, folder).await)
    }
    async fn prepare_folder(&self, path: &str) -> anyhow::Result<String> {
        each!(self, r => r.prepare_folder(path).await)
    }
    fn worker(&self) -> WorkerState {
        each!(self, r => r.worker())
    }
    async fn complete(
        &self,
        doc: &Doc<'_>,
        id: &str,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        each!(self, r => r.complete(doc, id, worker).await)
    }
    async fn read(&self, op: reads::ReadOp, target: &str) -> Result<reads::ReadDone, UploadError> {
        each!(self, r => r.read(op, target).await)
    }
    fn skipped_reads(&self) -> Vec<(reads::ReadOp, String)> {
        each!(self, r => r.reads_unsupported())
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

/// What a successful upload returns.
#[derive(Debug, Clone)]
pub struct Uploaded {
    /// The repository's id for the new document.
    pub id: String,
    /// The backend node that served the request, when the access path names it.
    pub node: Option<String>,
}

/// A repository as the engine's workers see it: implemented once for every [`Api`] (in
/// `upload`), and by [`Repo`], which dispatches to the API it connected to.
pub trait Protocol: Send + Sync + 'static {
    /// Uploads one document into `folder` (as returned by `prepare_folder`), with the
    /// profile's metadata. Counts as success only on the API's documented success status
    /// with the new id read from the body.
    fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        worker: &mut WorkerState,
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

    /// A fresh per-worker state (auth cache, no connection yet).
    fn worker(&self) -> WorkerState;

    /// After `lookup` adopted a stored document with versions (a stop or an ambiguous
    /// failure between its versions): uploads the versions it still lacks, in order.
    /// Nothing for a document without versions.
    fn complete(
        &self,
        doc: &Doc<'_>,
        id: &str,
        worker: &mut WorkerState,
    ) -> impl Future<Output = Result<(), UploadError>> + Send;

    /// One read a user does beside the import (`reads`): metadata or content of document
    /// `target`, the listing of folder `target`, or a query for `target`.
    fn read(
        &self,
        op: reads::ReadOp,
        target: &str,
    ) -> impl Future<Output = Result<reads::ReadDone, UploadError>> + Send;

    /// The kinds of read this repository cannot do, each with why (known from connecting:
    /// no request is sent).
    fn skipped_reads(&self) -> Vec<(reads::ReadOp, String)> {
        Vec::new()
    }
}

/// What one repository API says about itself; [`upload`], [`folders`] and [`readback`] do the
/// rest once for all of them (and every `Api` is a [`Protocol`]). Requests are returned
/// without their `Authorization` header, which the generic code adds.
pub trait Api: Send + Sync + Sized + 'static {
    /// The status of a created document, and its name for the protocol error any other
    /// success is ("`N` instead of `201 Created`").
    const CREATED: (StatusCode, &str) = (StatusCode::CREATED, "201 Created");
    /// `"<status> <what the error body says>"`.
    const ERROR_MESSAGE: fn(u16, &[u8]) -> String;

    fn conn(&self) -> &Connection;

    /// Before each upload (Liferay: a new OAuth2 token when the old one nears its end).
    fn before_upload(
        &self,
        _auth: &AuthCache,
    ) -> impl Future<Output = Result<(), UploadError>> + Send {
        async { Ok(()) }
    }
    /// The multipart head of a create in `folder`: its fields, then the file part's header.
    /// `first`: a document with versions is created from its first one. `scratch`: the
    /// worker's reused buffers.
    fn upload_head(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        first: Option<&versions::Step<'_>>,
        scratch: &mut [Vec<u8>; 3],
    ) -> Result<Bytes, UploadError>;
    /// The request target of an upload into `folder`, for the fast path (`path` caches what
    /// is formatted per folder).
    fn upload_path<'a>(&'a self, folder: &str, path: &'a mut FolderPath) -> &'a str;
    /// The full URL of an upload into `folder`, for reqwest.
    fn upload_url(&self, folder: &str) -> String;
    /// The new document's id in the [`Api::CREATED`] answer.
    fn created_id(body: &[u8]) -> Result<String, UploadError>;
    /// The answer that means an expired login: renewed once and the upload sent again.
    fn expired(&self) -> Option<StatusCode> {
        None
    }
    /// Logs in again unless another worker did since generation `seen`.
    fn renew(&self, _seen: u64) -> impl Future<Output = Result<(), UploadError>> + Send {
        async { Ok(()) }
    }
    /// The status a failed upload is counted under (Liferay: a taken external reference
    /// code is the conflict it means).
    fn failure_status(status: StatusCode, _message: &str) -> u16 {
        status.as_u16()
    }

    /// Uploads `steps[from..]` onto document `id`, in order.
    fn add_versions(
        &self,
        id: &str,
        doc: &Doc<'_>,
        steps: &[versions::Step<'_>],
        from: usize,
        worker: &mut WorkerState,
    ) -> impl Future<Output = Result<(), UploadError>> + Send;
    /// A stored document with versions, found after a stop: the id its next version goes
    /// onto and how many versions it has.
    fn stored_versions(
        &self,
        id: &str,
        worker: &mut WorkerState,
    ) -> impl Future<Output = Result<(String, usize), UploadError>> + Send;

    /// The request that finds a document by its deterministic name (or reference code).
    fn lookup_request(
        &self,
        doc: &Doc<'_>,
        folder: &str,
    ) -> Result<reqwest::RequestBuilder, UploadError>;
    /// The id in a successful lookup's answer.
    fn found_id(body: &[u8]) -> Result<Option<String>, UploadError>;

    /// The folder cache, for an API whose folders are made one by one (None: the upload
    /// creates them, and a folder's reference is its path).
    fn folders(&self) -> Option<&Folders>;
    /// The folder runs go below, when the API knows it by id.
    fn root_folder(&self) -> Option<String> {
        None
    }
    /// Creates folder `name` (at `path` below the parent) in folder `parent` (None: the
    /// parent itself), or finds it when it exists; returns its id.
    fn create_folder(
        &self,
        parent: Option<&str>,
        path: &str,
        name: &str,
    ) -> impl Future<Output = anyhow::Result<String>> + Send;

    /// The request that reads a document's metadata back by id.
    fn read_request(&self, id: &str) -> reqwest::RequestBuilder;
    /// Where that document's content is, from its metadata.
    fn content(&self, id: &str, meta: &serde_json::Value) -> Result<Content, String>;
    /// The document's name and its properties (a JSON object by the profile's names).
    fn name_and_props(meta: &serde_json::Value) -> (&str, serde_json::Value);
    /// Every version of document `id`, oldest first; None when it is gone.
    fn versions(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<Vec<Version>>, String>> + Send;
    /// Documents in the folder at `path` below the parent; None when it does not exist.
    fn count_folder(&self, path: &str) -> impl Future<Output = Result<Option<u64>, String>> + Send;
    /// Deletes the folder at `path` below the parent with everything in it.
    fn delete_folder(&self, path: &str) -> impl Future<Output = Result<bool, String>> + Send;

    /// Readers (`reads`): the request reading a document's metadata alone (Liferay's
    /// `read_request` inlines the content, which a reader's metadata read does not want).
    fn meta_request(&self, id: &str) -> reqwest::RequestBuilder {
        self.read_request(id)
    }
    /// Readers (`reads`): the request listing the documents of `folder` (as `prepare_folder`
    /// returned it); None while the API's readers are not written.
    fn list_request(&self, _folder: &str) -> Option<reqwest::RequestBuilder> {
        None
    }
    /// Readers: a query for documents whose name matches `term`, below the run's parent.
    fn query_request(&self, _term: &str) -> Option<reqwest::RequestBuilder> {
        None
    }
    /// Readers: the document ids a listing's or a query's answer names.
    fn listed_ids(_body: &[u8]) -> Result<Vec<String>, UploadError> {
        Ok(Vec::new())
    }
    /// Readers: the kinds of read the repository said at connect it cannot do, each with why
    /// (CMIS: `capabilityQuery` none), so they are left out of the mix instead of failing.
    fn reads_unsupported(&self) -> Vec<(reads::ReadOp, String)> {
        Vec::new()
    }
}

/// What one upload worker keeps between its uploads: its copy of the auth header and its own
/// lane of the upload fast path (`transport::fast::Lane`: its connection and parsed target).
pub struct WorkerState {
    pub auth: AuthCache,
    pub lane: Lane,
    /// The upload path of the worker's current folder (Liferay, CMIS: the folder is in the
    /// path), formatted when the folder changes.
    pub folder_path: FolderPath,
    /// Buffers a protocol reuses to assemble a request part from pieces (Liferay's
    /// `document` JSON, its customFields and its contentFields), so an upload allocates none.
    pub scratch: [Vec<u8>; 3],
}

impl WorkerState {
    pub fn new(auth: AuthCache) -> WorkerState {
        WorkerState {
            auth,
            lane: Lane::default(),
            folder_path: FolderPath::default(),
            scratch: Default::default(),
        }
    }
}

/// A worker's request path for its current folder: made by `make` when the folder changes
/// (every `--docs-per-folder / T` documents), so an upload formats none.
#[derive(Default)]
pub struct FolderPath {
    folder: String,
    path: String,
}

impl FolderPath {
    pub fn of(&mut self, folder: &str, make: impl FnOnce() -> String) -> &str {
        if self.path.is_empty() || self.folder != folder {
            self.folder.clear();
            self.folder.push_str(folder);
            self.path = make();
        }
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::FolderPath;

    #[test]
    fn a_folder_path_is_made_once_per_folder() {
        let mut p = FolderPath::default();
        let mut made = 0;
        for folder in ["10", "10", "10", "11", "11", "10"] {
            let path = p.of(folder, || {
                made += 1;
                format!("/f/{folder}/documents")
            });
            assert_eq!(path, format!("/f/{folder}/documents"));
        }
        assert_eq!(made, 3, "10, then 11, then 10 again");
    }
}
