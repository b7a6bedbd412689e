//! One run of one cell: N documents over T workers that start together. Owns the quota split,
//! the start barrier, the workers, the recorder merge and the timing semantics, which live
//! here and only here:
//!
//! - **latency** of an upload: from just before the request is built to the end of reading
//!   the response body (request build, connect if any, send, server time, response);
//! - **a run** lasts from the barrier's release (all workers start together) to the last
//!   completion (success or failure) of any worker;
//! - **success**: the API's documented success status with the new id read from the body;
//! - **docs/sec across runs**: mean documents acknowledged per run divided by the mean run
//!   duration (= N / mean duration when nothing failed, the field practice), reported next
//!   to the mean ± σ of the per-run rates.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::sync::Barrier;
use tokio::time::Instant;

use crate::fixtures::Fixtures;
use crate::manifest::{Manifest, ManifestEntry, Writer};
use crate::metrics::{ErrorClass, Recorder};
use crate::protocol::Protocol;

/// Splits `docs` over `threads`: the first `docs % threads` workers get one more.
pub fn split_quota(docs: u64, threads: u64) -> Vec<u64> {
    let base = docs / threads;
    let extra = docs % threads;
    (0..threads).map(|i| base + u64::from(i < extra)).collect()
}

/// One cell's run as the engine executes it: what it needs besides the protocol and the
/// fixtures.
#[derive(Debug, Clone)]
pub struct CellPlan {
    pub docs: u64,
    pub threads: u64,
    pub docs_per_folder: u64,
    /// Folder of this cell below the parent, e.g. `ingestbench/20261122T001532Z-3fa1`.
    pub folder: String,
    /// Distinguishes the documents of one invocation from another's with the same seed.
    pub nonce: u64,
    /// Cell name written into the manifest (sweeps).
    pub tag: Option<Arc<str>>,
    /// Extra attempts per document after a retryable failure (0 = measure honestly).
    pub retries: u32,
    /// Part of a `--resume`: a name clash is a document an earlier, hard-stopped attempt
    /// stored (whether or not its manifest line survived), so it is looked up and adopted.
    pub resuming: bool,
    /// The client's connection counter, read before and after each run.
    pub connections: Option<crate::transport::ConnectionCounter>,
}

impl CellPlan {
    pub fn run_folder(&self, run: u32) -> String {
        format!("{}/run-{run}", self.folder)
    }
    fn run_tag(&self, run: u32) -> u64 {
        let mut r = crate::fixtures::Rng::new(
            self.nonce ^ u64::from(run).wrapping_mul(0xD6E8_FEB8_6659_FD93),
        );
        r.next_u64()
    }
}

/// Live counters the progress display reads on a timer; the stop flags workers check.
#[derive(Default)]
pub struct LiveCounters {
    pub done: AtomicU64,
    pub failed: AtomicU64,
    /// Set to stop workers before their next upload (fatal rejection, interrupt).
    pub stop: AtomicBool,
    /// Set by SIGINT/SIGTERM.
    pub interrupted: AtomicBool,
}

/// What one run of one cell measured.
pub struct RunMeasurement {
    pub run: u32,
    pub duration: Duration,
    pub recorder: Recorder,
    pub folder: String,
    /// Set when the repository rejected the input outright (see [`fatal_rejection`]).
    pub fatal: Option<String>,
    /// Connections the client opened during the run.
    pub new_connections: u64,
    /// Seconds from the start at which 10 %, 20 %, … 100 % of the run's documents had
    /// completed (empty for runs of fewer than 10 documents): throughput over time.
    pub progress_s: Vec<f64>,
}

/// When each tenth of a run's documents completed: one atomic add per upload, a lock only
/// at the ten crossings.
struct Marks {
    total: u64,
    completed: AtomicU64,
    times: std::sync::Mutex<Vec<Instant>>,
}

impl Marks {
    fn new(total: u64) -> Marks {
        Marks {
            total,
            completed: AtomicU64::new(0),
            times: std::sync::Mutex::new(Vec::with_capacity(10)),
        }
    }
    fn completed_one(&self) {
        if self.total < 10 {
            return;
        }
        let n = self.completed.fetch_add(1, Ordering::Relaxed) + 1;
        if n * 10 / self.total > (n - 1) * 10 / self.total {
            self.times.lock().expect("marks").push(Instant::now());
        }
    }
    fn seconds_since(&self, start: Instant) -> Vec<f64> {
        let mut t: Vec<f64> = self
            .times
            .lock()
            .expect("marks")
            .iter()
            .map(|t| (t.saturating_duration_since(start).as_secs_f64() * 1e6).round() / 1e6)
            .collect();
        t.sort_by(f64::total_cmp);
        if t.len() == 10 { t } else { Vec::new() }
    }
}

/// A client error before any success means the input is wrong (unknown property, bad
/// credentials, missing parent); measuring on would only count rejections.
fn fatal_rejection(class: ErrorClass, status: Option<u16>) -> bool {
    class == ErrorClass::Http4xx && !matches!(status, Some(409) | Some(408) | Some(429))
}

