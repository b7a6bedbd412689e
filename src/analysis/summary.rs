//! The summary of a sweep every report is rendered from (`summary.json`), built from its
//! plan (`plan.json`) and its finished runs (`runs/*.json`; both record types live in
//! `results::record`). `summarize` is pure and deterministic, so `report DIR` reproduces the same
//! files from the same runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::demands::Demand;
use crate::analysis::scaling::{self, Scaling, Usl};
use crate::analysis::what_if::{self, POOL_RATE};
use crate::fixtures::SizeClass;
use crate::metrics::{ErrorSummary, LatencyMs, decode_hist, mean_sd, round3};
use crate::results::SCHEMA_VERSION;
use crate::results::{CellKey, CellRun, PlanRecord};
use crate::transport::ConnectionPolicy;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CellSummary {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub size: SizeClass,
    pub threads: u64,
    pub runs: u32,
    /// Mean docs acknowledged per run / mean duration.
    pub docs_per_sec: f64,
    pub docs_per_sec_mean: f64,
    pub docs_per_sec_stddev: f64,
    /// Each run's docs/sec, in run order.
    pub run_docs_per_sec: Vec<f64>,
    /// Each run's number, in the same order (pairs a method's runs with its baseline's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_numbers: Vec<u32>,
    pub mb_per_sec: f64,
    pub latency_ms: LatencyMs,
    pub docs_ok: u64,
    pub docs_failed: u64,
    /// Failed uploads as % of attempted.
    pub error_pct: f64,
    pub errors: Vec<ErrorSummary>,
    pub node_split: BTreeMap<String, u64>,
    /// client CPU seconds / (run seconds × cores), over the cell's runs.
    pub client_cpu_share: f64,
    /// TCP (+TLS) connections opened over the cell's runs.
    pub new_connections: u64,
    /// Throughput at the end of the runs against their start (2 runs or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<crate::analysis::scaling::Drift>,
    /// Coefficient of variation of the per-run docs/sec, %.
    #[serde(default)]
    pub cv_pct: f64,
    /// Half-width of the 95 % interval of the mean docs/sec, % of the mean (2 runs or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_pct: Option<f64>,
    /// Warm-up documents over the cell's runs (0: measured cold).
    #[serde(default)]
    pub warmup_docs: u64,
    /// Runs whose warm-up until steady did not settle before its cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_unsettled: u64,
    /// `--duration`: documents acknowledged after the windows closed (kept, not counted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub docs_after_window: u64,
    /// The servers' CPU and memory over the cell's runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<crate::analysis::limits::ServerSummary>,
    /// What most likely limited the cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<crate::analysis::limits::Bottleneck>,
    /// Extra attempts over the cell's runs (`--retries`), and documents a lookup found
    /// already stored after an ambiguous failure.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recovered: u64,
    /// Earlier versions uploaded before the heads, over the cell's runs.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub versions_ok: u64,
    /// Folders created, over the cell's runs.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folders_created: u64,
    /// Each resource's busy time per stored document over the cell's runs, the bottleneck
    /// first (`analysis::demands`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub demands: Vec<crate::analysis::demands::Demand>,
    /// What limited the cell, the bound, the knee, Little's law and what would help
    /// (`analysis::verdict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::analysis::verdict::Verdict>,
    /// `--rate`: the cell's runs' schedules together (counts added, response times merged;
    /// the achieved rate is the cell's docs/sec). Its histogram is left out of the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<crate::results::paced::PacedRecord>,
    /// `sweep --rates`: the cell's paced rate (docs/s; 0 the readers-alone baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl CellSummary {
    /// An open-model cell (`--rate`, or a rates sweep's, the readers-alone baseline
    /// included): its docs/sec is no capacity, so no scaling model, cost or limit is read
    /// from it.
    pub fn is_paced(&self) -> bool {
        self.paced.is_some() || self.rate_per_s.is_some()
    }

    /// The summary of a cell without runs.
    pub fn empty(key: &CellKey) -> CellSummary {
        cell_summary(key, &[], 1)
    }

    /// `(run number, docs/sec)` of each run; summaries written before run numbers were kept
    /// number them in order.
    pub fn runs_numbered(&self) -> Vec<(u32, f64)> {
        self.run_docs_per_sec
            .iter()
            .enumerate()
            .map(|(i, r)| (self.run_numbers.get(i).copied().unwrap_or(i as u32 + 1), *r))
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Relative {
    pub method: String,
    pub baseline: String,
    pub connection: ConnectionPolicy,
    pub size: SizeClass,
    pub threads: u64,
    /// (method − baseline) / baseline docs/sec, %: negative = slower.
    pub diff_pct: f64,
    /// Half-width of the 95 % interval of `diff_pct`, in % of the baseline: paired over
    /// `paired_runs` runs of the same number (interleaved sweeps run them back to back),
    /// else Welch's.
    pub ci95_pct: f64,
    /// Pairs of runs the interval rests on (0: Welch, unpaired).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paired_runs: u64,
    /// How it reads: slower, faster, no_difference or too_noisy.
    #[serde(default = "too_noisy")]
    pub verdict: crate::analysis::limits::Verdict,
    pub text: String,
}

fn too_noisy() -> crate::analysis::limits::Verdict {
    crate::analysis::limits::Verdict::TooNoisy
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScalingRow {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub size: SizeClass,
    pub scaling: Scaling,
    pub usl: Option<Usl>,
    /// Why the knee and the USL fit should not be relied on (too few or too noisy points,
    /// a poor fit); absent when they can be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreliable: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepSummary {
    pub schema_version: u32,
    pub plan: PlanRecord,
    /// Runs planned and runs found.
    pub runs_planned: u64,
    pub runs_done: u64,
    pub cells: Vec<CellSummary>,
    pub relative: Vec<Relative>,
    pub scaling: Vec<ScalingRow>,
    pub warnings: Vec<String>,
    /// The import estimate, when `ingestbench estimate` wrote one into this directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<crate::analysis::estimate::Estimate>,
    /// `sweep --rates … --readers N`: per method, connection, size and threads, the readers'
    /// latency at each import rate and the highest rate under `--reader-slo`
    /// (`analysis::slo`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slo: Vec<crate::analysis::slo::SloAnswer>,
}

impl SweepSummary {
    /// "30 of 30 runs done", or, when `--budget` or `--precision` added runs, "119 runs done
    /// (72 planned, 47 more where intervals were still too wide)" (with `--budget`, the runs
    /// at the thread counts in between after the first count among those more: they narrow
    /// the curve's intervals).
    pub fn runs_text(&self) -> String {
        if self.runs_done > self.runs_planned {
            format!(
                "{} runs done ({} planned, {} more where intervals were still too wide)",
                self.runs_done,
                self.runs_planned,
                self.runs_done - self.runs_planned
            )
        } else {
            format!("{} of {} runs done", self.runs_done, self.runs_planned)
        }
    }
}

/// Share of all cores at which the client counts as saturated.
pub const SATURATION_SHARE: f64 = 0.9;

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Builds the summary from the plan and every run found (any order).
pub fn summarize(plan: &PlanRecord, runs: &[CellRun]) -> SweepSummary {
    let mut cells = cells_in_plan_order(plan, runs);
    let relative = relative_costs(plan, &cells);
    let scaling = scaling_rows(&cells);
    judge_cells(&mut cells, &scaling);
    let mut warnings = cell_warnings(plan, &cells);
    let planned = plan.runs_planned();
    if (runs.len() as u64) < planned {
        let what = match plan.kind {
            crate::results::PlanKind::Run => "run",
            crate::results::PlanKind::Sweep => "sweep",
        };
        warnings.push(format!(
            "incomplete {what}: {} of {planned} runs done; `ingestbench {what} --resume DIR` finishes it",
            runs.len()
        ));
    }
    warnings.extend(budget_warning(plan, &relative, runs));
    SweepSummary {
        schema_version: SCHEMA_VERSION,
        plan: plan.clone(),
        runs_planned: planned,
        runs_done: runs.len() as u64,
        cells,
        relative,
        scaling,
        warnings,
        estimate: None,
        slo: crate::analysis::slo::answers(plan, runs),
    }
}

/// One summary per cell that has runs, in plan order: method, connection, size, threads.
fn cells_in_plan_order(plan: &PlanRecord, runs: &[CellRun]) -> Vec<CellSummary> {
    plan.runs_by_cell(runs)
        .iter()
        .map(|(key, rs)| cell_summary(key, rs, plan.host.cpus))
        .collect()
}

/// Each non-baseline cell against the baseline's cell of the same connection, size and
/// threads, with the 95 % interval of the difference: paired by run number when the sweep
/// was interleaved (each method ran right beside its baseline), else Welch's.
fn relative_costs(plan: &PlanRecord, cells: &[CellSummary]) -> Vec<Relative> {
    let mut relative = Vec::new();
    for cell in cells {
        // A paced cell's docs/sec is the rate it was asked for, not what its method can take.
        if cell.method == plan.baseline || cell.is_paced() {
            continue;
        }
        let base = cells.iter().find(|b| {
            b.method == plan.baseline
                && b.connection == cell.connection
                && b.size == cell.size
                && b.threads == cell.threads
                && b.rate_per_s == cell.rate_per_s
        });
        let paired = plan.order == crate::results::Order::Interleaved;
        if let Some(b) = base
            && let Some((d, h, pairs)) = crate::analysis::stats::compare_runs(
                &cell.runs_numbered(),
                &b.runs_numbered(),
                paired,
            )
        {
            let v = crate::analysis::limits::verdict(d, h);
            let cv = cell.cv_pct.max(b.cv_pct);
            let what = crate::analysis::limits::verdict_text(v, d, h, cv);
            let text = format!(
                "{} vs {} at {} thread{} ({}, {} connections): {what}",
                cell.method,
                plan.baseline,
                cell.threads,
                plural(cell.threads),
                cell.size,
                cell.connection,
            );
            relative.push(Relative {
                method: cell.method.clone(),
                baseline: plan.baseline.clone(),
                connection: cell.connection,
                size: cell.size,
                threads: cell.threads,
                diff_pct: round3(d),
                ci95_pct: round3(h),
                paired_runs: pairs as u64,
                verdict: v,
                text,
            });
        }
    }
    relative
}

/// Peak, knee and degradation per method, connection and size, with the USL fit.
fn scaling_rows(cells: &[CellSummary]) -> Vec<ScalingRow> {
    let mut scaling = Vec::new();
    let mut groups: Vec<(String, ConnectionPolicy, SizeClass)> = Vec::new();
    // Paced cells are no scaling curve: their docs/sec is the asked rate (`--rate`, or a
    // rates sweep's), the readers-alone baseline's that of its seeding import.
    for c in cells.iter().filter(|c| !c.is_paced()) {
        let g = (c.method.clone(), c.connection, c.size);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for (m, c, s) in groups {
        let pts: Vec<(u64, f64)> = cells
            .iter()
            .filter(|x| x.method == m && x.connection == c && x.size == s)
            .map(|x| (x.threads, x.docs_per_sec))
            .collect();
        if let Some(sc) = scaling::scaling(&pts) {
            let usl = scaling::fit_usl(&pts).map(|u| Usl {
                lambda: round3(u.lambda),
                sigma: (u.sigma * 1e6).round() / 1e6,
                kappa: (u.kappa * 1e8).round() / 1e8,
                r_squared: round3(u.r_squared),
                peak_concurrency: u.peak_concurrency.map(|v| (v * 10.0).round() / 10.0),
                peak_docs_per_sec: u.peak_docs_per_sec.map(|v| (v * 10.0).round() / 10.0),
            });
            let unreliable = scaling_unreliable(cells, &m, c, s, pts.len(), usl.as_ref());
            scaling.push(ScalingRow {
                method: m,
                connection: c,
                size: s,
                scaling: sc,
                usl,
                unreliable,
            });
        }
    }
    scaling
}

/// Why a knee and a USL fit over `n` thread counts should not be relied on: fewer than 4
/// points, a point whose docs/sec interval is wider than ±10 %, or a fit with R² < 0.9.
fn scaling_unreliable(
    cells: &[CellSummary],
    m: &str,
    c: ConnectionPolicy,
    s: SizeClass,
    n: usize,
    usl: Option<&Usl>,
) -> Option<String> {
    if n < 4 {
        return Some(format!("only {n} thread counts"));
    }
    let noisy = cells
        .iter()
        .filter(|x| x.method == m && x.connection == c && x.size == s)
        .filter(|x| x.ci95_pct.is_none_or(|h| h > 10.0))
        .count();
    if noisy > 0 {
        return Some(format!(
            "{noisy} of {n} points have a docs/sec interval wider than ±10 % (or a single run)"
        ));
    }
    match usl {
        Some(u) if u.r_squared < 0.9 => {
            Some(format!("the USL fit is poor (R² {:.2})", u.r_squared))
        }
        _ => None,
    }
}

/// With `--budget`: what the extra runs bought, and the comparisons still open when the time
/// was spent, each with its difference and interval (the interval wider than the difference
/// and than ±5 % is why it is open).
fn budget_warning(plan: &PlanRecord, relative: &[Relative], runs: &[CellRun]) -> Option<String> {
    let budget = plan.measure.budget_s?;
    let open: Vec<&Relative> = relative
        .iter()
        .filter(|r| r.verdict == crate::analysis::limits::Verdict::TooNoisy)
        .collect();
    let extra = (runs.len() as u64).saturating_sub(plan.runs_planned());
    let mut spent = format!(
        "--budget {budget:.0} s: {extra} run{} beyond the {} planned",
        plural(extra),
        plan.runs_planned()
    );
    let deferred = plan.runs_deferred();
    if deferred > 0 {
        let given = runs
            .iter()
            .filter(|r| plan.budget_defers(r.cell.threads, r.record.run))
            .count();
        let (lo, hi) = (plan.threads.iter().min(), plan.threads.iter().max());
        let between: Vec<String> = plan
            .threads
            .iter()
            .filter(|t| Some(*t) != lo && Some(*t) != hi)
            .map(u64::to_string)
            .collect();
        spent.push_str(&format!(
            ", {given} of them at {} threads (there, the {deferred} planned runs after each cell's first waited for the comparisons at {} and {} threads)",
            between.join(", "),
            lo.copied().unwrap_or(0),
            hi.copied().unwrap_or(0)
        ));
    }
    if open.is_empty() {
        return Some(format!(
            "{spent}; every comparison with {} answered",
            plan.baseline
        ));
    }
    let names: Vec<String> = open
        .iter()
        .take(4)
        .map(|r| {
            format!(
                "{} {} at {} thread{} ({:+.1} % ± {:.1} %)",
                r.method,
                r.size,
                r.threads,
                plural(r.threads),
                r.diff_pct,
                r.ci95_pct
            )
        })
        .collect();
    Some(format!(
        "{spent}; {} of {} comparisons with {} still too noisy to tell when the time was spent: {}{} (the runs scatter more than the difference; a longer --budget, or a quieter machine, would resolve them)",
        open.len(),
        relative.len(),
        plan.baseline,
        names.join(", "),
        if open.len() > 4 { ", …" } else { "" }
    ))
}

/// Cells where the client may have been the bottleneck, cells with failed uploads, cells
/// measured cold, precision not reached, servers that could not be read.
fn cell_warnings(plan: &PlanRecord, cells: &[CellSummary]) -> Vec<String> {
    let mut warnings = Vec::new();
    // The cells matching `pick`: "3 cells" and "a, b, c" (at most four named).
    let listed = |pick: &dyn Fn(&CellSummary) -> bool| -> Option<(String, String)> {
        let names: Vec<String> = cells
            .iter()
            .filter(|c| pick(c))
            .map(|c| {
                let name = format!("{} {} {} t{}", c.method, c.connection, c.size, c.threads);
                match c.rate_per_s {
                    Some(r) => format!("{name} at {r} docs/s"),
                    None => name,
                }
            })
            .collect();
        let n = names.len();
        (n > 0).then(|| {
            let more = if n > 4 { ", …" } else { "" };
            (
                format!("{n} cell{}", plural(n as u64)),
                format!("{}{more}", names[..n.min(4)].join(", ")),
            )
        })
    };
    if let Some((n, names)) = listed(&|c| c.warmup_docs == 0) {
        warnings.push(format!(
            "{n} had no warm-up ({names}): first uploads (connections, logins, a cold server) are in the measurement; see --warmup"
        ));
    }
    if let Some((n, names)) = listed(&|c| c.warmup_unsettled > 0) {
        warnings.push(format!(
            "{n} had a run whose warm-up did not settle within {} s ({names}): the server may still have been warming up; a longer fixed --warmup, or a server warmed beforehand, would resolve it",
            crate::results::Warmup::AUTO_RULE.cap.as_secs()
        ));
    }
    let mut unread: Vec<String> = Vec::new();
    for c in cells {
        for s in c.servers.iter().filter(|s| s.error.is_some()) {
            let w = format!(
                "server metrics {}: {}",
                s.name,
                s.error.as_deref().unwrap_or_default()
            );
            if !unread.contains(&w) {
                unread.push(w);
            }
        }
    }
    warnings.extend(unread);
    if let Some(pct) = plan.measure.precision_pct {
        for c in cells.iter().filter(|c| c.ci95_pct.is_none_or(|h| h > pct)) {
            warnings.push(format!(
                "{} {} {} at {} thread{}: ±{:.1} % after {} runs, not the ±{pct} % asked (--max-runs {})",
                c.method,
                c.connection,
                c.size,
                c.threads,
                plural(c.threads),
                c.ci95_pct.unwrap_or(f64::INFINITY),
                c.runs,
                plan.measure.max_runs
            ));
        }
    }
    for c in cells {
        if c.client_cpu_share >= SATURATION_SHARE {
            warnings.push(format!(
                "{} {} {} at {} thread{}: ingestbench used {:.0} % of all cores; the numbers may measure the client, not the repository",
                c.method,
                c.connection,
                c.size,
                c.threads,
                plural(c.threads),
                c.client_cpu_share * 100.0,
            ));
        }
        if c.docs_failed > 0 {
            warnings.push(format!(
                "{} {} {} at {} threads: {} uploads failed ({:.2} %)",
                c.method, c.connection, c.size, c.threads, c.docs_failed, c.error_pct
            ));
        }
    }
    warnings
}

/// The latency histograms of `runs` added bucket by bucket (exact: the percentiles of every
/// upload, never an average of percentiles); `None` when no run has one.
pub fn merged_histogram(runs: &[&CellRun]) -> Option<hdrhistogram::Histogram<u64>> {
    let mut hist: Option<hdrhistogram::Histogram<u64>> = None;
    for r in runs {
        if let Ok(h) = decode_hist(&r.latency_histogram_us) {
            match &mut hist {
                Some(acc) => acc.add(&h).expect("same bounds"),
                None => hist = Some(h),
            }
        }
    }
    hist
}

fn cell_summary(key: &CellKey, runs: &[&CellRun], cpus: usize) -> CellSummary {
    let mut runs: Vec<&CellRun> = runs.to_vec();
    runs.sort_by_key(|r| r.record.run);
    let hist = merged_histogram(&runs);
    let mut errors: BTreeMap<(crate::metrics::ErrorClass, Option<u16>), ErrorSummary> =
        BTreeMap::new();
    let mut nodes = BTreeMap::new();
    let (mut ok, mut failed, mut bytes, mut dur, mut cpu) = (0u64, 0u64, 0u64, 0.0f64, 0.0f64);
    let mut conns = 0u64;
    for r in &runs {
        for e in &r.record.errors {
            errors
                .entry((e.class, e.status))
                .and_modify(|x| x.count += e.count)
                .or_insert_with(|| e.clone());
        }
        for (k, v) in &r.record.node_split {
            *nodes.entry(k.clone()).or_insert(0) += v;
        }
        ok += r.record.docs_ok;
        failed += r.record.docs_failed;
        bytes += r.record.bytes_ok;
        dur += r.record.duration_s;
        cpu += r.client_cpu_s;
        conns += r.record.new_connections;
    }
    let n = runs.len().max(1) as f64;
    let mean_dur = dur / n;
    let rates: Vec<f64> = runs.iter().map(|r| r.record.docs_per_sec).collect();
    let (m, sd) = mean_sd(&rates);
    let servers =
        crate::analysis::limits::servers_of(runs.iter().map(|r| r.record.servers.as_slice()));
    let client_share = if dur > 0.0 {
        round3(cpu / (dur * cpus.max(1) as f64))
    } else {
        0.0
    };
    // Results made before servers were read say nothing about them.
    let any_probe = runs.iter().any(|r| !r.record.servers.is_empty());
    let rate = |x: f64| {
        if mean_dur > 0.0 {
            x / n / mean_dur
        } else {
            0.0
        }
    };
    let mut c = CellSummary {
        method: key.method.clone(),
        connection: key.connection,
        size: key.size,
        threads: key.threads,
        runs: runs.len() as u32,
        docs_per_sec: round3(rate(ok as f64)),
        docs_per_sec_mean: round3(m),
        docs_per_sec_stddev: round3(sd),
        run_docs_per_sec: rates.clone(),
        run_numbers: runs.iter().map(|r| r.record.run).collect(),
        mb_per_sec: round3(rate(bytes as f64 / 1e6)),
        latency_ms: hist.as_ref().map(LatencyMs::from_hist).unwrap_or_default(),
        docs_ok: ok,
        docs_failed: failed,
        error_pct: if ok + failed > 0 {
            round3(failed as f64 * 100.0 / (ok + failed) as f64)
        } else {
            0.0
        },
        errors: errors.into_values().collect(),
        node_split: nodes,
        client_cpu_share: client_share,
        new_connections: conns,
        drift: crate::analysis::scaling::Drift::of_runs(
            runs.iter().map(|r| r.record.progress_s.as_slice()),
        ),
        cv_pct: round3(crate::analysis::stats::cv(&rates) * 100.0),
        ci95_pct: crate::analysis::stats::relative_ci95(&rates).map(|h| round3(h * 100.0)),
        warmup_docs: runs.iter().map(|r| r.record.warmup_docs).sum(),
        warmup_unsettled: runs
            .iter()
            .filter(|r| r.record.warmup_settled == Some(false))
            .count() as u64,
        docs_after_window: runs.iter().map(|r| r.record.docs_after_window).sum(),
        bottleneck: any_probe.then(|| crate::analysis::limits::bottleneck(client_share, &servers)),
        servers,
        retries: runs.iter().map(|r| r.record.retries).sum(),
        recovered: runs.iter().map(|r| r.record.recovered).sum(),
        versions_ok: runs.iter().map(|r| r.record.versions_ok).sum(),
        folders_created: runs.iter().map(|r| r.record.folders_created).sum(),
        demands: crate::analysis::limits::cell_demands(
            runs.iter()
                .map(|r| (r.record.docs_ok, r.record.resources.as_ref())),
        ),
        verdict: None,
        paced: crate::results::paced::PacedRecord::over_runs(
            runs.iter().filter_map(|r| r.record.paced.as_ref()),
            round3(rate(ok as f64)),
        )
        .map(|mut p| {
            p.response_histogram_us.clear();
            p
        }),
        rate_per_s: key.rate_per_s,
    };
    // A paced cell that kept up was held to its schedule, not by a resource: it measured
    // latency at that rate, not capacity ("latency-bound or serializing" would be wrong).
    if let Some(p) = c.paced.as_ref().filter(|p| p.kept_up)
        && c.bottleneck.is_some()
    {
        c.bottleneck = Some(crate::analysis::limits::Bottleneck {
            kind: "schedule".into(),
            text: format!(
                "the schedule: paced at {:.1} docs/s and kept up; a paced run measures latency at its rate, not capacity (a closed-loop run or sweep does)",
                p.rate_per_s
            ),
        });
    }
    c
}

/// The scaling row's USL fit when it determines where scaling stops: 4 thread counts or more,
/// and the fit follows the points (R² ≥ 0.9, or within ±5 % RMS of them: a flat curve has
/// little variance to explain). Points measured once each are allowed: the fit's residuals
/// over the curve are the evidence, where one point's interval is not. Else why not.
fn determined_fit(row: &ScalingRow, points: &[(u64, f64)]) -> Result<Usl, String> {
    let Some(u) = row.usl.as_ref() else {
        return Err("no fit".into());
    };
    if points.len() < 4 {
        return Err(format!("only {} thread counts", points.len()));
    }
    let rel: Vec<f64> = points
        .iter()
        .map(|&(n, x)| {
            let p = u.predict(n as f64);
            if p > 0.0 { x / p - 1.0 } else { 1.0 }
        })
        .collect();
    let rms = (rel.iter().map(|e| e * e).sum::<f64>() / rel.len() as f64).sqrt();
    if u.r_squared >= 0.9 || rms <= 0.05 {
        Ok(u.clone())
    } else {
        Err(format!(
            "the fit misses the points (R² {:.2}, ±{:.0} % RMS)",
            u.r_squared,
            rms * 100.0
        ))
    }
}

/// Judges every cell of a sweep against its method and size's scaling row, and makes each
/// cell's `bottleneck` say the verdict.
fn judge_cells(cells: &mut [CellSummary], rows: &[ScalingRow]) {
    let evidence: Vec<Option<crate::analysis::verdict::ScalingEvidence>> = cells
        .iter()
        .map(|c| {
            let row = rows.iter().find(|r| {
                r.method == c.method && r.connection == c.connection && r.size == c.size
            })?;
            let group = cells.iter().filter(|x| {
                x.method == c.method && x.connection == c.connection && x.size == c.size
            });
            let max_threads = group.clone().map(|x| x.threads).max()?;
            let r0_ms = group
                .clone()
                .min_by_key(|x| x.threads)
                .map(|x| x.latency_ms.mean)
                .filter(|m| *m > 0.0);
            let points: Vec<(u64, f64)> = group
                .clone()
                .filter(|x| !x.is_paced())
                .map(|x| (x.threads, x.docs_per_sec))
                .collect();
            let (usl, undetermined) = match determined_fit(row, &points) {
                Ok(u) => (Some(u), None),
                Err(why) => (None, Some(why)),
            };
            // Fewer than three thread counts say nothing about where scaling stops.
            (group.clone().count() >= 3).then_some(crate::analysis::verdict::ScalingEvidence {
                threads: c.threads,
                max_threads,
                peak_threads: row.scaling.peak_threads,
                knee_threads: row.scaling.knee_threads,
                degrades: row.scaling.degrades_after_threads.is_some(),
                usl,
                undetermined,
                r0_ms,
            })
        })
        .collect();
    for (c, e) in cells.iter_mut().zip(evidence) {
        // What limits a capacity is asked of closed-loop cells only: a paced cell went as
        // fast as its rate (the SLO answer and whether it kept up speak for it).
        if c.is_paced() {
            continue;
        }
        if let Some(v) = crate::analysis::limits::judge(
            &c.demands,
            c.threads,
            c.docs_per_sec,
            c.latency_ms.mean,
            e.as_ref(),
        ) {
            c.bottleneck = Some(crate::analysis::limits::Bottleneck {
                kind: v.kind.clone(),
                text: v.text.clone(),
            });
            c.verdict = Some(v);
        }
    }
    pool_what_ifs(cells);
    draw_curves(cells);
}

/// Each saturated cell's what-ifs with their throughput against threads
/// (`analysis::mva::draw`): over the thread counts its path measured, the think time fitted
/// to the path's fewest-thread cell.
fn draw_curves(cells: &mut [CellSummary]) {
    let path = |a: &CellSummary, b: &CellSummary| {
        a.method == b.method && a.connection == b.connection && a.size == b.size
    };
    for i in 0..cells.len() {
        let saturated = cells[i]
            .verdict
            .as_ref()
            .is_some_and(|v| SATURATED.contains(&v.kind.as_str()));
        if !saturated {
            continue;
        }
        let on_path = |c: &&CellSummary| {
            path(c, &cells[i]) && !c.is_paced() && c.docs_per_sec > 0.0 && !c.demands.is_empty()
        };
        let mut threads: Vec<u32> = cells
            .iter()
            .filter(on_path)
            .map(|c| c.threads as u32)
            .collect();
        threads.sort_unstable();
        threads.dedup();
        let Some(low) = cells.iter().filter(on_path).min_by_key(|c| c.threads) else {
            continue;
        };
        let low = (low.demands.clone(), low.threads as u32, low.docs_per_sec);
        if let Some(v) = cells[i].verdict.as_mut() {
            crate::analysis::mva::draw(&mut v.what_if, (&low.0, low.1, low.2), &threads);
        }
    }
}

/// The verdicts that name a saturated resource: their what-ifs are conclusions.
const SATURATED: [&str; 6] = [
    "cpu_quota",
    "server_cpu",
    "client",
    "host_cpu",
    "disk",
    "remote_host",
];

/// Where cells of one method (connection, size) saturated the same resource, their what-ifs
/// come from the demands of those that did so at about the median such cell's rate, pooled
/// (`what_if::pooled`): one measurement of the demand over all their runs rather than each
/// cell's own few. A cell that saturated at a much lower rate stays out of the pool (a
/// server idling between documents spends more on each) but gets the pooled what-ifs: they
/// say what the change does at the rate the resource allows.
fn pool_what_ifs(cells: &mut [CellSummary]) {
    let limit = |c: &CellSummary| {
        let v = c.verdict.as_ref()?;
        SATURATED.contains(&v.kind.as_str()).then_some(())?;
        Some((v.kind.clone(), v.resource.clone()?))
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..cells.len() {
        let Some(l) = limit(&cells[i]) else { continue };
        let same = |j: usize| {
            let (a, b) = (&cells[i], &cells[j]);
            a.method == b.method
                && a.connection == b.connection
                && a.size == b.size
                && limit(b).as_ref() == Some(&l)
        };
        match groups.iter_mut().find(|g| same(g[0])) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    for g in groups {
        let mut rates: Vec<f64> = g.iter().map(|&i| cells[i].docs_per_sec).collect();
        rates.sort_by(f64::total_cmp);
        let median = rates[rates.len() / 2];
        let pool: Vec<usize> = g
            .iter()
            .copied()
            .filter(|&i| cells[i].docs_per_sec >= POOL_RATE * median)
            .collect();
        if pool.len() < 2 {
            continue;
        }
        let input: Vec<(&[Demand], u32)> = pool
            .iter()
            .map(|&i| (&cells[i].demands[..], cells[i].runs))
            .collect();
        let v = crate::analysis::verdict::verdict(&what_if::pooled(&input), None);
        let kind = cells[g[0]].verdict.as_ref().map(|v| v.kind.clone());
        if Some(&v.kind) != kind.as_ref() {
            continue;
        }
        let threads: Vec<String> = pool.iter().map(|&i| cells[i].threads.to_string()).collect();
        let runs: u32 = pool.iter().map(|&i| cells[i].runs).sum();
        let from = format!(
            " (the demands of the {} cells at this limit pooled: {} threads, {runs} runs)",
            pool.len(),
            threads.join(", ")
        );
        for &i in &g {
            if let Some(cv) = cells[i].verdict.as_mut() {
                cv.what_if = v.what_if.clone();
                for w in &mut cv.what_if {
                    w.text.push_str(&from);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell of `threads` at `docs_per_sec` whose node, under a 0.5-CPU quota, spent
    /// `node_ms` per document over 3 runs (±5 %), judged as a sweep would.
    fn quota_cell(threads: u64, docs_per_sec: f64, node_ms: f64) -> CellSummary {
        let key = CellKey {
            method: "https-lb-1node".into(),
            connection: ConnectionPolicy::Reuse,
            size: SizeClass::Small,
            threads,
            rate_per_s: None,
        };
        let mut c = CellSummary::empty(&key);
        (c.runs, c.docs_per_sec) = (3, docs_per_sec);
        c.demands = crate::analysis::verdict::tests::quota_lab();
        (c.demands[0].demand_ms, c.demands[0].demand_ci95_ms) = (node_ms, Some(node_ms * 0.05));
        c.verdict = crate::analysis::limits::judge(&c.demands, threads, docs_per_sec, 10.0, None);
        c
    }

    #[test]
    fn a_saturated_cells_what_ifs_draw_their_curve_over_the_paths_threads() {
        let mut cells = vec![
            quota_cell(1, 200.0, 2.5),
            quota_cell(4, 312.0, 1.6),
            quota_cell(8, 294.0, 1.7),
        ];
        pool_what_ifs(&mut cells);
        draw_curves(&mut cells);
        let v = cells[1].verdict.as_ref().unwrap();
        let two = v.what_if.iter().find(|w| w.change == "two_nodes").unwrap();
        let t: Vec<u32> = two.curve.iter().map(|p| p.0).collect();
        assert_eq!(t, [1, 4, 8], "{two:?}");
        // Rising, never above the bound, and more threads than one to reach it.
        assert!(
            two.curve.windows(2).all(|p| p[1].1 >= p[0].1),
            "{:?}",
            two.curve
        );
        assert!(
            two.curve
                .iter()
                .all(|p| p.1 <= two.bound_to_docs_per_sec + 0.1),
            "{:?}",
            two.curve
        );
        let n = two.threads_to_90_pct.expect("two nodes reach their bound");
        assert!(n > 1, "{two:?}");
    }

    #[test]
    fn cells_at_one_limit_share_the_what_ifs_of_their_pooled_demands() {
        // Three cells at the node's quota: 4 and 8 threads near 310 docs/s (1.6 and 1.7 ms),
        // one thread at 200 (a demand measured at a lower rate: out of the pool).
        let mut cells = vec![
            quota_cell(1, 200.0, 2.5),
            quota_cell(4, 312.0, 1.6),
            quota_cell(8, 294.0, 1.7),
        ];
        pool_what_ifs(&mut cells);
        for c in &cells {
            let two = c
                .verdict
                .as_ref()
                .unwrap()
                .what_if
                .iter()
                .find(|w| w.change == "two_nodes")
                .unwrap();
            // 2 × 0.5 CPU over the pooled 1.65 ms.
            assert!(
                (two.bound_to_docs_per_sec - 1000.0 / 1.65).abs() < 0.5,
                "{two:?}"
            );
            assert!(
                two.text
                    .contains("2 cells at this limit pooled: 4, 8 threads, 6 runs"),
                "{}",
                two.text
            );
        }
    }

    #[test]
    fn a_difference_inside_its_interval_is_no_conclusion() {
        let s = crate::report::testdata::fixed_summary();
        assert!(s.relative.iter().all(|r| r.text.contains("slower")));
        let mut cells = s.cells.clone();
        for c in cells.iter_mut().filter(|c| c.method == "https-lb") {
            let base = c.docs_per_sec / 0.9;
            c.run_docs_per_sec = vec![base * 0.5, base * 1.4, base * 0.8];
        }
        let rel = relative_costs(&s.plan, &cells);
        assert!(!rel.is_empty());
        assert!(
            rel.iter().all(|r| r.text.contains("too noisy to tell")),
            "{:?}",
            rel.iter().map(|r| &r.text).collect::<Vec<_>>()
        );
    }
}
