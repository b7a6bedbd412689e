//! The live ETA's calibration (issue #56): each finished import's progress replayed through
//! the progress line's tracker (`analysis::eta::replay`), and how often the interval shown at
//! 10 %, 25 % and 50 % of the documents covered the actual end, with its half-widths.
//!
//!   [ETA_SHARES=0.25,0.6] [ETA_DOCS_ONLY=1] cargo run --release --example eta_replay -- [--prior] FILE...
//!
//! FILE is an import's `run.json` (`run --json`) or a run directory's `result.json`; with
//! `--prior`, an `estimate.json` beside it supplies the prior rate (its duration for the
//! import's documents, its interval's larger side as the spread), as `--estimate` would.
//! One line per import and share, then the coverage per share. Reads only what it is given.

use std::path::Path;

use ingestbench::analysis::eta::{Counts, Replayed, replay};
use serde_json::Value;

const SHARES: [f64; 3] = [0.1, 0.25, 0.5];

/// `ETA_SHARES=0.25,0.6,0.75`: the shares replayed instead of [`SHARES`] (where the interval
/// reaches a width, e.g. ±20 %): fractions in (0, 1], sorted (the replay walks them in order).
fn shares() -> Vec<f64> {
    let Ok(v) = std::env::var("ETA_SHARES") else {
        return SHARES.to_vec();
    };
    let mut out = Vec::new();
    for x in v.split(',') {
        match x.trim().parse::<f64>() {
            Ok(f) if f > 0.0 && f <= 1.0 => out.push(f),
            _ => {
                eprintln!(
                    "ETA_SHARES={v}: give fractions of the documents done, above 0 and at most 1, e.g. 0.25,0.75"
                );
                std::process::exit(2);
            }
        }
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    out
}

fn main() {
    let mut prior = false;
    let mut files = Vec::new();
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--prior" => prior = true,
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        eprintln!("usage: eta_replay [--prior] RUN_JSON...");
        std::process::exit(2);
    }
    let shares = shares();
    let mut all: Vec<(String, Replayed)> = Vec::new();
    println!("import\tshare\tt_s\tleft_s\tlow_s\thigh_s\tactual_s\tinside\thalf_width");
    for f in &files {
        let v: Value = match std::fs::read_to_string(f)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{f}: {e}");
                std::process::exit(2);
            }
        };
        let Some(points) = timeline(&v) else {
            eprintln!("{f}: no run with a timeline: skipped");
            continue;
        };
        let p = if prior {
            prior_of(Path::new(f), &v)
        } else {
            None
        };
        for r in replay(&points, &shares, 30.0, p) {
            println!(
                "{f}\t{:.2}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{}\t{:.3}",
                r.done_fraction,
                r.t_s,
                r.eta.left_s,
                r.eta.low_s,
                r.eta.high_s,
                r.actual_left_s,
                u8::from(r.covers()),
                r.eta.rel_half_width()
            );
            all.push((f.clone(), r));
        }
    }
    for share in shares {
        let at: Vec<&Replayed> = all
            .iter()
            .filter(|(_, r)| r.done_fraction == share)
            .map(|(_, r)| r)
            .collect();
        if at.is_empty() {
            continue;
        }
        let inside = at.iter().filter(|r| r.covers()).count();
        let mut widths: Vec<f64> = at.iter().map(|r| r.eta.rel_half_width()).collect();
        widths.sort_by(f64::total_cmp);
        let mut errs: Vec<f64> = at
            .iter()
            .map(|r| (r.eta.left_s / r.actual_left_s.max(1e-9) - 1.0).abs())
            .collect();
        errs.sort_by(f64::total_cmp);
        // A ±20 % interval (relative to its point) cannot hold an end more than 20 % away
        // from the point.
        let far = at
            .iter()
            .filter(|r| (r.actual_left_s / r.eta.left_s.max(1e-9) - 1.0).abs() > 0.2)
            .count();
        println!(
            "at {:.0} %: {inside}/{} inside; median half-width ±{:.0} %; median |ETA/actual - 1| {:.1} %; the end more than 20 % from the point: {far}",
            share * 100.0,
            at.len(),
            median(&widths) * 100.0,
            median(&errs) * 100.0
        );
    }
}

/// The median of sorted `v` (the mean of the middle two when their number is even).
fn median(v: &[f64]) -> f64 {
    let n = v.len();
    if !n.is_multiple_of(2) {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `ETA_DOCS_ONLY=1`: the work counted in documents alone (as the live line does without a
/// corpus's folders and bytes).
fn docs_only() -> bool {
    std::env::var_os("ETA_DOCS_ONLY").is_some_and(|v| !v.is_empty())
}

/// The first run's timeline: documents (their versions counted as documents), folders, bytes.
fn timeline(v: &Value) -> Option<Vec<(f64, Counts)>> {
    let tl = v.get("runs")?.get(0)?.get("timeline")?.as_array()?;
    let num = |p: &Value, k: &str| p.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let points: Vec<(f64, Counts)> = tl
        .iter()
        .map(|p| {
            let c = Counts {
                docs: num(p, "docs") + num(p, "versions"),
                folders: if docs_only() { 0.0 } else { num(p, "folders") },
                bytes: if docs_only() { 0.0 } else { num(p, "bytes") },
            };
            (num(p, "t_s"), c)
        })
        .collect();
    (points.len() >= 2).then_some(points)
}

/// The prior an `estimate.json` beside `file` gives this import's ETA, as `run --estimate`
/// takes it (`Estimate::eta_prior` at the import's thread count).
fn prior_of(file: &Path, run: &Value) -> Option<(f64, f64)> {
    let est: ingestbench::analysis::estimate::Estimate =
        serde_json::from_str(&std::fs::read_to_string(file.parent()?.join("estimate.json")).ok()?)
            .ok()?;
    let threads = run
        .get("worker_quotas")
        .and_then(Value::as_array)
        .map_or(0, |w| w.len() as u64);
    est.eta_prior(threads)
}
