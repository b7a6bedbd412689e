//! The exporters of a results directory's summary (`analysis::summary`): `export` (one small
//! trait and every format behind it), `table`, `html` (with `util_chart`), `findings`,
//! `answers`, `lines`, and a run's human summary here. Rendering is pure: summaries in, text
//! out; [`write_reports`] puts every export beside the results, atomically.

pub mod answers;
pub mod export;
pub mod findings;
mod html;
pub mod lines;
pub mod result_json;
mod slo_chart;
mod svg;
pub mod table;
#[cfg(test)]
pub(crate) mod testdata;
mod util_chart;

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::analysis::summary::SweepSummary;
use crate::results::RunRecord;
pub use result_json::{RunResult, load_summary, summary_of};

/// Writes every report of `summary` into `dir`; returns their paths.
pub fn write_reports(dir: &Path, summary: &SweepSummary) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in export::all() {
        let p = dir.join(e.file_name());
        crate::results::write_atomic(&p, &e.render(summary))?;
        out.push(p);
    }
    Ok(out)
}

/// The human summary, hyperfine-style, laid out line by line as it prints.
pub fn summary_text(r: &RunResult) -> String {
    let mut s = String::new();
    heading(&mut s, r);
    run_lines(&mut s, r);
    rate_lines(&mut s, r);
    measurement_lines(&mut s, r);
    server_lines(&mut s, r);
    finding_lines(&mut s, r);
    error_lines(&mut s, r);
    check_lines(&mut s, r);
    s
}

/// What was run where, and each worker's quota.
fn heading(s: &mut String, r: &RunResult) {
    let p = &r.plan;
    let what = match &p.corpus {
        Some(c) => format!(
            "documents of corpus {c} (mean {})",
            crate::analysis::estimate::human_bytes(p.doc_size_bytes)
        ),
        None => format!(
            "{} documents ({})",
            p.size_class,
            crate::analysis::estimate::human_bytes(p.doc_size_bytes)
        ),
    };
    let _ = writeln!(
        s,
        "ingestbench run {}: {} {what} x {} runs, {} workers -> {}",
        r.id, p.docs, p.runs, p.threads, r.target.url
    );
    let _ = writeln!(s, "  quotas: {}", quota_text(&r.worker_quotas));
}

/// Each run: its rates, and what paced it or read beside it.
fn run_lines(s: &mut String, r: &RunResult) {
    for run in &r.runs {
        let _ = writeln!(
            s,
            "  run {}: {:>8.1} docs/s  {:>8.2} MB/s  {:>7.3} s  ok {}  failed {}",
            run.run, run.docs_per_sec, run.mb_per_sec, run.duration_s, run.docs_ok, run.docs_failed
        );
        if let Some(p) = &run.paced {
            let _ = writeln!(s, "    {}", p.text());
        }
        if let Some(r) = &run.readers {
            let _ = writeln!(
                s,
                "    {} readers beside the import for {:.3} s ({} reads after it ended, not counted):",
                r.readers, r.window_s, r.reads_after_import
            );
            for l in r.lines() {
                let _ = writeln!(s, "      {l}");
            }
        }
    }
}

/// docs/sec across the runs, and the latency percentiles.
fn rate_lines(s: &mut String, r: &RunResult) {
    let _ = writeln!(
        s,
        "  docs/sec: {:.1}  (mean of {} runs {:.1} ± {:.1}, CV {:.1} %{})  MB/s: {:.2}",
        r.docs_per_sec,
        r.runs.len(),
        r.docs_per_sec_mean,
        r.docs_per_sec_stddev,
        r.cv_pct,
        r.ci95_pct
            .map_or(String::new(), |h| format!(", 95 % interval ± {h:.1} %")),
        r.mb_per_sec
    );
    let l = &r.latency_ms;
    let _ = writeln!(
        s,
        "  latency ms: μ {:.2}  σ {:.2}  2σ {:.2}  min {:.2}  p50 {:.2}  p90 {:.2}  p95 {:.2}  p99 {:.2}  max {:.2}",
        l.mean, l.stddev, l.two_sigma, l.min, l.p50, l.p90, l.p95, l.p99, l.max
    );
}

/// What was not measured: the warm-up, and documents after a window closed.
fn measurement_lines(s: &mut String, r: &RunResult) {
    let p = &r.plan;
    let _ = match r.warmup_docs {
        0 => writeln!(
            s,
            "  warm-up: none: first uploads (connections, logins, a cold server) are in the measurement"
        ),
        n => writeln!(
            s,
            "  warm-up: {n} documents before the runs (not measured){}",
            warmup_settling(&r.runs)
        ),
    };
    if let Some(w) = p.measure.duration_s {
        let late: u64 = r.runs.iter().map(|x| x.docs_after_window).sum();
        let _ = if p.measure.once {
            writeln!(
                s,
                "  sample time: {w} s per run, the {} files in one random order, none sent twice; {late} documents acknowledged after the time was up (kept, not counted)",
                p.docs
            )
        } else {
            writeln!(
                s,
                "  steady state: {w} s windows; {late} documents acknowledged after a window closed (kept, not counted)"
            )
        };
    }
}

