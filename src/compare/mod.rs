//! `compare`: two results (runs or sweeps, read from different directories) set side by
//! side cell by cell (method, connection, size, threads), each change in docs/sec, MB/s and
//! p95/p99 latency stated with its 95 % interval and called significant only when it is.
//!
//! The statistics are the unpaired ones of `analysis::stats` (Welch over the per-run values of
//! each side: the two results were measured at different times, so no run of one is paired
//! with a run of the other). A latency change is the change of the mean of the runs' own
//! percentiles; where the per-run percentiles are not stored (a `summary.json` read on its
//! own) the pooled percentiles are compared without an interval and never called
//! significant. This module reads nothing and prints nothing: `load` reads directories,
//! `render` writes text and Markdown, `threshold` decides exit codes.

pub mod load;
pub mod render;

use serde::{Deserialize, Serialize};

use crate::analysis::stats::{self, Verdict};
use crate::analysis::summary::CellSummary;
use crate::fixtures::SizeClass;
use crate::metrics::round3;
use crate::results::{CellRun, PlanKind, PlanRecord};
use crate::transport::ConnectionPolicy;

/// A `run` result's one cell is named `run`, so two runs of the same size and thread count
/// match whatever URL each measured (the change of URL is often the point).
pub const RUN_METHOD: &str = "run";

/// One measured cell as compare and the thresholds read it: the cell's summary as the reports
/// show it and, where stored, each run's own values beyond its docs/sec.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The cell as `analysis::summary` states it (a run's is named [`RUN_METHOD`]).
    pub summary: CellSummary,
    /// Each run's MB/s, p95 and p99 (ms), in run order; empty when not stored.
    pub run_mb_per_sec: Vec<f64>,
    pub run_p95_ms: Vec<f64>,
    pub run_p99_ms: Vec<f64>,
    /// `--readers`: the highest p99 of the kinds of read over the cell's runs, ms.
    pub reader_p99_ms: Option<f64>,
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `embedded-http reuse small 4 threads`.
fn cell_name(method: &str, connection: ConnectionPolicy, size: SizeClass, threads: u64) -> String {
    format!(
        "{method} {connection} {size} {threads} thread{}",
        plural(threads)
    )
}

impl Cell {
    /// `embedded-http reuse small 4 threads`.
    pub fn name(&self) -> String {
        let name = cell_name(
            &self.summary.method,
            self.summary.connection,
            self.summary.size,
            self.summary.threads,
        );
        match self.summary.rate_per_s {
            Some(r) => format!("{name} at {r} docs/s"),
            None => name,
        }
    }

    fn same_cell(&self, o: &Cell) -> bool {
        self.summary.method == o.summary.method
            && self.summary.connection == o.summary.connection
            && self.summary.size == o.summary.size
            && self.summary.threads == o.summary.threads
            && self.summary.rate_per_s == o.summary.rate_per_s
    }

    /// A sweep's cell; `runs` are its run records when they were read (a sweep directory),
    /// none for a `summary.json` read on its own (then only docs/sec has per-run values).
    pub fn from_summary(c: &CellSummary, runs: &[&CellRun]) -> Cell {
        let mut runs = runs.to_vec();
        runs.sort_by_key(|r| r.record.run);
        let per = |f: fn(&CellRun) -> f64| runs.iter().map(|r| f(r)).collect::<Vec<f64>>();
        Cell {
            summary: c.clone(),
            run_mb_per_sec: per(|r| r.record.mb_per_sec),
            run_p95_ms: per(|r| r.record.latency_ms.p95),
            run_p99_ms: per(|r| r.record.latency_ms.p99),
            reader_p99_ms: crate::analysis::slo::reader_p99_ms(&runs),
        }
    }
}

/// The cells of a results directory's plan and runs, as its summary states them, each with
/// its run records; a run's one cell is named [`RUN_METHOD`].
pub fn cells_of(plan: &PlanRecord, runs: &[CellRun]) -> Vec<Cell> {
    let summary = crate::analysis::summary::summarize(plan, runs);
    // Both in plan order, one entry per cell that has runs.
    let by_cell = plan.runs_by_cell(runs);
    summary
        .cells
        .iter()
        .zip(&by_cell)
        .map(|(c, (_, mine))| named(plan.kind, Cell::from_summary(c, mine)))
        .collect()
}

