//! `estimate --window`, `--office-hours` and `--office-rate` turned into the cutover plan's
//! inputs (`analysis::window`): a window as a length (`48h`, `2d`) or a start and end on the
//! weekly clock (`Sat 06:00..Mon 06:00`); office hours as days and hours (`Sat 08:00-12:00`,
//! `Mon-Fri 08:00-18:00`, several comma-separated); the office rate as documents per second
//! or a rates sweep's results directory, whose answer (`analysis::slo`) gives the highest
//! rate that held the readers' objective. Every error names the flag and shows the form.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::analysis::window::{OfficeHours, WEEK_MIN, Window};

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

fn day(s: &str) -> Option<u32> {
    let s = s.trim().to_ascii_lowercase();
    if s.len() < 3 {
        return None;
    }
    DAYS.iter()
        .position(|d| {
            s.starts_with(d)
                && "monday tuesday wednesday thursday friday saturday sunday".contains(&s)
        })
        .map(|i| i as u32)
}

/// `HH:MM` as minutes from midnight (`24:00` is the day's end).
fn clock(s: &str) -> Option<u32> {
    let (h, m) = s.trim().split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60 || h == 24 && m == 0).then_some(h * 60 + m)
}

/// `Sat 06:00` as minutes from Monday 00:00.
fn weekly(s: &str) -> Option<u32> {
    let (d, t) = s.trim().split_once(char::is_whitespace)?;
    Some(day(d)? * 1440 + clock(t)?)
}

/// `--window`: a length or `DAY HH:MM..DAY HH:MM`.
pub fn parse_window(s: &str) -> Result<Window> {
    let form = "give a length (48h, 2d, 90m) or a start and end (\"Sat 06:00..Mon 06:00\")";
    if let Some((a, b)) = s.split_once("..") {
        let (Some(start), Some(end)) = (weekly(a), weekly(b)) else {
            bail!("--window {s:?}: not a start and end on the weekly clock; {form}");
        };
        let mut len = (end + WEEK_MIN - start) % WEEK_MIN;
        if len == 0 {
            len = WEEK_MIN;
        }
        return Ok(Window {
            label: s.trim().to_string(),
            seconds: 60.0 * len as f64,
            start_min: Some(start),
        });
    }
    let t = s.trim();
    let secs = match t.strip_suffix('d') {
        Some(d) => d.trim().parse::<f64>().ok().map(|d| d * 86_400.0),
        None => super::parse_duration(t),
    };
    match secs {
        Some(v) if v > 0.0 && v.is_finite() => Ok(Window {
            label: t.to_string(),
            seconds: v,
            start_min: None,
        }),
        _ => bail!("--window {s:?}: not a length; {form}"),
    }
}

/// `--office-hours`: `DAY[-DAY] HH:MM-HH:MM`, comma-separated, as weekly spans.
pub fn parse_office_spans(s: &str) -> Result<Vec<(u32, u32)>> {
    let form = "give days and hours, e.g. \"Sat 08:00-12:00\" or \"Mon-Fri 08:00-18:00\" (several comma-separated)";
    let mut spans = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let parsed = part
            .split_once(char::is_whitespace)
            .and_then(|(days, hours)| {
                let (d0, d1) = match days.split_once('-') {
                    Some((a, b)) => (day(a)?, day(b)?),
                    None => (day(days)?, day(days)?),
                };
                let (h0, h1) = hours.trim().split_once('-')?;
                let (h0, h1) = (clock(h0)?, clock(h1)?);
                (h1 > h0).then_some((d0, d1, h0, h1))
            });
        let Some((d0, d1, h0, h1)) = parsed else {
            bail!("--office-hours {part:?}: not days and hours; {form}");
        };
        let mut d = d0;
        loop {
            spans.push((d * 1440 + h0, d * 1440 + h1));
            if d == d1 {
                break;
            }
            d = (d + 1) % 7;
        }
    }
    if spans.is_empty() {
        bail!("--office-hours {s:?}: empty; {form}");
    }
    Ok(spans)
}

/// `--office-hours` with `--office-rate` (a number or a rates sweep's directory), against a
/// window that has a start (office hours are placed on the weekly clock).
pub fn office_hours(hours: &str, rate: &str, window: &Window) -> Result<OfficeHours> {
    if window.start_min.is_none() {
        bail!(
            "--office-hours needs a --window with a start and end (e.g. \"Sat 06:00..Mon 06:00\"), not a length ({:?}): office hours are placed on the week",
            window.label
        );
    }
    let spans = parse_office_spans(hours)?;
    let (rate_per_s, full_rate_per_s, rate_source) = office_rate(rate)?;
    Ok(OfficeHours {
        label: hours.trim().to_string(),
        spans,
        rate_per_s,
        full_rate_per_s,
        rate_source,
    })
}

