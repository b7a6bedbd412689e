//! A CMIS document's versions: check-out / check-in of each later version after its first
//! (OpenCMIS InMemory does not version on `setContentStream`), through a `cmisaction` call
//! and its JSON answer; the version series listed (`cmisselector=versions`), with a check-out
//! a stop left open cancelled before the rest go up, and each version's content read back by
//! its own object id.

use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

use super::{Cmis, error_message, form, object_id};
use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::protocol::multipart::{MultipartHead, first_body, multipart_content_type};
use crate::protocol::{Version, readback, versions};

/// A version's succinct property.
pub(super) fn prop<'a>(v: &'a Value, name: &str) -> &'a Value {
    &v["succinctProperties"][name]
}

impl Cmis {
    /// Sends one browser-binding call; anything but 200/201 is the failure.
    pub(super) async fn call(&self, req: reqwest::RequestBuilder) -> Result<Value, UploadError> {
        let ok = |s| matches!(s, StatusCode::OK | StatusCode::CREATED);
        let (_, bytes) = crate::protocol::expect(req, ok, error_message).await?;
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| UploadError::protocol(format!("an answer that is not JSON: {e}")))
    }

    /// A form-encoded action on object `id`.
    pub(super) fn action(
        &self,
        id: &str,
        pairs: &[(&str, &str)],
        header: &reqwest::header::HeaderValue,
    ) -> reqwest::RequestBuilder {
        self.conn
            .client
            .post(&self.root_folder_url)
            .query(&[("objectId", id)])
            .header(AUTHORIZATION, header.clone())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form(pairs))
    }

    /// Uploads `steps[from..]` as new versions of the document whose latest version is
    /// `latest`: for each, `checkOut` (the private working copy), then `checkIn` of that copy
    /// with the step's bytes (`major`, `checkinComment`). OpenCMIS versions nothing on
    /// `setContentStream` of a version that is not checked out (it refuses it), so check-out
    /// and check-in is the mechanism every CMIS repository supports.
    pub(super) async fn check_in_versions(
        &self,
        latest: &str,
        doc: &Doc<'_>,
        steps: &[versions::Step<'_>],
        from: usize,
        header: &reqwest::header::HeaderValue,
    ) -> Result<(), UploadError> {
        let mut cur = latest.to_string();
        for s in steps.iter().skip(from) {
            let pwc = self
                .call(self.action(
                    &cur,
                    &[("cmisaction", "checkOut"), ("succinct", "true")],
                    header,
                ))
                .await
                .and_then(|v| {
                    object_id(&v)
                        .ok_or_else(|| UploadError::protocol("checkOut without cmis:objectId"))
                })
                .map_err(|e| versions::step_error(s, e))?;
            let mut head = MultipartHead::new();
            head.text("cmisaction", "checkIn")
                .text("major", if s.major() { "true" } else { "false" })
                .text("checkinComment", &s.comment())
                .text("succinct", "true");
            // The version's own metadata (its shadow file's, else the head's).
            self.write_properties(&mut head, doc, s.shadow, 0);
            let head = head.file("content", &doc.name, doc.mime());
            let body = first_body(doc, head, Some(s))?;
            let req = self
                .conn
                .client
                .post(&self.root_folder_url)
                .query(&[("objectId", pwc.as_str())])
                .header(AUTHORIZATION, header.clone())
                .header(CONTENT_TYPE, multipart_content_type())
                .body(reqwest::Body::wrap(body));
            cur = self
                .call(req)
                .await
                .and_then(|v| {
                    object_id(&v)
                        .ok_or_else(|| UploadError::protocol("checkIn without cmis:objectId"))
                })
                .map_err(|e| versions::step_error(s, e))?;
        }
        Ok(())
    }

    /// The versions of the series `id` belongs to, newest first as the binding lists them
    /// (a private working copy included when one exists).
    pub(super) async fn all_versions(&self, id: &str) -> Result<Option<Vec<Value>>, String> {
        let req = self
            .conn
            .client
            .get(&self.root_folder_url)
            .query(&[
                ("objectId", id),
                ("cmisselector", "versions"),
                ("succinct", "true"),
            ])
            .header(AUTHORIZATION, self.header());
        Ok(readback::read_json(req, error_message)
            .await?
            .map(|v| v.as_array().cloned().unwrap_or_default()))
    }

    /// A stored series found after a stop: a check-out the stop left open is cancelled, then
    /// its latest version (what the next one is checked in onto) and how many it has.
    pub(super) async fn series(
        &self,
        id: &str,
        header: &reqwest::header::HeaderValue,
    ) -> Result<(String, usize), UploadError> {
        let list = |id: String| async move {
            self.all_versions(&id)
                .await
                .map_err(UploadError::protocol)
                .map(Option::unwrap_or_default)
        };
        let mut all = list(id.to_string()).await?;
        if let Some(pwc) = all
            .iter()
            .find(|v| prop(v, "cmis:isPrivateWorkingCopy").as_bool() == Some(true))
            .and_then(object_id)
        {
            self.call(self.action(&pwc, &[("cmisaction", "cancelCheckOut")], header))
                .await?;
            all = list(id.to_string()).await?;
        }
        let Some(latest) = all.first().and_then(object_id) else {
            return Err(UploadError::protocol(format!("{id}: no versions listed")));
        };
        Ok((latest, all.len()))
    }

    /// Every version of a document, oldest first: `cmisselector=versions`, each version's
    /// content by its own object id; `name` is its `cmis:versionLabel`.
    pub(super) async fn version_list(&self, id: &str) -> Result<Option<Vec<Version>>, String> {
        let Some(mut all) = self.all_versions(id).await? else {
            return Ok(None);
        };
        all.retain(|v| prop(v, "cmis:isPrivateWorkingCopy").as_bool() != Some(true));
        all.reverse();
        let mut out = Vec::with_capacity(all.len());
        for v in all {
            let vid = object_id(&v).ok_or("a version without cmis:objectId")?;
            out.push(Version {
                name: prop(&v, "cmis:versionLabel")
                    .as_str()
                    .unwrap_or(&vid)
                    .to_string(),
                content: self
                    .conn
                    .client
                    .get(&self.root_folder_url)
                    .query(&[("objectId", vid.as_str()), ("cmisselector", "content")]),
                props: v["succinctProperties"].clone(),
                id: vid,
            });
        }
        Ok(Some(out))
    }
}
