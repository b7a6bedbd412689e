//! The resource charts of a sweep's report: each resource's utilization (busy share of its
//! capacity: the client's CPU, each server process, this host's CPU, a CPU quota, each disk)
//! against threads, one small panel per access method for each size with the 100 % capacity
//! line; the bound c/D_max (with its interval as a band) drawn over the docs/sec chart; and
//! the compact table of each cell's bottleneck for report.md. Reads `CellSummary::demands`
//! and `verdict` only (`analysis::demands`, `analysis::verdict`); draws, computes nothing.

use std::fmt::Write;

use super::svg::{legend_entry, steps, thread_ticks, value_grid};
use super::table::{Align, Table, esc};
use crate::analysis::demands::Demand;
use crate::analysis::summary::{CellSummary, SweepSummary};
use crate::fixtures::SizeClass;
use crate::metrics::resources::Kind;

const COLORS: [&str; 8] = [
    "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
];

/// A resource drawn on the utilization chart: a known capacity and a reading.
fn drawn(d: &Demand) -> bool {
    d.capacity > 0.0 && d.error.is_none() && d.kind != Kind::Network
}

/// The cells of one panel: one access method and connection policy at one size, by threads.
struct Panel<'a> {
    title: String,
    cells: Vec<&'a CellSummary>,
}

fn panels<'a>(s: &'a SweepSummary, size: SizeClass) -> Vec<Panel<'a>> {
    let many_conns = s.plan.connections.len() > 1;
    let mut out = Vec::new();
    for m in &s.plan.methods {
        for conn in &s.plan.connections {
            let mut cells: Vec<&CellSummary> = s
                .cells
                .iter()
                .filter(|c| {
                    c.size == size
                        && c.method == m.name
                        && c.connection == *conn
                        && c.demands.iter().any(drawn)
                })
                .collect();
            if cells.is_empty() {
                continue;
            }
            cells.sort_by_key(|c| c.threads);
            let title = if many_conns {
                format!("{}, {conn}", m.name)
            } else {
                m.name.clone()
            };
            out.push(Panel { title, cells });
        }
    }
    out
}

/// Per size with resource readings: an SVG (`id="util-<size>"`, class `chart util`) of small
/// multiples, one panel per access method, a line per resource (`polyline.util`, its name
/// in `data-resource`) against threads on a log axis, and the 100 % line (`line.capacity`).
pub fn utilization_charts(s: &SweepSummary) -> String {
    let mut o = String::new();
    for (size, _) in &s.plan.sizes {
        let ps = panels(s, *size);
        if ps.is_empty() {
            continue;
        }
        o.push_str(&size_chart(s, *size, &ps));
    }
    o
}

