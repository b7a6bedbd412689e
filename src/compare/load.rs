//! Reading one side of a comparison from disk: a results directory (`plan.json` and `runs/`,
//! so each run's MB/s and percentiles are there too; an older run directory's `result.json`
//! through the same loader), a `summary.json` (read through its directory when it sits in
//! one) or a run's `result.json` on its own. Errors name the argument and the path and say
//! what to give instead.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{Cell, Side, cells_of, named};
use crate::analysis::summary::SweepSummary;
use crate::results::result::RunFile;

/// Reads the results at `path`; `role` (BASELINE or CANDIDATE) names it in errors.
pub fn load(role: &str, path: &Path) -> Result<Side> {
    let cells = if path.is_dir() {
        if !crate::results::is_results_dir(path) {
            bail!(
                "compare {role} {}: not a results directory (no plan.json or result.json there); give results/run-<id>, results/sweep-<id> or a summary.json",
                path.display()
            );
        }
        results_dir(path)?
    } else if path.is_file() {
        match path.parent() {
            Some(dir)
                if path.file_name().is_some_and(|n| n == "summary.json")
                    && dir.join("plan.json").is_file() =>
            {
                results_dir(dir)?
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

/// A results directory: its summary as `report` renders it, with each cell's run records.
fn results_dir(dir: &Path) -> Result<Vec<Cell>> {
    let (plan, runs) = crate::results::load_dir(dir)?;
    Ok(cells_of(&plan, &runs))
}

/// A `summary.json` or a run's `result.json` on its own, told apart by their fields.
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
        return Ok(s
            .cells
            .iter()
            .map(|c| named(s.plan.kind, Cell::from_summary(c, &[])))
            .collect());
    }
    if v.get("runs").is_some() {
        let r: RunFile = serde_json::from_value(v).with_context(|| {
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
        let (plan, runs) = crate::results::result::from_result(r);
        return Ok(cells_of(&plan, &runs));
    }
    bail!(
        "compare {role} {}: neither a sweep's summary.json nor a run's result.json",
        p.display()
    )
}
