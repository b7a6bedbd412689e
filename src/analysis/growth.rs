//! How a document's cost grows with what the repository already holds, measured from the
//! sweep's own runs, and what that does to a whole import.
//!
//! **Evidence.** A sweep fills the repository as it goes: its runs, in the order they
//! started, each upload into a repository holding everything uploaded before them (measured
//! and warm-up documents). Interleaving spreads every cell's runs over the whole sweep, so
//! each cell sees several fill levels. Each run gives eight steady windows (between its
//! 10 % and 90 % marks, a tenth of its documents each), placed at the documents stored at
//! their midpoint, with their wall-clock cost per document `t`: the sample as a continuous
//! stream. (Runs without their ten marks give one observation each, at their midpoint.) An
//! option (method, connection policy, thread count) is fitted from its own cells (one per
//! size), since its parallelism sets how a server's extra work per document shows in
//! wall-clock time.
//!
//! **Model.** `t(b, S) = t̄(b) + γ·(S − S̄_cell)`: every document costs γ seconds more per
//! document already stored, whatever its size (index and folder growth are per document). γ
//! is the pooled within-cell least-squares slope of `t − t̄_cell` on `S − S̄_cell`, each
//! cell weighted by the inverse of its scatter; its standard error is clustered by run (a
//! run's windows share its moment) with the runs' degrees of freedom (runs − cells − 1). The model is **linear** when γ is positive and
//! |γ| > √2·se (Akaike's criterion: the model with γ predicts better), **flat** otherwise; a
//! fall as large is a server still warming up, not a repository shrinking: modelled at the
//! level the sample ended at, never extrapolated further. Either way the interval carries γ's
//! uncertainty: a flat model is a claim the sample could not rule growth in, not that there
//! is none.
//!
//! **Import.** Over an import of N documents into a repository holding `S₀` more than when
//! it was measured, the mean fill is `S₀ + N/2`, so the duration is the measured one plus
//! `N·γ·L` with lever `L = S₀ + N/2 − S̄` (`S̄` the sample's mean fill). Assumed: growth is
//! linear beyond the fill levels measured; the lever says how far that is extrapolated, and
//! the estimate says when the import fills beyond what the sample saw.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::stats::t975;
use crate::results::CellRun;

/// One run as evidence: the fill level at its midpoint and its cost relative to its cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GrowthPoint {
    /// Documents stored in the repository (since the sweep began) at the run's midpoint.
    pub stored_docs: f64,
    /// The run's cost per document relative to its cell's mean (1.0 = the mean).
    pub relative_cost: f64,
    /// The run's docs/sec.
    pub docs_per_sec: f64,
    /// The cell's tag (method_connection_size_tN).
    pub cell: String,
}

/// The growth fitted to a sweep's runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Growth {
    /// `flat` or `linear`: the model the evidence supports.
    pub model: String,
    /// γ: seconds more per document for every document stored, and its standard error.
    pub s_per_doc_per_doc: f64,
    pub se_s_per_doc_per_doc: f64,
    /// The same relative to the option's mean cost per document, per 1,000 documents stored
    /// (0.05 = 5 % slower for every 1,000 more documents), for people.
    pub per_1000_docs: f64,
    pub se_per_1000_docs: f64,
    /// Degrees of freedom of the fit (runs − cells − 1).
    pub df: f64,
    /// The fill levels the sample covered (run midpoints), and their mean `S̄`.
    pub stored_min: f64,
    pub stored_max: f64,
    pub stored_mean: f64,
    /// The cost fell through the sample (by the same criterion as growth): a server still
    /// warming up; the estimate takes the level the sample ended at.
    #[serde(default)]
    pub warming: bool,
    /// Why this model: the test and its numbers, in words.
    pub evidence: String,
    /// Every run as evidence (for the chart).
    pub points: Vec<GrowthPoint>,
}

