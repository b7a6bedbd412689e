//! Liferay DXP headless-delivery v1.0: multipart `file` (with its real Content-Type: Liferay
//! stores it as sent) + `document` JSON (title, description, keywords, customFields,
//! documentType.contentFields, viewableBy, a per-document externalReferenceCode), success
//! **200** with `id`; folders created through the folder endpoints (no relativePath); Basic
//! or OAuth2 client-credentials auth (token renewed before `expires_in` runs out, and once on
//! 403, because Liferay answers an expired token as Guest: 403 on writes, never 401).
//! Contract: `tests/specs/liferay/headless-delivery-documents.yaml` (in-repo copy, see
//! `tests/specs/README.md`); the traps are the ones named above. The `document` JSON itself
//! is written by `liferay_json`. A corpus document's versions: created from its first, then
//! each next one as `PUT /documents/{id}` (a new file version); read back through the portal's
//! JSON web service `dlfileversion/get-file-versions` and the document servlet `?version=`,
//! as headless-delivery lists no versions.

mod versions_io;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::{SharedAuth, basic_header};
use super::liferay_json::Fields;
use super::multipart::{MultipartHead, first_body, multipart_content_type};
use super::readback::unreachable_err;
use super::versions;
use super::{AuthMode, Protocol, RepoOptions, Uploaded, WorkerState};
use crate::fixtures::Doc;
use crate::metrics::UploadError;

pub const API: &str = "/o/headless-delivery/v1.0";
pub const TOKEN_PATH: &str = "/o/oauth2/token";

pub struct Liferay {
    client: reqwest::Client,
    opts: RepoOptions,
    api: String,
    /// Path part of `api`, for the upload fast path.
    api_path: String,
    auth: Arc<SharedAuth>,
    /// OAuth2: renew when the clock (ms since `epoch`) passes this.
    renew_at_ms: AtomicU64,
    epoch: Instant,
    /// Where the profile's properties go in the `document` JSON.
    fields: Fields,
    /// Serializes renewals so one expiry costs one token request.
    renew_lock: tokio::sync::Mutex<()>,
    /// Folder path → id, filled before the start barrier only.
    folders: std::sync::Mutex<HashMap<String, i64>>,
}

#[derive(Deserialize)]
struct Token {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

#[derive(Deserialize)]
struct WithId {
    id: i64,
}

#[derive(Deserialize)]
struct Problem {
    status: Option<Value>,
    title: Option<String>,
}

/// `"<status> <title>"` from a Liferay Problem body.
pub fn error_message(status: u16, body: &[u8]) -> String {
    match serde_json::from_slice::<Problem>(body) {
        Ok(p) if p.title.is_some() => format!("{status} {}", p.title.unwrap_or_default()),
        Ok(Problem {
            status: Some(s), ..
        }) => format!("{status} {s}"),
        _ => {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
            format!("{status} {}", text.trim())
        }
    }
}

impl Liferay {
    pub async fn connect(client: reqwest::Client, opts: RepoOptions) -> Result<Liferay> {
        let root = opts.url.as_str().trim_end_matches('/').to_string();
        let api = format!("{root}{API}");
        let epoch = Instant::now();
        let (header, renew_at_ms) = match opts.auth {
            AuthMode::Oauth2 => {
                let (h, ttl) = token(&client, &root, &opts).await?;
                (h, ttl)
            }
            _ => (basic_header(&opts.user, opts.password.expose()), u64::MAX),
        };
        let api_path = reqwest::Url::parse(&api)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_else(|_| API.to_string());
        let l = Liferay {
            client,
            api_path,
            api,
            auth: Arc::new(SharedAuth::new(header)),
            renew_at_ms: AtomicU64::new(renew_at_ms),
            epoch,
            renew_lock: tokio::sync::Mutex::new(()),
            folders: std::sync::Mutex::new(HashMap::new()),
            fields: Fields::new(&opts.profile),
            opts,
        };
        l.check_site().await?;
        Ok(l)
    }

