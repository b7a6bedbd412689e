//! When long work will end: an ETA with a 95 % interval from the progress so far, for the
//! terminal progress line and the live page (`--dashboard`). Pure: the caller reads its
//! counters on a timer and passes what it saw; nothing here reads a clock.
//!
//! The model: the time left is the work left over a rate. Which rate holds for the rest is
//! what is uncertain, and the interval says so from these sources:
//!
//! - **drift**: the moving rate (the last `window_s`, e.g. 30 s) and the whole-run rate are
//!   both candidates; the interval spans the time left at each, so a rate that changed
//!   mid-run widens it until the whole-run rate has caught up;
//! - **evidence**: a rate counted over `n` completions is known to about `1/√n` (counting
//!   noise), and the rest of the work may run differently from what was seen: a horizon
//!   term `h · √(left / done)`. By default `h` is [`HORIZON`] (10 % done: the time left
//!   ×/÷ 1.8; half done: ×/÷ 1.22; 90 % done: ×/÷ 1.07). A corpus import reads `h` from its
//!   own past (`read_horizon`): how far its level strayed after earlier checkpoints from the
//!   level the ETA would then have carried on, pooled with the default. An import that
//!   held its pace gets 0.076 (a quarter done: ×/÷ 1.29), one whose pace wandered up to 0.22;
//! - **stall**: no completion for `s` seconds (well past the gap the rate predicts) means the
//!   stall may go on: by Gott's rule a pause that has lasted `s` lasts between `s/39` and
//!   `39 s` more with 95 % odds, so the upper bound grows by `39 s` and the point by `s`;
//! - **swing**, late in a corpus import only (it reads the cost fit's level): the time left is
//!   then a stretch short enough for the server's swings (a disk's writeback, a collection, a
//!   run of large files) to move its mean rate, which the horizon term (shrinking with
//!   `left / done`) no longer covers. Once the run spans 1.5 times the time left, the spread
//!   of the level over the past's stretches as long as the time left joins the interval
//!   (`read_swing`), after the prior (no prior rate knows the stretch left). Replayed: docs/
//!   calibration.md, "late in the import". Other work has no swing term: late in it the
//!   interval is the horizon's, which under-covers there.
//!
//! The spreads add in log space (a rate is multiplicative); the bound is the time left
//! at either rate times `exp(±1.96 σ)`. A prior rate (an estimate the team made) narrows the
//! rate while little is done and counts for less as the measured completions grow
//! (inverse-variance weighting in log space). With no completion yet there is no ETA.
//!
//! A **corpus import** whose whole work is known (documents with their versions, folders,
//! bytes: `Tracker::observed_work`) is costed rather than counted: its cost per document,
//! folder and byte, and a rise per document held when one stands out (t > 3 √(left/done):
//! the further it is carried, the surer it must be), are fitted on its progress so far
//! (`analysis::eta_fit`), and the work left is costed at the last
//! quarter's level with the rise carried on (the point), with the rise 3 standard errors
//! slower (down to stopping now) and faster, and at the whole run's level (the candidates
//! the interval spans). A tree's folders come first
//! and cost a request each, so the documents' rate alone climbs through an import: replayed
//! over 16 finished imports (`examples/eta_replay.rs`, docs/dashboard.md), the median error
//! at a quarter of the import fell from 47 % to 7 %.
//!
//! For a sweep, [`sweep_eta`] gives the runs left times the runs' durations so far, with the
//! spread of those durations, capped by `--budget`.

pub use super::eta_fit::{CostFit, Counts};

/// z of a two-sided 95 % interval.
const Z95: f64 = 1.96;

/// How much of the work left may run differently from the work seen, per `√(left/done)`
/// (relative spread of the rate, 1 sd in log space). A guess that errs wide, left as it was
/// when the replays (docs/dashboard.md) were measured: at 0.05 they covered fewer imports.
const HORIZON: f64 = 0.1;

/// The horizon read from an import's own past ([`Tracker::observed_work`]): its look back's
/// miss is scaled by this factor and kept within these bounds, then pooled with
/// [`HORIZON`] (so the horizon used lies between 0.076 and 0.22).
const LOOK_BACK_FACTOR: f64 = 1.5;
const HORIZON_FLOOR: f64 = 0.04;
const HORIZON_CAP: f64 = 0.3;

/// Standard errors of the fitted rise per document held that its candidates span.
const GROWTH_SE_K: f64 = 3.0;

/// The t a rise per document held needs before it is carried, times `√(left/done)` of the
/// import's documents (at least 1): the further a rise is carried beyond what showed it,
/// the surer it must be. At a tenth of 177,652 files into FileShare, a rise at t = 3.7, read
/// off a start heavy in folders, carried nine times its span made the ETA 10× the time left
/// and its upper bound 7 days for a 10-minute import (docs/data/eta-imports-2026-11-29b).
const GROWTH_MIN_T: f64 = 3.0;

/// The share of the run's start whose stretches the swing leaves out: a tree's folders come
/// first, and the cost fit reads that start less well than the rest.
const SWING_SKIP: f64 = 0.1;

/// Stretches the swing reads, about at most (their step grows with the run, 65 at most): its
/// cost per progress tick stays bounded however short the time left is against the run.
const SWING_STRETCHES: f64 = 64.0;

/// The shortest stretch the swing reads, seconds, and in samples of the history (kept a
/// second apart, then further as [`HISTORY`] thins it): a stretch holds whole steps.
const SWING_MIN_S: f64 = 2.0;
const SWING_MIN_SAMPLES: f64 = 3.0;

/// Gott's 95 % factor: a pause that has lasted `s` lasts at most `39 s` more.
const GOTT95: f64 = 39.0;

/// Completions a moving window needs before its rate is trusted for the point estimate.
const MIN_WINDOW_DOCS: f64 = 20.0;

/// One measure of the work (documents, or bytes for a corpus import).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    pub done: f64,
    pub total: f64,
}

