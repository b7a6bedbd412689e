//! A run's `result.json`: one exporter of the summary of a results directory of one cell
//! (its plan and runs in, [`RunResult`] out, the numbers from `analysis::summary` like every
//! other report; its head is the results model's [`RunHead`], which the loader reads back),
//! and the summary of a results directory as every report renders it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::analysis::summary::{CellSummary, SweepSummary, merged_histogram, summarize};
use crate::metrics::{ErrorSummary, LatencyMs, encode_hist, round3};
use crate::results::result::{RepositoryRecord, RunHead, plan_record, run_cell};
use crate::results::{
    CellRun, PlanRecord, RunRecord, SCHEMA_VERSION, ShardRecord, load_dir, write_atomic,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// What the run was: its id, seed, plan, host and target.
    #[serde(flatten)]
    pub head: RunHead,
    /// Documents per worker per run (the quota split with remainder).
    pub worker_quotas: Vec<u64>,
    /// Workers with a quota of 0 (more threads than documents).
    pub idle_workers: u64,
    pub runs: Vec<RunRecord>,
    /// Mean docs acknowledged per run / mean run duration (N / mean duration when nothing failed).
    pub docs_per_sec: f64,
    /// Mean of the per-run rates.
    pub docs_per_sec_mean: f64,
    /// Sample standard deviation of the per-run rates.
    pub docs_per_sec_stddev: f64,
    pub mb_per_sec: f64,
    pub docs_ok: u64,
    pub docs_failed: u64,
    /// Extra attempts over all runs (`--retries`), and documents found already stored.
    #[serde(default)]
    pub retries: u64,
    #[serde(default)]
    pub recovered: u64,
    /// Earlier versions uploaded before the heads, over all runs (see [`RunRecord`]).
    #[serde(default, skip_serializing_if = "crate::results::is_zero")]
    pub versions_ok: u64,
    /// Folders created, over all runs.
    #[serde(default, skip_serializing_if = "crate::results::is_zero")]
    pub folders_created: u64,
    pub mean_duration_s: f64,
    /// Over all runs, merged from HDR histograms.
    pub latency_ms: LatencyMs,
    pub errors: Vec<ErrorSummary>,
    pub node_split: std::collections::BTreeMap<String, u64>,
    /// Latency histogram of all runs (µs), HdrHistogram V2 encoding, base64: merges exactly.
    pub latency_histogram_us: String,
    /// CPU seconds ingestbench used during the runs, and as a share of all cores.
    pub client_cpu_s: f64,
    pub client_cpu_share: f64,
    /// Manifest file name, relative to the result file.
    pub manifest: String,
    /// Set when the run stopped because the repository rejected the documents outright.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub aborted: Option<String>,
    /// True in the result written before the first upload (what `--resume`, `verify` and
    /// `cleanup` need); the final result replaces it. Still true after a hard stop.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_progress: bool,
    /// Throughput at the end of the runs against their start (over 2 runs or more).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drift: Option<crate::analysis::scaling::Drift>,
    /// With `--verify`: what reading every document back found.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub verify: Option<crate::results::verified::VerifyReport>,
    /// Coefficient of variation of the per-run docs/sec, %, and the half-width of the 95 %
    /// interval of their mean in % of it (2 runs or more).
    #[serde(default)]
    pub cv_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_pct: Option<f64>,
    /// Warm-up documents over all runs (0: measured cold).
    #[serde(default)]
    pub warmup_docs: u64,
    /// The servers' CPU and memory over the runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<crate::analysis::limits::ServerSummary>,
    /// What most likely limited the runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<crate::analysis::limits::Bottleneck>,
    /// Each resource's busy time per stored document over the runs, the bottleneck first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub demands: Vec<crate::analysis::demands::Demand>,
    /// What limited the runs, the bound and what would help (`analysis::verdict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::analysis::verdict::Verdict>,
    /// `--shard K/N`: which part of the plan this result holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
}

/// A result reads as its head too (`result.id`, `result.plan`): the library's callers and the
/// report read the run's identity and plan without spelling out where the JSON keeps them.
impl std::ops::Deref for RunResult {
    type Target = RunHead;
    fn deref(&self) -> &RunHead {
        &self.head
    }
}

/// What a run's `result.json` holds beyond its plan and runs.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// Documents the embedded target held in the run's folder afterwards (embedded only).
    pub stored_docs: Option<u64>,
    /// With `--verify`: what reading every document back found.
    pub verify: Option<crate::results::verified::VerifyReport>,
    /// Written before the first upload, or after a hard stop: the runs are not all there.
    pub in_progress: bool,
}

