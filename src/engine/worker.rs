//! One upload worker of a run: its share of document indices, the folders it uploads into,
//! its warm-up, the measured loop (stop flag, deadline, latency, manifest line, recorder) and
//! one upload with its retries. The timing semantics it implements are written down in
//! `cell.rs`, which starts the workers and merges what they hand back; this module knows
//! nothing of cells, plans or the schedule.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::Barrier;
use tokio::time::Instant;

use crate::fixtures::Fixtures;
use crate::metrics::{ErrorClass, Recorder};
use crate::protocol::Protocol;
use crate::results::manifest::Writer;

/// Live counters the progress display reads on a timer; the stop flags workers check.
#[derive(Default)]
pub struct LiveCounters {
    pub done: AtomicU64,
    pub failed: AtomicU64,
    /// Set to stop workers before their next upload (fatal rejection, interrupt).
    pub stop: AtomicBool,
    /// Set by SIGINT/SIGTERM.
    pub interrupted: AtomicBool,
    /// What the progress line adds (an auto pilot's estimate so far); set every few
    /// seconds, read on the progress timer.
    pub note: std::sync::Mutex<Option<String>>,
    /// Measured documents planned (0: not known in advance), for an ETA; set once.
    pub total: AtomicU64,
    /// Which cell and run is under way (set between runs, read on a timer by the live page).
    pub stage: std::sync::Mutex<String>,
    /// A corpus import's whole work (documents with versions, folders, bytes), set once,
    /// and the running run's tally of it (set at its start): the ETA costs what is left.
    pub work_total: std::sync::Mutex<Option<crate::analysis::eta::Counts>>,
    pub work_done: std::sync::Mutex<Option<Arc<super::timeline::Tally>>>,
    /// The ETA's prior from the team's estimate (`run --estimate`): documents per second and
    /// its relative spread; set once.
    pub eta_prior: std::sync::Mutex<Option<(f64, f64)>>,
    /// The schedule's runs as they go (set between runs), for the ETA of work whose
    /// documents are not known ahead.
    pub runs: std::sync::Mutex<crate::analysis::eta::RunsSoFar>,
    /// The paced run under way (`--rate`), for the live page's backlog.
    pub(super) pace: std::sync::Mutex<Option<Arc<super::pace::Pace>>>,
    /// The schedule's measured runs as they end (pushed once per run): the live page's
    /// sweep charts grow by them.
    pub runs_done: std::sync::Mutex<Vec<RunDone>>,
}

/// One measured run of a cell, ended: its cell, run number and docs/sec, what the resources
/// the tool reads spent in its window, and its readers' latencies (`--readers`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunDone {
    pub cell: crate::results::CellKey,
    pub run: u32,
    pub docs_per_s: f64,
    /// Resources with a known capacity, busiest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceBusy>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<ReaderLatency>,
    /// What most likely limited the run, from its resources alone (the report's verdict
    /// adds the sweep's scaling evidence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// A resource's use over a run's window, in percent of its capacity (a server's CPU against
/// its quota or cores, this host's CPU, a disk's busy time).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ResourceBusy {
    pub name: String,
    pub busy_pct: f64,
    /// Where the capacity comes from (`cgroup v1 cpu quota`, `host cores`, ...).
    pub capacity_from: String,
}

/// One kind of read beside the import: its rate and latency percentiles, ms.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReaderLatency {
    pub op: &'static str,
    pub per_s: f64,
    pub failed: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
}

