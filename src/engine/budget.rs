//! `sweep --budget`: after the planned runs, further runs go where a comparison is still
//! open, until every comparison is answered or the time is spent. A comparison is an access
//! method's cell against the baseline's cell of the same connection policy, size and thread
//! count (what the report's relative-cost table states); it is open while its verdict is
//! "too noisy to tell" (see `analysis::stats::verdict`), a difference counting as found only
//! on its 99 % interval (see [`STOP_SCALE`]), or, with `--precision`, while that interval is
//! wider than asked. Pure choices on the runs' docs/sec; the schedule runs them.
//!
//! **Which runs.** Each round gives every open comparison one more run, but while any
//! comparison at the fewest or the most threads is open (the report's answers state those),
//! only those: on the quick start a round over all twelve spread the time so thin that the
//! small class (whose HTTPS cost is near zero, so it needs ±5 % and 10–15 pairs) stopped
//! short in 2 of 4 sweeps while runs went to 2 and 4 threads. For the same reason the runs
//! at the thread counts in between after the first (`results::budget_defers`) wait until
//! those comparisons are closed, then go in schedule order a point at a time ([`pairs`]),
//! before any comparison in between gets a run. Within that, nearest to an
//! answer first (the smallest ratio of its interval to what would decide it: the difference itself,
//! or the width at which "no difference" is a finding), so a short budget answers as many
//! questions as it can; as many runs of a round are started as fit in the time left, in
//! that order, each expected to take as long as its cell's latest run ([`fit`]). A
//! comparison one of whose cells has `--max-runs` runs is closed and gives way. Paired comparisons (interleaved sweeps, see `analysis::stats::compare_runs`)
//! get a run on both sides, back to back, under the same run number, so the new pair shares
//! the machine's minute as the planned ones did; unpaired, the run goes to the side whose
//! variance term one more run shrinks most (`v/n − v/(n+1)`), usually the noisier. A cell
//! shared by several open comparisons (a baseline) runs once per round.

use std::collections::HashMap;

use crate::analysis::stats::{DECISIVE_PCT, Verdict, compare_runs, mean_var, verdict};
use crate::results::CellKey;

/// Runs stop being added to a comparison that shows a difference only when its 99 % interval
/// excludes 0, not its 95 % one (the report's): every round is another look at the same
/// comparison, and stopping at the first look that happens to be significant would make a
/// chance difference look real more often than 1 in 20 (optional stopping). The ratio of the
/// normal quantiles.
const STOP_SCALE: f64 = 2.576 / 1.960;

/// A comparison still open: the cell, its baseline cell, and how far from an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Open {
    pub cell: CellKey,
    pub baseline: CellKey,
    /// Interval half-width over what would decide it (> 1 while open).
    pub distance: f64,
    /// At the fewest or the most threads: a comparison the report's answers state.
    pub stated: bool,
}

/// The comparisons still open that get runs next (those at the fewest and the most threads
/// while any of them is open), nearest to an answer first. `rates` are each cell's
/// `(run, docs/sec)`; cells without a baseline counterpart are not compared. A comparison
/// one of whose cells has `max_runs` runs can get no more: it is left out, so it does not
/// hold back the comparisons in between (on a loaded quick start, small at 1 thread reached
/// 30 runs with a tenth of the budget left, and the sweep stopped there).
pub fn open(
    rates: &HashMap<CellKey, Vec<(u32, f64)>>,
    baseline: &str,
    precision_pct: Option<f64>,
    paired: bool,
    max_runs: u32,
) -> Vec<Open> {
    let full = |k: &CellKey| rates.get(k).map_or(0, Vec::len) >= max_runs as usize;
    let lo = rates.keys().map(|c| c.threads).min().unwrap_or(0);
    let hi = rates.keys().map(|c| c.threads).max().unwrap_or(0);
    let mut out: Vec<Open> = rates
        .keys()
        .filter(|c| c.method != baseline)
        .filter_map(|c| {
            let b = CellKey {
                method: baseline.to_string(),
                ..c.clone()
            };
            if full(c) || full(&b) {
                return None;
            }
            let (d, h, _) = compare_runs(&rates[c], rates.get(&b)?, paired)?;
            // A difference is taken as found on its 99 % interval; "no difference" on the 95 %
            // one, as reported (how narrow an interval is does not depend on where its
            // centre happens to lie, so repeated looks do not bias it).
            let decided = match precision_pct {
                Some(p) => h * STOP_SCALE <= p,
                None => h * STOP_SCALE < d.abs() || verdict(d, h) == Verdict::NoDifference,
            };
            if decided {
                return None;
            }
            let goal = precision_pct.unwrap_or_else(|| d.abs().max(DECISIVE_PCT));
            Some(Open {
                cell: c.clone(),
                baseline: b,
                distance: h / goal,
                stated: c.threads == lo || c.threads == hi,
            })
        })
        .collect();
    // The fewest and the most threads only, while any of them is open: the report's answers
    // state those.
    if out.iter().any(|o| o.stated) {
        out.retain(|o| o.stated);
    }
    out.sort_by(|a, b| {
        a.distance
            .total_cmp(&b.distance)
            .then_with(|| a.cell.tag().cmp(&b.cell.tag()))
    });
    out
}