/// What a progress timer saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observed {
    /// Documents.
    pub docs: Work,
    /// Bytes, when the work is a corpus whose sizes are known.
    pub bytes: Option<Work>,
    /// Seconds since the work started.
    pub elapsed_s: f64,
    /// Documents completed in the last `window_s` seconds.
    pub window_docs: f64,
    /// The moving window's length, seconds (shorter than `elapsed_s` early on).
    pub window_s: f64,
    /// Seconds since the last completion.
    pub since_last_s: f64,
    /// A prior rate, documents per second, and its relative spread (1 sd, log scale), e.g.
    /// from `estimate.json`.
    pub prior: Option<(f64, f64)>,
    /// The work's cost fitted from the progress so far, with what was done and the whole
    /// work (documents, folders, bytes), when the whole is known (a corpus import): the ETA
    /// then costs the work left rather than counting documents at a rate.
    pub cost: Option<(CostFit, Counts, Counts)>,
    /// The horizon term's spread (per `√(left/done)`, 1 sd in log space) read from the
    /// work's own past ([`Tracker::observed_work`]); None: the default, [`HORIZON`].
    pub horizon: Option<f64>,
    /// How far the level swung over the past's stretches as long as the time left (1 sd, log
    /// scale: [`Tracker::observed_work`]); None: too little past to tell, or not a corpus
    /// import. Read only with `cost` (the level is the cost fit's).
    pub swing: Option<f64>,
}

/// Seconds left, with a 95 % interval, and the two rates it came from.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Eta {
    pub left_s: f64,
    pub low_s: f64,
    pub high_s: f64,
    /// Documents per second over the moving window (None: too few completions in it).
    pub moving_per_s: Option<f64>,
    /// Documents per second since the start.
    pub overall_per_s: f64,
    /// Seconds without a completion, counted as a stall (0: none).
    pub stalled_s: f64,
}

impl Eta {
    /// The interval's half-width relative to the point, the larger side.
    pub fn rel_half_width(&self) -> f64 {
        if self.left_s <= 0.0 {
            return 0.0;
        }
        ((self.high_s - self.left_s).max(self.left_s - self.low_s)) / self.left_s
    }
}

/// The ETA of `o`, or None before the first completion (nothing to extrapolate from).
pub fn eta(o: &Observed) -> Option<Eta> {
    let done = o.docs.done;
    if done <= 0.0 || o.elapsed_s <= 0.0 || !o.docs.total.is_finite() {
        return None;
    }
    let overall = done / o.elapsed_s;
    let moving =
        (o.window_docs >= MIN_WINDOW_DOCS && o.window_s > 0.0).then(|| o.window_docs / o.window_s);
    let stalled_s = stall(o, moving.unwrap_or(overall));
    if let Some((fit, seen, total)) = o.cost {
        return Some(costed(o, &fit, seen, total, moving, overall, stalled_s));
    }
    // Each measure of the work gives a fraction left; the slower-looking one is not assumed
    // away: both bound the interval.
    let mut fractions = vec![left_fraction(o.docs)];
    if let Some(b) = o.bytes.filter(|b| b.total > 0.0) {
        fractions.push(left_fraction(b));
    }
    let (fmin, fmax) = min_max(&fractions);
    if fmax <= 0.0 {
        return Some(Eta {
            left_s: 0.0,
            low_s: 0.0,
            high_s: 0.0,
            moving_per_s: moving,
            overall_per_s: overall,
            stalled_s,
        });
    }
    let total = o.docs.total;
    // Rates in documents per second of the whole work's documents.
    let mut rates = vec![overall];
    rates.extend(moving);
    let spread_sq = evidence_sq(done, o.window_docs, fmax, o.horizon);
    let (rates, spread_sq) = with_prior(rates, spread_sq, o.prior, done);
    let (mut rmin, mut rmax) = min_max(&rates);
    let point_rate = rates.last().copied().unwrap_or(overall);
    // A rate that has been falling (a repository slowing as it fills) or rising (its first
    // minutes held the folders, or a server still warming) goes on: the trend candidate
    // bounds the interval on its side.
    if let Some(tr) = moving.and_then(|m| trend_rate(done, overall, m, fmax * total)) {
        (rmin, rmax) = (rmin.min(tr), rmax.max(tr));
    }
    let k = (Z95 * spread_sq.sqrt()).exp();
    let left_s = fmax * total / point_rate + stalled_s;
    let low_s = fmin * total / rmax / k;
    let high_s = fmax * total / rmin * k + GOTT95 * stalled_s;
    Some(Eta::around(
        left_s, low_s, high_s, moving, overall, stalled_s,
    ))
}

impl Eta {
    /// An ETA whose bounds are kept on either side of its point.
    fn around(
        left_s: f64,
        low_s: f64,
        high_s: f64,
        moving_per_s: Option<f64>,
        overall_per_s: f64,
        stalled_s: f64,
    ) -> Eta {
        Eta {
            left_s,
            low_s: low_s.min(left_s),
            high_s: high_s.max(left_s),
            moving_per_s,
            overall_per_s,
            stalled_s,
        }
    }
}

/// The ETA of a corpus import from its fitted cost: the work left (documents, folders,
/// bytes) at the recent window's level is the point; at the whole run's level, and with the
/// level going on changing as it did from the first half to the window (a repository
/// slowing as it fills, a server warming), the other candidates; the interval spans them,
/// widened by the evidence term.
fn costed(
    o: &Observed,
    fit: &CostFit,
    seen: Counts,
    total: Counts,
    moving: Option<f64>,
    overall: f64,
    stalled_s: f64,
) -> Eta {
    let left = seen.left_of(total);
    // The work left at the recent level, the cost per document going on rising as it has
    // (a repository slowing as it fills): the point. The candidates that bound it: the same
    // with the rise 3 standard errors slower (down to stopping now) and faster, and the whole
    // run's level (a recent swing that passes).
    let grows = fit.seconds_growing(seen.docs, left);
    let p = grows;
    let now = grows * fit.level_now;
    let (lo, hi) = (
        (fit.growth - GROWTH_SE_K * fit.growth_se).max(0.0),
        fit.growth + GROWTH_SE_K * fit.growth_se,
    );
    let times = [
        grows,
        fit.seconds_growing_by(seen.docs, left, lo) * fit.level_now,
        fit.seconds_growing_by(seen.docs, left, hi) * fit.level_now,
        now,
    ];
    let done_fraction = fit.work_done_s / (fit.work_done_s + p).max(1e-9);
    let spread_sq = evidence_sq(o.docs.done, o.window_docs, 1.0 - done_fraction, o.horizon);
    // A prior rate (documents per second) as a time for the documents left.
    let prior = o
        .prior
        .filter(|(r, _)| *r > 0.0 && left.docs > 0.0)
        .map(|(r, sd)| (r / left.docs, sd));
    let speeds: Vec<f64> = times.iter().map(|t| 1.0 / t.max(1e-9)).collect();
    let (speeds, spread_sq) = with_prior(speeds, spread_sq, prior, o.docs.done);
    let point = 1.0 / speeds.last().copied().unwrap_or(1.0 / now.max(1e-9));
    let (smin, smax) = min_max(&speeds);
    // The swing is the stretch left's own: no prior rate knows it.
    let k = (Z95 * (spread_sq + o.swing.map_or(0.0, |s| s * s)).sqrt()).exp();
    let left_s = if p > 0.0 { point + stalled_s } else { 0.0 };
    let (low_s, high_s) = if p > 0.0 {
        (1.0 / smax / k, 1.0 / smin * k + GOTT95 * stalled_s)
    } else {
        (0.0, 0.0)
    };
    Eta::around(left_s, low_s, high_s, moving, overall, stalled_s)
}

