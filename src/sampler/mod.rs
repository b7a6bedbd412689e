//! Reads what the servers, the client and the hosts spent: one [`Snapshot`] of every source
//! when a run's measured window opens ([`Sampler::open`]) and one when it closes
//! ([`Sampler::close`]), from which the window's resources (`metrics::resources`) and the
//! servers' usage (`metrics::servers`) are derived. The I/O lives here, the parsing and the
//! records in `metrics`: this host's `/proc` (`procfs`) and the remote hosts' node_exporter,
//! over one HTTP client per access method. Between uploads only, never per upload.

pub mod procfs;

use std::time::{Duration, Instant};

use crate::metrics::probe::Probe;
use crate::metrics::resources::{
    self, CpuCapacity, RemoteCounters, RunResources, Snapshot, Sources,
};
use crate::metrics::servers::{self, ServerUsage};

pub use procfs::{embedded_target_cpu_seconds, listener_pid, process_name};

/// What one measured window spent.
#[derive(Debug, Clone)]
pub struct Window {
    /// Every resource: the run record's `resources`.
    pub resources: RunResources,
    /// Each server, derived from `resources`: the run record's `servers`.
    pub servers: Vec<ServerUsage>,
}

/// Reads the sources of one access method: the client, its servers and this host, and the
/// remote hosts of its node_exporter probes.
#[derive(Debug)]
pub struct Sampler {
    sources: Sources,
    http: Option<reqwest::Client>,
}

impl Sampler {
    /// The client, this host and every probe of a method (a client to read the remote ones
    /// only when there are some).
    pub fn new(probes: Vec<Probe>) -> Sampler {
        let host_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let sources = Sources::of(probes, host_cores);
        let http = (!sources.remote.is_empty())
            .then(|| {
                crate::transport::reqwest_builder()
                    .timeout(Duration::from_secs(3))
                    .build()
                    .ok()
            })
            .flatten();
        Sampler { sources, http }
    }

    /// The reading when a window opens.
    pub async fn open(&self) -> Snapshot {
        self.read().await
    }

    /// The reading when the window that `opened` began closes: what it spent.
    pub async fn close(&self, opened: &Snapshot) -> Window {
        let closed = self.read().await;
        let caps: Vec<CpuCapacity> = self
            .sources
            .procs
            .iter()
            .map(|p| procfs::cpu_capacity_of(p, self.sources.host_cores))
            .collect();
        let resources = resources::between(&self.sources, &caps, opened, &closed);
        let servers = servers::usage(&self.sources, &resources, opened, &closed);
        Window { resources, servers }
    }

    /// Reads every source now.
    async fn read(&self) -> Snapshot {
        let at = Instant::now();
        let procs = self.sources.procs.iter().map(procfs::read_proc).collect();
        let (host, disks, net) = procfs::read_host();
        let mut remote = Vec::with_capacity(self.sources.remote.len());
        for u in &self.sources.remote {
            remote.push(self.scrape(u).await);
        }
        Snapshot {
            at,
            procs,
            host,
            disks,
            net,
            remote,
        }
    }

    /// A node_exporter's counters (an error says why not, for the result).
    async fn scrape(&self, url: &str) -> Result<RemoteCounters, String> {
        let http = self.http.as_ref().ok_or("no HTTP client")?;
        let r = http
            .get(url)
            .send()
            .await
            .map_err(|e| format!("unreachable: {}", crate::metrics::error_chain(&e)))?;
        if !r.status().is_success() {
            return Err(format!("answered HTTP {}", r.status().as_u16()));
        }
        let text = r.text().await.map_err(|e| format!("reading: {e}"))?;
        resources::parse_node_exporter(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::resources::{Kind, Role};

    #[tokio::test]
    async fn this_process_is_read_between_two_snapshots() {
        let me = std::process::id();
        let s = Sampler::new(vec![Probe::Process {
            name: "me".into(),
            pid: me,
        }]);
        let a = s.open().await;
        // Burn some CPU on this thread so the client and the pid both move.
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(60) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let w = s.close(&a).await;
        let r = &w.resources;
        let client = &r.resources[0];
        assert_eq!(client.role, Role::Client);
        assert!(client.busy_s > 0.0 && client.capacity > 0.0, "{client:?}");
        assert!(client.run_delay_s.is_some());
        let host = r
            .resources
            .iter()
            .find(|u| u.kind == Kind::HostCpu)
            .unwrap();
        assert!(host.error.is_none() && host.capacity >= 1.0, "{host:?}");
        // The server's usage is the same process's resource, with its memory and age.
        let server = &w.servers[0];
        assert_eq!(server.name, format!("me (pid {me})"));
        assert_eq!(server.source, "proc");
        let busy = r.resources[1].busy_s / r.window_s;
        assert!(
            (server.cpu_cores.unwrap() - busy).abs() < 1e-3,
            "{server:?}"
        );
        assert!(server.memory_bytes.unwrap() > 0);
        assert!(
            (0.0..3600.0).contains(&server.age_s.unwrap()),
            "this test process has run {:?} s",
            server.age_s
        );
        let bad = Sampler::new(vec![Probe::Process {
            name: "gone".into(),
            pid: u32::MAX,
        }]);
        let w = bad.close(&bad.open().await).await;
        assert!(w.resources.resources[1].error.is_some());
        assert!(w.servers[0].error.is_some() && w.servers[0].cpu_cores.is_none());
    }
}
