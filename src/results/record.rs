//! What a measurement writes to disk and reads back: one model for `run` and `sweep`,
//! `plan.json` ([`PlanRecord`]; a `run` is a sweep of one cell, [`PlanKind::Run`]) and
//! `runs/<cell>_r<n>.json` ([`CellRun`], with the paced schedule in `paced` and the readers'
//! side in `readers`). Versioned (`SCHEMA_VERSION`), typed (the enums serialize as the same
//! lowercase strings older results hold), with units in field names. Data and the rules that
//! read it (a warm-up resolved for a run, a cell's file name): no I/O and no model.

use super::{paced, readers};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fixtures::SizeClass;
use crate::host::HostFacts;
use crate::metrics::{ErrorSummary, LatencyMs};
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::transport::{ConnectionPolicy, HttpVersion};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// One run of the cell.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunRecord {
    pub run: u32,
    /// From the barrier's release to the last completion.
    pub duration_s: f64,
    pub docs_ok: u64,
    pub docs_failed: u64,
    /// docs_ok / duration_s.
    pub docs_per_sec: f64,
    /// Document bytes acknowledged.
    pub bytes_ok: u64,
    /// bytes_ok / duration_s in 10^6 bytes per second.
    pub mb_per_sec: f64,
    pub latency_ms: LatencyMs,
    pub errors: Vec<ErrorSummary>,
    /// Successful uploads per backend node (from the node header).
    pub node_split: std::collections::BTreeMap<String, u64>,
    /// The run's folder below the parent.
    pub folder: String,
    /// TCP (+TLS) connections the client opened during the run.
    #[serde(default)]
    pub new_connections: u64,
    /// Upload runtimes (client threads) the run's workers were dealt to: one per CPU, half as
    /// many for small documents to a target on this host, or INGESTBENCH_WORKER_RUNTIMES (0:
    /// the shared runtime). Absent for merged shards and from versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_runtimes: Option<usize>,
    /// Extra attempts (`--retries`); each document still counts once.
    #[serde(default)]
    pub retries: u64,
    /// Documents a lookup found already stored after an ambiguous failure.
    #[serde(default)]
    pub recovered: u64,
    /// Earlier versions uploaded before the heads of the acknowledged documents (a corpus's
    /// `.vN` files; each document still counts once in docs_ok, its bytes include them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub versions_ok: u64,
    /// Folders created for the run (the recreated corpus tree, or the numbered folders).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folders_created: u64,
    /// Seconds from the start at which 10 %, 20 %, … 100 % of the documents had completed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress_s: Vec<f64>,
    /// Warm-up documents acknowledged before the start (in the manifest, not measured).
    #[serde(default)]
    pub warmup_docs: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_failed: u64,
    /// `--warmup auto`: how long the warm-up took, and whether its throughput settled
    /// before the cap (absent for a fixed warm-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_settled: Option<bool>,
    /// `--duration`: the measured window; documents acknowledged after it closed are in the
    /// manifest but not in docs_ok.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub docs_after_window: u64,
    /// The servers' CPU and memory during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<crate::metrics::servers::ServerUsage>,
    /// What each resource (servers, the client, this host's CPU, disks, networks) spent
    /// over the measured window, with its capacity: the resource demands' raw readings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<crate::metrics::resources::RunResources>,
    /// When the run started by this machine's clock (ms since the Unix epoch).
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub started_unix_ms: i64,
    /// Shards: how long after the agreed common start this shard started, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_lag_ms: Option<i64>,
    /// Merged shards: the latest shard's start minus the earliest's, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ms: Option<i64>,
    /// This run's latency histogram (µs, HdrHistogram V2 + base64), so shards merge exactly
    /// run by run (`run` results; sweeps keep it beside the record).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latency_histogram_us: String,
    /// Set when the repository rejected the documents outright and the run stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// The run's trajectory: cumulative counts of its measured part every 20 ms (coarser
    /// for long runs, at most 512 points), closed at its last completion. The pilot estimate
    /// reads a run as a stream of windows from it. Absent before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelinePoint>,
    /// `--rate`: the paced schedule and what became of it (absent for closed-loop runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<paced::PacedRecord>,
    /// `--readers`: what the readers beside the import read, per kind of read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readers: Option<readers::ReadersRecord>,
    /// `run --sample-time auto`, its first run: why it stopped and the estimate then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_stop: Option<SampleStop>,
    /// The measured part's acknowledged documents without versions by size (a bucket per
    /// power of 2 of their bytes, as the corpus's description buckets its files), with their
    /// latencies: what each size cost, and the largest a pilot sent. Absent before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_by_size: Vec<SizeLatency>,
}