/// The mean rate over the `left` documents still to do if the cost per document goes on
/// changing as it has: a cost linear in the documents done (`a + b n`, as a repository whose
/// every create scans what it holds) has the whole run's mean cost at `done / 2` and the
/// moving window's at `done`, so `b = 2 (c_moving - c_overall) / done`, and the work left
/// costs `left (c_moving + b left / 2)`. None when it would not be a rate (a cost below 0).
fn trend_rate(done: f64, overall: f64, moving: f64, left: f64) -> Option<f64> {
    if done <= 0.0 || overall <= 0.0 || moving <= 0.0 || left <= 0.0 {
        return None;
    }
    let (c_all, c_now) = (1.0 / overall, 1.0 / moving);
    let b = 2.0 * (c_now - c_all) / done;
    // The cost at the end of the work stays above a tenth of today's: a rate that rose
    // through the folders does not rise for ever.
    let c_end = (c_now + b * left).max(0.1 * c_now);
    let mean_cost = (c_now + c_end) / 2.0;
    (mean_cost > 0.0).then(|| 1.0 / mean_cost)
}

fn left_fraction(w: Work) -> f64 {
    if w.total <= 0.0 {
        return 0.0;
    }
    ((w.total - w.done) / w.total).clamp(0.0, 1.0)
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        })
}

/// The squared relative spread (log scale) of the rate from the evidence: counting noise of
/// the whole run and of the window, and the horizon still to run.
fn evidence_sq(done: f64, window_docs: f64, left_fraction: f64, horizon: Option<f64>) -> f64 {
    let counting = 1.0 / done
        + if window_docs > 0.0 {
            1.0 / window_docs
        } else {
            0.0
        };
    let done_fraction = (1.0 - left_fraction).max(1e-9);
    let h = horizon.unwrap_or(HORIZON);
    counting + h * h * left_fraction / done_fraction
}

/// A prior rate joins the measured ones, weighted against the measured spread; the point
/// rate (the last) becomes their inverse-variance mean in log space.
fn with_prior(
    mut rates: Vec<f64>,
    measured_sq: f64,
    prior: Option<(f64, f64)>,
    done: f64,
) -> (Vec<f64>, f64) {
    let Some((rate, sd)) = prior.filter(|(r, sd)| *r > 0.0 && *sd > 0.0 && done > 0.0) else {
        return (rates, measured_sq);
    };
    let point = *rates.last().expect("a measured rate");
    let (wp, wm) = (1.0 / (sd * sd), 1.0 / measured_sq);
    let mean = (wp * rate.ln() + wm * point.ln()) / (wp + wm);
    // The prior narrows the spread, but a measured rate far from it keeps the interval
    // spanning both (as drift does).
    let blended = mean.exp();
    rates.retain(|r| (r.ln() - mean).abs() * wm.sqrt() > 0.5);
    rates.push(blended);
    (rates, 1.0 / (wp + wm))
}

/// Seconds counted as a stall: the time since the last completion beyond what the rate
/// explains (ten expected gaps, and at least 2 s), else 0.
fn stall(o: &Observed, rate: f64) -> f64 {
    let expected_gap = if rate > 0.0 {
        1.0 / rate
    } else {
        f64::INFINITY
    };
    let grace = (10.0 * expected_gap).max(2.0);
    if o.since_last_s > grace {
        o.since_last_s
    } else {
        0.0
    }
}

/// What a progress timer keeps to fill [`Observed`]: a sample of the documents done about
/// once a second over the moving window, when the work started (the last time nothing was
/// done) and when the count last moved. Times are seconds on the caller's clock.
#[derive(Debug, Clone)]
pub struct Tracker {
    window_s: f64,
    started: f64,
    last_change: f64,
    last_done: f64,
    samples: std::collections::VecDeque<(f64, f64)>,
    /// Every count seen, about one a second (thinned to every other past [`HISTORY`]), for
    /// the cost fit.
    history: Vec<(f64, Counts)>,
    last_counts: Counts,
}

/// Samples of the history kept at most (a day at one a second would be 86,400).
const HISTORY: usize = 2048;

impl Tracker {
    /// A tracker with a moving window of `window_s` seconds, started at `t`.
    pub fn new(window_s: f64, t: f64) -> Tracker {
        Tracker {
            window_s,
            started: t,
            last_change: t,
            last_done: 0.0,
            samples: std::collections::VecDeque::with_capacity(window_s as usize + 2),
            history: Vec::new(),
            last_counts: Counts::default(),
        }
    }

    /// The count `done` seen at `t` (call it on a timer; one sample a second is kept).
    pub fn observe(&mut self, t: f64, done: f64) {
        self.observe_counts(
            t,
            Counts {
                docs: done,
                ..Counts::default()
            },
        );
    }

    /// The documents, folders and bytes done by `t` (a corpus import's progress).
    pub fn observe_counts(&mut self, t: f64, c: Counts) {
        let done = c.docs;
        self.last_counts = c;
        if done <= 0.0 {
            self.started = t;
            self.history.clear();
        }
        if self.history.last().is_none_or(|(ht, _)| t - ht >= 1.0) {
            self.history.push((t, c));
            if self.history.len() >= HISTORY {
                // Every other sample, the first and the last kept.
                let last = self.history[self.history.len() - 1];
                let mut k = 0;
                self.history.retain(|_| {
                    k += 1;
                    k % 2 == 1
                });
                if self.history.last() != Some(&last) {
                    self.history.push(last);
                }
            }
        }
        if done != self.last_done {
            self.last_change = t;
            self.last_done = done;
        }
        if self.samples.back().is_none_or(|(bt, _)| t - bt >= 1.0) {
            self.samples.push_back((t, done));
        }
        // The oldest sample kept is the last one at or before the window's start.
        while self.samples.len() > 1 && self.samples[1].0 <= t - self.window_s {
            self.samples.pop_front();
        }
    }

