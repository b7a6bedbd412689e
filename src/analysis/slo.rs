//! How fast an import can go without hurting its users (`sweep --rates R1,R2,… --readers N`):
//! per access method, connection, size and thread count, the readers' p50/p95/p99 per kind of
//! read at each import rate, each against the readers-alone baseline (rate 0) with its 95 %
//! interval, and the highest import rate whose readers' p99 stays under `--reader-slo`.
//!
//! The rules, written down here only:
//! - a rate **meets** the objective when the p99 of every kind of read that was done (each
//!   over every read of the cell's runs, their histograms merged) is under the objective;
//! - the rates are taken in increasing order: the answer is the highest rate below the first
//!   one that breaks it (its **achieved** rate beside the asked one, as a target that fell
//!   behind did not take the asked rate), or "the lowest rate measured already breaks it",
//!   or "the highest rate measured still meets it" (a lower bound: the sweep went no higher);
//! - between the last rate that meets and the first that breaks, the **crossing** is where
//!   the worst p99 reaches the objective on the straight line between them (achieved rates);
//! - a change against the baseline is that of the per-run p99s (`stats::compare_runs`:
//!   paired by run number when the sweep was interleaved, else Welch), `None` with fewer
//!   than two runs on either side.
//!
//! Pure: the runs' records in, the answer out; the words of the reports are built here so
//! the terminal, report.md and report.html say the same.

use serde::{Deserialize, Serialize};

use crate::fixtures::SizeClass;
use crate::metrics::{decode_hist, round3};
use crate::protocol::reads::ReadOp;
use crate::results::readers::{ReadersRecord, SkippedRead};
use crate::results::{CellRun, Order, PlanRecord};
use crate::transport::ConnectionPolicy;

/// The objective when `--reader-slo` is not recorded.
pub const DEFAULT_SLO_MS: f64 = 500.0;

/// One kind of read at one import rate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpPoint {
    pub op: ReadOp,
    /// Reads acknowledged and failed over the cell's runs.
    pub ok: u64,
    pub failed: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    /// p99 against the readers-alone baseline's, % (absent for the baseline itself and
    /// with fewer than two runs on either side), and the half-width of its 95 % interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_change_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_change_ci95_pct: Option<f64>,
}

/// The readers at one import rate (0: the readers-alone baseline).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RatePoint {
    /// The asked rate, documents per second.
    pub rate_per_s: f64,
    /// Documents acknowledged per second of the runs (the import's achieved rate).
    pub achieved_per_s: f64,
    /// Whether every run kept up with the rate (absent for the baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_up: Option<bool>,
    pub runs: u32,
    /// The highest p99 of the kinds of read, ms: what the objective is held to.
    pub reader_p99_ms: f64,
    pub ops: Vec<OpPoint>,
}

/// How the objective reads over the rates measured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SloVerdict {
    /// A rate meets it and the next one up breaks it.
    Found,
    /// The lowest rate measured already breaks it.
    LowestBreaks,
    /// The highest rate measured still meets it (the answer is a lower bound).
    HighestMeets,
}

/// The answer for one access method, connection, size and thread count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SloAnswer {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub size: SizeClass,
    pub threads: u64,
    /// `--reader-slo`, ms.
    pub slo_ms: f64,
    pub verdict: SloVerdict,
    /// The highest asked rate meeting the objective (absent when the lowest breaks it), and
    /// the rate the import achieved there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_rate_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_achieved_per_s: Option<f64>,
    /// `found`: the achieved rate at which the worst p99 reaches the objective, on the line
    /// between the last rate meeting it and the first breaking it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossing_per_s: Option<f64>,
    /// The readers alone (absent when the sweep had no baseline cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<RatePoint>,
    /// Every import rate measured, in increasing order.
    pub points: Vec<RatePoint>,
    /// The answer in one sentence.
    pub text: String,
    /// Kinds of read the repository cannot do, left out of the readers' mix (each once, as
    /// the cells' readers recorded them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_reads: Vec<SkippedRead>,
    /// How long the documents to import take at the rate the objective allows, and closed
    /// loop (absent when no rate meets it or the documents are not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import: Option<ImportAtSlo>,
}

