//! The servers' side of a run: CPU and memory of what serves the uploads, read at the start
//! and the end of every run, so each docs/sec sits beside the CPU the servers spent on it.
//! Three sources: the embedded target's own threads in this process (`/proc/self/task`),
//! local processes by pid with their descendants (`/proc/<pid>`; a loopback URL's listener is
//! found on its own), and remote machines through Prometheus node_exporter (its text
//! exposition format, read by `exposition`). A source that cannot be read is named
//! in the result with why, never fatal. Between runs only, never per upload.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use super::probe::{Probe, TARGET_THREAD};
use super::probe::{process_tree, stat_fields};

/// Clock ticks per second of `/proc` CPU times (USER_HZ, 100 on Linux).
const TICKS: f64 = 100.0;

/// What a probe read at one moment.
#[derive(Debug, Clone, Default)]
struct Reading {
    /// CPU seconds busy (summed over cores) so far.
    busy_s: f64,
    /// All CPU seconds (busy + idle, node_exporter) so far.
    total_s: Option<f64>,
    cores: Option<f64>,
    memory_bytes: Option<u64>,
    memory_total_bytes: Option<u64>,
    /// A local process: how long it had run (s).
    age_s: Option<f64>,
}

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
    /// Why nothing could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The probes of a run or sweep and a client to read the remote ones.
pub struct Servers {
    probes: Vec<Probe>,
    http: Option<reqwest::Client>,
    host_cores: f64,
    /// The same servers, the client and this host, read at the measured window's edges.
    resources: std::sync::Arc<super::resources::Sampler>,
}

/// The readings at a run's start.
pub struct Started {
    at: Instant,
    readings: Vec<Result<Reading, String>>,
}

impl Servers {
    pub fn new(probes: Vec<Probe>) -> Servers {
        let http = probes
            .iter()
            .any(|p| matches!(p, Probe::NodeExporter { .. }))
            .then(|| {
                crate::transport::reqwest_builder()
                    .timeout(Duration::from_secs(3))
                    .build()
                    .ok()
            })
            .flatten();
        Servers {
            resources: std::sync::Arc::new(super::resources::Sampler::new(&probes)),
            probes,
            http,
            host_cores: std::thread::available_parallelism().map_or(1, |n| n.get()) as f64,
        }
    }

    /// What reads the resource demands of these servers, the client and this host.
    pub fn resources(&self) -> std::sync::Arc<super::resources::Sampler> {
        self.resources.clone()
    }

    pub fn is_empty(&self) -> bool {
        self.probes.is_empty()
    }

    async fn read_all(&self) -> Vec<Result<Reading, String>> {
        let mut out = Vec::with_capacity(self.probes.len());
        for p in &self.probes {
            out.push(match p {
                Probe::EmbeddedThreads => Ok(threads_reading(TARGET_THREAD)),
                Probe::Process { pid, .. } => process_reading(*pid),
                Probe::NodeExporter { url } => self.scrape(url).await,
            });
        }
        out
    }

    async fn scrape(&self, url: &str) -> Result<Reading, String> {
        let text = super::probe::scrape(self.http.as_ref(), url).await?;
        parse_node_exporter(&text)
    }

    /// Reads every probe at a run's start.
    pub async fn start(&self) -> Started {
        Started {
            at: Instant::now(),
            readings: self.read_all().await,
        }
    }

    /// Reads every probe at the run's end: each server's use in between.
    pub async fn finish(&self, s: Started) -> Vec<ServerUsage> {
        let end = self.read_all().await;
        let secs = s.at.elapsed().as_secs_f64().max(1e-3);
        self.probes
            .iter()
            .zip(s.readings.into_iter().zip(end))
            .map(|(p, (a, b))| self.usage(p, a, b, secs))
            .collect()
    }

