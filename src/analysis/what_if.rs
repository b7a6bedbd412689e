//! What would help: the measured demands rescaled where a resource scales (more nodes, twice
//! the cores, the client on its own host, a raised quota), each with the bound it gives and
//! what limits it then. Nodes are added as the measured ones are spread: each takes an equal
//! share of the documents, so a node's demand per document falls by the node count's ratio;
//! the parts the nodes share (the balancer's process, the store's disk, the client and the
//! host it runs on) do not scale. Where the measured nodes are processes on this host, the
//! what-if also gives the bound with the added nodes on this host beside them (`same_host`):
//! a lab's truth, where every node shares one machine. Pure functions; the verdict says
//! which of them are conclusions.

use serde::{Deserialize, Serialize};

use super::demands::{Bound, Demand, bound};
use super::stats::t975;
use crate::metrics::resources::{Kind, Role};

/// One change and what it would buy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// `two_nodes`, `three_nodes`, `four_nodes` (the node count after the change),
    /// `twice_the_cores`, `client_on_its_own_host`, `quota_raised`.
    pub change: String,
    pub bound_from_docs_per_sec: f64,
    pub bound_to_docs_per_sec: f64,
    pub bound_to_lo: f64,
    pub bound_to_hi: f64,
    /// What limits it then.
    pub next_bottleneck: String,
    pub text: String,
    /// The bound's rise is a conclusion: a resource saturated and this change relieves it.
    /// False where nothing was near its capacity (serializing, latency-bound, or one thread
    /// count that cannot tell): then `bound_to_*` is either the measured bound (no gain
    /// expected) or a ceiling not reached, and the text says why not.
    #[serde(default = "yes")]
    pub conclusive: bool,
    /// A node what-if whose measured nodes ran on this host: the bound with the added nodes
    /// on this host too (the host's demand stays whole), where that is lower.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_host: Option<Bound>,
    /// A sweep's what-if: docs/s at the sweep's thread counts by mean value analysis of the
    /// rescaled demands (`analysis::mva`, its think time fitted to the fewest threads the
    /// path measured), as `[threads, docs/s]`; and the fewest threads that reach 90 % of
    /// `bound_to_docs_per_sec` on that curve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve: Vec<(u32, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_to_90_pct: Option<u32>,
    /// The demands after the change (not written: the curve is drawn from them).
    #[serde(skip)]
    pub after: Vec<Demand>,
}

/// The most nodes a what-if adds up to.
pub const MAX_NODES: usize = 4;

/// A node that did less than this share of the busiest node's work per document was not
/// one of the path's nodes (a member a one-node balancer left idle).
const ACTIVE: f64 = 0.2;

/// The change's name for `k` nodes in all.
pub fn nodes_change(k: usize) -> &'static str {
    match k {
        2 => "two_nodes",
        3 => "three_nodes",
        _ => "four_nodes",
    }
}

/// A what-if's name in words.
pub fn change_words(c: &str) -> String {
    match c {
        "two_nodes" => "a second node".into(),
        "three_nodes" => "three nodes".into(),
        "four_nodes" => "four nodes".into(),
        "twice_the_cores" => "twice the cores".into(),
        "client_on_its_own_host" => "the client on its own host".into(),
        "quota_raised" => "a raised CPU quota".into(),
        other => other.replace('_', " "),
    }
}

/// Whether `change` adds nodes.
pub fn adds_nodes(change: &str) -> bool {
    change.ends_with("_nodes")
}

fn yes() -> bool {
    true
}

/// The bound after `change` rescales capacities and demands.
fn rescaled(demands: &[Demand], f: impl Fn(&Demand) -> (f64, f64)) -> Option<(Bound, Vec<Demand>)> {
    let v: Vec<Demand> = demands
        .iter()
        .map(|d| {
            let (cap, dem) = f(d);
            let mut d = d.clone();
            d.capacity = cap;
            d.demand_ms = dem;
            d
        })
        .collect();
    Some((bound(&v)?, v))
}