/// How long an import of `docs` documents takes paced at the rate the readers' objective
/// allows, against the closed-loop rate at the same threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ImportAtSlo {
    /// Documents to import (the sweep's `--docs`).
    pub docs: u64,
    /// The highest rate meeting the objective (the achieved one where the import did not
    /// keep up with it), documents per second.
    pub rate_per_s: f64,
    /// docs / rate_per_s, s. A paced import below capacity takes as long as its schedule:
    /// the server does not set this duration, the rate does.
    pub duration_s: f64,
    /// The closed-loop rate at the same threads (the readers-alone baseline's seeding
    /// import, with no objective held) and how long the documents take at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_loop_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_loop_duration_s: Option<f64>,
}

/// The import of `docs` documents at the answer's rate (None when no rate meets the
/// objective, or no documents), and at `closed_loop_per_s` when it is known.
pub fn import_at(a: &SloAnswer, docs: u64, closed_loop_per_s: Option<f64>) -> Option<ImportAtSlo> {
    let asked = a.highest_rate_per_s?;
    let p = a.points.iter().find(|p| p.rate_per_s == asked)?;
    let rate = if p.kept_up == Some(false) {
        p.achieved_per_s.min(asked)
    } else {
        asked
    };
    if docs == 0 || rate <= 0.0 {
        return None;
    }
    let closed = closed_loop_per_s.filter(|c| *c > 0.0);
    Some(ImportAtSlo {
        docs,
        rate_per_s: rate,
        duration_s: round3(docs as f64 / rate),
        closed_loop_per_s: closed.map(round3),
        closed_loop_duration_s: closed.map(|c| round3(docs as f64 / c)),
    })
}

/// "at 40 docs/s, 100000 documents take 41.7 min (the closed-loop 95.2 docs/s would take
/// 17.5 min, with no objective held)".
fn import_text(i: &ImportAtSlo) -> String {
    let h = |s: f64| {
        if s < 1.0 {
            format!("{:.0} ms", s * 1000.0)
        } else {
            crate::timefmt::human_hours(s / 3600.0)
        }
    };
    let mut t = format!(
        "at {} docs/s, {} documents take {} (the rate's schedule, not the server, sets it)",
        i.rate_per_s,
        i.docs,
        h(i.duration_s)
    );
    if let (Some(c), Some(d)) = (i.closed_loop_per_s, i.closed_loop_duration_s) {
        t.push_str(&format!(
            "; the closed-loop {c:.1} docs/s would take {}, with no objective held",
            h(d)
        ));
    }
    t
}

/// Every (method, connection, size, threads) of a rates sweep with readers, answered; empty
/// when the sweep has no rate axis or no readers.
pub fn answers(plan: &PlanRecord, runs: &[CellRun]) -> Vec<SloAnswer> {
    if plan.rates.is_empty() || plan.measure.readers.is_none() {
        return Vec::new();
    }
    let slo = plan.measure.reader_slo_ms.unwrap_or(DEFAULT_SLO_MS);
    let paired = plan.order == Order::Interleaved;
    type Group<'a> = (
        (String, ConnectionPolicy, SizeClass, u64),
        Vec<(f64, Vec<&'a CellRun>)>,
    );
    let mut groups: Vec<Group> = Vec::new();
    for (key, rs) in plan.runs_by_cell(runs) {
        let Some(rate) = key.rate_per_s else { continue };
        let g = (key.method.clone(), key.connection, key.size, key.threads);
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push((rate, rs)),
            None => groups.push((g, vec![(rate, rs)])),
        }
    }
    groups
        .into_iter()
        .filter_map(|((method, connection, size, threads), cells)| {
            let skipped = skipped_reads(cells.iter().flat_map(|(_, rs)| rs.iter().copied()));
            let mut base: Option<(RatePoint, PerRun)> = None;
            let mut points = Vec::new();
            for (rate, rs) in cells {
                let (p, per_run) = rate_point(rate, &rs)?;
                if rate == 0.0 {
                    base = Some((p, per_run));
                } else {
                    points.push((p, per_run));
                }
            }
            if let Some((_, b)) = &base {
                for (p, per_run) in &mut points {
                    changes(p, per_run, b, paired);
                }
            }
            let points: Vec<RatePoint> = points.into_iter().map(|(p, _)| p).collect();
            let mut a = judge(slo, points, base.map(|(p, _)| p))?;
            a.method = method;
            a.connection = connection;
            a.size = size;
            a.threads = threads;
            a.skipped_reads = skipped;
            // The documents are known in count mode (`--docs`); a window has none.
            let docs = if plan.measure.duration_s.is_none() {
                plan.docs
            } else {
                0
            };
            let closed = a.baseline.as_ref().map(|b| b.achieved_per_s);
            a.import = import_at(&a, docs, closed);
            a.text = text(&a);
            Some(a)
        })
        .collect()
}