    /// GET the site's root folders: a 404 names --parent, a 401/403 the credentials.
    async fn check_site(&self) -> Result<()> {
        let url = format!(
            "{}/sites/{}/document-folders?pageSize=1",
            self.api, self.opts.parent
        );
        let header = self.auth.cache().header().clone();
        let resp = self
            .client
            .get(&url)
            .header(AUTHORIZATION, header)
            .send()
            .await
            .map_err(|e| unreachable_err(&self.opts.url, &e))?;
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
        match status {
            StatusCode::OK => Ok(()),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => bail!(
                "credentials rejected for `{}` at {} ({}): check --user and the password (INGESTBENCH_PASSWORD or --password-file)",
                self.opts.user,
                self.opts.url,
                status.as_u16()
            ),
            StatusCode::NOT_FOUND => bail!(
                "--parent {}: no such Liferay site at {} ({}); give the site id or key",
                self.opts.parent,
                self.opts.url,
                error_message(404, &body)
            ),
            s => bail!(
                "{url}: unexpected answer {}; is --url the server root of a Liferay DXP?",
                error_message(s.as_u16(), &body)
            ),
        }
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// OAuth2: a new token unless another worker just got one (generation moved on).
    async fn renew(&self, seen: u64) -> Result<(), UploadError> {
        if self.opts.auth != AuthMode::Oauth2 {
            return Ok(());
        }
        let _guard = self.renew_lock.lock().await;
        if self.auth.generation() != seen {
            return Ok(());
        }
        let root = self.opts.url.as_str().trim_end_matches('/');
        let (h, ttl) = token(&self.client, root, &self.opts)
            .await
            .map_err(|e| UploadError::http(401, format!("token renewal failed: {e:#}")))?;
        self.renew_at_ms
            .store(self.now_ms().saturating_add(ttl), Ordering::Release);
        self.auth.replace_if_current(seen, h);
        Ok(())
    }

    async fn create_folder(&self, parent: Option<i64>, name: &str) -> Result<i64> {
        let url = match parent {
            None => format!("{}/sites/{}/document-folders", self.api, self.opts.parent),
            Some(p) => format!("{}/document-folders/{p}/document-folders", self.api),
        };
        for attempt in 0..2 {
            let header = self.auth.cache().header().clone();
            let resp = self
                .client
                .post(&url)
                .header(AUTHORIZATION, header)
                .json(&json!({"name": name, "viewableBy": "Anyone"}))
                .send()
                .await
                .map_err(|e| unreachable_err(&self.opts.url, &e))?;
            let status = resp.status();
            let body = resp.bytes().await.unwrap_or_default();
            match status {
                StatusCode::OK | StatusCode::CREATED => {
                    let f: WithId = serde_json::from_slice(&body)
                        .with_context(|| format!("{url}: folder created without an id"))?;
                    return Ok(f.id);
                }
                // It exists already (an earlier run made it): find it.
                StatusCode::CONFLICT => return self.find_folder(parent, name).await,
                StatusCode::FORBIDDEN if attempt == 0 && self.opts.auth == AuthMode::Oauth2 => {
                    self.renew(self.auth.generation())
                        .await
                        .map_err(|e| anyhow::anyhow!(e.message))?;
                }
                s => bail!(
                    "creating folder {name} at {url}: {}",
                    error_message(s.as_u16(), &body)
                ),
            }
        }
        bail!("creating folder {name} at {url}: refused twice")
    }

    async fn find_folder(&self, parent: Option<i64>, name: &str) -> Result<i64> {
        let base = match parent {
            None => format!("{}/sites/{}/document-folders", self.api, self.opts.parent),
            Some(p) => format!("{}/document-folders/{p}/document-folders", self.api),
        };
        #[derive(Deserialize)]
        struct Page {
            items: Vec<Folder>,
            #[serde(rename = "lastPage", default)]
            last_page: i64,
        }
        #[derive(Deserialize)]
        struct Folder {
            id: i64,
            name: String,
        }
        for page in 1..=10_000 {
            let header = self.auth.cache().header().clone();
            let url = format!("{base}?page={page}&pageSize=100");
            let resp = self
                .client
                .get(&url)
                .header(AUTHORIZATION, header)
                .send()
                .await
                .map_err(|e| unreachable_err(&self.opts.url, &e))?;
            let p: Page = resp
                .json()
                .await
                .with_context(|| format!("{url}: not a page of folders"))?;
            if let Some(f) = p.items.iter().find(|f| f.name == name) {
                return Ok(f.id);
            }
            if i64::from(page) >= p.last_page {
                break;
            }
        }
        bail!("folder {name} exists (409) but was not found in the listing at {base}")
    }
}

/// The title a document was uploaded with (see [`super::liferay_json::unique_title`]), for
/// `verify`.
pub fn unique_title(title: &str, file_name: &str) -> String {
    super::liferay_json::unique_title(title, file_name).concat()
}

/// POST /o/oauth2/token (client credentials); returns the bearer header and when to renew
/// (ms from now: 80 % of `expires_in`).
async fn token(
    client: &reqwest::Client,
    root: &str,
    opts: &RepoOptions,
) -> Result<(HeaderValue, u64)> {
    let url = format!("{root}{TOKEN_PATH}");
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={}",
        form_encode(&opts.user),
        form_encode(opts.password.expose())
    );
    let resp = client
        .post(&url)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .map_err(|e| unreachable_err(&opts.url, &e))?;
    let status = resp.status();
    let body = resp.bytes().await.unwrap_or_default();
    if !status.is_success() {
        bail!(
            "OAuth2 token request for client `{}` at {url} refused ({}): check --user (the client id) and the client secret",
            opts.user,
            status.as_u16()
        );
    }
    let t: Token = serde_json::from_slice(&body)
        .with_context(|| format!("{url}: not an OAuth2 token response"))?;
    let mut h = HeaderValue::from_str(&format!("Bearer {}", t.access_token))
        .context("token is not a valid header value")?;
    h.set_sensitive(true);
    let ttl_ms = t.expires_in.unwrap_or(600).saturating_mul(800);
    Ok((h, ttl_ms))
}

fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Liferay {
    /// Reads a document back by id: name, size, content hash and metadata keyed like the
    /// profile (`title`, `description`, `keywords`, `customField:x`, `contentField:x`).
    pub async fn fetch(&self, id: &str) -> Result<Option<super::Fetched>, String> {
        use base64::Engine;
        let get = self
            .client
            .get(format!(
                "{}/documents/{id}?nestedFields=contentValue",
                self.api
            ))
            .header(AUTHORIZATION, self.auth.cache().header().clone());
        let Some(d) = super::readback::read_json(get, error_message).await? else {
            return Ok(None);
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(d["contentValue"].as_str().unwrap_or(""))
            .map_err(|e| e.to_string())?;
        // Metadata under the profile's names.
        let mut props = serde_json::Map::new();
        for k in ["title", "description", "keywords"] {
            if let Some(v) = d.get(k) {
                props.insert(k.into(), v.clone());
            }
        }
        for f in d["customFields"].as_array().into_iter().flatten() {
            props.insert(
                format!("customField:{}", f["name"].as_str().unwrap_or("")),
                f["customValue"]["data"].clone(),
            );
        }
        for f in d
            .pointer("/documentType/contentFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            // Content field values were sent joined with commas.
            let data = super::readback::json_strings(&f["contentFieldValue"]["data"]).join(",");
            props.insert(
                format!("contentField:{}", f["name"].as_str().unwrap_or("")),
                json!(data.split(',').collect::<Vec<_>>()),
            );
        }
        Ok(Some(super::readback::fetched(
            d["fileName"].as_str().unwrap_or(""),
            &bytes,
            &Value::Object(props),
        )))
    }

    /// `DELETE /document-folders/{id}` (recursive, permanent) of the folder at `path`.
    pub async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        let Some(id) = self.folder_id(path).await else {
            return Ok(false);
        };
        let delete = self
            .client
            .delete(format!("{}/document-folders/{id}", self.api))
            .header(AUTHORIZATION, self.auth.cache().header().clone());
        super::readback::read(delete, error_message)
            .await
            .map(|r| r.is_some())
    }

    /// Documents in the folder at `path` (read-only lookups), None when it does not exist.
    pub async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        let Some(id) = self.folder_id(path).await else {
            return Ok(None);
        };
        let list = self
            .client
            .get(format!(
                "{}/document-folders/{id}/documents?pageSize=1",
                self.api
            ))
            .header(AUTHORIZATION, self.auth.cache().header().clone());
        Ok(super::readback::read_json(list, error_message)
            .await?
            .and_then(|v| v["totalCount"].as_u64()))
    }