    fn usage(
        &self,
        p: &Probe,
        a: Result<Reading, String>,
        b: Result<Reading, String>,
        secs: f64,
    ) -> ServerUsage {
        let source = match p {
            Probe::NodeExporter { .. } => "node_exporter",
            _ => "proc",
        };
        let mut u = ServerUsage {
            name: p.name(),
            source: source.into(),
            cpu_cores: None,
            cpu_share: None,
            memory_bytes: None,
            age_s: None,
            error: None,
        };
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                u.error = Some(e);
                return u;
            }
        };
        u.age_s = a.age_s.map(|v| v.round());
        let busy = (b.busy_s - a.busy_s).max(0.0);
        let cores = busy / secs;
        u.cpu_cores = Some(round3(cores));
        u.cpu_share = Some(round3(match (a.total_s, b.total_s, b.cores) {
            (Some(ta), Some(tb), _) if tb > ta => busy / (tb - ta),
            (_, _, Some(n)) if n > 0.0 => cores / n,
            _ => cores / self.host_cores,
        }));
        u.memory_bytes = match (b.memory_total_bytes, b.memory_bytes) {
            (Some(t), Some(avail)) => Some(t.saturating_sub(avail)),
            (None, m) => m,
            _ => None,
        };
        u
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// utime + stime (fields 14 and 15; 11 and 12 after the name) in seconds.
fn cpu_of(f: &[&str]) -> f64 {
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / TICKS
}

/// CPU of this process's threads named `name`.
fn threads_reading(name: &str) -> Reading {
    let mut busy = 0.0;
    if let Ok(rd) = std::fs::read_dir("/proc/self/task") {
        for e in rd.flatten() {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            if let Some((comm, f)) = stat_fields(&stat)
                && comm.starts_with(name)
            {
                busy += cpu_of(&f);
            }
        }
    }
    Reading {
        busy_s: busy,
        ..Reading::default()
    }
}

/// CPU seconds of the embedded target's threads so far (0 when there are none).
pub fn embedded_target_cpu_seconds() -> f64 {
    threads_reading(TARGET_THREAD).busy_s
}

/// `pid` and all its descendants: CPU (their own, plus what reaped children left in
/// cutime/cstime) and resident memory.
fn process_reading(pid: u32) -> Result<Reading, String> {
    let (tree, stats) = process_tree(pid)?;
    let page = 4096u64;
    let mut r = Reading::default();
    let mut rss = 0u64;
    for p in &tree {
        if let Some((_, f)) = stats.get(p).and_then(|s| stat_fields(s)) {
            let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
            // utime, stime, cutime, cstime; rss (field 24, index 21) in pages.
            r.busy_s += (t(11) + t(12) + t(13) + t(14)) / TICKS;
            rss += f.get(21).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) * page;
        }
    }
    r.memory_bytes = Some(rss);
    r.age_s = stats.get(&pid).and_then(|s| age_of(s));
    Ok(r)
}

/// How long the process of this `/proc/<pid>/stat` has run: the machine's uptime
/// (`/proc/uptime`) less the process's start (field 22, in clock ticks since boot).
fn age_of(stat: &str) -> Option<f64> {
    let (_, f) = stat_fields(stat)?;
    let started = f.get(19)?.parse::<f64>().ok()? / TICKS;
    let up = std::fs::read_to_string("/proc/uptime").ok()?;
    let up: f64 = up.split_whitespace().next()?.parse().ok()?;
    Some((up - started).max(0.0))
}

