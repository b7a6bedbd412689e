//! `--jtl FILE`: one line per measured upload in JMeter's JTL CSV format, so JMeter's own
//! dashboard generator (`jmeter -g FILE -o DIR`) and the tools built around JTL files read
//! ingestbench's runs. Workers keep their samples as plain numbers in a local batch and hand
//! a full batch (512 samples) to one writer thread; all formatting and file I/O happen there,
//! never on the upload path. Owns the format and the writer; knows nothing of protocols.
//!
//! Columns (JMeter's default CSV header): timeStamp (ms since the Unix epoch when the
//! request started), elapsed (ms, the upload's latency as ingestbench measures it), label
//! (the cell: `<method>_<connection>_<size>_t<threads>`), responseCode (the HTTP status, or
//! `Non HTTP response code: <class>`), responseMessage, threadName (`<label> 1-<worker>`),
//! dataType, success, failureMessage, bytes (received: not measured, 0), sentBytes (the
//! document's bytes), grpThreads and allThreads (the cell's workers), URL, Latency (= elapsed:
//! ingestbench does not split off the time to the first byte), IdleTime, Connect (0).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::ErrorClass;

/// JMeter's default CSV header, in its order.
pub const HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect";

/// Samples a worker collects before it hands them to the writer.
const BATCH: usize = 512;

/// One upload, as numbers.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub start: Instant,
    pub elapsed: Duration,
    /// `None` on success; else the failure's class and HTTP status.
    pub failure: Option<(ErrorClass, Option<u16>)>,
    pub sent_bytes: u64,
    /// The worker's global index (0-based).
    pub worker: u64,
}

/// What the samples of one batch share: their cell.
#[derive(Debug, Clone)]
pub struct Cell {
    pub label: Arc<str>,
    pub url: Arc<str>,
    pub threads: u64,
}

struct Batch {
    cell: Cell,
    samples: Vec<Sample>,
}

/// The open JTL file and its writer thread.
pub struct Jtl {
    tx: Option<SyncSender<Batch>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
    path: PathBuf,
}

impl std::fmt::Debug for Jtl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Jtl({})", self.path.display())
    }
}

impl Jtl {
    /// Creates `path` (replacing it) and writes the header.
    pub fn create(path: &Path) -> Result<Jtl> {
        let file = std::fs::File::create(path)
            .with_context(|| format!("--jtl {}: cannot create it", path.display()))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        writeln!(out, "{HEADER}").with_context(|| format!("--jtl {}", path.display()))?;
        // A bounded queue: a writer that cannot keep up (a full disk) holds workers back
        // rather than growing without limit.
        let (tx, rx) = sync_channel::<Batch>(256);
        let p = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("ib-jtl".into())
            .spawn(move || write_all(rx, out, &p))
            .context("starting the JTL writer")?;
        Ok(Jtl {
            tx: Some(tx),
            thread: Some(thread),
            path: path.to_path_buf(),
        })
    }

    /// Where the runs' workers send their samples.
    pub fn sink(&self) -> JtlSink {
        JtlSink {
            tx: self.tx.clone(),
        }
    }

    /// Waits for every batch handed over to be written, and flushes the file.
    pub fn finish(mut self) -> Result<()> {
        self.tx = None;
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => anyhow::bail!("--jtl {}: the writer crashed", self.path.display()),
            None => Ok(()),
        }
    }
}

/// A handle the runs keep, to give each worker its batch.
#[derive(Clone, Debug)]
pub struct JtlSink {
    tx: Option<SyncSender<Batch>>,
}

impl JtlSink {
    /// A worker's batch for `cell`.
    pub fn worker(&self, cell: Cell) -> WorkerJtl {
        WorkerJtl {
            tx: self.tx.clone(),
            cell,
            samples: Vec::with_capacity(BATCH),
        }
    }
}

/// One worker's samples not yet handed over; the rest go when it is dropped.
pub struct WorkerJtl {
    tx: Option<SyncSender<Batch>>,
    cell: Cell,
    samples: Vec<Sample>,
}

impl WorkerJtl {
    pub fn push(&mut self, s: Sample) {
        self.samples.push(s);
        if self.samples.len() >= BATCH {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        if self.samples.is_empty() {
            return;
        }
        let samples = std::mem::replace(&mut self.samples, Vec::with_capacity(BATCH));
        if let Some(tx) = &self.tx {
            // A writer that stopped (its error is reported by `finish`) drops the rest.
            let _ = tx.send(Batch {
                cell: self.cell.clone(),
                samples,
            });
        }
    }
}

impl Drop for WorkerJtl {
    fn drop(&mut self) {
        self.hand_over();
    }
}

/// The writer thread: formats every batch and writes it.
fn write_all(
    rx: Receiver<Batch>,
    mut out: std::io::BufWriter<std::fs::File>,
    path: &Path,
) -> Result<()> {
    // Instants become wall-clock times through one anchor taken here.
    let anchor = Instant::now();
    let anchor_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut line = String::with_capacity(256);
    for b in rx {
        for s in &b.samples {
            let ts = if s.start >= anchor {
                anchor_ms + (s.start - anchor).as_millis() as i64
            } else {
                anchor_ms - (anchor - s.start).as_millis() as i64
            };
            line.clear();
            format_line(&mut line, ts, &b.cell, s);
            out.write_all(line.as_bytes())
                .with_context(|| format!("--jtl {}", path.display()))?;
        }
    }
    out.flush()
        .and_then(|()| out.get_ref().sync_all())
        .with_context(|| format!("--jtl {}", path.display()))
}

/// One CSV line (with its newline). Labels and URLs hold no commas or quotes.
fn format_line(line: &mut String, ts_ms: i64, c: &Cell, s: &Sample) {
    use std::fmt::Write as _;
    let ms = s.elapsed.as_millis();
    let (code, message, ok, failure) = match s.failure {
        None => ("201".to_string(), "Created", true, String::new()),
        Some((class, Some(status))) => (
            status.to_string(),
            class.name(),
            false,
            format!("HTTP {status} ({})", class.name()),
        ),
        Some((class, None)) => (
            format!("Non HTTP response code: {}", class.name()),
            class.name(),
            false,
            format!("{} error", class.name()),
        ),
    };
    let _ = writeln!(
        line,
        "{ts_ms},{ms},{label},{code},{message},{label} 1-{worker},text,{ok},{failure},0,{sent},{t},{t},{url},{ms},0,0",
        label = c.label,
        worker = s.worker + 1,
        sent = s.sent_bytes,
        t = c.threads,
        url = c.url,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_follow_jmeters_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jtl");
        let jtl = Jtl::create(&path).unwrap();
        let cell = Cell {
            label: "direct_reuse_small_t2".into(),
            url: "http://127.0.0.1:1/alfresco".into(),
            threads: 2,
        };
        let now = Instant::now();
        {
            let mut w = jtl.sink().worker(cell.clone());
            for k in 0..1000u64 {
                w.push(Sample {
                    start: now,
                    elapsed: Duration::from_millis(k % 7),
                    failure: (k == 5).then_some((ErrorClass::Http5xx, Some(503))),
                    sent_bytes: 10_240,
                    worker: k % 2,
                });
            }
        }
        jtl.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(lines.len(), 1001);
        let cols = HEADER.split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == cols));
        assert!(lines[6].contains(",503,http_5xx,") && lines[6].contains(",false,HTTP 503"));
        assert!(
            lines[1].contains(",201,Created,direct_reuse_small_t2 1-1,text,true,,0,10240,2,2,")
        );
    }
}
