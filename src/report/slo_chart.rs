//! The HTML report's chart of readers against import rate (`sweep --rates … --readers N`):
//! per method, connection, size and threads, each kind of read's p99 against the import's
//! achieved rate (the readers alone at 0), one series per kind of read, and `--reader-slo`
//! as a dashed horizontal line. Inline SVG, as the other charts; the numbers are the
//! summary's `slo` entries (`analysis::slo`), nothing is computed here.

use std::fmt::Write;

use super::svg::{PALETTE, Tenth, axis_titles, fmt_num, nice_axis, steps, value_grid, x_labels};
use super::table::esc;
use crate::analysis::slo::{RatePoint, SloAnswer};
use crate::analysis::summary::SweepSummary;
use crate::protocol::reads::ReadOp;

/// Every chart, under one heading; empty without `slo` entries.
pub fn charts(s: &SweepSummary) -> String {
    if s.slo.is_empty() {
        return String::new();
    }
    let mut o = String::from("<h2>Readers' p99 vs import rate</h2>\n");
    for a in &s.slo {
        o.push_str(&chart(a));
    }
    o
}

/// One chart: x the achieved import rate (docs/s, from 0), y the p99 (ms, from 0).
fn chart(a: &SloAnswer) -> String {
    let (w, h) = (760.0, 380.0);
    let (ml, mr, mt, mb) = (64.0, 150.0, 34.0, 48.0);
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let points: Vec<(f64, &RatePoint)> = a
        .baseline
        .iter()
        .map(|b| (0.0, b))
        .chain(a.points.iter().map(|p| (p.achieved_per_s, p)))
        .collect();
    let xmax_data = points.iter().map(|(x, _)| *x).fold(0.0, f64::max);
    let ymax_data = points
        .iter()
        .map(|(_, p)| p.reader_p99_ms)
        .fold(a.slo_ms, f64::max);
    let (xmax, xstep) = nice_axis(xmax_data * 1.05);
    let (ymax, ystep) = nice_axis(ymax_data * 1.05);
    let x = |v: f64| ml + v / xmax * pw;
    let y = |v: f64| mt + ph - v / ymax * ph;
    let title = format!(
        "{} {} {} connections, {} thread{}",
        a.method,
        a.size,
        a.connection,
        a.threads,
        if a.threads == 1 { "" } else { "s" }
    );
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg class="chart slo" data-method="{m}" data-size="{size}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="readers' p99 vs import rate, {t}">"#,
        m = esc(&a.method),
        size = a.size,
        t = esc(&title),
    );
    let _ = writeln!(
        o,
        r#"<text class="title" x="{ml}" y="20">Readers' p99 vs import rate: {}</text>"#,
        esc(&title)
    );
    let ticks = steps(ymax, ystep).map(|v| (y(v), fmt_num(v)));
    value_grid(&mut o, ml, Tenth(ml + pw), Tenth(ml - 6.0), ticks);
    let ticks = steps(xmax, xstep).map(|v| (x(v), fmt_num(v)));
    x_labels(&mut o, ticks, mt + ph + 16.0, None);
    axis_titles(
        &mut o,
        (ml + pw / 2.0, h - 10.0),
        "import rate achieved, docs/s (0: readers alone)",
        mt + ph / 2.0,
        "p99, ms",
    );
    // The objective.
    let _ = writeln!(
        o,
        r##"<line class="slo" x1="{ml}" x2="{:.1}" y1="{ys:.1}" y2="{ys:.1}" stroke="#a40" stroke-dasharray="6 4" stroke-width="1.5"/><text class="legend" x="{:.1}" y="{:.1}" fill="#a40">SLO {} ms</text>"##,
        ml + pw,
        ml + pw + 8.0,
        y(a.slo_ms) + 4.0,
        fmt_num(a.slo_ms),
        ys = y(a.slo_ms)
    );
    for (i, op) in ReadOp::ALL.iter().enumerate() {
        let pts: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|(xv, p)| {
                let o = p.ops.iter().find(|o| o.op == *op)?;
                Some((x(*xv), y(o.p99_ms)))
            })
            .collect();
        if pts.is_empty() {
            continue;
        }
        let color = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
        let _ = writeln!(
            o,
            r#"<polyline class="series" data-op="{}" fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            op.name(),
            path.join(" ")
        );
        for (px, py) in &pts {
            let _ = writeln!(
                o,
                r#"<circle cx="{px:.1}" cy="{py:.1}" r="3" fill="{color}"/>"#
            );
        }
        let ly = mt + 20.0 + 18.0 * i as f64;
        let _ = writeln!(
            o,
            r#"<line x1="{:.1}" x2="{:.1}" y1="{ly:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"/><text class="legend" x="{:.1}" y="{:.1}">{}</text>"#,
            ml + pw + 8.0,
            ml + pw + 28.0,
            ml + pw + 34.0,
            ly + 4.0,
            op.name()
        );
    }
    o.push_str("</svg>\n");
    let _ = writeln!(o, "<p>{}</p>", esc(&a.text));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::slo::{OpPoint, judge};

    fn point(rate: f64, p99: f64) -> RatePoint {
        RatePoint {
            rate_per_s: rate,
            achieved_per_s: rate,
            kept_up: Some(true),
            runs: 1,
            reader_p99_ms: p99,
            ops: vec![OpPoint {
                op: ReadOp::Meta,
                ok: 10,
                failed: 0,
                p50_ms: p99 / 2.0,
                p95_ms: p99,
                p99_ms: p99,
                p99_change_pct: None,
                p99_change_ci95_pct: None,
            }],
        }
    }

    #[test]
    fn one_series_per_kind_of_read_and_the_objective_as_a_line() {
        let mut a = judge(
            500.0,
            vec![point(10.0, 100.0), point(20.0, 700.0)],
            Some(point(0.0, 50.0)),
        )
        .unwrap();
        a.method = "direct".into();
        a.threads = 4;
        let svg = chart(&a);
        assert!(
            svg.contains(r#"class="slo""#) && svg.contains("SLO 500 ms"),
            "{svg}"
        );
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains(r#"data-op="meta""#));
        // Three points: the readers alone at 0, then 10 and 20 docs/s.
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.ends_with("</p>\n"));
    }
}
