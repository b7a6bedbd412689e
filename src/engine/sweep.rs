//! Running a schedule of `(cell, run)` pairs, in the order given (interleaved or shuffled by
//! the plan): each run gets its folder and document markers (or those of the interrupted run
//! it finishes), is measured by [`run_cell`] with what the servers, the client and the host
//! spent over its window (`sampler`), and is handed to the [`RunObserver`] the moment it ends, so results reach the disk run by
//! run. With `--precision`, cells whose docs/sec is not yet precise enough get further
//! rounds of runs (interleaved the same way) up to `--max-runs`; with `--budget`, the cells
//! of comparisons still open, while the time lasts (`budget`), the runs it defers (those at
//! the thread counts in between after the first) once the comparisons the answers state are
//! closed. Stops after an interrupt, a rejection of the documents outright, or a manifest
//! that can no longer be written.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use std::time::Duration;

use anyhow::Result;

use super::cell::{CellPlan, EarlierRun, ResumePoint, run_cell};
use super::session::Session;
use super::worker::LiveCounters;
use crate::fixtures::{Fixtures, SizeClass};
use crate::plan::CommonPlan;
use crate::results::RunMeasurement;
use crate::results::manifest::{Manifest, ManifestEntry};
use crate::results::{CellKey, MeasurePolicy};

/// Where each run's documents go below the parent.
pub enum Folders {
    /// `run`: `<folder>/run-<r>` for every run, one nonce for the invocation.
    One { folder: String, nonce: u64 },
    /// `sweep`: `<base>/<method>-<conn>/<size>/t<T>/a<random>/run-<r>`, a fresh nonce per run.
    PerRun { base: String },
}

/// What a command asks to be measured: the per-command part of a job (the rest comes from
/// the plan, once, in [`SweepJob::new`]).
pub struct JobSpec<'a> {
    /// Fixtures by size class.
    pub fixtures: &'a HashMap<SizeClass, Arc<Fixtures>>,
    pub schedule: &'a [(CellKey, u32)],
    pub docs: u64,
    pub folders: Folders,
    /// Write the cell's name into every manifest line (sweeps: one manifest, many cells).
    pub tag_manifest: bool,
    /// This is a `--resume`: name clashes are adopted (see `CellPlan::resuming`).
    pub resuming: bool,
    /// Which start of the invocation this is (0, or k for the k-th `--resume`), recorded on
    /// disk before the first upload (see `CellPlan::attempt`).
    pub attempt: u32,
    /// Manifest lines of an interrupted invocation: runs they cover are finished, not redone.
    pub earlier: &'a [ManifestEntry],
    /// docs/sec of the runs already done (`--resume`), for `--precision`.
    pub history: HashMap<CellKey, Vec<(u32, f64)>>,
    /// `sweep`: the method every other is compared with (`--budget` spends runs on the
    /// comparisons still open); `None` for `run`.
    pub baseline: Option<String>,
    /// Comparisons pair runs of the same number (an interleaved sweep runs them back to back;
    /// see `analysis::stats::compare_runs`); `--budget` then adds runs in pairs.
    pub paired: bool,
    /// `--budget`: the runs at the thread counts in between that come after the comparisons
    /// the answers state, while the time lasts (`results::budget_defers`), in schedule order.
    pub deferred: &'a [(CellKey, u32)],
    /// `run --sample-time auto`: the first run stops when its estimate is sharp, the later
    /// ones when they have its documents (`autopilot`).
    pub auto: Option<Arc<super::autopilot::AutoPilot>>,
}

