//! Throughput against threads by mean value analysis: from the demands a cell measured (each
//! resource's busy time per document and its capacity) and the time per document no
//! resource explains (a think time: the network's and the client's waits, fitted to the
//! fewest threads measured), the docs/s each thread count would reach, for the configuration
//! measured and for each what-if's rescaled demands, so a plan can pick the threads as well
//! as the change. Exact MVA for a closed network of one class; a resource of c > 1 cores by
//! Seidmann's approximation (a queue of D/c and a delay of D(c−1)/c), a CPU quota of c < 1
//! as one core (a request alone runs at a core's speed until the quota's period is spent),
//! its cap c/D left to the bound every point is held under. This host's CPU is a queue of what its
//! processes in the network do not already hold (the kernel, other processes), so no busy
//! time is counted twice. Pure functions.

use super::demands::Demand;
use super::what_if::WhatIf;
use crate::metrics::resources::{Kind, Role};

/// A share of the bound the curve must reach for [`threads_to_reach`].
pub const NEAR_BOUND: f64 = 0.9;

/// The most threads a curve is drawn to.
pub const MAX_THREADS: u32 = 256;

/// One queueing station: its service demand per document, s, after the capacity is
/// applied, and the delay it adds without queueing (a multi-core resource's idle cores).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Station {
    pub queue_s: f64,
    pub delay_s: f64,
}

/// The stations of a cell's demands (resources without a reading, capacity or demand left
/// out).
pub fn stations(demands: &[Demand]) -> Vec<Station> {
    let usable = |d: &&Demand| d.error.is_none() && d.capacity > 0.0 && d.demand_ms > 0.0;
    // The processes of this host in the network: their CPU is also in this host's.
    let processes_ms: f64 = demands
        .iter()
        .filter(usable)
        .filter(|d| d.kind == Kind::ProcessCpu && d.role != Role::RemoteHost)
        .map(|d| d.demand_ms)
        .sum();
    demands
        .iter()
        .filter(usable)
        .filter_map(|d| {
            let ms = if d.kind == Kind::HostCpu && d.role == Role::Host {
                (d.demand_ms - processes_ms).max(0.0)
            } else {
                d.demand_ms
            };
            (ms > 0.0).then(|| station(ms / 1000.0, d.capacity))
        })
        .collect()
}

/// A resource of `cores` with `demand_s` of busy time per document. A quota under one core
/// serves a request at a core's speed: modelled as one core, its lower rate is the bound's
/// (on the Java lab, a node at 0.3 CPU answered one thread at three times the rate its
/// quota allows under load, and a queue of D/c put the curve 40 % low at one thread).
pub fn station(demand_s: f64, cores: f64) -> Station {
    if cores <= 1.0 {
        Station {
            queue_s: demand_s,
            delay_s: 0.0,
        }
    } else {
        Station {
            queue_s: demand_s / cores,
            delay_s: demand_s * (cores - 1.0) / cores,
        }
    }
}

/// docs/s at 1, 2, … `n` threads, each thread waiting `think_s` per document outside the
/// stations.
pub fn curve(stations: &[Station], think_s: f64, n: u32) -> Vec<f64> {
    let delay: f64 = think_s.max(0.0) + stations.iter().map(|s| s.delay_s).sum::<f64>();
    let mut q = vec![0.0; stations.len()];
    let mut out = Vec::with_capacity(n as usize);
    for k in 1..=n {
        let r: Vec<f64> = stations
            .iter()
            .zip(&q)
            .map(|(s, q)| s.queue_s * (1.0 + q))
            .collect();
        let x = k as f64 / (delay + r.iter().sum::<f64>()).max(1e-12);
        for (q, r) in q.iter_mut().zip(&r) {
            *q = x * r;
        }
        out.push(x);
    }
    out
}

