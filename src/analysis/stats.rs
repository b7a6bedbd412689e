//! Small statistics the engine and the reports share: Student's t quantile, mean and
//! variance, the precision of a set of runs (`--precision`), and the comparison of two cells
//! with its three-way verdict, paired when the runs were (`--budget` spends runs on the
//! comparisons it leaves open).
//! Pure functions.

use serde::{Deserialize, Serialize};

/// Two-sided 97.5 % quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// t(0.975, df), interpolated for fractional df (Welch), normal beyond 30.
pub fn t975(df: f64) -> f64 {
    if !df.is_finite() || df >= 30.0 {
        return if df.is_finite() {
            1.960 + 2.4 / df
        } else {
            1.960
        };
    }
    let df = df.max(1.0);
    let lo = df.floor() as usize;
    let frac = df - lo as f64;
    let a = T975[lo - 1];
    let b = if lo < 30 {
        T975[lo]
    } else {
        1.960 + 2.4 / 31.0
    };
    a + (b - a) * frac
}

/// Mean and sample variance (0 for a single value).
pub fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = if x.len() > 1 {
        x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, v)
}

/// Half-width of the 95 % t interval of the mean, as a fraction of the mean (`None` with
/// fewer than 2 values or a zero mean).
pub fn relative_ci95(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let (m, v) = mean_var(x);
    if m == 0.0 {
        return None;
    }
    Some(t975(x.len() as f64 - 1.0) * (v / x.len() as f64).sqrt() / m.abs())
}

/// Coefficient of variation σ / mean (0 for fewer than 2 values).
pub fn cv(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let (m, v) = mean_var(x);
    if m == 0.0 { 0.0 } else { v.sqrt() / m.abs() }
}

/// Difference of `sample` against `baseline` as a percentage of the baseline mean, with the
/// half-width of its 95 % Welch interval (also in % of the baseline mean). `None` when either
/// side has no data or the baseline mean is 0.
pub fn relative_pct(sample: &[f64], baseline: &[f64]) -> Option<(f64, f64)> {
    if sample.is_empty() || baseline.is_empty() {
        return None;
    }
    let (m1, v1) = mean_var(sample);
    let (m2, v2) = mean_var(baseline);
    if m2 == 0.0 {
        return None;
    }
    let (n1, n2) = (sample.len() as f64, baseline.len() as f64);
    let se2 = v1 / n1 + v2 / n2;
    let half = if se2 > 0.0 && n1 > 1.0 && n2 > 1.0 {
        let df = se2.powi(2) / ((v1 / n1).powi(2) / (n1 - 1.0) + (v2 / n2).powi(2) / (n2 - 1.0));
        t975(df) * se2.sqrt()
    } else {
        0.0
    };
    Some(((m1 - m2) / m2 * 100.0, half / m2 * 100.0))
}

/// Difference of `sample` against `baseline` from their runs of the same number (pairs),
/// as [`relative_pct`] states it: the mean log-ratio of the pairs with its 95 % t interval
/// (n − 1 degrees of freedom), turned back into % (the centre `e^m − 1`, the half-width half
/// the interval's width). `None` with fewer than 3 pairs or a non-positive rate.
///
/// Why pairs: the sweep runs a method and its baseline back to back (see
/// `plan::schedule::schedule`), so a slow minute of the machine falls on both runs of a pair
/// and cancels in their ratio, where between unpaired runs it is spread. Runs without a
/// partner (a baseline's extra runs for another comparison) are left out.
pub fn paired_relative_pct(
    sample: &[(u32, f64)],
    baseline: &[(u32, f64)],
) -> Option<(f64, f64, usize)> {
    let logs: Vec<f64> = sample
        .iter()
        .filter_map(|(run, x)| {
            let (_, b) = baseline.iter().find(|(r, _)| r == run)?;
            Some((*x, *b))
        })
        .map(|(x, b)| {
            if x > 0.0 && b > 0.0 {
                (x / b).ln()
            } else {
                f64::NAN
            }
        })
        .collect();
    if logs.len() < 3 || logs.iter().any(|l| !l.is_finite()) {
        return None;
    }
    let n = logs.len();
    let (m, v) = mean_var(&logs);
    let h = t975(n as f64 - 1.0) * (v / n as f64).sqrt();
    let half = ((m + h).exp() - (m - h).exp()) / 2.0;
    Some(((m.exp() - 1.0) * 100.0, half * 100.0, n))
}

