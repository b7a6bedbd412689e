//! The import "if relieved": beside an option's estimate, what the import would take if the
//! resource that limited its measured runs were relieved, from the verdict's what-if (the
//! bound's rise c/D_max from and to, `analysis::verdict`). Only where the what-if is a
//! conclusion (a resource saturated, and the change relieves it); for a cell where nothing
//! was near its capacity (serializing, latency-bound, or one thread count that cannot tell)
//! it says why no such estimate is given. Pure: runs in, values out.

use serde::{Deserialize, Serialize};

use super::verdict::{Verdict, WhatIf};
use crate::results::{CellRun, PlanRecord};
use crate::timefmt::human_hours;

/// What an option's import would take if its bottleneck were relieved.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IfRelieved {
    /// The verdict on the measured runs (`analysis::verdict`'s kind) and what limited them.
    pub verdict: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The change that relieves it (`what_if[].change`), when one is a conclusion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// The bound's rise (to / from) and its 95 % range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_ratio: Option<f64>,
    /// The import's duration then, s, with the low and high ends of its 95 % range (the
    /// estimate's interval and the bound's together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_lo_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_hi_s: Option<f64>,
    /// What limits it then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_bottleneck: Option<String>,
    pub text: String,
    /// The other changes the what-ifs say would raise the bound (more nodes, the quota, the
    /// client moved), costed the same way, the smallest rise first: the window plan lists
    /// each as a configuration of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Relief>,
    /// The fewest threads that reach 90 % of the raised bound (`analysis::mva`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_to_90_pct: Option<u32>,
}

/// The import with one change made: its duration and 95 % range, s, from the bound's rise.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Relief {
    /// `what_if[].change`.
    pub change: String,
    /// The bound's rise (to / from).
    pub bound_ratio: f64,
    pub duration_s: f64,
    pub duration_lo_s: f64,
    pub duration_hi_s: f64,
    /// What limits it then.
    pub next_bottleneck: String,
    /// The fewest threads that reach 90 % of the raised bound (`analysis::mva`), where the
    /// runs' resources were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_to_90_pct: Option<u32>,
}

/// A conclusive what-if that raises the bound by more than 1 %.
fn rises(w: &&WhatIf) -> bool {
    w.conclusive && w.bound_to_docs_per_sec > w.bound_from_docs_per_sec * 1.01
}

/// The import of `duration_s` (95 %: `bounds_s`) with the change `w` made: a saturated
/// resource runs at its bound, so the docs/s rise by the bound's ratio at most (its interval
/// widening the range), and the duration falls by as much.
fn costed(w: &WhatIf, duration_s: f64, bounds_s: (f64, f64)) -> Relief {
    let from = w.bound_from_docs_per_sec;
    let r = w.bound_to_docs_per_sec / from;
    let (r_lo, r_hi) = (
        (w.bound_to_lo / from).clamp(1.0, r),
        (w.bound_to_hi / from).max(r),
    );
    let round = |v: f64| (v * 1000.0).round() / 1000.0;
    Relief {
        change: w.change.clone(),
        bound_ratio: round(r),
        duration_s: round(duration_s / r),
        duration_lo_s: round(bounds_s.0 / r_hi),
        duration_hi_s: round(bounds_s.1 / r_lo),
        next_bottleneck: w.next_bottleneck.clone(),
        threads_to_90_pct: w.threads_to_90_pct,
    }
}