    /// The id of the folder at `path` below the site, by read-only lookups.
    async fn folder_id(&self, path: &str) -> Option<i64> {
        let mut parent: Option<i64> = None;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            parent = Some(self.find_folder(parent, seg).await.ok()?);
        }
        parent
    }
}

impl Protocol for Liferay {
    async fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        worker: &mut WorkerState,
    ) -> Result<Uploaded, UploadError> {
        let folder_id: i64 = folder
            .parse()
            .map_err(|_| UploadError::protocol(format!("bad folder id {folder}")))?;
        if self.opts.auth == AuthMode::Oauth2
            && self.now_ms() >= self.renew_at_ms.load(Ordering::Acquire)
        {
            self.renew(worker.auth.generation).await?;
        }
        let path = worker.folder_path.of(folder, || {
            format!("{}/document-folders/{folder_id}/documents", self.api_path)
        });
        let steps = versions::of(doc);
        let shadow = match steps.as_deref() {
            Some([first, ..]) => first.shadow,
            _ => doc.file().and_then(|f| f.shadow.as_ref()),
        };
        self.fields.write_with(
            &self.opts.profile,
            doc,
            folder_id,
            shadow,
            &mut worker.scratch,
        );
        let mut retried = false;
        loop {
            let header = worker.auth.header().clone();
            let seen = worker.auth.generation;
            let mut head = MultipartHead::new();
            head.typed("document", "application/json", &worker.scratch[0]);
            let head = head.file("file", &doc.name, doc.mime());
            let body = first_body(doc, head, steps.as_deref().and_then(<[_]>::first))?;
            let (status, node, bytes) = self
                .opts
                .route
                .send_upload(
                    &self.client,
                    &mut worker.lane,
                    || format!("{}/document-folders/{folder_id}/documents", self.api),
                    path,
                    &[
                        (AUTHORIZATION, &header),
                        (CONTENT_TYPE, &multipart_content_type()),
                    ],
                    body,
                )
                .await?;
            match status {
                StatusCode::OK => {
                    let d: WithId = serde_json::from_slice(&bytes).map_err(|e| {
                        UploadError::protocol(format!("200 without a document id: {e}"))
                    })?;
                    if let Some(steps) = &steps {
                        self.add_versions(&d.id.to_string(), doc, steps, 1, worker)
                            .await?;
                    }
                    return Ok(Uploaded {
                        id: d.id.to_string(),
                        node,
                    });
                }
                // An expired token makes Liferay treat us as Guest: 403, never 401.
                StatusCode::FORBIDDEN if !retried && self.opts.auth == AuthMode::Oauth2 => {
                    retried = true;
                    self.renew(seen).await?;
                }
                s if s.is_success() => {
                    return Err(UploadError::protocol(format!(
                        "{} instead of 200",
                        s.as_u16()
                    )));
                }
                s => {
                    let message = error_message(s.as_u16(), &bytes);
                    // Liferay answers an external reference code that is taken with 400
                    // (DuplicateFileEntryExternalReferenceCodeException): for this client
                    // that is the conflict "the document is already there" (409), which a
                    // retry or a resume resolves by looking it up.
                    let status = if s == StatusCode::BAD_REQUEST
                        && message
                            .to_ascii_lowercase()
                            .contains("duplicate external reference code")
                    {
                        409
                    } else {
                        s.as_u16()
                    };
                    return Err(UploadError::http(status, message));
                }
            }
        }
    }

    async fn lookup(&self, doc: &Doc<'_>, _folder: &str) -> Result<Option<String>, UploadError> {
        let url = format!(
            "{}/sites/{}/documents/by-external-reference-code/{}",
            self.api,
            self.opts.parent,
            doc.marker_str()
        );
        let resp = self
            .client
            .get(&url)
            .header(AUTHORIZATION, self.auth.cache().header().clone())
            .send()
            .await
            .map_err(|e| UploadError::transport(&e))?;
        let status = resp.status();
        let body = resp.bytes().await.map_err(|e| UploadError::transport(&e))?;
        match status {
            StatusCode::OK => {
                let d: WithId = serde_json::from_slice(&body)
                    .map_err(|e| UploadError::protocol(format!("lookup: {e}")))?;
                Ok(Some(d.id.to_string()))
            }
            StatusCode::NOT_FOUND => Ok(None),
            s => Err(UploadError::http(
                s.as_u16(),
                error_message(s.as_u16(), &body),
            )),
        }
    }

    /// Creates the folder chain below the site (each level once) and returns the last id.
    async fn prepare_folder(&self, path: &str) -> Result<String> {
        let mut parent: Option<i64> = None;
        let mut sofar = String::new();
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            if !sofar.is_empty() {
                sofar.push('/');
            }
            sofar.push_str(seg);
            let known = self.folders.lock().expect("folders").get(&sofar).copied();
            let id = match known {
                Some(id) => id,
                None => {
                    let id = self.create_folder(parent, seg).await?;
                    self.folders
                        .lock()
                        .expect("folders")
                        .insert(sofar.clone(), id);
                    id
                }
            };
            parent = Some(id);
        }
        parent.map(|id| id.to_string()).context("empty folder path")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_bodies_and_form_encoding() {
        assert_eq!(
            error_message(
                409,
                br#"{"status":"CONFLICT","title":"A file entry already exists with title x"}"#
            ),
            "409 A file entry already exists with title x"
        );
        assert_eq!(form_encode("a b&c=d"), "a%20b%26c%3Dd");
    }
}
