//! What limited a cell, and what would help: the verdict names the resource that saturates
//! (a CPU quota, a server process, the client, this host's CPU as a whole, a disk, a remote
//! host), or, when nothing is near its capacity, tells a server that is only slow per request
//! (latency-bound: throughput still growing, the knee ahead) from one that serializes
//! (scaling stopped with its resources idle: a lock, a single writer; the USL's σ as the
//! evidence). It follows the sweep's own scaling answer, never contradicts it. The what-ifs
//! rescale the measured demands where the resource scales (two nodes, twice the cores, the
//! client on its own host, a raised quota) and give the new bound and what limits it then.
//! Pure functions.

use serde::{Deserialize, Serialize};

use super::demands::{Bound, Demand, bound};
use crate::metrics::resources::{Kind, Role};

/// A process or disk busy this share of its capacity saturates it.
pub const NEAR: f64 = 0.85;
/// A host's CPU as a whole (client + servers + kernel + anyone else) saturates here.
pub const HOST_NEAR: f64 = 0.9;

/// What the sweep says about scaling (for the cell's method and size).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalingEvidence {
    /// The cell's own thread count.
    pub threads: u64,
    /// The most threads measured.
    pub max_threads: u64,
    /// Where docs/s peaked, and whether it fell beyond.
    pub peak_threads: u64,
    /// The fewest threads reaching 90 % of the peak (the scaling answer's "from").
    pub knee_threads: u64,
    pub degrades: bool,
    /// The USL fit: its contention σ and the concurrency where it peaks.
    pub usl_sigma: Option<f64>,
    pub usl_peak: Option<f64>,
    /// Mean latency with the fewest threads measured, ms (R₀, for the knee).
    pub r0_ms: Option<f64>,
}

impl ScalingEvidence {
    /// Scaling stopped at or below this cell's threads: the cell is at or past the point
    /// where 90 % of the peak was reached and that point is not the most threads measured
    /// (the curve flattened), or the measured peak is here or before it and not the most
    /// measured (or docs/s fell beyond it), or the USL peaks here or before. Below that,
    /// more threads still help: the scaling answer says so too.
    pub fn stopped(&self) -> bool {
        (self.knee_threads <= self.threads && self.knee_threads < self.max_threads)
            || (self.peak_threads <= self.threads
                && (self.peak_threads < self.max_threads || self.degrades))
            || self.usl_peak.is_some_and(|p| p <= self.threads as f64)
    }
}

/// The verdict on one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `cpu_quota`, `server_cpu`, `client`, `host_cpu`, `disk`, `remote_host`,
    /// `serializing`, `latency` or `unknown`.
    pub kind: String,
    /// The saturated (or busiest) resource and its utilization, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
    pub text: String,
    /// The bound the demands imply, with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// N*: threads where the bound meets one thread's rate (needs a sweep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_threads: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub what_if: Vec<WhatIf>,
    /// Threads against docs/s × mean latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub little: Option<super::demands::Little>,
}

/// One change and what it would buy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// `two_nodes`, `twice_the_cores`, `client_on_its_own_host`, `quota_raised`.
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
}

fn yes() -> bool {
    true
}

fn pct(u: f64) -> String {
    format!("{:.0} %", u * 100.0)
}

fn is_cpu_quota(d: &Demand) -> bool {
    d.capacity_from.starts_with("cgroup")
}