/// The highest p99 of the kinds of read over a cell's runs (ms), what `--reader-slo` and
/// `--fail-if reader_p99_ms>N` hold a cell to; `None` without readers.
pub fn reader_p99_ms(runs: &[&CellRun]) -> Option<f64> {
    rate_point(0.0, runs)
        .map(|(p, _)| p.reader_p99_ms)
        .filter(|_| runs.iter().any(|r| r.record.readers.is_some()))
}

/// Each run's p99 per kind of read: `(op, [(run, p99 ms)])`.
type PerRun = Vec<(ReadOp, Vec<(u32, f64)>)>;

/// The readers of one cell's runs: merged percentiles per kind of read, and each run's p99.
fn rate_point(rate: f64, runs: &[&CellRun]) -> Option<(RatePoint, PerRun)> {
    let readers: Vec<(u32, &ReadersRecord)> = runs
        .iter()
        .filter_map(|r| Some((r.record.run, r.record.readers.as_ref()?)))
        .collect();
    if readers.is_empty() {
        return None;
    }
    let (ok_docs, secs) = runs.iter().fold((0u64, 0.0f64), |(n, s), r| {
        (n + r.record.docs_ok, s + r.record.duration_s)
    });
    let mut ops = Vec::new();
    let mut per_run = Vec::new();
    for op in ReadOp::ALL {
        let recs: Vec<(u32, &crate::results::readers::ReadOpRecord)> = readers
            .iter()
            .filter_map(|(run, rd)| Some((*run, rd.ops.iter().find(|o| o.op == op)?)))
            .collect();
        let ok: u64 = recs.iter().map(|(_, o)| o.ok).sum();
        if ok == 0 {
            continue;
        }
        let (p50, p95, p99) = merged_percentiles(&recs);
        ops.push(OpPoint {
            op,
            ok,
            failed: recs.iter().map(|(_, o)| o.failed).sum(),
            p50_ms: p50,
            p95_ms: p95,
            p99_ms: p99,
            p99_change_pct: None,
            p99_change_ci95_pct: None,
        });
        per_run.push((
            op,
            recs.iter()
                .filter(|(_, o)| o.ok > 0)
                .map(|(run, o)| (*run, o.latency_ms.p99))
                .collect(),
        ));
    }
    let paced: Vec<bool> = runs
        .iter()
        .filter_map(|r| r.record.paced.as_ref().map(|p| p.kept_up))
        .collect();
    Some((
        RatePoint {
            rate_per_s: rate,
            achieved_per_s: round3(if secs > 0.0 {
                ok_docs as f64 / secs
            } else {
                0.0
            }),
            kept_up: (!paced.is_empty()).then(|| paced.iter().all(|k| *k)),
            runs: runs.len() as u32,
            reader_p99_ms: ops.iter().map(|o| o.p99_ms).fold(0.0, f64::max),
            ops,
        },
        per_run,
    ))
}