/// The documents of one size bucket (`lo_bytes` up to twice it) and their latencies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeLatency {
    pub lo_bytes: u64,
    pub docs: u64,
    pub bytes: u64,
    /// Their latencies' sum (to the µs) and sum of squares (each latency to the nearest 10 µs).
    pub latency_sum_ms: f64,
    pub latency_sq_sum_ms2: f64,
}

impl SizeLatency {
    /// Adds `more` bucket by bucket (by `lo_bytes`), keeping the buckets in order.
    pub fn merge_into(into: &mut Vec<SizeLatency>, more: &[SizeLatency]) {
        for m in more {
            match into.binary_search_by_key(&m.lo_bytes, |b| b.lo_bytes) {
                Ok(i) => {
                    let b = &mut into[i];
                    b.docs += m.docs;
                    b.bytes += m.bytes;
                    b.latency_sum_ms += m.latency_sum_ms;
                    b.latency_sq_sum_ms2 += m.latency_sq_sum_ms2;
                }
                Err(i) => into.insert(i, *m),
            }
        }
    }
}

/// What a run had done `t_s` seconds after its start (cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    pub t_s: f64,
    /// Documents acknowledged (each once, whatever its versions).
    pub docs: u64,
    /// Versions uploaded before the heads of those documents.
    pub versions: u64,
    /// Their bytes, versions included.
    pub bytes: u64,
    /// Folders created below the run's folder.
    pub folders: u64,
}

pub(crate) fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// One shard of a plan run on several machines (`--shard K/N`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// The plan every shard shares (`--plan-id`).
    pub plan_id: String,
    /// This shard, 0-based, of `count`.
    pub index: u64,
    pub count: u64,
}

/// Warm-up before each measured run (see `engine::cell`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// Until steady for a method's first run of an invocation, a short fixed warm-up for
    /// the others: see [`Warmup::resolve`] and `engine::warmup`.
    Auto,
    /// This many documents, split over the workers with remainder (0 = none).
    Docs(u64),
    /// Every worker uploads until this many seconds have passed.
    Seconds(f64),
    /// Every worker uploads until the warm-up's throughput is steady (successive windows
    /// agree), or a cap (`engine::warmup`).
    Steady,
}

impl Warmup {
    pub fn none(&self) -> bool {
        matches!(self, Warmup::Docs(0)) || matches!(self, Warmup::Seconds(s) if *s <= 0.0)
    }

    /// The warm-up of one cell's run, `Auto` made concrete: until steady for the first run
    /// through an access method (`warm` false: its server may be cold), then a short one
    /// for the run's own connections and logins: 2 documents per worker and at least 10 % of
    /// the run's documents (count mode), or 10 % of the window (steady state).
    pub fn resolve(self, docs: u64, threads: u64, window_s: Option<f64>, warm: bool) -> Warmup {
        match (self, window_s) {
            (Warmup::Auto, _) if !warm => Warmup::Steady,
            (Warmup::Auto, Some(w)) => Warmup::Seconds((w / 10.0 * 1000.0).round() / 1000.0),
            (Warmup::Auto, None) => Warmup::Docs((2 * threads).max(docs.div_ceil(10))),
            (w, _) => w,
        }
    }
}

impl std::fmt::Display for Warmup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warmup::Auto => f.write_str("auto"),
            Warmup::Docs(n) => write!(f, "{n} docs"),
            Warmup::Seconds(s) => write!(f, "{s} s"),
            Warmup::Steady => f.write_str("until steady"),
        }
    }
}

/// When a warm-up until steady ([`Warmup::Steady`], and `auto`'s first run) is steady:
/// `engine::warmup` applies it; plans and reports quote it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmupRule {
    /// Windows that must agree.
    pub windows: usize,
    /// How far each of them may lie from their mean.
    pub tolerance: f64,
    /// The shortest window.
    pub min_window: Duration,
    /// The shortest span of the long-horizon comparison: the warm-up lasts at least twice it.
    pub horizon: Duration,
    /// The longest warm-up.
    pub cap: Duration,
}

