//! `--json-lines`: one JSON object per line on stdout as results come, for scripts
//! (`ingestbench sweep ... --json-lines | jq -c .`): `{"type":"run", <cell>, <run record>}`
//! per finished run and `{"type":"cell", <cell summary>}` per finished cell. Rendered from the
//! same records as the reports; written between runs, never per upload.

use std::io::Write;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::analysis::summary::CellSummary;
use crate::results::{CellKey, RunRecord};

#[derive(Serialize)]
struct RunLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    cell: &'a CellKey,
    #[serde(flatten)]
    record: &'a RunRecord,
}

#[derive(Serialize)]
struct CellLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    cell: &'a CellSummary,
}

/// The line of one finished run of `cell`.
pub fn run_line(cell: &CellKey, record: &RunRecord) -> Result<String> {
    Ok(serde_json::to_string(&RunLine {
        kind: "run",
        cell,
        record,
    })?)
}

/// The line of one finished cell.
pub fn cell_line(cell: &CellSummary) -> Result<String> {
    Ok(serde_json::to_string(&CellLine { kind: "cell", cell })?)
}

/// Writes `line` and a newline to stdout and flushes, so a reader sees it at once.
pub fn emit(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .context("--json-lines: writing to stdout")
}
