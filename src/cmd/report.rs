//! `ingestbench report DIR`: re-render a results directory's reports (a run's or a sweep's,
//! older run directories too) from its saved plan and runs (and its import estimate, when
//! there is one).

use anyhow::{Result, bail};

use crate::cli::ReportArgs;
use crate::cmd::Outcome;

pub fn report_command(a: &ReportArgs) -> Result<Outcome> {
    if !crate::results::is_results_dir(&a.dir) {
        bail!(
            "report {}: not a results directory (no plan.json or result.json); give a results/run-<id> or results/sweep-<id> directory",
            a.dir.display()
        );
    }
    let (plan, runs) = crate::results::load_dir(&a.dir)?;
    let summary = crate::report::summary_of(&a.dir, &plan, &runs)?;
    let mut written = crate::report::write_reports(&a.dir, &summary)?;
    written.extend(crate::report::result_json::rewrite_result(
        &a.dir, &plan, &runs,
    )?);
    for f in written {
        println!("{}", f.display());
    }
    Ok(if summary.cells.iter().any(|c| c.docs_failed > 0) {
        Outcome::Failures
    } else {
        Outcome::Success
    })
}
