//! Small statistics the engine and the reports share: Student's t quantile, mean and
//! variance, and the precision of a set of runs (`--precision`). Pure functions.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_of_runs() {
        assert_eq!(relative_ci95(&[10.0]), None);
        // mean 10, s = 1, n = 3: 4.303 × 1/√3 / 10.
        let r = relative_ci95(&[9.0, 10.0, 11.0]).unwrap();
        assert!((r - 0.2484).abs() < 1e-3, "{r}");
        assert!((cv(&[9.0, 10.0, 11.0]) - 0.1).abs() < 1e-9);
    }
}