impl RunDone {
    /// What a run's measurement says for the live page.
    pub fn of(
        cell: &crate::results::CellKey,
        m: &crate::results::RunMeasurement,
        docs_per_s: f64,
    ) -> RunDone {
        let mut resources: Vec<ResourceBusy> = m
            .resources
            .iter()
            .flat_map(|r| {
                let window = r.window_s;
                r.resources
                    .iter()
                    .filter(move |u| u.capacity > 0.0 && window > 0.0)
                    .map(move |u| ResourceBusy {
                        name: u.name.clone(),
                        busy_pct: 100.0 * u.busy_s / (u.capacity * window),
                        capacity_from: u.capacity_from.clone(),
                    })
            })
            .collect();
        resources.sort_by(|a, b| b.busy_pct.total_cmp(&a.busy_pct));
        let readers = m
            .readers
            .iter()
            .flat_map(|r| r.ops.iter())
            .map(|o| ReaderLatency {
                op: o.op.name(),
                per_s: o.per_sec,
                failed: o.failed,
                p50_ms: o.latency_ms.p50,
                p95_ms: o.latency_ms.p95,
                p99_ms: o.latency_ms.p99,
            })
            .collect();
        let demands = crate::analysis::limits::cell_demands(std::iter::once((
            m.recorder.docs_ok,
            m.resources.as_ref(),
        )));
        let verdict = crate::analysis::limits::judge(
            &demands,
            cell.threads,
            docs_per_s,
            m.recorder.latency().mean,
            None,
        )
        .map(|v| v.text);
        RunDone {
            cell: cell.clone(),
            run: m.run,
            docs_per_s,
            resources,
            readers,
            verdict,
        }
    }
}

/// A paced run's schedule as it stands (`LiveCounters::paced_now`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PacedNow {
    /// The schedule's rate (documents per second, this process's share).
    pub rate_per_s: f64,
    /// Documents due so far in the run under way.
    pub due: u64,
    /// Of them, those no worker has taken yet: the backlog building.
    pub behind: u64,
}

impl LiveCounters {
    /// What the corpus import has done so far and its whole work, when both are known (read
    /// on a timer, never per upload).
    pub fn work(&self) -> Option<(crate::analysis::eta::Counts, crate::analysis::eta::Counts)> {
        let total = (*self.work_total.lock().ok()?)?;
        let tally = self.work_done.lock().ok()?.clone()?;
        Some((tally.counts(), total))
    }

    /// The ETA of a schedule whose documents are not known ahead (steady-state runs,
    /// `--precision`, `--budget`, a shard): its runs left at the wall time of those done.
    pub fn runs_eta(&self) -> Option<crate::analysis::eta::Eta> {
        self.runs.lock().ok()?.eta(std::time::Instant::now())
    }

    /// A paced run's schedule now: due and behind (`None`: no paced run under way).
    pub fn paced_now(&self) -> Option<PacedNow> {
        let pace = self.pace.lock().ok()?.clone()?;
        let (rate_per_s, due, behind) = pace.now(Instant::now());
        Some(PacedNow {
            rate_per_s,
            due,
            behind,
        })
    }

    /// The runs ended after the first `seen` (a reader keeps its own count).
    pub fn runs_done_since(&self, seen: usize) -> Vec<RunDone> {
        self.runs_done
            .lock()
            .map(|r| r.get(seen..).unwrap_or_default().to_vec())
            .unwrap_or_default()
    }

    /// The ETA's prior, when the team gave an estimate.
    pub fn eta_prior(&self) -> Option<(f64, f64)> {
        *self.eta_prior.lock().ok()?
    }
}

/// When each tenth of a run's documents completed: one atomic add per upload, a lock only
/// at the ten crossings.
pub(super) struct Marks {
    total: u64,
    completed: AtomicU64,
    times: std::sync::Mutex<Vec<Instant>>,
}

