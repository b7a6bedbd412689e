//! A run's trajectory: what it had done at regular instants (documents, versions, bytes,
//! folders created), so a single long run can be read as a stream of windows. The pilot
//! estimate (`analysis::pilot`) fits its cost per request, per byte and its growth from
//! them. Workers add to [`Tally`] with relaxed atomic adds (a few per upload); a ticker task
//! reads it every [`TICK`] and never touches the hot path otherwise. The tally also keeps
//! the documents' latencies by size ([`Tally::by_size`]): a window's bytes land where its
//! large file completes, while the upload's latency holds the time it took.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::results::TimelinePoint;

/// How often the trajectory is read at first; doubled whenever it holds [`MAX_POINTS`]
/// (every other point dropped), so a run of any length keeps at most that many (a 10-second run keeps every 20 ms).
const TICK: Duration = Duration::from_millis(20);
const MAX_POINTS: usize = 512;

/// Size buckets kept: a power of 2 of bytes each, the last holding everything from 2^46.
const SIZE_BUCKETS: usize = 48;

/// What the run's workers have acknowledged in its measured part, and the folders made.
pub struct Tally {
    pub docs: AtomicU64,
    pub versions: AtomicU64,
    pub bytes: AtomicU64,
    pub folders: AtomicU64,
    /// Per size bucket (bit length of the bytes, as the corpus's description buckets its
    /// files): documents, bytes, latency (µs), and the latency's squares in (10 µs)², rounded
    /// to the nearest 10 µs (half a million uploads of a minute each stay below 2^64).
    /// Documents without versions only: one with versions is several requests, and the
    /// description sizes its head file alone.
    by_size: [[AtomicU64; 4]; SIZE_BUCKETS],
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            docs: AtomicU64::new(0),
            versions: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            folders: AtomicU64::new(0),
            by_size: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
        }
    }
}

impl Tally {
    pub fn ok(&self, versions: u64, bytes: u64, latency: Duration) {
        self.docs.fetch_add(1, Ordering::Relaxed);
        if versions > 0 {
            self.versions.fetch_add(versions, Ordering::Relaxed);
        }
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        if versions == 0 {
            let i = ((64 - bytes.leading_zeros()) as usize).min(SIZE_BUCKETS - 1);
            let us = latency.as_micros().min(u128::from(u32::MAX)) as u64;
            let s = &self.by_size[i];
            s[0].fetch_add(1, Ordering::Relaxed);
            s[1].fetch_add(bytes, Ordering::Relaxed);
            s[2].fetch_add(us, Ordering::Relaxed);
            s[3].fetch_add(((us + 5) / 10).pow(2), Ordering::Relaxed);
        }
    }

    /// The documents acknowledged so far by size, with their latencies (buckets holding any).
    pub fn by_size(&self) -> Vec<crate::results::SizeLatency> {
        self.by_size
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let docs = s[0].load(Ordering::Relaxed);
                (docs > 0).then(|| crate::results::SizeLatency {
                    lo_bytes: if i == 0 { 0 } else { 1u64 << (i - 1) },
                    docs,
                    bytes: s[1].load(Ordering::Relaxed),
                    latency_sum_ms: s[2].load(Ordering::Relaxed) as f64 / 1e3,
                    latency_sq_sum_ms2: s[3].load(Ordering::Relaxed) as f64 / 1e4,
                })
            })
            .collect()
    }

    /// The counts as the ETA reads them: documents with their versions, folders, bytes.
    pub fn counts(&self) -> crate::analysis::eta::Counts {
        crate::analysis::eta::Counts {
            docs: (self.docs.load(Ordering::Relaxed) + self.versions.load(Ordering::Relaxed))
                as f64,
            folders: self.folders.load(Ordering::Relaxed) as f64,
            bytes: self.bytes.load(Ordering::Relaxed) as f64,
        }
    }

    fn point(&self, t: f64) -> TimelinePoint {
        TimelinePoint {
            t_s: (t * 1e4).round() / 1e4,
            docs: self.docs.load(Ordering::Relaxed),
            versions: self.versions.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            folders: self.folders.load(Ordering::Relaxed),
        }
    }
}

/// The ticker of one run: started at the run's start, stopped after its last worker.
pub struct Ticker {
    points: Arc<Mutex<Vec<TimelinePoint>>>,
    handle: tokio::task::JoinHandle<()>,
    tally: Arc<Tally>,
    started: Instant,
}

