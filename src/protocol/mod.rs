//! Repository APIs. One file per API (`alfresco`, `liferay`, `cmis`) behind the [`Protocol`]
//! trait; every URL, auth and body detail of a system stays in its file. This module holds
//! only the trait, the [`Repo`] enum and its dispatch, and the types they exchange; shared
//! pieces live in files named for them (`auth`, `multipart`, `readback`), and Liferay's
//! `document` JSON writer in `liferay_json`. Protocols build
//! requests; `transport` sends them.

pub mod alfresco;
pub mod auth;
pub mod cmis;
pub mod liferay;
pub mod liferay_json;
pub mod multipart;
pub mod readback;
pub mod versions;

use std::future::Future;

pub use crate::api::{AuthMode, ProtocolKind};
use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::transport::fast::Lane;
use crate::transport::route::Route;
pub use auth::{AuthCache, Secret, SharedAuth};

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
        worker: &mut WorkerState,
    ) -> Result<Uploaded, UploadError> {
        match self {
            Repo::Alfresco(r) => r.upload(doc, folder, worker).await,
            Repo::Liferay(r) => r.upload(doc, folder, worker).await,
            Repo::Cmis(r) => r.upload(doc, folder, worker).await,
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
    fn worker(&self) -> WorkerState {
        match self {
            Repo::Alfresco(r) => r.worker(),
            Repo::Liferay(r) => r.worker(),
            Repo::Cmis(r) => r.worker(),
        }
    }
    async fn complete(
        &self,
        doc: &Doc<'_>,
        id: &str,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        match self {
            Repo::Alfresco(r) => r.complete(doc, id, worker).await,
            Repo::Liferay(r) => r.complete(doc, id, worker).await,
            Repo::Cmis(r) => r.complete(doc, id, worker).await,
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
    /// Every version of a document, oldest first (the head last), read back by id: each
    /// one's size, hash and properties (`name` is the repository's version label); None
    /// when the document is gone.
    pub async fn fetch_versions(&self, id: &str) -> Result<Option<Vec<Fetched>>, String> {
        match self {
            Repo::Alfresco(r) => r.fetch_versions(id).await,
            Repo::Liferay(r) => r.fetch_versions(id).await,
            Repo::Cmis(r) => r.fetch_versions(id).await,
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
