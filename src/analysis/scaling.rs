//! Statistics that turn cells into answers: relative cost of an access method against a
//! baseline with a Welch t interval, peak / knee / degradation of docs/sec vs threads, and
//! a Universal Scalability Law fit. Pure functions on numbers; no I/O.

use serde::{Deserialize, Serialize};

pub use crate::analysis::stats::{mean_var, relative_pct, t975};

/// Peak, knee and degradation of a docs/sec-vs-threads curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    pub peak_docs_per_sec: f64,
    pub peak_threads: u64,
    /// Smallest thread count reaching 90 % of the peak.
    pub knee_threads: u64,
    /// Set when some larger thread count is more than 5 % below the peak: beyond
    /// `peak_threads`, adding threads makes things worse.
    pub degrades_after_threads: Option<u64>,
    /// The worst rate measured above the peak's thread count, when it degrades.
    pub degraded_docs_per_sec: Option<f64>,
}

/// `points` = (threads, docs/sec), any order.
pub fn scaling(points: &[(u64, f64)]) -> Option<Scaling> {
    let mut p: Vec<(u64, f64)> = points.to_vec();
    p.sort_by_key(|x| x.0);
    let &(peak_threads, peak) = p.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let knee = p
        .iter()
        .find(|x| x.1 >= 0.9 * peak)
        .map_or(peak_threads, |x| x.0);
    let worst_after = p
        .iter()
        .filter(|x| x.0 > peak_threads)
        .map(|x| x.1)
        .fold(f64::INFINITY, f64::min);
    let degrades = worst_after.is_finite() && worst_after < 0.95 * peak;
    Some(Scaling {
        peak_docs_per_sec: peak,
        peak_threads,
        knee_threads: knee,
        degrades_after_threads: degrades.then_some(peak_threads),
        degraded_docs_per_sec: degrades.then_some(worst_after),
    })
}

/// Universal Scalability Law: X(N) = λN / (1 + σ(N−1) + κN(N−1)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usl {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
    pub r_squared: f64,
    /// √((1−σ)/κ), where the model peaks; absent when κ = 0 (no retrograde region).
    pub peak_concurrency: Option<f64>,
    pub peak_docs_per_sec: Option<f64>,
}

impl Usl {
    pub fn predict(&self, n: f64) -> f64 {
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }
}

/// For a fixed λ, least squares of N·λ/X − 1 = σ(N−1) + κN(N−1) with σ, κ ≥ 0.
fn fit_given_lambda(p: &[(f64, f64)], lambda: f64) -> (f64, f64) {
    let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, x) in p {
        let y = n * lambda / x - 1.0;
        let u = n - 1.0;
        let v = n * (n - 1.0);
        a11 += u * u;
        a12 += u * v;
        a22 += v * v;
        b1 += u * y;
        b2 += v * y;
    }
    let det = a11 * a22 - a12 * a12;
    let (mut s, mut k) = if det.abs() > 1e-12 {
        ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det)
    } else {
        (0.0, 0.0)
    };
    if s < 0.0 || k < 0.0 {
        // Constrained: one of them at 0, the other by simple regression.
        let s_only = if a11 > 0.0 { (b1 / a11).max(0.0) } else { 0.0 };
        let k_only = if a22 > 0.0 { (b2 / a22).max(0.0) } else { 0.0 };
        let sse = |s: f64, k: f64| {
            p.iter()
                .map(|&(n, x)| (x - lambda * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))).powi(2))
                .sum::<f64>()
        };
        (s, k) = if sse(s_only, 0.0) <= sse(0.0, k_only) {
            (s_only, 0.0)
        } else {
            (0.0, k_only)
        };
    }
    (s, k)
}

