//! One snapshot a second of a running job, for the live page: built once from the same
//! counters `/metrics` and the progress line read (the cells' [`CellReading`]s and the
//! [`LiveCounters`]), whatever the number of browsers. Owns the differences between two
//! readings (the last second's rate and latency percentiles) and the ETA's tracker; knows
//! nothing of HTTP.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::eta::{self, Eta, Tracker};
use crate::engine::LiveCounters;
use crate::engine::live::{BOUNDS, CLASSES, CellReading};
use crate::results::CellKey;

/// Latency percentiles of the uploads acknowledged over one interval, milliseconds, read
/// from the `/metrics` histogram's buckets (1 ms to 60 s; linear within a bucket, so coarse:
/// a value is known to its bucket).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
}

/// What the page shows for one second of the job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    /// 1, 2, ... (a browser that reconnects skips what it has).
    pub seq: u64,
    /// Seconds since the page started serving.
    pub t_s: f64,
    /// Measured documents acknowledged, failed, and the bytes acknowledged, over every cell
    /// (they end at the result's).
    pub docs_ok: u64,
    pub docs_failed: u64,
    pub bytes_ok: u64,
    /// Acknowledged per second over the last interval.
    pub docs_per_s: f64,
    pub mb_per_s: f64,
    /// Latency over the last interval (None: nothing acknowledged in it).
    pub latency: Option<Percentiles>,
    /// Failed measured documents by error class (classes with none left out).
    pub errors: BTreeMap<&'static str, u64>,
    /// Workers uploading now.
    pub workers: i64,
    /// The cell and run under way (e.g. `[2/6] direct reuse small t=4 run 1`).
    pub stage: String,
    /// The cell whose workers are uploading (the last one that did, between runs).
    pub cell: Option<String>,
    /// Documents completed (the progress line's count) and planned (0: not known ahead).
    pub done: u64,
    pub total: u64,
    /// The ETA with its 95 % interval and the two rates it came from.
    pub eta: Option<Eta>,
    /// Docs/s over the moving window and since the start (the progress count).
    pub docs_per_s_moving: Option<f64>,
    pub docs_per_s_overall: Option<f64>,
    /// A paced run's schedule (`--rate`): its rate, the documents due so far and those no
    /// worker has taken yet (absent: not paced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paced: Option<crate::engine::PacedNow>,
    /// The measured runs that ended since the previous snapshot (each is sent once; a page
    /// opened late gets them with the history): the sweep charts grow by them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs_done: Vec<crate::engine::RunDone>,
    /// The job has ended; `report`: the final report is served at `/report`.
    pub finished: bool,
    pub report: bool,
}

/// The running state between two snapshots.
pub struct Sampler {
    seq: u64,
    last_t: f64,
    last: CellReading,
    tracker: Tracker,
    /// The tracker follows a corpus import's work (documents, folders, bytes).
    costed: bool,
    cell: Option<String>,
    /// Runs ended that earlier snapshots carried.
    runs_sent: usize,
}

/// Every cell's reading, summed.
fn total(readings: &[(CellKey, CellReading)]) -> CellReading {
    let mut t = CellReading::default();
    for (_, r) in readings {
        t.ok += r.ok;
        t.bytes += r.bytes;
        t.in_flight += r.in_flight;
        for (sum, n) in t.failed.iter_mut().zip(r.failed) {
            *sum += n;
        }
        for (sum, n) in t.buckets.iter_mut().zip(r.buckets) {
            *sum += n;
        }
    }
    t
}

/// A cell as the page names it: `direct reuse small t=4` (and `@40/s` in a rates sweep).
fn cell_name(c: &CellKey) -> String {
    let mut s = format!(
        "{} {} {} t={}",
        c.method,
        c.connection.name(),
        c.size.name(),
        c.threads
    );
    if let Some(r) = c.rate_per_s {
        s.push_str(&format!(" @{r}/s"));
    }
    s
}

