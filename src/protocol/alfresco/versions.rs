//! An Alfresco document's versions: created from its first (the upload), then each next one
//! as `PUT nodes/{id}/content` (after `PUT nodes/{id}` with its properties when they changed);
//! the history read back from `nodes/{id}/versions`, each version's bytes from its own
//! content URL.

use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};

use super::{Alfresco, error_message};
use crate::metrics::UploadError;
use crate::protocol::{Version, readback, versions};

impl Alfresco {
    /// Uploads `steps[from..]` onto the node `id`, in order: for each, its metadata when it
    /// changed (`PUT nodes/{id}`, properties only), then its bytes as a new version
    /// (`PUT nodes/{id}/content?majorVersion=…&comment=…`).
    pub(super) async fn put_versions(
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
                    .conn
                    .client
                    .put(format!("{}/nodes/{id}", self.core))
                    .header(AUTHORIZATION, header.clone())
                    .json(&serde_json::json!({
                        "properties": versions::properties_json(shadow, &self.conn.opts.profile)
                    }));
                self.step(req, StatusCode::OK)
                    .await
                    .map_err(|e| versions::step_error(s, e))?;
            }
            let req = self
                .conn
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
        crate::protocol::expect(req, |s| s == want, error_message)
            .await
            .map(drop)
    }

    /// The node's version history, oldest first (`GET nodes/{id}/versions`, newest first
    /// on the wire): each version's label and properties.
    pub(super) async fn history(&self, id: &str) -> Result<Option<Vec<serde_json::Value>>, String> {
        let req = self
            .conn
            .client
            .get(format!("{}/nodes/{id}/versions", self.core))
            .query(&[("maxItems", "1000"), ("include", "properties")])
            .header(AUTHORIZATION, self.conn.auth.cache().header().clone());
        let Some(v) = readback::read_json(req, error_message).await? else {
            return Ok(None);
        };
        let mut out: Vec<serde_json::Value> = v["list"]["entries"]
            .as_array()
            .map(|a| a.iter().map(|e| e["entry"].clone()).collect())
            .unwrap_or_default();
        out.reverse();
        Ok(Some(out))
    }

    /// The history as versions to read back: each one's content at
    /// `nodes/{id}/versions/{label}/content`, its properties as the history gives them.
    pub(super) async fn version_list(&self, id: &str) -> Result<Option<Vec<Version>>, String> {
        let Some(history) = self.history(id).await? else {
            return Ok(None);
        };
        Ok(Some(
            history
                .into_iter()
                .map(|v| {
                    let vid = v["id"].as_str().unwrap_or_default().to_string();
                    Version {
                        content: self
                            .conn
                            .client
                            .get(format!("{}/nodes/{id}/versions/{vid}/content", self.core)),
                        props: v["properties"].clone(),
                        name: vid.clone(),
                        id: vid,
                    }
                })
                .collect(),
        ))
    }
}