fn size_chart(s: &SweepSummary, size: SizeClass, ps: &[Panel<'_>]) -> String {
    // Every resource of the size, in the order first met (the bottleneck first per cell),
    // so a resource keeps its colour across the panels.
    let mut names: Vec<&str> = Vec::new();
    for p in ps {
        for c in &p.cells {
            for d in c.demands.iter().filter(|d| drawn(d)) {
                if !names.contains(&d.name.as_str()) {
                    names.push(&d.name);
                }
            }
        }
    }
    let umax = ps
        .iter()
        .flat_map(|p| &p.cells)
        .flat_map(|c| c.demands.iter().filter(|d| drawn(d)))
        .map(|d| d.utilization)
        .fold(1.0, f64::max)
        .min(2.0);
    let ymax = (umax * 1.1 * 10.0).ceil() / 10.0;
    let threads = &s.plan.threads;
    let tmin = *threads.iter().min().unwrap_or(&1) as f64;
    let tmax = (*threads.iter().max().unwrap_or(&1) as f64).max(tmin * 2.0);
    let cols = ps.len().min(3);
    let rows = ps.len().div_ceil(cols);
    let (pw, ph, ml, mt, gap) = (230.0, 170.0, 52.0, 52.0, 70.0);
    let legend_h = 18.0 * names.len() as f64 + 16.0;
    let w = ml + cols as f64 * (pw + gap);
    let h = mt + rows as f64 * (ph + gap) + legend_h;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg class="chart util" id="util-{size}" data-size="{size}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="resource utilization vs threads, {size}">"#
    );
    let _ = writeln!(
        o,
        r#"<text x="{ml}" y="20" class="title">utilization of each resource's capacity vs threads: {size} documents</text>"#
    );
    for (k, p) in ps.iter().enumerate() {
        let x0 = ml + (k % cols) as f64 * (pw + gap);
        let y0 = mt + (k / cols) as f64 * (ph + gap);
        let x = |t: f64| x0 + (t.log2() - tmin.log2()) / (tmax.log2() - tmin.log2()) * pw;
        let y = |u: f64| y0 + ph - (u / ymax).clamp(0.0, 1.0) * ph;
        let _ = writeln!(
            o,
            r#"<text class="axis" x="{x0}" y="{}">{}</text>"#,
            y0 - 8.0,
            esc(&p.title)
        );
        let step = if ymax > 1.2 { 0.5 } else { 0.25 };
        let ticks = steps(ymax, step).map(|u| (y(u), format!("{:.0} %", u * 100.0)));
        value_grid(&mut o, x0, x0 + pw, x0 - 4.0, ticks);
        thread_ticks(&mut o, threads, x, (y0, y0 + ph), y0 + ph + 14.0, 16.0);
        let _ = writeln!(
            o,
            r#"<text class="axis" x="{}" y="{}" text-anchor="middle">threads</text>"#,
            x0 + pw / 2.0,
            y0 + ph + 30.0
        );
        let _ = writeln!(
            o,
            r##"<line class="capacity" x1="{x0}" x2="{}" y1="{c:.1}" y2="{c:.1}" stroke="#c00" stroke-width="1.2" stroke-dasharray="6 3"/><text class="tick" x="{}" y="{:.1}" text-anchor="end" fill="#c00">capacity</text>"##,
            x0 + pw,
            x0 + pw,
            y(1.0) - 4.0,
            c = y(1.0)
        );
        for (i, name) in names.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let pts: Vec<(u64, &Demand)> = p
                .cells
                .iter()
                .filter_map(|c| {
                    c.demands
                        .iter()
                        .find(|d| d.name == *name && drawn(d))
                        .map(|d| (c.threads, d))
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            let line: Vec<String> = pts
                .iter()
                .map(|(t, d)| format!("{:.1},{:.1}", x(*t as f64), y(d.utilization)))
                .collect();
            let _ = writeln!(
                o,
                r#"<polyline class="util" data-resource="{}" fill="none" stroke="{color}" stroke-width="1.8" points="{}"/>"#,
                esc(name),
                line.join(" ")
            );
            for (t, d) in &pts {
                let _ = writeln!(
                    o,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.8" fill="{color}"><title>{}: {t} threads, {:.0} % of {:.2} ({}), {:.3} ms per document</title></circle>"#,
                    x(*t as f64),
                    y(d.utilization),
                    esc(name),
                    d.utilization * 100.0,
                    d.capacity,
                    esc(&d.capacity_from),
                    d.demand_ms
                );
            }
        }
    }
    let ly0 = mt + rows as f64 * (ph + gap) - 10.0;
    for (i, name) in names.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        legend_entry(&mut o, (ml, ly0 + 18.0 * i as f64), color, &esc(name));
    }
    o.push_str("</svg>\n");
    o
}

/// The largest bound worth stretching the docs/sec axis to: the bounds' upper ends among
/// `cells`, but never past `cap` (a bound far above the measured docs/s would flatten them;
/// points above the axis are drawn at its top as a triangle).
pub fn bound_max(cells: &[&CellSummary], cap: f64) -> f64 {
    cells
        .iter()
        .filter_map(|c| c.verdict.as_ref().and_then(|v| v.bound.as_ref()))
        .map(|b| b.docs_per_sec_hi.max(b.docs_per_sec))
        .fold(0.0, f64::max)
        .min(cap)
}