impl Warmup {
    /// `--warmup auto`'s rule.
    pub const AUTO_RULE: WarmupRule = WarmupRule {
        windows: 3,
        tolerance: 0.10,
        min_window: Duration::from_millis(250),
        horizon: Duration::from_secs(2),
        cap: Duration::from_secs(180),
    };
}

/// How every run of a cell is measured (`--warmup`, `--duration`, `--precision`,
/// `--max-runs`), recorded with the plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeasurePolicy {
    pub warmup: Warmup,
    /// Steady-state runs of this many seconds instead of a document count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Repeat a cell's runs until the 95 % interval of its docs/sec is within ± this
    /// percentage of the mean (or `max_runs` is reached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
    pub max_runs: u32,
    /// `sweep --budget`: the sweep's wall-clock time (s) within which runs beyond the planned
    /// ones go to the comparisons still open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// `sweep --budget`: the runs at the thread counts in between after the first were the
    /// budget's, after the comparisons the answers state ([`budget_defers`]; absent: every
    /// run was planned, as before they were).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_between: bool,
    /// `--rate`: an open-model, paced import at this many documents per second (absent:
    /// closed loop, as fast as the workers go).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// `--readers`: readers beside the import (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readers: Option<readers::ReaderPolicy>,
    /// `--reader-slo`: the readers' p99 (ms) the answers hold each import rate to (absent:
    /// 500 ms, or no readers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_slo_ms: Option<f64>,
    /// `run --sample-time`: a steady-state window that never goes round the sample again: a
    /// run ends at its deadline or when every document of the sample was sent, whichever is
    /// first (false: a window goes round the sample as often as it lasts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
    /// `run --sample-time auto`: the first run ends when its estimate is sharp (or at the
    /// cap, `duration_s`, or when the files run out); later runs import its documents.
    /// Absent: a fixed `--sample-time`, or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_sample: Option<AutoSample>,
}

/// `run --sample-time auto`: what the first pilot run aims at, and its cap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AutoSample {
    /// `--target-precision`: both sides of the estimate's 95 % interval within ± this (%).
    pub target_pct: f64,
    /// `--max-sample-time`: the longest first run (s).
    pub max_s: f64,
    /// `--max-sample-share`: the most of the corpus's documents the pilot's runs import
    /// together (%); absent in records made before it (no such cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_share_pct: Option<f64>,
}

/// Why an auto pilot's first run (`run --sample-time auto`) stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleStopReason {
    /// The estimate's interval was within the target on both sides.
    Sharp,
    /// `--max-sample-time` passed first.
    Cap,
    /// Every file of the sample was sent first.
    Files,
    /// The pilot's runs together would import more than `--max-sample-share` of the corpus.
    Share,
}

impl SampleStopReason {
    pub fn name(self) -> &'static str {
        match self {
            SampleStopReason::Sharp => "sharp",
            SampleStopReason::Cap => "cap",
            SampleStopReason::Files => "files",
            SampleStopReason::Share => "share",
        }
    }
}

/// How an auto pilot's first run ended (`run --sample-time auto`), and the estimate it had
/// reached then (the last check's; absent when no check could read the run yet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleStop {
    pub reason: SampleStopReason,
    /// `--target-precision` (%), and the cap (s).
    pub target_pct: f64,
    pub max_s: f64,
    /// `--max-sample-share` (% of the corpus's documents, the runs together), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_share_pct: Option<f64>,
    /// Checks of the estimate made while the run went on.
    pub checks: u32,
    /// Seconds from the start and documents acknowledged at the last check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_at_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_docs: Option<u64>,
    /// The import's estimated seconds at the last check, and its interval's sides
    /// relative to it (0.12 = 12 % shorter / longer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rel_lo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rel_hi: Option<f64>,
    /// What the fit said would narrow it, and a growth it could not rule out (unresolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved_growth: Option<String>,
}

impl Default for MeasurePolicy {
    /// What results written before warm-up existed were measured with.
    fn default() -> Self {
        MeasurePolicy {
            warmup: Warmup::Docs(0),
            duration_s: None,
            precision_pct: None,
            max_runs: 0,
            budget_s: None,
            defer_between: false,
            rate_per_s: None,
            readers: None,
            reader_slo_ms: None,
            once: false,
            auto_sample: None,
        }
    }
}

