//! The fixed, deterministic sweep the snapshot tests render: two methods × five thread counts
//! × 3 runs on a USL-shaped curve, https-lb 10 % slower, kept as a results directory in
//! `tests/data/fixed-sweep` (the integration tests and benches load the same one).

use crate::analysis::summary::{SweepSummary, summarize};

/// The summary of `tests/data/fixed-sweep`.
pub fn fixed_summary() -> SweepSummary {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixed-sweep");
    let (plan, runs) = crate::results::load_dir(&dir).expect("tests/data/fixed-sweep loads");
    summarize(&plan, &runs)
}
