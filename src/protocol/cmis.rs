//! CMIS 1.1 browser binding (as implemented by Apache Chemistry OpenCMIS, which Alfresco
//! embeds): repository discovery from the service URL (`rootFolderUrl`), folders per run via
//! `cmisaction=createFolder`, documents via `cmisaction=createDocument` with indexed
//! `propertyId[i]` / `propertyValue[i]` controls and `succinct=true`; success is **201** with
//! `succinctProperties["cmis:objectId"]`; errors come from the `exception` field. A corpus
//! document's versions are checked out and in one by one after its first (`versions`). The
//! contract is OASIS CMIS 1.1 §5 (browser binding), checked against real OpenCMIS in tests.

mod versions;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

use super::auth::basic_header;
use super::facts::{Metadata, NameRules, Repository, Requests};
use super::multipart::{MultipartHead, form, pct};
use super::{Api, Connection, Content, FolderPath, Folders, RepoOptions, Version, WorkerState};
use crate::fixtures::Doc;
use crate::metrics::UploadError;

/// What a CMIS repository is ([`super::facts`]), as Apache Chemistry OpenCMIS 1.1.0 (commit
/// 9e49c685) has it. Sources: InMemory `NameValidator.isValidName` refuses an empty name or
/// one with `/ \ : " * ? < > |`, and `ObjectStoreImpl.hasChild` compares names with
/// `String.equals` (case-sensitive); FileShare refuses an empty name or one with the
/// platform's separators and stores files on the server's file system. Neither limits sizes
/// or refuses trailing dots or spaces. Only the profile's properties are sent. A version is a
/// check-out and a check-in (2 requests); a folder is one `createFolder`.
pub const FACTS: Repository = Repository {
    names: NameRules {
        folds_case: false,
        clash_says: "the same name twice in one folder (409 nameConstraintViolation)",
        clash_source: "chemistry-opencmis InMemory ObjectStoreImpl.hasChild (String.equals)",
        refused: &["/", "\\", ":", "\"", "*", "?", "<", ">", "|"],
        refused_says: "a name with / \\ : \" * ? < > | (409 nameConstraintViolation)",
        refuses_trailing_dot_or_space: false,
        reserved_stems: &[],
        reserved_says: "",
        max_chars: None,
        source: "chemistry-opencmis InMemory NameValidator.isValidName",
    },
    max_size: None,
    metadata: Metadata::Profile,
    requests: Requests {
        per_version: 2,
        per_property_update: 0,
        per_folder: 1,
    },
};

pub struct Cmis {
    conn: Connection,
    root_folder_url: String,
    /// The repository's URL (`repositoryUrl`): where queries go (`cmisselector=query`).
    repository_url: String,
    /// Path part of `root_folder_url`, for the upload fast path.
    root_path: String,
    /// Object id of the folder runs go below (`--parent`, a path; `/` = the root).
    parent_id: String,
    /// The run's folders, made one by one below the parent.
    folders: Folders,
    /// The multipart field names of the profile's properties, in its order (made once, so
    /// an upload formats none).
    fields: Vec<PropertyFields>,
    /// The repository info's `capabilities.capabilityQuery` (`none`, `metadataonly`,
    /// `fulltextonly`, `bothseparate`, `bothcombined`), read once at connect; None when the
    /// service document does not say.
    query_capability: Option<String>,
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

/// A CMIS QL string literal's content: `'` and `\` escaped with a backslash (CMIS 1.1,
/// 2.1.14.4.1); in a LIKE pattern (`like`), `%` and `_` too, its wildcards.
fn ql_escape(s: &str, like: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\'' | '\\') || (like && matches!(c, '%' | '_')) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The readers' query: documents whose name starts with `term`, anywhere below `parent`.
fn query_by_name(term: &str, parent: &str) -> String {
    format!(
        "SELECT cmis:objectId FROM cmis:document WHERE cmis:name LIKE '{}%' AND IN_TREE('{}')",
        ql_escape(term, true),
        ql_escape(parent, false)
    )
}

fn listed_ids(body: &[u8]) -> Result<Vec<String>, UploadError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| UploadError::protocol(format!("a listing that is not JSON: {e}")))?;
    let docs: Vec<&Value> = if let Some(objects) = v.get("objects").and_then(Value::as_array) {
        objects.iter().filter_map(|o| o.get("object")).collect()
    } else if let Some(results) = v.get("results").and_then(Value::as_array) {
        results.iter().collect()
    } else {
        return Err(UploadError::protocol(
            "a listing with neither objects nor results",
        ));
    };
    Ok(docs
        .into_iter()
        .filter(|o| {
            o.pointer("/succinctProperties/cmis:baseTypeId")
                .or_else(|| o.pointer("/properties/cmis:baseTypeId/value"))
                .and_then(Value::as_str)
                .is_none_or(|t| t == "cmis:document")
        })
        .filter_map(object_id)
        .collect())
}