    /// What was seen by `t`, against `total` documents (and `bytes`, when known).
    pub fn observed(&self, t: f64, total: f64, bytes: Option<Work>) -> Observed {
        let (ft, fd) = self.samples.front().copied().unwrap_or((self.started, 0.0));
        let ft = ft.max(self.started);
        Observed {
            docs: Work {
                done: self.last_done,
                total,
            },
            bytes,
            elapsed_s: t - self.started,
            window_docs: (self.last_done - fd).max(0.0),
            window_s: t - ft,
            since_last_s: t - self.last_change,
            prior: None,
            cost: None,
            horizon: None,
            swing: None,
        }
    }

    /// What was seen by `t` of a work whose whole is `total` (documents, folders, bytes:
    /// a folder or byte total of 0 leaves that term out), with its cost fitted.
    pub fn observed_work(&self, t: f64, total: Counts) -> Observed {
        let bytes = (total.bytes > 0.0).then_some(Work {
            done: self.last_counts.bytes,
            total: total.bytes,
        });
        let mut o = self.observed(t, total.docs, bytes);
        let mut hist = self.history.clone();
        if hist.last().is_some_and(|(ht, _)| *ht < t) {
            hist.push((t, self.last_counts));
        }
        let fit = cost_of(
            &hist,
            self.started,
            (total.folders > 0.0, total.bytes > 0.0),
            total.docs,
        );
        o.horizon = fit
            .as_ref()
            .and_then(|(f, _)| read_horizon(&hist, self.started, total, f));
        o.swing = fit.as_ref().and_then(|(f, seen)| {
            let left_s = f.seconds_growing(seen.docs, seen.left_of(total)) * f.level_now;
            read_swing(&hist, self.started, f, left_s)
        });
        o.cost = fit.map(|(f, seen)| (f, seen, total));
        o
    }
}

/// The cost fitted over `hist` (its last sample now), with its last counts; the recent level
/// read over the last quarter of the run: it then never overlaps the first half, which the
/// trend is drawn from (a 30-s window early in a run would).
fn cost_of(
    hist: &[(f64, Counts)],
    started: f64,
    (folders, bytes): (bool, bool),
    total_docs: f64,
) -> Option<(CostFit, Counts)> {
    let &(t, last) = hist.last()?;
    let recent = ((t - started) / 4.0).max(2.0);
    let lever = ((total_docs - last.docs) / last.docs.max(1.0)).max(1.0);
    let min_t = GROWTH_MIN_T * lever.sqrt();
    super::eta_fit::fit(hist, folders, bytes, recent, min_t).map(|f| (f, last))
}

/// Progress samples a look back needs before its checkpoint (about one a second).
const MIN_LOOK_BACK: usize = 4;

/// The horizon term read from the work's own past, with the cost `fit` over all of it. At a
/// checkpoint the ETA would have carried on the level of the last quarter before it (the
/// run's seconds over what the fit says its work cost); the level the work since ran at
/// differs by a factor, and that factor per `√(left/done)` of the look back is how far the
/// rest may stray from what was seen. Two checkpoints: one as far back, relative to the work
/// done, as the work left is ahead (its `left/done` now's), and half-way (more evidence, a
/// shorter reach). The larger miss counts, times [`LOOK_BACK_FACTOR`] (one miss is a small
/// sample of a spread), kept within [`HORIZON_FLOOR`] and [`HORIZON_CAP`], then pooled with
/// the default [`HORIZON`] (the root of their squares' mean): one or two misses are a small
/// sample, and read alone they made the interval too narrow where the early pace looked
/// steady and then stepped (InMemory's heap) and too wide where it wandered early (a CPU
/// quota). Replayed (docs/calibration.md, "the horizon pooled"), pooling moved the median
/// half-width at a quarter from ±132 % to ±90 % over the 55 imports it was chosen on (54 →
/// 53 inside; at half 51 → 52); over 22 it was not, the nine behind mod_jk went from ±90 %
/// to ±66 % (9 of 9 inside either way) and InMemory's thirteen from 8 to 11 inside.
/// None before a checkpoint has [`MIN_LOOK_BACK`] samples behind it (the default then holds).
fn read_horizon(hist: &[(f64, Counts)], started: f64, total: Counts, fit: &CostFit) -> Option<f64> {
    let &(t, now) = hist.last()?;
    if now.docs <= 0.0 || total.docs <= 0.0 {
        return None;
    }
    let mut worst: Option<f64> = None;
    for q in [(now.docs / total.docs).min(0.5), 0.5] {
        let k = hist.partition_point(|(_, c)| c.docs < q * now.docs);
        if k < MIN_LOOK_BACK || k + 1 >= hist.len() {
            continue;
        }
        let (tq, cq) = hist[k];
        if cq.docs <= 0.0 || cq.docs >= now.docs {
            continue;
        }
        // The level the ETA would have carried on from (the last quarter before the
        // checkpoint), against the level the work since ran at.
        let from = (tq - (tq - started) / 4.0).min(hist[k - MIN_LOOK_BACK].0);
        let before = fit.level_between(hist, from, tq);
        let after = fit.level_between(hist, tq, t);
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        let reach = (now.docs - cq.docs) / cq.docs;
        let miss = (after / before).ln().abs() / reach.sqrt();
        worst = Some(worst.map_or(miss, |w: f64| w.max(miss)));
    }
    worst.map(|m| {
        let own = (LOOK_BACK_FACTOR * m).clamp(HORIZON_FLOOR, HORIZON_CAP);
        ((own * own + HORIZON * HORIZON) / 2.0).sqrt()
    })
}