/// The what-if that relieves the verdict's bottleneck: the quota raised for a quota, the
/// client moved for the client, a second node for a server (or a remote host), the client
/// moved (else twice the cores) for this host's CPU; the largest conclusive rise otherwise.
fn relief(v: &Verdict) -> Option<&WhatIf> {
    let prefer: &[&str] = match v.kind.as_str() {
        "cpu_quota" => &["quota_raised", "two_nodes", "three_nodes", "four_nodes"],
        "client" => &["client_on_its_own_host", "twice_the_cores"],
        "server_cpu" | "remote_host" => {
            &["two_nodes", "three_nodes", "four_nodes", "twice_the_cores"]
        }
        "host_cpu" => &["client_on_its_own_host", "twice_the_cores"],
        _ => &[],
    };
    prefer
        .iter()
        .find_map(|c| v.what_if.iter().filter(rises).find(|w| w.change == *c))
        .or_else(|| {
            v.what_if.iter().filter(rises).max_by(|a, b| {
                (a.bound_to_docs_per_sec / a.bound_from_docs_per_sec)
                    .total_cmp(&(b.bound_to_docs_per_sec / b.bound_from_docs_per_sec))
            })
        })
}

/// The import of `duration_s` (95 %: `bounds_s`) if the bottleneck `v` names were relieved
/// ([`costed`]), and with each other change that raises the bound (`also`).
pub fn if_relieved(v: &Verdict, duration_s: f64, bounds_s: (f64, f64)) -> IfRelieved {
    let mut out = IfRelieved {
        verdict: v.kind.clone(),
        resource: v.resource.clone(),
        change: None,
        bound_ratio: None,
        duration_s: None,
        duration_lo_s: None,
        duration_hi_s: None,
        next_bottleneck: None,
        text: String::new(),
        also: Vec::new(),
        threads_to_90_pct: None,
    };
    let saturated = !matches!(
        v.kind.as_str(),
        "serializing" | "latency" | "latency_or_serializing" | "unknown"
    );
    let now = human_hours(duration_s / 3600.0);
    match relief(v).filter(|_| saturated) {
        Some(w) => {
            let c = costed(w, duration_s, bounds_s);
            let h = |s: f64| human_hours(s / 3600.0);
            let label = w.text.split(':').next().unwrap_or(&w.change).to_string();
            out.text = format!(
                "if relieved ({label}, as {} limited the runs): about {} ({}–{}) instead of {now}, then limited by {} (the bound's rise ×{:.2}: a limit on the gain, reached only if nothing else binds first)",
                v.resource.as_deref().unwrap_or(&v.kind),
                h(c.duration_s),
                h(c.duration_lo_s),
                h(c.duration_hi_s),
                w.next_bottleneck,
                w.bound_to_docs_per_sec / w.bound_from_docs_per_sec
            );
            out.also = v
                .what_if
                .iter()
                .filter(rises)
                .filter(|o| o.change != w.change)
                .map(|o| costed(o, duration_s, bounds_s))
                .collect();
            out.also
                .sort_by(|a, b| a.bound_ratio.total_cmp(&b.bound_ratio));
            out.change = Some(c.change);
            out.bound_ratio = Some(c.bound_ratio);
            out.duration_s = Some(c.duration_s);
            out.duration_lo_s = Some(c.duration_lo_s);
            out.duration_hi_s = Some(c.duration_hi_s);
            out.next_bottleneck = Some(c.next_bottleneck);
            out.threads_to_90_pct = c.threads_to_90_pct;
        }
        None => {
            out.text = match v.kind.as_str() {
                "serializing" => format!(
                    "no estimate if relieved: nothing was near its capacity and docs/s had stopped growing (serialization in the server): more cores would not shorten the {now}; a second node only if the serialization is per node, not the shared store's single writer: measure with a second node"
                ),
                "latency" => format!(
                    "no estimate if relieved: nothing was near its capacity (latency-bound): more threads shorten the {now} first"
                ),
                "latency_or_serializing" => format!(
                    "no estimate if relieved: nothing was near its capacity in the measured runs (latency or serialization; a sweep over threads tells which): no change of cores or nodes is known to shorten the {now}"
                ),
                "unknown" => "no estimate if relieved: no resource was read".into(),
                _ => format!(
                    "no estimate if relieved: {} limited the runs and no change measured relieves it",
                    v.resource.as_deref().unwrap_or(&v.kind)
                ),
            };
        }
    }
    out
}

