//! Finishing what earlier attempts of a run left behind (`--resume`): the documents their
//! warm-ups stored whose manifest lines a hard stop lost. Each worker's warm-up stream is a
//! known sequence of names (a range of indices, or every T-th index), so the lost ones are
//! the few just after the last line of each stream: they are looked up by name, in order,
//! until two in a row are not there, and the ones found are written to the manifest. Nothing
//! is uploaded here; a resumed run's own warm-up uses documents of its own.

use std::collections::HashSet;

use anyhow::{Context, Result};

use super::CellPlan;
use crate::engine::worker::FolderTable;
use crate::fixtures::Fixtures;
use crate::plan::quota::{shard_workers, split_quota};
use crate::protocol::Protocol;
use crate::results::Warmup;
use crate::results::manifest::Manifest;

/// How many names in a row must be absent before a stream's tail is taken as found.
const MISSES: u32 = 2;

/// Looks up, for every earlier attempt of run `run`, the warm-up documents stored after each
/// of this process's workers' last manifest line, and records those found; returns how many
/// (none when there are no earlier attempts or no warm-up).
pub(super) async fn adopt_earlier_warmups<P: Protocol>(
    proto: &P,
    fixtures: &Fixtures,
    plan: &CellPlan,
    run: u32,
    run_folder: &str,
    run_tag: u64,
    manifest: &Manifest,
) -> Result<u64> {
    let Some(earlier) = plan.earlier.as_ref().filter(|_| !plan.warmup.none()) else {
        return Ok(0);
    };
    let none = HashSet::new();
    let mut writer = manifest.writer(plan.tag.clone()).warmup();
    let mut adopted = 0;
    let mut seen: HashSet<String> = HashSet::new();
    // `--warmup auto` is until steady for a method's first run of an invocation and a fixed
    // count after it, so an earlier attempt may have warmed this run either way: both
    // streams are probed (the same names may lie on both; each is recorded once).
    let mut kinds = vec![plan.warmup];
    for k in [
        Warmup::Steady,
        Warmup::Docs((2 * plan.threads).max(plan.docs.div_ceil(10))),
    ] {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    for attempt in 0..plan.attempt {
        let base = CellPlan::warmup_folder(run_folder, attempt);
        let tag = CellPlan::warmup_tag(run_tag, attempt);
        let lines = earlier.warmup_lines.get(&base).unwrap_or(&none);
        let folders =
            FolderTable::new(base.clone(), plan.docs_per_folder, fixtures.tree().cloned());
        for (w, kind) in
            shard_workers(plan.threads, plan.shard).flat_map(|w| kinds.iter().map(move |k| (w, *k)))
        {
            let mut misses = 0;
            for index in tail(kind, plan.threads, w, lines) {
                if misses >= MISSES {
                    break;
                }
                let doc = fixtures.doc(tag, index);
                let f = folders.of(proto, index).await?;
                let found = proto
                    .lookup(&doc, &f.1)
                    .await
                    .map_err(|e| anyhow::anyhow!("{}: {}", e.class.name(), e.message))
                    .with_context(|| {
                        format!(
                            "--resume: looking up {} of the interrupted warm-up in {} (run again to retry)",
                            doc.name, f.0
                        )
                    })?;
                match found {
                    Some(id) if earlier.known_ids.contains(&id) || seen.contains(&id) => misses = 0,
                    Some(id) => {
                        // A warm-up document stopped between its versions gets the rest.
                        let mut state = proto.worker();
                        proto
                            .complete(&doc, &id, &mut state)
                            .await
                            .map_err(|e| anyhow::anyhow!("{}: {}", e.class.name(), e.message))
                            .with_context(|| {
                                format!(
                                    "--resume: completing the versions of {} in {}",
                                    doc.name, f.0
                                )
                            })?;
                        seen.insert(id.clone());
                        writer.ok(run, &doc, &f.0, &id, None);
                        adopted += 1;
                        misses = 0;
                    }
                    None => misses += 1,
                }
            }
        }
    }
    writer.finish();
    Ok(adopted)
}

/// Worker `w`'s warm-up indices after its last manifest line (all of them when it has none):
/// its range of the split (a warm-up of N documents), or every T-th index from `w` (a
/// warm-up by time).
fn tail(
    warmup: Warmup,
    threads: u64,
    w: u64,
    lines: &HashSet<u64>,
) -> Box<dyn Iterator<Item = u64> + Send> {
    match warmup {
        Warmup::Docs(n) => {
            let q = split_quota(n, threads);
            let start: u64 = q[..w as usize].iter().sum();
            let end = start + q[w as usize];
            let last = lines.iter().filter(|i| (start..end).contains(*i)).max();
            Box::new(last.map_or(start, |l| l + 1)..end)
        }
        Warmup::Seconds(_) | Warmup::Steady => {
            let t = threads.max(1);
            let last = lines.iter().filter(|i| *i % t == w).max();
            Box::new((last.map_or(w, |l| l + t)..).step_by(t as usize))
        }
        Warmup::Auto => Box::new(std::iter::empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_starts_after_each_streams_last_line() {
        let lines: HashSet<u64> = [0, 1, 2, 5, 9].into();
        // 12 documents over 3 workers: 0..4, 4..8, 8..12.
        let t: Vec<Vec<u64>> = (0..3)
            .map(|w| tail(Warmup::Docs(12), 3, w, &lines).collect())
            .collect();
        assert_eq!(t, vec![vec![3], vec![6, 7], vec![10, 11]]);
        // By time over 3 workers: w, w+3, ...
        let s: Vec<u64> = tail(Warmup::Seconds(1.0), 3, 2, &lines).take(2).collect();
        assert_eq!(s, vec![8, 11], "after 5, the last line of stream 2");
        let s: Vec<u64> = tail(Warmup::Seconds(1.0), 3, 1, &HashSet::new())
            .take(2)
            .collect();
        assert_eq!(s, vec![1, 4], "no line: from the start");
    }
}