/// The saturated resource, if any, and how to call it.
fn saturated(demands: &[Demand]) -> Option<(&Demand, &'static str)> {
    let ok = |d: &&Demand| d.error.is_none() && d.capacity > 0.0;
    let busiest = |f: &dyn Fn(&Demand) -> bool, near: f64| {
        demands
            .iter()
            .filter(ok)
            .filter(|d| f(d) && d.utilization >= near)
            .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
    };
    let proc_cpu = |role: Role| move |d: &Demand| d.kind == Kind::ProcessCpu && d.role == role;
    if let Some(d) = busiest(&|d| d.kind == Kind::ProcessCpu && is_cpu_quota(d), NEAR) {
        return Some((d, "cpu_quota"));
    }
    if let Some(d) = busiest(&proc_cpu(Role::Client), NEAR) {
        return Some((d, "client"));
    }
    if let Some(d) = busiest(&proc_cpu(Role::Server), NEAR) {
        return Some((d, "server_cpu"));
    }
    if let Some(d) = busiest(
        &|d| d.kind == Kind::HostCpu && d.role == Role::Host,
        HOST_NEAR,
    ) && (others_share(demands, d) < OTHERS || starved(demands))
    {
        return Some((d, "host_cpu"));
    }
    if let Some(d) = busiest(&|d| d.kind == Kind::Disk, NEAR) {
        return Some((d, "disk"));
    }
    if let Some(d) = busiest(
        &|d| d.kind == Kind::HostCpu && d.role == Role::RemoteHost,
        NEAR,
    ) {
        return Some((d, "remote_host"));
    }
    None
}

/// Above this share of a full host's cores outside the client and the servers, the host is
/// full of someone else's work (another tenant, a build): the verdict says so beside its
/// judgement of this benchmark's own resources, rather than naming the host.
pub const OTHERS: f64 = 0.5;

/// The share of this host's cores busy outside the client's and the servers' processes
/// (the kernel's softirq and irq, and every other process).
fn others_share(demands: &[Demand], host: &Demand) -> f64 {
    let share = |d: &Demand| d.utilization * d.capacity / host.capacity.max(1e-9);
    let ours: f64 = demands
        .iter()
        .filter(|d| d.kind == Kind::ProcessCpu && d.error.is_none())
        .map(share)
        .sum();
    (host.utilization - ours).max(0.0)
}

/// The client's and the servers' threads waited for a core (run delay) longer than they ran:
/// on a full host that is what limits them, whoever fills it.
fn starved(demands: &[Demand]) -> bool {
    let procs = || {
        demands
            .iter()
            .filter(|d| d.kind == Kind::ProcessCpu && d.error.is_none())
    };
    let ran: f64 = procs().map(|d| d.demand_ms).sum();
    let waited: f64 = procs().filter_map(|d| d.run_delay_ms).sum();
    ran > 0.0 && waited >= ran
}

/// A caveat when this host's CPU is full mostly of work outside the benchmark's processes.
fn shared_host_caveat(demands: &[Demand]) -> Option<String> {
    let host = demands
        .iter()
        .find(|d| d.kind == Kind::HostCpu && d.role == Role::Host && d.error.is_none())?;
    let others = others_share(demands, host);
    (host.utilization >= HOST_NEAR && others >= OTHERS).then(|| {
        let delay: f64 = demands
            .iter()
            .filter(|d| d.kind == Kind::ProcessCpu)
            .filter_map(|d| d.run_delay_ms)
            .sum();
        format!(
            " (caution: this host's CPU was {} busy, {} of its cores outside the client and the servers: a shared machine; they waited {delay:.2} ms per document for a core)",
            pct(host.utilization),
            pct(others)
        )
    })
}

/// Who shares this host's CPU: the client, the local servers, the kernel, anyone else.
fn host_breakdown(demands: &[Demand], host: &Demand) -> String {
    let share = |d: &Demand| d.utilization * d.capacity / host.capacity.max(1e-9);
    let client: f64 = demands
        .iter()
        .filter(|d| d.kind == Kind::ProcessCpu && d.role == Role::Client)
        .map(share)
        .sum();
    let servers: f64 = demands
        .iter()
        .filter(|d| d.kind == Kind::ProcessCpu && d.role == Role::Server)
        .map(share)
        .sum();
    let kernel = host.kernel_ms.map_or(0.0, |k| {
        if host.demand_ms > 0.0 {
            host.utilization * k / host.demand_ms
        } else {
            0.0
        }
    });
    let other = (host.utilization - client - servers).max(0.0);
    format!(
        "ingestbench {}, servers {}, kernel {} (of which not in those processes: {})",
        pct(client),
        pct(servers),
        pct(kernel),
        pct(other)
    )
}