/// An access method as recorded in results (no secrets).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MethodRecord {
    pub name: String,
    pub description: String,
    /// URL without credentials (`embedded:*` for the embedded target).
    pub url: String,
    pub http_version: HttpVersion,
    pub embedded: bool,
    /// The connection policies this method's cells are run with (`reuse`, `new`). Absent in
    /// plans written before 0.1.1: then every policy in [`PlanRecord::connections`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<ConnectionPolicy>,
}

impl MethodRecord {
    /// `run`'s one method: `direct` to the URL it reached, connections reused.
    pub fn run(url: &str, embedded: bool) -> MethodRecord {
        MethodRecord {
            name: "direct".into(),
            description: "run: straight to --url".into(),
            url: url.to_string(),
            http_version: HttpVersion::Http1,
            embedded,
            connections: vec![ConnectionPolicy::Reuse],
        }
    }
}

/// What a results directory planned, as `plan.json` records it: the axes (methods,
/// connections, sizes, threads, rates), the measurement policy, the repository and the host;
/// a `run` is the plan of one cell ([`PlanKind::Run`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanRecord {
    pub schema_version: u32,
    pub tool: Tool,
    pub id: String,
    pub started_at: String,
    pub seed: u64,
    pub methods: Vec<MethodRecord>,
    pub connections: Vec<ConnectionPolicy>,
    /// Size class → bytes, in sweep order.
    pub sizes: Vec<(SizeClass, u64)>,
    pub threads: Vec<u64>,
    /// Documents per run of each cell.
    pub docs: u64,
    pub runs: u32,
    /// `interleaved` (run 1 of every cell, then run 2, ...) or `random` (shuffled with the seed).
    pub order: Order,
    pub baseline: String,
    /// The corpus the size classes stand for (`sweep --corpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<String>,
    /// Warm-up, steady state and precision (absent in plans made before them).
    #[serde(default)]
    pub measure: MeasurePolicy,
    pub protocol: ProtocolKind,
    pub auth: AuthMode,
    pub user: String,
    pub parent: String,
    pub profile: String,
    pub node_type: String,
    pub docs_per_folder: u64,
    pub versioning: bool,
    pub timeout_s: f64,
    pub host: HostFacts,
    /// `--shard K/N`: this directory holds one shard's part of every cell; `merge` makes the
    /// whole sweep of all shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// `run` or `sweep` (absent: a sweep). A run is one cell, `direct` with connections
    /// reused, its documents in one folder and its manifest lines untagged; it also
    /// exports `result.json`.
    #[serde(default, skip_serializing_if = "PlanKind::is_sweep")]
    pub kind: PlanKind,
    /// Metadata properties set on each document (the profile's).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub properties_per_doc: usize,
    /// Extra attempts allowed per document (`--retries`).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub retries: u32,
    /// `run --corpus DIR`: the files keep their names in their own folders, recreated below
    /// each run's folder (false: `--flatten`, numbered folders).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub corpus_tree: bool,
    /// `run --corpus DIR`: the sample asked and the name policy (`--on-name-clash`,
    /// `--on-bad-name`), so `--resume` stores the same files under the same names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_names: Option<crate::corpus::policy::NamesRecord>,
    /// `sweep --rates`: the paced import's rates (documents per second), each a cell
    /// dimension (`CellKey::rate_per_s`), 0 first when `--readers` adds the readers-alone
    /// baseline. Empty: closed loop, or the one `--rate` of `measure`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<f64>,
}

impl PlanRecord {
    /// The rate keys of this plan's cells: `None` alone when it has no rate axis.
    pub fn rate_keys(&self) -> Vec<Option<f64>> {
        if self.rates.is_empty() {
            vec![None]
        } else {
            self.rates.iter().copied().map(Some).collect()
        }
    }
}

fn is_zero_usize(v: &usize) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// Which command wrote a results directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanKind {
    #[default]
    Sweep,
    Run,
}

impl PlanKind {
    pub fn is_sweep(&self) -> bool {
        *self == PlanKind::Sweep
    }
}

/// The order a sweep's runs are done in (`sweep --order`; see `plan::schedule::schedule`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Interleaved,
    Random,
}

impl std::fmt::Display for Order {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Order::Interleaved => "interleaved",
            Order::Random => "random",
        })
    }
}

