//! Alfresco Content Services public REST API v1: ticket or Basic auth, create-node multipart
//! uploads (`filedata`, `name`, `nodeType`, `relativePath`, one field per property), error
//! bodies, and the read-back calls verification needs; folders are created by the upload
//! itself (`relativePath`). A corpus document's versions are in `versions`. Contract:
//! `tests/specs/alfresco/alfresco-core.yaml`, `alfresco-auth.yaml` (in-repo copies, see
//! `tests/specs/README.md`). Never sends `autoRename`.

pub mod model;
mod versions;

use anyhow::{Context, Result, bail};
use base64::Engine;
use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde::Deserialize;

use super::auth::basic_header;
use super::facts::{Metadata, NameRules, Repository, Requests};
use super::multipart::{MultipartHead, first_body};
use super::{Api, Connection, Content, FolderPath, Folders, RepoOptions, Version, WorkerState};
use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::protocol_kind::AuthMode;
use crate::transport::ChunkBody;

pub const CORE_PATH: &str = "/alfresco/api/-default-/public/alfresco/versions/1";
pub const AUTH_PATH: &str = "/alfresco/api/-default-/public/authentication/versions/1";

/// What Alfresco is ([`super::facts`]). Sources: `contentModel.xml` of
/// Alfresco/alfresco-community-repo (`repository/src/main/resources/alfresco/model/`, commit
/// 72635d6c), constraint `cm:filename` on `cm:name`: the regex
/// `(.*[\"\*\\\>\<\?\/\:\|]+.*)|(.*[\.]?.*[\.]+$)|(.*[ ]+$)` must not match; `cm:name` is
/// mandatory (enforced). Names in a folder are unique as
/// `ChildAssocEntity.getChildNodeNameCrc(childName.toLowerCase())` computes them
/// (`repository/src/main/java/org/alfresco/repo/domain/node/ChildAssocEntity.java`):
/// case-insensitive. `repository.properties`: `system.content.maximumFileSizeLimit=` (empty:
/// no size limit). `QName.MAX_LENGTH = 255` truncates the association name, not `cm:name`: no
/// length limit on names. Metadata is checked against the content model ([`model`]). A
/// version is one upload of its bytes, plus a properties update where its metadata changes;
/// a folder is created by the upload that first needs it (`relativePath`), at no request of
/// its own.
pub const FACTS: Repository = Repository {
    names: NameRules {
        folds_case: true,
        clash_says: "names equal ignoring case in one folder (409 on the second)",
        clash_source: "alfresco-community-repo ChildAssocEntity.getChildNodeNameCrc(childName.toLowerCase())",
        refused: &["\"", "*", "\\", ">", "<", "?", "/", ":", "|"],
        refused_says: "a name with * \" < > \\ / ? : | (422)",
        refuses_trailing_dot_or_space: true,
        reserved_stems: &[],
        reserved_says: "",
        max_chars: None,
        source: "alfresco-community-repo contentModel.xml, constraint cm:filename on cm:name",
    },
    max_size: None,
    metadata: Metadata::ContentModel,
    requests: Requests {
        per_version: 1,
        per_property_update: 1,
        per_folder: 0,
    },
};

pub struct Alfresco {
    conn: Connection,
    core: String,
    /// The upload endpoint (its path is the fast path's request target).
    children_url: reqwest::Url,
}

#[derive(Deserialize)]
struct Entry<T> {
    entry: T,
}

#[derive(Deserialize)]
struct IdOnly {
    id: String,
}

#[derive(Deserialize)]
struct NodeInfo {
    id: String,
    #[serde(rename = "isFolder", default)]
    is_folder: bool,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    #[serde(rename = "statusCode")]
    status_code: Option<u16>,
    #[serde(rename = "briefSummary")]
    brief_summary: Option<String>,
}

/// `"<status> <briefSummary>"` from an Alfresco error body, without the 8-digit log number.
pub fn error_message(status: u16, body: &[u8]) -> String {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(e) => {
            let summary = e.error.brief_summary.unwrap_or_default();
            let summary = match summary.split_once(' ') {
                Some((num, rest)) if num.len() == 8 && num.bytes().all(|b| b.is_ascii_digit()) => {
                    rest.to_string()
                }
                _ => summary,
            };
            format!("{} {}", e.error.status_code.unwrap_or(status), summary)
        }
        Err(_) => {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
            format!("{status} (no Alfresco error body) {}", text.trim())
        }
    }
}