/// Runs in schedule order, grouped as they must be started: the consecutive runs of one point
/// (connection, size, threads, rate) and run number, the methods a paired comparison pairs.
pub fn pairs(runs: &[(CellKey, u32)]) -> Vec<Vec<(CellKey, u32)>> {
    let point = |(c, r): &(CellKey, u32)| (c.connection, c.size, c.threads, c.rate_per_s, *r);
    let mut out: Vec<Vec<(CellKey, u32)>> = Vec::new();
    for run in runs {
        if out.last().is_some_and(|g| point(&g[0]) == point(run)) {
            out.last_mut()
                .expect("the group just seen")
                .push(run.clone());
        } else {
            out.push(vec![run.clone()]);
        }
    }
    out
}

/// One round: for each open comparison (in order), the runs to add with their numbers; a
/// cell at most once. Paired: the cell's next run and, unless the baseline has a run of that
/// number already, the baseline's next, back to back (which goes first turns with the run
/// number, as in the schedule). Unpaired: the side one more run helps most.
/// Grouped by comparison: a group is started whole or not at all.
pub fn round(
    rates: &HashMap<CellKey, Vec<(u32, f64)>>,
    open: &[Open],
    paired: bool,
) -> Vec<Vec<(CellKey, u32)>> {
    let next = |k: &CellKey| rates[k].iter().map(|r| r.0).max().unwrap_or(0) + 1;
    if paired {
        let mut groups: Vec<Vec<(CellKey, u32)>> = Vec::new();
        for o in open {
            let out: Vec<&(CellKey, u32)> = groups.iter().flatten().collect();
            if out.iter().any(|(c, _)| *c == o.cell) {
                continue;
            }
            let n = next(&o.cell);
            let has = |k: &CellKey, n: u32| {
                rates[k].iter().any(|r| r.0 == n) || out.iter().any(|(c, m)| c == k && *m == n)
            };
            let mut pair = vec![(o.cell.clone(), n)];
            if !has(&o.baseline, n) && !out.iter().any(|(c, _)| *c == o.baseline) {
                pair.push((o.baseline.clone(), next(&o.baseline)));
                // Odd runs the baseline first, as the schedule does when it is listed
                // first (the quick start's order); even runs it second.
                if n % 2 == 1 {
                    pair.reverse();
                }
            }
            groups.push(pair);
        }
        return groups;
    }
    let gain = |k: &CellKey| {
        let v: Vec<f64> = rates[k].iter().map(|r| r.1).collect();
        let (m, var) = mean_var(&v);
        let n = v.len() as f64;
        if m > 0.0 {
            var / (m * m) / (n * (n + 1.0))
        } else {
            0.0
        }
    };
    let mut out: Vec<Vec<(CellKey, u32)>> = Vec::new();
    for o in open {
        let pick = if gain(&o.cell) >= gain(&o.baseline) {
            &o.cell
        } else {
            &o.baseline
        };
        if out.iter().flatten().any(|(c, _)| c == pick) {
            continue;
        }
        out.push(vec![(pick.clone(), next(pick))]);
    }
    out
}