/// A cell as compare names it: a run's is [`RUN_METHOD`].
pub fn named(kind: PlanKind, mut c: Cell) -> Cell {
    if kind == PlanKind::Run {
        c.summary.method = RUN_METHOD.into();
    }
    c
}

/// One side of a comparison: where it was read from, and its cells.
#[derive(Debug, Clone)]
pub struct Side {
    /// The path as given.
    pub source: String,
    pub cells: Vec<Cell>,
}

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Higher,
    Lower,
}

/// The change of one metric in one cell, candidate against baseline.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Change {
    /// Baseline and candidate: the mean of the per-run values when there are any, else the
    /// value the reports show.
    pub baseline: f64,
    pub candidate: f64,
    /// (candidate − baseline) / baseline, %.
    pub change_pct: f64,
    /// Half-width of the 95 % Welch interval of `change_pct`, % of the baseline; absent when
    /// a side has fewer than 2 per-run values (then there is no verdict either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_pct: Option<f64>,
    /// What the change means for the system: slower, faster, no_difference, too_noisy
    /// (for latency, higher is slower).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// How it reads: "slower by 12.4 % ± 3.1 %", "no significant difference (...)", ...
    pub text: String,
}

/// One cell present on both sides.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CellComparison {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub size: SizeClass,
    pub threads: u64,
    pub baseline_runs: u32,
    pub candidate_runs: u32,
    pub docs_per_sec: Change,
    pub mb_per_sec: Change,
    pub latency_p95_ms: Change,
    pub latency_p99_ms: Change,
}

impl CellComparison {
    pub fn name(&self) -> String {
        cell_name(&self.method, self.connection, self.size, self.threads)
    }
}

/// Two results compared (`compare --json` prints this).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    /// The version of this format (`schema/compare.schema.json`).
    pub schema_version: u32,
    /// The paths compared, as given.
    pub baseline: String,
    pub candidate: String,
    pub cells: Vec<CellComparison>,
    /// Cells measured on one side only (named like `embedded-http reuse small 4 threads`).
    pub only_in_baseline: Vec<String>,
    pub only_in_candidate: Vec<String>,
    /// What the reader should know about how the changes were computed.
    pub notes: Vec<String>,
}

/// Words for a change `d` % ± `h` % of a metric where `better` is the good direction.
fn change_text(v: Option<Verdict>, d: f64, h: Option<f64>, better: Better, why: &str) -> String {
    let (Some(v), Some(h)) = (v, h) else {
        return format!("{d:+.1} % (no interval: {why})");
    };
    let (worse_word, better_word) = match better {
        Better::Higher => ("slower by", "faster by"),
        Better::Lower => ("higher (slower) by", "lower (faster) by"),
    };
    match v {
        Verdict::Slower => format!("{worse_word} {:.1} % ± {h:.1} %", d.abs()),
        Verdict::Faster => format!("{better_word} {:.1} % ± {h:.1} %", d.abs()),
        Verdict::NoDifference => format!("no significant difference ({d:+.1} % ± {h:.1} %)"),
        Verdict::TooNoisy => format!("too noisy to tell ({d:+.1} % ± {h:.1} %)"),
    }
}

fn mean(x: &[f64]) -> f64 {
    stats::mean_var(x).0
}

/// The change of one metric: Welch over the per-run values when both sides have at least 2,
/// else the headline values without an interval.
fn change(base: (&[f64], f64), cand: (&[f64], f64), better: Better) -> Change {
    let (bs, cs) = (base.0, cand.0);
    let both = !bs.is_empty() && !cs.is_empty();
    let (b, c) = if both {
        (mean(bs), mean(cs))
    } else {
        (base.1, cand.1)
    };
    let d = if b != 0.0 { (c - b) / b * 100.0 } else { 0.0 };
    let tested = (bs.len() >= 2 && cs.len() >= 2)
        .then(|| stats::relative_pct(cs, bs))
        .flatten();
    let why = if !both {
        "per-run values not stored; compare the result directories"
    } else if bs.len() < 2 || cs.len() < 2 {
        "a side has a single run"
    } else {
        "the baseline is 0"
    };
    let (h, v) = match tested {
        Some((d, h)) => {
            let toward_better = if better == Better::Higher { d } else { -d };
            (Some(h), Some(stats::verdict(toward_better, h)))
        }
        None => (None, None),
    };
    Change {
        baseline: round3(b),
        candidate: round3(c),
        change_pct: round3(d),
        ci95_pct: h.map(round3),
        verdict: v,
        text: change_text(v, d, h, better, why),
    }
}

