//! `ingestbench merge`: the shards' results directories in (a run's or a sweep's, older run
//! directories too), one results directory out: the plan, the runs merged by
//! `results::merge`, the reports (a run's `result.json` too) and the manifests concatenated,
//! so verify, cleanup, report and estimate see one run or one sweep.

use std::io::Write;

use anyhow::{Context, Result, bail};

use crate::cli::MergeArgs;
use crate::cmd::Outcome;
use crate::report;
use crate::results::PlanKind;

pub fn merge_command(a: &MergeArgs) -> Result<Outcome> {
    let mut shards = Vec::new();
    for d in &a.dirs {
        if !crate::results::is_results_dir(d) {
            bail!(
                "merge {}: not a shard's results directory (no plan.json or result.json); give every results/<run|sweep>-<plan-id>-shard-<K>of<N> directory, and only those",
                d.display()
            );
        }
        shards.push(crate::results::load_dir(d)?);
    }
    let methods = crate::results::load_methods(&a.dirs[0])?;
    let (plan, runs) = crate::results::merge::merge_sweep(shards)?;
    new_output(a)?;
    concat_manifests(a)?;
    crate::results::create_dir(&a.output, &plan, &methods)?;
    for r in &runs {
        crate::results::write_cell_run(&a.output, r)?;
    }
    let summary = crate::report::summary_of(&a.output, &plan, &runs)?;
    let mut written = crate::report::write_reports(&a.output, &summary)?;
    written.extend(crate::report::result_json::rewrite_result(
        &a.output, &plan, &runs,
    )?);
    if plan.kind == PlanKind::Run {
        let result = crate::report::result_json::run_result(&plan, &runs, Default::default());
        print!("{}", report::summary_text(&result));
    } else {
        for line in crate::report::answers::terminal(&summary) {
            println!("{line}");
        }
    }
    let mut skews: Vec<(u32, i64)> = runs
        .iter()
        .map(|r| (r.record.run, r.record.start_skew_ms.unwrap_or(0)))
        .collect();
    skews.sort_unstable();
    if plan.kind == PlanKind::Run {
        for (run, skew) in &skews {
            println!("  run {run}: start skew between shards {skew} ms");
        }
    }
    println!(
        "  {} runs of {} shards merged; start skew between shards: max {} ms",
        runs.len(),
        a.dirs.len(),
        skews.iter().map(|s| s.1).max().unwrap_or(0)
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
