//! What readers beside an import (`--readers`) record: each kind of read's count, rate,
//! latency (its own HDR histogram) and classified errors, over the import's measured
//! window. The readers themselves are `engine::readers`; this is only the record.

use serde::{Deserialize, Serialize};

use crate::metrics::{ErrorSummary, LatencyMs};
use crate::protocol::reads::ReadOp;

/// How readers run beside the import (`--readers`, `--think-time`, `--reader-mix`),
/// recorded with the plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReaderPolicy {
    /// Reader tasks, each one user doing one read after another.
    pub readers: u64,
    /// Each reader's pause after each read, s.
    pub think_time_s: f64,
    /// Relative weights of meta, download, list and query.
    pub mix: [u32; 4],
}

impl ReaderPolicy {
    /// The default mix: metadata reads most, then downloads and listings, a few queries.
    pub const DEFAULT_MIX: [u32; 4] = [4, 2, 2, 1];

    /// The kind of read a uniform draw `u` in [0, 1) picks.
    pub fn pick(&self, u: f64) -> ReadOp {
        let total: u32 = self.mix.iter().sum();
        let mut x = u * f64::from(total.max(1));
        for (op, w) in ReadOp::ALL.iter().zip(self.mix) {
            if x < f64::from(w) {
                return *op;
            }
            x -= f64::from(w);
        }
        ReadOp::ALL[self.mix.iter().rposition(|w| *w > 0).unwrap_or(0)]
    }
}

/// One kind of read over the import's window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReadOpRecord {
    pub op: ReadOp,
    pub ok: u64,
    pub failed: u64,
    /// Reads acknowledged per second of the window.
    pub per_sec: f64,
    /// Bytes of the answers read.
    pub bytes: u64,
    pub latency_ms: LatencyMs,
    pub errors: Vec<ErrorSummary>,
    /// The latency histogram (µs, HdrHistogram V2 + base64), so runs merge exactly.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latency_histogram_us: String,
}

/// The readers of one run (`RunRecord::readers`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReadersRecord {
    pub readers: u64,
    pub think_time_s: f64,
    /// Seconds the readers read while the import ran (its measured window): only reads that
    /// ended inside it count.
    pub window_s: f64,
    /// Reads that ended after the import had (kept apart, not counted).
    pub reads_after_import: u64,
    pub ops: Vec<ReadOpRecord>,
    /// Kinds of read in the mix that the repository cannot do (known before the readers
    /// started, e.g. CMIS `capabilityQuery` none), left out of the mix instead of failing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedRead>,
}

/// A kind of read left out of the mix, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SkippedRead {
    pub op: ReadOp,
    pub reason: String,
}

impl ReadersRecord {
    /// One line per kind of read, for the human summary.
    pub fn lines(&self) -> Vec<String> {
        self.ops
            .iter()
            .map(|o| {
                format!(
                    "reader {:<8} {:>7.1}/s  ok {}  failed {}  ms p50 {:.2} p95 {:.2} p99 {:.2} max {:.2}",
                    o.op.name(),
                    o.per_sec,
                    o.ok,
                    o.failed,
                    o.latency_ms.p50,
                    o.latency_ms.p95,
                    o.latency_ms.p99,
                    o.latency_ms.max
                )
            })
            .chain(
                self.skipped
                    .iter()
                    .map(|s| format!("reader {:<8} not read: {}", s.op.name(), s.reason)),
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_picks_by_weight() {
        // `--reader-mix meta=3,list=1` (parsed by `plan::options::parse_reader_mix`).
        let mix = [3, 0, 1, 0];
        let p = ReaderPolicy {
            readers: 1,
            think_time_s: 0.0,
            mix,
        };
        let picks: Vec<ReadOp> = (0..8).map(|i| p.pick(i as f64 / 8.0)).collect();
        assert_eq!(picks.iter().filter(|o| **o == ReadOp::Meta).count(), 6);
        assert_eq!(picks.iter().filter(|o| **o == ReadOp::List).count(), 2);
    }
}
