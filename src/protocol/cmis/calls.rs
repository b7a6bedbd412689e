//! The CMIS requests besides a plain create: the profile's properties as indexed form
//! controls (shared with `upload`), a `cmisaction` call and its JSON answer, and a versioned
//! document's steps: check-out / check-in of each later version (OpenCMIS InMemory does not
//! version on `setContentStream`), the version list read back (`cmisselector=versions`), and
//! completing a document a stop left between versions. Split from `cmis.rs` for its size.

use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

use super::{Cmis, error_message, form, object_id};
use crate::fixtures::Doc;
use crate::metrics::UploadError;
use crate::protocol::multipart::{MultipartHead, first_body, multipart_content_type};
use crate::protocol::{WorkerState, versions};

/// A version's succinct property.
pub(super) fn prop<'a>(v: &'a Value, name: &str) -> &'a Value {
    &v["succinctProperties"][name]
}

impl Cmis {
    /// The profile's properties as indexed controls from `propertyId[offset]` on, a
    /// multi-valued one as `propertyValue[i][j]`; values from `shadow` where the profile maps
    /// them. At offset 2 (an upload, after the type and the name) the names made at connect
    /// time are used, so an upload formats none.
    pub(super) fn write_properties(
        &self,
        head: &mut MultipartHead,
        doc: &Doc<'_>,
        shadow: Option<&crate::fixtures::ShadowMetadata>,
        offset: usize,
    ) {
        let profile = &self.opts.profile;
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

    /// Sends one browser-binding call; anything but 200/201 is the failure.
    pub(super) async fn call(&self, req: reqwest::RequestBuilder) -> Result<Value, UploadError> {
        let resp = req.send().await.map_err(|e| UploadError::transport(&e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| UploadError::transport(&e))?;
        if !matches!(status, StatusCode::OK | StatusCode::CREATED) {
            return Err(UploadError::http(
                status.as_u16(),
                error_message(status.as_u16(), &bytes),
            ));
        }
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
        self.client
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
    pub(super) async fn add_versions(
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
            .client
            .get(&self.root_folder_url)
            .query(&[
                ("objectId", id),
                ("cmisselector", "versions"),
                ("succinct", "true"),
            ])
            .header(AUTHORIZATION, self.header());
        Ok(crate::protocol::readback::read_json(req, error_message)
            .await?
            .map(|v| v.as_array().cloned().unwrap_or_default()))
    }

    /// Uploads the versions a document adopted after a stop still lacks: a check-out the
    /// stop left open is cancelled first, then the steps after the versions it has go up.
    pub async fn complete_versions(
        &self,
        doc: &Doc<'_>,
        id: &str,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        let Some(steps) = versions::of(doc) else {
            return Ok(());
        };
        let header = worker.auth.header().clone();
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
            self.call(self.action(&pwc, &[("cmisaction", "cancelCheckOut")], &header))
                .await?;
            all = list(id.to_string()).await?;
        }
        let Some(latest) = all.first().and_then(object_id) else {
            return Err(UploadError::protocol(format!("{id}: no versions listed")));
        };
        self.add_versions(&latest, doc, &steps, all.len().max(1), &header)
            .await
    }

    /// Every version of a document, oldest first: `cmisselector=versions`, then each
    /// version's content by its own object id; `name` is its `cmis:versionLabel`.
    pub async fn fetch_versions(
        &self,
        id: &str,
    ) -> Result<Option<Vec<crate::protocol::Fetched>>, String> {
        let Some(mut all) = self.all_versions(id).await? else {
            return Ok(None);
        };
        all.retain(|v| prop(v, "cmis:isPrivateWorkingCopy").as_bool() != Some(true));
        all.reverse();
        let mut out = Vec::with_capacity(all.len());
        for v in all {
            let vid = object_id(&v).ok_or("a version without cmis:objectId")?;
            let content = crate::protocol::readback::read(
                self.client
                    .get(&self.root_folder_url)
                    .query(&[("objectId", vid.as_str()), ("cmisselector", "content")])
                    .header(AUTHORIZATION, self.header()),
                error_message,
            )
            .await?
            .ok_or_else(|| format!("version {vid}: content not found"))?;
            out.push(crate::protocol::readback::fetched(
                prop(&v, "cmis:versionLabel").as_str().unwrap_or(&vid),
                &content,
                &v["succinctProperties"],
            ));
        }
        Ok(Some(out))
    }
}
