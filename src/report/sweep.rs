//! The summary of a sweep every report is rendered from (`summary.json`), built from its
//! plan (`plan.json`) and its finished runs (`runs/*.json`; both record types live in
//! `records`). `summarize` is pure and deterministic, so `report DIR` reproduces the same
//! files from the same runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::SCHEMA_VERSION;
use super::analysis::{self, Scaling, Usl};
use crate::fixtures::SizeClass;
use crate::metrics::{ErrorSummary, LatencyMs, decode_hist, mean_sd, round3};
use crate::records::{CellKey, CellRun, SweepPlan};
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
    pub drift: Option<super::analysis::Drift>,
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
    /// Half-width of the 95 % Welch interval of `diff_pct`, in % of the baseline.
    pub ci95_pct: f64,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScalingRow {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub size: SizeClass,
    pub scaling: Scaling,
    pub usl: Option<Usl>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepSummary {
    pub schema_version: u32,
    pub plan: SweepPlan,
    /// Runs planned and runs found.
    pub runs_planned: u64,
    pub runs_done: u64,
    pub cells: Vec<CellSummary>,
    pub relative: Vec<Relative>,
    pub scaling: Vec<ScalingRow>,
    pub warnings: Vec<String>,
    /// The import estimate, when `ingestbench estimate` wrote one into this directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<super::estimate::Estimate>,
}

/// Share of all cores at which the client counts as saturated.
pub const SATURATION_SHARE: f64 = 0.9;

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Builds the summary from the plan and every run found (any order).
pub fn summarize(plan: &SweepPlan, runs: &[CellRun]) -> SweepSummary {
    let cells = cells_in_plan_order(plan, runs);
    let relative = relative_costs(plan, &cells);
    let scaling = scaling_rows(&cells);
    let mut warnings = cell_warnings(plan, &cells);
    let planned = plan.runs_planned();
    if (runs.len() as u64) < planned {
        warnings.push(format!("incomplete sweep: {} of {planned} runs done; `ingestbench sweep --resume DIR` finishes it", runs.len()));
    }
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
    }
}

/// One summary per cell that has runs, in plan order: method, connection, size, threads.
fn cells_in_plan_order(plan: &SweepPlan, runs: &[CellRun]) -> Vec<CellSummary> {
    let mut by_cell: BTreeMap<&CellKey, Vec<&CellRun>> = BTreeMap::new();
    for r in runs {
        by_cell.entry(&r.cell).or_default().push(r);
    }
    let mut cells = Vec::new();
    for m in &plan.methods {
        for c in &plan.connections_of(m) {
            for (size, _) in &plan.sizes {
                for &t in &plan.threads {
                    let key = CellKey {
                        method: m.name.clone(),
                        connection: *c,
                        size: *size,
                        threads: t,
                    };
                    if let Some(rs) = by_cell.get(&key) {
                        cells.push(cell_summary(&key, rs, plan.host.cpus));
                    }
                }
            }
        }
    }
    cells
}

