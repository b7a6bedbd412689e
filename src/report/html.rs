//! The self-contained HTML report: inline SVG charts (docs/sec vs threads per size class,
//! one line per access method, ±σ error bars from the runs, the USL fit dashed), the
//! findings and the tables. No scripts, no network fetches.

use std::fmt::Write;

use super::svg::{
    PALETTE, Tenth, axis_titles, fmt_num, legend_entry, nice_axis, steps, thread_ticks, value_grid,
    x_labels,
};
use super::table::{self, esc};
use crate::analysis::scaling::Usl;
use crate::analysis::summary::{CellSummary, ScalingRow, SweepSummary};
use crate::fixtures::SizeClass;
use crate::transport::ConnectionPolicy;

/// The geometry of one chart: margins, plot area, the log-scale thread axis and the
/// docs/sec axis.
struct Plot {
    w: f64,
    h: f64,
    ml: f64,
    mt: f64,
    pw: f64,
    ph: f64,
    tmin: f64,
    tmax: f64,
    ymax: f64,
    ystep: f64,
}

impl Plot {
    fn new(threads: &[u64], ymax_data: f64) -> Plot {
        Plot::with_legend(threads, ymax_data, 170.0)
    }
    /// `legend` pixels to the right of the plot for the legend.
    fn with_legend(threads: &[u64], ymax_data: f64, legend: f64) -> Plot {
        let (w, h) = (590.0 + legend, 400.0);
        let (ml, mr, mt, mb) = (64.0, legend, 34.0, 48.0);
        let tmin = *threads.iter().min().unwrap_or(&1) as f64;
        let tmax = (*threads.iter().max().unwrap_or(&1) as f64).max(tmin * 2.0);
        let (ymax, ystep) = nice_axis(ymax_data * 1.05);
        Plot {
            w,
            h,
            ml,
            mt,
            pw: w - ml - mr,
            ph: h - mt - mb,
            tmin,
            tmax,
            ymax,
            ystep,
        }
    }
    fn x(&self, t: f64) -> f64 {
        self.ml + (t.log2() - self.tmin.log2()) / (self.tmax.log2() - self.tmin.log2()) * self.pw
    }
    fn y(&self, v: f64) -> f64 {
        self.mt + self.ph - (v / self.ymax).clamp(0.0, 1.05) * self.ph
    }
}

fn chart(
    s: &SweepSummary,
    size: SizeClass,
    conn: ConnectionPolicy,
    cells: &[&CellSummary],
) -> String {
    let threads = &s.plan.threads;
    let rows: Vec<&ScalingRow> = s
        .scaling
        .iter()
        .filter(|r| r.size == size && r.connection == conn)
        .collect();
    let ymax_data = cells
        .iter()
        .map(|c| {
            c.docs_per_sec
                .max(c.docs_per_sec_mean + c.docs_per_sec_stddev)
        })
        .fold(0.0, f64::max);
    let ymax_data = ymax_data.max(super::util_chart::bound_max(cells, ymax_data * 2.0));
    let p = Plot::new(threads, ymax_data);
    let (w, h, ml) = (p.w, p.h, p.ml);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg class="chart" data-size="{size}" data-connection="{conn}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="docs/sec vs threads, {size}, {conn} connections">"#
    );
    let _ = writeln!(
        o,
        r#"<text x="{ml}" y="20" class="title">docs/sec vs threads: {size} documents, {conn} connections</text>"#
    );
    axes(&p, threads, "docs/sec", &mut o);
    let methods = table::methods_in(s, cells);
    for (i, m) in methods.iter().enumerate() {
        let usl = rows
            .iter()
            .find(|r| r.method == *m)
            .and_then(|r| r.usl.as_ref());
        series(&p, i, m, cells, usl, &mut o);
        o.push_str(&super::util_chart::bound_overlay(
            cells,
            m,
            PALETTE[i % PALETTE.len()],
            &|t| p.x(t),
            &|v| p.y(v),
            p.ymax,
        ));
    }
    let ly = p.mt + 10.0 + methods.len() as f64 * 20.0;
    let _ = writeln!(
        o,
        r##"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="#555" stroke-dasharray="5 4"/><text class="legend" x="{}" y="{}">USL fit</text>"##,
        ml + p.pw + 14.0,
        ml + p.pw + 38.0,
        ml + p.pw + 44.0,
        ly + 4.0
    );
    if cells
        .iter()
        .any(|c| c.verdict.as_ref().is_some_and(|v| v.bound.is_some()))
    {
        o.push_str(&super::util_chart::bound_legend(
            ml + p.pw + 14.0,
            ly + 20.0,
        ));
    }
    o.push_str("</svg>\n");
    o
}