/// Everything a schedule needs besides the observer: the [`JobSpec`], and what every measured
/// job takes from its plan, session and sidecars.
pub struct SweepJob<'a> {
    pub work: JobSpec<'a>,
    pub session: &'a Session,
    pub manifest: &'a Manifest,
    pub live: Arc<LiveCounters>,
    pub docs_per_folder: u64,
    pub retries: u32,
    pub seed: u64,
    /// Warm-up, steady state, precision.
    pub measure: MeasurePolicy,
    /// What reads the servers, the client and the host over each run's window, by access
    /// method.
    pub servers: HashMap<String, Arc<crate::sampler::Sampler>>,
    /// `--shard K/N` and the common start across shards.
    pub shard: Option<(u64, u64)>,
    pub rendezvous: Option<Arc<tokio::sync::Mutex<super::rendezvous::Rendezvous>>>,
    /// `--jtl`: where every measured upload's sample goes.
    pub jtl: Option<crate::metrics::jtl::JtlSink>,
    /// `--metrics-listen`: every cell's live counters.
    pub metrics: Option<Arc<crate::engine::live::LiveMetrics>>,
}

impl<'a> SweepJob<'a> {
    /// `work` with what every measured job (`run` or `sweep`) takes from its plan: folder
    /// size, retries, seed, measurement policy, the servers to read, the shard and its
    /// rendezvous, and the sidecars' sinks (`--jtl`, `--metrics-listen`).
    pub fn new(
        work: JobSpec<'a>,
        common: &CommonPlan,
        session: &'a Session,
        manifest: &'a Manifest,
        live: Arc<LiveCounters>,
        sidecars: &mut super::sidecars::Sidecars,
    ) -> SweepJob<'a> {
        SweepJob {
            work,
            session,
            manifest,
            live,
            docs_per_folder: common.docs_per_folder,
            retries: common.retries,
            seed: common.seed,
            measure: common.measure,
            servers: session.servers(common),
            shard: common.shard.as_ref().map(|s| (s.index, s.count)),
            rendezvous: sidecars
                .rendezvous
                .take()
                .map(|r| Arc::new(tokio::sync::Mutex::new(r))),
            jtl: sidecars.jtl(),
            metrics: sidecars.metrics(),
        }
    }

    /// The whole work of a corpus import (one run of one cell over a corpus sample):
    /// documents with their versions, folders, bytes, for the ETA to cost what is left
    /// (`analysis::eta`). None otherwise (generated documents, several runs, no total known).
    pub fn work_to_do(&self) -> Option<crate::analysis::eta::Counts> {
        let docs = self.docs_to_do();
        if docs == 0 || self.work.schedule.len() != 1 || self.work.fixtures.len() != 1 {
            return None;
        }
        let (requests, folders, bytes) = self.work.fixtures.values().next()?.corpus_work(docs)?;
        Some(crate::analysis::eta::Counts {
            docs: requests as f64,
            folders: folders as f64,
            bytes: bytes as f64,
        })
    }

    /// Measured documents left to upload, for a progress bar's length; 0 when that is not
    /// known in advance (steady-state runs, `--precision`, `--budget`, a shard).
    pub fn docs_to_do(&self) -> u64 {
        let m = &self.measure;
        if m.duration_s.is_some()
            || m.precision_pct.is_some()
            || m.budget_s.is_some()
            || self.shard.is_some()
        {
            return 0;
        }
        // Of the earlier lines, those of the runs still to do (a resumed sweep reads its
        // whole manifest; `run` tags none of its lines: one cell).
        let todo: HashSet<(Option<String>, u32)> = self
            .work
            .schedule
            .iter()
            .map(|(c, r)| (self.work.tag_manifest.then(|| c.tag()), *r))
            .collect();
        let done = self
            .work
            .earlier
            .iter()
            .filter(|e| e.ok && !e.warmup && todo.contains(&(e.cell.clone(), e.run)))
            .count() as u64;
        (self.work.schedule.len() as u64 * self.work.docs).saturating_sub(done)
    }
}

/// Told about each run as the schedule goes (between runs, never per upload).
pub trait RunObserver {
    /// Run `k` of `n` (0-based) is about to start.
    fn starting(&mut self, _k: usize, _n: usize, _cell: &CellKey, _run: u32) {}
    /// A run ended; `interrupted` when SIGINT/SIGTERM stopped it part-way. An error stops
    /// the schedule (a result that cannot be written).
    fn finished(
        &mut self,
        cell: &CellKey,
        m: RunMeasurement,
        client_cpu_s: f64,
        interrupted: bool,
    ) -> Result<()>;
}

