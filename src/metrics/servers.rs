//! The servers' side of a run: CPU and memory of what serves the uploads over the run's
//! measured window, so each docs/sec sits beside the CPU the servers spent on it. Derived
//! from the window's resources (`resources::RunResources`, whose two snapshots the
//! `sampler` takes) and nothing read apart: the embedded target's threads, local processes
//! by pid with their descendants (a loopback URL's listener is found on its own), and remote
//! machines through Prometheus node_exporter. A source that could not be read is named in
//! the result with why, never fatal.

use serde::{Deserialize, Serialize};

pub use super::probe::{Probe, TARGET_THREAD};
use super::resources::{Reading, Role, RunResources, Snapshot, Sources};

/// One server's use during one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerUsage {
    pub name: String,
    /// `proc` or `node_exporter`.
    pub source: String,
    /// Cores kept busy on average over the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<f64>,
    /// Busy share of the machine's cores (node_exporter) or of this host's (proc), 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_share: Option<f64>,
    /// Resident memory (proc) or memory in use (MemTotal − MemAvailable) at the run's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// A local process (proc): how long it had run when the run started, s. A server just
    /// started may still change its pace after a pilot (`analysis::pilot::young_server`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_s: Option<f64>,
    /// A local process: the CPU seconds it (with its descendants) had used when the run
    /// started. A JIT compiles by work done, not by the clock: under a CPU quota a server
    /// minutes old can still be cold (`analysis::pilot::young_server`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_used_s: Option<f64>,
    /// Why nothing could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Each probe's server over the window `r` measured between the snapshots `a` and `b` of
