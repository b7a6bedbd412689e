//! `run --sample-time auto`: the first pilot run goes on until the estimate it gives is
//! sharp. A watcher beside the run reads it every [`EVERY`] (its trajectory as the ticker
//! sampled it, the warm-up and failures counted so far: never the workers, nothing on the
//! hot path), asks `analysis::sharp` for the estimate of the whole corpus's import it would
//! give, shows it on the progress line (`LiveCounters::note`) and, once both sides of the
//! interval are within the target, closes the window now (`worker::Deadline::cut`): no
//! upload starts after it, those in flight finish and count as after the window, exactly as
//! at a deadline. It closes it as well once the run's documents, times the pilot's runs,
//! reach `--max-sample-share` of the corpus (read more often as the run nears it, so it
//! stops within a fraction of a second of it). The cap is the window the run was planned
//! with; a sample that runs out first ends the run as `once` does. The run's record says
//! why it stopped and what the estimate was ([`crate::results::SampleStop`]). Later runs
//! import the documents the first did, the same files in the same order, and stop there
//! (their watcher counts, it does not estimate; the cap still holds): the runs compare the
//! server's cost on one slice, and the pilot's share stays what the first run's documents
//! times the runs make it. Runs of the same length would not: a server that warmed through
//! the first run imported 2.3× as many in its second, files the first never sent, and the
//! pilot took 25 % of a corpus capped at 15 %.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use super::timeline::Reader;
use super::worker::{Deadline, LiveCounters};
use crate::analysis::pilot::ImportWork;
use crate::analysis::sharp::{self, Check};
use crate::plan::AutoPlan;
use crate::results::{CellKey, CellRun, RunRecord, SampleStop, SampleStopReason};

/// How often the watcher checks the estimate.
pub const EVERY: Duration = Duration::from_secs(2);

/// The shortest wait between two reads of the documents done as the run nears its share,
/// and the first read of a run with a share.
const SHARE_TICK: Duration = Duration::from_millis(50);
const FIRST_SHARE_READ: Duration = Duration::from_millis(250);

/// An auto pilot's aim, the import it estimates, and (once the first run ended) the
/// documents every later run imports: the first run's.
pub struct AutoPilot {
    plan: AutoPlan,
    work: ImportWork,
    first_docs: OnceLock<u64>,
}

impl std::fmt::Debug for AutoPilot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AutoPilot")
            .field("target", &self.plan.target)
            .field("cap", &self.plan.cap)
            .field("first_docs", &self.first_docs.get())
            .finish_non_exhaustive()
    }
}

impl AutoPilot {
    /// The pilot of `plan`; `first_docs`: its first run's documents when it is recorded
    /// already (`--resume` after it).
    pub fn new(plan: AutoPlan, first_docs: Option<u64>) -> Arc<AutoPilot> {
        let work = ImportWork::of(&plan.corpus, plan.protocol);
        let pilot = AutoPilot {
            plan,
            work,
            first_docs: OnceLock::new(),
        };
        if let Some(d) = first_docs {
            let _ = pilot.first_docs.set(d);
        }
        Arc::new(pilot)
    }

    /// The documents the first run may import before the pilot of all its runs reaches
    /// `--max-sample-share` of the corpus (at least one); None without such a cap.
    fn share_limit(&self) -> Option<u64> {
        let share = self.plan.max_share?;
        let runs = self.plan.runs.max(1) as f64;
        Some(((share * self.plan.corpus.documents as f64 / runs).floor() as u64).max(1))
    }

    /// The window of the next run: the cap, watched (the first run until it is sharp, a
    /// later one until it has the first run's documents).
    pub(super) fn window(&self) -> Duration {
        self.plan.cap
    }

    /// The first run's documents, once it ended.
    pub fn first_docs(&self) -> Option<u64> {
        self.first_docs.get().copied()
    }
}

/// An auto pilot's first run's documents, when it is recorded (`--resume` after it): the
/// run that stopped with a [`SampleStop`].
pub fn first_run_docs(done: &[CellRun]) -> Option<u64> {
    done.iter()
        .find(|r| r.record.sample_stop.is_some())
        .map(|r| r.record.docs_ok)
}

/// What a run's watcher reads.
pub(super) struct Watched {
    pub(super) timeline: Reader,
    pub(super) deadline: Arc<Deadline>,
    /// Warm-up documents acknowledged (stored before the start).
    pub(super) warmed: Arc<AtomicU64>,
    pub(super) live: Arc<LiveCounters>,
    /// `live.failed` when the run started.
    pub(super) failed0: u64,
    pub(super) started_unix_ms: i64,
    pub(super) run: u32,
    pub(super) threads: u64,
}

/// What the watcher found so far.
#[derive(Default)]
struct Found {
    checks: u32,
    last: Option<Check>,
    /// The run reached its share of the corpus (`--max-sample-share`) unsharp.
    share: bool,
}

/// A run's watcher, running: the first run's, or a later run's that counts its documents up
/// to the first run's (`later`).
pub(super) struct Watch {
    task: tokio::task::JoinHandle<()>,
    found: Arc<Mutex<Found>>,
    pilot: Arc<AutoPilot>,
    deadline: Arc<Deadline>,
    later: bool,
}

impl Watch {
    pub(super) fn start(pilot: Arc<AutoPilot>, w: Watched) -> Watch {
        let found = Arc::new(Mutex::new(Found::default()));
        let deadline = w.deadline.clone();
        let later = pilot.first_docs();
        let task = tokio::spawn(watch(pilot.clone(), w, found.clone(), later));
        Watch {
            task,
            found,
            pilot,
            deadline,
            later: later.is_some(),
        }
    }

