//! Thresholds (`--fail-if EXPR`): parsing `METRIC OP VALUE` expressions and checking them
//! against finished results, each cell on its own, so a pipeline fails (exit 3) on a crossing
//! and is told which cell crossed which threshold.
//!
//! Absolute metrics (`docs_per_sec<200`, `p99_ms>500`, `error_pct>0.1`) are checked against
//! a run's or sweep's cells, and in `compare` against the candidate's. Relative ones
//! (`slower>5%`, `p95_slower>10%`, `p99_slower>10%`) need a comparison: they cross only where
//! the change is significant (its 95 % interval excludes 0) and its estimate exceeds the
//! value, so a comparison too noisy to tell never fails a pipeline. Pure: nothing here
//! prints or exits.

use anyhow::{Result, bail};

use crate::analysis::stats::Verdict;
use crate::compare::{Cell, Change, Comparison};

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    DocsPerSec,
    MbPerSec,
    P50Ms,
    P90Ms,
    P95Ms,
    P99Ms,
    MaxMs,
    ErrorPct,
    /// docs/sec significantly lower than the baseline's by more than the value, %.
    Slower,
    /// p95 / p99 latency significantly higher than the baseline's by more than the value, %.
    P95Slower,
    P99Slower,
    /// `--readers`: the highest p99 of the kinds of read, ms (cells without readers never
    /// cross it).
    ReaderP99Ms,
}

/// Every metric: its name in expressions, the unit suffix its value may carry.
const METRICS: [(&str, Metric, &str); 12] = [
    ("docs_per_sec", Metric::DocsPerSec, ""),
    ("mb_per_sec", Metric::MbPerSec, ""),
    ("p50_ms", Metric::P50Ms, "ms"),
    ("p90_ms", Metric::P90Ms, "ms"),
    ("p95_ms", Metric::P95Ms, "ms"),
    ("p99_ms", Metric::P99Ms, "ms"),
    ("max_ms", Metric::MaxMs, "ms"),
    ("error_pct", Metric::ErrorPct, "%"),
    ("slower", Metric::Slower, "%"),
    ("p95_slower", Metric::P95Slower, "%"),
    ("p99_slower", Metric::P99Slower, "%"),
    ("reader_p99_ms", Metric::ReaderP99Ms, "ms"),
];

impl Metric {
    /// Does it compare two results (only `compare` can check it)?
    pub fn relative(self) -> bool {
        matches!(self, Metric::Slower | Metric::P95Slower | Metric::P99Slower)
    }

    fn name(self) -> &'static str {
        METRICS.iter().find(|m| m.1 == self).map_or("?", |m| m.0)
    }

    fn of(self, c: &Cell) -> f64 {
        let l = &c.summary.latency_ms;
        match self {
            Metric::DocsPerSec => c.summary.docs_per_sec,
            Metric::MbPerSec => c.summary.mb_per_sec,
            Metric::P50Ms => l.p50,
            Metric::P90Ms => l.p90,
            Metric::P95Ms => l.p95,
            Metric::P99Ms => l.p99,
            Metric::MaxMs => l.max,
            Metric::ErrorPct => c.summary.error_pct,
            Metric::ReaderP99Ms => c.reader_p99_ms.unwrap_or(f64::NAN),
            Metric::Slower | Metric::P95Slower | Metric::P99Slower => f64::NAN,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
        }
    }

    fn sign(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// Where an expression is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `run` and `sweep`: one result.
    Results,
    /// `compare`: a comparison and its candidate.
    Compare,
}

/// One parsed `--fail-if` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As given, for naming it.
    pub expr: String,
    pub metric: Metric,
    pub op: Op,
    pub value: f64,
}

fn names() -> String {
    METRICS.map(|m| m.0).join(", ")
}