/// The multipart body of one create-node upload: `name`, `nodeType`, `relativePath`,
/// optionally `versioningEnabled=false`, one field per property value, then `filedata`.
/// The document bytes are the shared prefix plus a small per-document tail (no copy).
pub fn upload_body(
    profile: &crate::fixtures::Profile,
    doc: &Doc<'_>,
    folder: &str,
    versioning: bool,
) -> Result<ChunkBody, UploadError> {
    first_body(
        doc,
        create_head(profile, doc, folder, versioning, None),
        None,
    )
}

/// The fields of a create-node upload and the header of its `filedata` part; for a document
/// with versions (`first`: its first version's metadata) always versioned, as a major 1.0.
fn create_head(
    profile: &crate::fixtures::Profile,
    doc: &Doc<'_>,
    folder: &str,
    versioning: bool,
    first: Option<&super::versions::Step<'_>>,
) -> Bytes {
    let shadow = match first {
        Some(s) => s.shadow,
        None => doc.file().and_then(|f| f.shadow.as_ref()),
    };
    let node_type = shadow
        .and_then(|s| s.node_type.as_deref())
        .unwrap_or(&profile.node_type);
    let mut head = MultipartHead::new();
    head.text("name", &doc.name)
        .text("nodeType", node_type)
        .text("relativePath", folder);
    if first.is_some() {
        head.text("majorVersion", "true");
    } else if !versioning {
        head.text("versioningEnabled", "false");
    }
    match shadow {
        // A bulk-import source's own metadata, as its shadow file gives it.
        Some(s) => {
            for (name, values) in &s.properties {
                if profile.multiple(name) {
                    for v in values {
                        head.text(name, v);
                    }
                } else {
                    head.text(name, &values.join(","));
                }
            }
        }
        None => profile.each_value(doc.seed, doc.index, doc.marker_str(), |_, p, v| {
            head.text(&p.name, v);
        }),
    }
    head.file("filedata", &doc.name, doc.mime())
}

impl Alfresco {
    /// Logs in (ticket mode) and checks that the parent folder exists, so a wrong URL,
    /// password or parent is a setup error before any measurement starts.
    pub async fn connect(client: reqwest::Client, opts: RepoOptions) -> Result<Alfresco> {
        let root = opts.url.as_str().trim_end_matches('/').to_string();
        let core = format!("{root}{CORE_PATH}");
        let children_url =
            reqwest::Url::parse(&format!("{core}/nodes/{}/children", opts.parent))
                .with_context(|| format!("--parent {}: not usable in a URL", opts.parent))?;
        let header = match opts.auth {
            AuthMode::Basic => basic_header(&opts.user, opts.password.expose()),
            AuthMode::Ticket => login(&client, &root, &opts).await?,
            AuthMode::Oauth2 => {
                bail!("--auth oauth2 is for Liferay; Alfresco takes ticket or basic")
            }
        };
        let a = Alfresco {
            core,
            children_url,
            conn: Connection::new(client, opts, header),
        };
        a.check_parent().await?;
        Ok(a)
    }

    async fn check_parent(&self) -> Result<()> {
        let url = format!("{}/nodes/{}", self.core, self.conn.opts.parent);
        let (status, body) = self.conn.call(self.conn.client.get(&url)).await?;
        match status {
            StatusCode::OK => {
                let node: Entry<NodeInfo> = serde_json::from_slice(&body).with_context(|| {
                    format!(
                        "{url}: answered 200 without a node entry; is --url an Alfresco server?"
                    )
                })?;
                if !node.entry.is_folder {
                    bail!(
                        "--parent {}: node {} is not a folder; use -my-, -root-, -shared- or a folder node id",
                        self.conn.opts.parent,
                        node.entry.id
                    );
                }
                Ok(())
            }
            StatusCode::UNAUTHORIZED => bail!(
                "login rejected for user `{}` at {} (401): check --user and the password (INGESTBENCH_PASSWORD or --password-file)",
                self.conn.opts.user,
                self.conn.opts.url
            ),
            StatusCode::NOT_FOUND => bail!(
                "--parent {}: not found at {} ({}); use -my-, -root-, -shared- or an existing folder node id",
                self.conn.opts.parent,
                self.conn.opts.url,
                error_message(404, &body)
            ),
            s => bail!(
                "{url}: unexpected answer {}; is --url the server root of an Alfresco?",
                error_message(s.as_u16(), &body)
            ),
        }
    }