impl Ticker {
    pub fn start(tally: Arc<Tally>, started: Instant) -> Ticker {
        let points = Arc::new(Mutex::new(vec![TimelinePoint::default()]));
        let handle = tokio::spawn(tick(tally.clone(), started, points.clone()));
        Ticker {
            points,
            handle,
            tally,
            started,
        }
    }

    /// A handle that reads the trajectory so far while the run goes on (an auto pilot's
    /// watcher, every few seconds; never the workers).
    pub fn reader(&self) -> Reader {
        Reader {
            points: self.points.clone(),
            tally: self.tally.clone(),
            started: self.started,
        }
    }

    /// The trajectory, closed by a point at `end` (the run's last completion).
    pub fn finish(self, end: Instant) -> Vec<TimelinePoint> {
        self.handle.abort();
        let t_end = end.saturating_duration_since(self.started).as_secs_f64();
        let mut points = std::mem::take(&mut *self.points.lock().expect("timeline"));
        points.retain(|p| p.t_s < t_end);
        points.push(self.tally.point(t_end));
        points
    }
}

/// The trajectory of a run still going on (see [`Ticker::reader`]).
#[derive(Clone)]
pub struct Reader {
    points: Arc<Mutex<Vec<TimelinePoint>>>,
    tally: Arc<Tally>,
    started: Instant,
}

impl Reader {
    /// The points so far, closed by one at `now`, and the seconds since the start.
    pub fn so_far(&self, now: Instant) -> (Vec<TimelinePoint>, f64) {
        let t = now.saturating_duration_since(self.started).as_secs_f64();
        let mut points = self.points.lock().expect("timeline").clone();
        points.retain(|p| p.t_s < t);
        points.push(self.tally.point(t));
        (points, t)
    }

    /// The documents acknowledged so far by size, with their latencies.
    pub fn by_size(&self) -> Vec<crate::results::SizeLatency> {
        self.tally.by_size()
    }
}

async fn tick(tally: Arc<Tally>, started: Instant, points: Arc<Mutex<Vec<TimelinePoint>>>) {
    let mut every = TICK;
    let mut next = started + every;
    loop {
        tokio::time::sleep_until(next).await;
        let t = next.saturating_duration_since(started).as_secs_f64();
        let mut p = points.lock().expect("timeline");
        p.push(tally.point(t));
        if p.len() >= MAX_POINTS {
            let kept: Vec<TimelinePoint> = p.iter().step_by(2).copied().collect();
            *p = kept;
            every *= 2;
        }
        next += every;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bucket i holds [2^(i-1), 2^i) bytes (0 bytes: bucket 0), as the corpus's description
    /// buckets its files; the last holds everything from 2^46; a document with versions is
    /// left out; the squares are in ms², to the nearest 10 µs.
    #[test]
    fn documents_fall_into_their_size_buckets_with_their_latencies() {
        let t = Tally::default();
        let ms = |v: u64| Duration::from_micros(v * 1000);
        for (bytes, lat) in [
            (0, 1),
            (1, 2),
            (1023, 3),
            (1024, 4),
            (2047, 5),
            (1 << 50, 6),
        ] {
            t.ok(0, bytes, ms(lat));
        }
        t.ok(2, 4096, ms(100));
        let got: Vec<(u64, u64, u64, f64, f64)> = t
            .by_size()
            .iter()
            .map(|b| {
                (
                    b.lo_bytes,
                    b.docs,
                    b.bytes,
                    b.latency_sum_ms,
                    b.latency_sq_sum_ms2,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1, 0, 1.0, 1.0),
                (1, 1, 1, 2.0, 4.0),
                (512, 1, 1023, 3.0, 9.0),
                (1024, 2, 1024 + 2047, 9.0, 41.0),
                (1 << 46, 1, 1 << 50, 6.0, 36.0),
            ]
        );
        assert_eq!(
            t.docs.load(Ordering::Relaxed),
            7,
            "all counted in the timeline"
        );
        let r = Tally::default();
        r.ok(0, 10, Duration::from_micros(1_234));
        r.ok(0, 10, Duration::from_micros(1_236));
        let b = r.by_size()[0];
        assert_eq!(b.latency_sum_ms, 2.47);
        assert!((b.latency_sq_sum_ms2 - (1.23f64.powi(2) + 1.24f64.powi(2))).abs() < 1e-9);
    }
}
