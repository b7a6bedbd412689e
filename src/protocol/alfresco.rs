//! Alfresco Content Services public REST API v1: ticket or Basic auth, create-node multipart
//! uploads (`filedata`, `name`, `nodeType`, `relativePath`, one field per property), error
//! bodies, and the read-back calls verification needs. A corpus document's versions: created
//! from its first, then each next one as `PUT nodes/{id}/content` (after `PUT nodes/{id}` with
//! its properties when they changed), read back from `nodes/{id}/versions`. Contract:
//! `tests/specs/alfresco/alfresco-core.yaml`, `alfresco-auth.yaml` (in-repo copies, see
//! `tests/specs/README.md`). Never sends `autoRename`.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use base64::Engine;
use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde::Deserialize;

use super::auth::{SharedAuth, basic_header};
use super::multipart::{MultipartHead, first_body, multipart_content_type};
use super::readback::unreachable_err;
use super::versions;
use super::{AuthMode, Protocol, RepoOptions, Uploaded, WorkerState};
use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::transport::ChunkBody;

pub const CORE_PATH: &str = "/alfresco/api/-default-/public/alfresco/versions/1";
pub const AUTH_PATH: &str = "/alfresco/api/-default-/public/authentication/versions/1";

pub struct Alfresco {
    client: reqwest::Client,
    opts: RepoOptions,
    core: String,
    /// The upload endpoint (its path is the fast path's request target).
    children_url: reqwest::Url,
    auth: Arc<SharedAuth>,
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
    create_body(profile, doc, folder, versioning, None)
}

/// [`upload_body`], or for a document with versions the body that creates it from its first
/// version (`first`: its bytes and metadata), always versioned, as a major version 1.0.
fn create_body(
    profile: &crate::fixtures::Profile,
    doc: &Doc<'_>,
    folder: &str,
    versioning: bool,
    first: Option<&versions::Step<'_>>,
) -> Result<ChunkBody, UploadError> {
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
    let head = head.file("filedata", &doc.name, doc.mime());
    first_body(doc, head, first)
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
            client,
            core,
            children_url,
            auth: Arc::new(SharedAuth::new(header)),
            opts,
        };
        a.check_parent().await?;
        Ok(a)
    }

    async fn check_parent(&self) -> Result<()> {
        let url = format!("{}/nodes/{}", self.core, self.opts.parent);
        let mut cache = self.auth.cache();
        let resp = self
            .client
            .get(&url)
            .header(AUTHORIZATION, cache.header().clone())
            .send()
            .await
            .map_err(|e| unreachable_err(&self.opts.url, &e))?;
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
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
                        self.opts.parent,
                        node.entry.id
                    );
                }
                Ok(())
            }
            StatusCode::UNAUTHORIZED => bail!(
                "login rejected for user `{}` at {} (401): check --user and the password (INGESTBENCH_PASSWORD or --password-file)",
                self.opts.user,
                self.opts.url
            ),
            StatusCode::NOT_FOUND => bail!(
                "--parent {}: not found at {} ({}); use -my-, -root-, -shared- or an existing folder node id",
                self.opts.parent,
                self.opts.url,
                error_message(404, &body)
            ),
            s => bail!(
                "{url}: unexpected answer {}; is --url the server root of an Alfresco?",
                error_message(s.as_u16(), &body)
            ),
        }
    }

    pub fn core_url(&self) -> &str {
        &self.core
    }

    /// Logs in again unless another worker already did since `seen`.
    async fn renew(&self, seen: u64) -> Result<(), UploadError> {
        if self.opts.auth != AuthMode::Ticket || self.auth.generation() != seen {
            return Ok(());
        }
        let root = self.opts.url.as_str().trim_end_matches('/');
        let h = login(&self.client, root, &self.opts)
            .await
            .map_err(|e| UploadError::http(401, format!("re-login failed: {e:#}")))?;
        self.auth.replace_if_current(seen, h);
        Ok(())
    }

    async fn send_once(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        header: &HeaderValue,
        lane: &mut crate::transport::fast::Lane,
        first: Option<&versions::Step<'_>>,
    ) -> Result<(StatusCode, Option<String>, Bytes), UploadError> {
        let body = create_body(&self.opts.profile, doc, folder, self.opts.versioning, first)?;
        self.opts
            .route
            .send_upload(
                &self.client,
                lane,
                || self.children_url.to_string(),
                self.children_url.path(),
                &[
                    (AUTHORIZATION, header),
                    (CONTENT_TYPE, &multipart_content_type()),
                ],
                body,
            )
            .await
    }
}