/// Grid lines, tick labels and axis titles.
fn axes(p: &Plot, threads: &[u64], ylabel: &str, o: &mut String) {
    let (ml, mt, pw, ph) = (p.ml, p.mt, p.pw, p.ph);
    let ticks = steps(p.ymax, p.ystep).map(|v| (p.y(v), fmt_num(v)));
    value_grid(o, ml, ml + pw, ml - 6.0, ticks);
    thread_ticks(o, threads, |t| p.x(t), (mt, mt + ph), mt + ph + 16.0, 18.0);
    let _ = writeln!(
        o,
        r#"<text class="axis" x="{}" y="{}" text-anchor="middle">threads (log scale)</text>"#,
        ml + pw / 2.0,
        p.h - 8.0
    );
    let _ = writeln!(
        o,
        r#"<text class="axis" transform="translate(14 {}) rotate(-90)" text-anchor="middle">{ylabel}</text>"#,
        mt + ph / 2.0
    );
}

/// One method's line, its points with ±σ bars, its USL curve (dashed) and its legend entry.
fn series(p: &Plot, i: usize, m: &str, cells: &[&CellSummary], usl: Option<&Usl>, o: &mut String) {
    let color = PALETTE[i % PALETTE.len()];
    let mut pts: Vec<&&CellSummary> = cells.iter().filter(|c| c.method == m).collect();
    pts.sort_by_key(|c| c.threads);
    let line: Vec<String> = pts
        .iter()
        .map(|c| format!("{:.1},{:.1}", p.x(c.threads as f64), p.y(c.docs_per_sec)))
        .collect();
    let _ = writeln!(
        o,
        r#"<polyline class="series" data-method="{}" fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
        esc(m),
        line.join(" ")
    );
    for c in &pts {
        let (xx, yy) = (p.x(c.threads as f64), p.y(c.docs_per_sec));
        let (lo, hi) = (
            p.y(c.docs_per_sec_mean - c.docs_per_sec_stddev),
            p.y(c.docs_per_sec_mean + c.docs_per_sec_stddev),
        );
        let _ = writeln!(
            o,
            r#"<line class="errbar" x1="{xx:.1}" x2="{xx:.1}" y1="{lo:.1}" y2="{hi:.1}" stroke="{color}"/><circle class="point" cx="{xx:.1}" cy="{yy:.1}" r="3.5" fill="{color}"><title>{}: {} threads, {:.1} docs/s (runs {:.1} ± {:.1}), p95 {:.2} ms</title></circle>"#,
            esc(m),
            c.threads,
            c.docs_per_sec,
            c.docs_per_sec_mean,
            c.docs_per_sec_stddev,
            c.latency_ms.p95
        );
    }
    if let Some(u) = usl {
        let n = 60;
        let (lo, hi) = (p.tmin.log2(), p.tmax.log2());
        let curve: Vec<String> = (0..=n)
            .map(|k| {
                let t = (lo + (hi - lo) * k as f64 / n as f64).exp2();
                format!("{:.1},{:.1}", p.x(t), p.y(u.predict(t)))
            })
            .collect();
        let _ = writeln!(
            o,
            r#"<polyline class="usl" data-method="{}" fill="none" stroke="{color}" stroke-width="1.2" stroke-dasharray="5 4" points="{}"/>"#,
            esc(m),
            curve.join(" ")
        );
    }
    legend(p, i, color, m, o);
}

/// Legend entry `i`: a line in `color` and the escaped `label`.
fn legend(p: &Plot, i: usize, color: &str, label: &str, o: &mut String) {
    let ly = p.mt + 10.0 + i as f64 * 20.0;
    legend_entry(o, (p.ml + p.pw + 14.0, ly), color, &esc(label));
}

