//! The one upload of every API, and what follows an ambiguous failure (looking the document
//! up, completing its versions), written once over [`Api`]. An upload is: the API's
//! multipart head and the document's body, sent on the worker's route, counted as created
//! only on the API's documented status with the new id read from the answer, then the
//! document's later versions when it has any; an expired login is renewed once and the
//! upload sent again. Nothing here formats or locks per upload.

use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};

use super::multipart::{first_body, multipart_content_type};
use super::{Api, Protocol, Uploaded, WorkerState, folders, versions};
use crate::fixtures::Doc;
use crate::metrics::UploadError;

impl<A: Api> Protocol for A {
    async fn read(
        &self,
        op: super::reads::ReadOp,
        target: &str,
    ) -> Result<super::reads::ReadDone, UploadError> {
        super::reads::read(self, op, target).await
    }
    fn skipped_reads(&self) -> Vec<(super::reads::ReadOp, String)> {
        self.reads_unsupported()
    }
    async fn upload(
        &self,
        doc: &Doc<'_>,
        folder: &str,
        worker: &mut WorkerState,
    ) -> Result<Uploaded, UploadError> {
        self.before_upload(&worker.auth).await?;
        let steps = versions::of(doc);
        let first = steps.as_deref().and_then(<[_]>::first);
        let mut renewed = false;
        loop {
            let head = self.upload_head(doc, folder, first, &mut worker.scratch)?;
            let body = first_body(doc, head, first)?;
            let header = worker.auth.header().clone();
            let seen = worker.auth.generation;
            let path = self.upload_path(folder, &mut worker.folder_path);
            let conn = self.conn();
            let (status, node, answer) = conn
                .opts
                .route
                .send_upload(
                    &conn.client,
                    &mut worker.lane,
                    || self.upload_url(folder),
                    path,
                    &[
                        (AUTHORIZATION, &header),
                        (CONTENT_TYPE, &multipart_content_type()),
                    ],
                    body,
                )
                .await?;
            match status {
                s if s == A::CREATED.0 => {
                    let id = A::created_id(&answer)?;
                    if let Some(steps) = &steps {
                        self.add_versions(&id, doc, steps, 1, worker).await?;
                    }
                    return Ok(Uploaded { id, node });
                }
                s if !renewed && self.expired() == Some(s) => {
                    renewed = true;
                    self.renew(seen).await?;
                }
                s if s.is_success() => {
                    return Err(UploadError::protocol(format!(
                        "{} instead of {}",
                        s.as_u16(),
                        A::CREATED.1
                    )));
                }
                s => {
                    let message = A::ERROR_MESSAGE(s.as_u16(), &answer);
                    return Err(UploadError::http(A::failure_status(s, &message), message));
                }
            }
        }
    }

    async fn lookup(&self, doc: &Doc<'_>, folder: &str) -> Result<Option<String>, UploadError> {
        let req = self.conn().authed(self.lookup_request(doc, folder)?);
        let ok = |s| matches!(s, StatusCode::OK | StatusCode::NOT_FOUND);
        match super::expect(req, ok, A::ERROR_MESSAGE).await? {
            (StatusCode::OK, body) => A::found_id(&body),
            _ => Ok(None),
        }
    }

    async fn prepare_folder(&self, path: &str) -> anyhow::Result<String> {
        folders::prepare(self, path).await
    }

    /// After `lookup` adopted a stored document with versions: the steps after the ones it
    /// has are uploaded (they went up in order).
    async fn complete(
        &self,
        doc: &Doc<'_>,
        id: &str,
        worker: &mut WorkerState,
    ) -> Result<(), UploadError> {
        let Some(steps) = versions::of(doc) else {
            return Ok(());
        };
        let (onto, have) = self.stored_versions(id, worker).await?;
        self.add_versions(&onto, doc, &steps, have.max(1), worker)
            .await
    }

    fn worker(&self) -> WorkerState {
        WorkerState::new(self.conn().auth.cache())
    }
}

/// What [`Api::stored_versions`] is for an API that keeps a document's versions under its
/// own id: that id, and how long its `history` is (none when it is gone).
pub fn versioned_in_place(
    id: &str,
    history: Result<Option<Vec<serde_json::Value>>, String>,
) -> Result<(String, usize), UploadError> {
    let have = history
        .map_err(UploadError::protocol)?
        .map_or(0, |h| h.len());
    Ok((id.to_string(), have))
}
