//! A Liferay document's versions: each later file version a `PUT /documents/{id}` with the
//! step's bytes, the history read back through the portal's JSON web service
//! (`dlfileversion/get-file-versions`: headless-delivery lists no versions) with each
//! version's bytes from the document URL with `?version=`.

use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

use super::{Liferay, error_message};
use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::protocol::multipart::{MultipartHead, first_body, multipart_content_type};
use crate::protocol::{Version, WorkerState, readback, versions};

impl Liferay {
    /// Uploads `steps[from..]` onto document `id`, in order: each a `PUT /documents/{id}`
    /// with the same `document` JSON and the step's bytes, which Liferay keeps as a new
    /// file version.
    pub(super) async fn put_versions(
        &self,
        id: &str,
        doc: &Doc<'_>,
        steps: &[versions::Step<'_>],
        from: usize,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        for s in steps.iter().skip(from) {
            // The step's own metadata; the folder is not changed by an update (0: ignored).
            self.fields.write_with(
                &self.conn.opts.profile,
                doc,
                0,
                s.shadow,
                &mut worker.scratch,
            );
            let mut head = MultipartHead::new();
            head.typed("document", "application/json", &worker.scratch[0]);
            let head = head.file("file", &doc.name, doc.mime());
            let body = first_body(doc, head, Some(s))?;
            let req = self
                .conn
                .client
                .put(format!("{}/documents/{id}", self.api))
                .header(AUTHORIZATION, worker.auth.header().clone())
                .header(CONTENT_TYPE, multipart_content_type())
                .body(reqwest::Body::wrap(body));
            crate::protocol::expect(req, |st| st == StatusCode::OK, error_message)
                .await
                .map_err(|e| versions::step_error(s, e))?;
        }
        Ok(())
    }

    /// The portal's root (`--url`), for the calls outside headless-delivery.
    pub(super) fn root(&self) -> &str {
        self.conn.opts.url.as_str().trim_end_matches('/')
    }

    /// The file versions of document `id`, oldest first: headless-delivery lists none, so
    /// they come from the portal's JSON web service `dlfileversion/get-file-versions`
    /// (status -1: any), sorted by version number.
    pub(super) async fn history(&self, id: &str) -> Result<Option<Vec<Value>>, String> {
        let req = self
            .conn
            .client
            .get(format!(
                "{}/api/jsonws/dlfileversion/get-file-versions/file-entry-id/{id}/status/-1",
                self.root()
            ))
            .header(AUTHORIZATION, self.conn.auth.cache().header().clone());
        let Some(v) = readback::read_json(req, error_message).await? else {
            return Ok(None);
        };
        let mut out: Vec<Value> = v.as_array().cloned().unwrap_or_default();
        let number = |v: &Value| -> Vec<u64> {
            v["version"]
                .as_str()
                .unwrap_or("")
                .split('.')
                .map(|p| p.parse().unwrap_or(0))
                .collect()
        };
        out.sort_by_key(number);
        Ok(Some(out))
    }

    /// Every version of a document, oldest first: the list from [`Liferay::history`], each
    /// version's bytes from the document's `contentUrl` with `?version=` (the portal's
    /// document servlet). Per-version metadata is not readable this way (none is compared).
    pub(super) async fn version_list(&self, id: &str) -> Result<Option<Vec<Version>>, String> {
        let get = self
            .conn
            .client
            .get(format!("{}/documents/{id}", self.api))
            .header(AUTHORIZATION, self.conn.auth.cache().header().clone());
        let Some(d) = readback::read_json(get, error_message).await? else {
            return Ok(None);
        };
        let url = d["contentUrl"].as_str().unwrap_or("");
        let base = url.split_once('?').map_or(url, |(b, _)| b).to_string();
        let Some(history) = self.history(id).await? else {
            return Ok(None);
        };
        Ok(Some(
            history
                .iter()
                .map(|v| {
                    let label = v["version"].as_str().unwrap_or("").to_string();
                    Version {
                        content: self
                            .conn
                            .client
                            .get(format!("{}{base}", self.root()))
                            .query(&[("version", label.as_str())]),
                        props: Value::Null,
                        id: label.clone(),
                        name: label,
                    }
                })
                .collect(),
        ))
    }
}
