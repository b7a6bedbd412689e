//! When an auto pilot (`run --sample-time auto`) may stop: the estimate its first run would
//! give so far ([`super::pilot::predict`] on the run as it stands), judged sharp by
//! [`super::pilot::PilotFit::is_settled`] (the interval's symmetric part within the target
//! and growth over the import's fill resolved to within it), and the words said about it
//! (the progress line, the line at the stop). Pure: the engine's watcher hands in the run so far and acts on the
//! answer; what a check found is recorded as [`SampleStop`].

use super::pilot::{ImportWork, PilotFit, is_pilot, predict};
use crate::protocol_kind::ProtocolKind;
use crate::results::{CellRun, SampleStop, SampleStopReason};

/// One check of the estimate while the pilot's first run goes on.
#[derive(Debug, Clone)]
pub struct Check {
    /// Seconds from the run's start, and documents acknowledged then.
    pub at_s: f64,
    pub docs: u64,
    /// The import's estimated seconds, and the fit behind it.
    pub estimate_s: f64,
    pub fit: PilotFit,
    /// Settled: the symmetric part within the target and growth resolved.
    pub sharp: bool,
}

/// The estimate `run` (the pilot's first run so far, `at_s` seconds in) gives of `work`,
/// judged against `target` (relative, 0.15 = ±15 %) for the pilot of `runs` runs this one
/// starts; `None` while the run cannot be read as
/// a pilot yet (`pilot::is_pilot`) or the fit has too few windows.
pub fn check(
    run: &CellRun,
    protocol: ProtocolKind,
    work: &ImportWork,
    target: f64,
    at_s: f64,
    runs: u64,
) -> Option<Check> {
    if !is_pilot(run) {
        return None;
    }
    let (estimate_s, _, fit) = predict(&[run], protocol, work, None)?;
    Some(Check {
        at_s,
        docs: run.record.docs_ok,
        estimate_s,
        sharp: fit.is_settled_after(target, runs),
        fit,
    })
}

/// The interval as the progress line shows it: `est 2.5 h −12 %/+14 % (aim ±15 %)`.
pub fn progress_text(c: &Check, target: f64) -> String {
    format!(
        "est {} −{:.0} %/+{:.0} % (aim ±{})",
        crate::timefmt::human_hours(c.estimate_s / 3600.0),
        c.fit.rel_lo * 100.0,
        c.fit.rel_hi * 100.0,
        pct(target * 100.0)
    )
}

/// `15 %`, `0.5 %`: a target as given.
fn pct(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0} %")
    } else {
        format!("{v} %")
    }
}

/// What the first run's stop records: why, and the last check's estimate (if any).
pub fn stop_record(
    reason: SampleStopReason,
    last: Option<&Check>,
    checks: u32,
    target: f64,
    max_s: f64,
    max_share: Option<f64>,
) -> SampleStop {
    SampleStop {
        reason,
        target_pct: target * 100.0,
        max_s,
        max_share_pct: max_share.map(|s| s * 100.0),
        checks,
        checked_at_s: last.map(|c| (c.at_s * 1e3).round() / 1e3),
        checked_docs: last.map(|c| c.docs),
        estimate_s: last.map(|c| (c.estimate_s * 1e3).round() / 1e3),
        rel_lo: last.map(|c| c.fit.rel_lo),
        rel_hi: last.map(|c| c.fit.rel_hi),
        needed: last.and_then(|c| c.fit.needed.clone()),
        unresolved_growth: last.and_then(|c| c.fit.unresolved_growth.clone()),
    }
}

