//! Resource demands of a cell: for every resource its busy time per stored document
//! (the utilization law, D = U / X = busy / documents), its utilization against its capacity,
//! the throughput bound it implies (X ≤ c / D), and which resource binds first (the
//! bottleneck: the largest demand per unit of capacity). A Little's-law check says whether
//! the threads spent their time inside the measured requests. This host's CPU spent by other
//! processes (its `other_busy_s`: a build, another tenant) is no document's: it is kept out
//! of the host's demand and utilization and carried apart (`other_cores`). Pure functions
//! over the runs' `metrics::resources` readings; no I/O.

use serde::{Deserialize, Serialize};

use crate::analysis::stats::{mean_var, relative_ci95};
use crate::metrics::resources::{Kind, Role, RunResources};

/// One run's share of the input: its stored documents and what the resources spent.
#[derive(Debug, Clone, Copy)]
pub struct RunInput<'a> {
    pub docs_ok: u64,
    pub resources: &'a RunResources,
}

/// One resource over a cell's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Demand {
    pub name: String,
    pub kind: Kind,
    pub role: Role,
    /// Capacity: cores (CPU), 1 (disk), 0 (unknown: network).
    pub capacity: f64,
    pub capacity_from: String,
    /// Busy milliseconds per stored document, mean over the runs.
    pub demand_ms: f64,
    /// Half-width of its 95 % interval over the runs, ms (2 runs or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demand_ci95_ms: Option<f64>,
    /// Busy share of the capacity over the windows, 0–1 (0 when the capacity is unknown).
    pub utilization: f64,
    /// The docs/s this resource allows at 100 % busy: capacity / demand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_docs_per_sec: Option<f64>,
    /// Milliseconds per document spent runnable but waiting for a core (processes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_ms: Option<f64>,
    /// Kernel CPU (system + irq + softirq) per document, ms (host CPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_ms: Option<f64>,
    /// This host's CPU: cores kept busy outside the path on average over the windows (other
    /// processes: a build, a backup, another tenant), kept out of `demand_ms` and
    /// `utilization`; absent in older results (whose demand includes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_cores: Option<f64>,
    /// The niced part of `other_cores` (work that yields the cores to the path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_niced_cores: Option<f64>,
    /// Bytes read / written (received / sent: network) per document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_doc: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_doc: Option<f64>,
    /// Runs it could not be read in, and why (the first reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Demand {
    /// Demand per unit of capacity (seconds of a whole resource per document).
    pub fn load(&self) -> f64 {
        if self.capacity > 0.0 {
            self.demand_ms / 1000.0 / self.capacity
        } else {
            0.0
        }
    }

    /// The relative half-width of the demand's interval (0 when unknown).
    pub fn rel_ci(&self) -> f64 {
        match self.demand_ci95_ms {
            Some(h) if self.demand_ms > 0.0 => h / self.demand_ms,
            _ => 0.0,
        }
    }
}

/// Threads against what Little's law says they were doing (N = X · R).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Little {
    pub threads: u64,
    /// docs/s × mean latency: threads busy inside measured requests on average.
    pub threads_in_requests: f64,
    /// Share of the threads' time spent outside the measured requests, %.
    pub outside_pct: f64,
    pub text: String,
}

/// A gap above this share of the threads' time is named.
pub const LITTLE_GAP: f64 = 0.15;

/// Little's law over a cell: `threads` workers without think time should be inside a
/// request nearly all the time.
pub fn little(threads: u64, docs_per_sec: f64, mean_latency_ms: f64) -> Option<Little> {
    if threads == 0 || docs_per_sec <= 0.0 || mean_latency_ms <= 0.0 {
        return None;
    }
    let n = docs_per_sec * mean_latency_ms / 1000.0;
    let outside = (1.0 - n / threads as f64).max(0.0);
    let text = if outside > LITTLE_GAP {
        format!(
            "{threads} threads but {n:.1} in requests on average (docs/s × mean latency): {:.0} % of the threads' time went outside the measured requests (the client's own work: reading and preparing documents, folders, its CPU starved)",
            outside * 100.0
        )
    } else {
        format!("{threads} threads, {n:.1} in requests on average: the requests are the time")
    };
    Some(Little {
        threads,
        threads_in_requests: (n * 100.0).round() / 100.0,
        outside_pct: (outside * 1000.0).round() / 10.0,
        text,
    })
}