impl Alfresco {
    /// Uploads `steps[from..]` onto the node `id`, in order: for each, its metadata when it
    /// changed (`PUT nodes/{id}`, properties only), then its bytes as a new version
    /// (`PUT nodes/{id}/content?majorVersion=…&comment=…`).
    async fn add_versions(
        &self,
        id: &str,
        steps: &[versions::Step<'_>],
        from: usize,
        header: &HeaderValue,
    ) -> Result<(), UploadError> {
        for (i, s) in steps.iter().enumerate().skip(from) {
            let prev = i.checked_sub(1).and_then(|p| steps[p].shadow);
            if versions::metadata_changed(prev, s.shadow)
                && let Some(shadow) = s.shadow
            {
                let req = self
                    .client
                    .put(format!("{}/nodes/{id}", self.core))
                    .header(AUTHORIZATION, header.clone())
                    .json(&serde_json::json!({
                        "properties": versions::properties_json(shadow, &self.opts.profile)
                    }));
                self.step(req, StatusCode::OK)
                    .await
                    .map_err(|e| versions::step_error(s, e))?;
            }
            let req = self
                .client
                .put(format!("{}/nodes/{id}/content", self.core))
                .query(&[
                    ("majorVersion", if s.major() { "true" } else { "false" }),
                    ("comment", &s.comment()),
                ])
                .header(AUTHORIZATION, header.clone())
                .header(CONTENT_TYPE, "application/octet-stream")
                .body(reqwest::Body::wrap(s.body()?));
            self.step(req, StatusCode::OK)
                .await
                .map_err(|e| versions::step_error(s, e))?;
        }
        Ok(())
    }

    /// Sends one version step; anything but `want` is the step's failure.
    async fn step(
        &self,
        req: reqwest::RequestBuilder,
        want: StatusCode,
    ) -> Result<(), UploadError> {
        let resp = req.send().await.map_err(|e| UploadError::transport(&e))?;
        let status = resp.status();
        let body = resp.bytes().await.map_err(|e| UploadError::transport(&e))?;
        if status == want {
            return Ok(());
        }
        Err(UploadError::http(
            status.as_u16(),
            error_message(status.as_u16(), &body),
        ))
    }

    /// The node's version history, oldest first (`GET nodes/{id}/versions`, newest first
    /// on the wire): each version's label and properties.
    async fn history(&self, id: &str) -> Result<Option<Vec<serde_json::Value>>, String> {
        let req = self
            .client
            .get(format!("{}/nodes/{id}/versions", self.core))
            .query(&[("maxItems", "1000"), ("include", "properties")])
            .header(AUTHORIZATION, self.auth.cache().header().clone());
        let Some(v) = super::readback::read_json(req, error_message).await? else {
            return Ok(None);
        };
        let mut out: Vec<serde_json::Value> = v["list"]["entries"]
            .as_array()
            .map(|a| a.iter().map(|e| e["entry"].clone()).collect())
            .unwrap_or_default();
        out.reverse();
        Ok(Some(out))
    }

    /// A document adopted after a stop between its versions: the steps it lacks are
    /// uploaded (its history says how many it has; they went up in order).
    pub async fn complete_versions(
        &self,
        doc: &Doc<'_>,
        id: &str,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        let Some(steps) = versions::of(doc) else {
            return Ok(());
        };
        let have = self
            .history(id)
            .await
            .map_err(UploadError::protocol)?
            .map_or(0, |h| h.len());
        let header = worker.auth.header().clone();
        self.add_versions(id, &steps, have.max(1), &header).await
    }

    /// Every version of a node, oldest first, read back: size, hash and properties.
    pub async fn fetch_versions(&self, id: &str) -> Result<Option<Vec<super::Fetched>>, String> {
        let Some(history) = self.history(id).await? else {
            return Ok(None);
        };
        let header = self.auth.cache().header().clone();
        let mut out = Vec::with_capacity(history.len());
        for v in history {
            let vid = v["id"].as_str().unwrap_or_default();
            let content = super::readback::read(
                self.client
                    .get(format!("{}/nodes/{id}/versions/{vid}/content", self.core))
                    .header(AUTHORIZATION, header.clone()),
                error_message,
            )
            .await?
            .ok_or_else(|| format!("version {vid}: content not found"))?;
            out.push(super::readback::fetched(vid, &content, &v["properties"]));
        }
        Ok(Some(out))
    }

    /// Reads a node back by id: name, size, content hash, properties.
    pub async fn fetch(&self, id: &str) -> Result<Option<super::Fetched>, String> {
        let header = self.auth.cache().header().clone();
        let get = |url: String| self.client.get(url).header(AUTHORIZATION, header.clone());
        let Some(v) =
            super::readback::read_json(get(format!("{}/nodes/{id}", self.core)), error_message)
                .await?
        else {
            return Ok(None);
        };
        let content = super::readback::read(
            get(format!("{}/nodes/{id}/content", self.core)),
            error_message,
        )
        .await?
        .ok_or("content not found")?;
        Ok(Some(super::readback::fetched(
            v["entry"]["name"].as_str().unwrap_or(""),
            &content,
            &v["entry"]["properties"],
        )))
    }

    /// `DELETE nodes/{id}?permanent=true` of the folder at `path` below the parent.
    pub async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        let header = self.auth.cache().header().clone();
        let find = self
            .client
            .get(format!("{}/nodes/{}", self.core, self.opts.parent))
            .query(&[("relativePath", path)])
            .header(AUTHORIZATION, header.clone());
        let Some(v) = super::readback::read_json(find, error_message).await? else {
            return Ok(false);
        };
        let id = v["entry"]["id"].as_str().ok_or("folder without id")?;
        let delete = self
            .client
            .delete(format!("{}/nodes/{id}", self.core))
            .query(&[("permanent", "true")])
            .header(AUTHORIZATION, header);
        super::readback::read(delete, error_message)
            .await
            .map(|r| r.is_some())
    }