/// `result.json` of a run: its plan and the runs given (those of `runs/`, and the part of a
/// run an interrupt stopped, which `--resume` measures again), summarized as every report is.
pub fn run_result(plan: &PlanRecord, runs: &[CellRun], extras: Extras) -> RunResult {
    let mut runs: Vec<&CellRun> = runs.iter().collect();
    runs.sort_by_key(|r| r.record.run);
    let owned: Vec<CellRun> = runs.iter().map(|r| (*r).clone()).collect();
    let summary = summarize(plan, &owned);
    let none = CellSummary::empty(&run_cell(plan));
    let c = summary.cells.first().unwrap_or(&none);
    let n = runs.len().max(1) as f64;
    let mean_duration = runs.iter().map(|r| r.record.duration_s).sum::<f64>() / n;
    let quotas = crate::plan::quota::shard_quotas(
        plan.docs,
        plan.threads.first().copied().unwrap_or(1),
        plan.shard.as_ref().map(|s| (s.index, s.count)),
    );
    let method = plan.methods.first();
    RunResult {
        head: RunHead {
            schema_version: SCHEMA_VERSION,
            tool: plan.tool.clone(),
            id: plan.id.clone(),
            started_at: plan.started_at.clone(),
            seed: plan.seed,
            plan: plan_record(plan),
            host: plan.host.clone(),
            target: RepositoryRecord {
                url: method.map(|m| m.url.clone()).unwrap_or_default(),
                embedded: method.is_some_and(|m| m.embedded),
                stored_docs: extras.stored_docs,
            },
        },
        idle_workers: quotas.iter().filter(|q| **q == 0).count() as u64,
        worker_quotas: quotas,
        runs: runs
            .iter()
            .map(|r| crate::results::RunRecord {
                latency_histogram_us: r.latency_histogram_us.clone(),
                ..r.record.clone()
            })
            .collect(),
        docs_per_sec: c.docs_per_sec,
        docs_per_sec_mean: c.docs_per_sec_mean,
        docs_per_sec_stddev: c.docs_per_sec_stddev,
        mb_per_sec: c.mb_per_sec,
        docs_ok: c.docs_ok,
        docs_failed: c.docs_failed,
        retries: c.retries,
        recovered: c.recovered,
        versions_ok: c.versions_ok,
        folders_created: c.folders_created,
        mean_duration_s: (mean_duration * 1e6).round() / 1e6,
        latency_ms: c.latency_ms.clone(),
        errors: c.errors.clone(),
        node_split: c.node_split.clone(),
        latency_histogram_us: encode_hist(
            &merged_histogram(&runs).unwrap_or_else(|| crate::metrics::Recorder::new().latency_us),
        ),
        client_cpu_s: round3(runs.iter().map(|r| r.client_cpu_s).sum()),
        client_cpu_share: c.client_cpu_share,
        manifest: "manifest.jsonl".into(),
        aborted: runs.iter().find_map(|r| r.record.aborted.clone()),
        in_progress: extras.in_progress,
        drift: c.drift.clone(),
        verify: extras.verify,
        cv_pct: c.cv_pct,
        ci95_pct: c.ci95_pct,
        warmup_docs: c.warmup_docs,
        servers: c.servers.clone(),
        bottleneck: c.bottleneck.clone(),
        demands: c.demands.clone(),
        verdict: c.verdict.clone(),
        shard: plan.shard.clone(),
    }
}

/// The summary of a results directory as every report renders it: its runs, and the import
/// estimate when `estimate.json` is there.
pub fn load_summary(dir: &Path) -> Result<SweepSummary> {
    let (plan, runs) = load_dir(dir)?;
    summary_of(dir, &plan, &runs)
}

/// The summary of `plan` and `runs`, with the import estimate `dir` holds, if any.
pub fn summary_of(dir: &Path, plan: &PlanRecord, runs: &[CellRun]) -> Result<SweepSummary> {
    let mut s = crate::analysis::summary::summarize(plan, runs);
    let p = dir.join("estimate.json");
    if p.is_file() {
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))?;
        s.estimate = Some(
            serde_json::from_str(&text)
                .with_context(|| format!("{}: not an ingestbench estimate", p.display()))?,
        );
    }
    Ok(s)
}

/// Writes a run's `result.json` (pretty JSON; returned too).
pub fn write_result(dir: &Path, result: &RunResult) -> Result<String> {
    let json = serde_json::to_string_pretty(result)?;
    write_atomic(&dir.join("result.json"), &json)?;
    Ok(json)
}

/// A run's `result.json` as it stands on disk, re-exported from `plan` and `runs` (what it
/// recorded beside them, the embedded target's count and the verification, kept).
pub fn rewrite_result(dir: &Path, plan: &PlanRecord, runs: &[CellRun]) -> Result<Option<PathBuf>> {
    // An older run directory's result.json is its only record: kept as it is.
    if plan.kind != crate::results::PlanKind::Run || !dir.join("plan.json").is_file() {
        return Ok(None);
    }
    let p = dir.join("result.json");
    let before: Option<RunResult> = std::fs::read_to_string(&p)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let verify = match before.as_ref().and_then(|b| b.verify.clone()) {
        Some(v) => Some(v),
        None => std::fs::read_to_string(dir.join("verify.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok()),
    };
    let extras = Extras {
        stored_docs: before.as_ref().and_then(|b| b.head.target.stored_docs),
        verify,
        in_progress: (runs.len() as u64) < plan.runs_planned(),
    };
    write_result(dir, &run_result(plan, runs, extras))?;
    Ok(Some(p))
}