/// The line said when the first run stopped (`secs` its measured window, `docs` what it
/// acknowledged): sharp with its interval, or what stayed unresolved at the cap or when the
/// files ran out.
pub fn stop_text(s: &SampleStop, secs: f64, docs: u64) -> String {
    let target = pct(s.target_pct);
    let interval = match (s.estimate_s, s.rel_lo, s.rel_hi) {
        (Some(t), Some(lo), Some(hi)) => format!(
            "estimate {} (−{:.0} % / +{:.0} %)",
            crate::timefmt::human_hours(t / 3600.0),
            lo * 100.0,
            hi * 100.0
        ),
        _ => "no estimate yet (too few documents to read as a pilot)".into(),
    };
    let docs = thousands(docs);
    match s.reason {
        SampleStopReason::Sharp => format!(
            "pilot sharp after {secs:.0} s ({docs} documents): {interval}, target ±{target}"
        ),
        reason => {
            let why = match reason {
                SampleStopReason::Cap => format!("--max-sample-time ({:.0} s) reached", s.max_s),
                SampleStopReason::Share => format!(
                    "--max-sample-share ({} of the corpus, its runs together) reached",
                    pct(s.max_share_pct.unwrap_or(100.0))
                ),
                _ => "every file of the sample was sent".into(),
            };
            let mut line = format!(
                "pilot not sharp: {why} after {secs:.0} s ({docs} documents): {interval}, target ±{target} not reached"
            );
            for note in [&s.needed, &s.unresolved_growth].into_iter().flatten() {
                line.push_str("\n  ");
                line.push_str(note);
            }
            if reason == SampleStopReason::Share {
                line.push_str(
                    "\n  a longer pilot would cost more of the import than it tells: plan on what it gives and watch the import's live ETA, or raise --max-sample-share",
                );
            }
            line
        }
    }
}

/// `3,120`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(reason: SampleStopReason) -> SampleStop {
        SampleStop {
            reason,
            target_pct: 15.0,
            max_s: 600.0,
            max_share_pct: Some(15.0),
            checks: 20,
            checked_at_s: Some(41.0),
            checked_docs: Some(3120),
            estimate_s: Some(9000.0),
            rel_lo: Some(0.12),
            rel_hi: Some(0.14),
            needed: Some("±19 %: a pilot about 1.5× as long would bring it to ±20 %".into()),
            unresolved_growth: None,
        }
    }

    #[test]
    fn the_stop_is_said_with_its_interval_and_what_stayed_open() {
        let sharp = stop_text(&stop(SampleStopReason::Sharp), 41.2, 3120);
        assert_eq!(
            sharp,
            "pilot sharp after 41 s (3,120 documents): estimate 2.5 h (−12 % / +14 %), target ±15 %"
        );
        let cap = stop_text(&stop(SampleStopReason::Cap), 600.0, 40_000);
        assert!(cap.contains("--max-sample-time (600 s) reached"), "{cap}");
        assert!(cap.contains("target ±15 % not reached"), "{cap}");
        assert!(cap.contains("1.5× as long"), "{cap}");
        let share = stop_text(&stop(SampleStopReason::Share), 52.0, 13_300);
        assert!(
            share.starts_with(
                "pilot not sharp: --max-sample-share (15 % of the corpus, its runs together) reached after 52 s (13,300 documents)"
            ),
            "{share}"
        );
        assert!(share.contains("1.5× as long"), "{share}");
        let mut none = stop(SampleStopReason::Files);
        (none.estimate_s, none.rel_lo, none.rel_hi) = (None, None, None);
        let files = stop_text(&none, 3.0, 40);
        assert!(
            files.contains("every file of the sample was sent"),
            "{files}"
        );
        assert!(files.contains("no estimate yet"), "{files}");
        assert_eq!(pct(0.5), "0.5 %");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    /// A stop reads back as written; a plan written before auto pilots reads as none.
    #[test]
    fn a_stop_round_trips_and_an_old_plan_has_none() {
        let s = serde_json::to_string(&stop(SampleStopReason::Cap)).unwrap();
        assert!(s.contains("\"reason\":\"cap\""), "{s}");
        let back: SampleStop = serde_json::from_str(&s).unwrap();
        assert_eq!(back, stop(SampleStopReason::Cap));
        let old = r#"{"warmup":"auto","duration_s":600.0,"max_runs":10,"once":true}"#;
        let m: crate::results::MeasurePolicy = serde_json::from_str(old).unwrap();
        assert!(m.once && m.auto_sample.is_none());
        let now = serde_json::to_string(&m).unwrap();
        assert!(!now.contains("auto_sample"), "{now}");
    }
}
