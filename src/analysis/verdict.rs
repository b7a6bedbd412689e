//! What limited a cell, and what would help: the verdict names the resource that saturates
//! (a CPU quota, a server process, the client, this host's CPU as a whole, a disk, a remote
//! host), or, when nothing is near its capacity, tells a server that is only slow per request
//! (latency-bound: the sweep's USL fit leaves real room ahead) from one that serializes (the
//! fit puts the cell near its ceiling: a lock, a single writer), from the fit and not from
//! the curve's last step; without a determined fit it says "latency or serializing". The
//! what-ifs rescale the measured demands where the resource scales (two nodes, twice the
//! cores, the client on its own host, a raised quota) and give the new bound and what limits
//! it then; on a host shared with other work (`busy_host`) the verdict says so, and a what-if
//! bound by this host's CPU whose capacity left is not known says it cannot tell. Pure
//! functions.

use serde::{Deserialize, Serialize};

use super::busy_host::{self, others_share, starved};
use super::demands::{Bound, Demand, bound};
use super::scaling::Usl;
use super::what_if;
pub use super::what_if::{WhatIf, what_ifs};
use crate::metrics::resources::{Kind, Role};

/// A process or disk busy this share of its capacity saturates it.
pub const NEAR: f64 = 0.85;
pub use super::busy_host::{HOST_NEAR, OTHERS};

/// What the sweep says about scaling (for the cell's method and size).
#[derive(Debug, Clone, PartialEq)]
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
    /// The USL fit over the sweep's thread counts when it is determined (4 thread counts or
    /// more, and the fit follows the points): where nothing saturated, the verdict is read
    /// from it, not from the curve's last step.
    pub usl: Option<Usl>,
    /// Why the fit is not determined (then such a cell is "latency or serializing").
    pub undetermined: Option<String>,
    /// Mean latency with the fewest threads measured, ms (R₀, for the knee).
    pub r0_ms: Option<f64>,
}

/// A cell whose fitted docs/s reach this share of the fit's ceiling has little to gain
/// from more threads: serializing.
pub const REACHED: f64 = 0.9;
/// The fit must allow at least this rise (at up to [`AHEAD`] times the most threads
/// measured) for a cell to be called latency-bound: real room ahead.
pub const ROOM: f64 = 0.25;
/// How far ahead the fit is asked: this many times the most threads measured.
pub const AHEAD: f64 = 4.0;

/// What the USL fit says of one cell: how near the fit's ceiling it is, and how much more
/// docs/s more threads could buy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitReading {
    /// The fit's docs/s at the cell's threads over its ceiling, 0–1; `None` when the fit
    /// has none (σ = κ = 0: linear).
    pub reached: Option<f64>,
    /// The fit's ceiling: its peak X(N*) when κ > 0, else its asymptote λ/σ.
    pub ceiling_docs_per_sec: Option<f64>,
    /// The best rise the fit allows from the cell's threads up to `ahead_threads` (its peak
    /// when that comes first), over the fit at the cell: 0.6 = +60 %.
    pub room: f64,
    pub ahead_threads: f64,
}

/// Reads `u` at `threads` of a sweep that measured up to `max_threads`.
pub fn fit_reading(u: &Usl, threads: u64, max_threads: u64) -> FitReading {
    let n = threads.max(1) as f64;
    let here = u.predict(n).max(1e-12);
    let peak_n = (u.kappa > 0.0 && u.sigma < 1.0).then(|| ((1.0 - u.sigma) / u.kappa).sqrt());
    let ceiling = match peak_n {
        Some(p) => Some(u.predict(p.max(1.0))),
        None if u.sigma > 0.0 => Some(u.lambda / u.sigma),
        None => None,
    };
    let far = AHEAD * max_threads.max(threads).max(1) as f64;
    let ahead = match peak_n {
        Some(p) if p < far => p.max(n),
        _ => far,
    };
    FitReading {
        reached: ceiling.map(|c| (here / c.max(1e-12)).min(1.0)),
        ceiling_docs_per_sec: ceiling,
        room: (u.predict(ahead) / here - 1.0).max(0.0),
        ahead_threads: ahead,
    }
}