/// The `q` quantile (0..1) of a per-bucket histogram, milliseconds; None when it is empty.
pub fn quantile_ms(buckets: &[u64; 16], q: f64) -> Option<f64> {
    let n: u64 = buckets.iter().sum();
    if n == 0 {
        return None;
    }
    let target = q * n as f64;
    let mut below = 0.0;
    for (k, c) in buckets.iter().enumerate() {
        let c = *c as f64;
        if c > 0.0 && below + c >= target {
            let lo = if k == 0 { 0.0 } else { BOUNDS[k - 1] };
            let hi = BOUNDS.get(k).copied().unwrap_or(BOUNDS[BOUNDS.len() - 1]);
            let within = ((target - below) / c).clamp(0.0, 1.0);
            return Some((lo + (hi - lo) * within) * 1e3);
        }
        below += c;
    }
    Some(BOUNDS[BOUNDS.len() - 1] * 1e3)
}

impl Sampler {
    pub fn new() -> Sampler {
        Sampler {
            seq: 0,
            last_t: 0.0,
            last: CellReading::default(),
            tracker: Tracker::new(30.0, 0.0),
            costed: false,
            cell: None,
            runs_sent: 0,
        }
    }

    /// The snapshot at `t` seconds of what `readings` and `live` hold now.
    pub fn take(
        &mut self,
        t: f64,
        readings: &[(CellKey, CellReading)],
        live: &LiveCounters,
    ) -> Snapshot {
        use std::sync::atomic::Ordering::Relaxed;
        let now = total(readings);
        if let Some((c, _)) = readings.iter().find(|(_, r)| r.in_flight > 0) {
            self.cell = Some(cell_name(c));
        }
        let dt = (t - self.last_t).max(1e-3);
        let mut interval = [0u64; 16];
        for (k, b) in interval.iter_mut().enumerate() {
            *b = now.buckets[k].saturating_sub(self.last.buckets[k]);
        }
        let latency = quantile_ms(&interval, 0.5).map(|p50_ms| Percentiles {
            p50_ms,
            p95_ms: quantile_ms(&interval, 0.95).unwrap_or(p50_ms),
            p99_ms: quantile_ms(&interval, 0.99).unwrap_or(p50_ms),
        });
        let errors = CLASSES
            .iter()
            .zip(now.failed)
            .filter(|(_, n)| *n > 0)
            .map(|(c, n)| (c.name(), n))
            .collect();
        let done = live.done.load(Relaxed);
        let planned = live.total.load(Relaxed);
        let work = live.work();
        // The import's tally starts after its warm-up: the ETA starts again there.
        if work.is_some() != self.costed {
            self.costed = work.is_some();
            self.tracker = Tracker::new(30.0, t);
        }
        let mut seen = match work {
            Some((c, total)) => {
                self.tracker.observe_counts(t, c);
                self.tracker.observed_work(t, total)
            }
            None => {
                self.tracker.observe(t, done as f64);
                self.tracker.observed(t, planned as f64, None)
            }
        };
        seen.prior = live.eta_prior();
        let eta = if planned > 0 {
            eta::eta(&seen)
        } else {
            live.runs_eta()
        };
        self.seq += 1;
        let runs_done = live.runs_done_since(self.runs_sent);
        self.runs_sent += runs_done.len();
        let snap = Snapshot {
            seq: self.seq,
            t_s: (t * 1e3).round() / 1e3,
            docs_ok: now.ok,
            docs_failed: now.failed.iter().sum(),
            bytes_ok: now.bytes,
            docs_per_s: now.ok.saturating_sub(self.last.ok) as f64 / dt,
            mb_per_s: now.bytes.saturating_sub(self.last.bytes) as f64 / dt / 1e6,
            latency,
            errors,
            workers: now.in_flight,
            stage: live.stage.lock().map(|s| s.clone()).unwrap_or_default(),
            cell: self.cell.clone(),
            done,
            total: planned,
            eta,
            docs_per_s_moving: (seen.window_s > 0.0).then(|| seen.window_docs / seen.window_s),
            docs_per_s_overall: (seen.elapsed_s > 0.0 && done > 0)
                .then(|| seen.docs.done / seen.elapsed_s),
            paced: live.paced_now(),
            runs_done,
            finished: false,
            report: false,
        };
        self.last = now;
        self.last_t = t;
        snap
    }
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::SizeClass;
    use crate::metrics::ErrorClass;
    use crate::transport::ConnectionPolicy;
    use std::time::Duration;

