//! `ingestbench report DIR`: re-render a sweep's reports from its saved plan and runs (and
//! its import estimate, when there is one).

use anyhow::{Result, bail};

use crate::Outcome;
use crate::cli::ReportArgs;

pub fn report_command(a: &ReportArgs) -> Result<Outcome> {
    if !crate::plan::sweep::is_sweep_dir(&a.dir) {
        bail!(
            "report {}: not a sweep results directory (no plan.json); give a results/sweep-<id> directory",
            a.dir.display()
        );
    }
    let summary = crate::results::load_summary(&a.dir)?;
    let written = crate::results::write_reports(&a.dir, &summary)?;
    for f in written {
        println!("{}", f.display());
    }
    Ok(if summary.cells.iter().any(|c| c.docs_failed > 0) {
        Outcome::Failures
    } else {
        Outcome::Success
    })
}
