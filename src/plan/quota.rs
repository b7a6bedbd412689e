//! The quota arithmetic of a plan: documents split over the workers with remainder, and a
//! shard's contiguous share of the workers of all shards, so that N shards together run
//! exactly the plan one process would.

/// Splits `docs` over `threads`: the first `docs % threads` workers get one more.
pub fn split_quota(docs: u64, threads: u64) -> Vec<u64> {
    let base = docs / threads;
    let extra = docs % threads;
    (0..threads).map(|i| base + u64::from(i < extra)).collect()
}

/// The document quotas of the workers a process runs: all T (`shard` None), or shard K of
/// N's contiguous share of the T workers of all shards, with their global split.
pub fn shard_quotas(docs: u64, threads: u64, shard: Option<(u64, u64)>) -> Vec<u64> {
    let w = shard_workers(threads, shard);
    split_quota(docs, threads)[w.start as usize..w.end as usize].to_vec()
}

/// The global indices of the workers a process runs: all T, or shard K of N's contiguous
/// share of them (the T workers split over the N shards with remainder).
pub fn shard_workers(threads: u64, shard: Option<(u64, u64)>) -> std::ops::Range<u64> {
    match shard {
        None => 0..threads,
        Some((k, n)) => {
            let wq = split_quota(threads, n);
            let w0: u64 = wq[..k as usize].iter().sum();
            w0..w0 + wq[k as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_split_with_remainder() {
        assert_eq!(split_quota(1000, 6), vec![167, 167, 167, 167, 166, 166]);
        assert_eq!(split_quota(3, 5), vec![1, 1, 1, 0, 0]);
        assert_eq!(split_quota(10, 1), vec![10]);
        assert_eq!(split_quota(1000, 6).iter().sum::<u64>(), 1000);
    }

    #[test]
    fn shards_take_contiguous_parts_of_the_global_split() {
        // 1000 documents, 6 workers over 4 shards (2, 2, 1, 1 workers).
        let parts: Vec<Vec<u64>> = (0..4)
            .map(|k| shard_quotas(1000, 6, Some((k, 4))))
            .collect();
        assert_eq!(
            parts,
            vec![vec![167, 167], vec![167, 167], vec![166], vec![166]]
        );
        assert_eq!(parts.concat(), split_quota(1000, 6));
        assert_eq!(shard_quotas(10, 2, Some((0, 4))), vec![5]);
        assert_eq!(shard_quotas(10, 2, Some((3, 4))), Vec::<u64>::new());
    }
}
