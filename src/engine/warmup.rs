//! `--warmup auto`: warm up until the server is warm. The run's workers upload warm-up
//! documents (each its own stream, as a timed warm-up) while a judge measures the warm-up's
//! throughput in short windows. The server is taken as steady, and the warm-up stops, when
//! two things hold:
//! - the last [`crate::results::Warmup::AUTO_RULE`]`.windows` windows agree (each within ±`tolerance` of their mean, and
//!   the last within ±`tolerance`/2 of the first), so the rate is not jumping about; and
//! - over a long horizon the rate no longer climbs: the last `H` seconds ran no more than
//!   `tolerance`/2 faster than the `H` before them, with `H` a quarter of the time warmed so
//!   far (at least `horizon`). A JVM just started compiles for a minute or more and gets
//!   faster by a few per cent a second: short windows agree with each other all along that
//!   climb (measured: Tomcat + OpenCMIS FileShare taken as steady after 3–7 s while it was
//!   half as fast as a minute later), a comparison over a quarter of the elapsed time does
//!   not, and it gets more sensitive to a slow climb the longer the climb has lasted.
//!
//! A cold JVM, empty caches or a connection pool still growing show as a climb; a server that
//! never settles is stopped at the cap and the run says so.
//!
//! A window closes once it holds at least `max(2 × workers, 10)` uploads and lasts at least
//! `min_window`, so it averages over every worker and over timer granularity; a slow server
//! gets longer windows rather than noisy ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::results::WarmupRule;

/// What a warm-up until steady came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// How long it took.
    pub seconds: f64,
    /// Whether the windows agreed before the cap (or a stop).
    pub settled: bool,
    /// Each window's uploads per second, in order.
    pub rates: Vec<f64>,
}

impl WarmupRule {
    /// Whether the last windows' rates agree: each within ±tolerance of their mean, and the
    /// last within ±tolerance/2 of the first (no climb hiding inside the tolerance).
    pub fn steady(&self, rates: &[f64]) -> bool {
        let k = self.windows;
        if k == 0 || rates.len() < k {
            return false;
        }
        let last = &rates[rates.len() - k..];
        let mean = last.iter().sum::<f64>() / k as f64;
        mean > 0.0
            && last
                .iter()
                .all(|r| (r / mean - 1.0).abs() <= self.tolerance)
            && (last[k - 1] / last[0] - 1.0).abs() <= self.tolerance / 2.0
    }

    /// Whether the rate still climbs over the long horizon, from the warm-up's cumulative
    /// uploads `(seconds, done)` at each window's close (starting with `(0, 0)`): the last
    /// `H` seconds against the `H` before them, `H` = max(horizon, elapsed / 4). Too short a
    /// warm-up to compare counts as climbing.
    pub fn climbing(&self, history: &[(f64, u64)]) -> bool {
        let Some(&(now, _)) = history.last() else {
            return true;
        };
        let h = self.horizon.as_secs_f64().max(now / 4.0);
        if now < 2.0 * h || h <= 0.0 {
            return true;
        }
        let at = |t: f64| -> f64 {
            let i = history.partition_point(|&(s, _)| s < t);
            match (i.checked_sub(1).map(|j| history[j]), history.get(i)) {
                (Some((t0, d0)), Some(&(t1, d1))) if t1 > t0 => {
                    d0 as f64 + (d1 as f64 - d0 as f64) * (t - t0) / (t1 - t0)
                }
                (_, Some(&(_, d))) | (Some((_, d)), None) => d as f64,
                (None, None) => 0.0,
            }
        };
        let (before, recent) = (at(now - h) - at(now - 2.0 * h), at(now) - at(now - h));
        recent > before * (1.0 + self.tolerance / 2.0)
    }
}

/// Shared between the judge and the workers: uploads done, and the signal to stop.
#[derive(Debug, Default)]
pub struct Gauge {
    pub done: AtomicU64,
    pub stop: AtomicBool,
}

