//! The upload manifest: one JSON line per document attempted (run, name, folder, server id,
//! size, sha256, or the error), written beside the results for later verification. Workers
//! buffer lines locally and append whole buffers, so there is no lock per upload.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::fixtures::Doc;
use crate::metrics::UploadError;

/// Small, so 100 workers hold at most ~1 MiB of unwritten lines (memory stays flat with N).
const FLUSH_AT: usize = 8 * 1024;

/// One manifest line.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct ManifestEntry {
    /// The sweep cell (method_connection_size_tN), absent for `run`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cell: Option<String>,
    pub run: u32,
    pub index: u64,
    pub name: String,
    /// Folder path relative to the parent given with `--parent`.
    pub folder: String,
    pub ok: bool,
    /// The repository's id (absent when the upload failed).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub id: Option<String>,
    pub size: u64,
    pub sha256: String,
    pub mime: String,
    pub marker: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// The same line, borrowed: what workers serialize (no per-upload string copies).
#[derive(Serialize)]
struct EntryRef<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cell: Option<&'a str>,
    run: u32,
    index: u64,
    name: &'a str,
    folder: &'a str,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    size: u64,
    sha256: &'a str,
    mime: &'a str,
    marker: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

#[derive(Clone)]
pub struct Manifest {
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

impl Manifest {
    pub fn create(path: &Path) -> Result<Manifest> {
        let file = File::options()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| {
                format!(
                    "cannot write the manifest {} (check --results-dir)",
                    path.display()
                )
            })?;
        Ok(Manifest {
            path: path.to_path_buf(),
            file: Arc::new(Mutex::new(file)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn writer(&self, cell: Option<Arc<str>>) -> Writer {
        Writer {
            file: self.file.clone(),
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            cell,
        }
    }

    pub fn flush(&self) -> Result<()> {
        self.file
            .lock()
            .expect("manifest")
            .flush()
            .with_context(|| format!("writing {}", self.path.display()))
    }

    pub fn read(path: &Path) -> Result<Vec<ManifestEntry>> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the manifest {}", path.display()))?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .with_context(|| format!("{}:{}: not a manifest line", path.display(), i + 1))
            })
            .collect()
    }
}

/// A worker's buffered manifest writer.
pub struct Writer {
    file: Arc<Mutex<File>>,
    buf: Vec<u8>,
    cell: Option<Arc<str>>,
}

impl Writer {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        run: u32,
        doc: &Doc<'_>,
        folder: &str,
        ok: bool,
        id: Option<&str>,
        node: Option<&str>,
        error: Option<&str>,
    ) {
        let sha = doc.template.sha256_hex(&doc.marker);
        let e = EntryRef {
            cell: self.cell.as_deref(),
            run,
            index: doc.index,
            name: &doc.name,
            folder,
            ok,
            id,
            size: doc.template.doc_len(),
            sha256: &sha,
            mime: doc.template.kind.mime_type(),
            marker: doc.marker_str(),
            node,
            error,
        };
        serde_json::to_writer(&mut self.buf, &e).expect("serialize to memory");
        self.buf.push(b'\n');
        if self.buf.len() >= FLUSH_AT {
            self.write_out();
        }
    }

    pub fn ok(&mut self, run: u32, doc: &Doc<'_>, folder: &str, id: &str, node: Option<&str>) {
        self.push(run, doc, folder, true, Some(id), node, None);
    }

    pub fn failed(&mut self, run: u32, doc: &Doc<'_>, folder: &str, err: &UploadError) {
        let status = err.status.map(|s| format!(" {s}")).unwrap_or_default();
        let msg = format!("{}{status}: {}", err.class.name(), err.message);
        self.push(run, doc, folder, false, None, None, Some(&msg));
    }

    fn write_out(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        // A manifest that cannot be written must not stop the measurement; the final
        // flush reports the I/O error.
        let _ = self.file.lock().expect("manifest").write_all(&self.buf);
        self.buf.clear();
    }

    pub fn finish(&mut self) {
        self.write_out();
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.write_out();
    }
}