    /// `GET nodes/{parent}/children?relativePath=…`: the documents (not the subfolders) in
    /// the folder at `path` below the parent, a page of `max`.
    fn documents_in(&self, path: &str, max: &str) -> reqwest::RequestBuilder {
        self.conn
            .client
            .get(format!(
                "{}/nodes/{}/children",
                self.core, self.conn.opts.parent
            ))
            .query(&[
                ("relativePath", path),
                ("maxItems", max),
                ("where", "(isFile=true)"),
            ])
    }
}

impl Api for Alfresco {
    const ERROR_MESSAGE: fn(u16, &[u8]) -> String = error_message;

    fn conn(&self) -> &Connection {
        &self.conn
    }

    fn upload_head(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        first: Option<&super::versions::Step<'_>>,
        _scratch: &mut [Vec<u8>; 3],
    ) -> Result<Bytes, UploadError> {
        Ok(create_head(
            &self.conn.opts.profile,
            doc,
            folder,
            self.conn.opts.versioning,
            first,
        ))
    }
    fn upload_path<'a>(&'a self, _folder: &str, _path: &'a mut FolderPath) -> &'a str {
        self.children_url.path()
    }
    fn upload_url(&self, _folder: &str) -> String {
        self.children_url.to_string()
    }
    fn created_id(body: &[u8]) -> Result<String, UploadError> {
        let e: Entry<IdOnly> = serde_json::from_slice(body)
            .map_err(|e| UploadError::protocol(format!("201 without entry.id: {e}")))?;
        if e.entry.id.is_empty() {
            return Err(UploadError::protocol("201 with an empty entry.id"));
        }
        Ok(e.entry.id)
    }
    /// A ticket that expired: 401, and one new login.
    fn expired(&self) -> Option<StatusCode> {
        (self.conn.opts.auth == AuthMode::Ticket).then_some(StatusCode::UNAUTHORIZED)
    }
    async fn renew(&self, seen: u64) -> Result<(), UploadError> {
        if self.conn.opts.auth != AuthMode::Ticket || self.conn.auth.generation() != seen {
            return Ok(());
        }
        let root = self.conn.opts.url.as_str().trim_end_matches('/');
        let h = login(&self.conn.client, root, &self.conn.opts)
            .await
            .map_err(|e| UploadError::http(401, format!("re-login failed: {e:#}")))?;
        self.conn.auth.replace_if_current(seen, h);
        Ok(())
    }

    async fn add_versions(
        &self,
        id: &str,
        _doc: &Doc<'_>,
        steps: &[super::versions::Step<'_>],
        from: usize,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        let header = worker.auth.header().clone();
        self.put_versions(id, steps, from, &header).await
    }
    async fn stored_versions(
        &self,
        id: &str,
        _worker: &mut WorkerState,
    ) -> Result<(String, usize), UploadError> {
        super::upload::versioned_in_place(id, self.history(id).await)
    }

    /// The node at `{folder}/{name}` below the parent.
    fn lookup_request(
        &self,
        doc: &Doc<'_>,
        folder: &str,
    ) -> Result<reqwest::RequestBuilder, UploadError> {
        Ok(self
            .conn
            .client
            .get(format!("{}/nodes/{}", self.core, self.conn.opts.parent))
            .query(&[("relativePath", format!("{folder}/{}", doc.name))]))
    }
    fn found_id(body: &[u8]) -> Result<Option<String>, UploadError> {
        let e: Entry<IdOnly> = serde_json::from_slice(body)
            .map_err(|e| UploadError::protocol(format!("lookup: {e}")))?;
        Ok(Some(e.entry.id))
    }

    /// None: Alfresco creates missing folders itself (`relativePath`), so the path is the
    /// reference.
    fn folders(&self) -> Option<&Folders> {
        None
    }
    async fn create_folder(
        &self,
        _parent: Option<&str>,
        path: &str,
        _name: &str,
    ) -> anyhow::Result<String> {
        Ok(path.to_string())
    }

    fn read_request(&self, id: &str) -> reqwest::RequestBuilder {
        self.conn.client.get(format!("{}/nodes/{id}", self.core))
    }
    fn content(&self, id: &str, _meta: &serde_json::Value) -> Result<Content, String> {
        Ok(Content::Get(Box::new(
            self.conn
                .client
                .get(format!("{}/nodes/{id}/content", self.core)),
        )))
    }
    fn name_and_props(meta: &serde_json::Value) -> (&str, serde_json::Value) {
        (
            meta["entry"]["name"].as_str().unwrap_or(""),
            meta["entry"]["properties"].clone(),
        )
    }
    async fn versions(&self, id: &str) -> Result<Option<Vec<Version>>, String> {
        self.version_list(id).await
    }

    /// Documents (not subfolders: a corpus tree has both) in the folder at `path` below the
    /// parent (a DB query, not search).
    async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        let list = self.conn.authed(self.documents_in(path, "1"));
        Ok(super::readback::read_json(list, error_message)
            .await?
            .and_then(|v| {
                v.pointer("/list/pagination/totalItems")
                    .and_then(serde_json::Value::as_u64)
            }))
    }