/// Why a repository with this `capabilityQuery` has no query (None: it has one, or did not
/// say, and the queries are sent).
fn no_query(capability: Option<&str>) -> Option<String> {
    (capability == Some("none"))
        .then(|| "the repository has no query (its capabilityQuery is none)".to_string())
}

/// The `capabilities.capabilityQuery` of the service document's repository (the one whose
/// `rootFolderUrl` is used).
fn query_capability(repos: &Value) -> Option<String> {
    repos
        .as_object()?
        .values()
        .find(|r| r.get("rootFolderUrl").is_some())?
        .pointer("/capabilities/capabilityQuery")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn object_id(v: &Value) -> Option<String> {
    v.get("succinctProperties")
        .and_then(|p| p.get("cmis:objectId"))
        .or_else(|| v.pointer("/properties/cmis:objectId/value"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

impl Cmis {
    pub async fn connect(client: reqwest::Client, opts: RepoOptions) -> Result<Cmis> {
        let header = basic_header(&opts.user, opts.password.expose());
        let req = client
            .get(opts.url.clone())
            .header(AUTHORIZATION, header.clone());
        let (status, body) = super::send_setup(req, &opts.url).await?;
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
        // Queries go to the repository's URL; a service document without one (none known)
        // leaves them at the root folder's, which the browser binding also answers.
        let repository_url = repos
            .as_object()
            .and_then(|m| {
                m.values()
                    .find_map(|r| r.get("repositoryUrl").and_then(Value::as_str))
            })
            .map_or_else(|| root_folder_url.clone(), str::to_string);
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
            root_path,
            root_folder_url,
            repository_url,
            parent_id: String::new(),
            folders: Folders::default(),
            fields: PropertyFields::of(&opts.profile),
            query_capability: query_capability(&repos),
            conn: Connection::new(client, opts, header),
        };
        let parent = c.conn.opts.parent.clone();
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
        self.conn.auth.cache().header().clone()
    }

    /// The profile's properties as indexed controls from `propertyId[offset]` on, a
    /// multi-valued one as `propertyValue[i][j]`; values from `shadow` where the profile maps
    /// them. At offset 2 (an upload, after the type and the name) the names made at connect
    /// time are used, so an upload formats none.
    fn write_properties(
        &self,
        head: &mut MultipartHead,
        doc: &Doc<'_>,
        shadow: Option<&crate::fixtures::ShadowMetadata>,
        offset: usize,
    ) {
        let profile = &self.conn.opts.profile;
        let mut last: Option<(usize, usize)> = None;
        let fast = offset == 2;
        profile.each_value_with(
            doc.seed,
            doc.index,
            doc.marker_str(),
            shadow,
            |k, spec, v| {
                let f = &self.fields[k];
                let i = k + offset;
                let j = match last {
                    Some((lk, j)) if lk == k => j + 1,
                    _ => {
                        if fast {
                            head.text(&f.id, &spec.name);
                        } else {
                            head.text(&format!("propertyId[{i}]"), &spec.name);
                        }
                        0
                    }
                };
                last = Some((k, j));
                match (spec.multiple, fast) {
                    (false, true) => {
                        head.text(&f.value, v);
                    }
                    (false, false) => {
                        head.text(&format!("propertyValue[{i}]"), v);
                    }
                    (true, true) if j < f.values.len() => {
                        head.text(&f.values[j], v);
                    }
                    (true, _) => {
                        head.text(&format!("propertyValue[{i}][{j}]"), v);
                    }
                }
            },
        );
    }

    /// The URL of the object at `path` below the root (`/` = the root).
    fn path_url(&self, path: &str) -> String {
        let p = path.trim_matches('/');
        if p.is_empty() {
            self.root_folder_url.clone()
        } else {
            format!("{}/{p}", self.root_folder_url)
        }
    }

    /// The request that reads the object at `path` below the root.
    fn object_request(&self, path: &str) -> reqwest::RequestBuilder {
        self.conn
            .client
            .get(self.path_url(path))
            .query(&[("cmisselector", "object"), ("succinct", "true")])
    }

    /// The object at `path` below the root (`/` = the root), or None on 404.
    async fn object_by_path(&self, path: &str) -> Result<Option<Value>> {
        let url = self.path_url(path);
        let (status, body) = self.conn.call(self.object_request(path)).await?;
        match status {
            StatusCode::OK => Ok(Some(
                serde_json::from_slice(&body)
                    .with_context(|| format!("{url}: not a CMIS object"))?,
            )),
            StatusCode::NOT_FOUND => Ok(None),
            s => bail!("{url}: {}", error_message(s.as_u16(), &body)),
        }
    }

    /// `createFolder` of `name` in folder `parent_id`; `path` is where it is (from the root),
    /// to find it when it exists.
    async fn make_folder(&self, parent_id: &str, path: &str, name: &str) -> Result<String> {
        let body = form(&[
            ("cmisaction", "createFolder"),
            ("propertyId[0]", "cmis:objectTypeId"),
            ("propertyValue[0]", "cmis:folder"),
            ("propertyId[1]", "cmis:name"),
            ("propertyValue[1]", name),
            ("succinct", "true"),
        ]);
        let req = self
            .conn
            .client
            .post(&self.root_folder_url)
            .query(&[("objectId", parent_id)])
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        let (status, bytes) = self.conn.call(req).await?;
        match status {
            StatusCode::CREATED | StatusCode::OK => {
                let v: Value = serde_json::from_slice(&bytes).context("createFolder: not JSON")?;
                object_id(&v).context("createFolder: no cmis:objectId in the answer")
            }
            StatusCode::CONFLICT => {
                let obj = self
                    .object_by_path(path)
                    .await?
                    .with_context(|| format!("folder {path} exists (409) but cannot be read"))?;
                object_id(&obj).context("existing folder without cmis:objectId")
            }
            s => {
                // OpenCMIS FileShare answers an existing folder with 500 storage ("Could not
                // create folder!") instead of 409: the folder is used only if it is there.
                match self.object_by_path(path).await {
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

impl Api for Cmis {
    const ERROR_MESSAGE: fn(u16, &[u8]) -> String = error_message;

    fn conn(&self) -> &Connection {
        &self.conn
    }

    /// `createDocument`: controls 0 and 1 are the type and the name, the profile's
    /// properties follow.
    fn upload_head(
        &self,
        doc: &Doc<'_>,
        _folder: &str,
        first: Option<&super::versions::Step<'_>>,
        _scratch: &mut [Vec<u8>; 3],
    ) -> Result<Bytes, UploadError> {
        let mut head = MultipartHead::new();
        head.text("cmisaction", "createDocument")
            .text("propertyId[0]", "cmis:objectTypeId")
            .text("propertyValue[0]", &self.conn.opts.profile.node_type)
            .text("propertyId[1]", "cmis:name")
            .text("propertyValue[1]", &doc.name);
        let shadow = match first {
            Some(first) => first.shadow,
            None => doc.file().and_then(|f| f.shadow.as_ref()),
        };
        self.write_properties(&mut head, doc, shadow, 2);
        head.text("succinct", "true");
        if first.is_some() {
            // The first version of a versioned series; the others are checked in after it.
            head.text("versioningState", "major");
        }
        Ok(head.file("content", &doc.name, doc.mime()))
    }
    fn upload_path<'a>(&'a self, folder: &str, path: &'a mut FolderPath) -> &'a str {
        path.of(folder, || {
            format!("{}?objectId={}", self.root_path, pct(folder))
        })
    }
    fn upload_url(&self, folder: &str) -> String {
        format!("{}?objectId={}", self.root_folder_url, pct(folder))
    }
    fn created_id(body: &[u8]) -> Result<String, UploadError> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| UploadError::protocol(format!("201 that is not JSON: {e}")))?;
        object_id(&v).ok_or_else(|| UploadError::protocol("201 without cmis:objectId"))
    }

    async fn add_versions(
        &self,
        id: &str,
        doc: &Doc<'_>,
        steps: &[super::versions::Step<'_>],
        from: usize,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        let header = worker.auth.header().clone();
        self.check_in_versions(id, doc, steps, from, &header).await
    }
    async fn stored_versions(
        &self,
        id: &str,
        worker: &mut WorkerState,
    ) -> Result<(String, usize), UploadError> {
        let header = worker.auth.header().clone();
        self.series(id, &header).await
    }

    /// By path: the folder reference is an object id, its path known from `prepare_folder`.
    fn lookup_request(
        &self,
        doc: &Doc<'_>,
        folder: &str,
    ) -> Result<reqwest::RequestBuilder, UploadError> {
        let Some(path) = self.folders.path_of(folder) else {
            return Err(UploadError::protocol(format!(
                "lookup: unknown folder {folder}"
            )));
        };
        let full = format!(
            "{}/{path}/{}",
            self.conn.opts.parent.trim_end_matches('/'),
            doc.name
        );
        Ok(self.object_request(&full))
    }
    fn found_id(body: &[u8]) -> Result<Option<String>, UploadError> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| UploadError::protocol(format!("lookup: not a CMIS object: {e}")))?;
        Ok(object_id(&v))
    }

    fn folders(&self) -> Option<&Folders> {
        Some(&self.folders)
    }
    fn root_folder(&self) -> Option<String> {
        Some(self.parent_id.clone())
    }
    async fn create_folder(&self, parent: Option<&str>, path: &str, name: &str) -> Result<String> {
        let full = format!("{}/{path}", self.conn.opts.parent.trim_end_matches('/'));
        self.make_folder(parent.unwrap_or(&self.parent_id), &full, name)
            .await
    }

    /// The latest version of the series (`returnVersion=latest`): a document uploaded with
    /// versions is recorded by its first version's id; without versions, itself.
    fn read_request(&self, id: &str) -> reqwest::RequestBuilder {
        self.conn.client.get(&self.root_folder_url).query(&[
            ("objectId", id),
            ("cmisselector", "object"),
            ("succinct", "true"),
            ("returnVersion", "latest"),
        ])
    }
    fn content(&self, id: &str, meta: &Value) -> Result<Content, String> {
        let latest = object_id(meta).unwrap_or_else(|| id.to_string());
        Ok(Content::Get(Box::new(
            self.conn.client.get(&self.root_folder_url).query(&[
                ("objectId", latest.as_str()),
                ("cmisselector", "content"),
                ("succinct", "true"),
            ]),
        )))
    }
    fn name_and_props(meta: &Value) -> (&str, Value) {
        let p = &meta["succinctProperties"];
        (p["cmis:name"].as_str().unwrap_or(""), p.clone())
    }
    async fn versions(&self, id: &str) -> Result<Option<Vec<Version>>, String> {
        self.version_list(id).await
    }

    /// Readers: `cmisselector=children` of a run folder (its object id), one page of 100,
    /// only the ids and base types.
    fn list_request(&self, folder: &str) -> Option<reqwest::RequestBuilder> {
        Some(self.conn.client.get(&self.root_folder_url).query(&[
            ("objectId", folder),
            ("cmisselector", "children"),
            ("succinct", "true"),
            ("maxItems", "100"),
            ("filter", "cmis:objectId,cmis:baseTypeId"),
        ]))
    }

    /// Readers: a CMIS query for documents by name below the parent, one page of 25:
    /// `SELECT cmis:objectId FROM cmis:document WHERE cmis:name LIKE 'term%' AND
    /// IN_TREE('parent')`.
    fn query_request(&self, term: &str) -> Option<reqwest::RequestBuilder> {
        Some(self.conn.client.get(&self.repository_url).query(&[
            ("cmisselector", "query"),
            ("q", &query_by_name(term, &self.parent_id)),
            ("succinct", "true"),
            ("maxItems", "25"),
        ]))
    }

    /// The documents' ids of a children page (`objects[].object`) or of query results
    /// (`results[]`); folders in a listing are left out.
    fn listed_ids(body: &[u8]) -> Result<Vec<String>, UploadError> {
        listed_ids(body)
    }
    /// A repository whose `capabilityQuery` is `none` (OpenCMIS FileShare) has no query: it
    /// would answer every one `405 notSupported`.
    fn reads_unsupported(&self) -> Vec<(super::reads::ReadOp, String)> {
        no_query(self.query_capability.as_deref())
            .map(|why| (super::reads::ReadOp::Query, why))
            .into_iter()
            .collect()
    }

    /// Children of the folder at `path` below the parent; None when it does not exist.
    async fn count_folder(&self, path: &str) -> Result<Option<u64>, String> {
        let full = format!(
            "{}/{}",
            self.conn.opts.parent.trim_matches('/'),
            path.trim_matches('/')
        );
        let url = format!("{}/{}", self.root_folder_url, full.trim_matches('/'));
        // Documents only (a corpus tree's folders hold subfolders too): the children are
        // paged through and counted by base type.
        let mut documents = 0u64;
        let mut skip = 0u64;
        loop {
            let list = self
                .conn
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

    /// `cmisaction=deleteTree` of the folder at `path` below the parent.
    async fn delete_folder(&self, path: &str) -> Result<bool, String> {
        let full = format!(
            "{}/{}",
            self.conn.opts.parent.trim_end_matches('/'),
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
            .conn
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_query_by_name_below_the_parent_and_read_ids_of_documents_only() {
        assert_eq!(
            query_by_name("doc_0'1", "f-1"),
            r"SELECT cmis:objectId FROM cmis:document WHERE cmis:name LIKE 'doc\_0\'1%' AND IN_TREE('f-1')"
        );
        let children = br#"{"objects":[
            {"object":{"succinctProperties":{"cmis:objectId":"d1","cmis:baseTypeId":"cmis:document"}}},
            {"object":{"succinctProperties":{"cmis:objectId":"f1","cmis:baseTypeId":"cmis:folder"}}},
            {"object":{"properties":{"cmis:objectId":{"value":"d2"}}}}],"hasMoreItems":false}"#;
        assert_eq!(listed_ids(children).unwrap(), vec!["d1", "d2"]);
        let results =
            br#"{"results":[{"succinctProperties":{"cmis:objectId":"d3"}}],"numItems":1}"#;
        assert_eq!(listed_ids(results).unwrap(), vec!["d3"]);
        assert!(listed_ids(b"{}").is_err());
    }

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

    /// Service documents as OpenCMIS answers them (trimmed): FileShare says it has no query,
    /// InMemory that it has both kinds combined.
    #[test]
    fn a_repository_without_query_has_its_queries_left_out() {
        let service = |cap: &str| {
            serde_json::json!({"test": {
                "repositoryId": "test",
                "capabilities": {"capabilityGetDescendants": true, "capabilityQuery": cap, "capabilityJoin": "none"},
                "repositoryUrl": "http://h/browser/test",
                "rootFolderUrl": "http://h/browser/test/root"
            }})
        };
        assert_eq!(query_capability(&service("none")).as_deref(), Some("none"));
        assert_eq!(
            query_capability(&service("bothcombined")).as_deref(),
            Some("bothcombined")
        );
        assert_eq!(
            query_capability(&serde_json::json!({"r": {"rootFolderUrl": "u"}})),
            None
        );
        assert!(
            no_query(query_capability(&service("none")).as_deref())
                .unwrap()
                .contains("capabilityQuery is none")
        );
        for has in [
            Some("metadataonly"),
            Some("fulltextonly"),
            Some("bothcombined"),
            None,
        ] {
            assert_eq!(no_query(has), None, "{has:?}: the queries are sent");
        }
    }
}