/// Finishing an interrupted run: the same folder and document markers, only the documents
/// the manifest does not show as acknowledged.
#[derive(Debug, Clone)]
pub struct ResumePoint {
    pub folder: String,
    pub run_tag: u64,
    pub todo: Vec<u64>,
}

impl ResumePoint {
    /// From the manifest entries of one run (cell): None when none were acknowledged
    /// (the run starts afresh) or all were (nothing to do is `Some` with an empty list).
    pub fn from_entries<'a>(
        entries: impl Iterator<Item = &'a ManifestEntry>,
        docs: u64,
    ) -> Option<ResumePoint> {
        let mut done = std::collections::HashSet::new();
        let mut folder = None;
        let mut tag = None;
        for e in entries {
            if tag.is_none() {
                tag = e
                    .marker
                    .split_once('-')
                    .and_then(|(t, _)| u64::from_str_radix(t, 16).ok());
                folder = e.folder.rsplit_once('/').map(|(f, _)| f.to_string());
            }
            if e.ok {
                done.insert(e.index);
            }
        }
        let (folder, run_tag) = (folder?, tag?);
        Some(ResumePoint {
            folder,
            run_tag,
            todo: (0..docs).filter(|i| !done.contains(i)).collect(),
        })
    }
}

/// A worker's share: a range of document indices, or a range of positions in a list.
struct Work {
    list: Option<Arc<Vec<u64>>>,
    range: std::ops::Range<u64>,
}

impl Work {
    fn indices(&self) -> impl Iterator<Item = u64> + '_ {
        let list = self.list.as_deref();
        self.range
            .clone()
            .map(move |i| list.map_or(i, |l| l[i as usize]))
    }
}

/// One run of a cell: folders prepared, then all workers start at one barrier; returns when
/// the last worker is done.
pub async fn run_cell<P: Protocol>(
    proto: Arc<P>,
    fixtures: Arc<Fixtures>,
    plan: &CellPlan,
    run: u32,
    live: Arc<LiveCounters>,
    manifest: &Manifest,
    resume: Option<&ResumePoint>,
) -> Result<RunMeasurement> {
    let todo: Option<Arc<Vec<u64>>> = resume.map(|r| Arc::new(r.todo.clone()));
    let n_todo = todo.as_ref().map_or(plan.docs, |t| t.len() as u64);
    let quotas = split_quota(n_todo, plan.threads);
    let barrier = Arc::new(Barrier::new(quotas.len() + 1));
    let run_folder = resume.map_or_else(|| plan.run_folder(run), |r| r.folder.clone());
    // Folders are created (or resolved) before the start barrier, so workers only index a
    // shared table: (path for the manifest, the protocol's reference for the upload).
    let n_folders = plan.docs.div_ceil(plan.docs_per_folder);
    let mut folders = Vec::with_capacity(n_folders as usize);
    for k in 0..n_folders {
        let path = format!("{run_folder}/{k:04}");
        let reference = proto
            .prepare_folder(&path)
            .await
            .with_context(|| format!("creating the folder {path}"))?;
        folders.push((path, reference));
    }
    let folders = Arc::new(folders);
    let run_tag = resume.map_or_else(|| plan.run_tag(run), |r| r.run_tag);
    let ok_so_far = Arc::new(AtomicU64::new(0));
    let marks = Arc::new(Marks::new(n_todo));
    let fatal = Arc::new(std::sync::OnceLock::<String>::new());
    let mut handles = Vec::with_capacity(quotas.len());
    let mut start_index = 0u64;
    for q in quotas {
        let ctx = WorkerCtx {
            proto: proto.clone(),
            fixtures: fixtures.clone(),
            barrier: barrier.clone(),
            live: live.clone(),
            folders: folders.clone(),
            docs_per_folder: plan.docs_per_folder,
            retries: plan.retries,
            run,
            run_tag,
            work: Work {
                list: todo.clone(),
                range: start_index..start_index + q,
            },
            ok_so_far: ok_so_far.clone(),
            marks: marks.clone(),
            resuming: plan.resuming || resume.is_some(),
            fatal: fatal.clone(),
            manifest: manifest.writer(plan.tag.clone()),
        };
        start_index += q;
        handles.push(tokio::spawn(worker(ctx)));
    }
    let conns0 = plan.connections.as_ref().map_or(0, |c| c.get());
    barrier.wait().await;
    let started = Instant::now();
    let mut merged = Recorder::new();
    for h in handles {
        let rec = match h.await {
            Ok(r) => r,
            Err(e) => bail!("an upload worker crashed: {e}"),
        };
        merged.merge(&rec);
    }
    // A manifest write error is not this run's failure: the caller writes the results it
    // has, then reports the error (`Manifest::flush`) and exits 2.
    let end = merged.last_done.map(Instant::from_std).unwrap_or(started);
    let duration = end.saturating_duration_since(started);
    Ok(RunMeasurement {
        run,
        duration,
        recorder: merged,
        folder: run_folder,
        fatal: fatal.get().cloned(),
        new_connections: plan.connections.as_ref().map_or(0, |c| c.get()) - conns0,
        progress_s: marks.seconds_since(started),
    })
}

