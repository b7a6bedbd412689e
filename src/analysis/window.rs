//! The cutover plan (`estimate --window`): whether the import finishes inside the team's
//! window, per configuration measured or what-if'd, with the probability the estimate's
//! interval gives, the margin, and what to add first where it misses.
//!
//! **Probability.** The estimate's 95 % interval (lo, point, hi) is read as a split normal:
//! σ below the point `(point − lo) / 1.96`, above it `(hi − point) / 1.96`, so an interval
//! whose upper side is long (growth the pilot could not rule out) makes a miss likelier than
//! its lower side makes an early finish. `P(finish) = F(window)`. A row **meets** the window
//! when its upper bound is inside it (P ≥ 97.5 %), **misses** when its lower bound is past it
//! (P ≤ 2.5 %), and is **at risk** between.
//!
//! **Office hours** (`--office-hours`, `--office-rate`): inside them the import runs at the
//! rate the readers' objective allows (a rates sweep's answer, `analysis::slo`), outside at
//! full speed. An hour of office time then does the work of `f` hours at full speed, `f` the
//! allowed rate over the full rate (the rates sweep's own closed-loop rate where it measured
//! one, so the fraction carries over to the corpus's documents; else the option's rate), and
//! the window holds `(W − O) + O·f` hours of full-speed work. Assumed: the import's rate is
//! even over its length (growth already in the estimate's duration).
//!
//! Pure: the estimate and the window in, the plan out; the sentences are built here so the
//! terminal, estimate.json, report.md and report.html say the same.

use super::estimate::{Estimate, OptionEstimate};
pub use super::estimate::{WindowPlan, WindowRow};
use super::relieved::Relief;
use super::what_if::change_words;
use crate::timefmt::human_hours;

/// Minutes in a week: the weekly clock that windows and office hours are placed on (Monday
/// 00:00 is 0).
pub const WEEK_MIN: u32 = 7 * 24 * 60;

/// The team's window: how long the import may take and, when given as a start and end,
/// where it starts on the weekly clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// As the team wrote it (`48h`, `Sat 06:00..Mon 06:00`).
    pub label: String,
    pub seconds: f64,
    /// Minutes from Monday 00:00 (a window given as a start and end).
    pub start_min: Option<u32>,
}

/// Office hours inside the window, and the import's allowed rate during them.
#[derive(Debug, Clone, PartialEq)]
pub struct OfficeHours {
    /// As the team wrote it (`Sat 08:00-12:00`, `Mon-Fri 08:00-18:00`).
    pub label: String,
    /// Weekly spans, minutes from Monday 00:00, `[from, to)`.
    pub spans: Vec<(u32, u32)>,
    /// The allowed rate, documents per second, and where it came from.
    pub rate_per_s: f64,
    /// The full rate it was measured against (a rates sweep's closed-loop rate), if known.
    pub full_rate_per_s: Option<f64>,
    pub rate_source: String,
}

