//! One run of one cell: N documents over T workers that start together. Owns the quota split,
//! the start barrier, starting the workers (each one is `worker.rs`), the recorder merge and
//! the timing semantics, which are written down here and only here:
//!
//! - **latency** of an upload: from just before the request is built to the end of reading
//!   the response body (request build, connect if any, send, server time, response);
//! - **warm-up** (`--warmup N|30s`): before the barrier, the same workers upload N documents
//!   (split with remainder) or upload for that long, through the same client and access
//!   method, into `<run folder>/warmup/`; they are in the manifest (flagged `warmup`), so
//!   `verify` and `cleanup` cover them, and counted, but never measured. A resumed run
//!   (`--resume`, attempt k > 0) is a new process whose connections are cold and whose
//!   server may have cooled, so it warms up again with fresh documents of its own
//!   (`warmup-r<k>/`); what earlier attempts' warm-ups stored but their manifest lost (the
//!   last ~100 ms per worker) is found by name first and recorded, never uploaded again;
//! - **a run** (count mode) lasts from the barrier's release (all workers start together) to
//!   the last completion (success or failure) of any worker;
//! - **a run** (`--duration D`, steady state) lasts exactly D from the barrier's release:
//!   workers start no upload after the deadline; uploads in flight then are finished, written
//!   to the manifest (so verified and cleaned up) and counted as `docs_after_window`, but
//!   neither in docs/sec nor in the latency histogram: docs/sec = documents acknowledged
//!   within the window / D;
//! - **an auto pilot's first run** (`run --sample-time auto`) is a steady-state run whose
//!   deadline is the cap, brought forward to the moment its estimate is sharp
//!   (`autopilot`): from then on it is that deadline, and the run lasts until it;
//! - **success**: the API's documented success status with the new id read from the body;
//! - **docs/sec across runs**: mean documents acknowledged per run divided by the mean run
//!   duration (= N / mean duration when nothing failed, the field practice), reported next
//!   to the mean ± σ of the per-run rates.
//!
//! The timing rules are kept together in this file, so they read as one definition.

/// Part of running a cell: `--resume`'s adoption of the warm-up documents a hard stop left.
mod adopt;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use tokio::sync::Barrier;
use tokio::time::Instant;

use super::worker::{
    FolderCursor, FolderTable, LiveCounters, Marks, Work, WorkerCtx, WorkerWarmup, worker,
};
use crate::fixtures::Fixtures;
use crate::metrics::Recorder;
use crate::protocol::Protocol;
use crate::results::manifest::{Manifest, ManifestEntry};

use crate::plan::quota::{shard_workers, split_quota};
use crate::results::RunMeasurement;
use crate::results::Warmup;

