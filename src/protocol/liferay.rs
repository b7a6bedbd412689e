//! Liferay DXP headless-delivery v1.0: multipart `file` (with its real Content-Type: Liferay
//! stores it as sent) + `document` JSON (title, description, keywords, customFields,
//! documentType.contentFields, viewableBy, a per-document externalReferenceCode), success
//! **200** with `id`; folders created through the folder endpoints (no relativePath); Basic
//! or OAuth2 client-credentials auth (token renewed before `expires_in` runs out, and once on
//! 403, because Liferay answers an expired token as Guest: 403 on writes, never 401).
//! Contract: `tests/specs/liferay/headless-delivery-documents.yaml` (in-repo copy, see
//! `tests/specs/README.md`); the traps are the ones named above. The `document` JSON itself
//! is written by `json`; a corpus document's versions are in `versions`.

pub mod json;
mod versions;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::{AuthCache, basic_header};
use super::facts::{Limit, Metadata, NameRules, Repository, Requests};
use super::multipart::MultipartHead;
use super::{Api, Connection, Content, FolderPath, Folders, RepoOptions, Version, WorkerState};
use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::protocol_kind::AuthMode;
use json::Fields;

/// What Liferay DXP is ([`super::facts`]). Sources: `DLValidatorImpl.isValidName`
/// (document-library-service) refuses a name that is empty, contains an entry of
/// `dl.char.blacklist`, ends with one of `dl.char.last.blacklist`, or whose name without
/// extension is one of `dl.name.blacklist` (case-insensitive); `portal-impl/src/portal.properties`
/// sets them to `\\ // : * ? " < > | ../ /..`, `\u0020 .` and `con prn aux nul com1..com9
/// lpt1..lpt9`. `validateFileSize`: the global limit is the smallest non-zero of
/// `UploadServletRequestConfiguration.maxSize` (default 104857600, 100 MiB) and
/// `DLSizeLimitConfiguration.fileMaxSize` (default 0: none). The title and the file name are
/// each unique in a folder (`DuplicateFileEntryException`), compared by the database
/// (case-insensitive under MySQL's and SQL Server's default collations, as the embedded
/// target does); `DLFileEntry.title` and `fileName` are 255-character columns. Only the
/// profile's properties are sent. A version is one upload of its bytes; a folder is one
/// request of the folder endpoints.
pub const FACTS: Repository = Repository {
    names: NameRules {
        folds_case: true,
        clash_says: "titles or file names equal ignoring case in one folder (409 on the second)",
        clash_source: "liferay-portal DLFileEntryLocalServiceImpl (DuplicateFileEntryException: title, file name)",
        // `dl.char.blacklist`; the single `/` cannot reach Liferay as part of a file name
        // either (the headless API refuses it), so it is refused too.
        refused: &[
            "\\", "//", ":", "*", "?", "\"", "<", ">", "|", "../", "/..", "/",
        ],
        refused_says: "a name with \\ // : * ? \" < > | ../ /.. (400)",
        refuses_trailing_dot_or_space: true,
        reserved_stems: &[
            "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7",
            "com8", "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
        ],
        reserved_says: "a name that is CON, PRN, AUX, NUL, COM1-9 or LPT1-9 before its extension",
        max_chars: Some(Limit {
            value: 255,
            says: "a name over 255 characters",
            source: "liferay-portal DLFileEntry title and fileName: 255 characters",
        }),
        source: "liferay-portal DLValidatorImpl.isValidName; portal.properties dl.char.blacklist, dl.char.last.blacklist, dl.name.blacklist",
    },
    max_size: Some(Limit {
        value: 104_857_600,
        says: "a file over the default upload limit of 100 MiB",
        source: "liferay-portal DLValidatorImpl.validateFileSize; UploadServletRequestConfiguration maxSize=104857600",
    }),
    metadata: Metadata::Profile,
    requests: Requests {
        per_version: 1,
        per_property_update: 0,
        per_folder: 1,
    },
};

pub const API: &str = "/o/headless-delivery/v1.0";
pub const TOKEN_PATH: &str = "/o/oauth2/token";