impl Marks {
    pub(super) fn new(total: u64) -> Marks {
        Marks {
            total,
            completed: AtomicU64::new(0),
            times: std::sync::Mutex::new(Vec::with_capacity(10)),
        }
    }
    pub(super) fn completed_one(&self) {
        if self.total < 10 {
            return;
        }
        let n = self.completed.fetch_add(1, Ordering::Relaxed) + 1;
        if n * 10 / self.total > (n - 1) * 10 / self.total {
            self.times.lock().expect("marks").push(Instant::now());
        }
    }
    pub(super) fn seconds_since(&self, start: Instant) -> Vec<f64> {
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

/// A worker's share: a range of document indices, a range of positions in a list, or (until
/// a deadline) every `stride`-th index from `range.start`.
pub(super) struct Work {
    pub(super) list: Option<Arc<Vec<u64>>>,
    pub(super) range: std::ops::Range<u64>,
    pub(super) stride: Option<u64>,
}

impl Work {
    fn indices(&self) -> Box<dyn Iterator<Item = u64> + Send + '_> {
        if let Some(step) = self.stride {
            return Box::new(self.range.clone().step_by(step.max(1) as usize));
        }
        let list = self.list.as_deref();
        Box::new(
            self.range
                .clone()
                .map(move |i| list.map_or(i, |l| l[i as usize])),
        )
    }
}

/// The folders of a run: numbered (`<base>/0000`, …, one per `docs_per_folder`
/// documents), or a corpus's own tree below `<base>` ([`crate::fixtures::Tree`]). Numbered
/// folders are made before the start in count mode and on first use in steady-state mode and
/// warm-up; a tree's on first use, always, so the import's folder creation is timed with it.
/// Workers keep their current folder and come here only when it changes.
pub(super) struct FolderTable {
    base: String,
    per: u64,
    tree: Option<Arc<crate::fixtures::Tree>>,
    /// Held only to look up or count, never across a request: a worker making one folder
    /// must not hold up the workers that need another (a pilot's random order asks for a
    /// new folder at almost every document, and its folders were made one at a time).
    made: std::sync::Mutex<Made>,
    /// Where each folder made below the base is counted as it is made (the run's timeline).
    count: std::sync::OnceLock<Arc<super::timeline::Tally>>,
}

/// A folder, made once: whoever asks while it is being made waits for that one request.
type FolderCell = Arc<tokio::sync::OnceCell<Arc<(String, String)>>>;

/// The folders asked for so far, and every folder path below the base they created (a tree's
/// intermediate folders count once each).
#[derive(Default)]
struct Made {
    by_key: HashMap<u64, FolderCell>,
    paths: std::collections::HashSet<String>,
}

impl FolderTable {
    pub(super) fn new(
        base: String,
        per: u64,
        tree: Option<Arc<crate::fixtures::Tree>>,
    ) -> FolderTable {
        FolderTable {
            base,
            per: per.max(1),
            tree,
            made: std::sync::Mutex::new(Made::default()),
            count: std::sync::OnceLock::new(),
        }
    }

    /// The folder below which this table makes its folders.
    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// Counts the folders made from now on into `tally` as well.
    pub(super) fn count_into(&self, tally: Arc<super::timeline::Tally>) {
        let _ = self.count.set(tally);
    }

    /// Does the run recreate a corpus tree (folders made on first use, timed)?
    pub(super) fn is_tree(&self) -> bool {
        self.tree.is_some()
    }

    /// The key of the folder of document `index`.
    fn key(&self, index: u64) -> u64 {
        match &self.tree {
            Some(t) => t.key(index),
            None => index / self.per,
        }
    }

    /// The path of document `index`'s folder (made or not).
    fn path_of(&self, index: u64) -> String {
        self.path_of_key(self.key(index))
    }

    /// The path of folder `k`.
    fn path_of_key(&self, k: u64) -> String {
        match &self.tree {
            Some(t) => t.path(&self.base, k),
            None => format!("{}/{k:04}", self.base),
        }
    }

    /// The references of the folders made so far (what readers list).
    pub(super) async fn references(&self) -> Vec<String> {
        self.made
            .lock()
            .expect("folder table")
            .by_key
            .values()
            .filter_map(|c| c.get().map(|f| f.1.clone()))
            .collect()
    }

    /// Folders created below the base so far (each path element once).
    pub(super) async fn created(&self) -> u64 {
        self.made.lock().expect("folder table").paths.len() as u64
    }