/// [`rescaled`] for a node what-if: its interval carries the model's error too.
fn rescaled_nodes(
    demands: &[Demand],
    f: impl Fn(&Demand) -> (f64, f64),
) -> Option<(Bound, Vec<Demand>)> {
    rescaled(demands, f).map(|(b, v)| (with_model_error(b), v))
}

fn local_server(d: &Demand) -> bool {
    d.kind == Kind::ProcessCpu && d.role == Role::Server
}

fn client(d: &Demand) -> bool {
    d.kind == Kind::ProcessCpu && d.role == Role::Client
}

fn host(d: &Demand) -> bool {
    d.kind == Kind::HostCpu && d.role == Role::Host
}

fn remote(d: &Demand) -> bool {
    d.kind == Kind::HostCpu && d.role == Role::RemoteHost
}

fn sum(demands: &[Demand], f: &dyn Fn(&Demand) -> bool) -> f64 {
    demands.iter().filter(|d| f(d)).map(|d| d.demand_ms).sum()
}

/// The what-if of `change` from the bound `now` to the rescaled one `r`, if any.
fn made(
    now: &Bound,
    change: &str,
    label: String,
    r: Option<(Bound, Vec<Demand>)>,
) -> Option<WhatIf> {
    let (b, after) = r?;
    Some(WhatIf {
        change: change.into(),
        bound_from_docs_per_sec: now.docs_per_sec,
        bound_to_docs_per_sec: b.docs_per_sec,
        bound_to_lo: b.docs_per_sec_lo,
        bound_to_hi: b.docs_per_sec_hi,
        text: format!(
            "{label}: the bound goes from {:.0} to {:.0} docs/s ({:.0}–{:.0}), then limited by {}",
            now.docs_per_sec, b.docs_per_sec, b.docs_per_sec_lo, b.docs_per_sec_hi, b.resource
        ),
        next_bottleneck: b.resource,
        conclusive: true,
        same_host: None,
        curve: Vec::new(),
        threads_to_90_pct: None,
        after,
    })
}

/// The node what-ifs: up to [`MAX_NODES`] in all, from the nodes that did work.
fn node_what_ifs(demands: &[Demand], now: &Bound) -> Vec<WhatIf> {
    // The nodes: the busiest server and those configured like it (same kind and capacity);
    // a front end (a proxy's process) does not double with the nodes.
    let Some(top) = demands
        .iter()
        .filter(|d| local_server(d) || remote(d))
        .max_by(|a, b| a.load().total_cmp(&b.load()))
    else {
        return Vec::new();
    };
    let node = |d: &Demand| {
        (local_server(d) || remote(d))
            && d.kind == top.kind
            && d.capacity == top.capacity
            && d.capacity_from == top.capacity_from
    };
    // The nodes measured: those that did work, the busiest's share at least.
    let active = |d: &Demand| node(d) && d.demand_ms >= ACTIVE * top.demand_ms;
    let measured = demands.iter().filter(|d| active(d)).count().max(1);
    let local_nodes_ms = sum(demands, &|d| active(d) && local_server(d));
    // One node read on this host and no other server process: the URL went to the node
    // itself, so the balancer more nodes need was never measured.
    let no_front_end = measured == 1
        && local_server(top)
        && !demands
            .iter()
            .any(|d| local_server(d) && !node(d) && d.demand_ms > 0.0);
    let mut out = Vec::new();
    for k in (measured + 1).max(2)..=MAX_NODES {
        // Each of k nodes takes 1/k of the documents: an active node's capacity grows by
        // k / measured. The added nodes on machines of their own: this host keeps the
        // client and its nodes' new share; a front end, a shared store's disk and the
        // client do not scale.
        let f = k as f64 / measured as f64;
        let word = |n: usize| ["one", "two", "three", "four"][n.clamp(1, MAX_NODES) - 1];
        let label = if measured == 1 {
            format!(
                "with {} nodes (the added ones on machines of their own, one shared store)",
                word(k)
            )
        } else {
            format!(
                "with {} nodes instead of {} (the added ones on machines of their own, one shared store)",
                word(k),
                word(measured)
            )
        };
        let Some(mut w) = made(
            now,
            nodes_change(k),
            label,
            rescaled_nodes(demands, |d| {
                if active(d) {
                    (d.capacity * f, d.demand_ms)
                } else if host(d) {
                    (
                        d.capacity,
                        (d.demand_ms - local_nodes_ms * (1.0 - 1.0 / f)).max(0.0),
                    )
                } else {
                    (d.capacity, d.demand_ms)
                }
            }),
        ) else {
            continue;
        };
        if local_nodes_ms > 0.0
            && let Some((same, _)) = rescaled_nodes(demands, |d| {
                if active(d) {
                    (d.capacity * f, d.demand_ms)
                } else {
                    (d.capacity, d.demand_ms)
                }
            })
            && same.docs_per_sec < w.bound_to_docs_per_sec * 0.999
        {
            w.text.push_str(&format!(
                "; with the added nodes on this host beside the others: {:.0} docs/s ({:.0}–{:.0}), limited by {}",
                same.docs_per_sec, same.docs_per_sec_lo, same.docs_per_sec_hi, same.resource
            ));
            w.same_host = Some(same);
        }
        if no_front_end {
            // On the Java lab every what-if from the node's own connector to nodes behind
            // httpd + mod_jk said too much: +12 % and +30 % with the nodes still the limit
            // (AJP through the balancer costs the nodes more), +47 % where this host
            // limited them (the balancer's CPU was on it).
            w.conclusive = false;
            w.text.push_str(
                "; not a conclusion: this path goes to the node itself, so what the balancer more nodes need costs (its CPU, its protocol to the nodes) is in none of these demands: measure one node through the balancer",
            );
        }
        out.push(w);
    }
    out
}