/// Each server's CPU and memory over the runs, or why it was not read.
fn server_lines(s: &mut String, r: &RunResult) {
    for x in &r.servers {
        let _ = match (x.cpu_share, &x.error) {
            (Some(cpu), _) => writeln!(
                s,
                "  server {}: CPU {:.0} % of its cores ({:.2} cores){}",
                x.name,
                cpu * 100.0,
                x.cpu_cores.unwrap_or(0.0),
                x.memory_bytes.map_or(String::new(), |m| format!(
                    ", memory {:.0} MiB",
                    m as f64 / 1048576.0
                ))
            ),
            (None, e) => writeln!(
                s,
                "  server {}: not read ({})",
                x.name,
                e.as_deref().unwrap_or("no reading")
            ),
        };
    }
}

/// The likely limit, what-ifs, drift, the node split, what the target stored, retries.
fn finding_lines(s: &mut String, r: &RunResult) {
    if let Some(b) = &r.bottleneck {
        let _ = writeln!(s, "  likely limit: {}", b.text);
    }
    for w in r.verdict.iter().flat_map(|v| &v.what_if) {
        let _ = writeln!(s, "  what if: {}", w.text);
    }
    if let Some(d) = &r.drift {
        let _ = writeln!(s, "  drift: {}", d.text());
    }
    if !r.node_split.is_empty() {
        let parts: Vec<String> = r
            .node_split
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(s, "  served by: {}", parts.join(", "));
    }
    if let Some(n) = r.target.stored_docs {
        let _ = writeln!(
            s,
            "  embedded target stored {n} documents (report: {} acknowledged, {} warm-up)",
            r.docs_ok, r.warmup_docs
        );
    }
    if r.retries > 0 {
        let _ = writeln!(
            s,
            "  retries: {} extra attempts; {} documents found already stored after an ambiguous failure",
            r.retries, r.recovered
        );
    }
}

/// The failed uploads by class.
fn error_lines(s: &mut String, r: &RunResult) {
    if r.errors.is_empty() {
        let _ = writeln!(s, "  errors: none");
    } else {
        let _ = writeln!(s, "  errors: {} failed uploads", r.docs_failed);
        for e in &r.errors {
            let status = e.status.map(|s| format!(" {s}")).unwrap_or_default();
            let _ = writeln!(
                s,
                "    {}{}: {} x, e.g. {}",
                e.class.name(),
                status,
                e.count,
                e.sample
            );
        }
    }
}

/// What reading back found, and whether the client was the bottleneck.
fn check_lines(s: &mut String, r: &RunResult) {
    if let Some(v) = &r.verify {
        let _ = writeln!(s, "  {}", v.summary());
        for p in v.problems.iter().take(5) {
            let _ = writeln!(s, "    {} {} ({}): {}", p.kind, p.name, p.id, p.detail);
        }
    }
    if r.client_cpu_share > 0.8 {
        let _ = writeln!(
            s,
            "  warning: ingestbench used {:.0}% of all cores; the client may be the bottleneck",
            r.client_cpu_share * 100.0,
        );
    }
}

fn quota_text(q: &[u64]) -> String {
    // Run-length: 167x4, 166x2.
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < q.len() {
        let mut j = i;
        while j < q.len() && q[j] == q[i] {
            j += 1;
        }
        parts.push(format!("{}x{}", q[i], j - i));
        i = j;
    }
    parts.join(" + ")
}

/// How the runs' warm-ups until steady went: `; until steady: 0.8–1.1 s` or which did not
/// settle before the cap (empty for fixed warm-ups).
pub fn warmup_settling(runs: &[RunRecord]) -> String {
    let secs: Vec<f64> = runs.iter().filter_map(|r| r.warmup_s).collect();
    if secs.is_empty() {
        return String::new();
    }
    let (lo, hi) = secs
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), s| (l.min(*s), h.max(*s)));
    let unsettled: Vec<String> = runs
        .iter()
        .filter(|r| r.warmup_settled == Some(false))
        .map(|r| r.run.to_string())
        .collect();
    let span = if hi - lo < 0.05 {
        format!("{hi:.1} s")
    } else {
        format!("{lo:.1}–{hi:.1} s")
    };
    let rule = format!(
        "{} windows within ±{:.0} %, no climb over the last quarter",
        crate::results::Warmup::AUTO_RULE.windows,
        crate::results::Warmup::AUTO_RULE.tolerance * 100.0
    );
    if unsettled.is_empty() {
        format!("; until steady ({rule}): {span}")
    } else {
        format!(
            "; NOT steady in run{} {} within the {} s cap ({rule}): the server may still have been warming up; a longer fixed --warmup, or a server warmed beforehand, would resolve it",
            if unsettled.len() == 1 { "" } else { "s" },
            unsettled.join(", "),
            crate::results::Warmup::AUTO_RULE.cap.as_secs()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_text_is_run_length() {
        assert_eq!(quota_text(&[167, 167, 167, 167, 166, 166]), "167x4 + 166x2");
    }
}
