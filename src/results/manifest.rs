//! The upload manifest: one JSON line per document attempted (run, name, folder, server id,
//! size, sha256, or the error), written beside the results for later verification. Workers
//! buffer lines locally and append whole buffers, so there is no lock per upload.
//! The tests compare the hand-written line writer with serde's output.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::fixtures::Doc;
use crate::metrics::UploadError;

/// Small, so 100 workers hold at most ~1 MiB of unwritten lines (memory stays flat with N).
const FLUSH_AT: usize = 8 * 1024;

/// A worker writes its buffered lines once they are this old (checked after each upload), so
/// a hard kill loses at most this much of each worker's acknowledged documents, plus the line
/// of an upload that completes while its next one is in flight.
pub const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

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
    /// The real file uploaded (`run --corpus DIR`), absent for generated documents.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<String>,
    /// A warm-up document (uploaded before the run's start, not measured).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub warmup: bool,
    /// A corpus document's earlier versions (its `.vN` files), oldest first, uploaded before
    /// the head (whose size and hash are the line's own). A line is written only once the
    /// head is stored: a document stopped between versions has none (see docs/verify-and-cleanup.md).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub versions: Vec<crate::fixtures::VersionRecord>,
}

/// A document's versions as a manifest line lists them (borrowed from the sampled file).
struct VersionsRef<'a>(&'a [crate::fixtures::SampledVersion]);

impl Serialize for VersionsRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for v in self.0 {
            seq.serialize_element(&v.record)?;
        }
        seq.end()
    }
}

impl VersionsRef<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The same line, borrowed: what workers write (no per-upload string copies), with
/// [`EntryRef::write_json`]; the derived `Serialize` is the reference it is tested against.
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
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    warmup: bool,
    #[serde(skip_serializing_if = "VersionsRef::is_empty")]
    versions: VersionsRef<'a>,
}

impl EntryRef<'_> {
    /// Appends the entry as one JSON object, byte for byte what serde_json writes for it (a
    /// property test holds the two equal), without serde's per-field machinery: this runs
    /// once per upload, on the worker's hot path.
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut n = itoa::Buffer::new();
        out.push(b'{');
        if let Some(c) = self.cell {
            field(out, b"\"cell\":", c);
            out.push(b',');
        }
        out.extend_from_slice(b"\"run\":");
        out.extend_from_slice(n.format(self.run).as_bytes());
        out.extend_from_slice(b",\"index\":");
        out.extend_from_slice(n.format(self.index).as_bytes());
        field(out, b",\"name\":", self.name);
        field(out, b",\"folder\":", self.folder);
        out.extend_from_slice(if self.ok {
            b",\"ok\":true"
        } else {
            b",\"ok\":false"
        });
        if let Some(id) = self.id {
            field(out, b",\"id\":", id);
        }
        out.extend_from_slice(b",\"size\":");
        out.extend_from_slice(n.format(self.size).as_bytes());
        field(out, b",\"sha256\":", self.sha256);
        field(out, b",\"mime\":", self.mime);
        field(out, b",\"marker\":", self.marker);
        for (key, v) in [
            (&b",\"node\":"[..], self.node),
            (b",\"error\":", self.error),
            (b",\"source\":", self.source),
        ] {
            if let Some(v) = v {
                field(out, key, v);
            }
        }
        if self.warmup {
            out.extend_from_slice(b",\"warmup\":true");
        }
        if !self.versions.is_empty() {
            out.extend_from_slice(b",\"versions\":[");
            for (i, v) in self.versions.0.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                field(out, b"{\"label\":", &v.record.label);
                out.extend_from_slice(b",\"size\":");
                out.extend_from_slice(n.format(v.record.size).as_bytes());
                field(out, b",\"sha256\":", &v.record.sha256);
                out.push(b'}');
            }
            out.push(b']');
        }
        out.push(b'}');
    }
}

/// `key` then `v` as a JSON string: copied as it is when nothing in it needs escaping (what
/// serde_json escapes: control characters, `"` and `\`), else escaped by serde_json.
fn field(out: &mut Vec<u8>, key: &[u8], v: &str) {
    out.extend_from_slice(key);
    if v.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(v.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(&mut *out, v).expect("serialize to memory");
    }
}

/// The manifest file, shared by all workers. The first write error is kept (never dropped):
/// workers stop starting uploads when they see it and the command exits 2 naming the file.
#[derive(Clone)]
pub struct Manifest {
    shared: Arc<Shared>,
}