/// The bound c/D_max of `method`'s cells over the docs/sec chart: its interval as a band
/// (`polygon.bound-band`), the bound dotted (`polyline.bound`, `data-method`), a point per
/// cell titled with the resource that sets it; `x`, `y` map threads and docs/s to the plot,
/// `ymax` is the axis top.
pub fn bound_overlay(
    cells: &[&CellSummary],
    method: &str,
    color: &str,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
    ymax: f64,
) -> String {
    let mut pts: Vec<(u64, &crate::analysis::demands::Bound)> = cells
        .iter()
        .filter(|c| c.method == method)
        .filter_map(|c| {
            c.verdict
                .as_ref()
                .and_then(|v| v.bound.as_ref())
                .map(|b| (c.threads, b))
        })
        .collect();
    if pts.is_empty() {
        return String::new();
    }
    pts.sort_by_key(|(t, _)| *t);
    let top = |v: f64| v.min(ymax * 1.02);
    let mut o = String::new();
    let upper: Vec<String> = pts
        .iter()
        .map(|(t, b)| format!("{:.1},{:.1}", x(*t as f64), y(top(b.docs_per_sec_hi))))
        .collect();
    let lower: Vec<String> = pts
        .iter()
        .rev()
        .map(|(t, b)| format!("{:.1},{:.1}", x(*t as f64), y(top(b.docs_per_sec_lo))))
        .collect();
    let _ = writeln!(
        o,
        r#"<polygon class="bound-band" data-method="{}" fill="{color}" fill-opacity="0.10" stroke="none" points="{} {}"/>"#,
        esc(method),
        upper.join(" "),
        lower.join(" ")
    );
    let line: Vec<String> = pts
        .iter()
        .map(|(t, b)| format!("{:.1},{:.1}", x(*t as f64), y(top(b.docs_per_sec))))
        .collect();
    let _ = writeln!(
        o,
        r#"<polyline class="bound" data-method="{}" fill="none" stroke="{color}" stroke-width="1.4" stroke-dasharray="1.5 3" points="{}"/>"#,
        esc(method),
        line.join(" ")
    );
    for (t, b) in &pts {
        let (xx, above) = (x(*t as f64), b.docs_per_sec > ymax * 1.02);
        let yy = y(top(b.docs_per_sec));
        let title = format!(
            "{}: {t} threads, bound {:.0} docs/s ({:.0}–{:.0}) by {} at {:.0} %",
            esc(method),
            b.docs_per_sec,
            b.docs_per_sec_lo,
            b.docs_per_sec_hi,
            esc(&b.resource),
            b.utilization * 100.0
        );
        if above {
            let _ = writeln!(
                o,
                r#"<path class="bound-above" d="M{:.1},{:.1} l4,7 l-8,0 z" fill="{color}"><title>{title} (above the chart)</title></path>"#,
                xx,
                yy - 3.0
            );
        } else {
            let _ = writeln!(
                o,
                r#"<rect class="bound-point" x="{:.1}" y="{:.1}" width="5" height="5" fill="none" stroke="{color}"><title>{title}</title></rect>"#,
                xx - 2.5,
                yy - 2.5
            );
        }
    }
    o
}

/// The legend entry of the bound, at (`x`, `y`): a dotted line and its label (the band
/// around it is its 95 % interval over the runs).
pub fn bound_legend(x: f64, y: f64) -> String {
    format!(
        r##"<line x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="#555" stroke-width="1.4" stroke-dasharray="1.5 3"/><text class="legend" x="{}" y="{}">bound c/D_max</text>"##,
        x + 24.0,
        x + 30.0,
        y + 4.0
    )
}

/// report.md's compact view of the same readings: per cell its bottleneck (the resource with
/// the largest demand per unit of capacity) and utilization, the bound, the verdict's kind
/// and every other resource's utilization.
pub fn table(s: &SweepSummary) -> Option<Table> {
    if s.cells.iter().all(|c| c.demands.is_empty()) {
        return None;
    }
    let mut t = Table {
        title: "Resource utilization: the bottleneck of each cell".into(),
        columns: [
            ("method", Align::Left),
            ("size", Align::Left),
            ("threads", Align::Right),
            ("docs/s", Align::Right),
            ("bottleneck", Align::Left),
            ("its utilization %", Align::Right),
            ("bound docs/s (95 %)", Align::Right),
            ("verdict", Align::Left),
            ("others: utilization %", Align::Left),
        ]
        .iter()
        .map(|(n, a)| (n.to_string(), *a))
        .collect(),
        rows: Vec::new(),
    };
    let many_conns = s.plan.connections.len() > 1;
    for c in s.cells.iter().filter(|c| !c.demands.is_empty()) {
        let ds: Vec<&Demand> = c.demands.iter().filter(|d| drawn(d)).collect();
        let v = c.verdict.as_ref();
        let b = v.and_then(|v| v.bound.as_ref());
        let top = b
            .and_then(|b| ds.iter().find(|d| d.name == b.resource))
            .or(ds.first())
            .copied();
        let others: Vec<String> = ds
            .iter()
            .filter(|d| top.is_none_or(|t| t.name != d.name))
            .map(|d| format!("{} {:.0}", d.name, d.utilization * 100.0))
            .collect();
        let method = if many_conns {
            format!("{} ({})", c.method, c.connection)
        } else {
            c.method.clone()
        };
        t.rows.push(vec![
            method,
            c.size.to_string(),
            c.threads.to_string(),
            format!("{:.0}", c.docs_per_sec),
            top.map_or("-".into(), |d| d.name.clone()),
            top.map_or("-".into(), |d| format!("{:.0}", d.utilization * 100.0)),
            b.map_or("-".into(), |b| {
                format!(
                    "{:.0} ({:.0}–{:.0})",
                    b.docs_per_sec, b.docs_per_sec_lo, b.docs_per_sec_hi
                )
            }),
            v.map_or("-".into(), |v| v.kind.clone()),
            if others.is_empty() {
                "-".into()
            } else {
                others.join(", ")
            },
        ]);
    }
    Some(t)
}