    #[test]
    fn quantiles_fall_in_their_bucket() {
        let mut b = [0u64; 16];
        assert_eq!(quantile_ms(&b, 0.5), None);
        b[3] = 100; // 5..10 ms
        let p50 = quantile_ms(&b, 0.5).unwrap();
        assert!((5.0..=10.0).contains(&p50), "{p50}");
        b[9] = 2; // 0.5..1 s
        let p99 = quantile_ms(&b, 0.99).unwrap();
        assert!((500.0..=1000.0).contains(&p99), "{p99}");
        b[15] = 100; // beyond 60 s: shown as 60 s
        assert_eq!(quantile_ms(&b, 0.99), Some(60_000.0));
    }

    #[test]
    fn a_snapshot_reads_the_counters_and_the_last_interval() {
        let m = std::sync::Arc::new(crate::engine::live::LiveMetrics::default());
        let cell = CellKey {
            method: "direct".into(),
            connection: ConnectionPolicy::Reuse,
            size: SizeClass::Small,
            threads: 2,
            rate_per_s: None,
        };
        let c = m.cell(&cell);
        let live = LiveCounters::default();
        live.total.store(100, std::sync::atomic::Ordering::Relaxed);
        let mut s = Sampler::new();
        let first = s.take(1.0, &m.readings(), &live);
        assert_eq!((first.seq, first.docs_ok, first.latency), (1, 0, None));
        c.worker(2);
        for _ in 0..10 {
            c.ok(1_000, Duration::from_millis(7));
        }
        c.failed(ErrorClass::Timeout);
        live.done.store(11, std::sync::atomic::Ordering::Relaxed);
        let second = s.take(2.0, &m.readings(), &live);
        assert_eq!(
            (second.docs_ok, second.docs_failed, second.bytes_ok),
            (10, 1, 10_000)
        );
        assert_eq!(second.docs_per_s, 10.0);
        assert_eq!(second.errors.get("timeout"), Some(&1));
        assert_eq!(second.cell.as_deref(), Some("direct reuse small t=2"));
        let l = second.latency.unwrap();
        assert!((5.0..=10.0).contains(&l.p50_ms), "{l:?}");
        assert!(second.eta.is_some());
        // Nothing more acknowledged: no latency for that second, the rate drops to 0.
        let third = s.take(3.0, &m.readings(), &live);
        assert_eq!((third.docs_per_s, third.latency), (0.0, None));
        let json = serde_json::to_value(&third).unwrap();
        assert_eq!(json["docs_ok"], 10);
        assert_eq!(json["seq"], 3);
        assert!(
            json.get("runs_done").is_none(),
            "no run ended: nothing sent"
        );
        // A run that ends is sent once, in the next snapshot.
        live.runs_done.lock().unwrap().push(crate::engine::RunDone {
            cell: cell.clone(),
            run: 1,
            docs_per_s: 12.5,
            resources: Vec::new(),
            readers: Vec::new(),
            verdict: None,
        });
        let fourth = s.take(4.0, &m.readings(), &live);
        assert_eq!(fourth.runs_done.len(), 1);
        let json = serde_json::to_value(&fourth).unwrap();
        assert_eq!(json["runs_done"][0]["cell"]["threads"], 2);
        assert_eq!(json["runs_done"][0]["docs_per_s"], 12.5);
        assert!(s.take(5.0, &m.readings(), &live).runs_done.is_empty());
    }
}