/// Standard normal CDF (Abramowitz–Stegun 7.1.26 on erf; |error| < 1.5e-7).
fn phi(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// P(duration ≤ w) under the split normal through (lo, point, hi) as 95 % bounds.
pub fn p_finish(point: f64, lo: f64, hi: f64, w: f64) -> f64 {
    let s_lo = ((point - lo) / 1.96).max(1e-9 * point.max(1.0));
    let s_hi = ((hi - point) / 1.96).max(1e-9 * point.max(1.0));
    let k = 2.0 / (s_lo + s_hi);
    if w <= point {
        k * s_lo * phi((w - point) / s_lo)
    } else {
        1.0 - k * s_hi * (1.0 - phi((w - point) / s_hi))
    }
}

/// Office minutes inside the window that starts at `start` (weekly minutes) and lasts
/// `len` minutes.
pub fn office_minutes(spans: &[(u32, u32)], start: u32, len: f64) -> f64 {
    let (s, e) = (start as f64, start as f64 + len);
    let weeks = (e / WEEK_MIN as f64).ceil() as u32 + 1;
    let mut total = 0.0;
    for k in 0..weeks {
        for &(a, b) in spans {
            let (a, b) = (
                (a + k * WEEK_MIN) as f64,
                (b + k * WEEK_MIN) as f64 + if b < a { WEEK_MIN as f64 } else { 0.0 },
            );
            total += (b.min(e) - a.max(s)).max(0.0);
        }
    }
    total
}

fn row(o: &OptionEstimate, e: &Estimate, w: &Window, office: Option<&OfficeHours>) -> WindowRow {
    let (lo, hi) = o.bounds_s();
    let window_s = full_speed_window(o.duration_s, e.documents, w, office);
    let p = p_finish(o.duration_s, lo, hi, window_s);
    let add_first = o
        .if_relieved
        .as_ref()
        .and_then(|r| r.change.clone().map(|c| change_words(&c)));
    WindowRow {
        method: o.method.clone(),
        connection: o.connection.name().to_string(),
        threads: o.threads,
        what_if: None,
        duration_s: o.duration_s,
        duration_lo_s: lo,
        duration_hi_s: hi,
        window_s,
        p_finish: p,
        outcome: outcome(lo, hi, window_s).into(),
        margin_s: window_s - hi,
        add_first,
        threads_to_90_pct: None,
    }
}

/// The same option with its bottleneck relieved (`analysis::relieved`), where that is a
/// conclusion, then with each other change that raises its bound (more nodes, the quota, the
/// client moved), the smallest rise first.
fn relieved_rows(
    o: &OptionEstimate,
    e: &Estimate,
    w: &Window,
    office: Option<&OfficeHours>,
) -> Vec<WindowRow> {
    let Some(r) = o.if_relieved.as_ref() else {
        return Vec::new();
    };
    let first = match (&r.change, r.duration_s, r.duration_lo_s, r.duration_hi_s) {
        (Some(change), Some(d), Some(lo), Some(hi)) => Some(Relief {
            change: change.clone(),
            bound_ratio: r.bound_ratio.unwrap_or(o.duration_s / d.max(1e-9)),
            duration_s: d,
            duration_lo_s: lo,
            duration_hi_s: hi,
            next_bottleneck: r.next_bottleneck.clone().unwrap_or_default(),
            threads_to_90_pct: r.threads_to_90_pct,
        }),
        _ => None,
    };
    first
        .iter()
        .chain(&r.also)
        .map(|c| {
            let (d, lo, hi) = (c.duration_s, c.duration_lo_s, c.duration_hi_s);
            let window_s = full_speed_window(d, e.documents, w, office);
            WindowRow {
                method: o.method.clone(),
                connection: o.connection.name().to_string(),
                threads: o.threads,
                what_if: Some(c.change.clone()),
                duration_s: d,
                duration_lo_s: lo,
                duration_hi_s: hi,
                window_s,
                p_finish: p_finish(d, lo, hi, window_s),
                outcome: outcome(lo, hi, window_s).into(),
                margin_s: window_s - hi,
                add_first: (!c.next_bottleneck.is_empty())
                    .then(|| format!("then {} limits it", c.next_bottleneck)),
                threads_to_90_pct: c.threads_to_90_pct,
            }
        })
        .collect()
}

fn outcome(lo: f64, hi: f64, w: f64) -> &'static str {
    if hi <= w {
        "meets"
    } else if lo > w {
        "misses"
    } else {
        "at risk"
    }
}

/// The full-speed seconds the window holds: all of it, less what office hours take.
fn full_speed_window(duration_s: f64, docs: u64, w: &Window, office: Option<&OfficeHours>) -> f64 {
    let Some(oh) = office else {
        return w.seconds;
    };
    let o = office_s(w, oh);
    let full = oh
        .full_rate_per_s
        .unwrap_or(docs as f64 / duration_s.max(1e-9));
    let f = (oh.rate_per_s / full.max(1e-9)).min(1.0);
    (w.seconds - o) + o * f
}

fn office_s(w: &Window, oh: &OfficeHours) -> f64 {
    w.start_min
        .map(|s| 60.0 * office_minutes(&oh.spans, s, w.seconds / 60.0))
        .unwrap_or(0.0)
}

fn pct(p: f64) -> String {
    if p > 0.99 {
        "> 99 %".into()
    } else if p < 0.01 {
        "< 1 %".into()
    } else {
        format!("{:.0} %", 100.0 * p)
    }
}

