//! `--warmup auto`: warm up until the server is warm. The run's workers upload warm-up
//! documents (each its own stream, as a timed warm-up) while a judge measures the warm-up's
//! throughput in short windows; when the last [`AUTO`]`.windows` windows agree (each within
//! ±`tolerance` of their mean, and the last within ±`tolerance`/2 of the first, so a slow
//! climb is not taken for a plateau), the server is taken as steady and the warm-up stops. A
//! cold JVM, empty caches or a connection pool still growing show as windows that climb; a
//! server that never settles is stopped at the cap and the run says so.
//!
//! A window closes once it holds at least `max(2 × workers, 10)` uploads and lasts at least
//! `min_window`, so it averages over every worker and over timer granularity; a slow server
//! gets longer windows rather than noisy ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// When a warm-up is steady.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Windows that must agree.
    pub windows: usize,
    /// How far each of them may lie from their mean.
    pub tolerance: f64,
    /// The shortest window.
    pub min_window: Duration,
    /// The longest warm-up.
    pub cap: Duration,
}

/// `--warmup auto`'s rule.
pub const AUTO: Rule = Rule {
    windows: 3,
    tolerance: 0.10,
    min_window: Duration::from_millis(250),
    cap: Duration::from_secs(60),
};

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

impl Rule {
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
    rule: Rule,
    abort: impl Fn() -> bool,
) -> Settled {
    let start = Instant::now();
    let tick = (rule.min_window / 10).max(Duration::from_millis(5));
    let min_docs = (2 * workers).max(10);
    let mut rates = Vec::new();
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
            if rule.steady(&rates) {
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

    #[test]
    fn windows_that_climb_are_not_steady_and_windows_that_agree_are() {
        let r = AUTO;
        assert!(!r.steady(&[100.0, 150.0]), "too few windows");
        assert!(!r.steady(&[50.0, 80.0, 100.0, 120.0]), "still climbing");
        assert!(
            !r.steady(&[100.0, 106.0, 112.0]),
            "a climb inside the tolerance"
        );
        assert!(r.steady(&[50.0, 80.0, 100.0, 104.0, 97.0]));
        assert!(!r.steady(&[0.0, 0.0, 0.0]), "nothing done is not steady");
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
        let rule = Rule {
            min_window: Duration::from_millis(100),
            cap: Duration::from_secs(20),
            ..AUTO
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
        let rule = Rule {
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