/// p50, p95 and p99 (ms) over every read of the runs: their histograms added (exact), or,
/// where a run has none, the highest of the runs' own percentiles.
fn merged_percentiles(recs: &[(u32, &crate::results::readers::ReadOpRecord)]) -> (f64, f64, f64) {
    let mut hist: Option<hdrhistogram::Histogram<u64>> = None;
    for (_, o) in recs {
        match decode_hist(&o.latency_histogram_us) {
            Ok(h) => match &mut hist {
                Some(acc) => {
                    if acc.add(&h).is_err() {
                        hist = None;
                        break;
                    }
                }
                None => hist = Some(h),
            },
            Err(_) if o.ok > 0 => {
                hist = None;
                break;
            }
            Err(_) => {}
        }
    }
    match hist.filter(|h| !h.is_empty()) {
        Some(h) => {
            let q = |p: f64| round3(h.value_at_quantile(p) as f64 / 1000.0);
            (q(0.50), q(0.95), q(0.99))
        }
        None => {
            let max = |f: fn(&crate::metrics::LatencyMs) -> f64| {
                recs.iter()
                    .map(|(_, o)| f(&o.latency_ms))
                    .fold(0.0, f64::max)
            };
            (max(|l| l.p50), max(|l| l.p95), max(|l| l.p99))
        }
    }
}

/// Each kind of read's p99 change against the baseline's, with its interval.
fn changes(p: &mut RatePoint, per_run: &PerRun, base: &PerRun, paired: bool) {
    for o in &mut p.ops {
        let mine = per_run.iter().find(|(op, _)| *op == o.op).map(|x| &x.1);
        let theirs = base.iter().find(|(op, _)| *op == o.op).map(|x| &x.1);
        if let (Some(a), Some(b)) = (mine, theirs)
            && a.len() >= 2
            && b.len() >= 2
            && let Some((d, h, _)) = crate::analysis::stats::compare_runs(a, b, paired)
        {
            o.p99_change_pct = Some(round3(d));
            o.p99_change_ci95_pct = Some(round3(h));
        }
    }
}

/// The answer over the rates measured (see the module's rules); `None` without a rate.
pub fn judge(
    slo_ms: f64,
    mut points: Vec<RatePoint>,
    baseline: Option<RatePoint>,
) -> Option<SloAnswer> {
    if points.is_empty() {
        return None;
    }
    points.sort_by(|a, b| a.rate_per_s.total_cmp(&b.rate_per_s));
    let breaks = points.iter().position(|p| p.reader_p99_ms >= slo_ms);
    let (verdict, highest, crossing) = match breaks {
        Some(0) => (SloVerdict::LowestBreaks, None, None),
        Some(i) => {
            let (a, b) = (&points[i - 1], &points[i]);
            let crossing = if b.reader_p99_ms > a.reader_p99_ms {
                let f = (slo_ms - a.reader_p99_ms) / (b.reader_p99_ms - a.reader_p99_ms);
                Some(round3(
                    a.achieved_per_s + f * (b.achieved_per_s - a.achieved_per_s),
                ))
            } else {
                None
            };
            (SloVerdict::Found, Some(a), crossing)
        }
        None => (SloVerdict::HighestMeets, points.last(), None),
    };
    Some(SloAnswer {
        method: String::new(),
        connection: ConnectionPolicy::Reuse,
        size: SizeClass::Small,
        threads: 0,
        slo_ms,
        verdict,
        highest_rate_per_s: highest.map(|p| p.rate_per_s),
        highest_achieved_per_s: highest.map(|p| p.achieved_per_s),
        crossing_per_s: crossing,
        baseline,
        text: String::new(),
        points,
        skipped_reads: Vec::new(),
        import: None,
    })
}

