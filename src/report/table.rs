//! One table model for the reports: the relative-cost, scaling and all-cells tables (and the
//! Markdown docs/sec-by-threads tables) are built here once, as plain text cells, and the
//! Markdown and HTML exporters only lay them out, so their columns cannot drift apart (as
//! hyperfine's `MarkupExporter` does). Pure: no I/O, no clock.

use std::fmt::Write;

use crate::analysis::summary::{CellSummary, SweepSummary};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A titled table: a header per column and rows of plain-text cells (not escaped).
#[derive(Debug, Clone)]
pub struct Table {
    pub title: String,
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(title: impl Into<String>, columns: &[(&str, Align)]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|(n, a)| (n.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// A table whose first columns name the cell (`key`: some of method, connection, size and
    /// threads, the one number and so right-aligned), then `rest`.
    fn keyed(title: impl Into<String>, key: &[&str], rest: &[(&str, Align)]) -> Table {
        let align = |k: &str| {
            if k == "threads" {
                Align::Right
            } else {
                Align::Left
            }
        };
        let key = key.iter().map(|k| (*k, align(k)));
        Table::new(title, &key.chain(rest.iter().copied()).collect::<Vec<_>>())
    }

    /// A new row of a `keyed` table, its first cells naming the cell, for the caller to
    /// extend with the rest.
    fn row(&mut self, key: &[&dyn std::fmt::Display]) -> &mut Vec<String> {
        self.rows.push(key.iter().map(|k| k.to_string()).collect());
        self.rows.last_mut().expect("just pushed")
    }

    fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.columns.len(), "{}", self.title);
        self.rows.push(row);
    }

    /// `## title`, a blank line, the pipe table, a blank line.
    pub fn markdown(&self, o: &mut String) {
        let cell = |s: &str| s.replace('|', "\\|");
        let _ = writeln!(o, "## {}\n", self.title);
        let head: Vec<String> = self.columns.iter().map(|(n, _)| cell(n)).collect();
        let _ = writeln!(o, "| {} |", head.join(" | "));
        let rule: String = self
            .columns
            .iter()
            .map(|(_, a)| match a {
                Align::Left => "---|",
                Align::Right => "---:|",
            })
            .collect();
        let _ = writeln!(o, "|{rule}");
        for r in &self.rows {
            let r: Vec<String> = r.iter().map(|c| cell(c)).collect();
            let _ = writeln!(o, "| {} |", r.join(" | "));
        }
        o.push('\n');
    }

    /// `<h2>title</h2>` and the table, every cell escaped.
    pub fn html(&self, o: &mut String) {
        let _ = write!(o, "<h2>{}</h2>\n<table><tr>", esc(&self.title));
        for (n, _) in &self.columns {
            let _ = write!(o, "<th>{}</th>", esc(n));
        }
        o.push_str("</tr>\n");
        for r in &self.rows {
            o.push_str("<tr>");
            for c in r {
                let _ = write!(o, "<td>{}</td>", esc(c));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
    }
}

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const DASH: &str = "–";

/// The plan's methods, in its order, that have one of `cells`.
pub(super) fn methods_in<'a>(s: &'a SweepSummary, cells: &[&CellSummary]) -> Vec<&'a str> {
    s.plan
        .methods
        .iter()
        .map(|m| m.name.as_str())
        .filter(|m| cells.iter().any(|c| c.method == *m))
        .collect()
}

/// docs/sec (mean ± σ) by thread count, one column per method, for each size × connection.
pub fn by_threads(s: &SweepSummary) -> Vec<Table> {
    let p = &s.plan;
    let mut out = Vec::new();
    for (size, _) in &p.sizes {
        for conn in &p.connections {
            let cells: Vec<_> = s
                .cells
                .iter()
                .filter(|c| &c.size == size && &c.connection == conn)
                .collect();
            if cells.is_empty() {
                continue;
            }
            let methods = methods_in(s, &cells);
            let mut cols = vec![("threads", Align::Right)];
            cols.extend(methods.iter().map(|m| (*m, Align::Right)));
            let mut t = Table::new(
                format!("docs/sec by threads: {size}, {conn} connections"),
                &cols,
            );
            for &n in &p.threads {
                let mut row = vec![n.to_string()];
                row.extend(methods.iter().map(|m| {
                    cells
                        .iter()
                        .find(|c| c.method == *m && c.threads == n)
                        .map_or(DASH.to_string(), |c| {
                            format!("{:.1} ± {:.1}", c.docs_per_sec, c.docs_per_sec_stddev)
                        })
                }));
                t.push(row);
            }
            out.push(t);
        }
    }
    out
}

