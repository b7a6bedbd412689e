//! The pieces every chart of the HTML report draws alike, written once: the colours, a
//! "nice" 0-based axis, numbers as tick labels, the value axis (horizontal grid lines with
//! their labels), ticks along x (evenly spaced values, or thread counts on a log scale),
//! the two axis titles and a legend entry. The charts (`html`, `util_chart`, `slo_chart`)
//! keep their own geometry and series; coordinates are written as the caller gives them
//! (a plain `f64`, or [`Tenth`] for a tenth of a pixel).

use std::fmt::{Display, Write};

/// The series colours, in order.
pub(super) const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// A coordinate written to a tenth of a pixel.
pub(super) struct Tenth(pub f64);

impl Display for Tenth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.1}", self.0)
    }
}

/// A "nice" upper bound and step for a 0-based axis.
pub(super) fn nice_axis(max: f64) -> (f64, f64) {
    if max <= 0.0 {
        return (1.0, 0.2);
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

/// A tick label: whole above 100 or when whole, else to one decimal.
pub(super) fn fmt_num(v: f64) -> String {
    if v >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The ticks of a 0-based axis: 0, `step`, 2·`step`, … up to `max`.
pub(super) fn steps(max: f64, step: f64) -> impl Iterator<Item = f64> {
    std::iter::successors(Some(0.0), move |v| Some(v + step)).take_while(move |v| *v <= max + 1e-9)
}

/// The value axis: at each tick (its pixel row and its label), a grid line from `x0` to `x1`
/// and the label right-aligned at `label_x`.
pub(super) fn value_grid<X: Display, L: Display>(
    o: &mut String,
    x0: f64,
    x1: X,
    label_x: X,
    ticks: impl IntoIterator<Item = (f64, L)>,
) {
    for (yy, label) in ticks {
        let _ = writeln!(
            o,
            r#"<line class="grid" x1="{x0}" x2="{x1}" y1="{yy:.1}" y2="{yy:.1}"/><text class="tick" x="{label_x}" y="{:.1}" text-anchor="end">{label}</text>"#,
            yy + 4.0
        );
    }
}

/// Labels along x at `label_y` (each tick's pixel column and label), with a grid line from
/// `top` to `bottom` before each when `grid` gives them.
pub(super) fn x_labels<L: Display>(
    o: &mut String,
    ticks: impl IntoIterator<Item = (f64, L)>,
    label_y: f64,
    grid: Option<(f64, f64)>,
) {
    for (xx, label) in ticks {
        if let Some((top, bottom)) = grid {
            let _ = write!(
                o,
                r#"<line class="grid" x1="{xx:.1}" x2="{xx:.1}" y1="{top}" y2="{bottom:.1}"/>"#
            );
        }
        let _ = writeln!(
            o,
            r#"<text class="tick" x="{xx:.1}" y="{label_y:.1}" text-anchor="middle">{label}</text>"#
        );
    }
}

/// The thread axis: a grid line from `top` to `bottom` at each thread count (`x` its column)
/// and its label at `label_y`, skipped where it would stand within `min_gap` pixels of the
/// last one written.
pub(super) fn thread_ticks(
    o: &mut String,
    threads: &[u64],
    x: impl Fn(f64) -> f64,
    (top, bottom): (f64, f64),
    label_y: f64,
    min_gap: f64,
) {
    let mut last = f64::NEG_INFINITY;
    for &t in threads {
        let xx = x(t as f64);
        let _ = writeln!(
            o,
            r#"<line class="grid" x1="{xx:.1}" x2="{xx:.1}" y1="{top}" y2="{bottom}"/>"#
        );
        if xx - last >= min_gap {
            let _ = writeln!(
                o,
                r#"<text class="tick" x="{xx:.1}" y="{label_y}" text-anchor="middle">{t}</text>"#
            );
            last = xx;
        }
    }
}

/// Both axis titles on one line: `x_title` centred at (`x`, `y`), `y_title` turned upright,
/// centred at height `y_mid`. The titles are markup (escape them first).
pub(super) fn axis_titles(
    o: &mut String,
    (x, y): (f64, f64),
    x_title: &str,
    y_mid: f64,
    y_title: &str,
) {
    let _ = writeln!(
        o,
        r#"<text class="axis" x="{x:.1}" y="{y:.1}" text-anchor="middle">{x_title}</text><text class="axis" transform="translate(16,{y_mid:.1}) rotate(-90)" text-anchor="middle">{y_title}</text>"#
    );
}

/// A legend entry at (`x`, `y`): a line in `color` and the label (markup: escape it first).
pub(super) fn legend_entry(o: &mut String, (x, y): (f64, f64), color: &str, label: &str) {
    let _ = writeln!(
        o,
        r#"<line class="legend" x1="{x}" x2="{}" y1="{y}" y2="{y}" stroke="{color}" stroke-width="2"/><text class="legend" x="{}" y="{}">{label}</text>"#,
        x + 24.0,
        x + 30.0,
        y + 4.0
    );
}