/// One cell's run as the engine executes it: what it needs besides the protocol and the
/// fixtures.
#[derive(Debug, Clone)]
pub struct CellPlan {
    /// Documents per run (count mode); with `window`, ignored.
    pub docs: u64,
    /// Steady-state mode: the measured window (`--duration`).
    pub window: Option<Duration>,
    /// With `window`: the run ends when the plan's `docs` documents were sent, if that comes
    /// first (`run --sample-time`: never going round the sample again).
    pub once: bool,
    pub warmup: Warmup,
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
    /// `--shard K/N`: this process runs shard K's part of the T workers of all N shards.
    pub shard: Option<(u64, u64)>,
    /// Shards: the common start across machines.
    pub rendezvous: Option<Arc<tokio::sync::Mutex<super::rendezvous::Rendezvous>>>,
    /// `--jtl`: every measured upload's sample, and the cell's label and URL.
    pub jtl: Option<(crate::metrics::jtl::JtlSink, crate::metrics::jtl::Cell)>,
    /// `--metrics-listen`: the cell's live counters.
    pub metrics: Option<Arc<crate::engine::live::CellCounters>>,
    /// Reads the resources (servers, client, host) when the window opens and closes.
    pub resources: Option<Arc<crate::sampler::Sampler>>,
    /// The target runs on this host (a loopback URL): small documents then leave it half of
    /// the cores (`pool::width`).
    pub target_on_this_host: bool,
    /// Which start of this invocation this is: 0, or k for the k-th `--resume` (recorded on
    /// disk before its first upload, so every attempt's warm-up documents are its own).
    pub attempt: u32,
    /// `--resume`: what the interrupted attempts' manifest holds of this run.
    pub earlier: Option<Arc<EarlierRun>>,
    /// `--rate`: documents per second of a paced (open-model) run (`engine::pace`).
    pub rate: Option<f64>,
    /// `--readers`: readers beside the import (`engine::readers`).
    pub readers: Option<crate::results::readers::ReaderPolicy>,
    /// The readers-alone baseline of a rates sweep (`CellKey::rate_per_s` 0): the run's
    /// documents are a closed-loop seeding import, and the readers start only once it is
    /// over, reading what it stored for this long with no import beside them.
    pub readers_alone: Option<Duration>,
    /// `run --sample-time auto`: watched, and its window (the cap) closed early, the first
    /// run's once the estimate is sharp, a later run's once it has the first run's
    /// documents (`engine::autopilot`).
    pub auto: Option<Arc<super::autopilot::AutoPilot>>,
}

/// What the manifest of the interrupted attempts holds of one run (`--resume`).
#[derive(Debug, Default)]
pub struct EarlierRun {
    /// Ids the manifest already lists (any run): an upload adopted after a name clash whose
    /// id is here is recorded already and is not written again.
    pub known_ids: Arc<std::collections::HashSet<String>>,
    /// Warm-up document indices with a line (any outcome), by warm-up folder prefix.
    pub warmup_lines: std::collections::HashMap<String, std::collections::HashSet<u64>>,
}