/// How a schedule ended, short of a setup error.
#[derive(Debug, Default)]
pub struct SweepEnd {
    /// The cell whose documents the repository rejected outright, and its reason.
    pub fatal: Option<(CellKey, String)>,
}

impl SweepJob<'_> {
    /// The plan of one run of `cell`: its folder, nonce, manifest tag and connection counter.
    fn cell_plan(
        &self,
        cell: &CellKey,
        run: u32,
        c: &super::session::Connected,
        known: &Arc<HashSet<String>>,
        fresh: u64,
        warm: bool,
    ) -> CellPlan {
        let (counter, url) = (c.counter.clone(), &c.url);
        // An auto pilot: the cap, watched (the first run until sharp, the later ones until
        // they have its documents).
        let (window, watched) = match &self.work.auto {
            Some(a) => (Some(a.window()), Some(a.clone())),
            None => (self.measure.duration_s.map(Duration::from_secs_f64), None),
        };
        let (folder, nonce) = match &self.work.folders {
            // A steady-state run is never finished part-way: one that was interrupted is
            // run again in a folder of its own, with documents of its own.
            Folders::One { folder, nonce } if window.is_some() => match self.tries(cell, run) {
                0 => (folder.clone(), *nonce),
                k => (format!("{folder}/retry{k}"), *nonce ^ k),
            },
            // A count-mode run whose documents were all stored but whose measurement was
            // lost (`run` writes its result once, at the end) is measured again the same way.
            Folders::One { folder, nonce } => match fresh {
                0 => (folder.clone(), *nonce),
                k => (format!("{folder}/retry{k}"), *nonce ^ k),
            },
            // Named from the plan, the cell and the run, so every shard of a plan puts its
            // part of a run in the same folder with the same markers; a steady-state run
            // that was interrupted is run again in a folder of its own.
            // A count-mode run whose documents were all stored but whose record was lost (a
            // hard stop at its very end) is measured again in a folder of its own (`fresh`).
            Folders::PerRun { base } => {
                let tries = if window.is_some() {
                    self.tries(cell, run)
                } else {
                    fresh
                };
                let h = crate::fixtures::hash_str(&format!("{base}/{}/{run}/{tries}", cell.tag()));
                let rate = cell
                    .rate_per_s
                    .map_or(String::new(), |r| format!("/rate{r}"));
                (
                    format!(
                        "{base}/{}-{}/{}/t{}{rate}/a{:04x}",
                        cell.method,
                        cell.connection,
                        cell.size,
                        cell.threads,
                        h & 0xffff
                    ),
                    self.seed ^ h,
                )
            }
        };
        CellPlan {
            docs: self.work.docs,
            window,
            once: self.measure.once,
            warmup: self.measure.warmup.resolve(
                self.work.docs,
                cell.threads,
                window.map(|w| w.as_secs_f64()),
                warm,
            ),
            threads: cell.threads,
            docs_per_folder: self.docs_per_folder,
            folder,
            nonce,
            tag: self.work.tag_manifest.then(|| Arc::from(cell.tag())),
            retries: self.retries,
            resuming: self.work.resuming,
            connections: Some(counter),
            shard: self.shard,
            rendezvous: self.rendezvous.clone(),
            metrics: self.metrics.as_ref().map(|m| m.cell(cell)),
            resources: self.servers.get(&cell.method).cloned(),
            target_on_this_host: crate::transport::access::is_loopback(url),
            attempt: self.work.attempt,
            earlier: self
                .work
                .resuming
                .then(|| Arc::new(self.earlier_run(cell, run, known))),
            // A rates sweep's cell is paced at its own rate; its baseline (rate 0) is not
            // paced: a closed-loop seeding import, then the readers alone.
            rate: match cell.rate_per_s {
                Some(r) if r > 0.0 => Some(r),
                Some(_) => None,
                None => self.measure.rate_per_s,
            },
            readers: self.measure.readers,
            readers_alone: cell
                .is_readers_baseline()
                .then(|| self.readers_alone_window(window)),
            auto: watched,
            jtl: self.jtl.as_ref().map(|sink| {
                (
                    sink.clone(),
                    crate::metrics::jtl::Cell {
                        label: Arc::from(cell.tag()),
                        url: Arc::from(crate::transport::access::redact(url)),
                        threads: cell.threads,
                    },
                )
            }),
        }
    }

    /// How long the readers-alone baseline reads: the measured window (`--duration`), else
    /// the longest paced schedule of the sweep (its documents at its lowest rate), so the
    /// baseline's readers read about as long as the slowest import's do.
    fn readers_alone_window(&self, window: Option<Duration>) -> Duration {
        window.unwrap_or_else(|| {
            let slowest = self
                .work
                .schedule
                .iter()
                .filter_map(|(c, _)| c.rate_per_s)
                .filter(|r| *r > 0.0)
                .fold(f64::INFINITY, f64::min);
            let secs = if slowest.is_finite() {
                self.work.docs as f64 / slowest
            } else {
                1.0
            };
            Duration::from_secs_f64(secs.max(0.5))
        })
    }

    /// What the interrupted attempts' manifest holds of this run of `cell`.
    fn earlier_run(&self, cell: &CellKey, run: u32, known: &Arc<HashSet<String>>) -> EarlierRun {
        let tag = self.work.tag_manifest.then(|| cell.tag());
        let mut warmup_lines: HashMap<String, HashSet<u64>> = HashMap::new();
        for e in self
            .work
            .earlier
            .iter()
            .filter(|e| e.warmup && e.run == run && e.cell.as_deref() == tag.as_deref())
        {
            if let Some((base, _)) = e.folder.rsplit_once('/') {
                warmup_lines
                    .entry(base.to_string())
                    .or_default()
                    .insert(e.index);
            }
        }
        EarlierRun {
            known_ids: known.clone(),
            warmup_lines,
        }
    }

    /// How many folders earlier attempts at this run of `cell` used (grows with each).
    fn tries(&self, cell: &CellKey, run: u32) -> u64 {
        let tag = self.work.tag_manifest.then(|| cell.tag());
        let folders: std::collections::HashSet<&str> = self
            .work
            .earlier
            .iter()
            .filter(|e| e.run == run && e.cell.as_deref() == tag.as_deref())
            .map(|e| e.folder.as_str())
            .collect();
        folders.len() as u64
    }

    /// The interrupted run this one finishes, if the earlier manifest has one.
    fn resume_point(&self, plan: &CellPlan, run: u32) -> Option<ResumePoint> {
        if plan.window.is_some() {
            return None;
        }
        let tag = plan.tag.as_deref();
        let of_run = |e: &&ManifestEntry| e.cell.as_deref() == tag && e.run == run && !e.warmup;
        // The latest attempt's run folder (a run measured again has an older, complete one).
        let latest = self
            .work
            .earlier
            .iter()
            .rev()
            .find(of_run)
            .and_then(|e| e.folder.rsplit_once('/'))
            .map(|(f, _)| f)?;
        ResumePoint::from_entries(
            self.work
                .earlier
                .iter()
                .filter(of_run)
                .filter(|e| e.folder.rsplit_once('/').is_some_and(|(f, _)| f == latest)),
            self.work.docs,
        )
    }

    /// With `--precision`: one more run of every cell whose docs/sec interval is still wider
    /// than asked and that has fewer than `--max-runs` runs, in the order the cells came.
    fn another_round(
        &self,
        order: &[CellKey],
        rates: &HashMap<CellKey, Vec<(u32, f64)>>,
    ) -> Vec<(CellKey, u32)> {
        let Some(pct) = self.measure.precision_pct else {
            return Vec::new();
        };
        order
            .iter()
            .filter_map(|c| {
                let runs = rates.get(c)?;
                let values: Vec<f64> = runs.iter().map(|r| r.1).collect();
                let precise = crate::analysis::stats::relative_ci95(&values)
                    .is_some_and(|h| h * 100.0 <= pct);
                let next = runs.iter().map(|r| r.0).max().unwrap_or(0) + 1;
                (!precise && (runs.len() as u32) < self.measure.max_runs).then(|| (c.clone(), next))
            })
            .collect()
    }

    /// With `--budget`: one more run (paired: a pair) for each comparison still open (see
    /// `budget`; never past `--max-runs` runs of a cell), but the deferred runs (taken off
    /// `deferred`) once no comparison the answers state is open; in order while they fit in
    /// the time left, judged by each cell's latest run. Not its mean: a cell's first run
    /// carries the warm-up until steady (5-7 s on the quick start, ten times the run), which
    /// no further run repeats.
    fn budget_round(
        &self,
        rates: &HashMap<CellKey, Vec<(u32, f64)>>,
        walls: &HashMap<CellKey, f64>,
        deferred: &mut Vec<(CellKey, u32)>,
        elapsed_s: f64,
    ) -> Vec<(CellKey, u32)> {
        let (Some(budget), Some(base)) = (self.measure.budget_s, &self.work.baseline) else {
            return Vec::new();
        };
        let m = &self.measure;
        let open = super::budget::open(rates, base, m.precision_pct, self.work.paired, m.max_runs);
        let left = budget - elapsed_s;
        if !deferred.is_empty() && !open.iter().any(|o| o.stated) {
            let runs = super::budget::fit(super::budget::pairs(deferred), walls, left);
            *deferred = deferred.split_off(runs.len());
            return runs;
        }
        let groups = super::budget::round(rates, &open, self.work.paired);
        super::budget::fit(groups, walls, left)
    }
}