impl Growth {
    /// What a document of an import with lever `lever` costs more (s) than the sample's mean:
    /// γ·lever when linear; when the cost fell (a server still warming up through the sample)
    /// the level the sample ended at, γ·(last fill − mean fill), never extrapolated further
    /// (a warming server levels off); nothing when flat.
    pub fn shift(&self, lever: f64) -> f64 {
        match self.model.as_str() {
            "linear" => self.s_per_doc_per_doc * lever,
            _ if self.warming => {
                self.s_per_doc_per_doc * (self.stored_max - self.stored_mean).min(lever.max(0.0))
            }
            _ => 0.0,
        }
    }

    /// The standard error of γ.
    pub fn se(&self) -> f64 {
        self.se_s_per_doc_per_doc
    }

    /// The lever of an import of `n` documents into a repository holding `existing` more
    /// than when the sample was measured: its mean fill minus the sample's.
    pub fn lever(&self, n: f64, existing: f64) -> f64 {
        existing + n / 2.0 - self.stored_mean
    }

    /// When the model is flat for want of evidence: how much larger the sample must be to
    /// tell a growth that would lengthen an import with lever `lever` by 10 %, for an option
    /// whose mean cost per document is `t_doc` seconds.
    pub fn resolving_factor(&self, lever: f64, t_doc: f64) -> Option<f64> {
        if self.model == "linear" || lever.abs() < 1.0 {
            return None;
        }
        let g10 = 0.1 * t_doc / lever.abs();
        let need = t975(self.df) * self.se();
        // se falls as 1/(span·√runs): scaling each run's documents by m scales the span by m.
        (need > g10).then(|| need / g10)
    }
}

/// A sweep's runs in the order they started, each with the fill level at its midpoint and
/// its cost per document (runs without a start time or rate are left out).
pub fn place(runs: &[CellRun]) -> Vec<(&CellRun, f64, f64)> {
    let mut order: Vec<&CellRun> = runs
        .iter()
        .filter(|r| r.record.started_unix_ms > 0)
        .collect();
    order.sort_by_key(|r| r.record.started_unix_ms);
    let mut stored = 0.0;
    let mut placed = Vec::new();
    for r in order {
        let rec = &r.record;
        stored += rec.warmup_docs as f64;
        let mid = stored + rec.docs_ok as f64 / 2.0;
        stored += (rec.docs_ok + rec.docs_after_window + rec.docs_failed) as f64;
        if rec.docs_per_sec > 0.0 {
            placed.push((r, mid, 1.0 / rec.docs_per_sec));
        }
    }
    placed
}

/// A run's cost per document in each of its steady windows (between its 10 % and 90 %
/// marks, one tenth of its documents each), placed at the window's fill level: the sample as
/// a continuous stream, eight observations where the run alone is one. `None` for a run without
/// its ten marks (steady-state runs, too few documents).
fn windows(r: &CellRun, mid: f64) -> Option<Vec<(f64, f64)>> {
    let rec = &r.record;
    let p = &rec.progress_s;
    if p.len() != 10 || rec.window_s.is_some() || rec.docs_ok < 20 {
        return None;
    }
    let n = rec.docs_ok as f64;
    let start = mid - n / 2.0;
    let w: Vec<(f64, f64)> = (1..9)
        .filter(|&i| p[i] > p[i - 1])
        .map(|i| {
            (
                start + n * (i as f64 + 0.5) / 10.0,
                (p[i] - p[i - 1]) / (n / 10.0),
            )
        })
        .collect();
    (w.len() >= 4).then_some(w)
}

