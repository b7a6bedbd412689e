//! Report exporters behind one pure trait: each renders a [`SweepSummary`] to the text of one
//! file. Nothing here measures, reads the clock or touches the disk, so the same summary
//! always renders the same bytes (snapshot-tested; `ingestbench report DIR` re-renders).

use std::fmt::Write;

use super::{html, table};
use crate::analysis::summary::SweepSummary;

pub trait Exporter {
    /// File name inside the sweep's results directory.
    fn file_name(&self) -> &'static str;
    fn render(&self, s: &SweepSummary) -> String;
}

pub struct Json;
pub struct Csv;
pub struct Markdown;
pub struct Html;

/// Every report a sweep writes.
pub fn all() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(Json),
        Box::new(Csv),
        Box::new(Markdown),
        Box::new(Html),
    ]
}

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }
    fn render(&self, s: &SweepSummary) -> String {
        let mut t = serde_json::to_string_pretty(s).expect("summary serializes");
        t.push('\n');
        t
    }
}

pub const CSV_HEADER: &str = "method,connection,size,threads,runs,docs_per_sec,docs_per_sec_mean,docs_per_sec_stddev,mb_per_sec,latency_p50_ms,latency_p95_ms,latency_p99_ms,docs_ok,docs_failed,error_pct,new_connections,client_cpu_share,cv_pct,latency_mean_ms,latency_stddev_ms,warmup_docs,likely_limit";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        "cells.csv"
    }
    fn render(&self, s: &SweepSummary) -> String {
        let mut out = String::from(CSV_HEADER);
        out.push('\n');
        for c in &s.cells {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&c.method),
                c.connection,
                c.size,
                c.threads,
                c.runs,
                c.docs_per_sec,
                c.docs_per_sec_mean,
                c.docs_per_sec_stddev,
                c.mb_per_sec,
                c.latency_ms.p50,
                c.latency_ms.p95,
                c.latency_ms.p99,
                c.docs_ok,
                c.docs_failed,
                c.error_pct,
                c.new_connections,
                c.client_cpu_share,
                c.cv_pct,
                c.latency_ms.mean,
                c.latency_ms.stddev,
                c.warmup_docs,
                c.bottleneck.as_ref().map_or("", |b| b.kind.as_str())
            );
        }
        out
    }
}

impl Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }
    fn render(&self, s: &SweepSummary) -> String {
        let p = &s.plan;
        let mut o = String::new();
        let _ = writeln!(o, "# ingestbench sweep {}\n", p.id);
        let _ = writeln!(
            o,
            "Started {} · ingestbench {} · host {} ({} cores) · seed {} · {}\n",
            p.started_at,
            p.tool.version,
            p.host.hostname,
            p.host.cpus,
            p.seed,
            s.runs_text()
        );
        let methods: Vec<String> = p
            .methods
            .iter()
            .map(|m| format!("{} ({})", m.name, m.url))
            .collect();
        let sizes: Vec<String> = p.sizes.iter().map(|(n, b)| format!("{n} {b} B")).collect();
        let _ = writeln!(
            o,
            "Plan: methods {}; connections {}; sizes {}; threads {}; {} documents per run, {} runs per cell, order {}; baseline {}; profile {} ({}).\n",
            methods.join(", "),
            p.connections
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(", "),
            sizes.join(", "),
            p.threads
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(","),
            p.docs,
            p.runs,
            p.order,
            p.baseline,
            p.profile,
            p.node_type
        );
        let _ = writeln!(o, "## Answers\n");
        for a in super::answers::answers(s) {
            let _ = writeln!(o, "- **{}:** {}", a.question, a.answer);
        }
        let _ = writeln!(o, "\n## What it means\n");
        for (question, lines) in super::findings::grouped(s) {
            let _ = writeln!(o, "### {question}\n");
            for f in lines {
                let _ = writeln!(o, "- {f}");
            }
            o.push('\n');
        }
        if !s.warnings.is_empty() {
            let _ = writeln!(o, "### Warnings\n");
            for w in &s.warnings {
                let _ = writeln!(o, "- **Warning:** {w}");
            }
            o.push('\n');
        }
        for t in table::by_threads(s) {
            t.markdown(&mut o);
        }
        for t in table::relative(s)
            .into_iter()
            .chain(table::scaling(s))
            .chain(table::limits(s))
            .chain(super::util_chart::table(s))
        {
            t.markdown(&mut o);
        }
        table::cells(s).markdown(&mut o);
        if let Some(t) = table::estimate(s) {
            t.markdown(&mut o);
            for n in table::estimate_notes(s) {
                let _ = writeln!(o, "- {n}");
            }
        }
        if let Some(t) = table::window(s) {
            t.markdown(&mut o);
        }
        o
    }
}

impl Exporter for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }
    fn render(&self, s: &SweepSummary) -> String {
        html::render(s)
    }
}