/// What a saturated resource `d` (of `kind`, as [`saturated`] names it) says.
fn saturated_text(demands: &[Demand], d: &Demand, kind: &str) -> String {
    match kind {
        "cpu_quota" => format!(
            "the CPU quota of {}: {} of its {:.2} CPUs ({}), {:.2} ms of CPU per document",
            d.name,
            pct(d.utilization),
            d.capacity,
            d.capacity_from,
            d.demand_ms
        ),
        "client" => format!(
            "ingestbench itself ({} of its {:.0} cores): the numbers are the instrument's, not the repository's",
            pct(d.utilization),
            d.capacity
        ),
        "server_cpu" => format!(
            "the server's CPU: {} at {} of its {:.2} cores ({}), {:.2} ms of CPU per document",
            d.name,
            pct(d.utilization),
            d.capacity,
            d.capacity_from,
            d.demand_ms
        ),
        "host_cpu" if others_share(demands, d) >= OTHERS => format!(
            "this host's CPU, shared: {} of {:.0} cores busy, {} outside the client and the servers (another tenant: the numbers measure a shared machine); the client and the servers waited longer for a core than they ran",
            pct(d.utilization),
            d.capacity,
            pct(others_share(demands, d))
        ),
        "host_cpu" => format!(
            "this host's CPU as a whole: {} of {:.0} cores ({})",
            pct(d.utilization),
            d.capacity,
            host_breakdown(demands, d)
        ),
        "disk" => format!("{} at {} busy", d.name, pct(d.utilization)),
        _ => format!("{} at {} of its cores", d.name, pct(d.utilization)),
    }
}

/// The kind and text of a verdict where nothing was near its capacity (`idle` says the
/// busiest resource): serializing, latency-bound, or either, as the scaling evidence tells.
fn idle_verdict(
    scaling: Option<&ScalingEvidence>,
    idle: &str,
    knee: Option<f64>,
) -> (String, String) {
    match scaling {
        Some(s) if s.stopped() => {
            let sigma = s
                .usl_sigma
                .map_or(String::new(), |x| format!(", USL contention σ = {x:.2}"));
            let text = format!(
                "serialization inside the server: {idle}, yet docs/s stopped growing (90 % of its peak from {} threads, peak at {}){sigma}: a lock or a single writer; more threads will not help",
                s.knee_threads.min(s.peak_threads),
                s.peak_threads
            );
            ("serializing".into(), text)
        }
        Some(s) => {
            let k = knee.map_or(String::new(), |k| format!(", the knee N* ≈ {k:.0} threads"));
            let growing = if s.peak_threads > s.threads {
                format!("docs/s grows on to {} threads", s.peak_threads)
            } else {
                format!(
                    "docs/s still growing at {} threads, the most measured",
                    s.threads
                )
            };
            let text = format!("latency: {idle}, {growing}{k}: more threads help");
            ("latency".into(), text)
        }
        None => {
            let text =
                format!("{idle}: latency-bound or serializing (a sweep over threads tells which)");
            ("latency_or_serializing".into(), text)
        }
    }
}

