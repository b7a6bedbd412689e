//! Readers beside an import (`--readers N`): N tasks, each a user who reads one thing, pauses
//! (`--think-time`) and reads again, for as long as the run's upload workers run. A read is a
//! document's metadata or content (a document some listing or query named), a listing of one
//! of the run's folders, or a query by name (`protocol::reads`), picked by `--reader-mix`;
//! before anything was listed, a reader lists. Each kind of read has its own recorder (HDR
//! latency, classified errors); a read that ends after the import did is not counted, so
//! every counted read overlapped the import. Readers run on the engine's own runtime, never
//! on the upload workers' threads, and touch nothing the workers use per upload (the folder
//! table's lock only, once per listing).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::worker::{FolderTable, LiveCounters};
use crate::metrics::{Recorder, encode_hist, round3};
use crate::protocol::Protocol;
use crate::protocol::reads::ReadOp;
use crate::results::readers::{ReadOpRecord, ReaderPolicy, ReadersRecord, SkippedRead};

/// What one reader (or all of them, merged) read.
struct Tally {
    ops: [Recorder; 4],
    after: u64,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            ops: std::array::from_fn(|_| Recorder::new()),
            after: 0,
        }
    }
    fn merge(&mut self, o: &Tally) {
        for (a, b) in self.ops.iter_mut().zip(&o.ops) {
            a.merge(b);
        }
        self.after += o.after;
    }
}

/// The policy without the kinds of read the repository cannot do (`unsupported`, from
/// `Protocol::skipped_reads`), and those of them the mix had asked for, with why.
fn without_unsupported(
    policy: ReaderPolicy,
    unsupported: &[(ReadOp, String)],
) -> (ReaderPolicy, Vec<SkippedRead>) {
    let mut policy = policy;
    let mut skipped = Vec::new();
    for (op, reason) in unsupported {
        let i = ReadOp::ALL.iter().position(|o| o == op).unwrap_or(0);
        if policy.mix[i] > 0 {
            policy.mix[i] = 0;
            skipped.push(SkippedRead {
                op: *op,
                reason: reason.clone(),
            });
        }
    }
    (policy, skipped)
}

/// The readers of one run, started when its workers are released.
pub(super) struct Readers {
    policy: ReaderPolicy,
    skipped: Vec<SkippedRead>,
    stop: Arc<AtomicBool>,
    started: Instant,
    handles: Vec<tokio::task::JoinHandle<Tally>>,
}