    /// Documents (not subfolders: a corpus tree has both) in the folder at `path` below the
    /// parent (a DB query, not search).
    pub async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        let list = self
            .client
            .get(format!("{}/nodes/{}/children", self.core, self.opts.parent))
            .query(&[
                ("relativePath", path),
                ("maxItems", "1"),
                ("where", "(isFile=true)"),
            ])
            .header(AUTHORIZATION, self.auth.cache().header().clone());
        Ok(super::readback::read_json(list, error_message)
            .await?
            .and_then(|v| {
                v.pointer("/list/pagination/totalItems")
                    .and_then(serde_json::Value::as_u64)
            }))
    }
}

impl Protocol for Alfresco {
    async fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        worker: &mut WorkerState,
    ) -> Result<Uploaded, UploadError> {
        let mut header = worker.auth.header().clone();
        let mut seen = worker.auth.generation;
        let mut relogged = false;
        let steps = versions::of(doc);
        loop {
            let first = steps.as_deref().and_then(<[_]>::first);
            let (status, node, body) = self
                .send_once(doc, folder, &header, &mut worker.lane, first)
                .await?;
            match status {
                StatusCode::CREATED => {
                    let e: Entry<IdOnly> = serde_json::from_slice(&body)
                        .map_err(|e| UploadError::protocol(format!("201 without entry.id: {e}")))?;
                    if e.entry.id.is_empty() {
                        return Err(UploadError::protocol("201 with an empty entry.id"));
                    }
                    if let Some(steps) = &steps {
                        self.add_versions(&e.entry.id, steps, 1, &header).await?;
                    }
                    return Ok(Uploaded {
                        id: e.entry.id,
                        node,
                    });
                }
                StatusCode::UNAUTHORIZED if !relogged && self.opts.auth == AuthMode::Ticket => {
                    relogged = true;
                    self.renew(seen).await?;
                    header = worker.auth.header().clone();
                    seen = worker.auth.generation;
                }
                s if s.is_success() => {
                    return Err(UploadError::protocol(format!(
                        "{} instead of 201 Created",
                        s.as_u16()
                    )));
                }
                s => {
                    return Err(UploadError::http(
                        s.as_u16(),
                        error_message(s.as_u16(), &body),
                    ));
                }
            }
        }
    }

    async fn lookup(&self, doc: &Doc<'_>, folder: &str) -> Result<Option<String>, UploadError> {
        let resp = self
            .client
            .get(format!("{}/nodes/{}", self.core, self.opts.parent))
            .query(&[("relativePath", format!("{folder}/{}", doc.name))])
            .header(AUTHORIZATION, self.auth.cache().header().clone())
            .send()
            .await
            .map_err(|e| UploadError::transport(&e))?;
        let status = resp.status();
        let body = resp.bytes().await.map_err(|e| UploadError::transport(&e))?;
        match status {
            StatusCode::OK => {
                let e: Entry<IdOnly> = serde_json::from_slice(&body)
                    .map_err(|e| UploadError::protocol(format!("lookup: {e}")))?;
                Ok(Some(e.entry.id))
            }
            StatusCode::NOT_FOUND => Ok(None),
            s => Err(UploadError::http(
                s.as_u16(),
                error_message(s.as_u16(), &body),
            )),
        }
    }

    /// Alfresco creates missing folders itself (`relativePath`), so the path is the reference.
    async fn prepare_folder(&self, path: &str) -> anyhow::Result<String> {
        Ok(path.to_string())
    }

    async fn complete(
        &self,
        doc: &Doc<'_>,
        id: &str,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        self.complete_versions(doc, id, worker).await
    }

    fn worker(&self) -> WorkerState {
        WorkerState::new(self.auth.cache())
    }
}

/// POST /tickets; returns the header that carries the ticket (`Basic base64(ticket)`).
async fn login(client: &reqwest::Client, root: &str, opts: &RepoOptions) -> Result<HeaderValue> {
    let url = format!("{root}{AUTH_PATH}/tickets");
    let body = serde_json::json!({ "userId": opts.user, "password": opts.password.expose() });
    let resp = client
        .post(&url)
        .json(&body)
        .send()
        .await
        .map_err(|e| unreachable_err(&opts.url, &e))?;
    let status = resp.status();
    let bytes = resp.bytes().await.unwrap_or_default();
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
