//! The terminal's view of long work: the progress bar of a run or sweep, with its ETA and
//! interval (`analysis::eta`) and the moving and whole-run rates, read from the engine's live
//! counters on a timer (never per upload), and the plain bar of `verify`. Hidden when stderr
//! is not a terminal or with --quiet; it must not print results (the commands do).

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::engine::LiveCounters;

/// A plain progress bar for `total` items (hidden when quiet or not on a terminal).
pub fn bar(total: u64, quiet: bool, what: &str) -> Option<indicatif::ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(total);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {prefix} [{elapsed_precise}] {wide_bar} {pos}/{len}  ETA {eta}",
        )
        .expect("template")
        .progress_chars("=> "),
    );
    b.set_prefix(what.to_string());
    Some(b)
}

/// A rate with the precision a reader can use: `2,268 docs/s`, `22.7 docs/s`, `0.84 docs/s`.
pub fn human_rate(per_sec: f64) -> String {
    if !per_sec.is_finite() {
        return "- docs/s".into();
    }
    if per_sec >= 100.0 {
        let n = per_sec.round() as u64;
        let digits = n.to_string();
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{grouped} docs/s")
    } else if per_sec >= 10.0 {
        format!("{per_sec:.1} docs/s")
    } else {
        format!("{per_sec:.2} docs/s")
    }
}

/// The progress bar: reads the live counters on a timer (never per upload), with the ETA
/// and its interval (`analysis::eta`), the moving and the whole-run rate. Hidden when stderr
/// is not a terminal or with --quiet.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    live: Arc<LiveCounters>,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    stop: Arc<tokio::sync::Notify>,
}

/// `ETA 3m10s (2m40s–3m55s) · 412 docs/s now, 398 docs/s overall` (no ETA without a total).
fn eta_line(
    tracker: &crate::analysis::eta::Tracker,
    t: f64,
    total: u64,
    work: Option<crate::analysis::eta::Counts>,
    prior: Option<(f64, f64)>,
    runs_eta: Option<crate::analysis::eta::Eta>,
) -> String {
    use crate::analysis::eta;
    let mut seen = match work {
        Some(w) => tracker.observed_work(t, w),
        None => tracker.observed(t, total as f64, None),
    };
    seen.prior = prior;
    // No document total: the runs left at the wall time of those done (`RunsSoFar`).
    let e = if total == 0 {
        runs_eta
    } else {
        eta::eta(&seen)
    };
    let overall = if seen.elapsed_s > 0.0 {
        seen.docs.done / seen.elapsed_s
    } else {
        f64::NAN
    };
    let now = if seen.window_s > 0.0 {
        seen.window_docs / seen.window_s
    } else {
        f64::NAN
    };
    let rates = format!("{} now, {} overall", human_rate(now), human_rate(overall));
    if total == 0 && e.is_none() {
        return rates;
    }
    let stalled = match e {
        Some(e) if e.stalled_s > 0.0 => format!(" · stalled {}", eta::short_duration(e.stalled_s)),
        _ => String::new(),
    };
    format!("{} · {rates}{stalled}", eta::eta_text(e.as_ref()))
}

