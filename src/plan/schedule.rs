//! The order a sweep's runs are done in (`sweep --order`): interleaved rounds whose methods
//! of one point run back to back, or shuffled with the seed. Pure: no clock, no I/O.

use crate::fixtures::SizeClass;
use crate::results::{CellKey, Order};
use crate::transport::ConnectionPolicy;

/// The order runs are done in: `(cell, run)` pairs.
///
/// Interleaved: round by round (run 1 of every cell, then run 2, ...); within a round the
/// access methods of one point (connection, size, threads) run back to back, their order
/// turning each round, so a method and the baseline it is compared with run about one run
/// apart and the comparison can pair them (`analysis::stats::paired_relative_pct`): this
/// machine's speed drifts by ±10 % over 10-20 s, which the pair shares and cancels, while
/// the methods' runs a whole pass apart did not share it. Turning the order keeps "first of
/// the pair" (a cache the other warmed, write-back the other left) off one method. A rate
/// (`sweep --rates`) is part of the point, as the thread count is: each round runs every
/// rate once, in the cells' order (the readers-alone baseline, rate 0, first).
pub fn schedule(cells: &[CellKey], runs: u32, order: Order, seed: u64) -> Vec<(CellKey, u32)> {
    let mut points: Vec<(ConnectionPolicy, SizeClass, u64, Option<f64>)> = Vec::new();
    let mut methods: Vec<&str> = Vec::new();
    for c in cells {
        let p = (c.connection, c.size, c.threads, c.rate_per_s);
        if !points.contains(&p) {
            points.push(p);
        }
        if !methods.contains(&c.method.as_str()) {
            methods.push(&c.method);
        }
    }
    let mut out = Vec::with_capacity(cells.len() * runs as usize);
    for r in 1..=runs {
        let turn = (r as usize - 1) % methods.len().max(1);
        for p in &points {
            for i in 0..methods.len() {
                let m = methods[(i + turn) % methods.len()];
                if let Some(c) = cells.iter().find(|c| {
                    c.method == m && (c.connection, c.size, c.threads, c.rate_per_s) == *p
                }) {
                    out.push((c.clone(), r));
                }
            }
        }
    }
    if order == Order::Random {
        let mut rng = crate::fixtures::Rng::new(seed ^ 0x5EED_0F5E_ED00);
        for i in (1..out.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            out.swap(i, j);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_and_random_orders_cover_every_run_once() {
        let cells: Vec<CellKey> = (1..=3)
            .map(|t| CellKey {
                method: "m".into(),
                connection: ConnectionPolicy::Reuse,
                size: SizeClass::Small,
                threads: t,
                rate_per_s: None,
            })
            .collect();
        let s = schedule(&cells, 2, Order::Interleaved, 1);
        assert_eq!(
            s.iter().map(|(c, r)| (c.threads, *r)).collect::<Vec<_>>(),
            vec![(1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2)]
        );
        // Two methods: back to back at each point, the order turning each round.
        let two: Vec<CellKey> = ["a", "b"]
            .iter()
            .flat_map(|m| {
                cells.iter().map(move |c| CellKey {
                    method: m.to_string(),
                    ..c.clone()
                })
            })
            .collect();
        let s2 = schedule(&two, 2, Order::Interleaved, 1);
        let got: Vec<(&str, u64, u32)> = s2
            .iter()
            .map(|(c, r)| (c.method.as_str(), c.threads, *r))
            .collect();
        assert_eq!(
            got[..8],
            [
                ("a", 1, 1),
                ("b", 1, 1),
                ("a", 2, 1),
                ("b", 2, 1),
                ("a", 3, 1),
                ("b", 3, 1),
                ("b", 1, 2),
                ("a", 1, 2)
            ]
        );
        assert_eq!(s2.len(), 12);
        let mut r = schedule(&cells, 2, Order::Random, 1);
        assert_eq!(
            r,
            schedule(&cells, 2, Order::Random, 1),
            "deterministic from the seed"
        );
        r.sort_by_key(|(c, run)| (*run, c.threads));
        assert_eq!(r, s);
    }

    #[test]
    fn rates_are_interleaved_like_thread_counts_the_baseline_first() {
        let cells: Vec<CellKey> = [0.0, 10.0, 20.0]
            .iter()
            .map(|r| CellKey {
                method: "m".into(),
                connection: ConnectionPolicy::Reuse,
                size: SizeClass::Small,
                threads: 4,
                rate_per_s: Some(*r),
            })
            .collect();
        let s = schedule(&cells, 2, Order::Interleaved, 1);
        let got: Vec<(f64, u32)> = s.iter().map(|(c, r)| (c.rate_per_s.unwrap(), *r)).collect();
        assert_eq!(
            got,
            vec![
                (0.0, 1),
                (10.0, 1),
                (20.0, 1),
                (0.0, 2),
                (10.0, 2),
                (20.0, 2)
            ]
        );
    }
}
