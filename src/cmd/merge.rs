//! `ingestbench merge`: the shards' results directories in, one results directory out
//! (result.json from `report::merge`, the manifests concatenated), so verify, cleanup and
//! estimate see one run.

use std::io::Write;

use anyhow::{Context, Result, bail};

use crate::Outcome;
use crate::cli::MergeArgs;
use crate::report::{self, RunResult};

pub fn merge_command(a: &MergeArgs) -> Result<Outcome> {
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
    if a.output.exists() {
        bail!(
            "merge -o {}: it exists already; give a new directory",
            a.output.display()
        );
    }
    std::fs::create_dir_all(&a.output)
        .with_context(|| format!("merge -o {}: cannot create it", a.output.display()))?;
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