/// How a row reads: "embedded-https (keep-alive) at 8 threads: 31.2 h (95 %: 28.0 h –
/// 35.1 h), P(finish) > 99 %, margin 12.9 h".
pub fn row_text(r: &WindowRow) -> String {
    let what = match &r.what_if {
        Some(c) => format!(" with {}", change_words(c)),
        None => String::new(),
    };
    let h = |s: f64| human_hours(s / 3600.0);
    let margin = if r.margin_s >= 0.0 {
        format!("margin {} at the upper bound", h(r.margin_s))
    } else {
        format!("short by up to {}", h(-r.margin_s))
    };
    // A change whose bound the measured threads do not reach: the duration holds only with
    // as many threads as the curve says reach it.
    let threads = match r.threads_to_90_pct {
        Some(n) if u64::from(n) > r.threads => {
            format!(" (about {n} threads reach 90 % of its bound: run at least as many)")
        }
        _ => String::new(),
    };
    format!(
        "{} ({}) at {} thread{}{what}: {} (95 %: {} – {}), P(finish) {}, {margin}{threads}",
        r.method,
        r.connection,
        r.threads,
        if r.threads == 1 { "" } else { "s" },
        h(r.duration_s),
        h(r.duration_lo_s),
        h(r.duration_hi_s),
        pct(r.p_finish)
    )
}

/// The plan: every option against the window, then the what-ifs, and the answer.
pub fn plan(e: &Estimate, w: &Window, office: Option<&OfficeHours>) -> WindowPlan {
    let mut rows: Vec<WindowRow> = e.options.iter().map(|o| row(o, e, w, office)).collect();
    rows.extend(
        e.options
            .iter()
            .flat_map(|o| relieved_rows(o, e, w, office)),
    );
    let mut answer = answer(&rows, w, office.map(|o| office_s(w, o)).unwrap_or(0.0));
    // At risk only because the interval is wide: say what evidence would narrow it.
    let narrowing = e.pilot.as_ref().and_then(|p| p.narrowing.as_deref());
    if let (Some(n), true) = (narrowing, answer.starts_with("at risk")) {
        answer.push_str(&format!("; to tell whether it fits: {n}"));
    }
    WindowPlan {
        window: w.label.clone(),
        window_s: w.seconds,
        office_hours: office.map(|o| o.label.clone()),
        office_s: office.map(|o| office_s(w, o)).unwrap_or(0.0),
        office_rate_per_s: office.map(|o| o.rate_per_s),
        office_rate_source: office.map(|o| o.rate_source.clone()),
        rows,
        answer,
    }
}

/// The row to use: the likeliest to finish; on a tie (within a percentage point) the fewest
/// threads where finishing is likely (the least load that does it), else the shortest.
fn best<'a>(rows: impl Iterator<Item = &'a WindowRow>) -> Option<&'a WindowRow> {
    rows.min_by(|a, b| {
        let (pa, pb) = ((a.p_finish * 100.0).round(), (b.p_finish * 100.0).round());
        let fewer = if pa >= 50.0 {
            a.threads.cmp(&b.threads)
        } else {
            std::cmp::Ordering::Equal
        };
        pb.total_cmp(&pa)
            .then(fewer)
            .then(a.duration_s.total_cmp(&b.duration_s))
    })
}

