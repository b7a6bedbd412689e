//! Reading back what was uploaded, for verification and cleanup (never on the upload hot
//! path), once for every API over [`Api`]: a document by id (its metadata, then its content)
//! and each of its versions; and the pieces the APIs' own read calls share: send a read
//! request and classify the answer, turn a read-back document into [`Fetched`], hash content.

use bytes::Bytes;
use reqwest::header::AUTHORIZATION;

use super::{Api, Fetched};

/// Where a read-back document's content is.
pub enum Content {
    /// Read with this request.
    Get(Box<reqwest::RequestBuilder>),
    /// Already in the metadata (Liferay's `contentValue`).
    Inline(Bytes),
}

/// One version of a document, as the API lists it.
pub struct Version {
    /// The repository's version label (or id).
    pub name: String,
    /// What names it when its content is missing.
    pub id: String,
    /// The request that reads its content.
    pub content: reqwest::RequestBuilder,
    /// Its properties (a JSON object; null when the API has none per version).
    pub props: serde_json::Value,
}

/// Reads document `id` back: its metadata, then its content; None when it is gone.
pub async fn fetch<A: Api>(api: &A, id: &str) -> Result<Option<Fetched>, String> {
    let header = api.conn().auth.cache().header().clone();
    let req = api.read_request(id).header(AUTHORIZATION, header.clone());
    let Some(meta) = read_json(req, A::ERROR_MESSAGE).await? else {
        return Ok(None);
    };
    let content = match api.content(id, &meta)? {
        Content::Get(req) => read((*req).header(AUTHORIZATION, header), A::ERROR_MESSAGE)
            .await?
            .ok_or("content not found")?,
        Content::Inline(bytes) => bytes,
    };
    let (name, props) = A::name_and_props(&meta);
    Ok(Some(fetched(name, &content, &props)))
}

/// Every version of document `id`, oldest first, with its content; None when it is gone.
pub async fn fetch_versions<A: Api>(api: &A, id: &str) -> Result<Option<Vec<Fetched>>, String> {
    let Some(versions) = api.versions(id).await? else {
        return Ok(None);
    };
    let header = api.conn().auth.cache().header().clone();
    let mut out = Vec::with_capacity(versions.len());
    for v in versions {
        let content = read(
            v.content.header(AUTHORIZATION, header.clone()),
            A::ERROR_MESSAGE,
        )
        .await?
        .ok_or_else(|| format!("version {}: content not found", v.id))?;
        out.push(fetched(&v.name, &content, &v.props));
    }
    Ok(Some(out))
}

/// Sends a read request: `Ok(Some(body))` on success, `Ok(None)` on 404, otherwise the
/// message the protocol's `describe` makes of the answer. For read-back and cleanup, not for
/// uploads.
pub async fn read(
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
pub async fn read_json(
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
pub fn fetched(name: &str, content: &[u8], props: &serde_json::Value) -> Fetched {
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
