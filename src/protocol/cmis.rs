//! CMIS 1.1 browser binding (as implemented by Apache Chemistry OpenCMIS, which Alfresco
//! embeds): repository discovery from the service URL (`rootFolderUrl`), folders per run via
//! `cmisaction=createFolder`, documents via `cmisaction=createDocument` with indexed
//! `propertyId[i]` / `propertyValue[i]` controls and `succinct=true`; success is **201** with
//! `succinctProperties["cmis:objectId"]`; errors come from the `exception` field. A corpus
//! document's versions are checked out and in one by one after its first (`add_versions`). The
//! contract is OASIS CMIS 1.1 §5 (browser binding), checked against real OpenCMIS in tests.

mod calls;

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

use super::auth::{SharedAuth, basic_header};
use super::multipart::{MultipartHead, first_body, multipart_content_type};
use super::readback::unreachable_err;
use super::versions;
use super::{Protocol, RepoOptions, Uploaded, WorkerState};
use crate::fixtures::Doc;
use crate::metrics::UploadError;

pub struct Cmis {
    client: reqwest::Client,
    opts: RepoOptions,
    root_folder_url: String,
    /// Path part of `root_folder_url`, for the upload fast path.
    root_path: String,
    /// Object id of the folder runs go below (`--parent`, a path; `/` = the root).
    parent_id: String,
    auth: Arc<SharedAuth>,
    /// Folder path → object id, filled before the start barrier only.
    folders: std::sync::Mutex<HashMap<String, String>>,
    /// The multipart field names of the profile's properties, in its order (made once, so
    /// an upload formats none).
    fields: Vec<PropertyFields>,
}

/// The browser binding's field names for property `k` of the profile: controls 0 and 1 are
/// the type and the name, so the property is control `k + 2`.
struct PropertyFields {
    id: String,
    /// `propertyValue[i]` for a single-valued property.
    value: String,
    /// `propertyValue[i][j]` for the values of a multi-valued one (at most three per document).
    values: [String; 3],
}

impl PropertyFields {
    fn of(profile: &crate::fixtures::Profile) -> Vec<PropertyFields> {
        (2..)
            .zip(&profile.properties)
            .map(|(i, _)| PropertyFields {
                id: format!("propertyId[{i}]"),
                value: format!("propertyValue[{i}]"),
                values: [0, 1, 2].map(|j| format!("propertyValue[{i}][{j}]")),
            })
            .collect()
    }
}

/// `"<status> <exception>: <message>"` from a browser-binding error body.
pub fn error_message(status: u16, body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.get("exception").is_some() => format!(
            "{status} {}: {}",
            v["exception"].as_str().unwrap_or("?"),
            v.get("message").and_then(Value::as_str).unwrap_or("")
        ),
        _ => format!(
            "{status} {}",
            String::from_utf8_lossy(&body[..body.len().min(200)]).trim()
        ),
    }
}

fn object_id(v: &Value) -> Option<String> {
    v.get("succinctProperties")
        .and_then(|p| p.get("cmis:objectId"))
        .or_else(|| v.pointer("/properties/cmis:objectId/value"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `application/x-www-form-urlencoded` body from pairs.
/// Percent-encodes everything but unreserved characters.
fn pct(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                o.push(b as char)
            }
            _ => o.push_str(&format!("%{b:02X}")),
        }
    }
    o
}