/// Fits the growth of one option to its placed runs (fewer than 2 runs in any cell, or no
/// spread in fill levels: `None`). The evidence is every run's steady windows when all runs
/// have them, each run alone otherwise. Windows of one run share its moment (a collection
/// pause, a neighbour's burst), so γ's standard error is clustered by run and its degrees of
/// freedom are those of the runs (runs − cells − 1), never of the windows.
pub fn fit(placed: &[(&CellRun, f64, f64)]) -> Option<Growth> {
    let (cells, use_windows) = observations(placed);
    let centred = centre(&cells);
    let (k, nobs, tsum) = (centred.k, centred.nobs, centred.tsum);
    let mut sxx = 0.0;
    let mut sxy = 0.0;
    let mut weights: Vec<f64> = centred.cells.iter().map(|c| scatter(c)).collect();
    weights = if use_windows && weights.iter().all(|v| *v > 0.0 && v.is_finite()) {
        weights.iter().map(|v| 1.0 / v).collect()
    } else {
        vec![1.0; weights.len()]
    };
    let mut obs = Vec::new();
    for (c, w) in centred.cells.iter().zip(&weights) {
        for &(run, x, y) in c {
            sxx += w * x * x;
            sxy += w * x * y;
            obs.push((run, *w, x, y));
        }
    }
    let g_runs = centred.runs;
    if k == 0 || sxx <= 0.0 || g_runs < k + 2 {
        return None;
    }
    let gamma = sxy / sxx;
    let df = (g_runs - k - 1) as f64;
    let se = slope_se(&obs, gamma, sxx, df, use_windows);
    let t_doc = tsum / nobs as f64;
    let points = run_points(placed);
    let all: Vec<f64> = placed.iter().map(|p| p.1).collect();
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0, f64::max);
    let t = t975(df);
    let (rel, rel_ci) = (gamma / t_doc * 1e5, t * se / t_doc * 1e5);
    // The model that predicts better: γ joins it when it lowers the expected prediction
    // error, i.e. by Akaike's criterion for one parameter, |γ| > √2·se (a 95 % test would
    // keep a real but noisy growth out, and an import extrapolates exactly that).
    let significant = gamma.abs() > std::f64::consts::SQRT_2 * se;
    let over = if use_windows {
        format!("{nobs} steady windows of {g_runs} runs")
    } else {
        format!("{g_runs} runs")
    };
    let (model, evidence) = match (significant, gamma > 0.0) {
        (true, true) => (
            "linear",
            format!(
                "cost grows {rel:+.2} % per 1,000 documents stored (± {rel_ci:.2} %, 95 %), significant over {over} at {lo:.0}–{hi:.0} documents stored"
            ),
        ),
        (true, false) => (
            "flat",
            format!(
                "cost fell {:.2} % per 1,000 documents stored (± {rel_ci:.2} %): a server still warming up rather than a repository that speeds up as it fills; modelled flat at the level the sample ended at (warm it longer: --warmup)",
                -rel
            ),
        ),
        (false, _) => (
            "flat",
            format!(
                "no significant growth over {over} at {lo:.0}–{hi:.0} documents stored ({rel:+.2} % per 1,000 documents, ± {rel_ci:.2} %)"
            ),
        ),
    };
    Some(Growth {
        model: model.into(),
        s_per_doc_per_doc: gamma,
        se_s_per_doc_per_doc: se,
        per_1000_docs: round(gamma / t_doc * 1000.0, 6),
        se_per_1000_docs: round(se / t_doc * 1000.0, 6),
        df,
        warming: significant && gamma < 0.0,
        stored_min: lo,
        stored_max: hi,
        stored_mean: round(mean, 1),
        evidence,
        points,
    })
}

/// Per cell (by its tag): (index of the run in `placed`, fill, cost) for every observation.
type Cells = BTreeMap<String, Vec<(usize, f64, f64)>>;

/// Observations of one option by cell: (index of the run in `placed`, fill, cost), every
/// run's steady windows when all runs have them (the second value `true`), else each run
/// alone.
fn observations(placed: &[(&CellRun, f64, f64)]) -> (Cells, bool) {
    let per_run: Vec<Option<Vec<(f64, f64)>>> =
        placed.iter().map(|(r, s, _)| windows(r, *s)).collect();
    let use_windows = per_run.iter().all(Option::is_some);
    // Per cell: (index of the run in `placed`, fill, cost) for every observation.
    let mut cells: Cells = Default::default();
    for (i, (r, s, t)) in placed.iter().enumerate() {
        let e = cells.entry(r.cell.tag()).or_default();
        match (&per_run[i], use_windows) {
            (Some(w), true) => e.extend(w.iter().map(|(s, t)| (i, *s, *t))),
            _ => e.push((i, *s, *t)),
        }
    }
    (cells, use_windows)
}