/// The think time that makes the curve pass through `docs_per_sec` at `threads` (0 where
/// the stations alone are already slower than measured).
pub fn think_time(stations: &[Station], threads: u32, docs_per_sec: f64) -> f64 {
    let at = |z: f64| {
        curve(stations, z, threads.max(1))
            .last()
            .copied()
            .unwrap_or(0.0)
    };
    if docs_per_sec <= 0.0 || at(0.0) <= docs_per_sec {
        return 0.0;
    }
    // The curve falls as the think time grows: bisect between 0 and a time slow enough.
    let (mut lo, mut hi) = (0.0, threads.max(1) as f64 / docs_per_sec);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if at(mid) > docs_per_sec {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The fewest threads whose docs/s reach `share` of `bound` on `curve` (1-based), if any.
pub fn threads_to_reach(curve: &[f64], bound: f64, share: f64) -> Option<u32> {
    curve
        .iter()
        .position(|x| *x >= share * bound)
        .map(|i| i as u32 + 1)
}

/// Draws each conclusive what-if's curve (its rescaled demands over `threads`, no point
/// above the what-if's bound) and the fewest threads that reach [`NEAR_BOUND`] of its bound,
/// with the think time that makes `low`'s demands pass through its docs/s at its threads
/// (the fewest threads the path measured: `(demands, threads, docs/s)`).
pub fn draw(what_ifs: &mut [WhatIf], low: (&[Demand], u32, f64), threads: &[u32]) {
    let base = stations(low.0);
    if base.is_empty() {
        return;
    }
    let z = think_time(&base, low.1, low.2);
    for w in what_ifs
        .iter_mut()
        .filter(|w| w.conclusive && !w.after.is_empty())
    {
        let st = stations(&w.after);
        if st.is_empty() {
            continue;
        }
        let bound = w.bound_to_docs_per_sec;
        let full: Vec<f64> = curve(&st, z, MAX_THREADS)
            .into_iter()
            .map(|x| x.min(bound))
            .collect();
        w.threads_to_90_pct = threads_to_reach(&full, bound, NEAR_BOUND);
        w.curve = threads
            .iter()
            .filter(|t| (1..=MAX_THREADS).contains(*t))
            .map(|&t| (t, (full[t as usize - 1] * 10.0).round() / 10.0))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_queue_without_think_time_is_saturated_from_one_thread() {
        let c = curve(&[station(0.01, 1.0)], 0.0, 4);
        for x in &c {
            assert!((x - 100.0).abs() < 1e-9, "{c:?}");
        }
    }

    /// The textbook case: a 10 ms queue and 90 ms of think time reach the bound (100 docs/s)
    /// only past N* = (D + Z) / D = 10 threads; below it they grow almost linearly.
    #[test]
    fn the_curve_bends_at_the_knee_and_never_passes_the_bound() {
        let c = curve(&[station(0.01, 1.0)], 0.09, 40);
        assert!((c[0] - 10.0).abs() < 1e-9);
        assert!(c[4] > 45.0 && c[4] < 50.0, "{c:?}");
        assert!(c.windows(2).all(|w| w[1] >= w[0] - 1e-9));
        assert!(c.iter().all(|x| *x <= 100.0 + 1e-9));
        let n = threads_to_reach(&c, 100.0, NEAR_BOUND).unwrap();
        assert!((10..=20).contains(&n), "{n}");
    }

    #[test]
    fn a_fitted_think_time_passes_through_the_point_measured() {
        let s = [station(0.004, 0.5), station(0.001, 2.0)];
        let z = think_time(&s, 2, 100.0);
        let c = curve(&s, z, 2);
        assert!(z > 0.0 && (c[1] - 100.0).abs() < 0.01, "{z} {c:?}");
        // Faster than the stations allow: no think time.
        assert_eq!(think_time(&s, 1, 1e6), 0.0);
    }

    #[test]
    fn a_quota_is_one_core_and_cores_add_a_delay() {
        assert_eq!(
            station(0.003, 0.3),
            Station {
                queue_s: 0.003,
                delay_s: 0.0
            }
        );
        let s = station(0.004, 2.0);
        assert!((s.queue_s - 0.002).abs() < 1e-12 && (s.delay_s - 0.002).abs() < 1e-12);
    }
}