/// node_exporter's CPU and memory: `node_cpu_seconds_total` by mode (busy = all but idle
/// and iowait), `node_memory_MemTotal_bytes` and `node_memory_MemAvailable_bytes`.
fn parse_node_exporter(text: &str) -> Result<Reading, String> {
    let samples = super::exposition::parse(text)
        .map_err(|e| format!("not the Prometheus text format: {e}"))?;
    let mut r = Reading::default();
    let (mut total, mut cpus, mut seen) = (0.0, HashSet::new(), false);
    for s in &samples {
        let v = s.value;
        match s.metric.as_str() {
            "node_cpu_seconds_total" => {
                seen = true;
                total += v;
                if let Some(c) = s.label("cpu") {
                    cpus.insert(c.to_string());
                }
                if !matches!(s.label("mode"), Some("idle") | Some("iowait")) {
                    r.busy_s += v;
                }
            }
            "node_memory_MemTotal_bytes" => r.memory_total_bytes = Some(v as u64),
            "node_memory_MemAvailable_bytes" => r.memory_bytes = Some(v as u64),
            _ => {}
        }
    }
    if !seen {
        return Err("no node_cpu_seconds_total: is this a node_exporter /metrics URL?".into());
    }
    r.total_s = Some(total);
    r.cores = Some(cpus.len() as f64);
    Ok(r)
}

/// A `/proc/net/tcp*` table, read in as few reads as possible: the kernel walks its whole
/// socket hash table for every read call (about 2 ms here), and `read_to_string`'s small
/// first reads made that a dozen walks charged to the run's client. A proc table fills the
/// buffer it is given, so a read that leaves room is the end (no extra read to see EOF).
fn read_socket_table(path: &str) -> Option<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0;
    loop {
        let n = f.read(&mut buf[len..]).ok()?;
        len += n;
        if n == 0 || len < buf.len() {
            break;
        }
        buf.resize(buf.len() * 2, 0);
    }
    buf.truncate(len);
    String::from_utf8(buf).ok()
}

/// The process listening on `port` of this machine (TCP, IPv4 or IPv6), found through the
/// socket inodes of `/proc/net/tcp*` and the processes' open files.
pub fn listener_pid(port: u16) -> Option<u32> {
    let mut inodes = HashSet::new();
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Some(t) = read_socket_table(f) else {
            continue;
        };
        for l in t.lines().skip(1) {
            let c: Vec<&str> = l.split_whitespace().collect();
            let (Some(local), Some(st), Some(inode)) = (c.get(1), c.get(3), c.get(9)) else {
                continue;
            };
            let p = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if *st == "0A" && p == Some(port) && *inode != "0" {
                inodes.insert(format!("socket:[{inode}]"));
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    let me = std::process::id();
    let mut found: Vec<u32> = Vec::new();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        if fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|l| inodes.contains(l.to_string_lossy().as_ref()))
        }) {
            found.push(pid);
        }
    }
    // nginx's workers share the master's socket: the lowest pid is the parent.
    found.sort();
    found.into_iter().find(|p| *p != me)
}

/// The command name of a local process.
pub fn process_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "process".into())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn node_exporter_cpu_and_memory() {
        let r = parse_node_exporter(SAMPLE).unwrap();
        assert_eq!(r.busy_s, 55.0);
        assert_eq!(r.total_s, Some(280.0));
        assert_eq!(r.cores, Some(2.0));
        let s = Servers::new(vec![]);
        let mut b = r.clone();
        b.busy_s += 10.0;
        b.total_s = Some(300.0);
        let u = s.usage(&Probe::NodeExporter { url: "u".into() }, Ok(r), Ok(b), 10.0);
        assert_eq!(u.cpu_cores, Some(1.0));
        assert_eq!(u.cpu_share, Some(0.5));
        assert_eq!(u.memory_bytes, Some(2_000_000_000));
        assert!(parse_node_exporter("up 1\n").is_err());
    }

    #[test]
    fn this_process_and_its_listener_are_found() {
        let r = process_reading(std::process::id()).unwrap();
        assert!(r.memory_bytes.unwrap() > 0);
        let age = r.age_s.unwrap();
        assert!(
            (0.0..3600.0).contains(&age),
            "this test process has run {age} s"
        );
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // Our own listener is never reported as a server.
        assert_eq!(listener_pid(port), None);
        assert!(process_reading(u32::MAX).is_err());
    }
}
