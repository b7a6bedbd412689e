//! `ingestbench corpus DIR|LISTING.csv [--check REPO]`: describe a corpus (and check it
//! against a repository's rules in the same walk), write corpus.json, print a summary and one
//! line per flagged rule.

use anyhow::{Context, Result};

use super::write_file;
use crate::analysis::estimate::human_bytes;
use crate::cli::CorpusArgs;
use crate::cmd::Outcome;
use crate::corpus::{self, CorpusDescription};

pub fn corpus_command(a: &CorpusArgs) -> Result<Outcome> {
    let checker = match a.check {
        None => None,
        Some(repo) => {
            let spec = a.profile.as_deref().unwrap_or(repo.default_profile());
            let profile = crate::fixtures::Profile::load(spec)?;
            Some(corpus::check::Checker::new(
                repo,
                std::sync::Arc::new(profile),
            )?)
        }
    };
    let d = corpus::describe_checked(&a.path, checker)?;
    let json = serde_json::to_string_pretty(&d)?;
    write_file(&a.output, &json).with_context(|| format!("--output {}", a.output.display()))?;
    if a.json {
        println!("{json}");
    }
    eprint!("{}", summary(&d));
    eprintln!("  wrote {}", a.output.display());
    match &d.preflight {
        Some(p) => {
            eprint!("{}", preflight_lines(p));
            Ok(if p.problems > 0 {
                Outcome::Failures
            } else {
                Outcome::Success
            })
        }
        None => Ok(Outcome::Success),
    }
}

/// The check's verdict and one line per flagged rule: count, severity, what it says, the
/// first path, and the source it is taken from.
pub fn preflight_lines(p: &corpus::check::Preflight) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "check against {} ({} documents, {} folders, {} version files, {} shadow files; profile {}): {}",
        p.repository.name(),
        p.documents_checked,
        p.folders_checked,
        p.version_files_checked,
        p.metadata_files_checked,
        p.profile,
        if p.problems == 0 {
            "nothing flagged".to_string()
        } else {
            format!("{} flagged, {} will be refused", p.problems, p.refused)
        }
    );
    for r in p.flagged() {
        let sev = match r.severity {
            corpus::rules::Severity::Refused => "refused",
            corpus::rules::Severity::Skipped => "skipped",
            corpus::rules::Severity::Warning => "warning",
        };
        let _ = writeln!(
            o,
            "  {:<28} {:>7} {sev:<8} {}: first {} [{}]",
            r.rule,
            r.count,
            r.says,
            r.samples.first().map_or("-", String::as_str),
            r.source
        );
    }
    o
}

/// The human summary: totals, percentiles, the size histogram, types, folders, problems.
pub fn summary(d: &CorpusDescription) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let s = &d.sizes;
    let _ = writeln!(
        o,
        "corpus {} ({}): {} documents, {}",
        d.source,
        d.kind,
        d.documents,
        human_bytes(d.bytes)
    );
    let _ = writeln!(
        o,
        "  size: min {}  p10 {}  p50 {}  p90 {}  p99 {}  max {}  mean {}; half the bytes in documents over {}",
        human_bytes(s.min),
        human_bytes(s.p10),
        human_bytes(s.p50),
        human_bytes(s.p90),
        human_bytes(s.p99),
        human_bytes(s.max),
        human_bytes(s.mean as u64),
        human_bytes(s.bytes_p50)
    );
    let _ = writeln!(
        o,
        "  {:<22} {:>10} {:>7} {:>12} {:>7}",
        "size", "documents", "%", "bytes", "%"
    );
    for b in &d.size_histogram {
        let _ = writeln!(
            o,
            "  {:<22} {:>10} {:>6.1}% {:>12} {:>6.1}%",
            format!("{} – {}", human_bytes(b.lo_bytes), human_bytes(b.hi_bytes)),
            b.files,
            pct(b.files, d.documents),
            human_bytes(b.bytes),
            pct(b.bytes, d.bytes)
        );
    }
    let mut types: Vec<(&String, &u64)> = d.content_types.iter().collect();
    types.sort_by(|x, y| y.1.cmp(x.1));
    let top: Vec<String> = types
        .iter()
        .take(6)
        .map(|(t, n)| format!("{t} {:.0} %", pct(**n, d.documents)))
        .collect();
    let _ = writeln!(o, "  types: {}", top.join(", "));
    let _ = writeln!(
        o,
        "  folders: {} holding documents, deepest level {}, largest {} ({} documents)",
        d.folders,
        d.max_depth,
        d.largest_folder.as_deref().unwrap_or("-"),
        d.largest_folder_documents
    );
    if d.directories > 0 {
        let _ = writeln!(
            o,
            "  tree: {} folders below the root (an import recreating it creates them)",
            d.directories
        );
    }
    let sh = &d.shadow;
    if sh.metadata_files + sh.version_files > 0 {
        let _ = writeln!(
            o,
            "  bulk-import metadata: {} shadow files ({} properties, types {}), {} version files",
            sh.metadata_files,
            sh.properties.len(),
            sh.types.keys().cloned().collect::<Vec<_>>().join(", "),
            sh.version_files
        );
    }
    if sh.documents_with_versions > 0 {
        let hist: Vec<String> = sh
            .versions_histogram
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        let _ = writeln!(
            o,
            "  versions: {} documents have {} versions ({}), at most {} each; documents by versions {}",
            sh.documents_with_versions,
            sh.version_content_files,
            human_bytes(sh.version_bytes),
            sh.max_versions,
            hist.join(", ")
        );
    }
    for (what, p) in [
        ("symlinks skipped", &d.symlinks_skipped),
        ("unreadable", &d.unreadable),
        ("malformed listing lines", &d.malformed_lines),
        ("broken shadow metadata files", &d.broken_shadow_files),
        (
            "version files without a head file (not imported)",
            &d.orphan_version_files,
        ),
        ("documents whose version numbers skip", &d.version_gaps),
    ] {
        if p.count > 0 {
            let _ = writeln!(
                o,
                "  {what}: {} (first: {})",
                p.count,
                p.samples.first().map_or("", String::as_str)
            );
        }
    }
    o
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}