impl FitReading {
    /// More threads can add little: the cell is near the fit's ceiling, or the fit allows
    /// less than [`ROOM`] more.
    pub fn little_ahead(&self) -> bool {
        self.reached.is_some_and(|r| r >= REACHED) || self.room < ROOM
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
    // This host's CPU as the path met it: its own work and other work at normal priority
    // (niced work yields the cores).
    if let Some(d) = busy_host::this_host(demands)
        .filter(|d| d.capacity > 0.0 && busy_host::contended(d) >= HOST_NEAR)
        && (others_share(demands, d) < OTHERS || starved(demands))
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
            "this host's CPU, shared: {} of {:.0} cores busy, {} outside the client and the servers (another tenant: the numbers measure a shared machine{}); the client and the servers waited longer for a core than they ran",
            pct(busy_host::contended(d)),
            d.capacity,
            pct(others_share(demands, d)),
            busy_host::other_load_text(d).map_or(String::new(), |t| format!(": {t}"))
        ),
        "host_cpu" => format!(
            "this host's CPU as a whole: {} of {:.0} cores ({})",
            pct(busy_host::contended(d)),
            d.capacity,
            busy_host::breakdown(demands, d)
        ),
        "disk" => format!("{} at {} busy", d.name, pct(d.utilization)),
        _ => format!("{} at {} of its cores", d.name, pct(d.utilization)),
    }
}