    /// Stops the watcher once the run is over (`duration` its measured window, `docs` its
    /// documents, `sent_all`: its sample ran out, `stopped`: interrupted or rejected, run
    /// again later): for the first run, why it stopped and the estimate then; a first run that
    /// ended normally fixes what every later run imports. A later run's: nothing to record.
    pub(super) fn finish(
        self,
        duration: Duration,
        docs: u64,
        sent_all: bool,
        stopped: bool,
    ) -> Option<SampleStop> {
        self.task.abort();
        if self.later {
            return None;
        }
        let found = std::mem::take(&mut *self.found.lock().expect("watch"));
        let plan = &self.pilot.plan;
        let reason = if self.deadline.was_cut() && found.last.as_ref().is_some_and(|c| c.sharp) {
            SampleStopReason::Sharp
        } else if self.deadline.was_cut() && found.share {
            SampleStopReason::Share
        } else if sent_all && duration < plan.cap {
            SampleStopReason::Files
        } else {
            SampleStopReason::Cap
        };
        if !stopped {
            let _ = self.pilot.first_docs.set(docs);
        }
        Some(sharp::stop_record(
            reason,
            found.last.as_ref(),
            found.checks,
            plan.target,
            plan.cap.as_secs_f64(),
            plan.max_share,
        ))
    }
}

/// The watcher: the first run's checks its estimate every [`EVERY`] and counts its
/// documents up to its share; a later run's (`later`: the first run's documents) only counts
/// them up to those. Either closes the window when it has what it waits for.
async fn watch(pilot: Arc<AutoPilot>, w: Watched, found: Arc<Mutex<Found>>, later: Option<u64>) {
    let limit = later.or_else(|| pilot.share_limit());
    let start = Instant::now();
    let mut check_at = start + EVERY;
    let mut next = if limit.is_some() {
        start + FIRST_SHARE_READ
    } else {
        check_at
    };
    loop {
        tokio::time::sleep_until(next).await;
        let now = Instant::now();
        if w.deadline.end().is_some_and(|d| now >= d) {
            return;
        }
        let (run, at_s) = w.so_far(now);
        if later.is_none() && now >= check_at {
            check_at += EVERY;
            if check(&pilot, &w, &found, &run, at_s) {
                w.deadline.cut(now);
                return;
            }
        }
        let docs = run.record.docs_ok;
        next = if later.is_none() {
            check_at
        } else {
            now + EVERY
        };
        if let Some(limit) = limit {
            if docs >= limit {
                found.lock().expect("watch").share = true;
                w.deadline.cut(now);
                return;
            }
            next = next.min(now + until_share(limit, docs, at_s));
        }
    }
}

/// One check of the estimate on the run so far: said on the progress line and kept; true
/// when it is sharp.
fn check(pilot: &AutoPilot, w: &Watched, found: &Mutex<Found>, run: &CellRun, at_s: f64) -> bool {
    let plan = &pilot.plan;
    let Some(c) = sharp::check(
        run,
        plan.protocol,
        &pilot.work,
        plan.target,
        at_s,
        plan.runs,
    ) else {
        return false;
    };
    if let Ok(mut note) = w.live.note.lock() {
        *note = Some(sharp::progress_text(&c, plan.target));
    }
    let is_sharp = c.sharp;
    let mut f = found.lock().expect("watch");
    f.checks += 1;
    f.last = Some(c);
    is_sharp
}

/// How long until `docs` reach `limit` at the run's pace so far (half of it, so the read
/// lands just before, and never under [`SHARE_TICK`]); [`EVERY`] before anything is done.
fn until_share(limit: u64, docs: u64, at_s: f64) -> Duration {
    if docs == 0 || at_s <= 0.0 {
        return EVERY;
    }
    let rate = docs as f64 / at_s;
    let left_s = limit.saturating_sub(docs) as f64 / rate;
    Duration::from_secs_f64((left_s / 2.0).min(EVERY.as_secs_f64())).max(SHARE_TICK)
}

impl Watched {
    /// The run so far as a run record the pilot estimate reads (trajectory, documents,
    /// warm-up, failures, start), and the seconds since its start. Never written: its cell
    /// is a stand-in (the estimate does not read it).
    fn so_far(&self, now: Instant) -> (CellRun, f64) {
        let (timeline, at_s) = self.timeline.so_far(now);
        let last = timeline.last().copied().unwrap_or_default();
        let record = RunRecord {
            run: self.run,
            duration_s: at_s,
            docs_ok: last.docs,
            docs_failed: self
                .live
                .failed
                .load(Ordering::Relaxed)
                .saturating_sub(self.failed0),
            bytes_ok: last.bytes,
            versions_ok: last.versions,
            folders_created: last.folders,
            warmup_docs: self.warmed.load(Ordering::Relaxed),
            window_s: Some(at_s),
            started_unix_ms: self.started_unix_ms,
            timeline,
            latency_by_size: self.timeline.by_size(),
            ..RunRecord::default()
        };
        let cell = CellKey {
            method: "direct".into(),
            connection: crate::transport::ConnectionPolicy::Reuse,
            size: crate::fixtures::SizeClass::Small,
            threads: self.threads,
            rate_per_s: None,
        };
        let run = CellRun {
            cell,
            record,
            latency_histogram_us: String::new(),
            client_cpu_s: 0.0,
        };
        (run, at_s)
    }
}