/// The changes that apply to these demands and what each would buy.
pub fn what_ifs(demands: &[Demand]) -> Vec<WhatIf> {
    let Some(now) = bound(demands) else {
        return Vec::new();
    };
    let servers_ms = sum(demands, &local_server);
    let client_ms = sum(demands, &client);
    let host_cores = demands.iter().find(|d| host(d)).map(|d| d.capacity);
    let made = |change: &str, label: String, r| made(&now, change, label, r);
    let mut out = node_what_ifs(demands, &now);
    out.extend(made(
        "twice_the_cores",
        "with twice the cores".into(),
        rescaled(demands, |d| {
            let scales = d.kind == Kind::HostCpu
                || (d.kind == Kind::ProcessCpu && !d.capacity_from.starts_with("cgroup"));
            (
                if scales { d.capacity * 2.0 } else { d.capacity },
                d.demand_ms,
            )
        }),
    ));
    if servers_ms > 0.0 && client_ms > 0.0 {
        out.extend(made(
            "client_on_its_own_host",
            "with the client on its own host".into(),
            rescaled(demands, |d| {
                if host(d) {
                    (d.capacity, (d.demand_ms - client_ms).max(0.0))
                } else if client(d) {
                    (
                        host_cores.unwrap_or(d.capacity).max(d.capacity),
                        d.demand_ms,
                    )
                } else {
                    (d.capacity, d.demand_ms)
                }
            }),
        ));
    }
    if let Some(q) = demands
        .iter()
        .filter(|d| d.kind == Kind::ProcessCpu && d.capacity_from.starts_with("cgroup"))
        .map(|d| d.capacity)
        .reduce(f64::max)
    {
        let to = q * 2.0;
        out.extend(made(
            "quota_raised",
            format!("with the CPU quota raised from {q:.2} to {to:.2} CPUs"),
            rescaled(demands, |d| {
                if d.kind == Kind::ProcessCpu && d.capacity_from.starts_with("cgroup") {
                    (d.capacity.max(to), d.demand_ms)
                } else {
                    (d.capacity, d.demand_ms)
                }
            }),
        ));
    }
    out
}

/// A cell at one resource's limit whose docs/s is under this share of the median such cell
/// measured its demand at a lower rate (on the Java lab, a node at its quota spent up to 20 %
/// more per document at one thread than at 30), so it does not join the pool: the what-if
/// is about the rate at the limit. The median, not the fastest: beside a busy loop one cell
/// ran 13 % above the others and a pool of the fastest held it alone.
pub const POOL_RATE: f64 = 0.9;

