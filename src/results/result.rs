//! A run's `result.json`: one exporter of the summary of a results directory of one cell
//! (its plan and runs in, [`RunResult`] out, the numbers from `summary::summarize` like every
//! other report), and its inverse for run directories written before `plan.json` and `runs/`
//! (their `result.json` in, the plan and runs out), so old results load through the one
//! model. Pure: values in, values out.

use super::summary::{CellSummary, merged_histogram, summarize};
use crate::fixtures::SizeClass;
use crate::metrics::{encode_hist, round3};
use crate::results::records::{
    CellKey, CellRun, MethodRecord, Order, PlanKind, PlanRecord, RepositoryRecord, RunResult,
    SCHEMA_VERSION, SweepPlan,
};
use crate::transport::ConnectionPolicy;

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
    let quotas = crate::engine::shard_quotas(
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
            .map(|r| crate::results::records::RunRecord {
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