struct WorkerCtx<P> {
    proto: Arc<P>,
    fixtures: Arc<Fixtures>,
    barrier: Arc<Barrier>,
    live: Arc<LiveCounters>,
    folders: Arc<Vec<(String, String)>>,
    docs_per_folder: u64,
    retries: u32,
    run: u32,
    run_tag: u64,
    work: Work,
    ok_so_far: Arc<AtomicU64>,
    marks: Arc<Marks>,
    resuming: bool,
    fatal: Arc<std::sync::OnceLock<String>>,
    manifest: Writer,
}

async fn worker<P: Protocol>(mut ctx: WorkerCtx<P>) -> Recorder {
    let mut rec = Recorder::new();
    let mut state = ctx.proto.worker();
    ctx.barrier.wait().await;
    for index in ctx.work.indices() {
        if ctx.live.stop.load(Ordering::Relaxed) || ctx.manifest.broken() {
            break;
        }
        let (folder, folder_ref) = &ctx.folders[(index / ctx.docs_per_folder) as usize];
        let t0 = Instant::now();
        let doc = ctx.fixtures.doc(ctx.run_tag, index);
        let result = upload_with_retries(
            &*ctx.proto,
            &doc,
            folder_ref,
            &mut state,
            ctx.retries,
            ctx.resuming,
            &mut rec,
        )
        .await;
        let done = Instant::now();
        let latency = done - t0;
        let size = doc.len();
        match result {
            Ok(up) => {
                rec.record_ok(latency, size, done.into_std());
                if let Some(n) = &up.node {
                    rec.record_node(n);
                }
                ctx.ok_so_far.fetch_add(1, Ordering::Relaxed);
                ctx.manifest
                    .ok(ctx.run, &doc, folder, &up.id, up.node.as_deref());
            }
            Err(e) => {
                if fatal_rejection(e.class, e.status) && ctx.ok_so_far.load(Ordering::Relaxed) == 0
                {
                    let _ = ctx.fatal.set(e.message.clone());
                    ctx.live.stop.store(true, Ordering::Relaxed);
                }
                ctx.manifest.failed(ctx.run, &doc, folder, &e);
                rec.record_err(e, done.into_std());
                ctx.live.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
        ctx.live.done.fetch_add(1, Ordering::Relaxed);
        ctx.marks.completed_one();
    }
    ctx.manifest.finish();
    rec
}

/// One document, with up to `retries` more attempts. After an ambiguous failure (timeout,
/// connection lost after sending, 5xx) the document is looked up first, so a retry never
/// creates a second copy; a 409 on a retry is resolved the same way. Never `autoRename`.
async fn upload_with_retries<P: Protocol>(
    proto: &P,
    doc: &crate::fixtures::Doc<'_>,
    folder: &str,
    state: &mut crate::protocol::WorkerState,
    retries: u32,
    resuming: bool,
    rec: &mut Recorder,
) -> Result<crate::protocol::Uploaded, crate::metrics::UploadError> {
    let mut attempt = 0u32;
    let mut ambiguous_before = false;
    loop {
        let err = match proto.upload(doc, folder, state).await {
            Ok(up) => return Ok(up),
            Err(e) => e,
        };
        // A name clash on a retry, or on finishing an interrupted run, is the same document
        // stored by an attempt whose answer was lost (or whose manifest line was): adopt it.
        let clash_after_retry = (attempt > 0 || resuming) && err.status == Some(409);
        if (!err.retryable() && !clash_after_retry) || attempt >= retries {
            if clash_after_retry && let Ok(Some(id)) = proto.lookup(doc, folder).await {
                rec.recovered += 1;
                return Ok(crate::protocol::Uploaded { id, node: None });
            }
            return Err(err);
        }
        ambiguous_before |= err.ambiguous() || clash_after_retry;
        attempt += 1;
        rec.retries += 1;
        tokio::time::sleep(Duration::from_millis((20u64 << attempt.min(6)).min(1000))).await;
        if ambiguous_before && let Ok(Some(id)) = proto.lookup(doc, folder).await {
            rec.recovered += 1;
            return Ok(crate::protocol::Uploaded { id, node: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_split_with_remainder() {
        assert_eq!(split_quota(1000, 6), vec![167, 167, 167, 167, 166, 166]);
        assert_eq!(split_quota(3, 5), vec![1, 1, 1, 0, 0]);
        assert_eq!(split_quota(10, 1), vec![10]);
        assert_eq!(split_quota(1000, 6).iter().sum::<u64>(), 1000);
    }
}