/// Each non-baseline cell against the baseline's cell of the same connection, size and
/// threads, with the 95 % Welch interval of the difference.
fn relative_costs(plan: &SweepPlan, cells: &[CellSummary]) -> Vec<Relative> {
    let mut relative = Vec::new();
    for cell in cells {
        if cell.method == plan.baseline {
            continue;
        }
        let base = cells.iter().find(|b| {
            b.method == plan.baseline
                && b.connection == cell.connection
                && b.size == cell.size
                && b.threads == cell.threads
        });
        if let Some(b) = base
            && let Some((d, h)) =
                analysis::relative_pct(&cell.run_docs_per_sec, &b.run_docs_per_sec)
        {
            let word = if d < 0.0 { "slower" } else { "faster" };
            // A conclusion only when the 95 % interval excludes no difference.
            let text = if h >= d.abs() {
                format!(
                    "{} vs {} at {} thread{} ({}, {} connections): no significant difference ({:+.1} % ± {:.1} %)",
                    cell.method,
                    plan.baseline,
                    cell.threads,
                    plural(cell.threads),
                    cell.size,
                    cell.connection,
                    d,
                    h
                )
            } else {
                format!(
                    "{} is {:.1} % ± {:.1} % {word} than {} at {} thread{} ({}, {} connections)",
                    cell.method,
                    d.abs(),
                    h,
                    plan.baseline,
                    cell.threads,
                    plural(cell.threads),
                    cell.size,
                    cell.connection
                )
            };
            relative.push(Relative {
                method: cell.method.clone(),
                baseline: plan.baseline.clone(),
                connection: cell.connection,
                size: cell.size,
                threads: cell.threads,
                diff_pct: round3(d),
                ci95_pct: round3(h),
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
    for c in cells {
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
        if let Some(sc) = analysis::scaling(&pts) {
            let usl = analysis::fit_usl(&pts).map(|u| Usl {
                lambda: round3(u.lambda),
                sigma: (u.sigma * 1e6).round() / 1e6,
                kappa: (u.kappa * 1e8).round() / 1e8,
                r_squared: round3(u.r_squared),
                peak_concurrency: u.peak_concurrency.map(|v| (v * 10.0).round() / 10.0),
                peak_docs_per_sec: u.peak_docs_per_sec.map(|v| (v * 10.0).round() / 10.0),
            });
            scaling.push(ScalingRow {
                method: m,
                connection: c,
                size: s,
                scaling: sc,
                usl,
            });
        }
    }
    scaling
}

/// Cells where the client may have been the bottleneck, and cells with failed uploads.
fn cell_warnings(plan: &SweepPlan, cells: &[CellSummary]) -> Vec<String> {
    let mut warnings = Vec::new();
    for c in cells {
        if c.client_cpu_share >= SATURATION_SHARE {
            let embedded = plan
                .methods
                .iter()
                .any(|m| m.name == c.method && m.embedded);
            warnings.push(format!(
                "{} {} {} at {} thread{}: ingestbench used {:.0} % of all cores{}; the numbers may measure the client, not the repository",
                c.method,
                c.connection,
                c.size,
                c.threads,
                plural(c.threads),
                c.client_cpu_share * 100.0,
                if embedded { " (including the in-process embedded target)" } else { "" }
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

fn cell_summary(key: &CellKey, runs: &[&CellRun], cpus: usize) -> CellSummary {
    let mut runs: Vec<&CellRun> = runs.to_vec();
    runs.sort_by_key(|r| r.record.run);
    let mut hist: Option<hdrhistogram::Histogram<u64>> = None;
    let mut errors: BTreeMap<(crate::metrics::ErrorClass, Option<u16>), ErrorSummary> =
        BTreeMap::new();
    let mut nodes = BTreeMap::new();
    let (mut ok, mut failed, mut bytes, mut dur, mut cpu) = (0u64, 0u64, 0u64, 0.0f64, 0.0f64);
    let mut conns = 0u64;
    for r in &runs {
        if let Ok(h) = decode_hist(&r.latency_histogram_us) {
            match &mut hist {
                Some(acc) => acc.add(&h).expect("same bounds"),
                None => hist = Some(h),
            }
        }
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
    let rate = |x: f64| {
        if mean_dur > 0.0 {
            x / n / mean_dur
        } else {
            0.0
        }
    };
    CellSummary {
        method: key.method.clone(),
        connection: key.connection,
        size: key.size,
        threads: key.threads,
        runs: runs.len() as u32,
        docs_per_sec: round3(rate(ok as f64)),
        docs_per_sec_mean: round3(m),
        docs_per_sec_stddev: round3(sd),
        run_docs_per_sec: rates,
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
        client_cpu_share: if dur > 0.0 {
            round3(cpu / (dur * cpus.max(1) as f64))
        } else {
            0.0
        },
        new_connections: conns,
        drift: super::analysis::Drift::of_runs(runs.iter().map(|r| r.record.progress_s.as_slice())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            rel.iter()
                .all(|r| r.text.contains("no significant difference")),
            "{:?}",
            rel.iter().map(|r| &r.text).collect::<Vec<_>>()
        );
    }
}
