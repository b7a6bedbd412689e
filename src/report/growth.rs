//! How a document's cost grows with what the repository already holds, measured from the
//! sweep's own runs, and what that does to a whole import.
//!
//! **Evidence.** A sweep fills the repository as it goes: its runs, in the order they
//! started, each upload into a repository holding everything uploaded before them (measured
//! and warm-up documents). Each run is placed at the fill level of its midpoint `S` (documents
//! stored before it, plus half its own) and gives a relative cost `y = t / t̄ − 1` against the
//! mean cost `t̄` of its own cell (so cells of different sizes and thread counts compare).
//! Interleaving spreads every cell's runs over the whole sweep, so each cell sees several
//! fill levels.
//!
//! **Model.** `t(S) = t̄ · (1 + γ·(S − S̄_cell))`: cost grows by the fraction γ per document
//! stored. γ is the pooled within-cell least-squares slope of `y` on `S − S̄_cell`, with its
//! standard error from the residuals (degrees of freedom: runs − cells − 1). The model is
//! **linear** when γ is positive and significant (|γ| > t₀.₉₇₅·se), **flat** otherwise; a
//! significant fall is flagged (a server still warming up, not a repository shrinking) and
//! modelled flat. Either way the interval carries γ's uncertainty: a flat model is a claim the
//! sample could not rule growth in, not that there is none.
//!
//! **Import.** Over an import of N documents into a repository holding `S₀` more than when
//! it was measured, the mean fill is `S₀ + N/2`, so the duration is the measured one scaled by
//! `1 + γ·L` with lever `L = S₀ + N/2 − S̄` (`S̄` the sample's mean fill). Assumed: growth is
//! linear beyond the fill levels measured; the lever says how far that is extrapolated.

use serde::{Deserialize, Serialize};

use crate::metrics::stats::t975;
use crate::records::CellRun;

/// One run as evidence: the fill level at its midpoint and its cost relative to its cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GrowthPoint {
    /// Documents stored in the repository (since the sweep began) at the run's midpoint.
    pub stored_docs: f64,
    /// The run's cost per document relative to its cell's mean (1.0 = the mean).
    pub relative_cost: f64,
    /// The cell's tag (method_connection_size_tN).
    pub cell: String,
}

/// The growth fitted to a sweep's runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Growth {
    /// `flat` or `linear`: the model the evidence supports.
    pub model: String,
    /// γ: relative cost increase per 1,000 documents stored, and its standard error.
    pub per_1000_docs: f64,
    pub se_per_1000_docs: f64,
    /// Degrees of freedom of the fit (runs − cells − 1).
    pub df: f64,
    /// The fill levels the sample covered (run midpoints), and their mean `S̄`.
    pub stored_min: f64,
    pub stored_max: f64,
    pub stored_mean: f64,
    /// Why this model: the test and its numbers, in words.
    pub evidence: String,
    /// Every run as evidence (for the chart).
    pub points: Vec<GrowthPoint>,
}

impl Growth {
    /// γ per document, as used by the model (0 when flat).
    pub fn gamma(&self) -> f64 {
        if self.model == "linear" {
            self.per_1000_docs / 1000.0
        } else {
            0.0
        }
    }

    /// The standard error of γ per document.
    pub fn se(&self) -> f64 {
        self.se_per_1000_docs / 1000.0
    }

    /// The lever of an import of `n` documents into a repository holding `existing` more
    /// than when the sample was measured: its mean fill minus the sample's.
    pub fn lever(&self, n: f64, existing: f64) -> f64 {
        existing + n / 2.0 - self.stored_mean
    }

    /// When the model is flat for want of evidence: how much larger the sample must be to
    /// tell a growth that would lengthen an import with lever `lever` by 10 %.
    pub fn resolving_factor(&self, lever: f64) -> Option<f64> {
        if self.model == "linear" || lever.abs() < 1.0 {
            return None;
        }
        let g10 = 0.1 / lever.abs();
        let need = t975(self.df) * self.se();
        // se falls as 1/(span·√runs): scaling each run's documents by m scales the span by m.
        (need > g10).then(|| need / g10)
    }
}