/// The kind and text of a verdict where nothing was near its capacity (`idle` says the
/// busiest resource): serializing, latency-bound, or either, as the sweep's USL fit tells.
/// The fit decides, not the curve's last step: a curve still creeping up at the most threads
/// measured is serializing when the fit puts it near its ceiling, latency-bound only when
/// the fit leaves real room ahead; without a determined fit it cannot tell.
fn idle_verdict(
    scaling: Option<&ScalingEvidence>,
    idle: &str,
    knee: Option<f64>,
) -> (String, String) {
    let Some(s) = scaling else {
        let text =
            format!("{idle}: latency-bound or serializing (a sweep over threads tells which)");
        return ("latency_or_serializing".into(), text);
    };
    let Some(u) = s.usl.as_ref() else {
        let why = s.undetermined.as_deref().unwrap_or("no fit");
        let text = format!(
            "{idle}: latency-bound or serializing (the sweep's USL fit is not determined: {why}; more runs per thread count, or more thread counts, tell which)"
        );
        return ("latency_or_serializing".into(), text);
    };
    let f = fit_reading(u, s.threads, s.max_threads);
    let fit = format!(
        "USL σ = {:.2}, κ = {:.4}, R² {:.2}",
        u.sigma, u.kappa, u.r_squared
    );
    let fell = s.degrades && s.peak_threads <= s.threads;
    if f.little_ahead() || fell {
        let near = match (f.reached, f.ceiling_docs_per_sec) {
            (Some(r), Some(c)) => format!(
                "the fit puts {} threads at {} of its ceiling of {c:.0} docs/s",
                s.threads,
                pct(r)
            ),
            _ => format!("at {} threads", s.threads),
        };
        let fall = if fell {
            format!("; docs/s fell beyond {} threads", s.peak_threads)
        } else {
            String::new()
        };
        let text = format!(
            "serialization inside the server: {idle}, yet more threads add little ({near}, at most +{:.0} % up to {:.0} threads{fall}; {fit}): a lock or a single writer; more threads will not help",
            f.room * 100.0,
            f.ahead_threads
        );
        return ("serializing".into(), text);
    }
    let k = knee.map_or(String::new(), |k| format!(", the knee N* ≈ {k:.0} threads"));
    let text = format!(
        "latency: {idle}; the fit allows up to +{:.0} % at {:.0} threads ({fit}){k}: more threads help",
        f.room * 100.0,
        f.ahead_threads
    );
    ("latency".into(), text)
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
        let shared = kind == "host_cpu" && others_share(demands, d) >= OTHERS;
        if !shared && let Some(c) = busy_host::note(demands) {
            v.text.push_str(&c);
        }
        v.what_if = cannot_tell(std::mem::take(&mut v.what_if), demands, b.as_ref());
        return v;
    }
    let Some(busiest) = demands
        .iter()
        .filter(|d| d.capacity > 0.0 && d.error.is_none())
        .filter(|d| {
            !(d.kind == Kind::HostCpu
                && d.role == Role::Host
                && d.other_cores.is_none()
                && others_share(demands, d) >= OTHERS)
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
    if let Some(c) = busy_host::note(demands) {
        v.text.push_str(&c);
    }
    v.what_if = cannot_tell(std::mem::take(&mut v.what_if), demands, b.as_ref());
    v
}

/// On a host shared with other work at normal priority (`busy_host::unsure`), the what-ifs
/// say they cannot tell rather than give a number. Those this host's CPU bounds, before or
/// after the change: the capacity left for the documents is not known. The others too: the
/// processes' demands measured beside that work are not a quiet host's (on the Java lab, a
/// node at its quota beside one busy loop at normal priority spent less CPU per document,
/// and its two-node what-if said 1.26× the quiet truth). A serialization's "no gain
/// expected" stays.
fn cannot_tell(what_ifs: Vec<WhatIf>, demands: &[Demand], now: Option<&Bound>) -> Vec<WhatIf> {
    let (Some(why), Some(host)) = (busy_host::unsure(demands), busy_host::this_host(demands))
    else {
        return what_ifs;
    };
    let by_host = now.is_some_and(|b| b.resource == host.name);
    what_ifs
        .into_iter()
        .map(|w| {
            let moved = w.bound_to_docs_per_sec != w.bound_from_docs_per_sec;
            let host_bound = w.next_bottleneck == host.name || (by_host && moved);
            if !host_bound && !w.conclusive {
                return w;
            }
            let label = w.text.split(':').next().unwrap_or(&w.change).to_string();
            let why = if host_bound {
                why.clone()
            } else {
                format!(
                    "{why}; the demands measured beside it are not a quiet host's either (a process kept from its cores spends differently per document)"
                )
            };
            WhatIf {
                bound_to_docs_per_sec: w.bound_from_docs_per_sec,
                bound_to_lo: w.bound_from_docs_per_sec,
                bound_to_hi: w.bound_from_docs_per_sec,
                next_bottleneck: if host_bound {
                    "not known (this host's CPU, shared)".into()
                } else {
                    "not known (measured beside other work)".into()
                },
                text: format!("{label}: cannot tell: {why}"),
                conclusive: false,
                same_host: None,
                ..w
            }
        })
        .collect()
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
                c if what_if::adds_nodes(c) => format!(
                    "{}: more only if the serialization is per node (a per-node lock or pool); no gain if it is the shared store's single writer: measure with more nodes ({cause})",
                    what_if::change_words(c)
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
                same_host: None,
                text,
                ..w
            }
        })
        .collect()
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
            other_cores: None,
            other_niced_cores: None,
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
            d(
                "apache2 (pid 7)",
                Kind::ProcessCpu,
                Role::Server,
                0.2,
                2.0,
                "host cores",
                0.03,
            ),
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

    /// The evidence a sweep of `points` (threads, docs/s) gives about its cell at `threads`,
    /// with the fit as `summary` makes it.
    fn evidence(points: &[(u64, f64)], threads: u64) -> ScalingEvidence {
        let sc = crate::analysis::scaling::scaling(points).unwrap();
        ScalingEvidence {
            threads,
            max_threads: points.iter().map(|p| p.0).max().unwrap(),
            peak_threads: sc.peak_threads,
            knee_threads: sc.knee_threads,
            degrades: sc.degrades_after_threads.is_some(),
            usl: crate::analysis::scaling::fit_usl(points),
            undetermined: None,
            r0_ms: Some(2.0),
        }
    }

    /// X(N) = λN / (1 + σ(N−1) + κN(N−1)) at 1–16 threads, each point off by `noise[i]`.
    fn curve(lambda: f64, sigma: f64, kappa: f64, noise: [f64; 5]) -> Vec<(u64, f64)> {
        [1u64, 2, 4, 8, 16]
            .iter()
            .zip(noise)
            .map(|(&n, e)| {
                let x = n as f64;
                (
                    n,
                    lambda * x / (1.0 + sigma * (x - 1.0) + kappa * x * (x - 1.0)) * (1.0 + e),
                )
            })
            .collect()
    }

    #[test]
    fn idle_resources_tell_serializing_from_latency_by_the_fit() {
        let idle = vec![local(Role::Server, 1.0, 0.3), local(Role::Host, 2.0, 0.6)];
        // USL σ 0.4 (the embedded target's `--contention 0.4`): 16 threads reach 91 % of the
        // asymptote. The last step still grows and 8 threads miss 90 % of the peak (the
        // curve's own answer said "latency: still growing at 16 threads"): the fit says
        // serializing.
        let sigma = curve(500.0, 0.4, 0.0, [0.0, 0.02, -0.02, -0.04, 0.03]);
        let sc = crate::analysis::scaling::scaling(&sigma).unwrap();
        assert_eq!((sc.peak_threads, sc.knee_threads), (16, 16), "{sigma:?}");
        let v = verdict(&idle, Some(&evidence(&sigma, 16)));
        assert_eq!(v.kind, "serializing", "{}", v.text);
        assert!(
            v.text.contains("of its ceiling") && !v.text.contains("more threads help"),
            "{}",
            v.text
        );
        // At one thread, the same fit leaves real room: latency, and how much is said.
        let v = verdict(&idle, Some(&evidence(&sigma, 1)));
        assert_eq!(v.kind, "latency", "{}", v.text);
        assert!(v.text.contains("the fit allows up to +"), "{}", v.text);
        // σ 0.1 with κ 0.01: the fit peaks near 9.5 threads, before the most measured.
        let kappa = curve(500.0, 0.1, 0.01, [0.01, -0.01, 0.02, -0.02, 0.01]);
        for t in [8, 16] {
            let v = verdict(&idle, Some(&evidence(&kappa, t)));
            assert_eq!(v.kind, "serializing", "{t}: {}", v.text);
        }
        // Latency-bound: 40 ms per request, many slots: 25 docs/s per thread, linear.
        let slow = curve(25.0, 0.0, 0.0, [0.02, -0.02, 0.01, -0.01, 0.0]);
        let v = verdict(&idle, Some(&evidence(&slow, 16)));
        assert_eq!(v.kind, "latency", "{}", v.text);
        assert!(
            v.text.contains("at 64 threads") && v.text.contains("more threads help"),
            "{}",
            v.text
        );
        let f = fit_reading(evidence(&slow, 16).usl.as_ref().unwrap(), 16, 16);
        assert!(f.room > 2.0 && !f.little_ahead(), "{f:?}");
        // The fit not determined: it cannot tell, and says why.
        let mut e = evidence(&sigma, 16);
        e.usl = None;
        e.undetermined = Some("only 3 thread counts".into());
        let v = verdict(&idle, Some(&e));
        assert_eq!(v.kind, "latency_or_serializing", "{}", v.text);
        assert!(v.text.contains("only 3 thread counts"), "{}", v.text);
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
            usl: Some(Usl {
                lambda: 100.0,
                sigma: 0.47,
                kappa: 0.0,
                r_squared: 0.98,
                peak_concurrency: None,
                peak_docs_per_sec: None,
            }),
            undetermined: None,
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

    /// The Java lab's shape on a host where another process used 1.2 cores: `niced` of them
    /// at nice 19. This host's CPU (the path's share: 4.8 ms per document, 40 %) binds after
    /// a second node (500 docs/s against the nodes' 625).
    fn lab_beside(niced: f64) -> Vec<Demand> {
        let mut d = quota_lab();
        d[2].demand_ms = 4.8;
        d[2].other_cores = Some(1.2);
        d[2].other_niced_cores = Some(niced);
        d
    }

    #[test]
    fn another_process_on_the_host_is_named_and_a_what_if_it_clouds_cannot_tell() {
        // A nice-19 build on most of the host: named, kept out, and the what-ifs cannot
        // tell (the demands measured beside it are not a quiet host's); on a quarter of a
        // core they keep their numbers (niced work yields the cores).
        let v = verdict(&lab_beside(1.1), None);
        assert!(
            v.what_if
                .iter()
                .all(|w| !w.conclusive && w.text.contains("niced during the runs")),
            "{:?}",
            v.what_if
        );
        assert_eq!(v.kind, "cpu_quota", "{}", v.text);
        assert!(
            v.text
                .contains("measured on a busy host: another process used 1.2 cores")
                && v.text.contains("(1.1 of it niced)")
                && v.text.contains("kept out of the documents' demands"),
            "{}",
            v.text
        );
        let mut light = lab_beside(0.3);
        light[2].other_cores = Some(0.3);
        let light = verdict(&light, None);
        let two = light
            .what_if
            .iter()
            .find(|w| w.change == "two_nodes")
            .unwrap();
        assert!(two.conclusive, "{two:?}");
        assert!((two.bound_to_docs_per_sec - 500.0).abs() < 0.1, "{two:?}");
        assert_eq!(two.next_bottleneck, "this host's CPU");
        // The same at normal priority: how much of the host is left is not known, so the
        // what-ifs this host's CPU bounds after the change cannot tell.
        let v = verdict(&lab_beside(0.0), None);
        assert_eq!(v.kind, "cpu_quota", "{}", v.text);
        assert!(v.text.contains("(at normal priority)"), "{}", v.text);
        let two = v.what_if.iter().find(|w| w.change == "two_nodes").unwrap();
        assert!(
            !two.conclusive
                && two.text.starts_with("with two nodes")
                && two.text.contains("cannot tell")
                && !two.text.contains("500"),
            "{two:?}"
        );
        assert_eq!(two.bound_to_docs_per_sec, two.bound_from_docs_per_sec);
        assert!(v.what_if.iter().all(|w| !w.conclusive), "{:?}", v.what_if);
        // A large host the others share at normal priority, where the nodes stay the limit
        // after the change: the what-if cannot tell either, as the demands measured beside
        // that work are not a quiet host's (on the Java lab a node's what-if said 1.26× the
        // quiet truth).
        let mut big = lab_beside(0.0);
        (big[2].capacity, big[2].other_cores) = (16.0, Some(5.0));
        let v = verdict(&big, None);
        let two = v.what_if.iter().find(|w| w.change == "two_nodes").unwrap();
        assert!(
            !two.conclusive
                && two.text.contains("cannot tell")
                && two.text.contains("not a quiet host's either"),
            "{two:?}"
        );
        assert!(v.what_if.iter().all(|w| !w.conclusive), "{:?}", v.what_if);
        // A quiet host: no note.
        let mut quiet = lab_beside(0.0);
        quiet[2].other_cores = Some(0.02);
        let v = verdict(&quiet, None);
        assert!(!v.text.contains("busy host"), "{}", v.text);
        assert!(v.what_if.iter().all(|w| w.conclusive));
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