/// The rate in office hours: a number, or the lowest rate a rates sweep found to hold its
/// readers' objective (with that cell's closed-loop rate), named.
fn office_rate(s: &str) -> Result<(f64, Option<f64>, String)> {
    if let Ok(v) = s.trim().parse::<f64>() {
        if !(v.is_finite() && v > 0.0) {
            bail!(
                "--office-rate {s:?}: give a rate above 0 (documents per second) or a rates sweep's results directory"
            );
        }
        return Ok((v, None, format!("--office-rate {v}")));
    }
    let dir = Path::new(s);
    if !crate::results::is_results_dir(dir) {
        bail!(
            "--office-rate {s:?}: neither a rate (documents per second) nor a results directory (no plan.json); give a rates sweep's directory (sweep --rates R1,R2 --readers N --reader-slo MS)"
        );
    }
    let (plan, runs) = crate::results::load_dir(dir)
        .with_context(|| format!("--office-rate: reading {}", dir.display()))?;
    let answers = crate::analysis::slo::answers(&plan, &runs);
    if answers.is_empty() {
        bail!(
            "--office-rate {}: not a rates sweep with readers (sweep --rates R1,R2 --readers N --reader-slo MS)",
            dir.display()
        );
    }
    let held = answers.iter().filter_map(|a| {
        let closed = a.baseline.as_ref().map(|b| b.achieved_per_s);
        crate::analysis::slo::import_at(a, 1, closed).map(|i| (i, a))
    });
    let Some((i, a)) = held.min_by(|(x, _), (y, _)| x.rate_per_s.total_cmp(&y.rate_per_s)) else {
        bail!(
            "--office-rate {}: no rate measured held the readers' p99 under {} ms, so no import can run in office hours at a rate that sweep measured",
            dir.display(),
            answers[0].slo_ms
        );
    };
    let source = format!(
        "{} ({} {} at {} threads, readers' p99 under {} ms)",
        dir.display(),
        a.method,
        a.size,
        a.threads,
        a.slo_ms
    );
    Ok((i.rate_per_s, i.closed_loop_per_s, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_as_lengths_or_weekly_spans() {
        assert_eq!(parse_window("48h").unwrap().seconds, 172_800.0);
        assert_eq!(parse_window("2d").unwrap().seconds, 172_800.0);
        let w = parse_window("Sat 06:00..Mon 06:00").unwrap();
        assert_eq!((w.seconds, w.start_min), (172_800.0, Some(5 * 1440 + 360)));
        let w = parse_window("friday 22:00..Sat 02:30").unwrap();
        assert_eq!(w.seconds, 4.5 * 3600.0);
        for bad in [
            "",
            "soon",
            "-3h",
            "Sat 6..Mon 6",
            "Xyz 06:00..Mon 06:00",
            "Sat 25:00..Mon 06:00",
        ] {
            let e = parse_window(bad).unwrap_err().to_string();
            assert!(e.starts_with("--window"), "{bad}: {e}");
        }
    }

    #[test]
    fn office_hours_expand_day_ranges_and_reject_what_is_not_days_and_hours() {
        let s = parse_office_spans("Mon-Fri 08:00-18:00, Sat 08:00-12:00").unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(s[0], (480, 1080));
        assert_eq!(s[5], (5 * 1440 + 480, 5 * 1440 + 720));
        assert_eq!(parse_office_spans("Sat-Sun 10:00-11:00").unwrap().len(), 2);
        for bad in ["Sat", "Sat 12:00-08:00", "Someday 08:00-12:00", ""] {
            let e = parse_office_spans(bad).unwrap_err().to_string();
            assert!(e.starts_with("--office-hours"), "{bad}: {e}");
        }
        let w = parse_window("48h").unwrap();
        let e = office_hours("Sat 08:00-12:00", "40", &w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--window with a start and end"), "{e}");
        let w = parse_window("Sat 06:00..Mon 06:00").unwrap();
        let e = office_hours("Sat 08:00-12:00", "/nonexistent", &w)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--office-rate"), "{e}");
        let o = office_hours("Sat 08:00-12:00", "40", &w).unwrap();
        assert_eq!(o.rate_per_s, 40.0);
    }
}