/// The worst kind of read at a point: its name and p99.
fn worst(p: &RatePoint) -> (&'static str, f64) {
    p.ops
        .iter()
        .max_by(|a, b| a.p99_ms.total_cmp(&b.p99_ms))
        .map_or(("read", 0.0), |o| (o.op.name(), o.p99_ms))
}

/// The answer in one sentence, e.g. "readers' p99 stays under 500 ms up to 40 docs/s
/// (achieved 39.9); at 80 docs/s query p99 is 812.0 ms; crossing at about 61.2 docs/s".
pub fn text(a: &SloAnswer) -> String {
    let slo = a.slo_ms;
    let mut s = match a.verdict {
        SloVerdict::LowestBreaks => {
            let p = &a.points[0];
            let (op, p99) = worst(p);
            format!(
                "the lowest rate measured, {} docs/s, already breaks p99 < {slo} ms ({op} p99 {p99:.1} ms)",
                p.rate_per_s
            )
        }
        SloVerdict::Found => {
            let i = a
                .points
                .iter()
                .position(|p| p.reader_p99_ms >= slo)
                .unwrap_or(0);
            let (ok, bad) = (&a.points[i - 1], &a.points[i]);
            let (op, p99) = worst(bad);
            let mut t = format!(
                "readers' p99 stays under {slo} ms up to {} docs/s (achieved {:.1}; worst {} p99 {:.1} ms); at {} docs/s {op} p99 is {p99:.1} ms",
                ok.rate_per_s,
                ok.achieved_per_s,
                worst(ok).0,
                worst(ok).1,
                bad.rate_per_s
            );
            if let Some(c) = a.crossing_per_s {
                t.push_str(&format!(
                    "; the crossing, interpolated: about {c:.1} docs/s"
                ));
            }
            t
        }
        SloVerdict::HighestMeets => {
            let p = a.points.last().expect("points");
            let (op, p99) = worst(p);
            format!(
                "the highest rate measured, {} docs/s (achieved {:.1}), still meets p99 < {slo} ms (worst {op} p99 {p99:.1} ms): the limit lies higher",
                p.rate_per_s, p.achieved_per_s
            )
        }
    };
    let at = a
        .highest_rate_per_s
        .and_then(|r| a.points.iter().find(|p| p.rate_per_s == r));
    if let (Some(p), Some(b)) = (at, &a.baseline) {
        let parts: Vec<String> = p
            .ops
            .iter()
            .filter_map(|o| {
                let base = b.ops.iter().find(|x| x.op == o.op)?;
                Some(match (o.p99_change_pct, o.p99_change_ci95_pct) {
                    (Some(d), Some(h)) => format!(
                        "{} {:.1} → {:.1} ms ({d:+.1} % ± {h:.1} %)",
                        o.op.name(),
                        base.p99_ms,
                        o.p99_ms
                    ),
                    _ => format!("{} {:.1} → {:.1} ms", o.op.name(), base.p99_ms, o.p99_ms),
                })
            })
            .collect();
        if !parts.is_empty() {
            s.push_str(&format!(
                "; p99 alone vs at {} docs/s: {}",
                p.rate_per_s,
                parts.join(", ")
            ));
        }
    }
    if let Some(i) = &a.import {
        s.push_str("; ");
        s.push_str(&import_text(i));
    }
    for sk in &a.skipped_reads {
        s.push_str(&format!(
            "; {} not read: {}, left out of the mix",
            sk.op.name(),
            sk.reason
        ));
    }
    let failed = failed_reads(a);
    if !failed.is_empty() {
        s.push_str(&format!(
            "; reads that FAILED, not in the p99s (errors in summary.json): {}",
            failed.join(", ")
        ));
    }
    s
}

/// Each kind of read that failed at least once, over the baseline and every rate: "query 62
/// of 62" (a repository without the capability, e.g. OpenCMIS FileShare's 405 to a query).
/// The kinds of read the runs' readers left out, each once.
fn skipped_reads<'a>(runs: impl Iterator<Item = &'a CellRun>) -> Vec<SkippedRead> {
    let mut out: Vec<SkippedRead> = Vec::new();
    for s in runs
        .filter_map(|r| r.record.readers.as_ref())
        .flat_map(|rd| &rd.skipped)
    {
        if !out.iter().any(|o| o.op == s.op) {
            out.push(s.clone());
        }
    }
    out
}