fn form(pairs: &[(&str, &str)]) -> String {
    let enc = pct;
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

impl Cmis {
    pub async fn connect(client: reqwest::Client, opts: RepoOptions) -> Result<Cmis> {
        let header = basic_header(&opts.user, opts.password.expose());
        let resp = client
            .get(opts.url.clone())
            .header(AUTHORIZATION, header.clone())
            .send()
            .await
            .map_err(|e| unreachable_err(&opts.url, &e))?;
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
        match status {
            StatusCode::OK => {}
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => bail!(
                "credentials rejected for `{}` at {} ({}): check --user and the password (INGESTBENCH_PASSWORD or --password-file)",
                opts.user,
                opts.url,
                status.as_u16()
            ),
            s => bail!(
                "{}: {}; --url must be a CMIS browser binding service URL (…/browser)",
                opts.url,
                error_message(s.as_u16(), &body)
            ),
        }
        let repos: Value = serde_json::from_slice(&body).with_context(|| {
            format!(
                "{}: not JSON; --url must be a CMIS 1.1 browser binding service URL",
                opts.url
            )
        })?;
        let root_folder_url = repos
            .as_object()
            .and_then(|m| {
                m.values()
                    .find_map(|r| r.get("rootFolderUrl").and_then(Value::as_str))
            })
            .map(str::to_string)
            .with_context(|| {
                format!(
                    "{}: no repository with a rootFolderUrl in the service document",
                    opts.url
                )
            })?;
        let root = reqwest::Url::parse(&root_folder_url)
            .with_context(|| format!("rootFolderUrl {root_folder_url} is not a URL"))?;
        let root_path = root.path().to_string();
        // The fast path connects where --url points; a repository that advertises another
        // host for its root folder is reached through reqwest instead.
        let mut opts = opts;
        if (root.scheme(), root.host_str(), root.port_or_known_default())
            != (
                opts.url.scheme(),
                opts.url.host_str(),
                opts.url.port_or_known_default(),
            )
        {
            opts.route.fast = None;
        }
        let c = Cmis {
            client,
            root_path,
            root_folder_url,
            parent_id: String::new(),
            auth: Arc::new(SharedAuth::new(header)),
            folders: std::sync::Mutex::new(HashMap::new()),
            fields: PropertyFields::of(&opts.profile),
            opts,
        };
        let parent = c.opts.parent.clone();
        let obj = c.object_by_path(&parent).await?.with_context(|| format!("--parent {parent}: no such folder in the repository (give a path such as / or /benchmarks)"))?;
        if obj
            .pointer("/succinctProperties/cmis:baseTypeId")
            .and_then(Value::as_str)
            != Some("cmis:folder")
        {
            bail!("--parent {parent}: not a folder");
        }
        let id = object_id(&obj).context("the parent folder has no cmis:objectId")?;
        Ok(Cmis { parent_id: id, ..c })
    }

    fn header(&self) -> reqwest::header::HeaderValue {
        self.auth.cache().header().clone()
    }

    /// The object at `path` below the root (`/` = the root), or None on 404.
    async fn object_by_path(&self, path: &str) -> Result<Option<Value>> {
        let p = path.trim_matches('/');
        let url = if p.is_empty() {
            self.root_folder_url.clone()
        } else {
            format!("{}/{p}", self.root_folder_url)
        };
        let resp = self
            .client
            .get(&url)
            .query(&[("cmisselector", "object"), ("succinct", "true")])
            .header(AUTHORIZATION, self.header())
            .send()
            .await
            .map_err(|e| unreachable_err(&self.opts.url, &e))?;
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
        match status {
            StatusCode::OK => Ok(Some(
                serde_json::from_slice(&body)
                    .with_context(|| format!("{url}: not a CMIS object"))?,
            )),
            StatusCode::NOT_FOUND => Ok(None),
            s => bail!("{url}: {}", error_message(s.as_u16(), &body)),
        }
    }

    async fn create_folder(
        &self,
        parent_id: &str,
        parent_path: &str,
        name: &str,
    ) -> Result<String> {
        let body = form(&[
            ("cmisaction", "createFolder"),
            ("propertyId[0]", "cmis:objectTypeId"),
            ("propertyValue[0]", "cmis:folder"),
            ("propertyId[1]", "cmis:name"),
            ("propertyValue[1]", name),
            ("succinct", "true"),
        ]);
        let resp = self
            .client
            .post(&self.root_folder_url)
            .query(&[("objectId", parent_id)])
            .header(AUTHORIZATION, self.header())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| unreachable_err(&self.opts.url, &e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.unwrap_or_default();
        match status {
            StatusCode::CREATED | StatusCode::OK => {
                let v: Value = serde_json::from_slice(&bytes).context("createFolder: not JSON")?;
                object_id(&v).context("createFolder: no cmis:objectId in the answer")
            }
            StatusCode::CONFLICT => {
                let path = format!("{}/{name}", parent_path.trim_end_matches('/'));
                let obj = self
                    .object_by_path(&path)
                    .await?
                    .with_context(|| format!("folder {path} exists (409) but cannot be read"))?;
                object_id(&obj).context("existing folder without cmis:objectId")
            }
            s => {
                // OpenCMIS FileShare answers an existing folder with 500 storage ("Could not
                // create folder!") instead of 409: the folder is used only if it is there.
                let path = format!("{}/{name}", parent_path.trim_end_matches('/'));
                match self.object_by_path(&path).await {
                    Ok(Some(obj))
                        if obj
                            .pointer("/succinctProperties/cmis:baseTypeId")
                            .and_then(Value::as_str)
                            == Some("cmis:folder") =>
                    {
                        object_id(&obj).context("existing folder without cmis:objectId")
                    }
                    _ => bail!(
                        "creating folder {name}: {}",
                        error_message(s.as_u16(), &bytes)
                    ),
                }
            }
        }
    }
}

impl Cmis {
    /// Reads an object back by id: name, size, content hash, succinct properties.
    /// The latest version of the series (`returnVersion=latest`): a document uploaded with
    /// versions is recorded by its first version's id; without versions, itself.
    pub async fn fetch(&self, id: &str) -> Result<Option<super::Fetched>, String> {
        let get = |selector: &'static str, id: &str| {
            let mut q = vec![
                ("objectId", id),
                ("cmisselector", selector),
                ("succinct", "true"),
            ];
            if selector == "object" {
                q.push(("returnVersion", "latest"));
            }
            self.client
                .get(&self.root_folder_url)
                .query(&q)
                .header(AUTHORIZATION, self.header())
        };
        let Some(v) = super::readback::read_json(get("object", id), error_message).await? else {
            return Ok(None);
        };
        let latest = object_id(&v).unwrap_or_else(|| id.to_string());
        let content = super::readback::read(get("content", &latest), error_message)
            .await?
            .ok_or("content not found")?;
        let p = &v["succinctProperties"];
        Ok(Some(super::readback::fetched(
            p["cmis:name"].as_str().unwrap_or(""),
            &content,
            p,
        )))
    }

    /// `cmisaction=deleteTree` of the folder at `path` below the parent.
    pub async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        let full = format!(
            "{}/{}",
            self.opts.parent.trim_end_matches('/'),
            path.trim_matches('/')
        );
        let Some(obj) = self
            .object_by_path(&full)
            .await
            .map_err(|e| format!("{e:#}"))?
        else {
            return Ok(false);
        };
        let id = object_id(&obj).ok_or("folder without cmis:objectId")?;
        let delete = self
            .client
            .post(&self.root_folder_url)
            .query(&[("objectId", id.as_str())])
            .header(AUTHORIZATION, self.header())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form(&[
                ("cmisaction", "deleteTree"),
                ("allVersions", "true"),
                ("continueOnFailure", "false"),
            ]));
        super::readback::read(delete, error_message)
            .await
            .map(|r| r.is_some())
    }

    /// Children of the folder at `path` below the parent; None when it does not exist.
    pub async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        let full = format!(
            "{}/{}",
            self.opts.parent.trim_matches('/'),
            path.trim_matches('/')
        );
        let url = format!("{}/{}", self.root_folder_url, full.trim_matches('/'));
        // Documents only (a corpus tree's folders hold subfolders too): the children are
        // paged through and counted by base type.
        let mut documents = 0u64;
        let mut skip = 0u64;
        loop {
            let list = self
                .client
                .get(&url)
                .query(&[
                    ("cmisselector", "children"),
                    ("maxItems", "1000"),
                    ("skipCount", &skip.to_string()),
                    ("filter", "cmis:baseTypeId"),
                    ("succinct", "true"),
                ])
                .header(AUTHORIZATION, self.header());
            let Some(v) = super::readback::read_json(list, error_message).await? else {
                return Ok(None);
            };
            let objects = v["objects"].as_array().cloned().unwrap_or_default();
            documents += objects
                .iter()
                .filter(|o| {
                    o.pointer("/object/succinctProperties/cmis:baseTypeId")
                        .and_then(Value::as_str)
                        == Some("cmis:document")
                })
                .count() as u64;
            skip += objects.len() as u64;
            if objects.is_empty() || v["hasMoreItems"].as_bool() != Some(true) {
                return Ok(Some(documents));
            }
        }
    }
}

