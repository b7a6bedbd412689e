//! ONE results model, a run a sweep of one cell: what a measurement writes (`record`: the
//! plan, `plan.json`, and each run of a cell, `runs/<cell>_r<R>.json`, with their `paced` and
//! `readers` parts), the manifest of every document (`manifest`), the verify record
//! (`verified`), a run's `result.json` as older run directories hold it (`result`), and the
//! results directory on disk with its one writer: `plan.json` and `methods.json` before the
//! first upload, `runs/<cell>_r<R>.json` the moment each run ends (written atomically, so a
//! crash never leaves half a file); and the one loader for `--resume`, `report`, `compare`,
//! `verify`, `merge` and `cleanup`, which also reads run directories written before this
//! layout (only `result.json` and the manifest). Data and its I/O, no model: the summary of a
//! sweep is `analysis::summary`, the exporters (`report`) render from both.

pub mod manifest;
pub mod merge;
pub mod paced;
pub mod readers;
pub mod record;
pub mod result;
pub mod verified;

pub(crate) use record::is_zero;
pub use record::{
    AutoSample, CellKey, CellRun, MeasurePolicy, MethodRecord, Order, PlanKind, PlanRecord,
    RunRecord, SCHEMA_VERSION, SampleStop, SampleStopReason, ShardRecord, SizeLatency,
    TimelinePoint, Tool, Warmup, WarmupRule, budget_defers,
};

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::metrics::{Recorder, round3};
use crate::transport::AccessMethod;

/// Writes `text` to `path` durably and atomically: a temporary file, fsync, rename, then an
/// fsync of the directory, so a crash leaves the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut f =
        std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A `--resume` of `dir`: which start of the run or sweep this is (1 for the first resume),
/// written to `dir/attempt` before anything is uploaded, so every attempt's warm-up
/// documents are its own even when the attempt is stopped before its first manifest line.
pub fn next_attempt(dir: &Path) -> Result<u32> {
    let p = dir.join("attempt");
    let k = match std::fs::read_to_string(&p) {
        Ok(t) => {
            t.trim().parse::<u32>().with_context(|| {
                format!(
                    "{}: not an attempt number (delete it if it was edited by hand)",
                    p.display()
                )
            })? + 1
        }
        // A run directory resumed before this layout kept each attempt's result as
        // result.<k>.json: the next attempt comes after those.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (1u32..)
            .find(|k| !dir.join(format!("result.{k}.json")).exists())
            .unwrap_or(1),
        Err(e) => return Err(e).with_context(|| format!("reading {}", p.display())),
    };
    write_atomic(&p, &format!("{k}\n"))?;
    Ok(k)
}

/// Creates `dir/runs` and writes the plan and the methods (before anything is uploaded).
pub fn create_dir(dir: &Path, plan: &PlanRecord, methods: &[AccessMethod]) -> Result<()> {
    std::fs::create_dir_all(dir.join("runs"))
        .with_context(|| format!("--results-dir: cannot create {}", dir.display()))?;
    write_atomic(&dir.join("plan.json"), &serde_json::to_string_pretty(plan)?)?;
    write_atomic(
        &dir.join("methods.json"),
        &serde_json::to_string_pretty(methods)?,
    )
}

/// Is `dir` a results directory: `plan.json`, or an older run's `result.json`?
pub fn is_results_dir(dir: &Path) -> bool {
    dir.join("plan.json").is_file() || dir.join("result.json").is_file()
}

/// A run directory written before `plan.json` and `runs/`: its `result.json`.
fn legacy_run(dir: &Path) -> Result<Option<result::RunFile>> {
    if dir.join("plan.json").exists() {
        return Ok(None);
    }
    let p = dir.join("result.json");
    let Ok(text) = std::fs::read_to_string(&p) else {
        return Ok(None);
    };
    let r: result::RunFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not an ingestbench run result", p.display()))?;
    Ok(Some(r))
}

