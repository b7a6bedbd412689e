//! Others on this host: how much of this host's CPU went to processes outside the path (a
//! build, a backup, another tenant; `metrics::resources` records it as the host's
//! `other_busy_s`, its niced part apart, and `analysis::demands` keeps it out of the
//! documents' demand), whether that work competed with the path for the cores (niced work
//! yields them), and the words a verdict says about it: "measured on a busy host: another
//! process used 0.8 cores during the runs (0.7 of it niced): kept out of the documents'
//! demands", or why the capacity left for the documents is not known. Results made before
//! the other load was recorded keep the older reading (the host's busy share less the
//! processes'). Pure functions over a cell's demands; the verdict itself is
//! `analysis::verdict`'s.

use super::demands::Demand;
use crate::metrics::resources::{Kind, Role};

/// A host's CPU as a whole (client + servers + kernel + anyone competing) saturates here.
pub const HOST_NEAR: f64 = 0.9;

/// Above this share of a full host's cores outside the client and the servers, the host is
/// full of someone else's work (another tenant, a build): the verdict says so beside its
/// judgement of this benchmark's own resources, rather than naming the host.
pub const OTHERS: f64 = 0.5;

/// Other load below this many cores is not named (the reading's own noise, a daemon).
pub const OTHER_NAMED: f64 = 0.1;

/// Other load at normal priority on at least this share of the host's cores shared them
/// with the path: how much of the host is left for the documents is not known, and a
/// what-if bound by this host's CPU says it cannot tell.
pub const OTHER_UNSURE: f64 = 0.25;

fn pct(u: f64) -> String {
    format!("{:.0} %", u * 100.0)
}

/// This host's CPU, when it was read.
pub fn this_host(demands: &[Demand]) -> Option<&Demand> {
    demands
        .iter()
        .find(|d| d.kind == Kind::HostCpu && d.role == Role::Host && d.error.is_none())
}

/// Cores other processes kept busy at normal priority (their niced part yields the cores to
/// the path when it wants them); `None` in older results.
pub fn competing_cores(host: &Demand) -> Option<f64> {
    host.other_cores
        .map(|o| (o - host.other_niced_cores.unwrap_or(0.0)).max(0.0))
}

/// The share of this host's cores busy with work that competes with the path: the path's
/// own (its utilization) and other processes at normal priority; in older results, all of
/// the host's busy time.
pub fn contended(host: &Demand) -> f64 {
    host.utilization + competing_cores(host).unwrap_or(0.0) / host.capacity.max(1e-9)
}