/// Watches `gauge` until the warm-up is steady by `rule`, its cap passes, `abort` is set
/// (Ctrl-C) or the workers stopped on their own; then tells the workers to stop.
pub async fn judge(
    gauge: Arc<Gauge>,
    workers: u64,
    rule: WarmupRule,
    abort: impl Fn() -> bool,
) -> Settled {
    let start = Instant::now();
    let tick = (rule.min_window / 10).max(Duration::from_millis(5));
    let min_docs = (2 * workers).max(10);
    let mut rates = Vec::new();
    let mut history = vec![(0.0, 0)];
    let (mut w_start, mut w_done) = (start, 0);
    let settled = loop {
        tokio::time::sleep(tick).await;
        let now = Instant::now();
        if abort() || gauge.stop.load(Ordering::Relaxed) || now - start >= rule.cap {
            break false;
        }
        let done = gauge.done.load(Ordering::Relaxed);
        let span = now - w_start;
        if done - w_done >= min_docs && span >= rule.min_window {
            rates.push((done - w_done) as f64 / span.as_secs_f64());
            (w_start, w_done) = (now, done);
            history.push(((now - start).as_secs_f64(), done));
            if rule.steady(&rates) && !rule.climbing(&history) {
                break true;
            }
        }
    };
    gauge.stop.store(true, Ordering::Relaxed);
    Settled {
        seconds: (start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        settled,
        rates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Warmup;

    #[test]
    fn windows_that_climb_are_not_steady_and_windows_that_agree_are() {
        let r = Warmup::AUTO_RULE;
        assert!(!r.steady(&[100.0, 150.0]), "too few windows");
        assert!(!r.steady(&[50.0, 80.0, 100.0, 120.0]), "still climbing");
        assert!(
            !r.steady(&[100.0, 106.0, 112.0]),
            "a climb inside the tolerance"
        );
        assert!(r.steady(&[50.0, 80.0, 100.0, 104.0, 97.0]));
        assert!(!r.steady(&[0.0, 0.0, 0.0]), "nothing done is not steady");
    }

    /// `(t, done)` every `dt` seconds for a rate `rate(t)`, integrated.
    fn history(rate: fn(f64) -> f64, until: f64, dt: f64) -> Vec<(f64, u64)> {
        let (mut h, mut t, mut done) = (vec![(0.0, 0)], 0.0, 0.0);
        while t < until - 1e-9 {
            done += rate(t + dt / 2.0) * dt;
            t += dt;
            h.push((t, done as u64));
        }
        h
    }

    #[test]
    fn a_slow_climb_that_short_windows_miss_is_still_climbing() {
        let r = Warmup::AUTO_RULE;
        // A JVM compiling: +4 % a second. Three 0.25 s windows agree (1 % apart)...
        let jvm = |t: f64| 200.0 * (1.0 + 0.04 * t);
        let w: Vec<f64> = [10.0, 10.25, 10.5].iter().map(|&t| jvm(t)).collect();
        assert!(r.steady(&w));
        // ...but over a quarter of the time it climbs: still climbing at 10 s and at 40 s.
        assert!(r.climbing(&history(jvm, 10.0, 0.25)));
        assert!(r.climbing(&history(jvm, 40.0, 0.25)));
        // Flat after a climb: steady once the climb is out of the last half of the horizon.
        let settles = |t: f64| if t < 5.0 { 100.0 + 40.0 * t } else { 300.0 };
        assert!(r.climbing(&history(settles, 6.0, 0.25)));
        assert!(!r.climbing(&history(settles, 12.0, 0.25)));
        // A flat server is steady after twice the horizon, not before; a falling one is not
        // climbing.
        assert!(r.climbing(&history(|_| 500.0, 3.0, 0.25)));
        assert!(!r.climbing(&history(|_| 500.0, 4.0, 0.25)));
        assert!(!r.climbing(&history(|t| 500.0 - 10.0 * t, 8.0, 0.25)));
    }

    /// A feed of uploads whose count follows `total(t)` (so late ticks do not change the
    /// rates the judge sees), until the judge says stop.
    fn feed(g: &Arc<Gauge>, total: fn(f64) -> f64) -> tokio::task::JoinHandle<()> {
        let g = g.clone();
        tokio::spawn(async move {
            let t0 = Instant::now();
            while !g.stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(2)).await;
                g.done
                    .store(total(t0.elapsed().as_secs_f64()) as u64, Ordering::Relaxed);
            }
        })
    }

    #[tokio::test]
    async fn a_server_that_warms_up_is_judged_steady_once_it_is_and_one_that_climbs_is_capped() {
        // Windows of 100 ms: a late tick of a loaded machine moves a window's rate by a few
        // per cent, well inside the tolerance; the ramp moves it by 7 % or more per window.
        let rule = WarmupRule {
            min_window: Duration::from_millis(100),
            horizon: Duration::from_millis(400),
            cap: Duration::from_secs(20),
            ..Warmup::AUTO_RULE
        };
        // 500 uploads/s rising to 2,000/s over the first second, then flat.
        let g = Arc::new(Gauge::default());
        let f = feed(&g, |t| {
            if t < 1.0 {
                500.0 * t + 750.0 * t * t
            } else {
                1250.0 + 2000.0 * (t - 1.0)
            }
        });
        let s = judge(g, 4, rule, || false).await;
        f.await.unwrap();
        assert!(s.settled && s.seconds >= 0.9, "{s:?}");
        // A rate that keeps climbing (+22 % every 100 ms) never settles: stopped at the cap.
        let rule = WarmupRule {
            cap: Duration::from_secs(3),
            ..rule
        };
        let g = Arc::new(Gauge::default());
        let f = feed(&g, |t| 250.0 * (2.0 * t).exp());
        let s = judge(g, 4, rule, || false).await;
        f.await.unwrap();
        assert!(!s.settled && s.seconds >= 3.0, "{s:?}");
    }
}