/// The verdict on a cell from its demands and, for a sweep, the scaling evidence.
pub fn verdict(demands: &[Demand], scaling: Option<&ScalingEvidence>) -> Verdict {
    let b = bound(demands);
    let knee = match (&b, scaling.and_then(|s| s.r0_ms)) {
        (Some(b), Some(r0)) => super::demands::knee_threads(b.docs_per_sec, r0),
        _ => None,
    };
    let mut v = Verdict {
        kind: "unknown".into(),
        resource: None,
        utilization: None,
        text: String::new(),
        bound: b.clone(),
        knee_threads: knee.map(|k| (k * 10.0).round() / 10.0),
        what_if: what_ifs(demands),
        little: None,
    };
    let bound_text = b.as_ref().map_or(String::new(), |b| {
        format!(
            "; bound {:.0} docs/s ({:.0}–{:.0}) by {}",
            b.docs_per_sec, b.docs_per_sec_lo, b.docs_per_sec_hi, b.resource
        )
    });
    if let Some((d, kind)) = saturated(demands) {
        v.kind = kind.into();
        v.resource = Some(d.name.clone());
        v.utilization = Some(d.utilization);
        v.text = saturated_text(demands, d, kind) + &bound_text;
        if kind != "host_cpu"
            && let Some(c) = shared_host_caveat(demands)
        {
            v.text.push_str(&c);
        }
        return v;
    }
    let Some(busiest) = demands
        .iter()
        .filter(|d| d.capacity > 0.0 && d.error.is_none())
        .filter(|d| {
            !(d.kind == Kind::HostCpu && d.role == Role::Host && others_share(demands, d) >= OTHERS)
        })
        .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
    else {
        v.text = "not known: no resource could be read".into();
        return v;
    };
    v.resource = Some(busiest.name.clone());
    v.utilization = Some(busiest.utilization);
    let idle = format!(
        "nothing near its capacity (busiest: {} at {})",
        busiest.name,
        pct(busiest.utilization)
    );
    (v.kind, v.text) = idle_verdict(scaling, &idle, knee);
    v.what_if = idle_what_ifs(std::mem::take(&mut v.what_if), &v.kind, b.as_ref());
    v.text.push_str(&bound_text);
    if let Some(c) = shared_host_caveat(demands) {
        v.text.push_str(&c);
    }
    v
}