pub struct Liferay {
    conn: Connection,
    api: String,
    /// Path part of `api`, for the upload fast path.
    api_path: String,
    /// OAuth2: renew when the clock (ms since `epoch`) passes this.
    renew_at_ms: AtomicU64,
    epoch: Instant,
    /// Where the profile's properties go in the `document` JSON.
    fields: Fields,
    /// Serializes renewals so one expiry costs one token request.
    renew_lock: tokio::sync::Mutex<()>,
    /// The run's folders, made one by one below the site.
    folders: Folders,
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
            api_path,
            api,
            renew_at_ms: AtomicU64::new(renew_at_ms),
            epoch,
            renew_lock: tokio::sync::Mutex::new(()),
            folders: Folders::default(),
            fields: Fields::new(&opts.profile),
            conn: Connection::new(client, opts, header),
        };
        l.check_site().await?;
        Ok(l)
    }

    /// GET the site's root folders: a 404 names --parent, a 401/403 the credentials.
    async fn check_site(&self) -> Result<()> {
        let url = format!(
            "{}/sites/{}/document-folders?pageSize=1",
            self.api, self.conn.opts.parent
        );
        let (status, body) = self.conn.call(self.conn.client.get(&url)).await?;
        match status {
            StatusCode::OK => Ok(()),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => bail!(
                "credentials rejected for `{}` at {} ({}): check --user and the password (INGESTBENCH_PASSWORD or --password-file)",
                self.conn.opts.user,
                self.conn.opts.url,
                status.as_u16()
            ),
            StatusCode::NOT_FOUND => bail!(
                "--parent {}: no such Liferay site at {} ({}); give the site id or key",
                self.conn.opts.parent,
                self.conn.opts.url,
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
    async fn renew_token(&self, seen: u64) -> Result<(), UploadError> {
        if self.conn.opts.auth != AuthMode::Oauth2 {
            return Ok(());
        }
        let _guard = self.renew_lock.lock().await;
        if self.conn.auth.generation() != seen {
            return Ok(());
        }
        let root = self.conn.opts.url.as_str().trim_end_matches('/');
        let (h, ttl) = token(&self.conn.client, root, &self.conn.opts)
            .await
            .map_err(|e| UploadError::http(401, format!("token renewal failed: {e:#}")))?;
        self.renew_at_ms
            .store(self.now_ms().saturating_add(ttl), Ordering::Release);
        self.conn.auth.replace_if_current(seen, h);
        Ok(())
    }

    /// The folders in `parent` (None: the site's root folders).
    fn folders_url(&self, parent: Option<&str>) -> String {
        match parent {
            None => format!(
                "{}/sites/{}/document-folders",
                self.api, self.conn.opts.parent
            ),
            Some(p) => format!("{}/document-folders/{p}/document-folders", self.api),
        }
    }

    async fn make_folder(&self, parent: Option<&str>, name: &str) -> Result<String> {
        let url = self.folders_url(parent);
        for attempt in 0..2 {
            let folder = json!({"name": name, "viewableBy": "Anyone"});
            let (status, body) = self
                .conn
                .call(self.conn.client.post(&url).json(&folder))
                .await?;
            match status {
                StatusCode::OK | StatusCode::CREATED => {
                    let f: WithId = serde_json::from_slice(&body)
                        .with_context(|| format!("{url}: folder created without an id"))?;
                    return Ok(f.id.to_string());
                }
                // It exists already (an earlier run made it): find it.
                StatusCode::CONFLICT => return self.find_folder(parent, name).await,
                StatusCode::FORBIDDEN
                    if attempt == 0 && self.conn.opts.auth == AuthMode::Oauth2 =>
                {
                    self.renew_token(self.conn.auth.generation())
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

    async fn find_folder(&self, parent: Option<&str>, name: &str) -> Result<String> {
        let base = self.folders_url(parent);
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
            let url = format!("{base}?page={page}&pageSize=100");
            let (_, body) = self.conn.call(self.conn.client.get(&url)).await?;
            let p: Page = serde_json::from_slice(&body)
                .with_context(|| format!("{url}: not a page of folders"))?;
            if let Some(f) = p.items.iter().find(|f| f.name == name) {
                return Ok(f.id.to_string());
            }
            if i64::from(page) >= p.last_page {
                break;
            }
        }
        bail!("folder {name} exists (409) but was not found in the listing at {base}")
    }
}

/// The title a document was uploaded with (see [`json::unique_title`]), for `verify`.
pub fn unique_title(title: &str, file_name: &str) -> String {
    json::unique_title(title, file_name).concat()
}

/// POST /o/oauth2/token (client credentials); returns the bearer header and when to renew
/// (ms from now: 80 % of `expires_in`).
async fn token(
    client: &reqwest::Client,
    root: &str,
    opts: &RepoOptions,
) -> Result<(HeaderValue, u64)> {
    let url = format!("{root}{TOKEN_PATH}");
    let form = super::multipart::form(&[
        ("grant_type", "client_credentials"),
        ("client_id", &opts.user),
        ("client_secret", opts.password.expose()),
    ]);
    let req = client
        .post(&url)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form);
    let (status, body) = super::send_setup(req, &opts.url).await?;
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

impl Liferay {
    /// The id of the folder at `path` below the site, by read-only lookups.
    async fn folder_id(&self, path: &str) -> Option<String> {
        let mut parent: Option<String> = None;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            parent = Some(self.find_folder(parent.as_deref(), seg).await.ok()?);
        }
        parent
    }

    /// The folder id an upload's `folder` reference is.
    fn folder_id_of(folder: &str) -> Result<i64, UploadError> {
        folder
            .parse()
            .map_err(|_| UploadError::protocol(format!("bad folder id {folder}")))
    }
}

impl Api for Liferay {
    const CREATED: (StatusCode, &str) = (StatusCode::OK, "200");

    const ERROR_MESSAGE: fn(u16, &[u8]) -> String = error_message;

    fn conn(&self) -> &Connection {
        &self.conn
    }

    /// OAuth2: a new token when the old one nears its end.
    async fn before_upload(&self, auth: &AuthCache) -> Result<(), UploadError> {
        if self.conn.opts.auth == AuthMode::Oauth2
            && self.now_ms() >= self.renew_at_ms.load(Ordering::Acquire)
        {
            self.renew(auth.generation).await?;
        }
        Ok(())
    }
    /// The `document` JSON part (written into `scratch[0]`), then the `file` part's header.
    fn upload_head(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        first: Option<&super::versions::Step<'_>>,
        scratch: &mut [Vec<u8>; 3],
    ) -> Result<Bytes, UploadError> {
        let folder_id = Self::folder_id_of(folder)?;
        let shadow = match first {
            Some(first) => first.shadow,
            None => doc.file().and_then(|f| f.shadow.as_ref()),
        };
        self.fields
            .write_with(&self.conn.opts.profile, doc, folder_id, shadow, scratch);
        let mut head = MultipartHead::new();
        head.typed("document", "application/json", &scratch[0]);
        Ok(head.file("file", &doc.name, doc.mime()))
    }
    fn upload_path<'a>(&'a self, folder: &str, path: &'a mut FolderPath) -> &'a str {
        path.of(folder, || {
            format!("{}/document-folders/{folder}/documents", self.api_path)
        })
    }
    fn upload_url(&self, folder: &str) -> String {
        format!("{}/document-folders/{folder}/documents", self.api)
    }
    fn created_id(body: &[u8]) -> Result<String, UploadError> {
        let d: WithId = serde_json::from_slice(body)
            .map_err(|e| UploadError::protocol(format!("200 without a document id: {e}")))?;
        Ok(d.id.to_string())
    }
    /// An expired token makes Liferay treat us as Guest: 403, never 401.
    fn expired(&self) -> Option<StatusCode> {
        (self.conn.opts.auth == AuthMode::Oauth2).then_some(StatusCode::FORBIDDEN)
    }
    async fn renew(&self, seen: u64) -> Result<(), UploadError> {
        self.renew_token(seen).await
    }
    /// Liferay answers an external reference code that is taken with 400
    /// (DuplicateFileEntryExternalReferenceCodeException): for this client that is the
    /// conflict "the document is already there" (409), which a retry or a resume resolves by
    /// looking it up.
    fn failure_status(status: StatusCode, message: &str) -> u16 {
        if status == StatusCode::BAD_REQUEST
            && message
                .to_ascii_lowercase()
                .contains("duplicate external reference code")
        {
            409
        } else {
            status.as_u16()
        }
    }

    async fn add_versions(
        &self,
        id: &str,
        doc: &Doc<'_>,
        steps: &[super::versions::Step<'_>],
        from: usize,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        self.put_versions(id, doc, steps, from, worker).await
    }
    async fn stored_versions(
        &self,
        id: &str,
        _worker: &mut WorkerState,
    ) -> Result<(String, usize), UploadError> {
        super::upload::versioned_in_place(id, self.history(id).await)
    }

    /// By the document's external reference code, site-wide.
    fn lookup_request(
        &self,
        doc: &Doc<'_>,
        _folder: &str,
    ) -> Result<reqwest::RequestBuilder, UploadError> {
        Ok(self.conn.client.get(format!(
            "{}/sites/{}/documents/by-external-reference-code/{}",
            self.api,
            self.conn.opts.parent,
            doc.marker_str()
        )))
    }
    fn found_id(body: &[u8]) -> Result<Option<String>, UploadError> {
        let d: WithId = serde_json::from_slice(body)
            .map_err(|e| UploadError::protocol(format!("lookup: {e}")))?;
        Ok(Some(d.id.to_string()))
    }

    fn folders(&self) -> Option<&Folders> {
        Some(&self.folders)
    }
    async fn create_folder(&self, parent: Option<&str>, _path: &str, name: &str) -> Result<String> {
        self.make_folder(parent, name).await
    }

    /// With its content inline (`nestedFields=contentValue`).
    fn read_request(&self, id: &str) -> reqwest::RequestBuilder {
        self.conn.client.get(format!(
            "{}/documents/{id}?nestedFields=contentValue",
            self.api
        ))
    }
    fn content(&self, _id: &str, meta: &Value) -> Result<Content, String> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(meta["contentValue"].as_str().unwrap_or(""))
            .map(|b| Content::Inline(b.into()))
            .map_err(|e| e.to_string())
    }
    /// The metadata keyed like the profile (`title`, `description`, `keywords`,
    /// `customField:x`, `contentField:x`).
    fn name_and_props(d: &Value) -> (&str, Value) {
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
        (d["fileName"].as_str().unwrap_or(""), Value::Object(props))
    }
    async fn versions(&self, id: &str) -> Result<Option<Vec<Version>>, String> {
        self.version_list(id).await
    }

    /// Documents in the folder at `path` (read-only lookups), None when it does not exist.
    async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        let Some(id) = self.folder_id(path).await else {
            return Ok(None);
        };
        let url = format!("{}/document-folders/{id}/documents?pageSize=1", self.api);
        let list = self.conn.authed(self.conn.client.get(url));
        Ok(super::readback::read_json(list, error_message)
            .await?
            .and_then(|v| v["totalCount"].as_u64()))
    }

    /// `DELETE /document-folders/{id}` (recursive, permanent) of the folder at `path`.
    async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        let Some(id) = self.folder_id(path).await else {
            return Ok(false);
        };
        let url = format!("{}/document-folders/{id}", self.api);
        let delete = self.conn.authed(self.conn.client.delete(url));
        super::readback::read(delete, error_message)
            .await
            .map(|r| r.is_some())
    }

    /// Readers: `GET /documents/{id}`, the metadata without the content.
    fn meta_request(&self, id: &str) -> reqwest::RequestBuilder {
        self.conn.client.get(format!("{}/documents/{id}", self.api))
    }
    /// Readers: `GET /document-folders/{id}/documents` of a run folder (its id), one page of
    /// 100; the site's root folder (no id) through `GET /sites/{siteId}/documents`.
    fn list_request(&self, folder: &str) -> Option<reqwest::RequestBuilder> {
        let url = match folder {
            "" | "0" => format!("{}/sites/{}/documents", self.api, self.conn.opts.parent),
            id => format!("{}/document-folders/{id}/documents", self.api),
        };
        Some(
            self.conn
                .client
                .get(url)
                .query(&[("page", "1"), ("pageSize", "100")]),
        )
    }
    /// Readers: the site's documents search, `GET /sites/{siteId}/documents?flatten=true&
    /// search=term` (every folder of the site, not only its root), one page of 25.
    fn query_request(&self, term: &str) -> Option<reqwest::RequestBuilder> {
        Some(
            self.conn
                .client
                .get(format!(
                    "{}/sites/{}/documents",
                    self.api, self.conn.opts.parent
                ))
                .query(&reads_query(term)),
        )
    }
    /// `items[].id` of a `PageDocument`.
    fn listed_ids(body: &[u8]) -> Result<Vec<String>, UploadError> {
        listed_ids(body)
    }
}

/// The readers' query parameters: a search of the whole site for `term`, one page of 25.
fn reads_query(term: &str) -> [(&'static str, &str); 4] {
    [
        ("flatten", "true"),
        ("search", term),
        ("page", "1"),
        ("pageSize", "25"),
    ]
}

/// The document ids of a page of documents (`items[].id`, integers).
fn listed_ids(body: &[u8]) -> Result<Vec<String>, UploadError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| UploadError::protocol(format!("a page of documents that is not JSON: {e}")))?;
    let items = v
        .get("items")
        .and_then(Value::as_array)
        .ok_or_else(|| UploadError::protocol("a page of documents without items"))?;
    Ok(items
        .iter()
        .filter_map(|d| d.get("id").and_then(Value::as_i64))
        .map(|id| id.to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_bodies() {
        assert_eq!(
            error_message(
                409,
                br#"{"status":"CONFLICT","title":"A file entry already exists with title x"}"#
            ),
            "409 A file entry already exists with title x"
        );
    }

    #[test]
    fn readers_search_the_whole_site_and_read_ids_of_a_page() {
        let q =
            reqwest::Url::parse_with_params("http://h/", reads_query("doc-00000012 x")).unwrap();
        assert_eq!(
            q.query(),
            Some("flatten=true&search=doc-00000012+x&page=1&pageSize=25")
        );
        assert_eq!(
            listed_ids(br#"{"items":[{"id":41,"title":"a"},{"id":42}],"page":1,"pageSize":25,"lastPage":1,"totalCount":2}"#)
                .unwrap(),
            vec!["41", "42"]
        );
        assert_eq!(
            listed_ids(br#"{"items":[],"totalCount":0}"#).unwrap(),
            Vec::<String>::new()
        );
        assert!(listed_ids(br#"{"status":"NOT_FOUND"}"#).is_err());
    }
}
