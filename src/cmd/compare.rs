//! `ingestbench compare BASELINE CANDIDATE`: read both results (`compare::load`), compare
//! them (`compare`), print text, JSON or Markdown, and check `--fail-if` (`threshold`):
//! exit 3 on a crossing, 2 on a malformed expression or unusable input.

use anyhow::{Result, bail};

use crate::cli::CompareArgs;
use crate::cmd::Outcome;
use crate::compare::{self, Side, load::load, render};
use crate::threshold::{self, Scope};

/// At most four cell names, for an error message.
fn some_cells(s: &Side) -> String {
    let names: Vec<String> = s.cells.iter().take(4).map(compare::Cell::name).collect();
    match (names.len(), s.cells.len()) {
        (0, _) => "no cells".into(),
        (n, all) if all > n => format!("{} and {} more", names.join(", "), all - n),
        _ => names.join(", "),
    }
}

pub fn compare_command(a: &CompareArgs) -> Result<Outcome> {
    let thresholds = threshold::parse_all(&a.fail_if, Scope::Compare)?;
    let base = load("BASELINE", &a.baseline)?;
    let cand = load("CANDIDATE", &a.candidate)?;
    let cmp = compare::compare(&base, &cand);
    if cmp.cells.is_empty() {
        bail!(
            "compare: no cell in common (cells match by method, connection, size and threads): the baseline {} has {}; the candidate {} has {}",
            base.source,
            some_cells(&base),
            cand.source,
            some_cells(&cand)
        );
    }
    let crossed = threshold::check(&thresholds, &cand.cells, Some(&cmp));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&cmp)?);
    } else if a.markdown {
        let words: Vec<String> = crossed.iter().map(ToString::to_string).collect();
        print!("{}", render::markdown(&cmp, &words));
    } else {
        print!("{}", render::text(&cmp));
    }
    Ok(super::gate(Outcome::Success, &crossed))
}