impl PlanRecord {
    /// Each cell that has runs, in plan order (method, connection, size, threads), with its
    /// runs in the order found (the summary sorts them by run number).
    pub fn runs_by_cell<'a>(&self, runs: &'a [CellRun]) -> Vec<(CellKey, Vec<&'a CellRun>)> {
        let mut by_cell: std::collections::BTreeMap<&CellKey, Vec<&CellRun>> = Default::default();
        for r in runs {
            by_cell.entry(&r.cell).or_default().push(r);
        }
        let mut out = Vec::new();
        for m in &self.methods {
            for c in self.connections_of(m) {
                for (size, _) in &self.sizes {
                    for &t in &self.threads {
                        for rate_per_s in self.rate_keys() {
                            let key = CellKey {
                                method: m.name.clone(),
                                connection: c,
                                size: *size,
                                threads: t,
                                rate_per_s,
                            };
                            if let Some(rs) = by_cell.remove(&key) {
                                out.push((key, rs));
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The connection policies `m` is swept with: its own list, or (older plans) all of them.
    pub fn connections_of(&self, m: &MethodRecord) -> Vec<ConnectionPolicy> {
        if m.connections.is_empty() {
            self.connections.clone()
        } else {
            m.connections.clone()
        }
    }

    /// Runs the plan asks for: every method × its connection policies × sizes × threads × runs,
    /// less those `sweep --budget` gives only if its time allows ([`budget_defers`]).
    pub fn runs_planned(&self) -> u64 {
        self.runs_per_thread_count()
            * self
                .threads
                .iter()
                .map(|t| {
                    (1..=self.runs)
                        .filter(|r| !self.budget_defers(*t, *r))
                        .count() as u64
                })
                .sum::<u64>()
    }

    /// The runs at the thread counts in between that `sweep --budget` gives only if its time
    /// allows, after the comparisons the answers state; the report says how many it gave.
    pub fn runs_deferred(&self) -> u64 {
        self.runs_per_thread_count() * self.threads.len() as u64 * u64::from(self.runs)
            - self.runs_planned()
    }

    /// Whether run `run` at `threads` threads is one of [`Self::runs_deferred`].
    pub fn budget_defers(&self, threads: u64, run: u32) -> bool {
        let compared = self.measure.defer_between && self.methods.len() > 1;
        budget_defers(compared, &self.threads, threads, run)
    }

    /// Every method × its connection policies × sizes × rates: the runs of one thread count
    /// and run number.
    fn runs_per_thread_count(&self) -> u64 {
        self.methods
            .iter()
            .map(|m| self.connections_of(m).len() as u64)
            .sum::<u64>()
            * self.sizes.len() as u64
            * self.rates.len().max(1) as u64
    }
}

/// `sweep --budget` with methods to compare: whether run `run` at `threads` (of the plan's
/// thread counts `all`) comes after the comparisons the answers state, and only while the
/// time lasts. The runs at the fewest and the most threads are planned, as is the first run
/// at every count in between (every point of the curve is measured); the others at the counts
/// in between are only needed for the curve's intervals and their own comparisons, which the
/// answers do not state: on the quick start they were 21 of the 100 s, spent before the
/// comparisons at 1 and 8 threads got a single run more.
pub fn budget_defers(compared: bool, all: &[u64], threads: u64, run: u32) -> bool {
    let (Some(lo), Some(hi)) = (all.iter().min(), all.iter().max()) else {
        return false;
    };
    compared && run > 1 && threads != *lo && threads != *hi
}

#[cfg(test)]
mod tests {
    use super::{SizeLatency, budget_defers};

    /// Buckets merge by their size, in order, whatever order the parts come in.
    #[test]
    fn latencies_by_size_merge_bucket_by_bucket() {
        let b = |lo: u64, docs: u64| SizeLatency {
            lo_bytes: lo,
            docs,
            bytes: lo * docs,
            latency_sum_ms: docs as f64,
            latency_sq_sum_ms2: docs as f64,
        };
        let mut all = vec![b(1024, 2)];
        SizeLatency::merge_into(&mut all, &[b(4096, 1), b(0, 3), b(1024, 5)]);
        assert_eq!(all, vec![b(0, 3), b(1024, 7), b(4096, 1)]);
    }

    /// Only runs after the first, only at the counts in between, only with comparisons.
    #[test]
    fn the_budget_defers_the_inner_thread_counts_runs_after_the_first() {
        let all = [1, 2, 4, 8];
        let deferred: Vec<(u64, u32)> = all
            .iter()
            .flat_map(|t| (1..=3).map(move |r| (*t, r)))
            .filter(|(t, r)| budget_defers(true, &all, *t, *r))
            .collect();
        assert_eq!(deferred, vec![(2, 2), (2, 3), (4, 2), (4, 3)]);
        assert!(!budget_defers(false, &all, 2, 2), "nothing compared");
        assert!(!budget_defers(true, &[1, 8], 8, 3), "no count in between");
        assert!(!budget_defers(true, &[], 2, 2));
    }
}

/// Identity of a cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellKey {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub size: SizeClass,
    pub threads: u64,
    /// `sweep --rates`: the paced import's documents per second in this cell; 0 is the
    /// readers-alone baseline (`--readers`). Absent in closed-loop sweeps and with one
    /// `--rate`, so their cell names, folders and files are those of before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
}

impl CellKey {
    /// The fields that identify the cell, the rate by its bits (rates are finite and never
    /// negative, so their bits order as the numbers do).
    fn ident(&self) -> (&str, ConnectionPolicy, SizeClass, u64, Option<u64>) {
        (
            &self.method,
            self.connection,
            self.size,
            self.threads,
            self.rate_per_s.map(|r| (r + 0.0).to_bits()),
        )
    }

    /// The readers-alone baseline of a rates sweep (`rate_per_s` 0).
    pub fn is_readers_baseline(&self) -> bool {
        self.rate_per_s == Some(0.0)
    }

    /// The cell's name in manifest lines: `<method>_<connection>_<size>_t<threads>`, then
    /// `_rate<R>` in a rates sweep (`_rate0`: the readers-alone baseline).
    pub fn tag(&self) -> String {
        let t = format!(
            "{}_{}_{}_t{}",
            self.method, self.connection, self.size, self.threads
        );
        match self.rate_per_s {
            Some(r) => format!("{t}_rate{r}"),
            None => t,
        }
    }

    /// File-name stem of a run of this cell.
    pub fn file_stem(&self, run: u32) -> String {
        format!("{}_r{run}", self.tag())
    }
}

impl PartialEq for CellKey {
    fn eq(&self, other: &Self) -> bool {
        self.ident() == other.ident()
    }
}

impl Eq for CellKey {}

impl std::hash::Hash for CellKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.ident().hash(h);
    }
}

impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.ident().cmp(&other.ident())
    }
}

/// One finished run of one cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellRun {
    pub cell: CellKey,
    pub record: RunRecord,
    /// HdrHistogram V2 + base64 of this run's latencies (µs).
    pub latency_histogram_us: String,
    /// CPU seconds ingestbench (and an in-process embedded target) used during the run.
    pub client_cpu_s: f64,
}

