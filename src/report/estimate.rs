//! The migration estimate: how long importing a whole corpus takes, per measured access
//! method, connection policy and thread count, with a 95 % interval.
//!
//! **Model.** At a given method, policy and thread count, the wall-clock cost of one document
//! is `t(b) = a + c·b` seconds for a document of `b` bytes: `a` the per-document cost (request,
//! metadata, the repository's work per node), `c` the per-byte cost. Each measured run of a
//! cell gives one observation `t = 1 / (docs/s)` at that cell's document size; `a` and `c` are
//! the least-squares line through the cells' mean `t` over their sizes (sweeps with several
//! size classes, or `sweep --corpus` which takes its sizes from the corpus). The corpus then
//! takes `T = N·a + c·B` (N documents, B bytes). `T` is linear in the cells' means, so its
//! variance is the weighted sum of their variances (run-to-run spread / runs), and the 95 %
//! interval uses Student's t with Welch–Satterthwaite degrees of freedom. With one size
//! measured, every document is assumed to cost what that size costs (and this is flagged).
//! Assumed: the rate measured holds for the whole import (no slowdown as the repository
//! grows), and sizes outside the measured range follow the line (flagged with their share).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::analysis::{mean_var, t975};
use crate::corpus::CorpusDescription;
use crate::records::{CellRun, SweepPlan};
use crate::transport::ConnectionPolicy;

/// One option the team can choose: a method, a policy and a thread count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OptionEstimate {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub threads: u64,
    /// Predicted duration of the whole import, and the half-width of its 95 % interval.
    pub duration_s: f64,
    pub ci95_s: f64,
    /// The same in hours (for people; `duration_s` is exact).
    pub hours: f64,
    pub ci95_hours: f64,
    /// Fitted cost per document (s) and per MiB (s) at this thread count.
    pub per_doc_s: f64,
    pub per_mib_s: f64,
    /// Document sizes (bytes) measured for this option.
    pub sizes_measured: Vec<u64>,
    /// Extrapolations and other caveats of this option's estimate.
    pub flags: Vec<String>,
}

/// Share of the predicted time spent on one size bucket.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BucketShare {
    pub lo_bytes: u64,
    pub hi_bytes: u64,
    pub documents: u64,
    pub share_pct: f64,
}

/// `estimate.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    pub corpus: String,
    pub documents: u64,
    pub bytes: u64,
    /// Every option, fastest first.
    pub options: Vec<OptionEstimate>,
    /// Where the time goes for the fastest option, largest share first.
    pub time_by_size: Vec<BucketShare>,
    /// Plain-language conclusions.
    pub findings: Vec<String>,
    pub assumptions: Vec<String>,
}

/// A cell's observations: its document size, one `t = 1/rate` per run, and its drift.
struct Point {
    bytes: u64,
    times: Vec<f64>,
    drift: Option<crate::report::analysis::Drift>,
}

/// Least-squares weights: `a = Σ α·t̄`, `c = Σ γ·t̄` over the points' means.
fn weights(sizes: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let m = sizes.len() as f64;
    let mean = sizes.iter().sum::<f64>() / m;
    let sbb: f64 = sizes.iter().map(|b| (b - mean).powi(2)).sum();
    if sbb == 0.0 {
        return (vec![1.0 / m; sizes.len()], vec![0.0; sizes.len()]);
    }
    let gamma: Vec<f64> = sizes.iter().map(|b| (b - mean) / sbb).collect();
    let alpha = gamma.iter().map(|g| 1.0 / m - mean * g).collect();
    (alpha, gamma)
}