impl Readers {
    pub(super) fn start<P: Protocol>(
        proto: Arc<P>,
        policy: ReaderPolicy,
        folders: Arc<FolderTable>,
        live: Arc<LiveCounters>,
        seed: u64,
    ) -> Readers {
        let (policy, skipped) = without_unsupported(policy, &proto.skipped_reads());
        let stop = Arc::new(AtomicBool::new(false));
        // A mix of nothing but what the repository cannot do leaves the readers idle.
        let readers = if policy.mix.iter().any(|w| *w > 0) {
            policy.readers
        } else {
            0
        };
        let handles = (0..readers)
            .map(|i| {
                tokio::spawn(reader(
                    proto.clone(),
                    policy,
                    folders.clone(),
                    live.clone(),
                    stop.clone(),
                    seed ^ (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ))
            })
            .collect();
        Readers {
            policy,
            skipped,
            stop,
            started: Instant::now(),
            handles,
        }
    }

    /// Stops the readers (the import is over) and makes their record.
    pub(super) async fn finish(self) -> ReadersRecord {
        self.stop.store(true, Ordering::Relaxed);
        let window = self.started.elapsed().as_secs_f64();
        let mut all = Tally::new();
        for h in self.handles {
            if let Ok(t) = h.await {
                all.merge(&t);
            }
        }
        let ops = ReadOp::ALL
            .iter()
            .zip(&all.ops)
            .zip(self.policy.mix)
            .filter(|((_, r), w)| *w > 0 || r.docs_ok + r.docs_failed > 0)
            .map(|((op, r), _)| ReadOpRecord {
                op: *op,
                ok: r.docs_ok,
                failed: r.docs_failed,
                per_sec: round3(if window > 0.0 {
                    r.docs_ok as f64 / window
                } else {
                    0.0
                }),
                bytes: r.bytes_ok,
                latency_ms: r.latency(),
                errors: r.errors(),
                latency_histogram_us: encode_hist(&r.latency_us),
            })
            .collect();
        ReadersRecord {
            readers: self.policy.readers,
            think_time_s: self.policy.think_time_s,
            window_s: round3(window),
            reads_after_import: all.after,
            ops,
            skipped: self.skipped,
        }
    }
}

async fn reader<P: Protocol>(
    proto: Arc<P>,
    policy: ReaderPolicy,
    folders: Arc<FolderTable>,
    live: Arc<LiveCounters>,
    stop: Arc<AtomicBool>,
    seed: u64,
) -> Tally {
    let mut rng = crate::fixtures::Rng::new(seed);
    let mut known: Vec<String> = Vec::new();
    let mut tally = Tally::new();
    let think = Duration::from_secs_f64(policy.think_time_s.max(0.0));
    while !stop.load(Ordering::Relaxed) {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut op = policy.pick(u);
        if matches!(op, ReadOp::Meta | ReadOp::Download) && known.is_empty() {
            op = ReadOp::List;
        }
        let target = match op {
            ReadOp::Meta | ReadOp::Download => {
                known[rng.below(known.len() as u64) as usize].clone()
            }
            ReadOp::List => {
                // Alfresco makes a run's folder with its first document: nothing to list
                // before one was stored. (A later folder can still be listed in the moment
                // between its first upload's start and its end: a 404, counted.)
                let refs = if live.done.load(Ordering::Relaxed) == 0 {
                    Vec::new()
                } else {
                    folders.references().await
                };
                if refs.is_empty() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                refs[rng.below(refs.len() as u64) as usize].clone()
            }
            // A document of the run by its name (those stored so far, or about).
            ReadOp::Query => {
                let done = live.done.load(Ordering::Relaxed).max(1);
                format!("doc-{:08}", rng.below(done))
            }
        };
        let t0 = Instant::now();
        let r = proto.read(op, &target).await;
        let end = Instant::now();
        if stop.load(Ordering::Relaxed) {
            tally.after += 1;
            break;
        }
        let rec = &mut tally.ops[ReadOp::ALL.iter().position(|o| *o == op).unwrap_or(0)];
        match r {
            Ok(d) => {
                rec.record_ok(end - t0, d.bytes, end.into_std());
                if !d.ids.is_empty() {
                    known = d.ids;
                }
            }
            Err(e) => rec.record_err(e, end.into_std()),
        }
        if !think.is_zero() && !super::pace::wait_until(end + think, &stop).await {
            break;
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_repository_cannot_do_leaves_the_mix_once_and_says_why() {
        let policy = ReaderPolicy {
            readers: 2,
            think_time_s: 0.1,
            mix: ReaderPolicy::DEFAULT_MIX,
        };
        let no_query = [(ReadOp::Query, "no query".to_string())];
        let (p, skipped) = without_unsupported(policy, &no_query);
        assert_eq!(p.mix, [4, 2, 2, 0]);
        assert_eq!(
            skipped,
            vec![SkippedRead {
                op: ReadOp::Query,
                reason: "no query".into()
            }]
        );
        assert!((0..100).all(|i| p.pick(f64::from(i) / 100.0) != ReadOp::Query));
        // Nothing to say when the mix did not ask for it, nothing to drop when all is there.
        let asked_none = ReaderPolicy {
            mix: [1, 0, 1, 0],
            ..policy
        };
        assert_eq!(
            without_unsupported(asked_none, &no_query),
            (asked_none, vec![])
        );
        assert_eq!(without_unsupported(policy, &[]), (policy, vec![]));
    }
}
