//! Reports: a run's record from its measurement (`run_record`), the one summary of a results
//! directory (`sweep::summarize`, every cell from its runs) and its exporters: `result`
//! (a run's `result.json`, schema in `schema/run-result.schema.json`, and its human summary
//! here), `export`, `table`, `html` (with `util_chart`), `findings`, `answers`, `lines`. Building is pure:
//! records in, values out; writing files is the caller's job (`results`).

pub mod answers;
pub mod export;
pub mod findings;
mod html;
pub mod lines;
pub mod result;
mod slo_chart;
pub mod sweep;
pub mod table;
#[doc(hidden)]
pub mod testdata;
mod util_chart;

use crate::engine::RunMeasurement;
use crate::metrics::round3;
pub use crate::results::records::{RepositoryRecord, RunRecord, RunResult, SCHEMA_VERSION, Tool};

fn rate(n: f64, secs: f64) -> f64 {
    if secs > 0.0 { n / secs } else { 0.0 }
}

/// The record of one run (durations to the µs).
pub fn run_record(o: &RunMeasurement) -> RunRecord {
    let d = o.duration.as_secs_f64();
    RunRecord {
        run: o.run,
        duration_s: (d * 1e6).round() / 1e6,
        docs_ok: o.recorder.docs_ok,
        docs_failed: o.recorder.docs_failed,
        docs_per_sec: round3(rate(o.recorder.docs_ok as f64, d)),
        bytes_ok: o.recorder.bytes_ok,
        mb_per_sec: round3(rate(o.recorder.bytes_ok as f64 / 1e6, d)),
        latency_ms: o.recorder.latency(),
        errors: o.recorder.errors(),
        node_split: o.recorder.nodes.clone(),
        folder: o.folder.clone(),
        new_connections: o.new_connections,
        upload_runtimes: o.upload_runtimes,
        retries: o.recorder.retries,
        recovered: o.recorder.recovered,
        versions_ok: o.recorder.versions_ok,
        folders_created: o.recorder.folders_created,
        progress_s: o.progress_s.clone(),
        warmup_docs: o.warmup_ok,
        warmup_failed: o.warmup_failed,
        warmup_s: o.warmup_s,
        warmup_settled: o.warmup_settled,
        window_s: o.window_s,
        docs_after_window: o.docs_after_window,
        servers: o.servers.clone(),
        resources: o.resources.clone(),
        started_unix_ms: o.started_unix_ms,
        start_lag_ms: o.go_unix_ms.map(|g| o.started_unix_ms - g),
        start_skew_ms: o.start_skew_ms,
        latency_histogram_us: String::new(),
        aborted: o.fatal.clone(),
        timeline: o.timeline.clone(),
        paced: o.paced.clone(),
        readers: o.readers.clone(),
    }
}

/// The human summary, hyperfine-style.
pub fn summary_text(r: &RunResult) -> String {
    // The human summary, laid out line by line as it prints.
    use std::fmt::Write;
    let mut s = String::new();
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
        let _ = writeln!(
            s,
            "  steady state: {w} s windows; {late} documents acknowledged after a window closed (kept, not counted)"
        );
    }
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
    s
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
        crate::engine::warmup::AUTO.windows,
        crate::engine::warmup::AUTO.tolerance * 100.0
    );
    if unsettled.is_empty() {
        format!("; until steady ({rule}): {span}")
    } else {
        format!(
            "; NOT steady in run{} {} within the {} s cap ({rule}): the server may still have been warming up; a longer fixed --warmup, or a server warmed beforehand, would resolve it",
            if unsettled.len() == 1 { "" } else { "s" },
            unsettled.join(", "),
            crate::engine::warmup::AUTO.cap.as_secs()
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
