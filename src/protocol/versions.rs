//! What the three APIs share when a corpus document has version files: the order its
//! contents go up in (`.v1`, `.v2`, …, then the head file), the shadow metadata each step
//! carries (its own `.metadata.properties.xml.vN`, else the head's), the raw body of a step,
//! and what a read-back version looks like. Only corpus documents with `.vN` files come here:
//! a fixture or a file without versions never does, so the upload hot path is unchanged.

use bytes::Bytes;

use crate::fixtures::{Doc, SampledFile, ShadowMetadata};
use crate::metrics::{ErrorClass, UploadError};
use crate::transport::ChunkBody;

/// One content of a versioned document: version `k` of `n` (0-based; `k == n - 1` is the
/// head file).
#[derive(Clone, Copy)]
pub struct Step<'a> {
    pub k: usize,
    pub n: usize,
    pub path: &'a std::path::Path,
    pub size: u64,
    /// The source's number (`1`, `2.1`), `head` for the head file.
    pub label: &'a str,
    /// Its metadata: its own shadow file, else the head's.
    pub shadow: Option<&'a ShadowMetadata>,
}

impl Step<'_> {
    pub fn is_head(&self) -> bool {
        self.k + 1 == self.n
    }
    /// A major version unless the source numbers it as a minor one (`2.1`).
    pub fn major(&self) -> bool {
        self.is_head() || !self.label.contains('.') || self.label.ends_with(".0")
    }
    /// The version comment sent with it.
    pub fn comment(&self) -> String {
        if self.is_head() {
            "ingestbench: head file".to_string()
        } else {
            format!("ingestbench: version {} of the source", self.label)
        }
    }
    /// The step's bytes as a raw request body (streamed from disk when large).
    pub fn body(&self) -> Result<ChunkBody, UploadError> {
        ChunkBody::file(Bytes::new(), self.path, self.size, Bytes::new()).map_err(|e| io(self, e))
    }
}

fn io(s: &Step<'_>, e: std::io::Error) -> UploadError {
    UploadError {
        class: ErrorClass::Io,
        status: None,
        message: format!("{}: {e}", s.path.display()),
    }
}

/// Every content of `f`, oldest first, the head last.
pub fn steps(f: &SampledFile) -> Vec<Step<'_>> {
    let n = f.versions.len() + 1;
    let head_shadow = f.shadow.as_ref();
    let mut out: Vec<Step<'_>> = f
        .versions
        .iter()
        .enumerate()
        .map(|(k, v)| Step {
            k,
            n,
            path: &v.path,
            size: v.record.size,
            label: &v.record.label,
            shadow: v.shadow.as_ref().or(head_shadow),
        })
        .collect();
    out.push(Step {
        k: n - 1,
        n,
        path: &f.path,
        size: f.size,
        label: "head",
        shadow: head_shadow,
    });
    out
}

/// The document's steps when it has versions (a corpus file with `.vN` files), else None.
pub fn of<'a>(doc: &'a Doc<'_>) -> Option<Vec<Step<'a>>> {
    doc.file().filter(|f| !f.versions.is_empty()).map(steps)
}

/// A step's shadow properties as a JSON object: an array for a property `profile` says is
/// multi-valued, else the value as written (commas and all).
pub fn properties_json(
    s: &ShadowMetadata,
    profile: &crate::fixtures::Profile,
) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (name, values) in &s.properties {
        let v = if profile.multiple(name) {
            serde_json::Value::Array(
                values
                    .iter()
                    .map(|x| serde_json::Value::String(x.clone()))
                    .collect(),
            )
        } else {
            serde_json::Value::String(values.join(","))
        };
        m.insert(name.clone(), v);
    }
    serde_json::Value::Object(m)
}

/// Did the metadata change from the previous step (so it must be sent again)?
pub fn metadata_changed(prev: Option<&ShadowMetadata>, cur: Option<&ShadowMetadata>) -> bool {
    match (prev, cur) {
        (_, None) => false,
        (Some(a), Some(b)) => a.properties != b.properties,
        (None, Some(b)) => !b.properties.is_empty(),
    }
}

/// An error of a step after the first: which version failed, for the manifest and results.
pub fn step_error(s: &Step<'_>, e: UploadError) -> UploadError {
    UploadError {
        message: format!(
            "version {} ({} of {}): {}",
            s.label,
            s.k + 1,
            s.n,
            e.message
        ),
        ..e
    }
}
