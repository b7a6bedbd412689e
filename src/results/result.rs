//! A run's `result.json` as the results model holds it: its head (what the run was, as
//! [`RunHead`]: the exporter, `report::result_json`, writes it first) and, for run
//! directories written before `plan.json` and `runs/`, the inverse: their `result.json`
//! ([`RunFile`]) in, the plan and runs out, so old results load through the one model. Pure:
//! values in, values out.

use crate::fixtures::SizeClass;
use crate::metrics::round3;
use serde::{Deserialize, Serialize};

use crate::host::HostFacts;

use super::record::{
    CellKey, CellRun, MeasurePolicy, MethodRecord, Order, PlanKind, PlanRecord, RunRecord,
    ShardRecord, Tool,
};
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::transport::ConnectionPolicy;

/// The head of a run's `result.json`: what the run was (its id, seed, plan, host and
/// target), the part an older run directory's `result.json` is loaded from beside its runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunHead {
    pub schema_version: u32,
    pub tool: Tool,
    pub id: String,
    pub started_at: String,
    pub seed: u64,
    pub plan: RunResultPlan,
    pub host: HostFacts,
    pub target: RepositoryRecord,
}

/// A run's `result.json` as the loader reads it: the head and the runs, the rest (the
/// summary's numbers, re-computed from the runs) left unread.
#[derive(Debug, Clone, Deserialize)]
pub struct RunFile {
    #[serde(flatten)]
    pub head: RunHead,
    pub runs: Vec<RunRecord>,
    /// Latency histogram of all runs (µs): an older single run's only histogram.
    #[serde(default)]
    pub latency_histogram_us: String,
    /// CPU seconds ingestbench used during the runs.
    #[serde(default)]
    pub client_cpu_s: f64,
    #[serde(default)]
    pub shard: Option<ShardRecord>,
}

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

/// The plan as a run's `result.json` shows it (no secrets): the exporter's view of a
/// [`PlanRecord`] of one cell.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RunResultPlan {
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

/// The one cell of a run's plan.
pub fn run_cell(plan: &PlanRecord) -> CellKey {
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
pub fn plan_record(plan: &PlanRecord) -> RunResultPlan {
    let (size_class, doc_size_bytes) = plan.sizes.first().copied().unwrap_or((SizeClass::Small, 0));
    RunResultPlan {
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

/// A run directory written before `plan.json` and `runs/`: its `result.json` as the plan and
/// runs of one cell. The client CPU time, recorded for all runs together, is shared out by
/// run duration.
pub fn from_result(f: RunFile) -> (PlanRecord, Vec<CellRun>) {
    let r = &f.head;
    let p = &r.plan;
    let plan = PlanRecord {
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
        shard: f.shard.clone(),
        kind: PlanKind::Run,
        properties_per_doc: p.properties_per_doc,
        retries: p.retries,
        corpus_tree: p.corpus_tree,
        corpus_names: p.corpus_names,
        rates: Vec::new(),
    };
    let cell = run_cell(&plan);
    let total: f64 = f.runs.iter().map(|x| x.duration_s).sum();
    let single = f.runs.len() == 1;
    let runs = f
        .runs
        .iter()
        .map(|x| {
            let mut record = x.clone();
            let mut hist = std::mem::take(&mut record.latency_histogram_us);
            if hist.is_empty() && single {
                hist.clone_from(&f.latency_histogram_us);
            }
            CellRun {
                cell: cell.clone(),
                record,
                latency_histogram_us: hist,
                client_cpu_s: if total > 0.0 {
                    round3(f.client_cpu_s * x.duration_s / total)
                } else {
                    0.0
                },
            }
        })
        .collect();
    (plan, runs)
}
