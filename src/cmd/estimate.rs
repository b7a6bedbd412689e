//! `ingestbench estimate --corpus corpus.json RESULTS_DIR...`: how long the corpus's import
//! takes per measured option, from sweep results; writes estimate.json, prints the table.

use std::fmt::Write;

use anyhow::{Context, Result, bail};

use super::write_file;
use crate::analysis::estimate::{Estimate, estimate_from, human_bytes};
use crate::cli::EstimateArgs;
use crate::cmd::Outcome;
use crate::corpus::CorpusDescription;
use crate::timefmt::human_hours;

pub fn estimate_command(a: &EstimateArgs) -> Result<Outcome> {
    let corpus = CorpusDescription::load_or_describe(&a.corpus)?;
    let mut sweeps = Vec::new();
    for d in &a.dirs {
        if !crate::results::is_results_dir(d) {
            bail!(
                "{}: not a results directory (no plan.json); give results/sweep-<id> directories",
                d.display()
            );
        }
        sweeps.push(crate::results::load_dir(d)?);
    }
    let window = match &a.window {
        Some(w) => Some(crate::plan::window::parse_window(w)?),
        None => None,
    };
    let office = match (&window, &a.office_hours, &a.office_rate) {
        (Some(w), Some(h), Some(r)) => Some(crate::plan::window::office_hours(h, r, w)?),
        _ => None,
    };
    let mut e = estimate_from(&corpus, &sweeps, a.existing_docs);
    if let Some(w) = &window {
        e.window = Some(crate::analysis::window::plan(&e, w, office.as_ref()));
    }
    if e.options.is_empty() {
        bail!(
            "{}: {}{}",
            a.dirs[0].display(),
            e.answer,
            e.findings
                .iter()
                .map(|f| format!("\n  {f}"))
                .collect::<String>()
        );
    }
    let json = serde_json::to_string_pretty(&e)?;
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| a.dirs[0].join("estimate.json"));
    write_file(&out, &json).with_context(|| format!("writing {}", out.display()))?;
    if a.json {
        println!("{json}");
    }
    eprint!("{}", table(&e));
    if let Some(note) = corpus.preflight.as_ref().and_then(|p| p.estimate_note()) {
        eprintln!("{note}");
    }
    eprintln!("  wrote {}", out.display());
    if a.output.is_none() {
        // The estimate joins the first sweep's reports (report.md / report.html).
        let mut summary = crate::report::load_summary(&a.dirs[0])?;
        summary.estimate = Some(e);
        for p in crate::report::write_reports(&a.dirs[0], &summary)? {
            eprintln!("  wrote {}", p.display());
        }
    }
    Ok(Outcome::Success)
}

/// The human table: every option, fastest first, then findings, flags and assumptions.
pub fn table(e: &Estimate) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "estimate for {}: {} documents, {}",
        e.corpus,
        e.documents,
        human_bytes(e.bytes)
    );
    if e.versions + e.folders > 0 {
        let _ = writeln!(
            o,
            "  with {} versions ({}) and {} folders to create: {} requests besides one upload per document",
            e.versions,
            human_bytes(e.version_bytes),
            e.folders,
            e.extra_requests
        );
    }
    let _ = writeln!(o, "  answer: {}", e.answer);
    let _ = writeln!(
        o,
        "  {:<16} {:<10} {:>7} {:>12} {:>12} {:>12} {:>12}",
        "method", "connection", "threads", "duration", "95 %", "s/doc", "s/MiB"
    );
    for x in &e.options {
        let _ = writeln!(
            o,
            "  {:<16} {:<10} {:>7} {:>12} {:>12} {:>12.6} {:>12.6}",
            x.method,
            x.connection.name(),
            x.threads,
            human_hours(x.hours),
            x.spread_text(),
            x.per_doc_s,
            x.per_mib_s
        );
    }
    if let Some(w) = &e.window {
        let _ = writeln!(o, "  window: {}", w.answer);
        for r in &w.rows {
            let _ = writeln!(
                o,
                "    {:<8} {}",
                r.outcome,
                crate::analysis::window::row_text(r)
            );
        }
    }
    for f in &e.findings {
        let _ = writeln!(o, "  {f}");
    }
    if let Some(p) = &e.pilot {
        let _ = writeln!(o, "  evidence: {}", p.evidence);
    }
    let mut flags: Vec<&String> = e.options.iter().flat_map(|x| &x.flags).collect();
    flags.sort();
    flags.dedup();
    for f in flags {
        let _ = writeln!(o, "  caveat: {f}");
    }
    for a in &e.assumptions {
        let _ = writeln!(o, "  assumes: {a}");
    }
    o
}