#[cfg(test)]
mod cell_key_tests {
    use super::*;

    fn key(rate_per_s: Option<f64>) -> CellKey {
        CellKey {
            method: "direct".into(),
            connection: ConnectionPolicy::Reuse,
            size: SizeClass::Small,
            threads: 4,
            rate_per_s,
        }
    }

    /// A closed-loop cell keeps its name, file and JSON of before the rate axis; a rates
    /// sweep's cells are told apart by their rate, 0 being the readers-alone baseline.
    #[test]
    fn the_rate_is_an_optional_key() {
        assert_eq!(key(None).file_stem(2), "direct_reuse_small_t4_r2");
        assert_eq!(key(Some(12.5)).tag(), "direct_reuse_small_t4_rate12.5");
        assert_eq!(key(Some(0.0)).tag(), "direct_reuse_small_t4_rate0");
        assert!(key(Some(0.0)).is_readers_baseline() && !key(None).is_readers_baseline());
        let old = r#"{"method":"direct","connection":"reuse","size":"small","threads":4}"#;
        let k: CellKey = serde_json::from_str(old).unwrap();
        assert_eq!(k, key(None));
        assert_eq!(serde_json::to_string(&k).unwrap(), old);
        assert_ne!(key(Some(10.0)), key(Some(20.0)));
        assert_ne!(key(None), key(Some(10.0)));
        let mut v = vec![key(Some(20.0)), key(Some(0.0)), key(None), key(Some(10.0))];
        v.sort();
        let rates: Vec<Option<f64>> = v.iter().map(|k| k.rate_per_s).collect();
        assert_eq!(rates, vec![None, Some(0.0), Some(10.0), Some(20.0)]);
        let set: std::collections::HashSet<CellKey> = v.into_iter().collect();
        assert!(set.contains(&key(Some(10.0))));
    }
}