/// A method's cell against its baseline's: `(difference %, 95 % half-width %, pairs)`,
/// paired ([`paired_relative_pct`], `pairs` > 0) when `paired` and 3 pairs or more exist,
/// else Welch ([`relative_pct`], `pairs` 0). Runs are `(run number, docs/sec)`.
pub fn compare_runs(
    sample: &[(u32, f64)],
    baseline: &[(u32, f64)],
    paired: bool,
) -> Option<(f64, f64, usize)> {
    if paired && let Some(p) = paired_relative_pct(sample, baseline) {
        return Some(p);
    }
    let values = |x: &[(u32, f64)]| x.iter().map(|r| r.1).collect::<Vec<f64>>();
    relative_pct(&values(sample), &values(baseline)).map(|(d, h)| (d, h, 0))
}

/// An interval half-width (in % of the baseline) up to which "no significant difference"
/// is a finding; past it the data cannot rule out a difference worth knowing about.
pub const DECISIVE_PCT: f64 = 5.0;

/// How a comparison reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Slower,
    Faster,
    /// The 95 % interval contains 0 and is narrow: no difference worth knowing about.
    NoDifference,
    /// The interval contains 0 but is wide: the runs cannot tell.
    TooNoisy,
}

/// The verdict on a difference `d` % with 95 % half-width `h` %.
pub fn verdict(d: f64, h: f64) -> Verdict {
    if h < d.abs() {
        if d < 0.0 {
            Verdict::Slower
        } else {
            Verdict::Faster
        }
    } else if h <= DECISIVE_PCT {
        Verdict::NoDifference
    } else {
        Verdict::TooNoisy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drift shared by both runs of each pair cancels in the paired interval, which the
    /// unpaired one cannot do; too few pairs fall back to Welch.
    #[test]
    fn pairs_cancel_a_drift_both_sides_share() {
        let drift = [1.0, 0.85, 1.1, 0.9, 1.05, 0.95];
        let base: Vec<(u32, f64)> = drift
            .iter()
            .enumerate()
            .map(|(i, d)| (i as u32 + 1, 1000.0 * d))
            .collect();
        let wobble = [1.0, 1.01, 0.99, 1.0, 1.01, 0.99];
        let sample: Vec<(u32, f64)> = base
            .iter()
            .zip(wobble)
            .map(|((r, b), w)| (*r, b * 0.95 * w))
            .collect();
        let (d, h, n) = compare_runs(&sample, &base, true).unwrap();
        assert_eq!(n, 6);
        assert!((d + 5.0).abs() < 0.5, "{d}");
        assert!(h < 1.5, "{h}");
        let (dw, hw, nw) = compare_runs(&sample, &base, false).unwrap();
        assert_eq!(nw, 0);
        assert!((dw + 5.0).abs() < 0.5 && hw > 5.0, "{dw} ± {hw}");
        assert_eq!(verdict(d, h), Verdict::Slower);
        assert_eq!(verdict(dw, hw), Verdict::TooNoisy);
        // Two pairs (the others' run numbers differ): Welch.
        let few = [(1, 950.0), (2, 800.0), (7, 1000.0)];
        assert_eq!(compare_runs(&few, &base, true).unwrap().2, 0);
    }

    #[test]
    fn precision_of_runs() {
        assert_eq!(relative_ci95(&[10.0]), None);
        // mean 10, s = 1, n = 3: 4.303 × 1/√3 / 10.
        let r = relative_ci95(&[9.0, 10.0, 11.0]).unwrap();
        assert!((r - 0.2484).abs() < 1e-3, "{r}");
        assert!((cv(&[9.0, 10.0, 11.0]) - 0.1).abs() < 1e-9);
    }
}