/// The access methods a results directory recorded (`methods.json`; an older run directory:
/// `direct` to the URL its result names).
pub fn load_methods(dir: &Path) -> Result<Vec<AccessMethod>> {
    if let Some(r) = legacy_run(dir)? {
        let url = if r.head.target.embedded {
            "embedded:http".to_string()
        } else {
            r.head.target.url.clone()
        };
        return Ok(vec![crate::transport::access::direct_method(
            url,
            None,
            r.head.plan.protocol,
        )]);
    }
    let p = dir.join("methods.json");
    let text = std::fs::read_to_string(&p)
        .with_context(|| format!("{}: missing (not a complete sweep directory)", p.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a list of access methods", p.display()))
}

fn rate(n: f64, secs: f64) -> f64 {
    if secs > 0.0 { n / secs } else { 0.0 }
}

/// What one run of one cell measured: what the engine hands the writer ([`run_record`]).
pub struct RunMeasurement {
    pub run: u32,
    pub duration: Duration,
    pub recorder: Recorder,
    pub folder: String,
    /// Set when the repository rejected the input outright (a client error before any success).
    pub fatal: Option<String>,
    /// Connections the client opened during the run.
    pub new_connections: u64,
    /// Upload runtimes (threads) the run's workers were dealt to (`pool::width`; 0: the
    /// shared runtime); `None` for merged shards.
    pub upload_runtimes: Option<usize>,
    /// Seconds from the start at which 10 %, 20 %, … 100 % of the run's documents had
    /// completed (empty for runs of fewer than 10 documents): throughput over time.
    pub progress_s: Vec<f64>,
    /// The run's trajectory (`engine::timeline`).
    pub timeline: Vec<crate::results::TimelinePoint>,
    /// Warm-up documents acknowledged and failed before the start (not measured).
    pub warmup_ok: u64,
    pub warmup_failed: u64,
    /// `--warmup auto`: how long the warm-up took and whether it settled.
    pub warmup_s: Option<f64>,
    pub warmup_settled: Option<bool>,
    /// `--duration`: documents acknowledged after the window closed (not counted).
    pub docs_after_window: u64,
    /// Seconds of the measured window (`--duration`), `None` in count mode.
    pub window_s: Option<f64>,
    /// The servers' CPU and memory during the run (filled in by the sweep engine).
    pub servers: Vec<crate::metrics::servers::ServerUsage>,
    /// What each resource spent over the measured window (`CellPlan::resources`).
    pub resources: Option<crate::metrics::resources::RunResources>,
    /// When the run started by this machine's clock, ms since the Unix epoch.
    pub started_unix_ms: i64,
    /// Shards: the start all shards agreed on (`started_unix_ms` − this = this shard's lag).
    pub go_unix_ms: Option<i64>,
    /// Merged shards: the latest shard's start minus the earliest's, ms.
    pub start_skew_ms: Option<i64>,
    /// This process's CPU seconds (less the embedded target's) when the window opened: a
    /// run's client CPU counts from here, not from before its warm-up, since its share is
    /// taken over the window alone (counted from before, a 4-document run after a 3-second
    /// warm-up showed the client at 2,289 % of the machine).
    pub cpu_at_start_s: Option<f64>,
    /// `--rate`: the schedule and what became of it.
    pub paced: Option<crate::results::paced::PacedRecord>,
    /// `--readers`: what they read while the import ran.
    pub readers: Option<crate::results::readers::ReadersRecord>,
    /// `run --sample-time auto`, its first run: why it stopped.
    pub sample_stop: Option<SampleStop>,
    /// The measured part's documents by size, with their latencies (`engine::timeline`).
    pub latency_by_size: Vec<SizeLatency>,
}

/// The record of one run (durations to the µs).
pub fn run_record(o: &RunMeasurement) -> RunRecord {
    let d = o.duration.as_secs_f64();
    RunRecord {
        run: o.run,
        duration_s: (d * 1e6).round() / 1e6,
        docs_ok: o.recorder.docs_ok,
        docs_failed: o.recorder.docs_failed,
        docs_per_sec: round3(rate(o.recorder.docs_ok as f64, d)),
        bytes_ok: o.recorder.bytes_ok,
        mb_per_sec: round3(rate(o.recorder.bytes_ok as f64 / 1e6, d)),
        latency_ms: o.recorder.latency(),
        errors: o.recorder.errors(),
        node_split: o.recorder.nodes.clone(),
        folder: o.folder.clone(),
        new_connections: o.new_connections,
        upload_runtimes: o.upload_runtimes,
        retries: o.recorder.retries,
        recovered: o.recorder.recovered,
        versions_ok: o.recorder.versions_ok,
        folders_created: o.recorder.folders_created,
        progress_s: o.progress_s.clone(),
        warmup_docs: o.warmup_ok,
        warmup_failed: o.warmup_failed,
        warmup_s: o.warmup_s,
        warmup_settled: o.warmup_settled,
        window_s: o.window_s,
        docs_after_window: o.docs_after_window,
        servers: o.servers.clone(),
        resources: o.resources.clone(),
        started_unix_ms: o.started_unix_ms,
        start_lag_ms: o.go_unix_ms.map(|g| o.started_unix_ms - g),
        start_skew_ms: o.start_skew_ms,
        latency_histogram_us: String::new(),
        aborted: o.fatal.clone(),
        timeline: o.timeline.clone(),
        paced: o.paced.clone(),
        readers: o.readers.clone(),
        sample_stop: o.sample_stop.clone(),
        latency_by_size: o.latency_by_size.clone(),
    }
}

/// The record of one finished run of `cell`, as `runs/<cell>_r<R>.json` holds it.
pub fn cell_run(cell: &CellKey, m: &RunMeasurement, client_cpu_s: f64) -> CellRun {
    CellRun {
        cell: cell.clone(),
        record: run_record(m),
        latency_histogram_us: crate::metrics::encode_hist(&m.recorder.latency_us),
        client_cpu_s: crate::metrics::round3(client_cpu_s),
    }
}

/// Writes a run record as it is (`runs/<cell>_r<R>.json`).
pub fn write_cell_run(dir: &Path, rec: &CellRun) -> Result<()> {
    write_atomic(
        &dir.join("runs")
            .join(format!("{}.json", rec.cell.file_stem(rec.record.run))),
        &serde_json::to_string_pretty(rec)?,
    )
}

/// Reads `plan.json` and every `runs/*.json` of a results directory (an older run directory:
/// its `result.json` as the same plan and runs).
pub fn load_dir(dir: &Path) -> Result<(PlanRecord, Vec<CellRun>)> {
    if let Some(r) = legacy_run(dir)? {
        return Ok(crate::results::result::from_result(r));
    }
    let plan_path = dir.join("plan.json");
    let plan: PlanRecord = serde_json::from_str(
        &std::fs::read_to_string(&plan_path)
            .with_context(|| format!("cannot read {}", plan_path.display()))?,
    )
    .with_context(|| format!("{}: not an ingestbench sweep plan", plan_path.display()))?;
    if plan.schema_version != SCHEMA_VERSION {
        bail!(
            "{}: schema_version {} is not the {SCHEMA_VERSION} this ingestbench reads",
            plan_path.display(),
            plan.schema_version
        );
    }
    let mut runs = Vec::new();
    let runs_dir = dir.join("runs");
    if runs_dir.is_dir() {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&runs_dir)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        for p in paths {
            let r: CellRun = serde_json::from_str(&std::fs::read_to_string(&p)?)
                .with_context(|| format!("{}: not a sweep run result", p.display()))?;
            runs.push(r);
        }
    }
    Ok((plan, runs))
}