/// The cells with runs enough (2 or more), their observations centred on the cell's means.
struct Centred {
    cells: Vec<Vec<(usize, f64, f64)>>,
    /// Cells kept, observations in them, the sum of their costs, and the runs behind them.
    k: usize,
    nobs: usize,
    tsum: f64,
    runs: usize,
}

fn centre(cells: &Cells) -> Centred {
    let mut tsum = 0.0;
    let (mut k, mut nobs) = (0usize, 0usize);
    let mut runs_used = std::collections::BTreeSet::new();
    let mut centred_cells = Vec::new();
    for v in cells.values() {
        let runs: std::collections::BTreeSet<usize> = v.iter().map(|o| o.0).collect();
        if runs.len() < 2 {
            continue;
        }
        k += 1;
        runs_used.extend(runs);
        let m = v.len() as f64;
        let sm = v.iter().map(|o| o.1).sum::<f64>() / m;
        let tm = v.iter().map(|o| o.2).sum::<f64>() / m;
        tsum += v.iter().map(|o| o.2).sum::<f64>();
        nobs += v.len();
        centred_cells.push(
            v.iter()
                .map(|(run, s, t)| (*run, s - sm, t - tm))
                .collect::<Vec<_>>(),
        );
    }
    Centred {
        cells: centred_cells,
        k,
        nobs,
        tsum,
        runs: runs_used.len(),
    }
}

/// γ's standard error over the weighted observations `(run, weight, x, y)`: clustered by run
/// over windows, from the residuals over whole runs.
fn slope_se(
    obs: &[(usize, f64, f64, f64)],
    gamma: f64,
    sxx: f64,
    df: f64,
    use_windows: bool,
) -> f64 {
    if use_windows {
        // Cluster-robust (by run) sandwich variance, small-sample corrected.
        let mut score: BTreeMap<usize, f64> = Default::default();
        for (run, w, x, y) in obs {
            *score.entry(*run).or_default() += w * x * (y - gamma * x);
        }
        let g = score.len() as f64;
        let meat: f64 = score.values().map(|u| u * u).sum();
        (meat * g / (g - 1.0)).sqrt() / sxx
    } else {
        let rss: f64 = obs
            .iter()
            .map(|(_, w, x, y)| w * (y - gamma * x).powi(2))
            .sum();
        (rss / df / sxx).sqrt()
    }
}

/// A cell's scatter about its own line: the inverse is the weight of its evidence for γ.
/// γ is seconds per document whatever the size, but a large document's cost scatters by
/// more seconds than a small one's (a collection pause, a slow disk write scale with it):
/// unweighted, the large cell's noise swamped the small cells' clear slope (on the real
/// OpenCMIS server, growth called flat that the import then showed). Weighted least squares
/// with each cell's residual variance is the efficient estimate under the model; the
/// clustered standard error stays valid with estimated weights. Only with the runs' windows
/// (a run alone gives a cell three points, too few to weigh it by); a cell without scatter,
/// as in exact synthetic data, leaves every cell unweighted.
fn scatter(centred: &[(usize, f64, f64)]) -> f64 {
    let sxx: f64 = centred.iter().map(|o| o.1 * o.1).sum();
    let sxy: f64 = centred.iter().map(|o| o.1 * o.2).sum();
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let m = centred.len() as f64;
    centred.iter().map(|o| (o.2 - b * o.1).powi(2)).sum::<f64>() / (m - 2.0).max(1.0)
}