impl Progress {
    /// The bar for `total` measured documents; `work`, a corpus import's whole work
    /// (`SweepJob::work_to_do`), lets the ETA cost what is left by documents, folders and bytes.
    pub fn start(
        total: u64,
        work: Option<crate::analysis::eta::Counts>,
        quiet: bool,
        live: Arc<LiveCounters>,
    ) -> Progress {
        live.total.store(total, Ordering::Relaxed);
        if let Ok(mut w) = live.work_total.lock() {
            *w = work;
        }
        let stop = Arc::new(tokio::sync::Notify::new());
        if quiet || !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                live,
                task: std::sync::Mutex::new(None),
                stop,
            };
        }
        // Colours on a terminal only, and never with NO_COLOR (https://no-color.org).
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let (spinner, failed) = if colour {
            ("{spinner:.green}", "{prefix:.red}")
        } else {
            ("{spinner}", "{prefix}")
        };
        // 0: no total known in advance (steady-state runs, --precision): a counter.
        let (bar, template) = if total == 0 {
            (
                indicatif::ProgressBar::no_length(),
                format!(
                    "{spinner} [{{elapsed_precise}}] {{pos}} docs  {{eta_line}}  {failed} {{msg}}"
                ),
            )
        } else {
            (
                indicatif::ProgressBar::new(total),
                format!(
                    "{spinner} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} docs  {{eta_line}}  {failed} {{msg}}"
                ),
            )
        };
        // Computed once a second by the timer below; the template only reads it.
        let shown_eta = Arc::new(std::sync::Mutex::new(String::new()));
        let read_eta = shown_eta.clone();
        bar.set_style(
            indicatif::ProgressStyle::with_template(&template)
                .expect("template")
                .with_key(
                    "eta_line",
                    move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        if let Ok(text) = read_eta.lock() {
                            let _ = w.write_str(&text);
                        }
                    },
                )
                .progress_chars("=> "),
        );
        let s = stop.clone();
        let shown = bar.clone();
        let counters = live.clone();
        let task = tokio::spawn(async move {
            let live = counters;
            let t0 = tokio::time::Instant::now();
            let mut tracker = crate::analysis::eta::Tracker::new(30.0, 0.0);
            let mut costed = false;
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            let mut n = 0u64;
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = s.notified() => break,
                }
                let done = live.done.load(Ordering::Relaxed);
                bar.set_position(done);
                let t = t0.elapsed().as_secs_f64();
                let work = live.work();
                // The import's tally starts after its warm-up: the ETA starts again there.
                if work.is_some() != costed {
                    costed = work.is_some();
                    tracker = crate::analysis::eta::Tracker::new(30.0, t);
                }
                match work {
                    Some((c, _)) => tracker.observe_counts(t, c),
                    None => tracker.observe(t, done as f64),
                }
                if n.is_multiple_of(10) {
                    let line = eta_line(
                        &tracker,
                        t,
                        live.total.load(Ordering::Relaxed),
                        work.map(|w| w.1),
                        live.eta_prior(),
                        live.runs_eta(),
                    );
                    if let Ok(mut e) = shown_eta.lock() {
                        *e = line;
                    }
                }
                n += 1;
                // An auto pilot's estimate so far (set every few seconds by its watcher).
                if let Some(note) = live.note.lock().ok().and_then(|mut n| n.take()) {
                    bar.set_message(note);
                }
                let failed = live.failed.load(Ordering::Relaxed);
                bar.set_prefix(if failed > 0 {
                    format!("{failed} failed")
                } else {
                    String::new()
                });
            }
            bar.finish_and_clear();
        });
        Progress {
            bar: Some(shown),
            live,
            task: std::sync::Mutex::new(Some(task)),
            stop,
        }
    }

    /// What is being done now (called between runs, never per upload); the live page shows
    /// it too.
    pub fn set_message(&self, msg: String) {
        self.set_stage(msg.clone());
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    /// Which cell and run is under way, for the live page only (between runs).
    pub fn set_stage(&self, stage: String) {
        if let Ok(mut s) = self.live.stage.lock() {
            *s = stage;
        }
    }

    /// Prints a line above the bar (or to stderr when there is none).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Stops and clears the bar (again: nothing).
    pub async fn finish(&self) {
        self.stop.notify_one();
        let task = self.task.lock().map(|mut t| t.take()).unwrap_or(None);
        if let Some(t) = task {
            let _ = t.await;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates_read_with_sensible_precision() {
        assert_eq!(super::human_rate(226.8435), "227 docs/s");
        assert_eq!(super::human_rate(22_684.35), "22,684 docs/s");
        assert_eq!(super::human_rate(1_234_567.0), "1,234,567 docs/s");
        assert_eq!(super::human_rate(22.684), "22.7 docs/s");
        assert_eq!(super::human_rate(0.8412), "0.84 docs/s");
        assert_eq!(super::human_rate(f64::NAN), "- docs/s");
    }
}