    /// `GET nodes/{parent}/children?relativePath=…` of the run folder's documents (the
    /// folder's reference is its path below the parent), one page of 100.
    fn list_request(&self, folder: &str) -> Option<reqwest::RequestBuilder> {
        Some(self.documents_in(folder, "100"))
    }

    /// `GET queries/nodes?term=…&rootNodeId={parent}&nodeType=cm:content`, one page of 25.
    fn query_request(&self, term: &str) -> Option<reqwest::RequestBuilder> {
        Some(
            self.conn
                .client
                .get(format!("{}/queries/nodes", self.core))
                .query(&[
                    ("term", term),
                    ("rootNodeId", self.conn.opts.parent.as_str()),
                    ("nodeType", "cm:content"),
                    ("maxItems", "25"),
                ]),
        )
    }

    /// `list.entries[].entry.id` of a `NodePaging`.
    fn listed_ids(body: &[u8]) -> Result<Vec<String>, UploadError> {
        let v: serde_json::Value = serde_json::from_slice(body)
            .map_err(|e| UploadError::protocol(format!("a listing that is not JSON: {e}")))?;
        let entries = v
            .pointer("/list/entries")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| UploadError::protocol("a listing without list.entries"))?;
        Ok(entries
            .iter()
            .filter_map(|e| e.pointer("/entry/id").and_then(serde_json::Value::as_str))
            .map(str::to_string)
            .collect())
    }

    /// `DELETE nodes/{id}?permanent=true` of the folder at `path` below the parent.
    async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        let header = self.conn.auth.cache().header().clone();
        let find = self
            .conn
            .client
            .get(format!("{}/nodes/{}", self.core, self.conn.opts.parent))
            .query(&[("relativePath", path)])
            .header(AUTHORIZATION, header.clone());
        let Some(v) = super::readback::read_json(find, error_message).await? else {
            return Ok(false);
        };
        let id = v["entry"]["id"].as_str().ok_or("folder without id")?;
        let delete = self
            .conn
            .client
            .delete(format!("{}/nodes/{id}", self.core))
            .query(&[("permanent", "true")])
            .header(AUTHORIZATION, header);
        super::readback::read(delete, error_message)
            .await
            .map(|r| r.is_some())
    }
}

/// POST /tickets; returns the header that carries the ticket (`Basic base64(ticket)`).
async fn login(client: &reqwest::Client, root: &str, opts: &RepoOptions) -> Result<HeaderValue> {
    let url = format!("{root}{AUTH_PATH}/tickets");
    let body = serde_json::json!({ "userId": opts.user, "password": opts.password.expose() });
    let (status, bytes) = super::send_setup(client.post(&url).json(&body), &opts.url).await?;
    match status {
        StatusCode::CREATED => {
            let e: Entry<IdOnly> = serde_json::from_slice(&bytes).with_context(|| {
                format!("{url}: 201 without entry.id; is --url an Alfresco server root?")
            })?;
            let token = base64::engine::general_purpose::STANDARD.encode(e.entry.id);
            let mut v = HeaderValue::from_str(&format!("Basic {token}"))?;
            v.set_sensitive(true);
            Ok(v)
        }
        StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED => bail!(
            "login rejected for user `{}` at {} ({}): check --user and the password (INGESTBENCH_PASSWORD or --password-file)",
            opts.user,
            opts.url,
            status.as_u16()
        ),
        StatusCode::NOT_FOUND => bail!(
            "{url}: 404; --url must be the server root (e.g. http://host:8080) of an Alfresco 5.2 or later"
        ),
        s => bail!(
            "login at {url} failed: {}",
            error_message(s.as_u16(), &bytes)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_lose_the_log_number() {
        let body = br#"{"error":{"errorKey":"x","statusCode":409,"briefSummary":"05150023 a.pdf already exists.","stackTrace":"","descriptionURL":"","logId":"1"}}"#;
        assert_eq!(error_message(409, body), "409 a.pdf already exists.");
        assert!(
            error_message(502, b"<html>bad gateway</html>")
                .starts_with("502 (no Alfresco error body)")
        );
    }
}