/// Every run as evidence for the chart: its fill level and its cost relative to its cell.
fn run_points(placed: &[(&CellRun, f64, f64)]) -> Vec<GrowthPoint> {
    let mut cells: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for (r, s, t) in placed {
        cells.entry(r.cell.tag()).or_default().push((*s, *t));
    }
    let mut points: Vec<GrowthPoint> = cells
        .iter()
        .filter(|(_, v)| v.len() >= 2)
        .flat_map(|(tag, v)| {
            let tm = v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64;
            v.iter().map(move |(s, t)| GrowthPoint {
                stored_docs: *s,
                relative_cost: round(t / tm, 4),
                docs_per_sec: round(1.0 / t, 3),
                cell: tag.clone(),
            })
        })
        .collect();
    points.sort_by(|a, b| a.stored_docs.total_cmp(&b.stored_docs));
    points
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CellKey, CellRun};

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
                rate_per_s: None,
            },
            record: serde_json::from_value(rec).unwrap(),
            latency_histogram_us: String::new(),
            client_cpu_s: 0.0,
        }
    }

    /// The k-th run of the sweep, of size class `cell` (0 small, 1 average, 2 large), with
    /// its ten progress marks (its duration the last).
    fn windowed(k: usize, cell: usize, docs: u64, marks: Vec<f64>) -> CellRun {
        let at = *marks.last().expect("ten marks");
        let mut r = run(1, 1000 + k as i64, docs, docs as f64 / at);
        r.cell.size = [
            crate::fixtures::SizeClass::Small,
            crate::fixtures::SizeClass::Average,
            crate::fixtures::SizeClass::Large,
        ][cell];
        r.record.progress_s = marks;
        r
    }

    /// Three cells of 3 runs each whose runs record their ten progress marks, on a
    /// repository whose cost grows 20 % per 1,000 documents, with one run's windows all
    /// disturbed together (a pause): the windows find the growth more precisely than the 9
    /// runs alone, and the clustered standard error keeps the runs' degrees of freedom.
    #[test]
    fn windows_of_the_runs_measure_growth_closer_than_the_runs_alone() {
        let base = [1.0e-3, 1.2e-3, 3.0e-3];
        let g = 0.2 / 1000.0 * 1.0e-3;
        let (mut runs, mut stored) = (Vec::new(), 1000.0);
        for k in 0..9 {
            let cell = k % 3;
            let docs = 450u64;
            let pause = if k == 4 { 1.15 } else { 1.0 };
            let jitter = 1.0 + 0.06 * (((k * 5) % 7) as f64 - 3.0) / 3.0;
            let (mut at, mut marks) = (0.0, Vec::new());
            for i in 0..10 {
                let s = stored + docs as f64 * (i as f64 + 0.5) / 10.0;
                at += (base[cell] + g * s) * jitter * pause * docs as f64 / 10.0;
                marks.push(at);
            }
            runs.push(windowed(k, cell, docs, marks));
            stored += docs as f64;
        }
        let f = fit(&place(&runs)).unwrap();
        assert_eq!(f.model, "linear", "{}", f.evidence);
        assert!(f.evidence.contains("windows of 9 runs"), "{}", f.evidence);
        assert_eq!(f.df, 5.0);
        assert!(
            (f.s_per_doc_per_doc - g).abs() < 0.2 * g,
            "{} vs {g}",
            f.s_per_doc_per_doc
        );
        assert_eq!(f.points.len(), 9, "the chart keeps one point per run");
        for r in &mut runs {
            r.record.progress_s.clear();
        }
        let alone = fit(&place(&runs)).unwrap();
        assert!(alone.evidence.contains("over 9 runs"), "{}", alone.evidence);
        assert!(
            f.se_s_per_doc_per_doc < alone.se_s_per_doc_per_doc,
            "windows {f:?} vs runs alone {alone:?}"
        );
    }

    /// Growth is seconds per document whatever the size, but a large document's cost
    /// scatters by far more seconds: weighted by each cell's scatter, the small cells' clear
    /// slope is not swamped by the large cell's noise (unweighted, it was).
    #[test]
    fn a_noisy_large_cell_does_not_swamp_the_growth() {
        let base = [0.5e-3, 1.0e-3, 8.0e-3];
        let g = 0.05e-3 / 1000.0;
        let (mut runs, mut stored) = (Vec::new(), 2000.0);
        let mut seed = 7u64;
        let mut unweighted = (0.0, 0.0);
        let mut by_cell: [Vec<(f64, f64)>; 3] = Default::default();
        for k in 0..9 {
            let cell = k % 3;
            let docs = 450u64;
            let (mut at, mut marks) = (0.0, Vec::new());
            for i in 0..10 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5;
                let noise = if cell == 2 { 0.6 * u } else { 0.02 * u };
                let s = stored + docs as f64 * (i as f64 + 0.5) / 10.0;
                let t = (base[cell] + g * s) * (1.0 + noise);
                at += t * docs as f64 / 10.0;
                marks.push(at);
                if (1..9).contains(&i) {
                    by_cell[cell].push((s, t));
                }
            }
            runs.push(windowed(k, cell, docs, marks));
            stored += docs as f64;
        }
        for v in &by_cell {
            let m = v.len() as f64;
            let (sm, tm) = (
                v.iter().map(|o| o.0).sum::<f64>() / m,
                v.iter().map(|o| o.1).sum::<f64>() / m,
            );
            for (s, t) in v {
                unweighted.0 += (s - sm) * (t - tm);
                unweighted.1 += (s - sm).powi(2);
            }
        }
        let unweighted = unweighted.0 / unweighted.1;
        let f = fit(&place(&runs)).unwrap();
        let err = (f.s_per_doc_per_doc - g).abs() / g;
        assert!(err < 0.1, "{} vs {g}: {f:?}", f.s_per_doc_per_doc);
        assert!(
            err < (unweighted - g).abs() / g,
            "weighted {} closer than unweighted {unweighted} to {g}",
            f.s_per_doc_per_doc
        );
        assert_eq!(f.model, "linear", "{}", f.evidence);
    }

    /// A cost that falls through the sample is a warming server: flat, estimated at the level
    /// the sample ended at (never extrapolated below it); growth moves the import by γ·lever.
    #[test]
    fn a_warming_server_is_taken_at_the_level_it_ended_at() {
        let mut runs = Vec::new();
        for k in 0..12 {
            let (threads, base) = if k % 2 == 0 { (2, 100.0) } else { (4, 180.0) };
            // 1 % cheaper per run, for both cells.
            let rate = base * (1.0 + 0.01 * k as f64);
            runs.push(run(threads, 1000 + k as i64, 500, rate));
        }
        let f = fit(&place(&runs)).unwrap();
        assert!(f.warming && f.model == "flat", "{f:?}");
        let end = f.s_per_doc_per_doc * (f.stored_max - f.stored_mean);
        assert!(end < 0.0);
        assert_eq!(
            f.shift(1e6),
            end,
            "never past the level the sample ended at"
        );
        assert_eq!(
            f.shift(-5.0),
            0.0,
            "an import below the sample's fill: no shift"
        );
        let linear = Growth {
            model: "linear".into(),
            warming: false,
            ..f
        };
        assert_eq!(linear.shift(2000.0), linear.s_per_doc_per_doc * 2000.0);
    }

    /// Two cells interleaved over 6 runs each, on a repository whose cost grows 5 % per
    /// 1,000 documents (of the first cell's cost, for both): the slope is recovered and called
    /// linear; with no growth, flat.
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
                let rate = 1.0 / ((1.0 / base + g / 100.0 * mid / 1000.0) * noise);
                runs.push(run(threads, 1000 + k as i64, 500, rate));
                stored += 500.0;
            }
            let f = fit(&place(&runs)).unwrap();
            assert_eq!(f.model, want, "{f:?}");
            let want = g / 100.0 / 1000.0;
            assert!(
                (f.s_per_doc_per_doc - want).abs() < 2e-7 + want * 0.25,
                "{} vs {want}: {f:?}",
                f.s_per_doc_per_doc
            );
        }
    }
}