/// Fits the growth to a sweep's runs (fewer than 4 usable runs or 2 distinct fill levels per
/// cell: `None`).
pub fn fit(runs: &[CellRun]) -> Option<Growth> {
    let mut order: Vec<&CellRun> = runs
        .iter()
        .filter(|r| r.record.started_unix_ms > 0)
        .collect();
    if order.len() < 4 {
        return None;
    }
    order.sort_by_key(|r| r.record.started_unix_ms);
    // Fill level at each run's midpoint.
    let mut stored = 0.0;
    let mut placed: Vec<(&CellRun, f64, f64)> = Vec::new();
    for r in &order {
        let rec = &r.record;
        stored += rec.warmup_docs as f64;
        let mid = stored + rec.docs_ok as f64 / 2.0;
        stored += (rec.docs_ok + rec.docs_after_window + rec.docs_failed) as f64;
        if rec.docs_per_sec > 0.0 {
            placed.push((r, mid, 1.0 / rec.docs_per_sec));
        }
    }
    // Each cell's mean fill and mean cost.
    let mut cells: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for (r, s, t) in &placed {
        cells.entry(r.cell.tag()).or_default().push((*s, *t));
    }
    let (mut sxx, mut sxy, mut n, mut k) = (0.0, 0.0, 0usize, 0usize);
    let mut obs = Vec::new();
    let mut points = Vec::new();
    for (tag, v) in &cells {
        if v.len() < 2 {
            continue;
        }
        k += 1;
        let m = v.len() as f64;
        let (sm, tm) = (
            v.iter().map(|p| p.0).sum::<f64>() / m,
            v.iter().map(|p| p.1).sum::<f64>() / m,
        );
        for (s, t) in v {
            let (x, y) = (s - sm, t / tm - 1.0);
            sxx += x * x;
            sxy += x * y;
            n += 1;
            obs.push((x, y));
            points.push(GrowthPoint {
                stored_docs: *s,
                relative_cost: round(t / tm, 4),
                cell: tag.clone(),
            });
        }
    }
    if k == 0 || sxx <= 0.0 || n < k + 2 {
        return None;
    }
    let gamma = sxy / sxx;
    let df = (n - k - 1) as f64;
    let rss: f64 = obs.iter().map(|(x, y)| (y - gamma * x).powi(2)).sum();
    let se = (rss / df / sxx).sqrt();
    let all: Vec<f64> = placed.iter().map(|p| p.1).collect();
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0, f64::max);
    let t = t975(df);
    let significant = gamma.abs() > t * se;
    let (model, evidence) = match (significant, gamma > 0.0) {
        (true, true) => (
            "linear",
            format!(
                "cost grows {:+.2} % per 1,000 documents stored (± {:.2} %, 95 %), significant over {} runs at {:.0}–{:.0} documents stored",
                gamma * 1e5,
                t * se * 1e5,
                n,
                lo,
                hi
            ),
        ),
        (true, false) => (
            "flat",
            format!(
                "cost fell {:.2} % per 1,000 documents stored (± {:.2} %): a server still warming up rather than a repository that speeds up as it fills; modelled flat (warm it longer: --warmup)",
                -gamma * 1e5,
                t * se * 1e5
            ),
        ),
        (false, _) => (
            "flat",
            format!(
                "no significant growth over {n} runs at {lo:.0}–{hi:.0} documents stored ({:+.2} % per 1,000 documents, ± {:.2} %)",
                gamma * 1e5,
                t * se * 1e5
            ),
        ),
    };
    points.sort_by(|a, b| a.stored_docs.total_cmp(&b.stored_docs));
    Some(Growth {
        model: model.into(),
        per_1000_docs: round(gamma * 1000.0, 9),
        se_per_1000_docs: round(se * 1000.0, 9),
        df,
        stored_min: lo,
        stored_max: hi,
        stored_mean: round(mean, 1),
        evidence,
        points,
    })
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{CellKey, CellRun};

    fn run(threads: u64, start: i64, docs: u64, rate: f64) -> CellRun {
        let rec = serde_json::json!({
            "run": 1, "duration_s": docs as f64 / rate, "docs_ok": docs, "docs_failed": 0,
            "docs_per_sec": rate, "bytes_ok": 0, "mb_per_sec": 0.0,
            "latency_ms": {"min": 0.0, "mean": 0.0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0},
            "errors": [], "node_split": {}, "folder": "f", "started_unix_ms": start,
        });
        CellRun {
            cell: CellKey {
                method: "direct".into(),
                connection: crate::transport::ConnectionPolicy::Reuse,
                size: crate::fixtures::SizeClass::Small,
                threads,
            },
            record: serde_json::from_value(rec).unwrap(),
            latency_histogram_us: String::new(),
            client_cpu_s: 0.0,
        }
    }

    /// Two cells interleaved over 6 runs each, on a repository whose cost grows 5 % per
    /// 1,000 documents: the slope is recovered and called linear; with no growth, flat.
    #[test]
    fn recovers_a_known_growth_and_calls_flat_flat() {
        for (g, want) in [(0.05, "linear"), (0.0, "flat")] {
            let mut runs = Vec::new();
            let mut stored = 0.0;
            for k in 0..12 {
                let (threads, base) = if k % 2 == 0 { (2, 100.0) } else { (4, 180.0) };
                let mid = stored + 250.0;
                // A little deterministic noise (±1 %).
                let noise = 1.0 + 0.01 * ((k * 7 % 5) as f64 - 2.0) / 2.0;
                let rate = base / ((1.0 + g * mid / 1000.0) * noise);
                runs.push(run(threads, 1000 + k as i64, 500, rate));
                stored += 500.0;
            }
            let f = fit(&runs).unwrap();
            assert_eq!(f.model, want, "{f:?}");
            assert!(
                (f.per_1000_docs - g).abs() < 0.01 + g * 0.25,
                "{} vs {g}: {f:?}",
                f.per_1000_docs
            );
        }
    }
}