/// Predicted import hours vs threads, one line per access method and policy, with the 95 %
/// interval as a shaded band.
fn estimate_chart(e: &crate::analysis::estimate::Estimate) -> String {
    let mut threads: Vec<u64> = e.options.iter().map(|o| o.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let top_h = e
        .options
        .iter()
        .map(|o| o.bounds_hours().1)
        .fold(0.0, f64::max);
    // Plot in the unit that reads best: hours, minutes or seconds.
    let (unit, per_hour) = if top_h >= 2.0 {
        ("hours", 1.0)
    } else if top_h * 60.0 >= 2.0 {
        ("minutes", 60.0)
    } else {
        ("seconds", 3600.0)
    };
    let p = Plot::with_legend(&threads, top_h * per_hour, 260.0);
    let (w, h) = (p.w, p.h);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg class="chart estimate" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="predicted import hours vs threads">"#
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="20" class="title">predicted import duration ({unit}) vs threads, 95 % band</text>"#,
        p.ml
    );
    axes(&p, &threads, unit, &mut o);
    let mut paths: Vec<(&str, ConnectionPolicy)> = e
        .options
        .iter()
        .map(|x| (x.method.as_str(), x.connection))
        .collect();
    paths.sort();
    paths.dedup();
    for (i, (m, conn)) in paths.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut pts: Vec<_> = e
            .options
            .iter()
            .filter(|x| x.method == *m && x.connection == *conn)
            .collect();
        pts.sort_by_key(|x| x.threads);
        let xy = |t: u64, v: f64| format!("{:.1},{:.1}", p.x(t as f64), p.y(v * per_hour));
        let line: Vec<String> = pts.iter().map(|x| xy(x.threads, x.hours)).collect();
        let band: Vec<String> = pts
            .iter()
            .map(|x| xy(x.threads, x.bounds_hours().1))
            .chain(pts.iter().rev().map(|x| xy(x.threads, x.bounds_hours().0)))
            .collect();
        let label = format!("{m} ({conn})");
        let _ = writeln!(
            o,
            r#"<polygon class="band" fill="{color}" fill-opacity="0.15" stroke="none" points="{}"/><polyline class="series" data-method="{}" fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            band.join(" "),
            esc(&label),
            line.join(" ")
        );
        legend(&p, i, color, &label, &mut o);
    }
    o.push_str("</svg>\n");
    o
}

/// The cutover plan against its window: one bar per configuration, its 95 % interval as a
/// line with the point, and the window (the full-speed time it holds) as a vertical line.
fn window_chart(w: &crate::analysis::window::WindowPlan) -> String {
    let top = w
        .rows
        .iter()
        .map(|r| r.duration_hi_s.max(r.window_s))
        .fold(w.window_s, f64::max)
        * 1.08;
    let (unit, per_s) = if top >= 7200.0 {
        ("hours", 1.0 / 3600.0)
    } else if top >= 120.0 {
        ("minutes", 1.0 / 60.0)
    } else {
        ("seconds", 1.0)
    };
    let (ml, mr, mt, row_h) = (330.0, 30.0, 40.0, 22.0);
    let pw = 420.0;
    let (wd, ht) = (ml + pw + mr, mt + row_h * w.rows.len() as f64 + 50.0);
    let x = |s: f64| ml + pw * s / top;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg class="chart window" xmlns="http://www.w3.org/2000/svg" width="{wd}" height="{ht}" viewBox="0 0 {wd} {ht}" role="img" aria-label="import duration against the window">"#
    );
    let _ = writeln!(
        o,
        r#"<text x="10" y="20" class="title">import duration ({unit}, 95 % interval) against the window {}</text>"#,
        esc(&w.window)
    );
    for (i, r) in w.rows.iter().enumerate() {
        let y = mt + row_h * (i as f64 + 0.5);
        let color = match r.outcome.as_str() {
            "meets" => "#2a7",
            "misses" => "#c33",
            _ => "#d90",
        };
        let label = match &r.what_if {
            Some(c) => format!(
                "{} {} ×{} + {}",
                r.method,
                r.connection,
                r.threads,
                crate::analysis::what_if::change_words(c)
            ),
            None => format!("{} {} ×{}", r.method, r.connection, r.threads),
        };
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text><line x1="{:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{color}" stroke-width="6" stroke-opacity="0.5"/><circle cx="{:.1}" cy="{y:.1}" r="4" fill="{color}"/><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-dasharray="2,2"/>"#,
            ml - 8.0,
            y + 4.0,
            esc(&label),
            x(r.duration_lo_s),
            x(r.duration_hi_s),
            x(r.duration_s),
            x(r.window_s),
            x(r.window_s),
            y - 9.0,
            y + 9.0
        );
    }
    let (y0, y1) = (mt - 6.0, mt + row_h * w.rows.len() as f64);
    let _ = writeln!(
        o,
        r##"<line x1="{ml}" x2="{ml}" y1="{y0}" y2="{y1}" stroke="#888"/><line x1="{:.1}" x2="{:.1}" y1="{y0}" y2="{y1}" stroke="#000" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">window {:.1}</text><text x="{ml}" y="{:.1}" font-size="11">0</text>"##,
        x(w.window_s),
        x(w.window_s),
        x(w.window_s),
        y1 + 16.0,
        w.window_s * per_s,
        y1 + 16.0
    );
    if w.office_s > 0.0 {
        let _ = writeln!(
            o,
            r#"<text x="10" y="{:.1}" font-size="11">dotted: the full-speed time the window holds for that row, its office hours at the readers' rate</text>"#,
            y1 + 32.0
        );
    }
    o.push_str("</svg>\n");
    o
}

