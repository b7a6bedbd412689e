//! The plain-language findings that follow a report's answers, grouped by question: per
//! method and size where scaling peaks and stops, what each access method costs against the
//! baseline at the smallest and largest thread count (with its 95 % interval), what limited
//! the cells, and drift within runs. Pure text from the summary.

use std::fmt::Write;

use crate::analysis::summary::SweepSummary;
use crate::fixtures::SizeClass;
use crate::transport::ConnectionPolicy;

/// The findings grouped by the question they answer (empty groups left out): scaling, what
/// each access method costs, what limited the cells, drift within runs.
pub fn grouped(s: &SweepSummary) -> Vec<(&'static str, Vec<String>)> {
    let drift: Vec<String> = s
        .cells
        .iter()
        .filter(|c| c.drift.as_ref().is_some_and(|d| d.significant))
        .map(|c| {
            let d = c.drift.as_ref().expect("filtered");
            format!(
                "{} ({} connections), {} at {} threads: {}",
                c.method,
                c.connection,
                c.size,
                c.threads,
                d.text()
            )
        })
        .collect();
    [
        ("Where scaling stops", scaling(s)),
        ("What each access method costs", costs(s)),
        ("What limited the cells", limits(s)),
        ("Drift within runs", drift),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .collect()
}

/// Per method and size: the peak, the knee, whether more threads made it worse, the USL fit.
fn scaling(s: &SweepSummary) -> Vec<String> {
    let mut out = Vec::new();
    for row in &s.scaling {
        let sc = &row.scaling;
        let mut line = format!(
            "{} ({} connections), {}: peak {:.1} docs/s at {} threads; 90 % of it from {} threads",
            row.method,
            row.connection,
            row.size,
            sc.peak_docs_per_sec,
            sc.peak_threads,
            sc.knee_threads
        );
        if let (Some(t), Some(worst)) = (sc.degrades_after_threads, sc.degraded_docs_per_sec) {
            let _ = write!(
                line,
                "; more than {t} threads makes it worse (down to {worst:.1} docs/s)"
            );
        } else {
            line.push_str("; more threads did not make it worse");
        }
        if let Some(u) = &row.usl {
            let _ = write!(
                line,
                ". USL: σ {:.4} (contention), κ {:.6} (coherency), R² {:.3}",
                u.sigma, u.kappa, u.r_squared
            );
            if let (Some(n), Some(x)) = (u.peak_concurrency, u.peak_docs_per_sec) {
                let _ = write!(line, ", predicted peak {x:.1} docs/s at {n:.0} threads");
            }
        }
        if let Some(why) = &row.unreliable {
            let _ = write!(line, " (knee and fit unreliable: {why})");
        }
        out.push(line);
    }
    out
}

/// Relative cost: the smallest and the largest thread count of each method and size.
fn costs(s: &SweepSummary) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<(String, ConnectionPolicy, SizeClass)> = Vec::new();
    for r in &s.relative {
        let key = (r.method.clone(), r.connection, r.size);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let same: Vec<_> = s
            .relative
            .iter()
            .filter(|x| x.method == r.method && x.connection == r.connection && x.size == r.size)
            .collect();
        let lo = same.iter().min_by_key(|x| x.threads).expect("non-empty");
        let hi = same.iter().max_by_key(|x| x.threads).expect("non-empty");
        out.push(lo.text.clone());
        if hi.threads != lo.threads {
            out.push(hi.text.clone());
        }
    }
    out
}

/// The likely limit of each method and size at its largest thread count (where a limit
/// shows), when servers were read.
fn limits(s: &SweepSummary) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<(String, ConnectionPolicy, SizeClass)> = Vec::new();
    // A paced cell was limited by its rate, not by a resource.
    for c in s.cells.iter().rev().filter(|c| !c.is_paced()) {
        let key = (c.method.clone(), c.connection, c.size);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(b) = &c.bottleneck {
            out.push(format!(
                "{} ({} connections), {} at {} threads: limited by {}",
                c.method, c.connection, c.size, c.threads, b.text
            ));
        }
    }
    out.reverse();
    out
}
