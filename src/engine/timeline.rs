//! A run's trajectory: what it had done at regular instants (documents, versions, bytes,
//! folders created), so a single long run can be read as a stream of windows. The pilot
//! estimate (`analysis::pilot`) fits its cost per request, per byte and its growth from
//! them. Workers add to [`Tally`] with relaxed atomic adds (one per upload); a ticker task
//! reads it every [`TICK`] and never touches the hot path otherwise.

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

/// What the run's workers have acknowledged in its measured part, and the folders made.
#[derive(Default)]
pub struct Tally {
    pub docs: AtomicU64,
    pub versions: AtomicU64,
    pub bytes: AtomicU64,
    pub folders: AtomicU64,
}

impl Tally {
    pub fn ok(&self, versions: u64, bytes: u64) {
        self.docs.fetch_add(1, Ordering::Relaxed);
        if versions > 0 {
            self.versions.fetch_add(versions, Ordering::Relaxed);
        }
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
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