    /// The folder of document `index`: (path for the manifest, the protocol's reference).
    /// Made on first use, once; workers asking for other folders meanwhile do not wait.
    pub(super) async fn of<P: Protocol>(
        &self,
        proto: &P,
        index: u64,
    ) -> Result<Arc<(String, String)>> {
        let k = self.key(index);
        let cell = {
            let mut made = self.made.lock().expect("folder table");
            made.by_key.entry(k).or_default().clone()
        };
        cell.get_or_try_init(|| self.make(proto, k)).await.cloned()
    }

    /// Makes folder `k` (its missing parents too) and counts what it created.
    async fn make<P: Protocol>(&self, proto: &P, k: u64) -> Result<Arc<(String, String)>> {
        let path = self.path_of_key(k);
        let reference = proto
            .prepare_folder(&path)
            .await
            .with_context(|| format!("creating the folder {path}"))?;
        let below = path
            .strip_prefix(&self.base)
            .unwrap_or("")
            .trim_start_matches('/');
        let mut made = self.made.lock().expect("folder table");
        let mut sofar = String::new();
        for seg in below.split('/').filter(|s| !s.is_empty()) {
            if !sofar.is_empty() {
                sofar.push('/');
            }
            sofar.push_str(seg);
            if !made.paths.contains(&sofar) {
                made.paths.insert(sofar.clone());
                if let Some(t) = self.count.get() {
                    t.folders.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(Arc::new((path, reference)))
    }
}

/// A worker's current folder, looked up in the table only when the document's folder changes.
pub(super) struct FolderCursor {
    pub(super) table: Arc<FolderTable>,
    pub(super) current: Option<(u64, Arc<(String, String)>)>,
}

impl FolderCursor {
    async fn of<P: Protocol>(&mut self, proto: &P, index: u64) -> Result<Arc<(String, String)>> {
        let k = self.table.key(index);
        if let Some((ck, f)) = &self.current
            && *ck == k
        {
            return Ok(f.clone());
        }
        let f = self.table.of(proto, index).await?;
        self.current = Some((k, f.clone()));
        Ok(f)
    }
}

/// The end of a steady-state window: fixed by whoever passes the barrier first, and
/// brought forward (never back) when an auto pilot's estimate is sharp
/// (`engine::autopilot`). Workers read it with one relaxed load per upload.
#[derive(Default)]
pub(super) struct Deadline {
    end: std::sync::OnceLock<Instant>,
    /// How much earlier than `end` the window closes (ns; 0: at `end`).
    early_ns: AtomicU64,
}

impl Deadline {
    /// The window's end, `w` from now unless someone fixed it first.
    pub(super) fn fix(&self, w: Duration) -> Instant {
        *self.end.get_or_init(|| Instant::now() + w)
    }

    /// Where the window closes now (`None` before it opened).
    pub(super) fn end(&self) -> Option<Instant> {
        let end = *self.end.get()?;
        let early = Duration::from_nanos(self.early_ns.load(Ordering::Relaxed));
        Some(end.checked_sub(early).unwrap_or(end))
    }

    /// Closes the window at `at` (when that is before its end): no upload starts after it,
    /// and those that end after it are late.
    pub(super) fn cut(&self, at: Instant) {
        if let Some(end) = self.end.get() {
            let early = end.saturating_duration_since(at).as_nanos() as u64;
            self.early_ns.fetch_max(early, Ordering::Relaxed);
        }
    }

    /// Was the window brought forward?
    pub(super) fn was_cut(&self) -> bool {
        self.early_ns.load(Ordering::Relaxed) > 0
    }
}

/// One worker's warm-up.
pub(super) struct WorkerWarmup {
    pub(super) folders: FolderCursor,
    pub(super) tag: u64,
    pub(super) work: Work,
    pub(super) seconds: Option<f64>,
    /// Until steady: uploads done (for the judge) and its signal to stop.
    pub(super) gauge: Option<Arc<super::warmup::Gauge>>,
}

/// What one worker of a run is given when it is spawned (it owns all of it).
pub(super) struct WorkerCtx<P> {
    pub(super) proto: Arc<P>,
    pub(super) fixtures: Arc<Fixtures>,
    pub(super) barrier: Arc<Barrier>,
    pub(super) live: Arc<LiveCounters>,
    pub(super) folders: FolderCursor,
    pub(super) retries: u32,
    pub(super) run: u32,
    pub(super) run_tag: u64,
    pub(super) work: Work,
    /// Steady-state mode: the window, and its end, fixed at the barrier's release.
    pub(super) window: Option<Duration>,
    pub(super) deadline: Arc<Deadline>,
    /// Warm-up documents acknowledged so far by the run's workers (an auto pilot's watcher
    /// counts them as stored before the start).
    pub(super) warmed: Arc<AtomicU64>,
    pub(super) warmup: Option<WorkerWarmup>,
    pub(super) ok_so_far: Arc<AtomicU64>,
    /// The run's trajectory counts ([`super::timeline`]).
    pub(super) tally: Arc<super::timeline::Tally>,
    pub(super) marks: Arc<Marks>,
    pub(super) resuming: bool,
    /// `--resume`: ids the interrupted attempts' manifest already lists.
    pub(super) known_ids: Option<Arc<std::collections::HashSet<String>>>,
    pub(super) fatal: Arc<std::sync::OnceLock<String>>,
    pub(super) manifest: Writer,
    pub(super) warmup_manifest: Writer,
    pub(super) jtl: Option<crate::metrics::jtl::WorkerJtl>,
    pub(super) metrics: Option<Arc<crate::engine::live::CellCounters>>,
    /// This worker's global index.
    pub(super) index: u64,
    /// `--rate`: the run's shared schedule; the worker takes its documents from it, not
    /// from `work` (`engine::pace`).
    pub(super) pace: Option<Arc<super::pace::Pace>>,
}

/// What a worker hands back: its recorder and its counts outside the measurement.
pub(super) struct WorkerOut {
    pub(super) rec: Recorder,
    pub(super) warmup_ok: u64,
    pub(super) warmup_failed: u64,
    pub(super) late: u64,
    /// `--rate`: what this worker saw of the schedule.
    pub(super) pace: Option<super::pace::PaceTally>,
}

/// What one upload came to.
enum Outcome {
    /// Stored, with this many versions before its head.
    Ok(u64),
    /// Its class and HTTP status.
    Failed(ErrorClass, Option<u16>),
    /// The worker must stop (no folder could be made).
    Stop,
}

pub(super) async fn worker<P: Protocol>(mut ctx: WorkerCtx<P>) -> WorkerOut {
    let mut out = WorkerOut {
        rec: Recorder::new(),
        warmup_ok: 0,
        warmup_failed: 0,
        late: 0,
        pace: ctx.pace.as_ref().map(|_| super::pace::PaceTally::new()),
    };
    let mut state = ctx.proto.worker();
    if let Some(mut w) = ctx.warmup.take() {
        warm_up(&mut ctx, &mut w, &mut state, &mut out).await;
    }
    ctx.warmup_manifest.finish();
    // Ready, then released (see run_cell).
    ctx.barrier.wait().await;
    ctx.barrier.wait().await;
    // Steady state: the window's end, read again before and after each upload (an auto
    // pilot may bring it forward).
    let windowed = match ctx.window {
        Some(w) => {
            ctx.deadline.fix(w);
            true
        }
        None => false,
    };
    let past_end =
        |deadline: &Deadline, t: Instant| windowed && deadline.end().is_some_and(|d| t >= d);
    let work = std::mem::replace(
        &mut ctx.work,
        Work {
            list: None,
            range: 0..0,
            stride: None,
        },
    );
    if let Some(m) = &ctx.metrics {
        m.worker(1);
    }
    let pace = ctx.pace.clone();
    let mut indices = work.indices();
    loop {
        if ctx.live.stop.load(Ordering::Relaxed) || ctx.manifest.broken() {
            break;
        }
        // Closed loop: the worker's next document now; paced: the schedule's next, when due.
        let (index, due) = match &pace {
            None => match indices.next() {
                Some(i) => (i, None),
                None => break,
            },
            Some(p) => match p.claim() {
                Some((i, due)) => {
                    if !super::pace::wait_until(due, &ctx.live.stop).await {
                        break;
                    }
                    (i, Some(due))
                }
                None => break,
            },
        };
        if past_end(&ctx.deadline, Instant::now()) {
            break;
        }
        if let (Some(p), Some(due), Some(t)) = (&pace, due, &mut out.pace) {
            t.started(p, due, Instant::now());
        }
        let mut versions = 0;
        let (failure, latency, size, done) =
            match upload_one(&mut ctx, index, &mut state, &mut out.rec).await {
                (Outcome::Stop, ..) => break,
                (Outcome::Ok(v), lat, size, done) => {
                    versions = v;
                    (None, lat, size, done)
                }
                (Outcome::Failed(c, s), lat, size, done) => (Some((c, s)), lat, size, done),
            };
        let ok = failure.is_none();
        let late = windowed && ctx.deadline.end().is_some_and(|d| done > d);
        if let Some(m) = &ctx.metrics {
            match failure {
                None if !late => m.ok(size, latency),
                None => {}
                Some((class, _)) => m.failed(class),
            }
        }
        if let Some(j) = &mut ctx.jtl
            && !(ok && late)
        {
            j.push(crate::metrics::jtl::Sample {
                start: (done - latency).into_std(),
                elapsed: latency,
                failure,
                sent_bytes: size,
                worker: ctx.index,
            });
        }
        if ok && late {
            out.late += 1;
        } else if ok {
            if let (Some(due), Some(t)) = (due, &mut out.pace) {
                t.acknowledged(due, done);
            }
            out.rec.record_ok(latency, size, done.into_std());
            out.rec.versions_ok += versions;
            ctx.ok_so_far.fetch_add(1, Ordering::Relaxed);
            ctx.tally.ok(versions, size, latency);
        }
        ctx.live.done.fetch_add(1, Ordering::Relaxed);
        ctx.marks.completed_one();
    }
    if let Some(m) = &ctx.metrics {
        m.worker(-1);
    }
    ctx.manifest.finish();
    out
}

/// The worker's warm-up: its share of documents, or uploads until its time is up.
async fn warm_up<P: Protocol>(
    ctx: &mut WorkerCtx<P>,
    w: &mut WorkerWarmup,
    state: &mut crate::protocol::WorkerState,
    out: &mut WorkerOut,
) {
    let until = w
        .seconds
        .map(|s| Instant::now() + Duration::from_secs_f64(s));
    for index in w.work.indices() {
        if ctx.live.stop.load(Ordering::Relaxed) || ctx.manifest.broken() {
            break;
        }
        if until.is_some_and(|u| Instant::now() >= u)
            || w.gauge
                .as_ref()
                .is_some_and(|g| g.stop.load(Ordering::Relaxed))
        {
            break;
        }
        let Ok(f) = w.folders.of(&*ctx.proto, index).await else {
            break;
        };
        let doc = ctx.fixtures.doc(w.tag, index);
        let mut scratch = Recorder::new();
        let r = upload_with_retries(
            &*ctx.proto,
            &doc,
            &f.1,
            state,
            ctx.retries,
            ctx.resuming,
            &mut scratch,
        )
        .await;
        match r {
            Ok((up, adopted)) => {
                out.warmup_ok += 1;
                ctx.warmed.fetch_add(1, Ordering::Relaxed);
                if !(adopted && recorded(&ctx.known_ids, &up.id)) {
                    ctx.warmup_manifest
                        .ok(ctx.run, &doc, &f.0, &up.id, up.node.as_deref());
                }
            }
            Err(e) => {
                out.warmup_failed += 1;
                ctx.warmup_manifest.failed(ctx.run, &doc, &f.0, &e);
            }
        }
        if let Some(g) = &w.gauge {
            g.done.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One measured upload: its folder, the request, the manifest line, failures recorded.
/// Returns what it came to, its latency, the document's size and when it ended; successes are recorded by
/// the caller (which knows whether it fell inside the window).
async fn upload_one<P: Protocol>(
    ctx: &mut WorkerCtx<P>,
    index: u64,
    state: &mut crate::protocol::WorkerState,
    rec: &mut Recorder,
) -> (Outcome, Duration, u64, Instant) {
    let f = match ctx.folders.of(&*ctx.proto, index).await {
        Ok(f) => f,
        Err(e) if ctx.folders.table.is_tree() => {
            // A corpus's own folder the repository refuses (a name `corpus --check` flags):
            // the documents that go into it fail, counted; the run goes on.
            let doc = ctx.fixtures.doc(ctx.run_tag, index);
            let err = crate::metrics::UploadError {
                class: ErrorClass::Protocol,
                status: None,
                message: format!("{e:#}"),
            };
            let folder = ctx.folders.table.path_of(index);
            ctx.manifest.failed(ctx.run, &doc, &folder, &err);
            let failed = Outcome::Failed(err.class, err.status);
            let now = Instant::now();
            rec.record_err(err, now.into_std());
            ctx.live.failed.fetch_add(1, Ordering::Relaxed);
            return (failed, Duration::ZERO, 0, now);
        }
        Err(e) => {
            let _ = ctx.fatal.set(format!("{e:#}"));
            ctx.live.stop.store(true, Ordering::Relaxed);
            return (Outcome::Stop, Duration::ZERO, 0, Instant::now());
        }
    };
    let (folder, folder_ref) = (&f.0, &f.1);
    let t0 = Instant::now();
    let doc = ctx.fixtures.doc(ctx.run_tag, index);
    let result = upload_with_retries(
        &*ctx.proto,
        &doc,
        folder_ref,
        state,
        ctx.retries,
        ctx.resuming,
        rec,
    )
    .await;
    let done = Instant::now();
    let latency = done - t0;
    let size = doc.upload_bytes();
    match result {
        Ok((up, adopted)) => {
            if let Some(n) = &up.node {
                rec.record_node(n);
            }
            // Adopted after a name clash: a line the manifest already has is not written again.
            if !(adopted && recorded(&ctx.known_ids, &up.id)) {
                ctx.manifest
                    .ok(ctx.run, &doc, folder, &up.id, up.node.as_deref());
            }
            (
                Outcome::Ok(doc.versions().len() as u64),
                latency,
                size,
                done,
            )
        }
        Err(e) => {
            // A corpus file's own name, size and metadata are its own: what the repository
            // refuses there is that document's failure (counted, as `corpus --check` says it
            // will be), not the whole input's.
            let own_metadata = doc.file().is_some();
            if fatal_rejection(e.class, e.status)
                && !own_metadata
                && ctx.ok_so_far.load(Ordering::Relaxed) == 0
            {
                let _ = ctx.fatal.set(e.message.clone());
                ctx.live.stop.store(true, Ordering::Relaxed);
            }
            ctx.manifest.failed(ctx.run, &doc, folder, &e);
            let failed = Outcome::Failed(e.class, e.status);
            rec.record_err(e, done.into_std());
            ctx.live.failed.fetch_add(1, Ordering::Relaxed);
            (failed, latency, size, done)
        }
    }
}

/// Does the interrupted attempts' manifest list `id` already?
fn recorded(known: &Option<Arc<std::collections::HashSet<String>>>, id: &str) -> bool {
    known.as_ref().is_some_and(|k| k.contains(id))
}

/// One document, with up to `retries` more attempts. After an ambiguous failure (timeout,
/// connection lost after sending, 5xx) the document is looked up first, so a retry never
/// creates a second copy; a 409 on a retry is resolved the same way. Never `autoRename`.
/// Returns the upload and whether it was adopted (found stored, not created now).
async fn upload_with_retries<P: Protocol>(
    proto: &P,
    doc: &crate::fixtures::Doc<'_>,
    folder: &str,
    state: &mut crate::protocol::WorkerState,
    retries: u32,
    resuming: bool,
    rec: &mut Recorder,
) -> Result<(crate::protocol::Uploaded, bool), crate::metrics::UploadError> {
    let mut attempt = 0u32;
    let mut ambiguous_before = false;
    // A document found stored after an ambiguous failure: what the next attempt does is
    // complete it (the versions it lacks, if any), not upload it again.
    let mut found: Option<String> = None;
    loop {
        let tried = match &found {
            Some(id) => proto.complete(doc, id, state).await.map(|()| {
                rec.recovered += 1;
                let up = crate::protocol::Uploaded {
                    id: id.clone(),
                    node: None,
                };
                (up, true)
            }),
            None => proto.upload(doc, folder, state).await.map(|up| (up, false)),
        };
        let err = match tried {
            Ok(done) => return Ok(done),
            Err(e) => e,
        };
        // A name clash on a retry, or on finishing an interrupted run, is the same document
        // stored by an attempt whose answer was lost (or whose manifest line was): adopt it.
        let clash_after_retry = (attempt > 0 || resuming) && err.status == Some(409);
        if (!err.retryable() && !clash_after_retry) || attempt >= retries {
            if clash_after_retry && let Ok(Some(id)) = proto.lookup(doc, folder).await {
                // Stored, perhaps stopped between its versions: the rest go up now.
                proto.complete(doc, &id, state).await?;
                rec.recovered += 1;
                return Ok((crate::protocol::Uploaded { id, node: None }, true));
            }
            return Err(err);
        }
        ambiguous_before |= err.ambiguous() || clash_after_retry;
        attempt += 1;
        rec.retries += 1;
        tokio::time::sleep(backoff(doc.index, attempt)).await;
        if found.is_none()
            && ambiguous_before
            && let Ok(Some(id)) = proto.lookup(doc, folder).await
        {
            found = Some(id);
        }
    }
}

/// The wait before retry `attempt` (1-based) of document `index`: 40 ms doubling to 1 s, each
/// wait between half and all of that, drawn per document and attempt, so workers that failed
/// together (an overloaded server answers many at once) do not all retry together.
fn backoff(index: u64, attempt: u32) -> Duration {
    let full = (20u64 << attempt.min(6)).min(1000);
    let mut r =
        crate::fixtures::Rng::new(index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(attempt));
    Duration::from_millis(full / 2 + r.below(full / 2 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window's end is fixed once; an auto pilot's cut brings it forward, never back.
    #[test]
    fn a_deadline_is_fixed_once_and_only_brought_forward() {
        let d = Deadline::default();
        assert_eq!(d.end(), None);
        d.cut(Instant::now());
        assert!(!d.was_cut(), "no cut before the window opened");
        let end = d.fix(Duration::from_secs(60));
        assert_eq!(d.fix(Duration::from_secs(5)), end, "the first fix holds");
        assert_eq!(d.end(), Some(end));
        let at = end - Duration::from_secs(50);
        d.cut(at);
        assert!(d.was_cut());
        assert_eq!(d.end(), Some(at));
        d.cut(end - Duration::from_secs(10));
        assert_eq!(d.end(), Some(at), "a later cut does not move it back");
    }

    #[test]
    fn backoff_doubles_to_a_second_with_jitter() {
        for attempt in 1..10 {
            let full = (20u64 << attempt.min(6)).min(1000);
            let waits: Vec<u64> = (0..64)
                .map(|i| backoff(i, attempt).as_millis() as u64)
                .collect();
            assert!(
                waits.iter().all(|w| (full / 2..=full).contains(w)),
                "{attempt}: {waits:?}"
            );
            // Documents that failed together wait different times.
            let distinct: std::collections::HashSet<_> = waits.iter().collect();
            assert!(distinct.len() > 8, "{attempt}: {waits:?}");
        }
        assert_eq!(
            backoff(7, 3),
            backoff(7, 3),
            "the same document and attempt, the same wait"
        );
    }
}