/// The evidence for growth: every run's docs/sec relative to its cell's mean against the
/// documents stored at its midpoint, the fitted model through them (solid where measured,
/// dashed over the import's fill levels, where it is extrapolated).
fn growth_chart(e: &crate::analysis::estimate::Estimate) -> Option<String> {
    let g = e.growth.as_ref()?;
    if g.points.is_empty() {
        return None;
    }
    let slope = g.per_1000_docs / 1000.0;
    // Relative rate of the model at fill `s`: 1 / (1 + slope·(s − S̄)), flat when flat.
    let fitted = |s: f64| {
        let k = if g.model == "linear" { slope } else { 0.0 };
        1.0 / (1.0 + k * (s - g.stored_mean)).max(0.05)
    };
    // The import spans existing … existing + documents, counted as the sample's fill is,
    // from the sweep's start (`--existing-docs`).
    let import_from = e.existing_docs as f64;
    let import_to = import_from + e.documents as f64;
    let xmax_data = import_to.max(g.stored_max);
    let (xmax, xstep) = nice_axis(xmax_data);
    let ymax_data = g
        .points
        .iter()
        .map(|p| 1.0 / p.relative_cost.max(1e-9))
        .chain([fitted(0.0), fitted(import_to), 1.0])
        .fold(0.0, f64::max);
    let (ymax, ystep) = nice_axis(ymax_data * 1.05);
    let (w, h, ml, mt, pw, ph) = (760.0, 360.0, 64.0, 34.0, 660.0, 278.0);
    let x = |v: f64| ml + v / xmax * pw;
    let y = |v: f64| mt + ph - (v / ymax).clamp(0.0, 1.05) * ph;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg class="chart growth" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="docs/sec relative to each cell's mean vs documents stored">"#
    );
    let _ = writeln!(
        o,
        r#"<text x="{ml}" y="20" class="title">docs/sec vs documents stored (each run relative to its cell's mean); growth model: {}</text>"#,
        esc(&g.model)
    );
    let ticks = steps(ymax, ystep).map(|v| (y(v), fmt_num(v)));
    value_grid(&mut o, ml, Tenth(ml + pw), Tenth(ml - 6.0), ticks);
    let ticks = steps(xmax, xstep).map(|v| (x(v), fmt_num(v)));
    x_labels(&mut o, ticks, mt + ph + 16.0, Some((mt, mt + ph)));
    let (mid_x, mid_y) = (ml + pw / 2.0, mt + ph / 2.0);
    axis_titles(
        &mut o,
        (mid_x, h - 8.0),
        "documents stored",
        mid_y,
        "relative docs/sec",
    );
    for p in &g.points {
        let _ = writeln!(
            o,
            r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="3" fill="{}"><title>{} at {:.0} stored: {:.1} docs/s</title></circle>"#,
            x(p.stored_docs),
            y(1.0 / p.relative_cost.max(1e-9)),
            PALETTE[0],
            esc(&p.cell),
            p.stored_docs,
            p.docs_per_sec
        );
    }
    let line = |a: f64, b: f64| -> String {
        (0..=20)
            .map(|i| {
                let s = a + (b - a) * i as f64 / 20.0;
                format!("{:.1},{:.1}", x(s), y(fitted(s)))
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        o,
        r#"<polyline class="fit" fill="none" stroke="{}" stroke-width="2" points="{}"/><polyline class="fit extrapolated" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="6 4" points="{}"/>"#,
        PALETTE[1],
        line(g.stored_min, g.stored_max),
        PALETTE[1],
        line(import_from, import_to)
    );
    let _ = writeln!(
        o,
        r#"<text class="legend" x="{:.1}" y="{:.1}" text-anchor="end">dashed: the import ({:.0}–{:.0} stored), extrapolated</text>"#,
        ml + pw,
        mt + 14.0,
        import_from,
        import_to
    );
    o.push_str(
        "</svg>
",
    );
    Some(o)
}

pub fn render(s: &SweepSummary) -> String {
    let p = &s.plan;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ingestbench sweep {id}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; display: block; overflow-x: auto; max-width: 100%; }}
