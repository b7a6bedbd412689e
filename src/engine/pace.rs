//! The schedule of a paced run (`--rate R`, an open model): document `k` of a run is due at
//! `start + k / R`, whatever the target does. Owns the timing rules of paced runs, which
//! complete those written down in `cell.rs`:
//!
//! - **workers**: the run's T workers (`--threads`, a cap) share one schedule; a free worker
//!   claims the next position, waits until it is due and sends it. When all T are busy the
//!   next document waits for one of them, as a real import's queue would;
//! - **service time** (the run's `latency_ms`): from the send, as in a closed-loop run;
//! - **response time**: from when the document was due to the end of its response, so a
//!   stalled target's queue shows in it (coordinated omission corrected, as wrk2 does);
//! - **late**: a document started more than one interval (1 / R) or 10 ms, whichever is
//!   larger, after it was due;
//! - **backlog**: documents due but not started when the last due time (plus that
//!   tolerance) passed; with `--duration`, the schedule holds the documents due inside the
//!   window and those not started by its end are the backlog;
//! - **achieved rate**: documents acknowledged / run duration (the run's `docs_per_sec`).
//!
//! - **shards** (`--shard K/N`): each shard paces its own documents at its share of the
//!   rate, the rate × its documents / the plan's (with `--duration`, × its workers / T), so
//!   with an even split document k of shard s is due at start + k × N / R; the shards'
//!   common start (the rendezvous) is the schedule's origin, and `merge` adds the shards'
//!   schedules back into one of the whole rate.
//!
//! Warm-up stays closed loop (before the start); the documents, folders, manifest lines,
//! `--resume`, `verify` and `cleanup` are those of a closed-loop run: only the order in
//! which workers take documents and when they send them differ.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use tokio::time::Instant;

use crate::metrics::{LatencyMs, encode_hist, round3};
use crate::results::paced::PacedRecord;

/// Response times are kept in µs from 1 µs to 1 hour, 3 significant digits, as latencies.
const HIST_MAX_US: u64 = 3_600_000_000;

/// Which document each schedule position is.
#[derive(Debug)]
enum Seq {
    /// Positions from this document index on.
    From(u64),
    /// What an interrupted run left (`--resume`).
    List(Vec<u64>),
}

/// One run's schedule, shared by its workers.
#[derive(Debug)]
pub(super) struct Pace {
    rate: f64,
    seq: Seq,
    /// Positions in the schedule (documents due in the run).
    total: u64,
    next: AtomicU64,
    origin: std::sync::OnceLock<Instant>,
}

impl Pace {
    /// A schedule at `rate` documents per second: the positions `todo` (what an interrupted
    /// run left), else `total` positions from document `start` on.
    pub(super) fn new(rate: f64, todo: Option<Vec<u64>>, start: u64, total: u64) -> Pace {
        let (seq, total) = match todo {
            Some(list) => {
                let n = list.len() as u64;
                (Seq::List(list), n)
            }
            None => (Seq::From(start), total),
        };
        Pace {
            rate,
            seq,
            total,
            next: AtomicU64::new(0),
            origin: std::sync::OnceLock::new(),
        }
    }

    /// The start of the schedule: fixed by whoever asks first after the barrier's release.
    pub(super) fn origin(&self) -> Instant {
        *self.origin.get_or_init(Instant::now)
    }

    /// When position `k` is due.
    fn due(&self, k: u64) -> Instant {
        self.origin() + Duration::from_secs_f64(k as f64 / self.rate)
    }