fn failed_reads(a: &SloAnswer) -> Vec<String> {
    let mut by_op: Vec<(&'static str, u64, u64)> = Vec::new();
    for o in a.baseline.iter().chain(&a.points).flat_map(|p| &p.ops) {
        match by_op.iter_mut().find(|f| f.0 == o.op.name()) {
            Some(f) => {
                f.1 += o.failed;
                f.2 += o.ok + o.failed;
            }
            None => by_op.push((o.op.name(), o.failed, o.ok + o.failed)),
        }
    }
    by_op
        .iter()
        .filter(|f| f.1 > 0)
        .map(|(op, failed, all)| format!("{op} {failed} of {all}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(rate: f64, achieved: f64, p99s: &[f64]) -> RatePoint {
        RatePoint {
            rate_per_s: rate,
            achieved_per_s: achieved,
            kept_up: Some(true),
            runs: 3,
            reader_p99_ms: p99s.iter().copied().fold(0.0, f64::max),
            ops: p99s
                .iter()
                .zip(ReadOp::ALL)
                .map(|(p, op)| OpPoint {
                    op,
                    ok: 100,
                    failed: 0,
                    p50_ms: p / 4.0,
                    p95_ms: p / 2.0,
                    p99_ms: *p,
                    p99_change_pct: None,
                    p99_change_ci95_pct: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_highest_rate_under_the_objective_and_the_crossing_between() {
        // In any order: taken by increasing rate.
        let pts = vec![
            point(40.0, 36.0, &[900.0, 200.0]),
            point(10.0, 10.0, &[50.0, 100.0]),
            point(20.0, 20.0, &[100.0, 300.0]),
        ];
        let a = judge(500.0, pts, None).unwrap();
        assert_eq!(a.verdict, SloVerdict::Found);
        assert_eq!(
            (a.highest_rate_per_s, a.highest_achieved_per_s),
            (Some(20.0), Some(20.0))
        );
        // 300 → 900 ms between achieved 20 and 36: 500 ms a third of the way, 25.333.
        assert_eq!(a.crossing_per_s, Some(25.333));
        let t = text(&a);
        assert!(
            t.contains("up to 20 docs/s") && t.contains("at 40 docs/s meta p99 is 900.0 ms"),
            "{t}"
        );
    }

    #[test]
    fn the_lowest_rate_breaking_it_or_the_highest_meeting_it_is_said_so() {
        let a = judge(100.0, vec![point(10.0, 10.0, &[150.0])], None).unwrap();
        assert_eq!(a.verdict, SloVerdict::LowestBreaks);
        assert_eq!(a.highest_rate_per_s, None);
        assert!(text(&a).contains("already breaks"), "{}", text(&a));
        let a = judge(
            1000.0,
            vec![point(10.0, 10.0, &[150.0]), point(20.0, 19.5, &[250.0])],
            None,
        )
        .unwrap();
        assert_eq!(a.verdict, SloVerdict::HighestMeets);
        assert_eq!(a.highest_rate_per_s, Some(20.0));
        assert!(text(&a).contains("still meets"), "{}", text(&a));
        assert!(judge(500.0, Vec::new(), None).is_none());
    }

    #[test]
    fn reads_that_failed_are_named_not_hidden() {
        // A repository without the capability (OpenCMIS FileShare answers a query 405): the
        // kind of read that never succeeded has no latency, and the answer says so.
        let mut p = point(10.0, 10.0, &[50.0, 60.0]);
        p.ops[1].ok = 0;
        p.ops[1].failed = 31;
        let mut q = point(20.0, 20.0, &[70.0, 80.0]);
        q.ops[1].ok = 0;
        q.ops[1].failed = 29;
        let name = p.ops[1].op.name();
        let a = judge(500.0, vec![p, q], None).unwrap();
        let t = text(&a);
        assert!(
            t.contains(&format!(
                "reads that FAILED, not in the p99s (errors in summary.json): {name} 60 of 60"
            )),
            "{t}"
        );
        let clean = judge(500.0, vec![point(10.0, 10.0, &[50.0])], None).unwrap();
        assert!(!text(&clean).contains("FAILED"));
    }

    #[test]
    fn the_import_takes_its_schedule_at_the_rate_the_objective_allows() {
        let a = judge(
            500.0,
            vec![
                point(20.0, 20.4, &[100.0]),
                point(40.0, 40.8, &[300.0]),
                point(80.0, 70.0, &[900.0]),
            ],
            None,
        )
        .unwrap();
        let i = import_at(&a, 100_000, Some(125.0)).unwrap();
        assert_eq!(
            (i.rate_per_s, i.duration_s, i.closed_loop_duration_s),
            (40.0, 2500.0, Some(800.0))
        );
        let t = import_text(&i);
        assert_eq!(
            t,
            "at 40 docs/s, 100000 documents take 41.7 min (the rate's schedule, not the server, sets it); the closed-loop 125.0 docs/s would take 13.3 min, with no objective held"
        );
        let short = import_at(&a, 30, Some(1097.0)).unwrap();
        assert!(
            import_text(&short).starts_with("at 40 docs/s, 30 documents take 750 ms")
                && import_text(&short).contains("1097.0 docs/s would take 27 ms"),
            "{}",
            import_text(&short)
        );
        // Where the import fell behind the rate, the achieved rate sets the duration.
        let mut behind = a.clone();
        behind.points[1].kept_up = Some(false);
        behind.points[1].achieved_per_s = 32.0;
        assert_eq!(import_at(&behind, 3200, None).unwrap().duration_s, 100.0);
        // No rate meets it, or nothing to import: no duration.
        let none = judge(50.0, vec![point(20.0, 20.0, &[100.0])], None).unwrap();
        assert_eq!(import_at(&none, 1000, Some(100.0)), None);
        assert_eq!(import_at(&a, 0, Some(100.0)), None);
    }

    #[test]
    fn reads_left_out_of_the_mix_are_said_once() {
        // FileShare's capabilityQuery is none: the readers never queried, nothing failed.
        let mut a = judge(500.0, vec![point(10.0, 10.0, &[50.0, 60.0, 70.0])], None).unwrap();
        a.skipped_reads = vec![SkippedRead {
            op: ReadOp::Query,
            reason: "the repository has no query (its capabilityQuery is none)".into(),
        }];
        let t = text(&a);
        assert_eq!(t.matches("not read").count(), 1, "{t}");
        assert!(
            t.contains("; query not read: the repository has no query (its capabilityQuery is none), left out of the mix"),
            "{t}"
        );
        assert!(!t.contains("FAILED"), "{t}");
    }

    #[test]
    fn the_change_against_the_readers_alone_is_paired_by_run() {
        let mut p = point(20.0, 20.0, &[110.0]);
        let per_run: PerRun = vec![(ReadOp::Meta, vec![(1, 110.0), (2, 121.0), (3, 99.0)])];
        let base: PerRun = vec![(ReadOp::Meta, vec![(1, 100.0), (2, 110.0), (3, 90.0)])];
        changes(&mut p, &per_run, &base, true);
        // Every pair is exactly +10 %: no spread, a zero-width interval.
        assert_eq!(p.ops[0].p99_change_pct, Some(10.0));
        assert_eq!(p.ops[0].p99_change_ci95_pct, Some(0.0));
        let mut one = point(20.0, 20.0, &[110.0]);
        changes(
            &mut one,
            &vec![(ReadOp::Meta, vec![(1, 110.0)])],
            &base,
            true,
        );
        assert_eq!(one.ops[0].p99_change_pct, None, "one run: no interval");
    }
}