/// The swing of the level over stretches of `left_s` seconds in the work's own past (at least
/// [`SWING_MIN_S`] and [`SWING_MIN_SAMPLES`] of the history's mean spacing): the sample
/// standard deviation of the log of `fit`'s level over each stretch, the stretches stepped a
/// quarter of their length (or more: about [`SWING_STRETCHES`]) from [`SWING_SKIP`] of the
/// run to now. None until the run spans 1.5 stretches (and two fit past its start): early,
/// the time left is long against the swings and the horizon term holds it. The time left's
/// mean rate strays from the level carried on as much as a past stretch of its length
/// strayed from the others, and more while the past holds few such stretches: the stretch
/// left is a new one, and the past's `n` (its span over the stretch's length; overlapping
/// stretches are not independent) read their spread about their own mean, so the variance
/// is widened by `(n + 1) / (n − 1)` (a prediction's; n ≥ 1.35 by the 1.5-stretch gate: at
/// 70 % done n is about 2, ×1.7 in spread; at 90 % about 8, ×1.13). No factor fitted:
/// replayed, docs/calibration.md, "the swing read as a prediction".
fn read_swing(hist: &[(f64, Counts)], started: f64, fit: &CostFit, left_s: f64) -> Option<f64> {
    let (&(t0, _), &(t, _)) = (hist.first()?, hist.last()?);
    let spacing = (t - t0) / (hist.len().max(2) - 1) as f64;
    let len = left_s.max(SWING_MIN_S).max(SWING_MIN_SAMPLES * spacing);
    let from = started + SWING_SKIP * (t - started);
    if !left_s.is_finite() || left_s <= 0.0 || t - started < 1.5 * len {
        return None;
    }
    let step = (len / 4.0).max((t - from - len) / SWING_STRETCHES);
    let mut logs = Vec::new();
    let mut a = from;
    while a + len <= t + 1e-9 {
        let (i, j) = (
            hist.partition_point(|(ht, _)| *ht < a),
            hist.partition_point(|(ht, _)| *ht <= a + len),
        );
        if let Some(l) = fit
            .level_between(&hist[i..j], a, a + len)
            .filter(|l| *l > 0.0 && l.is_finite())
        {
            logs.push(l.ln());
        }
        a += step;
    }
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    // At least 1.35 by the gate above (the first tenth left out of 1.5 stretches); kept
    // there should either change, so that the widening stays finite.
    let independent = ((t - from) / len).max(1.35);
    Some((var * (independent + 1.0) / (independent - 1.0)).sqrt()).filter(|s| s.is_finite())
}

/// `ETA 3m10s (2m40s–3m55s)`, or `ETA ?` before the first completion.
pub fn eta_text(e: Option<&Eta>) -> String {
    match e {
        Some(e) => format!(
            "ETA {} ({}–{})",
            short_duration(e.left_s),
            short_duration(e.low_s),
            short_duration(e.high_s)
        ),
        None => "ETA ?".into(),
    }
}

/// A sweep's ETA: the runs left times the finished runs' mean duration, plus what is left of
/// the current run, with the spread of the durations seen (and the evidence term of
/// [`eta`]); the upper bound never passes what is left of `--budget`. None before the first
/// run has finished.
pub fn sweep_eta(
    run_durations_s: &[f64],
    runs_left: usize,
    current_elapsed_s: f64,
    budget_left_s: Option<f64>,
) -> Option<Eta> {
    let n = run_durations_s.len();
    if n == 0 {
        return None;
    }
    let mean = run_durations_s.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return None;
    }
    let sd = if n > 1 {
        (run_durations_s
            .iter()
            .map(|d| (d - mean).powi(2))
            .sum::<f64>()
            / (n - 1) as f64)
            .sqrt()
    } else {
        mean * 0.5
    };
    let current_left = (mean - current_elapsed_s).max(0.0);
    let left = runs_left.saturating_sub(1) as f64 * mean + current_left;
    let runs = runs_left.max(1) as f64;
    // The sum of `runs` durations: sd √runs; and the horizon term over runs done vs left.
    let rel = ((sd / mean).powi(2) / runs + HORIZON * HORIZON * runs / n as f64).sqrt();
    let k = (Z95 * rel).exp();
    let mut high = left * k;
    let mut left_s = left;
    if let Some(b) = budget_left_s {
        high = high.min(b.max(0.0));
        left_s = left_s.min(high);
    }
    Some(Eta {
        left_s,
        low_s: (left / k).min(left_s),
        high_s: high.max(left_s),
        moving_per_s: None,
        overall_per_s: n as f64 / run_durations_s.iter().sum::<f64>(),
        stalled_s: 0.0,
    })
}

/// The schedule's runs as they go, for the ETA of work whose documents are not known ahead:
/// set by the engine between runs, read on the progress timer.
#[derive(Debug, Default, Clone)]
pub struct RunsSoFar {
    /// Wall-clock seconds of each run finished in this invocation (warm-up included).
    pub durations_s: Vec<f64>,
    /// Runs left, the one under way included.
    pub left: usize,
    /// When the run under way started.
    pub current: Option<std::time::Instant>,
    /// When `--budget` runs out.
    pub budget_end: Option<std::time::Instant>,
}

impl RunsSoFar {
    /// At `now`: the runs left at the mean wall time of those done, capped by the budget
    /// left ([`sweep_eta`]); `None` before the first run has finished.
    pub fn eta(&self, now: std::time::Instant) -> Option<Eta> {
        let current = self
            .current
            .map_or(0.0, |s| now.saturating_duration_since(s).as_secs_f64());
        let budget = self
            .budget_end
            .map(|e| e.saturating_duration_since(now).as_secs_f64());
        sweep_eta(&self.durations_s, self.left, current, budget)
    }
}

/// The ETA an import's progress line showed when a share of its documents was done, and
/// the seconds that were actually left: [`replay`]'s answer, the ETA's calibration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replayed {
    /// The share of the documents done (the first progress sample at or past it).
    pub done_fraction: f64,
    /// Seconds since the start at that sample.
    pub t_s: f64,
    pub eta: Eta,
    /// Seconds the import actually ran after that sample.
    pub actual_left_s: f64,
}

impl Replayed {
    /// The interval covered the actual end.
    pub fn covers(&self) -> bool {
        self.eta.low_s <= self.actual_left_s && self.actual_left_s <= self.eta.high_s
    }
}

/// An import's progress replayed through the progress line's [`Tracker`] (moving window
/// `window_s`): `(t_s, counts)` in time order from its start to its end (a run's timeline),
/// the last the whole work, and the ETA at each share of `fractions` of its documents, with
/// the seconds that were left.
/// Bytes count as a second measure of the work when the import carried any (a corpus), and
/// `prior` is an estimate's rate (docs/s and its relative spread), as the live line uses them.
pub fn replay(
    points: &[(f64, Counts)],
    fractions: &[f64],
    window_s: f64,
    prior: Option<(f64, f64)>,
) -> Vec<Replayed> {
    let Some(&(end, total)) = points.last() else {
        return Vec::new();
    };
    let mut tracker = Tracker::new(window_s, points[0].0);
    let mut out = Vec::new();
    let mut next = fractions.iter().copied().peekable();
    // The live line samples every 100 ms; a timeline has a point every 0.3-1 s, and every
    // point is a moment the line could have shown.
    for &(t, done) in points {
        tracker.observe_counts(t, done);
        while let Some(f) = next.peek().copied() {
            if done.docs < f * total.docs || done.docs <= 0.0 {
                break;
            }
            next.next();
            let mut seen = tracker.observed_work(t, total);
            seen.prior = prior;
            if let Some(eta) = eta(&seen) {
                out.push(Replayed {
                    done_fraction: f,
                    t_s: t,
                    eta,
                    actual_left_s: end - t,
                });
            }
        }
    }
    out
}

