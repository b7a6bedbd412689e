//! A comparison as text for a terminal and as a Markdown table for a pull-request comment.
//! Both are rendered from the same [`Comparison`] `compare --json` prints.

use std::fmt::Write;

use super::{CellComparison, Change, Comparison};

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn line(o: &mut String, label: &str, c: &Change) {
    let _ = writeln!(
        o,
        "    {label:<9} {:>9} → {:<9} {}",
        num(c.baseline),
        num(c.candidate),
        c.text
    );
}

fn runs(c: &CellComparison) -> String {
    format!("{} vs {} runs", c.baseline_runs, c.candidate_runs)
}

/// The terminal text: each common cell with its four changes, then the cells on one side
/// only, then the notes.
pub fn text(cmp: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "baseline:  {}", cmp.baseline);
    let _ = writeln!(o, "candidate: {}", cmp.candidate);
    for c in &cmp.cells {
        let _ = writeln!(o, "  {} ({})", c.name(), runs(c));
        line(&mut o, "docs/sec", &c.docs_per_sec);
        line(&mut o, "MB/s", &c.mb_per_sec);
        line(&mut o, "p95 ms", &c.latency_p95_ms);
        line(&mut o, "p99 ms", &c.latency_p99_ms);
    }
    if !cmp.only_in_baseline.is_empty() {
        let _ = writeln!(
            o,
            "  only in the baseline: {}",
            cmp.only_in_baseline.join(", ")
        );
    }
    if !cmp.only_in_candidate.is_empty() {
        let _ = writeln!(
            o,
            "  only in the candidate: {}",
            cmp.only_in_candidate.join(", ")
        );
    }
    for n in &cmp.notes {
        let _ = writeln!(o, "  note: {n}");
    }
    o
}

fn cell_md(c: &Change) -> String {
    format!("{} → {}: {}", num(c.baseline), num(c.candidate), c.text)
}

/// A Markdown table (GitHub and GitLab render it), the cells on one side only, the
/// thresholds crossed (`crossed`, already worded), and the notes.
pub fn markdown(cmp: &Comparison, crossed: &[String]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "### ingestbench: candidate against baseline\n");
    let _ = writeln!(
        o,
        "Baseline `{}`, candidate `{}`.\n",
        cmp.baseline, cmp.candidate
    );
    if !crossed.is_empty() {
        let _ = writeln!(o, "**Thresholds crossed:**\n");
        for c in crossed {
            let _ = writeln!(o, "- {c}");
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "| cell | runs | docs/sec | MB/s | p95 ms | p99 ms |");
    let _ = writeln!(o, "|---|---|---|---|---|---|");
    for c in &cmp.cells {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} |",
            c.name(),
            runs(c),
            cell_md(&c.docs_per_sec),
            cell_md(&c.mb_per_sec),
            cell_md(&c.latency_p95_ms),
            cell_md(&c.latency_p99_ms)
        );
    }
    let _ = writeln!(o);
    if !cmp.only_in_baseline.is_empty() {
        let _ = writeln!(
            o,
            "Only in the baseline: {}.\n",
            cmp.only_in_baseline.join(", ")
        );
    }
    if !cmp.only_in_candidate.is_empty() {
        let _ = writeln!(
            o,
            "Only in the candidate: {}.\n",
            cmp.only_in_candidate.join(", ")
        );
    }
    for n in &cmp.notes {
        let _ = writeln!(o, "_{n}._\n");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::super::tests::{cell, side};
    use super::*;

    #[test]
    fn text_and_markdown_state_each_change_and_the_unmatched_cells() {
        let b = side(vec![
            cell("m", 1, &[400.0, 404.0, 396.0]),
            cell("m", 4, &[1.0, 1.0]),
        ]);
        let c = side(vec![cell("m", 1, &[300.0, 303.0, 297.0])]);
        let cmp = compare(&b, &c);
        let t = text(&cmp);
        assert!(t.contains("  m reuse small 1 thread (3 vs 3 runs)"), "{t}");
        assert!(
            t.contains("docs/sec        400 → 300       slower by 25.0 % ± "),
            "{t}"
        );
        assert!(
            t.contains("only in the baseline: m reuse small 4 threads"),
            "{t}"
        );
        let md = markdown(
            &cmp,
            &["m reuse small 1 thread: slower by 25 % (slower>5%)".into()],
        );
        assert!(
            md.contains("| cell | runs | docs/sec | MB/s | p95 ms | p99 ms |"),
            "{md}"
        );
        assert!(
            md.contains("| m reuse small 1 thread | 3 vs 3 runs | 400 → 300: slower by 25.0 % ± "),
            "{md}"
        );
        assert!(
            md.contains("**Thresholds crossed:**\n\n- m reuse small 1 thread: slower"),
            "{md}"
        );
        assert!(
            md.contains("Only in the baseline: m reuse small 4 threads."),
            "{md}"
        );
    }
}