/// The what-ifs of a cell where nothing was near its capacity, said honestly. Serializing
/// (or one thread count that cannot tell it from latency): more cores, the client moved or a
/// quota raised relieve nothing, so no gain is expected and the bound stays the measured one;
/// a second node helps only if the serialization is per node (a per-node lock), not if it is
/// the shared store's single writer, which only a second node measured tells. Latency-bound:
/// the rescaled bound is a ceiling that more threads must reach first.
fn idle_what_ifs(rescaled: Vec<WhatIf>, kind: &str, now: Option<&Bound>) -> Vec<WhatIf> {
    let (cause, next) = match kind {
        "serializing" => (
            "serialization, not CPU, limits it: nothing was near its capacity and docs/s stopped growing",
            "serialization in the server",
        ),
        "latency_or_serializing" => (
            "nothing was near its capacity: latency or serialization limits it, not CPU (a sweep over threads tells which; if latency, more threads help)",
            "latency or serialization",
        ),
        "latency" => {
            return rescaled
                .into_iter()
                .map(|mut w| {
                    w.conclusive = false;
                    w.text.push_str(
                        " (a ceiling only: nothing was near its capacity at these threads, more threads come first)",
                    );
                    w
                })
                .collect();
        }
        _ => return rescaled,
    };
    rescaled
        .into_iter()
        .map(|w| {
            let text = match w.change.as_str() {
                "two_nodes" => format!(
                    "with two nodes: up to 2× only if the serialization is per node (a per-node lock or pool); no gain if it is the shared store's single writer: measure with a second node ({cause})"
                ),
                "twice_the_cores" => format!("with twice the cores: no gain expected ({cause})"),
                "client_on_its_own_host" => format!(
                    "with the client on its own host: no gain expected (the client was not the limit; {cause})"
                ),
                "quota_raised" => format!(
                    "with the CPU quota raised: no gain expected (no quota was near its limit; {cause})"
                ),
                _ => format!("{}: no gain expected ({cause})", w.change),
            };
            WhatIf {
                bound_to_docs_per_sec: w.bound_from_docs_per_sec,
                bound_to_lo: now.map_or(w.bound_from_docs_per_sec, |b| b.docs_per_sec_lo),
                bound_to_hi: now.map_or(w.bound_from_docs_per_sec, |b| b.docs_per_sec_hi),
                next_bottleneck: next.into(),
                conclusive: false,
                text,
                ..w
            }
        })
        .collect()
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

/// The changes that apply to these demands and what each would buy.
pub fn what_ifs(demands: &[Demand]) -> Vec<WhatIf> {
    let Some(now) = bound(demands) else {
        return Vec::new();
    };
    let local_server = |d: &Demand| d.kind == Kind::ProcessCpu && d.role == Role::Server;
    let client = |d: &Demand| d.kind == Kind::ProcessCpu && d.role == Role::Client;
    let host = |d: &Demand| d.kind == Kind::HostCpu && d.role == Role::Host;
    let sum = |f: &dyn Fn(&Demand) -> bool| -> f64 {
        demands.iter().filter(|d| f(d)).map(|d| d.demand_ms).sum()
    };
    let remote = |d: &Demand| d.kind == Kind::HostCpu && d.role == Role::RemoteHost;
    // The nodes: the busiest server and those configured like it (same kind and capacity);
    // a front end (a proxy's process) does not double with the nodes.
    let top = demands
        .iter()
        .filter(|d| local_server(d) || remote(d))
        .max_by(|a, b| a.load().total_cmp(&b.load()));
    let node = |d: &Demand| {
        top.is_some_and(|t| {
            (local_server(d) || remote(d))
                && d.kind == t.kind
                && d.capacity == t.capacity
                && d.capacity_from == t.capacity_from
        })
    };
    let servers_ms = sum(&local_server);
    let nodes_ms = sum(&|d| node(d) && local_server(d));
    let client_ms = sum(&client);
    let host_cores = demands.iter().find(|d| host(d)).map(|d| d.capacity);
    let mut out = Vec::new();
    let mut push = |change: &str, label: String, r: Option<(Bound, Vec<Demand>)>| {
        let Some((b, _)) = r else { return };
        out.push(WhatIf {
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
        });
    };
    if top.is_some() {
        // Each node takes half the documents: a node's demand per document halves (its
        // capacity doubles); this host keeps the client and one node's share; a front end,
        // a shared store's disk and the client do not scale.
        push(
            "two_nodes",
            "with two nodes (the second on its own machine, one shared store)".into(),
            rescaled(demands, |d| {
                if node(d) {
                    (d.capacity * 2.0, d.demand_ms)
                } else if host(d) {
                    (d.capacity, (d.demand_ms - nodes_ms / 2.0).max(0.0))
                } else {
                    (d.capacity, d.demand_ms)
                }
            }),
        );
    }
    push(
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
    );
    if servers_ms > 0.0 && client_ms > 0.0 {
        push(
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
        );
    }
    if let Some(q) = demands
        .iter()
        .filter(|d| d.kind == Kind::ProcessCpu && d.capacity_from.starts_with("cgroup"))
        .map(|d| d.capacity)
        .reduce(f64::max)
    {
        let to = q * 2.0;
        push(
            "quota_raised",
            format!("with the CPU quota raised from {q:.2} to {to:.2} CPUs"),
            rescaled(demands, |d| {
                if d.kind == Kind::ProcessCpu && d.capacity_from.starts_with("cgroup") {
                    (d.capacity.max(to), d.demand_ms)
                } else {
                    (d.capacity, d.demand_ms)
                }
            }),
        );
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn d(name: &str, kind: Kind, role: Role, ms: f64, cap: f64, from: &str, util: f64) -> Demand {
        Demand {
            name: name.into(),
            kind,
            role,
            capacity: cap,
            capacity_from: from.into(),
            demand_ms: ms,
            demand_ci95_ms: Some(ms * 0.05),
            utilization: util,
            bound_docs_per_sec: Some(cap * 1000.0 / ms),
            run_delay_ms: None,
            kernel_ms: None,
            read_bytes_per_doc: None,
            write_bytes_per_doc: None,
            error: None,
        }
    }

    /// The embedded target, the client or this host's CPU (by `role`) on a 2-core host, the
    /// demands most tests put together.
    pub(crate) fn local(role: Role, ms: f64, util: f64) -> Demand {
        let (name, kind) = match role {
            Role::Server => ("embedded target", Kind::ProcessCpu),
            Role::Client => ("ingestbench (client)", Kind::ProcessCpu),
            _ => ("this host's CPU", Kind::HostCpu),
        };
        d(name, kind, role, ms, 2.0, "host cores", util)
    }

    /// The Java lab's shape: node 1 under a 0.5-CPU quota at 100 %, 1.6 ms of CPU per
    /// document; the client and haproxy light; the host at 40 %.
    pub(crate) fn quota_lab() -> Vec<Demand> {
        vec![
            d(
                "java (pid 5)",
                Kind::ProcessCpu,
                Role::Server,
                1.6,
                0.5,
                "cgroup v1 cpu quota",
                0.98,
            ),
            local(Role::Client, 0.3, 0.05),
            local(Role::Host, 2.4, 0.4),
        ]
    }

    #[test]
    fn a_quota_at_its_limit_is_named_and_two_nodes_double_the_bound() {
        let v = verdict(&quota_lab(), None);
        assert_eq!(v.kind, "cpu_quota");
        assert!(
            v.text.contains("java (pid 5)") && v.text.contains("98 %"),
            "{}",
            v.text
        );
        let b = v.bound.unwrap();
        assert!((b.docs_per_sec - 312.5).abs() < 0.1);
        let two = v.what_if.iter().find(|w| w.change == "two_nodes").unwrap();
        assert!((two.bound_to_docs_per_sec - 625.0).abs() < 0.1, "{two:?}");
        assert!(two.bound_to_lo < 625.0 && two.bound_to_hi > 625.0);
        let q = v
            .what_if
            .iter()
            .find(|w| w.change == "quota_raised")
            .unwrap();
        assert!((q.bound_to_docs_per_sec - 625.0).abs() < 0.1);
        // The host's CPU does not scale with a quota: twice the cores buys nothing here.
        let c = v
            .what_if
            .iter()
            .find(|w| w.change == "twice_the_cores")
            .unwrap();
        assert!((c.bound_to_docs_per_sec - 312.5).abs() < 0.1, "{c:?}");
    }

    #[test]
    fn the_host_is_named_when_everyone_together_fills_it() {
        let v = verdict(
            &[
                local(Role::Server, 2.0, 0.5),
                local(Role::Client, 1.2, 0.3),
                local(Role::Host, 3.7, 0.93),
            ],
            None,
        );
        assert_eq!(v.kind, "host_cpu", "{}", v.text);
        assert!(v.text.contains("ingestbench 30 %"), "{}", v.text);
        let own = v
            .what_if
            .iter()
            .find(|w| w.change == "client_on_its_own_host")
            .unwrap();
        assert!(
            own.bound_to_docs_per_sec > own.bound_from_docs_per_sec,
            "{own:?}"
        );
    }

    #[test]
    fn idle_resources_tell_serializing_from_latency_by_the_sweep() {
        let idle = vec![local(Role::Server, 1.0, 0.3), local(Role::Host, 2.0, 0.6)];
        let mut s = ScalingEvidence {
            threads: 16,
            max_threads: 16,
            peak_threads: 6,
            knee_threads: 4,
            degrades: false,
            usl_sigma: Some(0.47),
            usl_peak: Some(6.2),
            r0_ms: Some(2.0),
        };
        let v = verdict(&idle, Some(&s));
        assert_eq!(v.kind, "serializing");
        assert!(v.text.contains("σ = 0.47") && !v.text.contains("more threads help"));
        // Below the knee, more threads still help there.
        s.threads = 2;
        s.usl_peak = Some(6.2);
        assert_eq!(verdict(&idle, Some(&s)).kind, "latency");
        s.threads = 16;
        s.peak_threads = 16;
        s.knee_threads = 16;
        s.usl_peak = None;
        let v = verdict(&idle, Some(&s));
        assert_eq!(v.kind, "latency");
        assert!(v.text.contains("more threads help"), "{}", v.text);
        // The USL peak inside the measured threads is a stop even if the last point is best.
        s.usl_peak = Some(12.0);
        assert_eq!(verdict(&idle, Some(&s)).kind, "serializing");
        // A curve that flattened (90 % of the peak from 4 threads) stopped too.
        s.usl_peak = None;
        s.knee_threads = 4;
        assert_eq!(verdict(&idle, Some(&s)).kind, "serializing");
        assert_eq!(verdict(&idle, None).kind, "latency_or_serializing");
        assert_eq!(verdict(&[], None).kind, "unknown");
    }

    #[test]
    fn a_serializing_cell_expects_no_gain_from_cores_and_a_second_node_only_if_per_node() {
        let idle = vec![
            local(Role::Server, 0.3, 0.3),
            local(Role::Client, 0.2, 0.2),
            local(Role::Host, 0.63, 0.6),
        ];
        let s = ScalingEvidence {
            threads: 8,
            max_threads: 16,
            peak_threads: 6,
            knee_threads: 4,
            degrades: true,
            usl_sigma: Some(0.47),
            usl_peak: Some(6.2),
            r0_ms: Some(1.0),
        };
        // Without the rule, the host-CPU bound would rise (3175 -> more) with two nodes.
        assert!(
            what_ifs(&idle)
                .iter()
                .any(|w| w.bound_to_docs_per_sec > w.bound_from_docs_per_sec * 1.1)
        );
        for v in [verdict(&idle, Some(&s)), verdict(&idle, None)] {
            assert!(
                v.kind == "serializing" || v.kind == "latency_or_serializing",
                "{}",
                v.kind
            );
            assert!(!v.what_if.is_empty());
            for w in &v.what_if {
                assert!(!w.conclusive, "{w:?}");
                assert_eq!(w.bound_to_docs_per_sec, w.bound_from_docs_per_sec, "{w:?}");
                assert!(!w.text.contains("the bound goes from"), "{}", w.text);
            }
            let text = |c: &str| {
                v.what_if
                    .iter()
                    .find(|w| w.change == c)
                    .map(|w| w.text.clone())
                    .unwrap()
            };
            assert!(
                text("twice_the_cores").contains("no gain expected"),
                "{}",
                text("twice_the_cores")
            );
            let two = text("two_nodes");
            assert!(
                two.contains("only if the serialization is per node")
                    && two.contains("single writer")
                    && two.contains("measure with a second node"),
                "{two}"
            );
            assert!(text("client_on_its_own_host").contains("no gain expected"));
        }
        // A latency-bound cell keeps its ceilings, marked as not a conclusion.
        let mut s2 = s;
        s2.threads = 2;
        let v = verdict(&idle, Some(&s2));
        assert_eq!(v.kind, "latency");
        assert!(v.what_if.iter().all(|w| !w.conclusive));
        assert!(v.what_if.iter().all(|w| w.text.contains("a ceiling only")));
        // A saturated quota's what-ifs stay conclusions.
        assert!(
            verdict(&quota_lab(), None)
                .what_if
                .iter()
                .all(|w| w.conclusive)
        );
    }

    #[test]
    fn a_host_full_of_someone_elses_work_is_a_caveat_not_the_verdict() {
        let v = verdict(
            &[
                local(Role::Server, 0.5, 0.1),
                local(Role::Client, 0.5, 0.1),
                local(Role::Host, 5.0, 1.0),
            ],
            None,
        );
        assert_eq!(v.kind, "latency_or_serializing", "{}", v.text);
        assert!(
            v.text.contains("a shared machine") && v.text.contains("80 %"),
            "{}",
            v.text
        );
    }

    #[test]
    fn a_starved_benchmark_on_a_full_host_is_limited_by_the_host() {
        let mut starved = vec![local(Role::Server, 0.5, 0.1), local(Role::Host, 5.0, 1.0)];
        // They waited for a core longer than they ran.
        starved[0].run_delay_ms = Some(2.0);
        let v = verdict(&starved, None);
        assert_eq!(v.kind, "host_cpu", "{}", v.text);
        assert!(v.text.contains("shared machine"), "{}", v.text);
    }

    #[test]
    fn a_saturated_client_is_the_instrument() {
        let v = verdict(
            &[local(Role::Client, 1.0, 0.95), local(Role::Host, 1.1, 0.97)],
            None,
        );
        assert_eq!(v.kind, "client");
        assert!(v.text.contains("instrument"));
    }
}