    /// How late a document may start and still be on time.
    pub(super) fn tolerance(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate).max(Duration::from_millis(10))
    }

    /// The last due time plus the tolerance: a document started after it is backlog.
    fn backlog_after(&self) -> Instant {
        self.due(self.total.saturating_sub(1)) + self.tolerance()
    }

    /// Claims the next position: its document index and due time; `None` when the
    /// schedule is done.
    pub(super) fn claim(&self) -> Option<(u64, Instant)> {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        if k >= self.total {
            return None;
        }
        let index = match &self.seq {
            Seq::From(s) => s + k,
            Seq::List(l) => l[k as usize],
        };
        Some((index, self.due(k)))
    }

    /// What the schedule stands at `now`: `(rate, due, behind)`, the documents due so far
    /// and those of them no worker has taken yet (all busy: the queue a real import would
    /// build). Read on a timer by the live page, never per upload.
    pub(super) fn now(&self, now: Instant) -> (f64, u64, u64) {
        let Some(origin) = self.origin.get() else {
            return (self.rate, 0, 0);
        };
        let due = if now < *origin {
            0
        } else {
            (((now - *origin).as_secs_f64() * self.rate).floor() as u64 + 1).min(self.total)
        };
        let taken = self.next.load(Ordering::Relaxed).min(self.total);
        (self.rate, due, due.saturating_sub(taken))
    }

    /// The run's record from its workers' merged tally.
    pub(super) fn record(&self, t: &PaceTally, docs_ok: u64, duration: Duration) -> PacedRecord {
        let secs = duration.as_secs_f64();
        let achieved = if secs > 0.0 {
            docs_ok as f64 / secs
        } else {
            0.0
        };
        let backlog = self.total.saturating_sub(t.on_time_by_end);
        PacedRecord {
            rate_per_s: self.rate,
            achieved_per_s: round3(achieved),
            due: self.total,
            schedule_s: round3(self.total.saturating_sub(1) as f64 / self.rate),
            late: t.late,
            late_after_ms: round3(self.tolerance().as_secs_f64() * 1000.0),
            backlog,
            kept_up: backlog == 0 && t.late * 100 <= self.total,
            response_ms: LatencyMs::from_hist(&t.response_us),
            response_histogram_us: encode_hist(&t.response_us),
        }
    }
}

/// Waits until `due`, in steps short enough that a stop (Ctrl-C, a fatal rejection) is
/// seen within 100 ms even at a slow rate. False when stopped.
pub(super) async fn wait_until(due: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        tokio::time::sleep_until(due.min(now + Duration::from_millis(100))).await;
    }
}

/// What one worker of a paced run saw of the schedule; merged exactly after the run.
#[derive(Debug, Clone)]
pub(super) struct PaceTally {
    /// Response time (from due) of acknowledged documents, µs.
    pub(super) response_us: Histogram<u64>,
    /// Documents started later than the tolerance.
    pub(super) late: u64,
    /// Documents started before the backlog point.
    pub(super) on_time_by_end: u64,
}

impl PaceTally {
    pub(super) fn new() -> PaceTally {
        PaceTally {
            response_us: Histogram::new_with_bounds(1, HIST_MAX_US, 3)
                .expect("valid histogram bounds"),
            late: 0,
            on_time_by_end: 0,
        }
    }

    /// A document of `pace` due at `due` started at `started`.
    pub(super) fn started(&mut self, pace: &Pace, due: Instant, started: Instant) {
        if started.saturating_duration_since(due) > pace.tolerance() {
            self.late += 1;
        }
        if started <= pace.backlog_after() {
            self.on_time_by_end += 1;
        }
    }

    /// A document due at `due` acknowledged at `done` (inside the measurement).
    pub(super) fn acknowledged(&mut self, due: Instant, done: Instant) {
        let us = done.saturating_duration_since(due).as_micros() as u64;
        self.response_us.saturating_record(us.clamp(1, HIST_MAX_US));
    }