/// Parses `METRIC OP VALUE` (spaces allowed; OP one of < <= > >=; VALUE a number, with `%`
/// or `ms` as the metric's unit allows).
pub fn parse(s: &str, scope: Scope) -> Result<Threshold> {
    let Some(at) = s.find(['<', '>']) else {
        bail!(
            "--fail-if `{s}`: no comparison; write METRIC<VALUE or METRIC>VALUE, e.g. docs_per_sec<200, p99_ms>500, error_pct>0.1 or, with compare, slower>5%"
        );
    };
    let (lhs, rest) = s.split_at(at);
    let (op, rhs) = match (rest.as_bytes()[0], rest.as_bytes().get(1)) {
        (b'<', Some(b'=')) => (Op::Le, &rest[2..]),
        (b'>', Some(b'=')) => (Op::Ge, &rest[2..]),
        (b'<', _) => (Op::Lt, &rest[1..]),
        _ => (Op::Gt, &rest[1..]),
    };
    let name = lhs.trim();
    let Some(&(_, metric, unit)) = METRICS.iter().find(|m| m.0 == name) else {
        bail!(
            "--fail-if `{s}`: unknown metric `{name}`; one of {}",
            names()
        );
    };
    let raw = rhs.trim();
    let number = if unit.is_empty() {
        raw
    } else {
        raw.strip_suffix(unit).unwrap_or(raw).trim_end()
    };
    let value: f64 = match number.parse() {
        Ok(v) if f64::is_finite(v) && v >= 0.0 => v,
        _ => bail!(
            "--fail-if `{s}`: `{raw}` is not a number of 0 or more{}",
            if unit.is_empty() {
                String::new()
            } else {
                format!(" (optionally followed by {unit})")
            }
        ),
    };
    if metric.relative() {
        if scope == Scope::Results {
            bail!(
                "--fail-if `{s}`: `{name}` compares two results; give it to `ingestbench compare BASELINE CANDIDATE`"
            );
        }
        if matches!(op, Op::Lt | Op::Le) {
            bail!(
                "--fail-if `{s}`: `{name}` takes > (significantly slower by more than VALUE %), e.g. {name}>5%"
            );
        }
    }
    Ok(Threshold {
        expr: s.to_string(),
        metric,
        op,
        value,
    })
}

/// Parses every `--fail-if`; the first malformed one is the error.
pub fn parse_all(exprs: &[String], scope: Scope) -> Result<Vec<Threshold>> {
    exprs.iter().map(|e| parse(e, scope)).collect()
}

/// A threshold crossed in one cell.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Crossing {
    /// The expression as given.
    pub expr: String,
    /// The cell, e.g. `embedded-http reuse small 4 threads`.
    pub cell: String,
    /// What was measured, e.g. `p99_ms 612.0 > 500` or `docs/sec slower by 33.1 % ± 2.4 %`.
    pub measured: String,
}

impl std::fmt::Display for Crossing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (--fail-if {})",
            self.cell, self.measured, self.expr
        )
    }
}

/// A relative threshold against one cell's change: significantly slower, by more than the
/// value (docs/sec falls, latency rises).
fn relative_crossed(t: &Threshold, c: &Change, worse_pct: f64) -> bool {
    c.verdict == Some(Verdict::Slower) && t.op.holds(worse_pct, t.value)
}

/// A finished `run`'s or `sweep`'s crossings, cell by cell.
pub fn check_results(
    thresholds: &[Threshold],
    plan: &crate::results::PlanRecord,
    runs: &[crate::results::CellRun],
) -> Vec<Crossing> {
    check(thresholds, &crate::compare::cells_of(plan, runs), None)
}