fn answer(rows: &[WindowRow], w: &Window, office_s: f64) -> String {
    let within = if office_s > 0.0 {
        format!(
            "{} ({} of it office hours at the readers' rate)",
            w.label,
            human_hours(office_s / 3600.0)
        )
    } else {
        w.label.clone()
    };
    let measured = best(rows.iter().filter(|r| r.what_if.is_none()));
    let Some(m) = measured else {
        return format!("no option to hold against {within}");
    };
    if m.outcome == "meets" {
        return format!(
            "finishes inside {within}: use {} (the fewest threads that finish surely)",
            row_text(m)
        );
    }
    // The smallest change that finishes surely (the what-ifs come the bottleneck's relief
    // first, then the smallest rise), else the likeliest to.
    let changes = || {
        rows.iter()
            .filter(|r| r.what_if.is_some() && r.outcome != "misses" && r.p_finish > m.p_finish)
    };
    let help = changes()
        .find(|r| r.outcome == "meets")
        .or_else(|| best(changes()));
    let need = m.duration_hi_s / m.window_s.max(1e-9);
    let mut t = format!(
        "{} inside {within} as measured: the likeliest, {}",
        if m.outcome == "misses" {
            "does not finish"
        } else {
            "at risk"
        },
        row_text(m)
    );
    match help {
        Some(h) => t.push_str(&format!(
            "; add {} first: then it {} ({})",
            change_words(h.what_if.as_deref().unwrap_or("")),
            if h.outcome == "meets" {
                "finishes inside it"
            } else {
                "is likelier to finish but still at risk"
            },
            row_text(h)
        )),
        None => t.push_str(&format!(
            "; to be sure of it, the import must go {need:.2}× as fast as that option's upper bound (no what-if measured gets there)"
        )),
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_normal_puts_the_bounds_at_2_5_and_97_5_percent() {
        let (d, lo, hi) = (100.0, 80.0, 160.0);
        assert!((p_finish(d, lo, hi, lo) - 0.025 * 2.0 * 20.0 / 80.0).abs() < 1e-3);
        // Below the point the lower σ, above it the upper: the mass splits as σ_lo : σ_hi.
        assert!((p_finish(d, lo, hi, d) - 0.25).abs() < 1e-6);
        let p_hi = p_finish(d, lo, hi, hi);
        assert!(
            (p_hi - (1.0 - 0.025 * 2.0 * 60.0 / 80.0)).abs() < 1e-3,
            "{p_hi}"
        );
        // Symmetric: the usual normal.
        assert!((p_finish(100.0, 90.0, 110.0, 110.0) - 0.975).abs() < 1e-4);
        assert!((p_finish(100.0, 90.0, 110.0, 90.0) - 0.025).abs() < 1e-4);
        assert!(p_finish(100.0, 90.0, 110.0, 1e6) <= 1.0);
    }

    /// An estimate of two options (8 threads 10 h, 95 %: 9–13 h; 2 threads 30 h ± 3 h), the
    /// first limited by the client, whose move to its own host would take 6 h (5–8 h).
    fn estimate() -> Estimate {
        serde_json::from_value(serde_json::json!({
            "corpus": "c", "documents": 360000, "bytes": 1, "time_by_size": [], "findings": [],
            "assumptions": [],
            "options": [
                {"method": "https-lb", "connection": "reuse", "threads": 8,
                 "duration_s": 36000.0, "ci95_s": 5400.0, "hours": 10.0, "ci95_hours": 1.5,
                 "duration_lo_s": 32400.0, "duration_hi_s": 46800.0,
                 "per_doc_s": 0.1, "per_mib_s": 0.0, "sizes_measured": [], "flags": [],
                 "if_relieved": {"verdict": "client", "change": "client_on_its_own_host",
                   "duration_s": 21600.0, "duration_lo_s": 18000.0, "duration_hi_s": 28800.0,
                   "next_bottleneck": "the server's CPU", "text": ""}},
                {"method": "https-lb", "connection": "reuse", "threads": 2,
                 "duration_s": 108000.0, "ci95_s": 10800.0, "hours": 30.0, "ci95_hours": 3.0,
                 "per_doc_s": 0.3, "per_mib_s": 0.0, "sizes_measured": [], "flags": []}
            ]
        }))
        .unwrap()
    }

    fn window(h: f64) -> Window {
        Window {
            label: format!("{h}h"),
            seconds: h * 3600.0,
            start_min: Some(5 * 1440 + 360),
        }
    }

    #[test]
    fn a_window_the_fastest_option_holds_is_met_with_its_margin() {
        let p = plan(&estimate(), &window(48.0), None);
        assert_eq!(p.rows.len(), 3, "two options and one what-if");
        let r = &p.rows[0];
        assert_eq!(
            (r.outcome.as_str(), r.margin_s),
            ("meets", 48.0 * 3600.0 - 46800.0)
        );
        assert!(r.p_finish > 0.99);
        assert_eq!(p.rows[1].outcome, "meets", "30 h (27–33 h) inside 48 h");
        assert!(
            p.answer.starts_with("finishes inside 48h: use https-lb"),
            "{}",
            p.answer
        );
    }

    /// Every change that raises the bound is a row of its own, and the answer names the
    /// smallest that finishes surely, not the largest.
    #[test]
    fn each_what_if_is_a_row_and_the_smallest_change_that_meets_is_named() {
        let mut e = estimate();
        let r = e.options[0].if_relieved.as_mut().unwrap();
        (r.change, r.duration_s, r.duration_lo_s, r.duration_hi_s) = (
            Some("quota_raised".into()),
            Some(30000.0),
            Some(27000.0),
            Some(39000.0),
        );
        for (c, k) in [("two_nodes", 2.0), ("three_nodes", 3.0)] {
            r.also.push(Relief {
                change: c.into(),
                bound_ratio: k,
                duration_s: 36000.0 / k,
                duration_lo_s: 32400.0 / k / 1.1,
                duration_hi_s: 46800.0 / k * 1.1,
                next_bottleneck: "this host's CPU".into(),
                threads_to_90_pct: Some(if k > 2.0 { 12 } else { 8 }),
            });
        }
        let p = plan(&e, &window(9.0), None);
        let ifs: Vec<&str> = p.rows.iter().filter_map(|r| r.what_if.as_deref()).collect();
        assert_eq!(ifs, ["quota_raised", "two_nodes", "three_nodes"]);
        let two = p
            .rows
            .iter()
            .find(|r| r.what_if.as_deref() == Some("two_nodes"))
            .unwrap();
        assert_eq!(two.outcome, "meets");
        // The option's 8 threads reach two nodes' bound; three nodes want 12.
        assert!(
            !row_text(two).contains("threads reach"),
            "{}",
            row_text(two)
        );
        let three = p
            .rows
            .iter()
            .find(|r| r.what_if.as_deref() == Some("three_nodes"))
            .unwrap();
        assert!(
            row_text(three).contains("about 12 threads reach 90 % of its bound"),
            "{}",
            row_text(three)
        );
        assert!(
            p.answer
                .contains("add a second node first: then it finishes inside it"),
            "{}",
            p.answer
        );
    }

    #[test]
    fn a_window_only_the_what_if_holds_names_what_to_add_first() {
        let p = plan(&estimate(), &window(9.0), None);
        let r = &p.rows[0];
        assert_eq!(r.outcome, "at risk");
        assert_eq!(r.add_first.as_deref(), Some("the client on its own host"));
        let w = &p.rows[2];
        assert_eq!(
            (w.what_if.as_deref(), w.outcome.as_str()),
            (Some("client_on_its_own_host"), "meets")
        );
        assert!(
            p.answer.contains("at risk inside 9h as measured")
                && p.answer
                    .contains("add the client on its own host first: then it finishes inside it"),
            "{}",
            p.answer
        );
        let p = plan(&estimate(), &window(4.0), None);
        assert!(
            p.answer.contains("does not finish") && p.answer.contains("as fast"),
            "{}",
            p.answer
        );
    }

    #[test]
    fn at_risk_from_a_wide_interval_says_what_pilot_would_tell() {
        let mut e = estimate();
        let mut pilot = serde_json::json!({"evidence": "", "growth_model": "flat", "sym_parts": null,
            "narrowing": "a pilot about 3.0x as long (900 documents, 60 s) would narrow it to ±20 %"});
        for k in ["docs", "versions", "folders", "bytes", "windows"] {
            pilot[k] = 0.into();
        }
        for k in [
            "duration_s",
            "df",
            "per_version",
            "per_folder",
            "s_per_request",
            "se_s_per_request",
            "s_per_mib",
            "se_s_per_mib",
            "growth_per_1000",
            "se_growth_per_1000",
            "fill_pilot_mean",
            "fill_import_start",
            "overhead_s",
            "rel_half_width",
        ] {
            pilot[k] = 0.0.into();
        }
        e.pilot = Some(serde_json::from_value(pilot).unwrap());
        let p = plan(&e, &window(11.0), None);
        assert!(p.answer.ends_with("; to tell whether it fits: a pilot about 3.0x as long (900 documents, 60 s) would narrow it to ±20 %"), "{}", p.answer);
        let p = plan(&e, &window(48.0), None);
        assert!(!p.answer.contains("to tell whether"), "{}", p.answer);
    }

    #[test]
    fn office_hours_at_half_the_rate_take_half_their_length_from_the_window() {
        let oh = OfficeHours {
            label: "Sat 08:00-12:00".into(),
            spans: vec![(5 * 1440 + 480, 5 * 1440 + 720)],
            rate_per_s: 5.0,
            full_rate_per_s: Some(10.0),
            rate_source: "test".into(),
        };
        let p = plan(&estimate(), &window(12.0), Some(&oh));
        assert_eq!(p.office_s, 4.0 * 3600.0);
        assert_eq!(p.rows[0].window_s, 10.0 * 3600.0);
        assert!(
            p.answer.contains("4.0 h of it office hours"),
            "{}",
            p.answer
        );
    }

    #[test]
    fn office_minutes_count_the_spans_inside_the_window_across_the_week_end() {
        // Sat 06:00 (day 5) for 48 h: Sat 08:00–12:00 inside, Mon 08:00–18:00 outside.
        let sat = 5 * 1440;
        let spans = [(sat + 8 * 60, sat + 12 * 60), (8 * 60, 18 * 60)];
        assert_eq!(office_minutes(&spans, sat + 6 * 60, 48.0 * 60.0), 240.0);
        // 50 h reaches Mon 08:00 (the week wraps): 2 h of Monday.
        assert_eq!(
            office_minutes(&spans, sat + 6 * 60, 50.0 * 60.0),
            240.0 + 0.0
        );
        assert_eq!(
            office_minutes(&spans, sat + 6 * 60, 52.0 * 60.0),
            240.0 + 120.0
        );
    }
}