fn compare_cell(b: &Cell, c: &Cell) -> CellComparison {
    CellComparison {
        method: c.summary.method.clone(),
        connection: c.summary.connection,
        size: c.summary.size,
        threads: c.summary.threads,
        baseline_runs: b.summary.runs,
        candidate_runs: c.summary.runs,
        docs_per_sec: change(
            (&b.summary.run_docs_per_sec, b.summary.docs_per_sec),
            (&c.summary.run_docs_per_sec, c.summary.docs_per_sec),
            Better::Higher,
        ),
        mb_per_sec: change(
            (&b.run_mb_per_sec, b.summary.mb_per_sec),
            (&c.run_mb_per_sec, c.summary.mb_per_sec),
            Better::Higher,
        ),
        latency_p95_ms: change(
            (&b.run_p95_ms, b.summary.latency_ms.p95),
            (&c.run_p95_ms, c.summary.latency_ms.p95),
            Better::Lower,
        ),
        latency_p99_ms: change(
            (&b.run_p99_ms, b.summary.latency_ms.p99),
            (&c.run_p99_ms, c.summary.latency_ms.p99),
            Better::Lower,
        ),
    }
}

/// The candidate against the baseline, cell by cell in the baseline's order.
pub fn compare(base: &Side, cand: &Side) -> Comparison {
    let cells: Vec<CellComparison> = base
        .cells
        .iter()
        .filter_map(|b| {
            cand.cells
                .iter()
                .find(|c| c.same_cell(b))
                .map(|c| compare_cell(b, c))
        })
        .collect();
    let only = |x: &Side, y: &Side| -> Vec<String> {
        x.cells
            .iter()
            .filter(|a| !y.cells.iter().any(|b| b.same_cell(a)))
            .map(Cell::name)
            .collect()
    };
    let mut notes = vec![format!(
        "95 % intervals are Welch's over the runs of each side (unpaired); a change is called significant only when its interval excludes 0, and \"no significant difference\" only when the interval is within ±{:.0} %",
        stats::DECISIVE_PCT
    )];
    let pooled = |s: &Side| s.cells.iter().any(|c| c.run_p95_ms.is_empty());
    if pooled(base) || pooled(cand) {
        notes.push("latency: a side read from summary.json alone has no per-run percentiles; its pooled p95/p99 are compared without an interval (give the result directories for one)".into());
    } else {
        notes.push("latency: the mean of each run's own p95/p99, with the interval of their run-to-run spread".into());
    }
    Comparison {
        schema_version: crate::results::SCHEMA_VERSION,
        baseline: base.source.clone(),
        candidate: cand.source.clone(),
        only_in_baseline: only(base, cand),
        only_in_candidate: only(cand, base),
        cells,
        notes,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A cell with these per-run docs/sec (MB/s = docs/sec / 100, p95 = 1000 / docs/sec,
    /// p99 = twice that).
    pub fn cell(method: &str, threads: u64, runs: &[f64]) -> Cell {
        let m = mean(runs);
        let mut summary = CellSummary::empty(&crate::results::CellKey {
            method: method.into(),
            connection: ConnectionPolicy::Reuse,
            size: SizeClass::Small,
            threads,
            rate_per_s: None,
        });
        summary.runs = runs.len() as u32;
        summary.docs_per_sec = m;
        summary.mb_per_sec = m / 100.0;
        summary.latency_ms = crate::metrics::LatencyMs {
            p95: 1000.0 / m,
            p99: 2000.0 / m,
            ..Default::default()
        };
        summary.run_docs_per_sec = runs.to_vec();
        Cell {
            summary,
            run_mb_per_sec: runs.iter().map(|r| r / 100.0).collect(),
            run_p95_ms: runs.iter().map(|r| 1000.0 / r).collect(),
            run_p99_ms: runs.iter().map(|r| 2000.0 / r).collect(),
            reader_p99_ms: None,
        }
    }

    pub fn side(cells: Vec<Cell>) -> Side {
        Side {
            source: "x".into(),
            cells,
        }
    }

    #[test]
    fn a_clear_slowdown_is_called_slower_in_every_metric() {
        let b = side(vec![cell("m", 1, &[400.0, 404.0, 396.0])]);
        let c = side(vec![cell("m", 1, &[300.0, 303.0, 297.0])]);
        let cmp = compare(&b, &c);
        let x = &cmp.cells[0];
        assert_eq!(x.docs_per_sec.verdict, Some(Verdict::Slower));
        assert!((x.docs_per_sec.change_pct + 25.0).abs() < 0.1, "{x:?}");
        assert!(
            x.docs_per_sec.text.starts_with("slower by 25.0 % ± "),
            "{}",
            x.docs_per_sec.text
        );
        assert_eq!(x.mb_per_sec.verdict, Some(Verdict::Slower));
        // Latency up by a third: higher is slower.
        assert_eq!(x.latency_p95_ms.verdict, Some(Verdict::Slower));
        assert!(x.latency_p99_ms.text.starts_with("higher (slower) by 33."));
        assert!(cmp.only_in_baseline.is_empty() && cmp.only_in_candidate.is_empty());
    }

    #[test]
    fn equal_results_are_no_difference_and_noisy_ones_too_noisy() {
        let b = side(vec![cell("m", 1, &[400.0, 402.0, 398.0])]);
        let c = side(vec![cell("m", 1, &[401.0, 399.0, 400.5])]);
        let x = &compare(&b, &c).cells[0];
        assert_eq!(x.docs_per_sec.verdict, Some(Verdict::NoDifference));
        assert!(
            x.docs_per_sec
                .text
                .starts_with("no significant difference (")
        );
        let c = side(vec![cell("m", 1, &[300.0, 500.0, 380.0])]);
        let x = &compare(&b, &c).cells[0];
        assert_eq!(x.docs_per_sec.verdict, Some(Verdict::TooNoisy));
        assert!(x.docs_per_sec.text.starts_with("too noisy to tell ("));
    }

    #[test]
    fn single_runs_and_missing_per_run_values_get_no_verdict() {
        let b = side(vec![cell("m", 1, &[400.0])]);
        let c = side(vec![cell("m", 1, &[300.0])]);
        let x = &compare(&b, &c).cells[0];
        assert_eq!(
            (x.docs_per_sec.verdict, x.docs_per_sec.ci95_pct),
            (None, None)
        );
        assert!(x.docs_per_sec.text.contains("single run"), "{x:?}");
        let mut b = cell("m", 1, &[400.0, 404.0]);
        b.run_p95_ms.clear();
        let x = compare(
            &side(vec![b.clone()]),
            &side(vec![cell("m", 1, &[300.0, 303.0])]),
        );
        let p95 = &x.cells[0].latency_p95_ms;
        assert_eq!(p95.verdict, None);
        assert_eq!(
            p95.baseline,
            round3(b.summary.latency_ms.p95),
            "the pooled value"
        );
        assert!(p95.text.contains("per-run values not stored"), "{p95:?}");
        assert!(x.notes.iter().any(|n| n.contains("summary.json alone")));
    }

    #[test]
    fn cells_on_one_side_only_are_named() {
        let b = side(vec![cell("m", 1, &[1.0, 1.0]), cell("m", 2, &[2.0, 2.0])]);
        let c = side(vec![cell("m", 2, &[2.0, 2.0]), cell("n", 2, &[2.0, 2.0])]);
        let cmp = compare(&b, &c);
        assert_eq!(cmp.cells.len(), 1);
        assert_eq!(cmp.only_in_baseline, vec!["m reuse small 1 thread"]);
        assert_eq!(cmp.only_in_candidate, vec!["n reuse small 2 threads"]);
    }
}