/// The runs behind an option: its method, policy and threads, at the measured size closest
/// to the corpus's mean document (one cell: demands differ by size).
pub(super) fn option_runs<'a>(
    sweeps: &[&'a [(PlanRecord, Vec<CellRun>)]],
    method: &str,
    conn: crate::transport::ConnectionPolicy,
    threads: u64,
    mean_bytes: f64,
) -> Vec<&'a CellRun> {
    let mut best: Option<(f64, Vec<&CellRun>)> = None;
    for (plan, runs) in sweeps.iter().flat_map(|g| g.iter()) {
        for (cell, rs) in plan.runs_by_cell(runs) {
            if cell.method != method || cell.connection != conn || cell.threads != threads {
                continue;
            }
            let bytes = plan
                .sizes
                .iter()
                .find(|(s, _)| *s == cell.size)
                .map_or(mean_bytes, |(_, b)| *b as f64);
            let dist = (bytes.max(1.0).ln() - mean_bytes.max(1.0).ln()).abs();
            if best.as_ref().is_none_or(|(d, _)| dist < *d) {
                best = Some((dist, rs));
            }
        }
    }
    best.map(|(_, rs)| rs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::verdict::tests::{local, quota_lab};
    use crate::metrics::resources::Role;

    #[test]
    fn a_quota_at_its_limit_halves_the_import_if_raised_and_idle_cells_say_why_not() {
        // Node 1 at 98 % of a 0.5-CPU quota, 1.6 ms per document: bound 312.5 docs/s; the
        // quota doubled: 625, then this host's CPU (2 cores, 2.4 ms per document: 833).
        let quota = quota_lab();
        let v = super::super::verdict::verdict(&quota, None);
        assert_eq!(v.kind, "cpu_quota");
        let r = if_relieved(&v, 4800.0, (4200.0, 5400.0));
        assert_eq!(r.change.as_deref(), Some("quota_raised"));
        assert_eq!(r.bound_ratio, Some(2.0));
        assert_eq!(r.duration_s, Some(2400.0));
        assert!(
            r.duration_lo_s.unwrap() < 2400.0 && r.duration_hi_s.unwrap() > 2400.0,
            "{r:?}"
        );
        assert!(
            r.text.contains("40.0 min") && r.text.contains("instead of 1.3 h"),
            "{}",
            r.text
        );
        // The other changes that raise the bound, costed alike, the smallest rise first: a
        // second node (this host then binds at 833 docs/s), and no repeat of the quota.
        let also: Vec<(&str, f64)> = r
            .also
            .iter()
            .map(|a| (a.change.as_str(), a.bound_ratio))
            .collect();
        assert!(also.iter().all(|(c, _)| *c != "quota_raised"), "{also:?}");
        assert!(
            also.windows(2).all(|p| p[0].1 <= p[1].1),
            "smallest rise first: {also:?}"
        );
        let two = r.also.iter().find(|a| a.change == "two_nodes").unwrap();
        assert!(
            (two.duration_s - 4800.0 / two.bound_ratio).abs() < 0.01
                && two.duration_lo_s < two.duration_s
                && two.duration_hi_s > two.duration_s,
            "{two:?}"
        );
        // Nothing near its capacity: no duration, and why not.
        let idle = vec![local(Role::Server, 0.3, 0.3), local(Role::Host, 0.6, 0.6)];
        let v = super::super::verdict::verdict(&idle, None);
        let r = if_relieved(&v, 4800.0, (4200.0, 5400.0));
        assert_eq!(r.verdict, "latency_or_serializing");
        assert!(r.duration_s.is_none() && r.change.is_none() && r.also.is_empty());
        assert!(r.text.starts_with("no estimate if relieved"), "{}", r.text);
        let mut v = v;
        v.kind = "serializing".into();
        let r = if_relieved(&v, 4800.0, (4200.0, 5400.0));
        assert!(
            r.duration_s.is_none() && r.text.contains("only if the serialization is per node"),
            "{}",
            r.text
        );
    }
}
