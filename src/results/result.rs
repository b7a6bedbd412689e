//! A run's `result.json`: one exporter of the summary of a results directory of one cell
//! (its plan and runs in, [`RunResult`] out, the numbers from `summary::summarize` like every
//! other report), and its inverse for run directories written before `plan.json` and `runs/`
//! (their `result.json` in, the plan and runs out), so old results load through the one
//! model. Pure: values in, values out.

use super::summary::{CellSummary, merged_histogram, summarize};
use crate::fixtures::SizeClass;
use crate::metrics::{encode_hist, round3};
use serde::{Deserialize, Serialize};

use crate::host::HostFacts;
use crate::metrics::{ErrorSummary, LatencyMs};
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::records::{
    CellKey, CellRun, MeasurePolicy, MethodRecord, Order, PlanKind, RunRecord, SCHEMA_VERSION,
    ShardRecord, SweepPlan, Tool,
};
use crate::transport::ConnectionPolicy;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RepositoryRecord {
    /// Repository URL, credentials removed.
    pub url: String,
    /// True when ingestbench started its embedded reference target.
    pub embedded: bool,
    /// Documents the embedded target holds in this invocation's folder (embedded only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stored_docs: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool: Tool,
    pub id: String,
    pub started_at: String,
    pub seed: u64,
    pub plan: PlanRecord,
    pub host: HostFacts,
    pub target: RepositoryRecord,
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
    #[serde(default, skip_serializing_if = "crate::records::is_zero")]
    pub versions_ok: u64,
    /// Folders created, over all runs.
    #[serde(default, skip_serializing_if = "crate::records::is_zero")]
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

/// The plan as a run's `result.json` shows it (no secrets): the exporter's view of a
/// [`SweepPlan`] of one cell.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PlanRecord {
    pub protocol: ProtocolKind,
    pub auth: AuthMode,
    pub user: String,
    pub parent: String,
    pub size_class: SizeClass,
    pub doc_size_bytes: u64,
    pub docs: u64,
    pub threads: u64,
    pub runs: u32,
    pub seed: u64,
    pub profile: String,
    pub node_type: String,
    pub properties_per_doc: usize,
    pub docs_per_folder: u64,
    pub versioning: bool,
    pub timeout_s: f64,
    #[serde(default)]
    pub retries: u32,
    /// `run --corpus`: the corpus description whose size mix the documents follow
    /// (`doc_size_bytes` is then the mix's mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<String>,
    /// `run --corpus DIR`: the files keep their names in their own folders, recreated below
    /// each run's folder (false: `--flatten`, numbered folders; and results before it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub corpus_tree: bool,
    /// `run --corpus DIR`: the sample asked and the name policy (`--on-name-clash`,
    /// `--on-bad-name`), so `--resume` stores the same files under the same names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_names: Option<crate::corpus::policy::NamesRecord>,
    /// Warm-up, steady state and precision (absent in results made before them).
    #[serde(default)]
    pub measure: MeasurePolicy,
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

/// The one cell of a run's plan.
pub fn run_cell(plan: &SweepPlan) -> CellKey {
    CellKey {
        method: plan
            .methods
            .first()
            .map_or("direct".into(), |m| m.name.clone()),
        connection: ConnectionPolicy::Reuse,
        size: plan.sizes.first().map_or(SizeClass::Small, |s| s.0),
        threads: plan.threads.first().copied().unwrap_or(1),
        rate_per_s: None,
    }
}

/// The plan as `result.json` shows it.
pub fn plan_record(plan: &SweepPlan) -> PlanRecord {
    let (size_class, doc_size_bytes) = plan.sizes.first().copied().unwrap_or((SizeClass::Small, 0));
    PlanRecord {
        protocol: plan.protocol,
        auth: plan.auth,
        user: plan.user.clone(),
        parent: plan.parent.clone(),
        size_class,
        doc_size_bytes,
        docs: plan.docs,
        threads: plan.threads.first().copied().unwrap_or(1),
        runs: plan.runs,
        seed: plan.seed,
        profile: plan.profile.clone(),
        node_type: plan.node_type.clone(),
        properties_per_doc: plan.properties_per_doc,
        docs_per_folder: plan.docs_per_folder,
        versioning: plan.versioning,
        timeout_s: plan.timeout_s,
        retries: plan.retries,
        corpus: plan.corpus.clone(),
        corpus_tree: plan.corpus_tree,
        corpus_names: plan.corpus_names,
        measure: plan.measure,
    }
}

/// `result.json` of a run: its plan and the runs given (those of `runs/`, and the part of a
/// run an interrupt stopped, which `--resume` measures again), summarized as every report is.
pub fn run_result(plan: &SweepPlan, runs: &[CellRun], extras: Extras) -> RunResult {
    let mut runs: Vec<&CellRun> = runs.iter().collect();
    runs.sort_by_key(|r| r.record.run);
    let owned: Vec<CellRun> = runs.iter().map(|r| (*r).clone()).collect();
    let summary = summarize(plan, &owned);
    let none = CellSummary::empty(&run_cell(plan));
    let c = summary.cells.first().unwrap_or(&none);
    let n = runs.len().max(1) as f64;
    let mean_duration = runs.iter().map(|r| r.record.duration_s).sum::<f64>() / n;
    let quotas = crate::records::shard_quotas(
        plan.docs,
        plan.threads.first().copied().unwrap_or(1),
        plan.shard.as_ref().map(|s| (s.index, s.count)),
    );
    let method = plan.methods.first();
    RunResult {
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
        idle_workers: quotas.iter().filter(|q| **q == 0).count() as u64,
        worker_quotas: quotas,
        runs: runs
            .iter()
            .map(|r| crate::records::RunRecord {
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

/// A run directory written before `plan.json` and `runs/`: its `result.json` as the plan and
/// runs of one cell. The client CPU time, recorded for all runs together, is shared out by
/// run duration.
pub fn from_result(r: RunResult) -> (SweepPlan, Vec<CellRun>) {
    let p = &r.plan;
    let plan = SweepPlan {
        schema_version: r.schema_version,
        tool: r.tool.clone(),
        id: r.id.clone(),
        started_at: r.started_at.clone(),
        seed: r.seed,
        methods: vec![MethodRecord::run(&r.target.url, r.target.embedded)],
        connections: vec![ConnectionPolicy::Reuse],
        sizes: vec![(p.size_class, p.doc_size_bytes)],
        threads: vec![p.threads],
        docs: p.docs,
        runs: p.runs,
        order: Order::Interleaved,
        baseline: "direct".into(),
        corpus: p.corpus.clone(),
        measure: p.measure,
        protocol: p.protocol,
        auth: p.auth,
        user: p.user.clone(),
        parent: p.parent.clone(),
        profile: p.profile.clone(),
        node_type: p.node_type.clone(),
        docs_per_folder: p.docs_per_folder,
        versioning: p.versioning,
        timeout_s: p.timeout_s,
        host: r.host.clone(),
        shard: r.shard.clone(),
        kind: PlanKind::Run,
        properties_per_doc: p.properties_per_doc,
        retries: p.retries,
        corpus_tree: p.corpus_tree,
        corpus_names: p.corpus_names,
        rates: Vec::new(),
    };
    let cell = run_cell(&plan);
    let total: f64 = r.runs.iter().map(|x| x.duration_s).sum();
    let single = r.runs.len() == 1;
    let runs = r
        .runs
        .iter()
        .map(|x| {
            let mut record = x.clone();
            let mut hist = std::mem::take(&mut record.latency_histogram_us);
            if hist.is_empty() && single {
                hist.clone_from(&r.latency_histogram_us);
            }
            CellRun {
                cell: cell.clone(),
                record,
                latency_histogram_us: hist,
                client_cpu_s: if total > 0.0 {
                    round3(r.client_cpu_s * x.duration_s / total)
                } else {
                    0.0
                },
            }
        })
        .collect();
    (plan, runs)
}