/// `src`: its CPU from the resource of the same name (the probe's process, or its remote
/// host's CPU), as a share of this host's cores or of the remote host's CPU time between
/// the scrapes; its memory from `b`, a process's age from `a`.
pub fn usage(src: &Sources, r: &RunResources, a: &Snapshot, b: &Snapshot) -> Vec<ServerUsage> {
    src.probes
        .iter()
        .map(|p| {
            let (source, resource, role) = match p {
                Probe::NodeExporter { url } => {
                    ("node_exporter", format!("{url} CPU"), Role::RemoteHost)
                }
                _ => ("proc", p.name(), Role::Server),
            };
            let mut u = ServerUsage {
                name: p.name(),
                source: source.into(),
                cpu_cores: None,
                cpu_share: None,
                memory_bytes: None,
                age_s: None,
                cpu_used_s: None,
                error: None,
            };
            let Some(cpu) = r
                .resources
                .iter()
                .find(|x| x.role == role && x.name == resource)
            else {
                u.error = Some("not read".into());
                return u;
            };
            if let Some(e) = &cpu.error {
                u.error = Some(e.clone());
                return u;
            }
            let cores = cpu.busy_s / r.window_s.max(1e-3);
            u.cpu_cores = Some(round3(cores));
            match src.reading_of(p) {
                Some(Reading::Proc(i)) => {
                    u.cpu_share = Some(round3(cores / src.host_cores));
                    u.memory_bytes = b.procs[i].as_ref().ok().and_then(|c| c.rss_bytes);
                    let at_start = a.procs[i].as_ref().ok();
                    u.age_s = at_start.and_then(|c| c.age_s).map(f64::round);
                    u.cpu_used_s = at_start
                        .filter(|c| c.age_s.is_some())
                        .map(|c| (c.cpu_s * 10.0).round() / 10.0);
                }
                Some(Reading::Remote(i)) => {
                    let (Ok(x), Ok(y)) = (&a.remote[i], &b.remote[i]) else {
                        return u;
                    };
                    // Of the host's own CPU time between the scrapes (its clock, not ours),
                    // else of its cores over our window.
                    let total = y.cpu_total_s - x.cpu_total_s;
                    u.cpu_share = Some(round3(if total > 0.0 {
                        cpu.busy_s / total
                    } else {
                        cores / cpu.capacity.max(1.0)
                    }));
                    u.memory_bytes = y.memory_used_bytes();
                }
                None => {}
            }
            u
        })
        .collect()
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::super::resources::{CpuCapacity, TaskCounters, between, parse_node_exporter};
    use super::*;
    use std::time::{Duration, Instant};

    const SAMPLE: &str = "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 100
node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 30
node_cpu_seconds_total{cpu=\"0\",mode=\"system\"} 10
node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} 120
node_cpu_seconds_total{cpu=\"1\",mode=\"iowait\"} 5
node_cpu_seconds_total{cpu=\"1\",mode=\"user\"} 15
# TYPE node_memory_MemTotal_bytes gauge
node_memory_MemTotal_bytes 8.0e+09
node_memory_MemAvailable_bytes 6e9
";

    fn snapshot(at: Instant, procs: Vec<Result<TaskCounters, String>>) -> Snapshot {
        Snapshot {
            at,
            procs,
            host: Err("not read here".into()),
            disks: Default::default(),
            net: Default::default(),
            remote: Vec::new(),
        }
    }

    #[test]
    fn the_servers_come_from_the_windows_resources() {
        let r = parse_node_exporter(SAMPLE).unwrap();
        assert_eq!(r.cpu.busy_s, 55.0);
        assert_eq!(r.cpu.cores, 2.0);
        assert_eq!(r.cpu_total_s, 280.0);
        assert_eq!(r.memory_used_bytes(), Some(2_000_000_000));
        let probes = vec![
            Probe::NodeExporter { url: "u".into() },
            Probe::Process {
                name: "java".into(),
                pid: 7,
            },
            Probe::NodeExporter { url: "gone".into() },
        ];
        let src = Sources::of(probes, 4.0);
        let t0 = Instant::now();
        let proc_at = |cpu_s: f64, age_s: f64| TaskCounters {
            cpu_s,
            rss_bytes: Some(3 << 20),
            age_s: Some(age_s),
            ..TaskCounters::default()
        };
        let mut a = snapshot(t0, vec![Ok(proc_at(0.0, 0.0)), Ok(proc_at(1.0, 41.6))]);
        let mut b = snapshot(
            t0 + Duration::from_secs(10),
            vec![Ok(proc_at(5.0, 0.0)), Ok(proc_at(21.0, 51.6))],
        );
        let mut later = r.clone();
        later.cpu.busy_s += 10.0;
        // Its own clock saw 20 CPU seconds pass: half its two cores busy.
        later.cpu_total_s = 300.0;
        a.remote = vec![Ok(r), Err("unreachable: refused".into())];
        b.remote = vec![Ok(later), Err("unreachable: refused".into())];
        let cap = CpuCapacity {
            cores: 4.0,
            from: "host cores".into(),
        };
        let res = between(&src, &[cap.clone(), cap], &a, &b);
        let u = usage(&src, &res, &a, &b);
        assert_eq!(u.len(), 3);
        assert_eq!(
            (u[0].name.as_str(), u[0].source.as_str()),
            ("u", "node_exporter")
        );
        assert_eq!(u[0].cpu_cores, Some(1.0));
        assert_eq!(u[0].cpu_share, Some(0.5));
        assert_eq!(u[0].memory_bytes, Some(2_000_000_000));
        assert_eq!(u[1].name, "java (pid 7)");
        assert_eq!(u[1].cpu_cores, Some(2.0));
        assert_eq!(u[1].cpu_share, Some(0.5));
        assert_eq!(u[1].memory_bytes, Some(3 << 20));
        assert_eq!(u[1].age_s, Some(42.0));
        assert_eq!(u[1].cpu_used_s, Some(1.0));
        assert_eq!(u[2].error.as_deref(), Some("unreachable: refused"));
        assert_eq!(u[2].cpu_share, None);
        assert!(parse_node_exporter("up 1\n").is_err());
    }
}