/// The share of this host's cores busy outside the client's and the servers' processes
/// that competes with them: other processes at normal priority where they were recorded;
/// in older results, the host's busy share less the processes' (the kernel's irq and
/// softirq and every other process).
pub fn others_share(demands: &[Demand], host: &Demand) -> f64 {
    if let Some(c) = competing_cores(host) {
        return c / host.capacity.max(1e-9);
    }
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
pub fn starved(demands: &[Demand]) -> bool {
    let procs = || {
        demands
            .iter()
            .filter(|d| d.kind == Kind::ProcessCpu && d.error.is_none())
    };
    let ran: f64 = procs().map(|d| d.demand_ms).sum();
    let waited: f64 = procs().filter_map(|d| d.run_delay_ms).sum();
    ran > 0.0 && waited >= ran
}

/// The run delay of the client and the servers, ms per document.
fn waited_ms(demands: &[Demand]) -> f64 {
    demands
        .iter()
        .filter(|d| d.kind == Kind::ProcessCpu)
        .filter_map(|d| d.run_delay_ms)
        .sum()
}

/// "another process used 0.8 cores during the runs (0.7 of it niced)" (`None` in older
/// results).
pub fn other_load_text(host: &Demand) -> Option<String> {
    let o = host.other_cores?;
    let n = host.other_niced_cores.unwrap_or(0.0);
    let how = if n >= 0.05 {
        format!("{n:.1} of it niced")
    } else {
        "at normal priority".into()
    };
    Some(format!(
        "another process used {o:.1} cores of this host's {:.0} during the runs ({how})",
        host.capacity
    ))
}

/// What a verdict adds when the numbers were taken on a busy host: the other load named and
/// kept out of the documents' demands (with the path's wait for a core when the other load
/// competed), or, in older results, a caution when the host was full mostly of work outside
/// the benchmark's processes. `None` on a quiet host.
pub fn note(demands: &[Demand]) -> Option<String> {
    let host = this_host(demands)?;
    if host.other_cores.is_some() {
        let o = host.other_cores.unwrap_or(0.0);
        if o < OTHER_NAMED {
            return None;
        }
        let wait = if competing_cores(host).unwrap_or(0.0) >= OTHER_NAMED {
            format!(
                "; the client and the servers waited {:.2} ms per document for a core",
                waited_ms(demands)
            )
        } else {
            String::new()
        };
        return Some(format!(
            " (measured on a busy host: {}: kept out of the documents' demands{wait})",
            other_load_text(host)?
        ));
    }
    let others = others_share(demands, host);
    (host.utilization >= HOST_NEAR && others >= OTHERS).then(|| {
        format!(
            " (caution: this host's CPU was {} busy, {} of its cores outside the client and the servers: a shared machine; they waited {:.2} ms per document for a core)",
            pct(host.utilization),
            pct(others),
            waited_ms(demands)
        )
    })
}

/// Why what a change would buy is not known here: other work at normal priority took at
/// least [`OTHER_UNSURE`] of this host's cores and shared them with the path (how much is
/// left for the documents is not known), or niced work did (it yields the cores, but the
/// processes' demands measured beside it are not a quiet host's: on the Java lab, a node's
/// two-node what-if beside a nice-19 loop on every core said 0.83–1.24× the quiet truth).
pub fn unsure(demands: &[Demand]) -> Option<String> {
    let host = this_host(demands)?;
    let c = competing_cores(host)?;
    if c >= OTHER_UNSURE * host.capacity {
        return Some(format!(
            "another process used {c:.1} cores of this host's {:.0} at normal priority during the runs, so how much of its CPU is left for the documents is not known; measure on a quiet host",
            host.capacity
        ));
    }
    let niced = host.other_niced_cores.unwrap_or(0.0);
    (niced >= OTHER_UNSURE * host.capacity).then(|| {
        format!(
            "another process used {niced:.1} cores of this host's {:.0} niced during the runs: it yields the cores, but the demands measured beside it are not a quiet host's; measure on a quiet host",
            host.capacity
        )
    })
}

/// Who shares this host's CPU: the client, the local servers, the kernel, anyone else.
pub fn breakdown(demands: &[Demand], host: &Demand) -> String {
    let share = |d: &Demand| d.utilization * d.capacity / host.capacity.max(1e-9);
    let of = |role: Role| -> f64 {
        demands
            .iter()
            .filter(|d| d.kind == Kind::ProcessCpu && d.role == role)
            .map(share)
            .sum()
    };
    let (client, servers) = (of(Role::Client), of(Role::Server));
    let kernel = host.kernel_ms.map_or(0.0, |k| {
        if host.demand_ms > 0.0 {
            host.utilization * k / host.demand_ms
        } else {
            0.0
        }
    });
    let rest = (host.utilization - client - servers).max(0.0);
    let others = match host.other_cores {
        Some(o) => format!(
            "; another process {} (kept out, {} of it niced)",
            pct(o / host.capacity.max(1e-9)),
            pct(host.other_niced_cores.unwrap_or(0.0) / host.capacity.max(1e-9))
        ),
        None => String::new(),
    };
    format!(
        "ingestbench {}, servers {}, kernel {} (of which not in those processes: {}){others}",
        pct(client),
        pct(servers),
        pct(kernel),
        pct(rest)
    )
}