/// Runs the schedule, then (with `--precision` or `--budget`) further rounds; returns when
/// it is done or stopped (see the module header).
pub async fn run_sweep(job: SweepJob<'_>, obs: &mut dyn RunObserver) -> Result<SweepEnd> {
    // Writes still pending on this machine (a build just finished, a copy) go out now, not
    // ~30 s from now in the middle of the first runs (the kernel's write-back expiry): on the
    // quick start after its release build, a whole round of runs came out ~20 % slow.
    let _ = tokio::task::spawn_blocking(|| {
        // SAFETY: sync(2) takes no arguments and cannot fail.
        unsafe { libc::sync() }
    })
    .await;
    let mut schedule: Vec<(CellKey, u32)> = job.work.schedule.to_vec();
    let mut order: Vec<CellKey> = Vec::new();
    for (c, _) in &schedule {
        if !order.contains(c) {
            order.push(c.clone());
        }
    }
    let mut rates = job.work.history.clone();
    let mut deferred = job.work.deferred.to_vec();
    let known: Arc<HashSet<String>> = Arc::new(
        job.work
            .earlier
            .iter()
            .filter(|e| e.ok)
            .filter_map(|e| e.id.clone())
            .collect(),
    );
    // Access methods whose server a warm-up until steady has warmed in this invocation.
    let mut warmed: HashSet<String> = HashSet::new();
    let started = std::time::Instant::now();
    // Each cell's latest run, wall-clock seconds (what `--budget` expects a further one to take).
    let mut walls: HashMap<CellKey, f64> = HashMap::new();
    if let Ok(mut r) = job.live.runs.lock() {
        r.budget_end = job
            .measure
            .budget_s
            .map(|b| started + std::time::Duration::from_secs_f64(b.max(0.0)));
    }
    let mut k = 0;
    loop {
        while k < schedule.len() {
            if job.live.stop.load(Ordering::Relaxed) || job.manifest.broken() {
                return Ok(SweepEnd::default());
            }
            let (cell, run) = schedule[k].clone();
            let t0 = std::time::Instant::now();
            if let Ok(mut r) = job.live.runs.lock() {
                r.left = schedule.len() - k;
                r.current = Some(t0);
            }
            k += 1;
            let Some((rate, end)) = one_run(
                &job,
                obs,
                &known,
                &mut warmed,
                &cell,
                run,
                (k - 1, schedule.len()),
            )
            .await?
            else {
                continue;
            };
            if end.fatal.is_some() || job.live.interrupted.load(Ordering::Relaxed) {
                return Ok(end);
            }
            walls.insert(cell.clone(), t0.elapsed().as_secs_f64());
            if let Ok(mut r) = job.live.runs.lock() {
                r.durations_s.push(t0.elapsed().as_secs_f64());
            }
            rates.entry(cell).or_default().push((run, rate));
        }
        let more = if job.measure.budget_s.is_some() {
            job.budget_round(
                &rates,
                &walls,
                &mut deferred,
                started.elapsed().as_secs_f64(),
            )
        } else {
            job.another_round(&order, &rates)
        };
        if more.is_empty() {
            return Ok(SweepEnd::default());
        }
        schedule.extend(more);
    }
}