/// The groups of a round that fit in `left` seconds, in order, whole: a pair cut in half
/// would leave its runs numbered apart from then on. A run is expected to take as long as its
/// cell's latest (`walls`, wall-clock seconds); a cell not run yet (by this invocation: a
/// resume) as long as the slowest that was; with none run, nothing fits.
pub fn fit(
    groups: Vec<Vec<(CellKey, u32)>>,
    walls: &HashMap<CellKey, f64>,
    mut left: f64,
) -> Vec<(CellKey, u32)> {
    let slowest = walls
        .values()
        .copied()
        .reduce(f64::max)
        .unwrap_or(f64::INFINITY);
    let mut out = Vec::new();
    for group in groups {
        let wall: f64 = group
            .iter()
            .map(|(c, _)| walls.get(c).copied().unwrap_or(slowest))
            .sum();
        if wall > left {
            break;
        }
        left -= wall;
        out.extend(group);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::SizeClass;
    use crate::transport::ConnectionPolicy;

    fn key(method: &str, size: SizeClass) -> CellKey {
        CellKey {
            method: method.into(),
            connection: ConnectionPolicy::Reuse,
            size,
            threads: 1,
            rate_per_s: None,
        }
    }

    fn runs(v: &[f64]) -> Vec<(u32, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, r)| (i as u32 + 1, *r))
            .collect()
    }

    /// A clear difference and a clear "no difference" are answered; a noisy comparison is
    /// open and its noisier side runs next; the nearest to an answer comes first.
    #[test]
    fn open_comparisons_get_runs_on_their_noisier_side_nearest_first() {
        let mut rates = HashMap::new();
        // Answered: 10 % slower, tight.
        rates.insert(
            key("http", SizeClass::Small),
            runs(&[1000.0, 1002.0, 998.0]),
        );
        rates.insert(key("https", SizeClass::Small), runs(&[900.0, 901.0, 899.0]));
        // Open, far: the https side scatters by ±30 %.
        rates.insert(
            key("http", SizeClass::Average),
            runs(&[500.0, 501.0, 499.0]),
        );
        rates.insert(
            key("https", SizeClass::Average),
            runs(&[350.0, 650.0, 480.0]),
        );
        // Open, near: a 6 % difference with an interval a little wider.
        rates.insert(key("http", SizeClass::Large), runs(&[100.0, 96.0, 104.0]));
        rates.insert(key("https", SizeClass::Large), runs(&[94.0, 95.0, 93.0]));
        let o = open(&rates, "http", None, false, 30);
        assert_eq!(o.len(), 2, "{o:?}");
        assert_eq!(o[0].cell.size, SizeClass::Large, "nearest first: {o:?}");
        assert!(o.iter().all(|x| x.distance > 1.0));
        let r: Vec<_> = round(&rates, &o, false).concat();
        assert_eq!(
            r,
            vec![
                (key("http", SizeClass::Large), 4),
                (key("https", SizeClass::Average), 4)
            ]
        );
        // With --precision 0.2 %, the tight comparison (± 0.4 % at 95 %) is open too.
        assert_eq!(open(&rates, "http", Some(0.2), false, 30).len(), 3);
    }

    /// While a comparison at the fewest or the most threads (what the answers state) is
    /// open, one in between gets no runs, however near it is; then it does.
    #[test]
    fn the_fewest_and_the_most_threads_come_first() {
        let at = |m: &str, t: u64| CellKey {
            threads: t,
            ..key(m, SizeClass::Small)
        };
        let mut rates = HashMap::new();
        for t in [1, 4, 8] {
            rates.insert(at("http", t), runs(&[100.0, 96.0, 104.0]));
        }
        rates.insert(at("https", 4), runs(&[94.0, 95.0, 93.0]));
        rates.insert(at("https", 1), runs(&[60.0, 140.0, 100.0]));
        rates.insert(at("https", 8), runs(&[70.0, 130.0, 100.0]));
        let o = open(&rates, "http", None, false, 30);
        let mut order: Vec<u64> = o.iter().map(|x| x.cell.threads).collect();
        order.sort();
        assert_eq!(order, vec![1, 8], "{o:?}");
        assert!(o.iter().all(|x| x.stated), "{o:?}");
        // Once those are answered, the one in between.
        rates.insert(at("https", 1), runs(&[80.0, 80.5, 79.5]));
        rates.insert(at("https", 8), runs(&[80.0, 80.5, 79.5]));
        let o = open(&rates, "http", None, false, 30);
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(o[0].cell.threads, 4, "{o:?}");
        assert!(!o[0].stated, "{o:?}");
    }

    /// A comparison at the fewest threads that has its `--max-runs` runs can get no more: it
    /// no longer holds back the one in between, which gets the time left.
    #[test]
    fn a_comparison_at_its_run_cap_gives_way() {
        let at = |m: &str, t: u64| CellKey {
            threads: t,
            ..key(m, SizeClass::Small)
        };
        let mut rates = HashMap::new();
        let noisy: Vec<f64> = (0..6).map(|i| [60.0, 140.0][i % 2]).collect();
        rates.insert(at("http", 1), runs(&[100.0; 6]));
        rates.insert(at("https", 1), runs(&noisy));
        rates.insert(at("http", 4), runs(&[100.0, 96.0, 104.0]));
        rates.insert(at("https", 4), runs(&[94.0, 95.0, 93.0]));
        rates.insert(at("http", 8), runs(&[100.0, 96.0, 104.0]));
        rates.insert(at("https", 8), runs(&[80.0, 80.5, 79.5]));
        let o = open(&rates, "http", None, false, 30);
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(o[0].cell.threads, 1, "{o:?}");
        let o = open(&rates, "http", None, false, 6);
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(o[0].cell.threads, 4, "{o:?}");
        // The baseline at its cap closes the comparison too.
        rates.insert(at("https", 1), runs(&noisy[..5]));
        assert_eq!(open(&rates, "http", None, false, 6)[0].cell.threads, 4);
    }

    /// Whole groups, in order, while they fit; the first that does not (or has a cell never
    /// run) ends the round.
    #[test]
    fn a_round_takes_whole_groups_while_they_fit() {
        let (a, b, c) = (
            key("http", SizeClass::Small),
            key("https", SizeClass::Small),
            key("https", SizeClass::Large),
        );
        let walls = HashMap::from([(a.clone(), 0.6), (b.clone(), 0.6), (c.clone(), 0.6)]);
        let groups = vec![
            vec![(a.clone(), 4), (b.clone(), 4)],
            vec![(c.clone(), 4)],
            vec![(b.clone(), 5)],
        ];
        assert_eq!(fit(groups.clone(), &walls, 10.0).len(), 4);
        assert_eq!(
            fit(groups.clone(), &walls, 1.5),
            vec![(a.clone(), 4), (b.clone(), 4)]
        );
        assert!(fit(groups.clone(), &walls, 1.1).is_empty());
        // A cell not run yet: as long as the slowest; with none run, nothing fits.
        let walls = HashMap::from([(a.clone(), 0.6), (b.clone(), 2.0)]);
        let unknown = vec![vec![(key("x", SizeClass::Small), 1)], groups[1].clone()];
        assert_eq!(fit(unknown.clone(), &walls, 3.0).len(), 1);
        assert!(fit(unknown, &HashMap::new(), 1e9).is_empty());
    }

    /// Deferred runs are started a point's methods at a time, in schedule order.
    #[test]
    fn deferred_runs_go_by_point_and_run() {
        let at = |m: &str, t: u64| CellKey {
            threads: t,
            ..key(m, SizeClass::Small)
        };
        let runs = [
            (at("http", 2), 2),
            (at("https", 2), 2),
            (at("https", 4), 2),
            (at("http", 4), 2),
            (at("http", 2), 3),
            (at("https", 2), 3),
        ];
        let g = pairs(&runs);
        assert_eq!(g.len(), 3, "{g:?}");
        assert!(g.iter().all(|p| p.len() == 2));
        assert_eq!(g.concat(), runs, "nothing lost, nothing reordered");
    }

    /// No baseline counterpart, no comparison; a baseline shared by two open comparisons
    /// runs once per round.
    #[test]
    fn a_shared_baseline_runs_once_per_round() {
        let mut rates = HashMap::new();
        rates.insert(key("http", SizeClass::Small), runs(&[500.0, 700.0, 600.0]));
        rates.insert(key("a", SizeClass::Small), runs(&[600.0, 601.0, 599.0]));
        rates.insert(key("b", SizeClass::Small), runs(&[610.0, 611.0, 609.0]));
        rates.insert(key("c", SizeClass::Large), runs(&[10.0, 20.0]));
        let o = open(&rates, "http", None, false, 30);
        assert_eq!(o.len(), 2, "{o:?}");
        assert_eq!(
            round(&rates, &o, false).concat(),
            vec![(key("http", SizeClass::Small), 4)]
        );
    }

    /// Paired: a run on both sides under the same number, back to back, the order turning
    /// with the number; a baseline that has that run already is not run again.
    #[test]
    fn paired_comparisons_get_a_run_on_both_sides() {
        let mut rates = HashMap::new();
        rates.insert(key("http", SizeClass::Small), runs(&[500.0, 700.0, 600.0]));
        rates.insert(key("a", SizeClass::Small), runs(&[520.0, 690.0, 640.0]));
        rates.insert(key("b", SizeClass::Small), runs(&[450.0, 800.0, 600.0]));
        let o = open(&rates, "http", None, true, 30);
        assert_eq!(o.len(), 2, "{o:?}");
        let r = round(&rates, &o, true);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].len(), 2, "the first comparison runs both sides: {r:?}");
        assert!(r[0].iter().all(|(_, n)| *n == 4));
        assert!(r[0].iter().any(|(c, _)| c.method == "http"));
        assert_eq!(
            r[1].len(),
            1,
            "the baseline's run 4 is in the round already: {r:?}"
        );
        // Run 5 (odd): the baseline first.
        rates.insert(
            key("http", SizeClass::Small),
            runs(&[500.0, 700.0, 600.0, 610.0]),
        );
        rates.insert(
            key("a", SizeClass::Small),
            runs(&[520.0, 690.0, 640.0, 500.0]),
        );
        let o = open(&rates, "http", None, true, 30);
        let r = round(&rates, &o, true);
        let first = r.iter().find(|g| g.len() == 2).expect("a pair");
        assert_eq!(first[0], (key("http", SizeClass::Small), 5), "{r:?}");
    }
}