/// Each method's docs/sec against the baseline, with the 95 % interval.
pub fn relative(s: &SweepSummary) -> Option<Table> {
    if s.relative.is_empty() {
        return None;
    }
    let mut t = Table::keyed(
        format!("Relative cost against {}", s.plan.baseline),
        &["method", "connection", "size", "threads"],
        &[
            ("docs/sec vs baseline", Align::Right),
            ("95 % interval", Align::Right),
            ("reads as", Align::Left),
        ],
    );
    for r in &s.relative {
        use crate::analysis::limits::Verdict;
        let row = t.row(&[&r.method, &r.connection, &r.size, &r.threads]);
        row.extend([
            format!("{:+.1} %", r.diff_pct),
            format!("± {:.1} %", r.ci95_pct),
            match r.verdict {
                Verdict::Slower => "slower".into(),
                Verdict::Faster => "faster".into(),
                Verdict::NoDifference => "no significant difference".into(),
                Verdict::TooNoisy => "too noisy to tell: run more (--precision)".into(),
            },
        ]);
    }
    Some(t)
}

/// Peak, knee, degradation and the USL fit per method, connection and size.
pub fn scaling(s: &SweepSummary) -> Option<Table> {
    if s.scaling.is_empty() {
        return None;
    }
    let mut t = Table::keyed(
        "Scaling",
        &["method", "connection", "size"],
        &[
            ("peak docs/s", Align::Right),
            ("at threads", Align::Right),
            ("knee (90 %)", Align::Right),
            ("worse beyond", Align::Right),
            ("USL λ", Align::Right),
            ("σ", Align::Right),
            ("κ", Align::Right),
            ("R²", Align::Right),
            ("USL peak", Align::Right),
            ("reliable", Align::Left),
        ],
    );
    for r in &s.scaling {
        let sc = &r.scaling;
        let row = t.row(&[&r.method, &r.connection, &r.size]);
        row.extend([
            format!("{:.1}", sc.peak_docs_per_sec),
            sc.peak_threads.to_string(),
            sc.knee_threads.to_string(),
            sc.degrades_after_threads
                .map_or(DASH.into(), |t| t.to_string()),
        ]);
        match &r.usl {
            Some(u) => row.extend([
                format!("{:.1}", u.lambda),
                format!("{:.4}", u.sigma),
                format!("{:.6}", u.kappa),
                format!("{:.3}", u.r_squared),
                u.peak_concurrency
                    .zip(u.peak_docs_per_sec)
                    .map_or(DASH.into(), |(n, x)| format!("{x:.1} @ {n:.0}")),
            ]),
            None => row.extend(std::iter::repeat_n(DASH.to_string(), 5)),
        }
        row.push(match &r.unreliable {
            Some(why) => format!("no: {why}"),
            None => "yes".into(),
        });
    }
    Some(t)
}

/// Every cell: rates, latency percentiles, errors, connections opened, node split.
pub fn cells(s: &SweepSummary) -> Table {
    let mut t = Table::keyed(
        "All cells",
        &["method", "connection", "size", "threads"],
        &[
            ("runs", Align::Right),
            ("docs/s", Align::Right),
            ("mean ± σ", Align::Right),
            ("CV %", Align::Right),
            ("MB/s", Align::Right),
            ("latency μ ms", Align::Right),
            ("σ ms", Align::Right),
            ("2σ ms", Align::Right),
            ("p50 ms", Align::Right),
            ("p95 ms", Align::Right),
            ("p99 ms", Align::Right),
            ("errors %", Align::Right),
            ("connections", Align::Right),
            ("nodes", Align::Left),
        ],
    );
    for c in &s.cells {
        let nodes: Vec<String> = c
            .node_split
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let row = t.row(&[&c.method, &c.connection, &c.size, &c.threads]);
        row.extend([
            c.runs.to_string(),
            format!("{:.1}", c.docs_per_sec),
            format!("{:.1} ± {:.1}", c.docs_per_sec_mean, c.docs_per_sec_stddev),
            format!("{:.1}", c.cv_pct),
            format!("{:.2}", c.mb_per_sec),
            format!("{:.2}", c.latency_ms.mean),
            format!("{:.2}", c.latency_ms.stddev),
            format!("{:.2}", c.latency_ms.two_sigma),
            format!("{:.2}", c.latency_ms.p50),
            format!("{:.2}", c.latency_ms.p95),
            format!("{:.2}", c.latency_ms.p99),
            format!("{:.2}", c.error_pct),
            c.new_connections.to_string(),
            nodes.join(", "),
        ]);
    }
    t
}