/// Every resource's demand over a cell's runs, the bottleneck first (largest demand per
/// unit of capacity), then the rest by load; resources without a capacity last.
pub fn demands(runs: &[RunInput<'_>]) -> Vec<Demand> {
    struct Acc {
        d: Demand,
        ms: Vec<f64>,
        util: Vec<f64>,
        delay: Vec<f64>,
        kernel: Vec<f64>,
        other: Vec<f64>,
        niced: Vec<f64>,
        rd: Vec<f64>,
        wr: Vec<f64>,
    }
    let mut acc: Vec<Acc> = Vec::new();
    for r in runs {
        if r.docs_ok == 0 {
            continue;
        }
        let docs = r.docs_ok as f64;
        for u in &r.resources.resources {
            let i = match acc.iter().position(|a| a.d.name == u.name) {
                Some(i) => i,
                None => {
                    acc.push(Acc {
                        d: Demand {
                            name: u.name.clone(),
                            kind: u.kind,
                            role: u.role,
                            capacity: u.capacity,
                            capacity_from: u.capacity_from.clone(),
                            demand_ms: 0.0,
                            demand_ci95_ms: None,
                            utilization: 0.0,
                            bound_docs_per_sec: None,
                            run_delay_ms: None,
                            kernel_ms: None,
                            other_cores: None,
                            other_niced_cores: None,
                            read_bytes_per_doc: None,
                            write_bytes_per_doc: None,
                            error: None,
                        },
                        ms: Vec::new(),
                        util: Vec::new(),
                        delay: Vec::new(),
                        kernel: Vec::new(),
                        other: Vec::new(),
                        niced: Vec::new(),
                        rd: Vec::new(),
                        wr: Vec::new(),
                    });
                    acc.len() - 1
                }
            };
            let a = &mut acc[i];
            if let Some(e) = &u.error {
                if a.d.error.is_none() {
                    a.d.error = Some(e.clone());
                }
                continue;
            }
            // Another process's work on this host is not the documents': out of the demand
            // and the utilization, named apart.
            let window = r.resources.window_s.max(1e-3);
            let other = u.other_busy_s.unwrap_or(0.0).min(u.busy_s);
            let busy = u.busy_s - other;
            if let Some(o) = u.other_busy_s {
                a.other.push(o / window);
                a.niced.push(u.other_niced_s.unwrap_or(0.0).min(o) / window);
            }
            a.ms.push(busy * 1000.0 / docs);
            if u.capacity > 0.0 {
                a.util.push(busy / (window * u.capacity));
            }
            if let Some(v) = u.run_delay_s {
                a.delay.push(v * 1000.0 / docs);
            }
            if let Some(v) = u.kernel_s {
                a.kernel.push(v * 1000.0 / docs);
            }
            if let Some(v) = u.read_bytes {
                a.rd.push(v as f64 / docs);
            }
            if let Some(v) = u.write_bytes {
                a.wr.push(v as f64 / docs);
            }
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| mean_var(v).0);
    let mut out: Vec<Demand> = acc
        .into_iter()
        .filter(|a| !a.ms.is_empty() || a.d.error.is_some())
        .map(|a| {
            let mut d = a.d;
            d.demand_ms = r4(mean(&a.ms).unwrap_or(0.0));
            d.demand_ci95_ms = relative_ci95(&a.ms).map(|h| r4(h * d.demand_ms));
            d.utilization = r4(mean(&a.util).unwrap_or(0.0));
            d.bound_docs_per_sec = (d.capacity > 0.0 && d.demand_ms > 0.0)
                .then(|| r4(d.capacity * 1000.0 / d.demand_ms));
            d.run_delay_ms = mean(&a.delay).map(r4);
            d.kernel_ms = mean(&a.kernel).map(r4);
            d.other_cores = mean(&a.other).map(r4);
            d.other_niced_cores = mean(&a.niced).map(r4);
            d.read_bytes_per_doc = mean(&a.rd).map(r4);
            d.write_bytes_per_doc = mean(&a.wr).map(r4);
            d
        })
        .collect();
    out.sort_by(|a, b| b.load().total_cmp(&a.load()));
    out
}

fn r4(v: f64) -> f64 {
    (v * 1e4).round() / 1e4
}

/// The throughput bound of a set of demands: the least capacity / demand, with the
/// resource that sets it and its interval (from that demand's interval over the runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub resource: String,
    pub docs_per_sec: f64,
    pub docs_per_sec_lo: f64,
    pub docs_per_sec_hi: f64,
    /// The resource's utilization in the cell measured, 0–1.
    pub utilization: f64,
}

/// The bound the demands imply (`None` when no resource with a capacity was read).
pub fn bound(demands: &[Demand]) -> Option<Bound> {
    let d = demands
        .iter()
        .filter(|d| d.capacity > 0.0 && d.demand_ms > 0.0 && d.error.is_none())
        .max_by(|a, b| a.load().total_cmp(&b.load()))?;
    let x = d.capacity * 1000.0 / d.demand_ms;
    let h = d.rel_ci().min(0.99);
    Some(Bound {
        resource: d.name.clone(),
        docs_per_sec: r4(x),
        docs_per_sec_lo: r4(x / (1.0 + h)),
        docs_per_sec_hi: r4(x / (1.0 - h)),
        utilization: d.utilization,
    })
}

/// The knee N* where the bound meets the line of one thread's throughput (1 / R₀): the
/// thread count beyond which queueing, not latency, sets docs/s. `r0_ms` is the mean
/// latency with the fewest threads measured.
pub fn knee_threads(bound_docs_per_sec: f64, r0_ms: f64) -> Option<f64> {
    (bound_docs_per_sec > 0.0 && r0_ms > 0.0).then(|| bound_docs_per_sec * r0_ms / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::resources::ResourceUse;

    pub(crate) fn use_of(name: &str, kind: Kind, role: Role, busy: f64, cap: f64) -> ResourceUse {
        ResourceUse {
            name: name.into(),
            kind,
            role,
            busy_s: busy,
            capacity: cap,
            capacity_from: "host cores".into(),
            run_delay_s: Some(0.1),
            kernel_s: None,
            steal_s: None,
            irq_s: None,
            other_busy_s: None,
            other_niced_s: None,
            read_bytes: Some(1000),
            write_bytes: Some(2000),
            error: None,
        }
    }

    #[test]
    fn demand_is_busy_time_per_document_and_the_bound_is_capacity_over_it() {
        // 10 s windows, 1000 docs: the server spends 5 s of CPU under a 0.5-core quota
        // (100 % of it), the client 2 s of a 2-core host.
        let mk = |srv: f64| RunResources {
            window_s: 10.0,
            resources: vec![
                use_of(
                    "ingestbench (client)",
                    Kind::ProcessCpu,
                    Role::Client,
                    2.0,
                    2.0,
                ),
                use_of("node1 (pid 9)", Kind::ProcessCpu, Role::Server, srv, 0.5),
                use_of("net lo", Kind::Network, Role::Host, 0.0, 0.0),
            ],
        };
        let (a, b) = (mk(4.8), mk(5.2));
        let runs = [
            RunInput {
                docs_ok: 1000,
                resources: &a,
            },
            RunInput {
                docs_ok: 1000,
                resources: &b,
            },
        ];
        let d = demands(&runs);
        assert_eq!(d[0].name, "node1 (pid 9)");
        assert!((d[0].demand_ms - 5.0).abs() < 1e-9);
        assert!((d[0].utilization - 1.0).abs() < 1e-9);
        assert_eq!(d[0].bound_docs_per_sec, Some(100.0));
        assert!(d[0].demand_ci95_ms.unwrap() > 0.0);
        assert_eq!(d[1].name, "ingestbench (client)");
        assert_eq!(d[2].kind, Kind::Network);
        assert_eq!(d[0].write_bytes_per_doc, Some(2.0));
        let b = bound(&d).unwrap();
        assert_eq!(b.resource, "node1 (pid 9)");
        assert!(
            b.docs_per_sec_lo < 100.0 && b.docs_per_sec_hi > 100.0,
            "{b:?}"
        );
        assert_eq!(knee_threads(100.0, 20.0), Some(2.0));
    }

    #[test]
    fn another_process_on_the_host_is_kept_out_of_the_documents_demand() {
        // 10 s windows, 1000 docs, a 2-core host: the path spent 3 s of the host's CPU; a
        // nice-19 build 8 s more (0.8 cores), a normal-priority one 8 s, or nobody.
        let run = |other: Option<f64>, niced: f64| {
            let mut host = use_of("this host's CPU", Kind::HostCpu, Role::Host, 3.0, 2.0);
            host.busy_s += other.unwrap_or(0.0);
            host.other_busy_s = other;
            host.other_niced_s = other.map(|_| niced);
            RunResources {
                window_s: 10.0,
                resources: vec![host],
            }
        };
        let demand = |r: &RunResources| {
            demands(&[RunInput {
                docs_ok: 1000,
                resources: r,
            }])
            .remove(0)
        };
        for (r, niced) in [
            (run(Some(8.0), 8.0), 0.8),
            (run(Some(8.0), 0.0), 0.0),
            (run(Some(0.0), 0.0), 0.0),
        ] {
            let d = demand(&r);
            assert!((d.demand_ms - 3.0).abs() < 1e-9, "{d:?}");
            assert!((d.utilization - 0.15).abs() < 1e-9, "{d:?}");
            assert_eq!(d.bound_docs_per_sec, Some(666.6667));
            let other = r.resources[0].other_busy_s.unwrap() / 10.0;
            assert_eq!(d.other_cores, Some(other));
            assert_eq!(d.other_niced_cores, Some(niced));
        }
        // An older result (no other load recorded): everything busy is the documents'.
        let mut old = run(Some(8.0), 8.0);
        old.resources[0].other_busy_s = None;
        old.resources[0].other_niced_s = None;
        let d = demand(&old);
        assert!((d.demand_ms - 11.0).abs() < 1e-9, "{d:?}");
        assert_eq!(d.other_cores, None);
    }

    #[test]
    fn littles_law_names_a_gap() {
        let ok = little(8, 400.0, 19.5).unwrap();
        assert!(ok.outside_pct < 15.0, "{ok:?}");
        let gap = little(8, 200.0, 20.0).unwrap();
        assert_eq!(gap.outside_pct, 50.0);
        assert!(gap.text.contains("outside the measured requests"));
        assert!(little(0, 1.0, 1.0).is_none());
    }
}