/// `3m10s`, `45s`, `2h05m`: seconds the way a progress line shows them.
pub fn short_duration(s: f64) -> String {
    if !s.is_finite() {
        return "?".into();
    }
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a timer sees at `t` of work arriving at `rate(t)` docs/s, total `total`.
    fn seen(total: f64, t: f64, rate: impl Fn(f64) -> f64) -> (Observed, f64) {
        let dt = 0.1;
        let (mut done, mut window) = (0.0, 0.0);
        for i in 0..(t / dt).round() as u64 {
            let tt = i as f64 * dt;
            let d = rate(tt) * dt;
            done += d;
            if tt >= t - 30.0 {
                window += d;
            }
        }
        // The true end from here at the rate that holds from now on.
        // (At most a million steps: a rate of 0 has no end.)
        let (mut left, mut end) = (total - done, t);
        for _ in 0..1_000_000 {
            if left <= 0.0 {
                break;
            }
            left -= rate(end) * dt;
            end += dt;
        }
        (
            Observed {
                docs: Work {
                    done: done.round(),
                    total,
                },
                bytes: None,
                elapsed_s: t,
                window_docs: window.round(),
                window_s: t.min(30.0),
                since_last_s: 0.1,
                prior: None,
                cost: None,
                horizon: None,
                swing: None,
            },
            end - t,
        )
    }

    fn covers(e: &Eta, truth: f64) -> bool {
        e.low_s <= truth && truth <= e.high_s
    }

    #[test]
    fn a_constant_rate_narrows_and_covers() {
        let mut widths = Vec::new();
        for frac in [0.05, 0.1, 0.25, 0.5, 0.9] {
            let t = frac * 10_000.0 / 40.0;
            let (o, truth) = seen(10_000.0, t, |_| 40.0);
            let e = eta(&o).unwrap();
            assert!(covers(&e, truth), "{frac}: {e:?} vs {truth}");
            assert!((e.left_s - truth).abs() / truth < 0.02, "{e:?} vs {truth}");
            widths.push(e.rel_half_width());
        }
        assert!(widths.windows(2).all(|w| w[1] < w[0]), "{widths:?}");
        // Early: wide; late: narrow.
        assert!(widths[0] > 0.5, "{widths:?}");
        assert!(widths[4] < 0.2, "{widths:?}");
    }

    #[test]
    fn a_rate_that_halves_widens_and_covers_the_new_end() {
        let total = 20_000.0;
        let (steady, _) = seen(total, 250.0, |_| 40.0);
        let before = eta(&steady).unwrap().rel_half_width();
        let halved = |t: f64| if t < 200.0 { 40.0 } else { 20.0 };
        let (o, truth) = seen(total, 250.0, halved);
        let e = eta(&o).unwrap();
        assert!(covers(&e, truth), "{e:?} vs {truth}");
        assert!(e.rel_half_width() > before, "{e:?} vs {before}");
        assert!(e.moving_per_s.unwrap() < e.overall_per_s);
    }

    #[test]
    fn a_stall_widens_and_the_end_moves_out() {
        let (mut o, _) = seen(10_000.0, 125.0, |_| 40.0);
        let flowing = eta(&o).unwrap();
        assert_eq!(flowing.stalled_s, 0.0);
        o.since_last_s = 20.0;
        o.window_docs = (o.window_docs * 10.0 / 30.0).round();
        let stalled = eta(&o).unwrap();
        assert_eq!(stalled.stalled_s, 20.0);
        assert!(stalled.high_s > flowing.high_s + 39.0 * 19.0, "{stalled:?}");
        assert!(stalled.left_s > flowing.left_s, "{stalled:?}");
        assert!(stalled.rel_half_width() > flowing.rel_half_width());
    }

    #[test]
    fn nothing_done_gives_no_eta_and_done_gives_zero() {
        let (mut o, _) = seen(1_000.0, 10.0, |_| 0.0);
        assert_eq!(eta(&o), None);
        o.docs.done = 1_000.0;
        assert_eq!(eta(&o).unwrap().high_s, 0.0);
    }

    #[test]
    fn bytes_left_that_lag_the_documents_widen_the_interval() {
        let (mut o, truth) = seen(10_000.0, 100.0, |_| 40.0);
        let docs_only = eta(&o).unwrap();
        // The big files are still to come: 40 % of the documents, 10 % of the bytes done.
        o.bytes = Some(Work {
            done: 1e9,
            total: 1e10,
        });
        let e = eta(&o).unwrap();
        assert!(e.high_s > docs_only.high_s);
        assert!(covers(&e, truth));
    }

    #[test]
    fn a_prior_narrows_early_and_matters_less_later() {
        let (mut early, _) = seen(10_000.0, 25.0, |_| 40.0);
        let without = eta(&early).unwrap().rel_half_width();
        early.prior = Some((40.0, 0.1));
        let with = eta(&early).unwrap().rel_half_width();
        assert!(with < without, "{with} vs {without}");
        let (mut late, _) = seen(10_000.0, 200.0, |_| 40.0);
        let late_without = eta(&late).unwrap().rel_half_width();
        late.prior = Some((40.0, 0.1));
        let late_with = eta(&late).unwrap().rel_half_width();
        assert!(
            (late_without - late_with) / late_without < (without - with) / without,
            "{late_with} {late_without} {with} {without}"
        );
    }

    #[test]
    fn a_sweep_counts_its_runs_and_its_budget_caps_the_end() {
        let e = sweep_eta(&[60.0, 62.0, 58.0], 3, 10.0, None).unwrap();
        assert!((e.left_s - (2.0 * 60.0 + 50.0)).abs() < 1e-9, "{e:?}");
        assert!(e.low_s < e.left_s && e.left_s < e.high_s);
        let capped = sweep_eta(&[60.0, 62.0, 58.0], 3, 10.0, Some(100.0)).unwrap();
        assert_eq!(capped.high_s, 100.0);
        assert!(capped.left_s <= 100.0);
        assert_eq!(sweep_eta(&[], 3, 0.0, None), None);
    }

    #[test]
    fn a_tracker_keeps_the_window_and_the_start() {
        let mut tr = Tracker::new(30.0, 0.0);
        // Setup for 5 s, then 10 docs/s; sampled every 100 ms.
        for i in 0..=650 {
            let t = i as f64 / 10.0;
            tr.observe(t, ((t - 5.0).max(0.0) * 10.0).floor());
        }
        let o = tr.observed(65.0, 1_000.0, None);
        assert!((o.elapsed_s - 60.0).abs() <= 0.11, "{o:?}");
        assert!((o.window_s - 30.0).abs() <= 1.0, "{o:?}");
        assert!((o.window_docs / o.window_s - 10.0).abs() < 0.5, "{o:?}");
        assert!(o.since_last_s < 0.2);
        assert!(tr.samples.len() <= 32);
        let e = eta(&o).unwrap();
        assert!((e.left_s - 40.0).abs() < 2.0, "{e:?}");
        assert!(
            eta_text(Some(&e)).starts_with("ETA 4"),
            "{}",
            eta_text(Some(&e))
        );
        assert_eq!(eta_text(None), "ETA ?");
    }

    #[test]
    fn durations_read_short() {
        assert_eq!(short_duration(45.4), "45s");
        assert_eq!(short_duration(190.0), "3m10s");
        assert_eq!(short_duration(7_500.0), "2h05m");
        assert_eq!(short_duration(f64::INFINITY), "?");
    }

    /// A replayed import at a constant rate: the ETA at each share is the time left.
    #[test]
    fn a_replayed_steady_import_covers_its_end_at_each_share() {
        let points: Vec<(f64, Counts)> = (0..=500)
            .map(|i| {
                let t = i as f64 * 0.5;
                let c = Counts {
                    docs: 40.0 * t,
                    folders: (4.0 * t).min(200.0),
                    bytes: 4_000.0 * t,
                };
                (t, c)
            })
            .collect();
        let r = replay(&points, &[0.1, 0.25, 0.5], 30.0, None);
        assert_eq!(r.len(), 3, "{r:?}");
        for p in &r {
            assert!(p.covers(), "{p:?}");
            assert!((p.eta.left_s - p.actual_left_s).abs() <= 1.0, "{p:?}");
        }
        assert!(
            r[0].eta.rel_half_width() > r[2].eta.rel_half_width(),
            "{r:?}"
        );
    }

    /// An import whose cost per document rises with what the repository holds (1 ms + 0.1 ms
    /// per 1,000 documents held, 5,000 held before it), its folders first: replayed, the ETA
    /// covers the end at each share, and at a quarter its point is nearer the truth than the
    /// recent level alone (which assumes the slowing stops).
    #[test]
    fn a_replayed_import_that_slows_as_it_fills_is_costed_with_its_trend() {
        let (mut t, mut c) = (0.0, Counts::default());
        let mut points = vec![(0.0, c)];
        for i in 0..20_000u64 {
            let folder = if i < 2_000 && i % 4 == 0 { 1.0 } else { 0.0 };
            t += 0.001 * (1.0 + 0.1 * (5_000 + i) as f64 / 1_000.0) + 0.003 * folder;
            c.docs += 1.0;
            c.folders += folder;
            c.bytes += 10_000.0;
            if i % 50 == 0 || i == 19_999 {
                points.push((t, c));
            }
        }
        let r = replay(&points, &[0.1, 0.25, 0.5], 30.0, None);
        assert_eq!(r.len(), 3, "{r:?}");
        for p in &r {
            assert!(p.covers(), "{p:?}");
        }
        let q = &r[1];
        assert!((q.eta.left_s / q.actual_left_s - 1.0).abs() < 0.1, "{q:?}");
    }

    /// An import of `n` documents whose `i`th costs `cost(i)` seconds, sampled once a second
    /// (as the tracker keeps its history), with a folder per 10 documents among the first
    /// 2,000 and 10 kB a document.
    fn import_costing(n: u64, cost: impl Fn(u64) -> f64) -> Vec<(f64, Counts)> {
        let (mut t, mut c) = (0.0, Counts::default());
        let mut points = vec![(0.0, c)];
        for i in 0..n {
            let folder = if i < 2_000 && i % 10 == 0 { 1.0 } else { 0.0 };
            t += cost(i) + 0.01 * folder;
            c.docs += 1.0;
            c.folders += folder;
            c.bytes += 10_000.0;
            if t - points[points.len() - 1].0 >= 1.0 || i + 1 == n {
                points.push((t, c));
            }
        }
        points
    }

    /// The horizon an import reads from its own past when `share` of it is done.
    fn horizon_at(points: &[(f64, Counts)], share: f64) -> Option<f64> {
        let total = points[points.len() - 1].1;
        let mut tr = Tracker::new(30.0, 0.0);
        for &(t, c) in points {
            tr.observe_counts(t, c);
            if c.docs >= share * total.docs {
                return tr.observed_work(t, total).horizon;
            }
        }
        None
    }

    /// An import that held its pace reads a narrow horizon from its own past (its floor,
    /// pooled with the default: 0.076) and shows a narrow interval at a quarter that holds
    /// its end; one whose pace wandered (a server slowing and recovering every few minutes)
    /// reads a wide one, and its interval holds its end too.
    #[test]
    fn the_horizon_is_read_from_the_imports_own_past() {
        let steady = import_costing(20_000, |_| 0.01);
        let wandering = import_costing(20_000, |i| {
            0.01 * (1.0 + 0.6 * (i as f64 * std::f64::consts::TAU / 3_000.0).sin())
        });
        let (hs, hw) = (
            horizon_at(&steady, 0.25).unwrap(),
            horizon_at(&wandering, 0.25).unwrap(),
        );
        assert!(hs <= 0.08, "{hs}");
        assert!(hw > 2.0 * hs, "{hw} vs {hs}");
        let at = |p: &[(f64, Counts)]| replay(p, &[0.25], 30.0, None)[0];
        let (s, w) = (at(&steady), at(&wandering));
        assert!(s.covers() && w.covers(), "{s:?} {w:?}");
        assert!(s.eta.rel_half_width() <= 0.3, "{s:?}");
        assert!(
            w.eta.rel_half_width() > s.eta.rel_half_width(),
            "{w:?} vs {s:?}"
        );
        // Too early to look back: the default horizon.
        assert_eq!(horizon_at(&steady, 0.002), None);
    }

    /// An import whose pace swings slowly (±50 % over 80 s: a disk's writeback, a run of large
    /// files): late in it the time left is half a swing, whose mean rate is not the level
    /// carried on. The horizon term alone (shrinking with `left / done`) misses the end at some
    /// of 70-85 % done; with the swing read from the run's past the interval holds it at each.
    /// Early, the past holds no stretch as long as the time left: no swing. A steady import
    /// reads next to none.
    #[test]
    fn late_in_a_swinging_import_the_swing_holds_the_end() {
        let swinging = import_costing(20_000, |i| {
            0.01 * (1.0 + 0.5 * (i as f64 * std::f64::consts::TAU / 8_000.0).sin())
        });
        let (end, total) = swinging[swinging.len() - 1];
        let mut tr = Tracker::new(30.0, 0.0);
        let mut shares = vec![0.25, 0.7, 0.75, 0.8, 0.85];
        shares.reverse();
        let (mut with, mut without) = (0, 0);
        for &(t, c) in &swinging {
            tr.observe_counts(t, c);
            let Some(&f) = shares.last() else { break };
            if c.docs < f * total.docs {
                continue;
            }
            shares.pop();
            let o = tr.observed_work(t, total);
            if f < 0.5 {
                assert_eq!(o.swing, None, "{o:?}");
                continue;
            }
            assert!(o.swing.is_some_and(|s| s > 0.05 && s < 0.6), "{f}: {o:?}");
            let truth = end - t;
            with += usize::from(covers(&eta(&o).unwrap(), truth));
            let alone = Observed { swing: None, ..o };
            without += usize::from(covers(&eta(&alone).unwrap(), truth));
        }
        assert_eq!(with, 4);
        assert!(without < 4, "{without}");
        // A steady import reads next to no swing, and its late interval stays narrow.
        let steady = import_costing(20_000, |_| 0.01);
        let (end, total) = steady[steady.len() - 1];
        let mut tr = Tracker::new(30.0, 0.0);
        for &(t, c) in &steady {
            tr.observe_counts(t, c);
            if c.docs >= 0.8 * total.docs {
                let o = tr.observed_work(t, total);
                assert!(o.swing.is_some_and(|s| s < 0.02), "{o:?}");
                let e = eta(&o).unwrap();
                assert!(covers(&e, end - t) && e.rel_half_width() < 0.15, "{e:?}");
                break;
            }
        }
    }

    /// Imports whose pace moves at random from one stretch to the next (each 2,500 documents
    /// at its own level, 1 sd 25 % in log: a known truth that is not the model's): late in
    /// each, the past holds few stretches as long as the time left (at 70 % done about two,
    /// at 90 % about eight), and their spread read as it is reads the next one's low. Read
    /// as a prediction from that few (`read_swing`), the interval held the end of 75, 87 and
    /// 88 of 100 such imports at 70, 80 and 90 % done; the spread as read held 72, 81 and 82.
    /// Still short of 95 %: two or three stretches tell a spread only roughly (the estimate's
    /// own error is not in the interval), which docs/dashboard.md's limits say.
    #[test]
    fn few_past_stretches_widen_the_swing_as_a_prediction() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut uniform = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut held = [0usize; 3];
        for _ in 0..100 {
            let levels: Vec<f64> = (0..8)
                .map(|_| {
                    let z =
                        (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos();
                    (0.25 * z).exp()
                })
                .collect();
            let points = import_costing(20_000, |i| 0.01 * levels[(i / 2_500) as usize]);
            for (k, r) in replay(&points, &[0.7, 0.8, 0.9], 30.0, None)
                .iter()
                .enumerate()
            {
                held[k] += usize::from(r.covers());
            }
        }
        assert!(
            held[0] >= 74 && held[1] >= 85 && held[2] >= 85,
            "{held:?} of 100"
        );
    }

    /// Runs left at the runs' mean wall time, less the part of the current one done, and never
    /// past the budget left.
    #[test]
    fn runs_left_give_the_eta_within_the_budget() {
        use std::time::{Duration, Instant};
        let now = Instant::now() + Duration::from_secs(1000);
        let mut r = RunsSoFar {
            durations_s: vec![60.0, 62.0, 58.0],
            left: 3,
            current: Some(now - Duration::from_secs(10)),
            budget_end: None,
        };
        let e = r.eta(now).unwrap();
        assert!((e.left_s - 170.0).abs() < 1e-6, "{e:?}");
        assert!(e.low_s < e.left_s && e.left_s < e.high_s, "{e:?}");
        r.budget_end = Some(now + Duration::from_secs(100));
        let e = r.eta(now).unwrap();
        assert!(e.high_s <= 100.0 && e.left_s <= 100.0, "{e:?}");
        assert!(RunsSoFar::default().eta(now).is_none());
    }

    /// A tree's folders first and a heavy tail (177,652 files, 14,010 folders, into OpenCMIS
    /// FileShare at 0.2 CPU; docs/data): at a tenth, the fit traded the folders' cost for a
    /// rise per document (t = 3.7) that the rest of the import never showed; carried over
    /// nine times its span, the ETA was 6,098 s for 621 s left, its upper bound 654,244 s.
    /// Carried that far a rise needs t > 9 ([`GROWTH_MIN_T`]).
    #[test]
    fn a_folder_heavy_start_is_not_read_as_a_rise() {
        let v: serde_json::Value = serde_json::from_str(include_str!(
            "../../docs/data/eta-imports-2026-11-29b/big020-fileshare-2/run.json"
        ))
        .unwrap();
        let num = |p: &serde_json::Value, k: &str| p[k].as_f64().unwrap_or(0.0);
        let points: Vec<(f64, Counts)> = v["runs"][0]["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let c = Counts {
                    docs: num(p, "docs") + num(p, "versions"),
                    folders: num(p, "folders"),
                    bytes: num(p, "bytes"),
                };
                (num(p, "t_s"), c)
            })
            .collect();
        let r = replay(&points, &[0.1], 30.0, None);
        let e = &r[0];
        assert!(e.covers(), "{e:?}");
        assert!(e.eta.left_s < 2.5 * e.actual_left_s, "{e:?}");
        assert!(e.eta.high_s < 15.0 * e.actual_left_s, "{e:?}");
    }
}