/// The estimate for one option from its points.
fn option(
    corpus: &CorpusDescription,
    key: &(String, ConnectionPolicy, u64),
    points: &[Point],
) -> OptionEstimate {
    let sizes: Vec<f64> = points.iter().map(|p| p.bytes as f64).collect();
    let (alpha, gamma) = weights(&sizes);
    let stats: Vec<(f64, f64, usize)> = points
        .iter()
        .map(|p| {
            let (m, v) = mean_var(&p.times);
            (m, v / p.times.len() as f64, p.times.len())
        })
        .collect();
    let a: f64 = alpha.iter().zip(&stats).map(|(w, s)| w * s.0).sum();
    let c: f64 = gamma.iter().zip(&stats).map(|(w, s)| w * s.0).sum();
    let (n, b) = (corpus.documents as f64, corpus.bytes as f64);
    let w: Vec<f64> = alpha
        .iter()
        .zip(&gamma)
        .map(|(al, ga)| n * al + b * ga)
        .collect();
    let t = n * a + b * c;
    let var: f64 = w.iter().zip(&stats).map(|(w, s)| w * w * s.1).sum();
    let denom: f64 = w
        .iter()
        .zip(&stats)
        .filter(|(_, s)| s.2 > 1)
        .map(|(w, s)| (w * w * s.1).powi(2) / (s.2 - 1) as f64)
        .sum();
    let df = if denom > 0.0 {
        var * var / denom
    } else {
        f64::INFINITY
    };
    let half = t975(df) * var.sqrt();
    let mut measured: Vec<u64> = points.iter().map(|p| p.bytes).collect();
    measured.sort_unstable();
    measured.dedup();
    let flags = flags(corpus, &measured, a, c, points);
    OptionEstimate {
        method: key.0.clone(),
        connection: key.1,
        threads: key.2,
        duration_s: round(t, 3),
        ci95_s: round(half, 3),
        hours: round(t / 3600.0, 6),
        ci95_hours: round(half / 3600.0, 6),
        per_doc_s: round(a, 9),
        per_mib_s: round(c * 1_048_576.0, 9),
        sizes_measured: measured,
        flags,
    }
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

/// What the estimate of one option extrapolates or cannot know.
fn flags(
    corpus: &CorpusDescription,
    measured: &[u64],
    a: f64,
    c: f64,
    points: &[Point],
) -> Vec<String> {
    let mut out = Vec::new();
    let (lo, hi) = (measured[0], *measured.last().expect("a point"));
    if measured.len() == 1 {
        out.push(format!(
            "one document size measured ({}): every document is assumed to cost the same; measure several sizes (sweep --corpus) to model cost per byte",
            human_bytes(lo)
        ));
    }
    let above = corpus.bytes_above(hi);
    if above > 0 && corpus.bytes > 0 {
        out.push(format!(
            "{:.0} % of the corpus's bytes are in documents larger than the largest measured size ({}): extrapolated",
            above as f64 * 100.0 / corpus.bytes as f64,
            human_bytes(hi)
        ));
    }
    let below: u64 = corpus
        .size_histogram
        .iter()
        .filter(|b| b.hi_bytes <= lo)
        .map(|b| b.files)
        .sum();
    if below > 0 && corpus.documents > 0 {
        out.push(format!(
            "{:.0} % of the documents are smaller than the smallest measured size ({}): extrapolated",
            below as f64 * 100.0 / corpus.documents as f64,
            human_bytes(lo)
        ));
    }
    if a < 0.0 || c < 0.0 {
        out.push("the fitted per-document or per-byte cost is negative: the measured sizes are too close or too noisy; run more runs or sizes further apart".into());
    }
    if let Some(d) = points
        .iter()
        .filter_map(|p| p.drift.as_ref())
        .filter(|d| d.significant && d.end_vs_start < 1.0)
        .min_by(|x, y| x.end_vs_start.total_cmp(&y.end_vs_start))
    {
        out.push(format!(
            "{} in the measured cells: the import, far longer, is likely slower than estimated",
            d.text()
        ));
    }
    if points.iter().any(|p| p.times.len() < 2) {
        out.push("a cell has a single run: its spread is unknown, so the interval is too narrow; use --runs 3 or more".into());
    }
    out
}

/// Bytes for people: B, KiB, MiB, GiB.
pub fn human_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Hours for people: `31.2 h`, `47 min`, `52 s`.
pub fn human_hours(h: f64) -> String {
    if h >= 1.0 {
        format!("{h:.1} h")
    } else if h * 60.0 >= 1.0 {
        format!("{:.1} min", h * 60.0)
    } else {
        format!("{:.1} s", h * 3600.0)
    }
}

/// Estimates the corpus's import from the sweeps' runs.
pub fn estimate(corpus: &CorpusDescription, sweeps: &[(SweepPlan, Vec<CellRun>)]) -> Estimate {
    let mut groups: BTreeMap<(String, ConnectionPolicy, u64), Vec<Point>> = BTreeMap::new();
    for (plan, runs) in sweeps {
        let summary = crate::report::sweep::summarize(plan, runs);
        for cell in &summary.cells {
            let Some((_, bytes)) = plan.sizes.iter().find(|(s, _)| *s == cell.size) else {
                continue;
            };
            let times: Vec<f64> = cell
                .run_docs_per_sec
                .iter()
                .filter(|r| **r > 0.0)
                .map(|r| 1.0 / r)
                .collect();
            if times.is_empty() {
                continue;
            }
            groups
                .entry((cell.method.clone(), cell.connection, cell.threads))
                .or_default()
                .push(Point {
                    bytes: *bytes,
                    times,
                    drift: cell.drift.clone(),
                });
        }
    }
    let mut options: Vec<OptionEstimate> = groups
        .iter()
        .map(|(k, pts)| option(corpus, k, pts))
        .collect();
    options.sort_by(|x, y| x.duration_s.total_cmp(&y.duration_s));
    let time_by_size = options
        .first()
        .map(|o| shares(corpus, o))
        .unwrap_or_default();
    let findings = findings(&options, &time_by_size);
    Estimate {
        corpus: corpus.source.clone(),
        documents: corpus.documents,
        bytes: corpus.bytes,
        options,
        time_by_size,
        findings,
        assumptions: vec![
            "the measured rate holds for the whole import: no slowdown as the repository grows (drift within the measured runs is tested, and flagged when significant)".into(),
            "the repository, access path and client are the ones measured".into(),
            "document cost is linear in its size between and beyond the measured sizes (flagged where extrapolated)".into(),
        ],
    }
}

/// Share of the predicted time per size bucket for option `o`.
fn shares(corpus: &CorpusDescription, o: &OptionEstimate) -> Vec<BucketShare> {
    let c = o.per_mib_s / 1_048_576.0;
    let total: f64 = corpus
        .size_histogram
        .iter()
        .map(|b| b.files as f64 * o.per_doc_s + b.bytes as f64 * c)
        .sum();
    let mut out: Vec<BucketShare> = corpus
        .size_histogram
        .iter()
        .map(|b| BucketShare {
            lo_bytes: b.lo_bytes,
            hi_bytes: b.hi_bytes,
            documents: b.files,
            share_pct: if total > 0.0 {
                round(
                    (b.files as f64 * o.per_doc_s + b.bytes as f64 * c) * 100.0 / total,
                    1,
                )
            } else {
                0.0
            },
        })
        .collect();
    out.sort_by(|x, y| y.share_pct.total_cmp(&x.share_pct));
    out
}

/// The fastest option, where more threads stop helping, which sizes take the time.
fn findings(options: &[OptionEstimate], shares: &[BucketShare]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(best) = options.first() else {
        return vec!["no measured cells to estimate from".into()];
    };
    out.push(format!(
        "fastest: {} ({} connections) at {} threads: {} ± {}",
        best.method,
        best.connection,
        best.threads,
        human_hours(best.hours),
        human_hours(best.ci95_hours)
    ));
    let mut paths: Vec<(&str, ConnectionPolicy)> = options
        .iter()
        .map(|o| (o.method.as_str(), o.connection))
        .collect();
    paths.sort();
    paths.dedup();
    for (m, conn) in paths {
        let mut by_t: Vec<&OptionEstimate> = options
            .iter()
            .filter(|o| o.method == m && o.connection == conn)
            .collect();
        by_t.sort_by_key(|o| o.threads);
        let Some(min) = by_t.iter().min_by(|x, y| x.hours.total_cmp(&y.hours)) else {
            continue;
        };
        let worse: Vec<u64> = by_t
            .iter()
            .filter(|o| {
                o.threads > min.threads && o.hours - o.ci95_hours > min.hours + min.ci95_hours
            })
            .map(|o| o.threads)
            .collect();
        let mut line = format!(
            "{m} ({conn}): shortest at {} threads ({} ± {})",
            min.threads,
            human_hours(min.hours),
            human_hours(min.ci95_hours)
        );
        if let Some(t) = worse.first() {
            line.push_str(&format!(
                "; from {t} threads on it gets significantly slower"
            ));
        } else if by_t.last().is_some_and(|o| o.threads == min.threads) {
            line.push_str("; the most threads measured: more may still help");
        }
        out.push(line);
    }
    let top: Vec<String> = shares
        .iter()
        .take(3)
        .filter(|s| s.share_pct > 0.0)
        .map(|s| {
            format!(
                "{}–{} {:.0} %",
                human_bytes(s.lo_bytes),
                human_bytes(s.hi_bytes),
                s.share_pct
            )
        })
        .collect();
    if !top.is_empty() {
        out.push(format!(
            "where the time goes (fastest option): {}",
            top.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_squares_weights_recover_a_line() {
        // t = 0.01 + 2e-9·b exactly at three sizes.
        let sizes = [1e4, 3e5, 3e6];
        let t: Vec<f64> = sizes.iter().map(|b| 0.01 + 2e-9 * b).collect();
        let (al, ga) = weights(&sizes);
        let a: f64 = al.iter().zip(&t).map(|(w, t)| w * t).sum();
        let c: f64 = ga.iter().zip(&t).map(|(w, t)| w * t).sum();
        assert!(
            (a - 0.01).abs() < 1e-12 && (c - 2e-9).abs() < 1e-18,
            "{a} {c}"
        );
        let (al, ga) = weights(&[5.0]);
        assert_eq!((al, ga), (vec![1.0], vec![0.0]));
    }
}