th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
.warn {{ color: #a40; }}
svg.chart {{ display: block; margin: 1em 0; background: #fff; width: 100%; height: auto; }}
section.answers {{ background: #f3f7fb; border-left: 4px solid #2a6fb0; padding: 0.2em 1.2em 0.8em; margin: 1em 0 2em; }}
section.answers dt {{ font-weight: 600; margin-top: 0.6em; }} section.answers dd {{ margin: 0.1em 0 0 1.2em; }}
svg .grid {{ stroke: #e4e4e4; }} svg .tick, svg .legend {{ font-size: 11px; fill: #333; }}
svg .axis {{ font-size: 12px; fill: #333; }} svg .title {{ font-size: 14px; font-weight: 600; fill: #222; }}
</style></head><body>"#,
        id = esc(&p.id)
    );
    let _ = writeln!(o, "<h1>ingestbench sweep {}</h1>", esc(&p.id));
    let _ = writeln!(
        o,
        "<p>Started {} · ingestbench {} · host {} ({} cores) · seed {} · {} · {} documents per run, {} runs per cell, order {} · baseline {} · profile {} ({})</p>",
        esc(&p.started_at),
        esc(&p.tool.version),
        esc(&p.host.hostname),
        p.host.cpus,
        p.seed,
        esc(&s.runs_text()),
        p.docs,
        p.runs,
        p.order,
        esc(&p.baseline),
        esc(&p.profile),
        esc(&p.node_type)
    );
    o.push_str("<section class=\"answers\">\n<h2>Answers</h2>\n<dl>\n");
    for a in super::answers::answers(s) {
        let _ = writeln!(
            o,
            "<dt>{}</dt><dd>{}</dd>",
            esc(&a.question),
            esc(&a.answer)
        );
    }
    o.push_str("</dl>\n</section>\n<h2>docs/sec vs threads</h2>\n");
    for (size, _) in &p.sizes {
        for conn in &p.connections {
            let cells: Vec<&CellSummary> = s
                .cells
                .iter()
                .filter(|c| c.size == *size && c.connection == *conn)
                .collect();
            if !cells.is_empty() {
                o.push_str(&chart(s, *size, *conn, &cells));
            }
        }
    }
    o.push_str(&super::slo_chart::charts(s));
    let util = super::util_chart::utilization_charts(s);
    if !util.is_empty() {
        o.push_str("<h2>Resource utilization vs threads</h2>\n");
        o.push_str(&util);
    }
    o.push_str("<h2>What it means</h2>\n");
    for (question, lines) in super::findings::grouped(s) {
        let _ = writeln!(o, "<h3>{}</h3>\n<ul>", esc(question));
        for f in lines {
            let _ = writeln!(o, "<li>{}</li>", esc(&f));
        }
        o.push_str("</ul>\n");
    }
    if !s.warnings.is_empty() {
        o.push_str("<h3>Warnings</h3>\n<ul>\n");
        for w in &s.warnings {
            let _ = writeln!(o, "<li class=\"warn\">{}</li>", esc(w));
        }
        o.push_str("</ul>\n");
    }
    for t in table::relative(s)
        .into_iter()
        .chain(table::scaling(s))
        .chain(table::limits(s))
    {
        t.html(&mut o);
    }
    table::cells(s).html(&mut o);
    if let (Some(e), Some(t)) = (&s.estimate, table::estimate(s)) {
        t.html(&mut o);
        o.push_str(&estimate_chart(e));
        if let Some(c) = growth_chart(e) {
            o.push_str(&c);
        }
        o.push_str("<ul>\n");
        for n in table::estimate_notes(s) {
            let _ = writeln!(o, "<li>{}</li>", esc(&n));
        }
        o.push_str("</ul>\n");
    }
    if let (Some(w), Some(t)) = (
        s.estimate.as_ref().and_then(|e| e.window.as_ref()),
        table::window(s),
    ) {
        t.html(&mut o);
        o.push_str(&window_chart(w));
    }
    o.push_str("</body></html>\n");

    o
}
