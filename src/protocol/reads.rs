//! What a user does with documents while an import runs (`--readers`), written once over
//! [`Api`]: read a document's metadata, download its content, list a folder's documents, and
//! a query by name. Each is one request, its answer read whole; a failure is an
//! [`UploadError`], classified as an upload's. The requests are the API's own (`Api`'s
//! `meta_request`, `content`, `list_request`, `query_request`); an API without a listing or a
//! query answers a protocol error naming it.

use serde::{Deserialize, Serialize};

use super::Api;
use super::readback::Content;
use crate::metrics::UploadError;

/// One kind of read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadOp {
    /// A document's metadata, by id.
    Meta,
    /// A document's content, by id.
    Download,
    /// The documents of one of the run's folders.
    List,
    /// A query for documents by name.
    Query,
}

impl ReadOp {
    pub const ALL: [ReadOp; 4] = [ReadOp::Meta, ReadOp::Download, ReadOp::List, ReadOp::Query];

    pub fn name(self) -> &'static str {
        match self {
            ReadOp::Meta => "meta",
            ReadOp::Download => "download",
            ReadOp::List => "list",
            ReadOp::Query => "query",
        }
    }
}

/// What one read brought back: the bytes of the answer, and the document ids a listing or a
/// query named (what later reads pick from).
#[derive(Debug, Default)]
pub struct ReadDone {
    pub bytes: u64,
    pub ids: Vec<String>,
}

/// One read of `op`: `target` is a document id (meta, download), a folder reference as
/// `prepare_folder` returned it (list) or a search term (query, below the run's parent).
pub async fn read<A: Api>(api: &A, op: ReadOp, target: &str) -> Result<ReadDone, UploadError> {
    let req = match op {
        ReadOp::Meta => api.meta_request(target),
        ReadOp::Download => match api.content(target, &serde_json::Value::Null) {
            Ok(Content::Get(r)) => *r,
            Ok(Content::Inline(_)) => api.read_request(target),
            Err(e) => return Err(UploadError::protocol(e)),
        },
        ReadOp::List => api
            .list_request(target)
            .ok_or_else(|| UploadError::protocol("this API's folder listing is not written"))?,
        ReadOp::Query => api
            .query_request(target)
            .ok_or_else(|| UploadError::protocol("this API's query is not written"))?,
    };
    let ok = |s: reqwest::StatusCode| s.is_success();
    let (_, body) = super::expect(api.conn().authed(req), ok, A::ERROR_MESSAGE).await?;
    let ids = match op {
        ReadOp::List | ReadOp::Query => A::listed_ids(&body)?,
        _ => Vec::new(),
    };
    Ok(ReadDone {
        bytes: body.len() as u64,
        ids,
    })
}