    pub(super) fn merge(&mut self, other: &PaceTally) {
        self.response_us
            .add(&other.response_us)
            .expect("same histogram bounds");
        self.late += other.late;
        self.on_time_by_end += other.on_time_by_end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cell::{CellPlan, ResumePoint, pace_for_run};

    fn plan(docs: u64, window: Option<Duration>) -> CellPlan {
        CellPlan {
            docs,
            window,
            once: false,
            warmup: crate::results::Warmup::Docs(0),
            threads: 4,
            docs_per_folder: 500,
            folder: "f".into(),
            nonce: 1,
            tag: None,
            retries: 0,
            resuming: false,
            connections: None,
            shard: None,
            rendezvous: None,
            jtl: None,
            metrics: None,
            resources: None,
            target_on_this_host: true,
            attempt: 0,
            earlier: None,
            rate: Some(100.0),
            readers: None,
            readers_alone: None,
            auto: None,
        }
    }

    #[test]
    fn positions_are_due_one_interval_apart_and_claimed_once() {
        let p = pace_for_run(&plan(5, None), 100.0, None);
        let t0 = p.origin();
        let got: Vec<(u64, Duration)> = std::iter::from_fn(|| p.claim())
            .map(|(i, d)| (i, d - t0))
            .collect();
        assert_eq!(
            got,
            (0..5)
                .map(|k| (k, Duration::from_millis(10 * k)))
                .collect::<Vec<_>>()
        );
        assert!(p.claim().is_none());
    }

    #[test]
    fn a_window_holds_the_documents_due_inside_it_and_a_resume_what_was_left() {
        let p = pace_for_run(&plan(0, Some(Duration::from_millis(1005))), 100.0, None);
        assert_eq!(p.total, 101);
        let r = ResumePoint {
            folder: "f/run-1".into(),
            run_tag: 7,
            todo: vec![2, 3, 9],
        };
        let p = pace_for_run(&plan(10, None), 100.0, Some(&r));
        let got: Vec<u64> = std::iter::from_fn(|| p.claim()).map(|x| x.0).collect();
        assert_eq!(got, vec![2, 3, 9]);
    }

    #[test]
    fn a_shard_paces_its_share_of_the_rate() {
        // 4 workers over 2 shards, 10 documents: shard 1 has workers 2-3, documents 6..10
        // (quotas 3 3 2 2)... at 100/s × 4/10 = 40/s, one every 25 ms.
        let mut p = plan(10, None);
        p.shard = Some((1, 2));
        let pace = pace_for_run(&p, 100.0, None);
        let t0 = pace.origin();
        let got: Vec<(u64, Duration)> = std::iter::from_fn(|| pace.claim())
            .map(|(i, d)| (i, d - t0))
            .collect();
        assert_eq!(
            got,
            (0..4)
                .map(|k| (6 + k, Duration::from_millis(25 * k)))
                .collect::<Vec<_>>()
        );
        // A window: its workers' share, 2 of 4.
        let mut w = plan(0, Some(Duration::from_secs(1)));
        w.shard = Some((0, 2));
        assert_eq!(pace_for_run(&w, 100.0, None).total, 50);
    }

    #[test]
    fn late_documents_and_the_backlog_are_counted() {
        // 10 documents at 100/s: due every 10 ms, the last at 90 ms, tolerance 10 ms.
        let p = pace_for_run(&plan(10, None), 100.0, None);
        let t0 = p.origin();
        let mut t = PaceTally::new();
        for k in 0..10u64 {
            let due = t0 + Duration::from_millis(10 * k);
            // The first 6 on time; the last 4 start 100 ms late (after 90 + 10 ms).
            let started = if k < 6 {
                due + Duration::from_millis(2)
            } else {
                due + Duration::from_millis(100)
            };
            t.started(&p, due, started);
            t.acknowledged(due, started + Duration::from_millis(5));
        }
        let r = p.record(&t, 10, Duration::from_millis(200));
        assert_eq!((r.late, r.backlog, r.kept_up), (4, 4, false));
        assert_eq!(r.due, 10);
        assert_eq!(r.achieved_per_s, 50.0);
        assert!(r.response_ms.max >= 104.0, "{:?}", r.response_ms);
        let mut on_time = PaceTally::new();
        for k in 0..10u64 {
            let due = t0 + Duration::from_millis(10 * k);
            on_time.started(&p, due, due + Duration::from_millis(9));
        }
        let r = p.record(&on_time, 10, Duration::from_millis(100));
        assert_eq!((r.late, r.backlog, r.kept_up), (0, 0, true));
    }
}
