//! Reading one side of a comparison from disk: a run directory (`result.json`), a sweep
//! directory (`plan.json` and `runs/`, so each run's MB/s and percentiles are there too), a
//! `summary.json` (read through its sweep directory when it sits in one) or a `result.json`.
//! Errors name the argument and the path and say what to give instead.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{Cell, Side};
use crate::records::RunResult;
use crate::report::sweep::SweepSummary;

/// Reads the results at `path`; `role` (BASELINE or CANDIDATE) names it in errors.
pub fn load(role: &str, path: &Path) -> Result<Side> {
    let cells = if path.is_dir() {
        load_dir(role, path)?
    } else if path.is_file() {
        match path.parent() {
            Some(dir)
                if path.file_name().is_some_and(|n| n == "summary.json")
                    && crate::plan::sweep::is_sweep_dir(dir) =>
            {
                sweep_dir(dir)?
            }
            _ => load_file(role, path)?,
        }
    } else {
        bail!(
            "compare {role} {}: no such file or directory; give results/run-<id>, results/sweep-<id> or a summary.json",
            path.display()
        );
    };
    Ok(Side {
        source: path.display().to_string(),
        cells,
    })
}

fn load_dir(role: &str, dir: &Path) -> Result<Vec<Cell>> {
    if crate::plan::sweep::is_sweep_dir(dir) {
        return sweep_dir(dir);
    }
    for f in ["result.json", "summary.json"] {
        let p = dir.join(f);
        if p.is_file() {
            return load_file(role, &p);
        }
    }
    bail!(
        "compare {role} {}: not a results directory (no plan.json, result.json or summary.json there); give results/run-<id>, results/sweep-<id> or a summary.json",
        dir.display()
    )
}

/// A sweep directory: its summary as `report` renders it, with each cell's run records.
fn sweep_dir(dir: &Path) -> Result<Vec<Cell>> {
    let (plan, runs) = crate::results::load_dir(dir)?;
    let summary = crate::report::sweep::summarize(&plan, &runs);
    // Both in plan order, one entry per cell that has runs.
    let by_cell = plan.runs_by_cell(&runs);
    Ok(summary
        .cells
        .iter()
        .zip(&by_cell)
        .map(|(c, (_, mine))| Cell::from_summary(c, mine))
        .collect())
}

/// A `summary.json` (a sweep's) or a `result.json` (a run's), told apart by their fields.
fn load_file(role: &str, p: &Path) -> Result<Vec<Cell>> {
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("compare {role} {}: cannot read it", p.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "compare {role} {}: not JSON; give an ingestbench summary.json or result.json",
            p.display()
        )
    })?;
    if v.get("cells").is_some() {
        let s: SweepSummary = serde_json::from_value(v).with_context(|| {
            format!(
                "compare {role} {}: not an ingestbench sweep summary",
                p.display()
            )
        })?;
        return Ok(s.cells.iter().map(|c| Cell::from_summary(c, &[])).collect());
    }
    if v.get("runs").is_some() {
        let r: RunResult = serde_json::from_value(v).with_context(|| {
            format!(
                "compare {role} {}: not an ingestbench run result",
                p.display()
            )
        })?;
        if r.runs.is_empty() {
            bail!(
                "compare {role} {}: the run has no finished run to compare",
                p.display()
            );
        }
        return Ok(vec![Cell::from_run(&r)]);
    }
    bail!(
        "compare {role} {}: neither a sweep's summary.json nor a run's result.json",
        p.display()
    )
}
