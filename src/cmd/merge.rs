//! `ingestbench merge`: the shards' results directories in, one results directory out
//! (result.json from `report::merge`, or a sweep's plan, runs and reports; the manifests
//! concatenated), so verify, cleanup, report and estimate see one run or one sweep.

use std::io::Write;

use anyhow::{Context, Result, bail};

use crate::Outcome;
use crate::cli::MergeArgs;
use crate::report::{self, RunResult};

pub fn merge_command(a: &MergeArgs) -> Result<Outcome> {
    if a.dirs.iter().any(|d| crate::plan::sweep::is_sweep_dir(d)) {
        return merge_sweeps(a);
    }
    let mut shards: Vec<RunResult> = Vec::new();
    for d in &a.dirs {
        let p = d.join("result.json");
        let text = std::fs::read_to_string(&p).with_context(|| {
            format!(
                "merge {}: no result.json there (give results/run-<plan-id>-shard-<K>of<N> directories)",
                d.display()
            )
        })?;
        shards.push(
            serde_json::from_str(&text)
                .with_context(|| format!("{}: not an ingestbench run result", p.display()))?,
        );
    }
    let merged = report::merge::merge(shards)?;
    new_output(a)?;
    concat_manifests(a)?;
    crate::results::write_atomic(
        &a.output.join("result.json"),
        &serde_json::to_string_pretty(&merged)?,
    )?;
    print!("{}", report::summary_text(&merged));
    for r in &merged.runs {
        println!(
            "  run {}: start skew between shards {} ms",
            r.run,
            r.start_skew_ms.unwrap_or(0)
        );
    }
    println!("  merged: {}", a.output.join("result.json").display());
    Ok(if merged.docs_failed > 0 {
        Outcome::Failures
    } else {
        Outcome::Success
    })
}

/// Creates `-o`, which must be new.
fn new_output(a: &MergeArgs) -> Result<()> {
    if a.output.exists() {
        bail!(
            "merge -o {}: it exists already; give a new directory",
            a.output.display()
        );
    }
    std::fs::create_dir_all(&a.output)
        .with_context(|| format!("merge -o {}: cannot create it", a.output.display()))
}

/// `-o/manifest.jsonl`: every shard's manifest, one after the other.
fn concat_manifests(a: &MergeArgs) -> Result<()> {
    let mut m = std::fs::File::create(a.output.join("manifest.jsonl"))
        .with_context(|| format!("merge -o {}", a.output.display()))?;
    for d in &a.dirs {
        let p = d.join("manifest.jsonl");
        let text = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
        m.write_all(&text)?;
        if !text.is_empty() && !text.ends_with(b"\n") {
            m.write_all(b"\n")?;
        }
    }
    m.sync_all()?;
    Ok(())
}

/// The shards of one sweep: plan.json, methods.json and runs/ of the whole sweep, the
/// manifests concatenated, then the reports rendered from the merged runs.
fn merge_sweeps(a: &MergeArgs) -> Result<Outcome> {
    let mut shards = Vec::new();
    for d in &a.dirs {
        if !crate::plan::sweep::is_sweep_dir(d) {
            bail!(
                "merge {}: not a sweep's results directory (no plan.json); give every results/sweep-<plan-id>-shard-<K>of<N> directory, and only those",
                d.display()
            );
        }
        shards.push(crate::results::load_dir(d)?);
    }
    let methods = crate::results::load_methods(&a.dirs[0])?;
    let (plan, runs) = report::merge::merge_sweep(shards)?;
    new_output(a)?;
    concat_manifests(a)?;
    crate::results::create_dir(&a.output, &plan, &methods)?;
    for r in &runs {
        crate::results::write_cell_run(&a.output, r)?;
    }
    let summary = crate::results::load_summary(&a.output)?;
    let written = crate::results::write_reports(&a.output, &summary)?;
    for line in crate::report::answers::terminal(&summary) {
        println!("{line}");
    }
    let skews: Vec<i64> = runs.iter().filter_map(|r| r.record.start_skew_ms).collect();
    println!(
        "  {} runs of {} shards merged; start skew between shards: max {} ms",
        runs.len(),
        plan.shard.as_ref().map_or(a.dirs.len() as u64, |s| s.count),
        skews.iter().max().unwrap_or(&0)
    );
    for p in &written {
        println!("  wrote {}", p.display());
    }
    Ok(if summary.cells.iter().any(|c| c.docs_failed > 0) {
        Outcome::Failures
    } else {
        Outcome::Success
    })
}