/// One `(cell, run)`: its plan, its measurement, the observer told. `None` when
/// the manifest shows it done already; else the run's docs/sec and how the schedule goes on.
async fn one_run(
    job: &SweepJob<'_>,
    obs: &mut dyn RunObserver,
    known: &Arc<HashSet<String>>,
    warmed: &mut HashSet<String>,
    cell: &CellKey,
    run: u32,
    (k, n): (usize, usize),
) -> Result<Option<(f64, SweepEnd)>> {
    let c = job.session.get(&cell.method, cell.connection)?;
    let warm = warmed.contains(&cell.method);
    let mut plan = job.cell_plan(cell, run, c, known, 0, warm);
    let mut resume = job.resume_point(&plan, run);
    let owned = plan.owned();
    if resume
        .as_ref()
        .is_some_and(|r| !r.todo.iter().any(|i| owned.contains(i)))
    {
        // The schedule lists only runs without a record (a sweep keeps each run's record as
        // it ends; `run` writes its result at the end): this one's documents are all stored
        // but a hard stop lost its measurement, so it is measured again in a folder of its
        // own, and the result has every planned run.
        plan = job.cell_plan(cell, run, c, known, job.tries(cell, run), warm);
        resume = None;
    }
    obs.starting(k, n, cell, run);
    let fixtures = job.work.fixtures[&cell.size].clone();
    let cpu0 = crate::host::process_cpu_seconds() - crate::sampler::embedded_target_cpu_seconds();
    let m = run_cell(
        c.repo.clone(),
        fixtures,
        &plan,
        run,
        job.live.clone(),
        job.manifest,
        resume.as_ref(),
    )
    .await?;
    let cpu = crate::host::process_cpu_seconds()
        - crate::sampler::embedded_target_cpu_seconds()
        - m.cpu_at_start_s.unwrap_or(cpu0);
    // Settled or capped, the server had its chance to warm: later runs warm their own
    // connections only.
    if m.warmup_settled.is_some() {
        warmed.insert(cell.method.clone());
    }
    let interrupted = job.live.interrupted.load(Ordering::Relaxed);
    let fatal = m.fatal.clone();
    let secs = m.duration.as_secs_f64();
    let rate = if secs > 0.0 {
        m.recorder.docs_ok as f64 / secs
    } else {
        0.0
    };
    let done = super::RunDone::of(cell, &m, rate);
    // On a full disk the manifest fails first, then the run's record: the manifest's error
    // is the one that says what was lost and what to do.
    obs.finished(cell, m, cpu.max(0.0), interrupted)
        .map_err(|e| match job.manifest.error() {
            Some(first) => anyhow::anyhow!("{first} (then: {e:#})"),
            None => e,
        })?;
    if let Ok(mut d) = job.live.runs_done.lock() {
        d.push(done);
    }
    Ok(Some((
        rate,
        SweepEnd {
            fatal: fatal.map(|r| (cell.clone(), r)),
        },
    )))
}