/// Fits the USL to (threads, docs/sec) points; needs at least 3 distinct thread counts.
pub fn fit_usl(points: &[(u64, f64)]) -> Option<Usl> {
    let p: Vec<(f64, f64)> = points
        .iter()
        .filter(|x| x.1 > 0.0)
        .map(|&(n, x)| (n as f64, x))
        .collect();
    let mut distinct: Vec<u64> = points.iter().map(|x| x.0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 3 || p.len() < 3 {
        return None;
    }
    let sse = |l: f64| {
        let (s, k) = fit_given_lambda(&p, l);
        p.iter()
            .map(|&(n, x)| (x - l * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))).powi(2))
            .sum::<f64>()
    };
    // λ lies between the best per-thread rate seen and a few times it; golden-section search
    // on the squared error in X space, after a coarse scan to find the right valley.
    let base = p.iter().map(|&(n, x)| x / n).fold(0.0, f64::max);
    let (mut lo, mut hi) = (base * 0.5, base * 4.0);
    let steps = 200;
    let mut best = (f64::INFINITY, lo);
    for i in 0..=steps {
        let l = lo + (hi - lo) * i as f64 / steps as f64;
        let e = sse(l);
        if e < best.0 {
            best = (e, l);
        }
    }
    let step = (hi - lo) / steps as f64;
    lo = (best.1 - step).max(1e-12);
    hi = best.1 + step;
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let a = hi - g * (hi - lo);
        let b = lo + g * (hi - lo);
        if sse(a) < sse(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    let lambda = (lo + hi) / 2.0;
    let (sigma, kappa) = fit_given_lambda(&p, lambda);
    let mean = p.iter().map(|x| x.1).sum::<f64>() / p.len() as f64;
    let ss_tot: f64 = p.iter().map(|x| (x.1 - mean).powi(2)).sum();
    let r_squared = if ss_tot > 0.0 {
        1.0 - sse(lambda) / ss_tot
    } else {
        1.0
    };
    let mut usl = Usl {
        lambda,
        sigma,
        kappa,
        r_squared,
        peak_concurrency: None,
        peak_docs_per_sec: None,
    };
    if kappa > 0.0 && sigma < 1.0 {
        let n = ((1.0 - sigma) / kappa).sqrt();
        usl.peak_concurrency = Some(n);
        usl.peak_docs_per_sec = Some(usl.predict(n));
    }
    Some(usl)
}

/// Throughput drift within runs: the rate over the last 30 % of each run's documents against
/// the rate over its first 30 %, as a geometric mean over the runs with a 95 % interval (a
/// t interval on the log ratios). `significant` when the interval excludes 1.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Drift {
    /// End rate / start rate (1 = steady; 0.8 = the end ran 20 % slower).
    pub end_vs_start: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub runs: u32,
    pub significant: bool,
}