impl Protocol for Cmis {
    async fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        worker: &mut WorkerState,
    ) -> Result<Uploaded, UploadError> {
        let profile = &self.opts.profile;
        let mut head = MultipartHead::new();
        head.text("cmisaction", "createDocument")
            .text("propertyId[0]", "cmis:objectTypeId")
            .text("propertyValue[0]", &profile.node_type)
            .text("propertyId[1]", "cmis:name")
            .text("propertyValue[1]", &doc.name);
        // Controls 0 and 1 are the type and the name; the profile's properties follow.
        let steps = versions::of(doc);
        let shadow = match steps.as_deref() {
            Some([first, ..]) => first.shadow,
            _ => doc.file().and_then(|f| f.shadow.as_ref()),
        };
        self.write_properties(&mut head, doc, shadow, 2);
        head.text("succinct", "true");
        if steps.is_some() {
            // The first version of a versioned series; the others are checked in after it.
            head.text("versioningState", "major");
        }
        let head = head.file("content", &doc.name, doc.mime());
        let body = first_body(doc, head, steps.as_deref().and_then(<[_]>::first))?;
        let header = worker.auth.header().clone();
        let path = worker.folder_path.of(folder, || {
            format!("{}?objectId={}", self.root_path, pct(folder))
        });
        let (status, node, bytes) = self
            .opts
            .route
            .send_upload(
                &self.client,
                &mut worker.lane,
                || format!("{}?objectId={}", self.root_folder_url, pct(folder)),
                path,
                &[
                    (AUTHORIZATION, &header),
                    (CONTENT_TYPE, &multipart_content_type()),
                ],
                body,
            )
            .await?;
        match status {
            StatusCode::CREATED => {
                let v: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| UploadError::protocol(format!("201 that is not JSON: {e}")))?;
                let id = object_id(&v)
                    .ok_or_else(|| UploadError::protocol("201 without cmis:objectId"))?;
                if let Some(steps) = &steps {
                    self.add_versions(&id, doc, steps, 1, &header).await?;
                }
                Ok(Uploaded { id, node })
            }
            s if s.is_success() => Err(UploadError::protocol(format!(
                "{} instead of 201 Created",
                s.as_u16()
            ))),
            s => Err(UploadError::http(
                s.as_u16(),
                error_message(s.as_u16(), &bytes),
            )),
        }
    }

    async fn lookup(&self, doc: &Doc<'_>, folder: &str) -> Result<Option<String>, UploadError> {
        // The folder reference is an object id; its path is known from prepare_folder.
        let path = self
            .folders
            .lock()
            .expect("folders")
            .iter()
            .find(|(_, id)| id.as_str() == folder)
            .map(|(p, _)| p.clone());
        let Some(path) = path else {
            return Err(UploadError::protocol(format!(
                "lookup: unknown folder {folder}"
            )));
        };
        let full = format!(
            "{}/{path}/{}",
            self.opts.parent.trim_end_matches('/'),
            doc.name
        );
        match self.object_by_path(&full).await {
            Ok(Some(obj)) => Ok(object_id(&obj)),
            Ok(None) => Ok(None),
            Err(e) => Err(UploadError::protocol(format!("lookup: {e:#}"))),
        }
    }

    async fn prepare_folder(&self, path: &str) -> Result<String> {
        let mut parent_id = self.parent_id.clone();
        let mut parent_path = self.opts.parent.trim_end_matches('/').to_string();
        let mut sofar = String::new();
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            if !sofar.is_empty() {
                sofar.push('/');
            }
            sofar.push_str(seg);
            let known = self.folders.lock().expect("folders").get(&sofar).cloned();
            let id = match known {
                Some(id) => id,
                None => {
                    let id = self.create_folder(&parent_id, &parent_path, seg).await?;
                    self.folders
                        .lock()
                        .expect("folders")
                        .insert(sofar.clone(), id.clone());
                    id
                }
            };
            parent_id = id;
            parent_path = format!("{parent_path}/{seg}");
        }
        Ok(parent_id)
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
    fn errors_and_ids() {
        assert_eq!(
            error_message(
                409,
                br#"{"exception":"nameConstraintViolation","message":"x exists"}"#
            ),
            "409 nameConstraintViolation: x exists"
        );
        assert_eq!(
            object_id(&serde_json::json!({"succinctProperties": {"cmis:objectId": "a;1.0"}}))
                .as_deref(),
            Some("a;1.0")
        );
        assert_eq!(form(&[("a b", "c&d")]), "a%20b=c%26d");
    }
}