/// What limited each cell: warm-up, the client's and the servers' CPU and memory, and the
/// likely bottleneck (absent for results made before servers were read).
pub fn limits(s: &SweepSummary) -> Option<Table> {
    if s.cells.iter().all(|c| c.bottleneck.is_none()) {
        return None;
    }
    let mut t = Table::keyed(
        "What limited each cell",
        &["method", "connection", "size", "threads"],
        &[
            ("warm-up docs", Align::Right),
            ("client CPU %", Align::Right),
            ("servers: CPU % of cores, memory", Align::Left),
            ("likely limit", Align::Left),
        ],
    );
    for c in &s.cells {
        let servers: Vec<String> = c
            .servers
            .iter()
            .map(|x| match (x.cpu_share, &x.error) {
                (Some(cpu), _) => format!(
                    "{} {:.0} %{}",
                    x.name,
                    cpu * 100.0,
                    x.memory_bytes.map_or(String::new(), |m| format!(
                        ", {:.0} MiB",
                        m as f64 / 1048576.0
                    ))
                ),
                (None, Some(e)) => format!("{}: not read ({e})", x.name),
                (None, None) => format!("{}: not read", x.name),
            })
            .collect();
        let row = t.row(&[&c.method, &c.connection, &c.size, &c.threads]);
        row.extend([
            c.warmup_docs.to_string(),
            format!("{:.0}", c.client_cpu_share * 100.0),
            if servers.is_empty() {
                DASH.into()
            } else {
                servers.join("; ")
            },
            c.bottleneck
                .as_ref()
                .map_or(DASH.into(), |b| b.text.clone()),
        ]);
    }
    Some(t)
}

/// The import estimate: every option, fastest first.
pub fn estimate(s: &SweepSummary) -> Option<Table> {
    let e = s.estimate.as_ref()?;
    let mut t = Table::keyed(
        format!(
            "Import estimate: {} ({} documents, {})",
            e.corpus,
            e.documents,
            crate::analysis::estimate::human_bytes(e.bytes)
        ),
        &["method", "connection", "threads"],
        &[
            ("duration", Align::Right),
            ("95 % interval", Align::Right),
            ("s per document", Align::Right),
            ("s per MiB", Align::Right),
        ],
    );
    for o in &e.options {
        let row = t.row(&[&o.method, &o.connection, &o.threads]);
        row.extend([
            crate::timefmt::human_hours(o.hours),
            o.spread_text(),
            format!("{:.6}", o.per_doc_s),
            format!("{:.6}", o.per_mib_s),
        ]);
    }
    Some(t)
}

/// The cutover plan (`estimate --window`): every configuration against the window.
pub fn window(s: &SweepSummary) -> Option<Table> {
    let w = s.estimate.as_ref()?.window.as_ref()?;
    let h = |x: f64| crate::timefmt::human_hours(x / 3600.0);
    let mut t = Table::keyed(
        format!("Cutover plan: {}", w.window),
        &["method", "connection", "threads"],
        &[
            ("with", Align::Left),
            ("duration", Align::Right),
            ("95 % interval", Align::Right),
            ("P(finish)", Align::Right),
            ("outcome", Align::Left),
            ("margin", Align::Right),
            ("add first", Align::Left),
        ],
    );
    for r in &w.rows {
        let row = t.row(&[&r.method, &r.connection, &r.threads]);
        row.extend([
            r.what_if
                .as_deref()
                .map(crate::analysis::what_if::change_words)
                .unwrap_or_else(|| "as measured".into()),
            h(r.duration_s),
            format!("{} – {}", h(r.duration_lo_s), h(r.duration_hi_s)),
            format!("{:.0} %", 100.0 * r.p_finish),
            r.outcome.clone(),
            if r.margin_s >= 0.0 {
                h(r.margin_s)
            } else {
                format!("-{}", h(-r.margin_s))
            },
            r.add_first.clone().unwrap_or_default(),
        ]);
    }
    Some(t)
}

/// What the estimate says, then its caveats and assumptions, one line each.
pub fn estimate_notes(s: &SweepSummary) -> Vec<String> {
    let Some(e) = &s.estimate else {
        return Vec::new();
    };
    let mut flags: Vec<&String> = e.options.iter().flat_map(|o| &o.flags).collect();
    flags.sort();
    flags.dedup();
    e.findings
        .iter()
        .cloned()
        .chain(flags.into_iter().map(|f| format!("Caveat: {f}")))
        .chain(e.assumptions.iter().map(|a| format!("Assumes: {a}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_as_many_cells_as_the_header() {
        let s = crate::report::testdata::fixed_summary();
        let mut all = by_threads(&s);
        all.extend(relative(&s));
        all.extend(scaling(&s));
        all.push(cells(&s));
        all.extend(limits(&s));
        all.extend(estimate(&s));
        for t in &all {
            for r in &t.rows {
                assert_eq!(r.len(), t.columns.len(), "{}", t.title);
            }
        }
    }
}