impl Drift {
    /// From each run's completion times at 10 %, …, 100 % (runs without them are skipped);
    /// `None` with fewer than 2 such runs.
    pub fn of_runs<'a>(progress: impl Iterator<Item = &'a [f64]>) -> Option<Drift> {
        let logs: Vec<f64> = progress
            .filter(|p| p.len() == 10)
            .filter_map(|p| {
                let start = 3.0 / p[2];
                let end = 3.0 / (p[9] - p[6]);
                (start.is_finite() && end.is_finite() && start > 0.0 && end > 0.0)
                    .then(|| (end / start).ln())
            })
            .collect();
        if logs.len() < 2 {
            return None;
        }
        let (m, v) = mean_var(&logs);
        let half = t975(logs.len() as f64 - 1.0) * (v / logs.len() as f64).sqrt();
        let r = |x: f64| (x.exp() * 1000.0).round() / 1000.0;
        Some(Drift {
            end_vs_start: r(m),
            ci95_low: r(m - half),
            ci95_high: r(m + half),
            runs: logs.len() as u32,
            significant: m - half > 0.0 || m + half < 0.0,
        })
    }

    /// "throughput fell to 0.85× by the end of the runs (95 %: 0.80–0.90)", or that it held.
    pub fn text(&self) -> String {
        let range = format!("95 %: {:.2}–{:.2}", self.ci95_low, self.ci95_high);
        if !self.significant {
            return format!(
                "no significant drift within runs ({:.2}× end vs start, {range})",
                self.end_vs_start
            );
        }
        let word = if self.end_vs_start < 1.0 {
            "fell"
        } else {
            "rose"
        };
        format!(
            "throughput {word} to {:.2}× by the end of the runs ({range}, {} runs)",
            self.end_vs_start, self.runs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_significant_only_when_it_is() {
        // Steady: 10 % every second.
        let steady: Vec<f64> = (1..=10).map(f64::from).collect();
        // Slowing: the last 30 % take twice as long as the first 30 %.
        let slow = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0, 11.0, 13.0];
        let slow2 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.1, 11.0, 12.9];
        let d = Drift::of_runs([&steady[..], &steady[..], &steady[..]].into_iter()).unwrap();
        assert!(!d.significant && (d.end_vs_start - 1.0).abs() < 1e-9);
        let d = Drift::of_runs([&slow[..], &slow2[..], &slow[..]].into_iter()).unwrap();
        assert!(
            d.significant && (d.end_vs_start - 0.5).abs() < 0.01,
            "{d:?}"
        );
        assert!(d.text().contains("fell to 0.50"));
        assert!(
            Drift::of_runs([&slow[..]].into_iter()).is_none(),
            "one run: no test"
        );
    }

    const THREADS: [u64; 17] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 30, 50, 70, 90, 100];

    #[test]
    fn usl_recovers_a_known_curve() {
        let truth = Usl {
            lambda: 120.0,
            sigma: 0.05,
            kappa: 0.0008,
            r_squared: 1.0,
            peak_concurrency: None,
            peak_docs_per_sec: None,
        };
        // ±2 % deterministic "noise" so the fit is not handed exact data.
        let pts: Vec<(u64, f64)> = THREADS
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                (
                    n,
                    truth.predict(n as f64) * (1.0 + 0.02 * ((i as f64 * 2.3).sin())),
                )
            })
            .collect();
        let fit = fit_usl(&pts).unwrap();
        assert!((fit.sigma - 0.05).abs() / 0.05 < 0.10, "{fit:?}");
        assert!((fit.kappa - 0.0008).abs() / 0.0008 < 0.10, "{fit:?}");
        assert!((fit.lambda - 120.0).abs() / 120.0 < 0.05, "{fit:?}");
        assert!(fit.r_squared > 0.98);
        let exact = fit_usl(
            &THREADS
                .iter()
                .map(|&n| (n, truth.predict(n as f64)))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(
            (exact.sigma - 0.05).abs() < 1e-3 && (exact.kappa - 0.0008).abs() < 1e-5,
            "{exact:?}"
        );
        assert!((exact.peak_concurrency.unwrap() - ((1.0f64 - 0.05) / 0.0008).sqrt()).abs() < 0.5);
    }

    #[test]
    fn usl_linear_and_too_few_points() {
        let lin: Vec<(u64, f64)> = [1, 2, 4, 8].iter().map(|&n| (n, 50.0 * n as f64)).collect();
        let f = fit_usl(&lin).unwrap();
        assert!(
            f.sigma < 1e-6 && f.kappa < 1e-9 && f.peak_concurrency.is_none(),
            "{f:?}"
        );
        assert!(fit_usl(&[(1, 1.0), (2, 2.0)]).is_none());
    }

    #[test]
    fn peak_knee_and_degradation() {
        let s = scaling(&[
            (1, 100.0),
            (2, 190.0),
            (4, 370.0),
            (8, 400.0),
            (16, 380.0),
            (32, 300.0),
        ])
        .unwrap();
        assert_eq!(
            (s.peak_threads, s.knee_threads, s.degrades_after_threads),
            (8, 4, Some(8))
        );
        assert_eq!(s.degraded_docs_per_sec, Some(300.0));
        let flat = scaling(&[(1, 100.0), (2, 200.0), (4, 395.0), (8, 400.0), (16, 398.0)]).unwrap();
        assert_eq!((flat.knee_threads, flat.degrades_after_threads), (4, None));
    }

    #[test]
    fn welch_relative_difference() {
        let (d, h) = relative_pct(&[88.0, 90.0, 86.0], &[100.0, 101.0, 99.0]).unwrap();
        assert!((d - -12.0).abs() < 1e-9, "{d}");
        // s1 = 2, s2 = 1, n = 3: se = sqrt(4/3 + 1/3) = 1.291; df = 2.94 -> t ≈ 3.25.
        assert!((h - 4.19).abs() < 0.02, "{h}");
        assert_eq!(relative_pct(&[1.0], &[]), None);
        assert!((t975(2.0) - 4.303).abs() < 1e-9 && t975(1000.0) < 1.97);
    }
}