/// Checks `thresholds` against `cells` (absolute metrics) and, when given, `cmp` (relative
/// metrics); every crossing, in threshold then cell order.
pub fn check(thresholds: &[Threshold], cells: &[Cell], cmp: Option<&Comparison>) -> Vec<Crossing> {
    let mut out = Vec::new();
    for t in thresholds {
        if !t.metric.relative() {
            for c in cells {
                let v = t.metric.of(c);
                if t.op.holds(v, t.value) {
                    out.push(Crossing {
                        expr: t.expr.clone(),
                        cell: c.name(),
                        measured: format!(
                            "{} {} {} {}",
                            t.metric.name(),
                            crate::metrics::round3(v),
                            t.op.sign(),
                            t.value
                        ),
                    });
                }
            }
            continue;
        }
        for x in cmp.map(|c| c.cells.as_slice()).unwrap_or_default() {
            let (label, change, worse) = match t.metric {
                Metric::Slower => ("docs/sec", &x.docs_per_sec, -x.docs_per_sec.change_pct),
                Metric::P95Slower => ("p95", &x.latency_p95_ms, x.latency_p95_ms.change_pct),
                _ => ("p99", &x.latency_p99_ms, x.latency_p99_ms.change_pct),
            };
            if relative_crossed(t, change, worse) {
                out.push(Crossing {
                    expr: t.expr.clone(),
                    cell: x.name(),
                    measured: format!("{label} {}", change.text),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::compare::tests::{cell, side};

    fn p(s: &str) -> Result<Threshold> {
        parse(s, Scope::Compare)
    }

    #[test]
    fn expressions_parse_with_their_units() {
        let t = p("docs_per_sec<200").unwrap();
        assert_eq!(
            (t.metric, t.op, t.value),
            (Metric::DocsPerSec, Op::Lt, 200.0)
        );
        let t = p(" p99_ms >= 500ms ").unwrap();
        assert_eq!((t.metric, t.op, t.value), (Metric::P99Ms, Op::Ge, 500.0));
        let t = p("error_pct>0.1%").unwrap();
        assert_eq!((t.metric, t.op, t.value), (Metric::ErrorPct, Op::Gt, 0.1));
        assert_eq!(p("error_pct>0.1").unwrap().value, 0.1);
        let t = p("slower>5%").unwrap();
        assert_eq!((t.metric, t.op, t.value), (Metric::Slower, Op::Gt, 5.0));
        assert_eq!(p("p99_slower>10").unwrap().metric, Metric::P99Slower);
        assert_eq!(p("mb_per_sec<=1.5").unwrap().op, Op::Le);
    }

    #[test]
    fn malformed_expressions_are_named_with_what_to_write() {
        for (bad, needle) in [
            ("docs_per_sec", "no comparison"),
            (
                "docs_per_second<200",
                "unknown metric `docs_per_second`; one of docs_per_sec",
            ),
            ("docs_per_sec<fast", "`fast` is not a number"),
            ("docs_per_sec<200%", "`200%` is not a number"),
            ("p99_ms>-1", "is not a number of 0 or more"),
            ("p99_ms>inf", "is not a number"),
            ("slower<5%", "takes >"),
            ("<5", "unknown metric ``"),
        ] {
            let e = format!("{:#}", p(bad).unwrap_err());
            assert!(e.contains(&format!("--fail-if `{bad}`")), "{e}");
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let e = format!("{:#}", parse("slower>5%", Scope::Results).unwrap_err());
        assert!(e.contains("ingestbench compare"), "{e}");
        assert!(parse_all(&["p99_ms>5".into(), "x>1".into()], Scope::Results).is_err());
    }

    #[test]
    fn absolute_thresholds_name_each_crossing_cell() {
        let cells = vec![cell("m", 1, &[150.0, 150.0]), cell("m", 4, &[400.0, 400.0])];
        let ts = parse_all(
            &["docs_per_sec<200".into(), "p95_ms>5".into()],
            Scope::Results,
        )
        .unwrap();
        let x = check(&ts, &cells, None);
        assert_eq!(x.len(), 2, "{x:?}");
        assert_eq!(
            x[0].to_string(),
            "m reuse small 1 thread: docs_per_sec 150 < 200 (--fail-if docs_per_sec<200)"
        );
        assert_eq!(x[1].cell, "m reuse small 1 thread");
        assert!(x[1].measured.starts_with("p95_ms 6.667 > 5"), "{x:?}");
        let ok = parse_all(&["docs_per_sec<100".into()], Scope::Results).unwrap();
        assert!(check(&ok, &cells, None).is_empty());
    }

    #[test]
    fn reader_p99_crosses_in_cells_with_readers_only() {
        let t = parse("reader_p99_ms>500ms", Scope::Results).unwrap();
        assert_eq!((t.metric, t.value), (Metric::ReaderP99Ms, 500.0));
        let mut slow = cell("m", 4, &[100.0]);
        slow.summary.rate_per_s = Some(40.0);
        slow.reader_p99_ms = Some(612.5);
        let mut fast = cell("m", 4, &[100.0]);
        fast.summary.rate_per_s = Some(20.0);
        fast.reader_p99_ms = Some(120.0);
        let none = cell("m", 8, &[100.0]);
        let x = check(&[t], &[slow, fast, none], None);
        assert_eq!(x.len(), 1, "{x:?}");
        assert_eq!(
            x[0].to_string(),
            "m reuse small 4 threads at 40 docs/s: reader_p99_ms 612.5 > 500 (--fail-if reader_p99_ms>500ms)"
        );
    }

    #[test]
    fn slower_crosses_only_when_significant_and_beyond_the_value() {
        let b = side(vec![cell("m", 1, &[400.0, 404.0, 396.0])]);
        let slow = side(vec![cell("m", 1, &[300.0, 303.0, 297.0])]);
        let noisy = side(vec![cell("m", 1, &[200.0, 500.0, 300.0])]);
        let ts = parse_all(&["slower>5%".into()], Scope::Compare).unwrap();
        let x = check(&ts, &slow.cells, Some(&compare(&b, &slow)));
        assert_eq!(x.len(), 1);
        assert!(
            x[0].measured.starts_with("docs/sec slower by 25.0 % ± "),
            "{x:?}"
        );
        let big = parse_all(&["slower>30%".into()], Scope::Compare).unwrap();
        assert!(check(&big, &slow.cells, Some(&compare(&b, &slow))).is_empty());
        assert!(check(&ts, &noisy.cells, Some(&compare(&b, &noisy))).is_empty());
        let lat = parse_all(&["p99_slower>20%".into()], Scope::Compare).unwrap();
        let x = check(&lat, &slow.cells, Some(&compare(&b, &slow)));
        assert_eq!(x.len(), 1, "p99 up by a third");
        assert!(
            x[0].measured.starts_with("p99 higher (slower) by 33."),
            "{x:?}"
        );
    }
}