struct Shared {
    path: PathBuf,
    file: Mutex<File>,
    /// The first write error, with the file's name.
    error: OnceLock<String>,
    /// Bytes appended since the last [`kick_writeback`] (approximate under concurrency: a
    /// kick more or less changes nothing).
    unkicked: AtomicU64,
    /// The file's descriptor, for the kick; valid as long as `file` lives.
    fd: std::os::fd::RawFd,
}

/// Appended bytes after which the kernel is asked to start writing them out.
const KICK_AT: u64 = 256 * 1024;

/// Starts writing the file's dirty pages out now, without waiting for them. Left to the
/// kernel, an appended file's pages go out all at once about 30 s after its first unwritten
/// append (write-back expires per file): a sweep's manifest grows ~1.2 MB/s, so every 30 s
/// ~37 MB were written in one burst in the middle of a run on these same cores (vmstat
/// during the quick start). Kicked every 256 KiB, they go out in small pieces as they come.
/// Also sooner on disk. Not a sync: durability is `flush`'s.
fn kick_writeback(fd: std::os::fd::RawFd) {
    // SAFETY: a descriptor `Shared` keeps open; offset 0, length 0 = to the end of the file.
    unsafe {
        libc::sync_file_range(fd, 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

impl Shared {
    fn write(&self, buf: &[u8]) {
        if self.error.get().is_some() {
            return;
        }
        let r = self.file.lock().expect("manifest").write_all(buf);
        // Outside the lock: the kick may wait for the device's queue, the other workers not.
        if r.is_ok() && self.unkicked.fetch_add(buf.len() as u64, Ordering::Relaxed) >= KICK_AT {
            self.unkicked.store(0, Ordering::Relaxed);
            kick_writeback(self.fd);
        }
        if let Err(e) = r {
            let _ = self.error.set(format!(
                "cannot write the manifest {}: {e}; uploads stopped (free space or fix the directory, then finish with --resume)",
                self.path.display()
            ));
        }
    }
}

/// Makes an existing manifest end with a whole line (see `Manifest::create`): reads back from
/// the end only as far as the last newline, so a large manifest costs a few reads.
fn end_on_a_line(file: &mut File) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    let mut tail = Vec::new();
    let mut start = len;
    let newline = loop {
        if start == 0 {
            break None;
        }
        let from = start.saturating_sub(8192);
        let mut chunk = vec![0; (start - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&tail);
        tail = chunk;
        start = from;
        if let Some(i) = memchr::memrchr(b'\n', &tail) {
            break Some(start + i as u64);
        }
    };
    let cut = newline.map_or(0, |i| i + 1);
    if cut == len {
        return Ok(());
    }
    let last = &tail[(cut - start) as usize..];
    if serde_json::from_slice::<ManifestEntry>(last).is_ok() {
        file.write_all(b"\n")
    } else {
        file.set_len(cut)
    }
}

impl Manifest {
    /// Opens the manifest for appending (a resumed run goes on after the lines it has). A last
    /// line a hard stop cut short is cut off first, so the next line starts on its own line;
    /// a complete last line without its newline gets one.
    pub fn create(path: &Path) -> Result<Manifest> {
        let ctx = || {
            format!(
                "cannot write the manifest {} (check --results-dir)",
                path.display()
            )
        };
        let mut file = File::options()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .with_context(ctx)?;
        end_on_a_line(&mut file).with_context(ctx)?;
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        Ok(Manifest {
            shared: Arc::new(Shared {
                path: path.to_path_buf(),
                fd,
                file: Mutex::new(file),
                error: OnceLock::new(),
                unkicked: AtomicU64::new(0),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    pub fn writer(&self, cell: Option<Arc<str>>) -> Writer {
        Writer {
            shared: self.shared.clone(),
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            cell,
            written_at: std::time::Instant::now(),
            warmup: false,
        }
    }

    /// True once a write has failed (read by workers before each upload: one atomic load).
    pub fn broken(&self) -> bool {
        self.shared.error.get().is_some()
    }

    /// The first write error, with what to do.
    pub fn error(&self) -> Option<&str> {
        self.shared.error.get().map(String::as_str)
    }

    /// Makes what was written durable, and reports the first write error if there was one.
    pub fn flush(&self) -> Result<()> {
        if let Some(e) = self.shared.error.get() {
            bail!("{e}");
        }
        let file = self.shared.file.lock().expect("manifest");
        if let Err(e) = file.sync_data() {
            // A file that cannot be synced (a pipe, /dev/null) has still had every line written.
            if e.kind() != std::io::ErrorKind::InvalidInput {
                let _ = self.shared.error.set(format!(
                    "cannot write the manifest {}: {e}; uploads stopped (free space or fix the directory, then finish with --resume)",
                    self.shared.path.display()
                ));
                bail!("{}", self.shared.error.get().expect("just set"));
            }
        }
        Ok(())
    }

    pub fn read(path: &Path) -> Result<Vec<ManifestEntry>> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the manifest {}", path.display()))?;
        // A hard stop can cut the last line short: it is skipped (its document is found on
        // the server by --resume). Any other bad line is an error.
        let (body, torn) = match text.rfind('\n') {
            Some(i) if i + 1 < text.len() => (&text[..=i], Some(&text[i + 1..])),
            None if !text.is_empty() => ("", Some(text.as_str())),
            _ => (text.as_str(), None),
        };
        if let Some(t) = torn
            && serde_json::from_str::<ManifestEntry>(t).is_err()
        {
            eprintln!(
                "warning: {}: the last line is cut short (a hard stop while writing); skipped",
                path.display()
            );
        }
        let complete = torn.and_then(|t| serde_json::from_str::<ManifestEntry>(t).ok());
        let mut out: Vec<ManifestEntry> = body
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .with_context(|| format!("{}:{}: not a manifest line", path.display(), i + 1))
            })
            .collect::<Result<_>>()?;
        out.extend(complete);
        Ok(out)
    }
}

/// A worker's buffered manifest writer.
pub struct Writer {
    shared: Arc<Shared>,
    buf: Vec<u8>,
    cell: Option<Arc<str>>,
    /// When the buffer was last written out.
    written_at: std::time::Instant,
    /// Lines of warm-up documents.
    warmup: bool,
}

impl Writer {
    /// This writer's lines are warm-up documents.
    pub fn warmup(mut self) -> Writer {
        self.warmup = true;
        self
    }

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
        let sha = doc.sha256_hex();
        let source = doc.file().map(|f| f.path.to_string_lossy());
        let e = EntryRef {
            cell: self.cell.as_deref(),
            run,
            index: doc.index,
            name: &doc.name,
            folder,
            ok,
            id,
            size: doc.len(),
            sha256: sha.as_str(),
            mime: doc.mime(),
            marker: doc.marker_str(),
            node,
            error,
            source: source.as_deref(),
            warmup: self.warmup,
            versions: VersionsRef(doc.versions()),
        };
        e.write_json(&mut self.buf);
        self.buf.push(b'\n');
        if self.buf.len() >= FLUSH_AT || self.written_at.elapsed() >= FLUSH_EVERY {
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
        // A failed write is kept in `Shared::error`: the worker stops before its next upload
        // and the command reports it; the lines of this buffer are lost with the disk.
        self.shared.write(&self.buf);
        self.buf.clear();
        self.written_at = std::time::Instant::now();
    }

    /// True once any writer's write failed: stop starting uploads.
    pub fn broken(&self) -> bool {
        self.shared.error.get().is_some()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk (`/dev/full` answers every write with ENOSPC): the error is kept, named
    /// with the file, and reported by `flush`; nothing is dropped silently.
    #[test]
    fn a_failed_write_is_kept_and_reported() {
        let m = Manifest::create(Path::new("/dev/full")).expect("open /dev/full");
        let mut w = m.writer(None);
        assert!(!w.broken());
        w.buf.extend(std::iter::repeat_n(b'x', FLUSH_AT));
        w.finish();
        assert!(w.broken() && m.broken());
        let e = m
            .flush()
            .expect_err("flush reports the write error")
            .to_string();
        assert!(e.contains("/dev/full"), "{e}");
        assert!(e.contains("No space left on device"), "{e}");
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_others_are_errors() {
        let dir = std::env::temp_dir().join(format!("ib-torn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("m.jsonl");
        let line = r#"{"run":1,"index":0,"name":"a","folder":"f","ok":true,"id":"x","size":1,"sha256":"s","mime":"m","marker":"k"}"#;
        std::fs::write(&p, format!("{line}\n{}", &line[..40])).unwrap();
        assert_eq!(Manifest::read(&p).unwrap().len(), 1);
        std::fs::write(&p, format!("{line}\n{line}")).unwrap();
        assert_eq!(
            Manifest::read(&p).unwrap().len(),
            2,
            "a complete last line without newline"
        );
        std::fs::write(&p, format!("garbage\n{line}\n")).unwrap();
        assert!(Manifest::read(&p).is_err());
        // A resumed run appends after the lines a stopped one left: a torn last line is cut
        // off (also one longer than a read-back chunk), a complete one gets its newline.
        let long = format!("{line}\n{{\"name\":\"{}", "x".repeat(20_000));
        for (before, lines) in [
            (format!("{line}\n{}", &line[..40]), 2),
            (long, 2),
            (line[..40].to_string(), 1),
            (format!("{line}\n{line}"), 3),
            (String::new(), 1),
        ] {
            std::fs::write(&p, &before).unwrap();
            let m = Manifest::create(&p).unwrap();
            let mut w = m.writer(None);
            w.buf.extend_from_slice(line.as_bytes());
            w.buf.push(b'\n');
            drop(w);
            m.flush().unwrap();
            let text = std::fs::read_to_string(&p).unwrap();
            assert_eq!(
                Manifest::read(&p).unwrap().len(),
                lines,
                "{before:.60}: {text:.200}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The escapes a property test once found wrong, kept as fixed cases (a regression file
    /// would add a folder at the repository's top level).
    #[test]
    fn escaped_fields_are_what_serde_writes() {
        let versions: Vec<crate::fixtures::SampledVersion> = ["1", "2\"x"]
            .iter()
            .map(|l| crate::fixtures::SampledVersion {
                record: crate::fixtures::VersionRecord {
                    label: l.to_string(),
                    size: 7,
                    sha256: "ab".into(),
                },
                path: "p".into(),
                shadow: None,
            })
            .collect();
        for v in ["\\", "a\"b", "tab\there", "\u{1}", "é – ok", ""] {
            let e = EntryRef {
                cell: Some(v),
                run: 1,
                index: 2,
                name: v,
                folder: v,
                ok: false,
                id: None,
                size: 3,
                sha256: "ab",
                mime: "text/plain",
                marker: "m",
                node: None,
                error: Some(v),
                source: Some(v),
                warmup: true,
                versions: VersionsRef(&versions),
            };
            let mut ours = Vec::new();
            e.write_json(&mut ours);
            assert_eq!(ours, serde_json::to_vec(&e).unwrap(), "{v:?}");
        }
    }

    proptest::proptest! {
        /// The hand-written line is exactly serde_json's, escapes and absent fields included.
        #[test]
        fn the_line_is_what_serde_writes(
            cell in proptest::option::of(".{0,12}"),
            run in proptest::prelude::any::<u32>(),
            index in proptest::prelude::any::<u64>(),
            name in "\\PC{0,20}|[\"\\\\\u{0}-\u{1f}\u{7f}é]{0,6}",
            folder in ".{0,20}",
            ok in proptest::prelude::any::<bool>(),
            id in proptest::option::of("[a-f0-9-]{0,36}|\\PC{0,8}"),
            size in proptest::prelude::any::<u64>(),
            node in proptest::option::of(".{0,8}"),
            error in proptest::option::of("(\\PC|[\"\\\\\n\t]){0,30}"),
            source in proptest::option::of(".{0,20}"),
            warmup in proptest::prelude::any::<bool>(),
        ) {
            let e = EntryRef {
                cell: cell.as_deref(),
                run,
                index,
                name: &name,
                folder: &folder,
                ok,
                id: id.as_deref(),
                size,
                sha256: "ab12",
                mime: "application/pdf",
                marker: "c712040d91a436a0-000000000000",
                node: node.as_deref(),
                error: error.as_deref(),
                source: source.as_deref(),
                warmup,
                versions: VersionsRef(&[]),
            };
            let mut ours = Vec::new();
            e.write_json(&mut ours);
            let theirs = serde_json::to_vec(&e).unwrap();
            proptest::prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(theirs).unwrap());
        }
    }

    #[test]
    fn a_good_file_flushes_cleanly() {
        let dir = std::env::temp_dir().join(format!("ib-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = Manifest::create(&dir.join("manifest.jsonl")).unwrap();
        let mut w = m.writer(None);
        w.buf.extend_from_slice(b"{}\n");
        w.finish();
        assert!(!m.broken());
        m.flush().unwrap();
        assert_eq!(std::fs::read(dir.join("manifest.jsonl")).unwrap(), b"{}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