impl CellPlan {
    pub fn run_folder(&self, run: u32) -> String {
        format!("{}/run-{run}", self.folder)
    }
    /// The global document indices this process uploads in a run (all, or its shard's).
    pub fn owned(&self) -> std::ops::Range<u64> {
        let w = shard_workers(self.threads, self.shard);
        let global = split_quota(self.docs, self.threads);
        let offset: u64 = global[..w.start as usize].iter().sum();
        offset..offset + global[w.start as usize..w.end as usize].iter().sum::<u64>()
    }
    /// The document markers of attempt `attempt`'s warm-up of a run: never those of a
    /// measured document, nor of another attempt's warm-up.
    pub(super) fn warmup_tag(run_tag: u64, attempt: u32) -> u64 {
        let a = u64::from(attempt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        crate::fixtures::Rng::new(run_tag ^ 0x3A3A_5EED_0000_0001 ^ a).next_u64()
    }
    /// The folder of attempt `attempt`'s warm-up below the run folder.
    pub(super) fn warmup_folder(run_folder: &str, attempt: u32) -> String {
        match attempt {
            0 => format!("{run_folder}/warmup"),
            k => format!("{run_folder}/warmup-r{k}"),
        }
    }
    fn run_tag(&self, run: u32) -> u64 {
        let mut r = crate::fixtures::Rng::new(
            self.nonce ^ u64::from(run).wrapping_mul(0xD6E8_FEB8_6659_FD93),
        );
        r.next_u64()
    }
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
                folder = run_folder_of(&e.folder);
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

/// The run folder (`…/run-N`) of a document's folder: its numbered folder's parent, or the
/// top of the corpus tree below it (the first `run-N` element; the tree lies below it).
fn run_folder_of(folder: &str) -> Option<String> {
    let segs: Vec<&str> = folder.split('/').collect();
    let at = segs.iter().position(|s| {
        s.strip_prefix("run-")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    match at {
        Some(i) => Some(segs[..=i].join("/")),
        None => folder.rsplit_once('/').map(|(f, _)| f.to_string()),
    }
}

/// One run of a cell: folders prepared, warm-up, then all workers start at one barrier;
/// returns when the last worker is done.
pub async fn run_cell<P: Protocol>(
    proto: Arc<P>,
    fixtures: Arc<Fixtures>,
    plan: &CellPlan,
    run: u32,
    live: Arc<LiveCounters>,
    manifest: &Manifest,
    resume: Option<&ResumePoint>,
) -> Result<RunMeasurement> {
    let part = Part::of(plan, resume);
    let part_workers = part.works.len() as u64;
    // `once`: the documents this process's workers can send before their sample runs out.
    let sample_left = part.sample_left(plan.once);
    let run_folder = resume.map_or_else(|| plan.run_folder(run), |r| r.folder.clone());
    let folders = Arc::new(FolderTable::new(
        run_folder.clone(),
        plan.docs_per_folder,
        fixtures.tree().cloned(),
    ));
    make_first_folders(&*proto, plan, &part, &folders).await?;
    let run_tag = resume.map_or_else(|| plan.run_tag(run), |r| r.run_tag);
    let adopted = adopt::adopt_earlier_warmups(
        &*proto,
        &fixtures,
        plan,
        run,
        &run_folder,
        run_tag,
        manifest,
    )
    .await?;
    let shared = Shared::new(plan, &part, (run, run_tag), resume, folders, &fixtures);
    shared.folders.count_into(shared.tally.clone());
    let handles = shared.spawn(&proto, &fixtures, plan, &live, manifest, part.works);
    let conns0 = plan.connections.as_ref().map_or(0, |c| c.get());
    let failed0 = live.failed.load(Ordering::Relaxed);
    let opened = shared.open_window(plan, part_workers, &live).await?;
    let started = opened.started;
    let ticker = super::timeline::Ticker::start(shared.tally.clone(), started);
    if let Ok(mut w) = live.work_done.lock() {
        *w = Some(shared.tally.clone());
    }
    let watch = shared.watch(plan, &ticker, &live, failed0, opened.started_unix_ms);
    if let Some(p) = &shared.pace {
        p.origin();
        if let Ok(mut live_pace) = live.pace.lock() {
            *live_pace = Some(p.clone());
        }
    }
    let readers_now = || start_readers(&proto, plan, &shared.folders, &live, run_tag);
    let readers = if plan.readers_alone.is_some() {
        None
    } else {
        readers_now()
    };
    let mut joined = join_workers(handles, adopted).await?;
    if let Ok(mut live_pace) = live.pace.lock() {
        *live_pace = None;
    }
    let readers = finish_readers(readers, plan.readers_alone, readers_now).await;
    // A manifest write error is not this run's failure: the caller writes the results it
    // has, then reports the error (`Manifest::flush`) and exits 2.
    let (servers, resources) = close_resources(plan, opened.resources).await;
    let merged = &mut joined.merged;
    merged.folders_created = shared.folders.created().await;
    let end = merged.last_done.map(Instant::from_std).unwrap_or(started);
    let timeline = ticker.finish(end);
    let latency_by_size = shared.tally.by_size();
    let stopped = live.stop.load(Ordering::Relaxed);
    let sent = merged.docs_ok + merged.docs_failed + joined.late;
    let window = plan
        .window
        .map(|w| measured_window(w, &shared.deadline, started));
    let sent_all = sent >= sample_left;
    let duration = run_duration(
        plan,
        window,
        stopped,
        sent_all,
        end.saturating_duration_since(started),
    );
    let sample_stop = watch.and_then(|w| w.finish(duration, merged.docs_ok, sent_all, stopped));
    let paced = shared
        .pace
        .as_ref()
        .map(|p| p.record(&joined.pace, merged.docs_ok, duration));
    Ok(RunMeasurement {
        run,
        duration,
        recorder: joined.merged,
        folder: run_folder,
        fatal: shared.fatal.get().cloned(),
        new_connections: plan.connections.as_ref().map_or(0, |c| c.get()) - conns0,
        upload_runtimes: Some(shared.width),
        progress_s: shared.marks.seconds_since(started),
        timeline,
        latency_by_size,
        warmup_ok: joined.warmup_ok,
        warmup_failed: joined.warmup_failed,
        docs_after_window: joined.late,
        window_s: window.map(|w| w.as_secs_f64()),
        servers,
        resources,
        started_unix_ms: opened.started_unix_ms,
        go_unix_ms: opened.common.map(|c| c.go_unix_ms),
        start_skew_ms: None,
        cpu_at_start_s: opened.cpu_at_start_s,
        warmup_s: opened.settled.as_ref().map(|s| s.seconds),
        warmup_settled: opened.settled.map(|s| s.settled),
        paced,
        readers,
        sample_stop,
    })
}

/// The resources' closing read, against their opening one (`None` without a sampler).
async fn close_resources(
    plan: &CellPlan,
    opened: Option<crate::metrics::resources::Snapshot>,
) -> (
    Vec<crate::metrics::servers::ServerUsage>,
    Option<crate::metrics::resources::RunResources>,
) {
    match (&plan.resources, opened) {
        (Some(s), Some(a)) => {
            let w = s.close(&a).await;
            (w.servers, Some(w.resources))
        }
        _ => (Vec::new(), None),
    }
}

/// A steady-state run's window as it closed: `w`, or shorter when an auto pilot's watcher
/// brought its end forward.
fn measured_window(w: Duration, deadline: &super::worker::Deadline, started: Instant) -> Duration {
    match deadline.end() {
        Some(end) if deadline.was_cut() => end.saturating_duration_since(started).min(w),
        _ => w,
    }
}

/// `--readers`: readers beside the import, reading what the run stores.
fn start_readers<P: Protocol>(
    proto: &Arc<P>,
    plan: &CellPlan,
    folders: &Arc<FolderTable>,
    live: &Arc<LiveCounters>,
    run_tag: u64,
) -> Option<super::readers::Readers> {
    plan.readers.filter(|r| r.readers > 0).map(|policy| {
        super::readers::Readers::start(
            proto.clone(),
            policy,
            folders.clone(),
            live.clone(),
            run_tag,
        )
    })
}

/// The readers' record once the import is over: those that read beside it, or (the
/// readers-alone baseline, `alone`) readers started now that read for that long.
async fn finish_readers(
    beside: Option<super::readers::Readers>,
    alone: Option<Duration>,
    start: impl FnOnce() -> Option<super::readers::Readers>,
) -> Option<crate::results::readers::ReadersRecord> {
    match (beside, alone) {
        (Some(r), _) => Some(r.finish().await),
        // The baseline: the seeding import is over; the readers read what it stored, alone.
        (None, Some(window)) => match start() {
            Some(r) => {
                tokio::time::sleep(window).await;
                Some(r.finish().await)
            }
            None => None,
        },
        (None, None) => None,
    }
}

/// How long a run lasted: its window (`--duration`, as it closed: `window`), or from the
/// start to the last completion (`elapsed`): count mode, a stop, or a window that sent every
/// document of its sample (`once`, `sent_all`), which ended when the last came back.
fn run_duration(
    plan: &CellPlan,
    window: Option<Duration>,
    stopped: bool,
    sent_all: bool,
    elapsed: Duration,
) -> Duration {
    match window {
        Some(w) if !stopped && plan.once && sent_all => w.min(elapsed),
        Some(w) if !stopped => w,
        _ => elapsed,
    }
}

/// Count mode: every numbered folder exists before the start, so the run holds uploads
/// only. Steady state: the first folder does; each later one is made when the run reaches
/// it, once per --docs-per-folder documents, as an import would. A shard makes the folders
/// of its own documents. A corpus tree is made as the run reaches each folder: creating it
/// is part of the import measured.
async fn make_first_folders<P: Protocol>(
    proto: &P,
    plan: &CellPlan,
    part: &Part,
    folders: &FolderTable,
) -> Result<()> {
    let first = part.range.start / plan.docs_per_folder;
    let before_start = match plan.window {
        _ if folders.is_tree() => first,
        None => part.range.end.div_ceil(plan.docs_per_folder),
        Some(_) => first + 1,
    };
    for k in first..before_start {
        folders.of(proto, k * plan.docs_per_folder).await?;
    }
    Ok(())
}

/// What one run's workers share with each other and with the run.
struct Shared {
    barrier: Arc<Barrier>,
    folders: Arc<FolderTable>,
    warm: WarmupShare,
    /// What the workers acknowledged in the measured part, for the timeline.
    tally: Arc<super::timeline::Tally>,
    marks: Arc<Marks>,
    /// The first rejection of the documents outright.
    fatal: Arc<std::sync::OnceLock<String>>,
    /// Steady state: the end of the window, fixed by whoever passes the barrier first (and
    /// brought forward by an auto pilot's watcher).
    deadline: Arc<super::worker::Deadline>,
    /// Warm-up documents the workers acknowledged (an auto pilot's watcher reads them).
    warmed: Arc<AtomicU64>,
    pace: Option<Arc<super::pace::Pace>>,
    /// Upload runtimes the workers are spread over (`pool::width`).
    width: usize,
    run: u32,
    run_tag: u64,
    /// A `--resume` (of this run or of the invocation): name clashes are adopted.
    resuming: bool,
}

/// What the start of a run's measured window found.
struct Opened {
    /// The warm-up until steady, judged.
    settled: Option<super::warmup::Settled>,
    /// The resources' reading as the window opened.
    resources: Option<crate::metrics::resources::Snapshot>,
    /// Shards: the common start.
    common: Option<super::rendezvous::Start>,
    cpu_at_start_s: Option<f64>,
    started_unix_ms: i64,
    started: Instant,
}

impl Shared {
    fn new(
        plan: &CellPlan,
        part: &Part,
        (run, run_tag): (u32, u64),
        resume: Option<&ResumePoint>,
        folders: Arc<FolderTable>,
        fixtures: &Fixtures,
    ) -> Shared {
        let run_folder = folders.base().to_string();
        Shared {
            barrier: Arc::new(Barrier::new(part.works.len() + 1)),
            warm: WarmupShare::new(plan, &run_folder, run_tag, fixtures.tree().cloned()),
            tally: Arc::new(super::timeline::Tally::default()),
            marks: Arc::new(Marks::new(if plan.window.is_some() {
                0
            } else {
                part.todo
            })),
            fatal: Arc::new(std::sync::OnceLock::new()),
            deadline: Arc::default(),
            warmed: Arc::default(),
            pace: plan.rate.map(|r| Arc::new(pace_for_run(plan, r, resume))),
            width: super::pool::width(plan.target_on_this_host, fixtures.size),
            folders,
            run,
            run_tag,
            resuming: plan.resuming || resume.is_some(),
        }
    }

    /// `run --sample-time auto`'s runs: their watcher, started with the window.
    fn watch(
        &self,
        plan: &CellPlan,
        ticker: &super::timeline::Ticker,
        live: &Arc<LiveCounters>,
        failed0: u64,
        started_unix_ms: i64,
    ) -> Option<super::autopilot::Watch> {
        let pilot = plan.auto.clone()?;
        let watched = super::autopilot::Watched {
            timeline: ticker.reader(),
            deadline: self.deadline.clone(),
            warmed: self.warmed.clone(),
            live: live.clone(),
            failed0,
            started_unix_ms,
            run: self.run,
            threads: plan.threads,
        };
        Some(super::autopilot::Watch::start(pilot, watched))
    }

    /// One worker for each of `works`, waiting at the barrier after its warm-up.
    fn spawn<P: Protocol>(
        &self,
        proto: &Arc<P>,
        fixtures: &Arc<Fixtures>,
        plan: &CellPlan,
        live: &Arc<LiveCounters>,
        manifest: &Manifest,
        works: Vec<(u64, Work)>,
    ) -> Vec<tokio::task::JoinHandle<super::worker::WorkerOut>> {
        let ok_so_far = Arc::new(AtomicU64::new(0));
        let mut handles = Vec::with_capacity(works.len());
        for (w, work) in works {
            let ctx = WorkerCtx {
                proto: proto.clone(),
                fixtures: fixtures.clone(),
                barrier: self.barrier.clone(),
                live: live.clone(),
                folders: FolderCursor {
                    table: self.folders.clone(),
                    current: None,
                },
                retries: plan.retries,
                run: self.run,
                run_tag: self.run_tag,
                work,
                window: plan.window,
                deadline: self.deadline.clone(),
                warmed: self.warmed.clone(),
                warmup: self.warm.for_worker(w, plan.threads),
                ok_so_far: ok_so_far.clone(),
                tally: self.tally.clone(),
                marks: self.marks.clone(),
                resuming: self.resuming,
                known_ids: plan.earlier.as_ref().map(|e| e.known_ids.clone()),
                fatal: self.fatal.clone(),
                manifest: manifest.writer(plan.tag.clone()),
                warmup_manifest: manifest.writer(plan.tag.clone()).warmup(),
                jtl: plan
                    .jtl
                    .as_ref()
                    .map(|(sink, cell)| sink.worker(cell.clone())),
                metrics: plan.metrics.clone(),
                index: w,
                pace: self.pace.clone(),
            };
            handles.push(super::pool::spawn_worker(
                w as usize,
                self.width,
                worker(ctx),
            ));
        }
        handles
    }

    /// Every worker warmed up and ready; then (shards) every shard ready; then all start:
    /// the measured window opens.
    async fn open_window(
        &self,
        plan: &CellPlan,
        part_workers: u64,
        live: &Arc<LiveCounters>,
    ) -> Result<Opened> {
        let judge = self.warm.gauge.clone().map(|g| {
            let live = live.clone();
            tokio::spawn(super::warmup::judge(
                g,
                part_workers,
                Warmup::AUTO_RULE,
                move || live.stop.load(Ordering::Relaxed),
            ))
        });
        self.barrier.wait().await;
        let settled = match judge {
            Some(j) => {
                // Workers that left their warm-up early (a stop, a broken manifest) end it too.
                if let Some(g) = &self.warm.gauge {
                    g.stop.store(true, Ordering::Relaxed);
                }
                j.await.ok()
            }
            None => None,
        };
        // The resources' opening read, while every worker waits at the start: a read inside
        // the window (a walk of /proc, a node_exporter scrape) stalled its first uploads, and
        // the quick start's small comparisons at 1 and 8 threads stayed unresolved in 2 of 3
        // cold runs. Before the rendezvous, so a slow scrape never delays a shard's agreed
        // start.
        let resources = match &plan.resources {
            Some(s) => Some(s.open().await),
            None => None,
        };
        let common = match &plan.rendezvous {
            Some(r) => Some(
                r.lock()
                    .await
                    .barrier(self.run, plan.tag.as_deref().unwrap_or("run"))
                    .await?,
            ),
            None => None,
        };
        self.barrier.wait().await;
        let cpu_at_start_s = Some(
            crate::host::process_cpu_seconds() - crate::sampler::embedded_target_cpu_seconds(),
        );
        let started_unix_ms = crate::timefmt::now_ms();
        // Whoever passes the barrier first fixes the one deadline all workers share.
        let started = match plan.window {
            Some(w) => self.deadline.fix(w) - w,
            None => Instant::now(),
        };
        Ok(Opened {
            settled,
            resources,
            common,
            cpu_at_start_s,
            started_unix_ms,
            started,
        })
    }
}

/// What the workers of a run brought back, merged.
struct Joined {
    merged: Recorder,
    pace: super::pace::PaceTally,
    warmup_ok: u64,
    warmup_failed: u64,
    /// Acknowledged after the window closed.
    late: u64,
}

/// Waits for every worker and merges what it recorded (`adopted`: warm-up documents an
/// earlier attempt stored, counted as its own).
async fn join_workers(
    handles: Vec<tokio::task::JoinHandle<super::worker::WorkerOut>>,
    adopted: u64,
) -> Result<Joined> {
    let mut j = Joined {
        merged: Recorder::new(),
        pace: super::pace::PaceTally::new(),
        warmup_ok: adopted,
        warmup_failed: 0,
        late: 0,
    };
    for h in handles {
        let out = match h.await {
            Ok(r) => r,
            Err(e) => bail!("an upload worker crashed: {e}"),
        };
        j.merged.merge(&out.rec);
        j.warmup_ok += out.warmup_ok;
        j.warmup_failed += out.warmup_failed;
        j.late += out.late;
        if let Some(t) = &out.pace {
            j.pace.merge(t);
        }
    }
    Ok(j)
}

/// The workers this process runs and their documents: all T workers, or (a shard of N)
/// the shard's contiguous share of the T workers of all shards, each with its global index
/// and its part of the global quota split (so indices, names and folders never collide).
struct Part {
    works: Vec<(u64, Work)>,
    /// The global document indices of this process's workers.
    range: std::ops::Range<u64>,
    /// Documents to do in this run (all of them, or what a resume left).
    todo: u64,
}

impl Part {
    /// `once`: the documents these workers can send before their sample runs out (0
    /// otherwise).
    fn sample_left(&self, once: bool) -> u64 {
        self.works
            .iter()
            .map(|(_, w)| match w.stride {
                Some(t) if once => w.range.end.saturating_sub(w.range.start).div_ceil(t.max(1)),
                _ => 0,
            })
            .sum()
    }

    fn of(plan: &CellPlan, resume: Option<&ResumePoint>) -> Part {
        let t = plan.threads;
        let workers = shard_workers(t, plan.shard);
        let (w0, mine) = (workers.start, workers.end - workers.start);
        let global = split_quota(plan.docs, t);
        let quotas = &global[w0 as usize..workers.end as usize];
        let range = plan.owned();
        if plan.window.is_some() {
            let works = (w0..w0 + mine)
                .map(|w| {
                    let work = Work {
                        list: None,
                        range: w..if plan.once { plan.docs } else { u64::MAX },
                        stride: Some(t),
                    };
                    (w, work)
                })
                .collect();
            return Part {
                works,
                range,
                todo: 0,
            };
        }
        if let Some(r) = resume.filter(|_| mine > 0) {
            // What the interrupted run left of this process's documents, over its workers.
            let list: Vec<u64> = r
                .todo
                .iter()
                .copied()
                .filter(|i| range.contains(i))
                .collect();
            let n = list.len() as u64;
            let list = Arc::new(list);
            let mut start = 0;
            let works = split_quota(n, mine)
                .into_iter()
                .enumerate()
                .map(|(i, q)| {
                    let work = Work {
                        list: Some(list.clone()),
                        range: start..start + q,
                        stride: None,
                    };
                    start += q;
                    (w0 + i as u64, work)
                })
                .collect();
            return Part {
                works,
                range,
                todo: n,
            };
        }
        let mut start = range.start;
        let works = quotas
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let work = Work {
                    list: None,
                    range: start..start + q,
                    stride: None,
                };
                start += q;
                (w0 + i as u64, work)
            })
            .collect();
        Part {
            works,
            todo: range.end - range.start,
            range,
        }
    }
}

/// The warm-up of one run: its folder table, markers and each worker's part.
struct WarmupShare {
    folders: Arc<FolderTable>,
    tag: u64,
    warmup: Warmup,
    quotas: Vec<u64>,
    /// Until steady: what the judge watches and how it stops the workers.
    gauge: Option<Arc<super::warmup::Gauge>>,
}

impl WarmupShare {
    fn new(
        plan: &CellPlan,
        run_folder: &str,
        run_tag: u64,
        tree: Option<Arc<crate::fixtures::Tree>>,
    ) -> WarmupShare {
        let quotas = match plan.warmup {
            Warmup::Docs(n) => split_quota(n, plan.threads),
            Warmup::Seconds(_) | Warmup::Steady | Warmup::Auto => Vec::new(),
        };
        WarmupShare {
            folders: Arc::new(FolderTable::new(
                CellPlan::warmup_folder(run_folder, plan.attempt),
                plan.docs_per_folder,
                tree,
            )),
            tag: CellPlan::warmup_tag(run_tag, plan.attempt),
            warmup: plan.warmup,
            quotas,
            gauge: (plan.warmup == Warmup::Steady).then(Default::default),
        }
    }

    fn for_worker(&self, w: u64, threads: u64) -> Option<WorkerWarmup> {
        if self.warmup.none() {
            return None;
        }
        let (work, seconds) = match self.warmup {
            // Resolved per cell before it gets here (`Warmup::resolve`).
            Warmup::Auto => return None,
            Warmup::Docs(_) => {
                let start: u64 = self.quotas[..w as usize].iter().sum();
                let work = Work {
                    list: None,
                    range: start..start + self.quotas[w as usize],
                    stride: None,
                };
                (work, None)
            }
            Warmup::Seconds(_) | Warmup::Steady => {
                let work = Work {
                    list: None,
                    range: w..u64::MAX,
                    stride: Some(threads),
                };
                let seconds = match self.warmup {
                    Warmup::Seconds(s) => Some(s),
                    _ => None,
                };
                (work, seconds)
            }
        };
        Some(WorkerWarmup {
            folders: FolderCursor {
                table: self.folders.clone(),
                current: None,
            },
            tag: self.tag,
            work,
            seconds,
            gauge: self.gauge.clone(),
        })
    }
}

/// The schedule of one run of `plan` at `rate` documents per second: its documents (count
/// mode, or what `resume` left of them), or those due inside its window; a shard paces its
/// share of the rate.
pub(crate) fn pace_for_run(
    plan: &CellPlan,
    rate: f64,
    resume: Option<&ResumePoint>,
) -> super::pace::Pace {
    let owned = plan.owned();
    let rate = rate * shard_share(plan);
    match (plan.window, resume) {
        (Some(w), _) => super::pace::Pace::new(
            rate,
            None,
            0,
            (w.as_secs_f64() * rate).ceil().max(1.0) as u64,
        ),
        (None, Some(r)) => {
            let list = r
                .todo
                .iter()
                .copied()
                .filter(|i| owned.contains(i))
                .collect();
            super::pace::Pace::new(rate, Some(list), 0, 0)
        }
        (None, None) => super::pace::Pace::new(rate, None, owned.start, owned.end - owned.start),
    }
}

/// The share of a run's rate a shard paces (1 without shards): its documents of the plan's,
/// or, in a steady-state window, its workers of the T.
fn shard_share(plan: &CellPlan) -> f64 {
    if plan.shard.is_none() {
        return 1.0;
    }
    let workers = crate::plan::quota::shard_workers(plan.threads, plan.shard);
    let share = match plan.window {
        Some(_) => (workers.end - workers.start) as f64 / plan.threads.max(1) as f64,
        None => {
            let owned = plan.owned();
            (owned.end - owned.start) as f64 / plan.docs.max(1) as f64
        }
    };
    share.max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_folder_of_a_tree_folder() {
        assert_eq!(
            run_folder_of("ingestbench/x/run-2/0003").as_deref(),
            Some("ingestbench/x/run-2")
        );
        assert_eq!(
            run_folder_of("ingestbench/x/run-1/a/run-9/b").as_deref(),
            Some("ingestbench/x/run-1")
        );
        assert_eq!(
            run_folder_of("ingestbench/x/run-1").as_deref(),
            Some("ingestbench/x/run-1")
        );
    }
}