/// How far a node what-if's point missed the peak measured with more nodes on the Java lab
/// (2026-11-28, OpenCMIS FileShare nodes under 0.3- and 0.6-CPU quotas: −11 % to +12 %),
/// beyond what the demands' own noise explains: a node's cost per document moves with the
/// concurrency it sees, and a path whose balancer differs from the measured one's costs
/// differently. Combined with the demand's interval in quadrature.
pub const NODES_MODEL: f64 = 0.15;

/// `b` with its interval widened by [`NODES_MODEL`].
fn with_model_error(b: Bound) -> Bound {
    let x = b.docs_per_sec;
    // The demand's relative half-width, back from the bound's sides (x / (1 ± h)).
    let h = if b.docs_per_sec_lo > 0.0 {
        x / b.docs_per_sec_lo - 1.0
    } else {
        0.0
    };
    let h = (h * h + NODES_MODEL * NODES_MODEL).sqrt().min(0.99);
    Bound {
        docs_per_sec_lo: x / (1.0 + h),
        docs_per_sec_hi: x / (1.0 - h),
        ..b
    }
}

/// The demands of several cells that saturated the same resource at about the same rate,
/// pooled as one measurement: each resource's demand is the mean over every run of every
/// cell (`cells`: a cell's demands and its run count), its interval the 95 % t interval
/// over those runs, from the runs' spread within each cell and the cells' spread about the
/// pooled mean. Resources read in some cells only are left out.
pub fn pooled(cells: &[(&[Demand], u32)]) -> Vec<Demand> {
    let Some(&(first, _)) = cells.first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter(|d0| d0.error.is_none())
        .filter_map(|d0| {
            let v: Vec<(&Demand, f64)> = cells
                .iter()
                .filter_map(|(ds, n)| {
                    let d = ds.iter().find(|d| d.name == d0.name && d.error.is_none())?;
                    Some((d, f64::from((*n).max(1))))
                })
                .collect();
            if v.len() < cells.len() {
                return None;
            }
            let runs: f64 = v.iter().map(|(_, n)| n).sum();
            let mean = v.iter().map(|(d, n)| d.demand_ms * n).sum::<f64>() / runs;
            // Each cell's runs' variance, back from its interval (t over n - 1 degrees).
            let within: f64 = v
                .iter()
                .map(|(d, n)| {
                    let sd = d.demand_ci95_ms.map_or(0.0, |h| {
                        if *n > 1.0 {
                            h * n.sqrt() / t975(n - 1.0)
                        } else {
                            0.0
                        }
                    });
                    (n - 1.0) * sd * sd
                })
                .sum();
            let between: f64 = v
                .iter()
                .map(|(d, n)| n * (d.demand_ms - mean).powi(2))
                .sum();
            let mut d = d0.clone();
            d.demand_ms = mean;
            d.demand_ci95_ms = (runs > 1.0 && mean > 0.0).then(|| {
                let sd = ((within + between) / (runs - 1.0)).sqrt();
                t975(runs - 1.0) * sd / runs.sqrt()
            });
            d.utilization = v.iter().map(|(d, n)| d.utilization * n).sum::<f64>() / runs;
            d.bound_docs_per_sec =
                (d.capacity > 0.0 && mean > 0.0).then(|| d.capacity * 1000.0 / mean);
            Some(d)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::verdict::tests::quota_lab;

    fn find<'a>(w: &'a [WhatIf], change: &str) -> &'a WhatIf {
        w.iter()
            .find(|w| w.change == change)
            .unwrap_or_else(|| panic!("{change}: {w:?}"))
    }

    #[test]
    fn one_node_measured_gives_two_three_and_four_with_the_shared_host_beside() {
        // One node at 0.5 CPU, 1.6 ms per document (312.5 docs/s); this host's 2 cores spend
        // 2.4 ms per document (833 docs/s), the node's 1.6 of it; an idle second member.
        let mut lab = quota_lab();
        let mut idle = lab[0].clone();
        idle.name = "java (pid 6)".into();
        (idle.demand_ms, idle.utilization) = (0.05, 0.03);
        lab.push(idle);
        let w = what_ifs(&lab);
        let two = find(&w, "two_nodes");
        assert!((two.bound_to_docs_per_sec - 625.0).abs() < 0.1, "{two:?}");
        assert!(two.same_host.is_none(), "{two:?}");
        // Three: the nodes allow 937.5; with the third on its own machine this host keeps
        // 2.4 - 1.6 * 2/3 ms (1,500 docs/s); beside the others it keeps all 2.4 (833).
        let three = find(&w, "three_nodes");
        assert!(
            (three.bound_to_docs_per_sec - 937.5).abs() < 0.1,
            "{three:?}"
        );
        let same = three
            .same_host
            .as_ref()
            .expect("the host limits three nodes on it");
        assert!((same.docs_per_sec - 833.3).abs() < 0.1, "{same:?}");
        assert_eq!(same.resource, "this host's CPU");
        assert!(
            three.text.contains("beside the others: 833"),
            "{}",
            three.text
        );
        let four = find(&w, "four_nodes");
        assert!(
            (four.bound_to_docs_per_sec - 1250.0).abs() < 0.1,
            "{four:?}"
        );
    }

    #[test]
    fn two_nodes_measured_add_a_third_and_a_fourth_not_a_second() {
        let mut lab = quota_lab();
        lab[0].demand_ms = 0.8;
        let mut second = lab[0].clone();
        second.name = "java (pid 6)".into();
        lab.push(second);
        let w = what_ifs(&lab);
        assert!(w.iter().all(|w| w.change != "two_nodes"), "{w:?}");
        // 625 docs/s on two nodes; three take 1.5 times as many.
        let three = find(&w, "three_nodes");
        assert!(
            (three.bound_from_docs_per_sec - 625.0).abs() < 0.1,
            "{three:?}"
        );
        assert!(
            (three.bound_to_docs_per_sec - 937.5).abs() < 0.1,
            "{three:?}"
        );
        assert!(
            three.text.contains("with three nodes instead of two"),
            "{}",
            three.text
        );
        let four = find(&w, "four_nodes");
        assert!(
            (four.bound_to_docs_per_sec - 1250.0).abs() < 0.1,
            "{four:?}"
        );
    }

    #[test]
    fn pooled_demands_are_the_mean_over_every_run_with_the_spread_of_all() {
        let (mut a, mut b) = (quota_lab(), quota_lab());
        (a[0].demand_ms, a[0].demand_ci95_ms) = (1.0, Some(0.1));
        (b[0].demand_ms, b[0].demand_ci95_ms) = (1.2, Some(0.1));
        b.retain(|d| d.name != "ingestbench (client)");
        let p = pooled(&[(&a, 3), (&b, 3)]);
        // The client was read in one cell only: left out.
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p.iter().all(|d| d.name != "ingestbench (client)"), "{p:?}");
        let node = &p[0];
        assert!((node.demand_ms - 1.1).abs() < 1e-9, "{node:?}");
        // Within: each cell's sd 0.1 * sqrt(3) / t(2); between: 3 * 0.1^2 each; 5 degrees.
        let sd_in = 0.1 * 3f64.sqrt() / t975(2.0);
        let sd = ((4.0 * sd_in * sd_in + 0.06) / 5.0).sqrt();
        let want = t975(5.0) * sd / 6f64.sqrt();
        assert!(
            (node.demand_ci95_ms.unwrap() - want).abs() < 1e-9,
            "{node:?}"
        );
        assert!((node.bound_docs_per_sec.unwrap() - 500.0 / 1.1).abs() < 1e-6);
    }

    #[test]
    fn a_path_to_the_node_itself_gives_no_node_conclusion() {
        // quota_lab without its front end: the URL went to the node itself.
        let mut lab = quota_lab();
        lab.retain(|d| !d.name.starts_with("apache2"));
        let w = what_ifs(&lab);
        for c in ["two_nodes", "three_nodes", "four_nodes"] {
            let n = find(&w, c);
            assert!(!n.conclusive && n.text.contains("balancer"), "{n:?}");
        }
        // The quota raised does not need a balancer.
        assert!(find(&w, "quota_raised").conclusive);
        assert!(find(&what_ifs(&quota_lab()), "three_nodes").conclusive);
    }
}
