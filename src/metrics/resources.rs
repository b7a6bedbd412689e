//! What each resource the tool can see spent during a run's measured window, with its
//! capacity: the raw material of resource demands (busy time per stored document, in
//! `analysis::demands`) and of the servers' usage (`servers`). The records, the parsers of
//! what is read, and [`between`], which turns two [`Snapshot`]s into a [`RunResources`];
//! the reading itself (`/proc`, node_exporter over HTTP) is the `sampler`'s, twice per run,
//! when the window opens and when it closes (`engine::cell`), never per upload.
//!
//! Per process (the embedded target's threads, a server's pid and its descendants, the
//! client itself): CPU seconds (`/proc/<pid>/stat`), run delay (time runnable but waiting for
//! a core, `/proc/<pid>/task/*/schedstat`), bytes read and written to storage
//! (`/proc/<pid>/io`), and its CPU capacity: the cgroup quota (v1 `cpu.cfs_quota_us` /
//! `cpu.cfs_period_us`, v2 `cpu.max`, the tightest on the path to the root), the affinity
//! mask (`Cpus_allowed_list`), else the host's cores. Per host: `/proc/stat` (kernel time,
//! irq, softirq and steal included: loopback networking and TLS in the kernel belong to no
//! process; the busy time no process of the path spent, other processes', apart with its
//! niced part), `/proc/diskstats` busy time and bytes per device (capacity: 100 % busy),
//! `/proc/net/dev` bytes per interface. Remote hosts through node_exporter. A source that
//! cannot be read is named with why, never fatal.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::probe::{Probe, TICKS};

/// What a resource is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One process's (or thread group's) CPU; capacity in cores.
    ProcessCpu,
    /// A host's CPU as a whole, kernel included; capacity in cores.
    HostCpu,
    /// A block device; capacity 1 (100 % busy).
    Disk,
    /// A network interface: bytes only, no known capacity.
    Network,
}

/// Whose resource it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A server process (the embedded target, a server pid).
    Server,
    /// ingestbench itself: when it saturates, the numbers are the instrument's.
    Client,
    /// This host, shared by client, local servers and the kernel.
    Host,
    /// A remote host (node_exporter): its own CPU, disks and network.
    RemoteHost,
}

/// One resource's use over a run's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUse {
    /// e.g. `embedded target`, `ingestbench (client)`, `java (pid 812)`, `this host's CPU`,
    /// `disk sda`, `net lo`, `http://db:9100/metrics CPU`.
    pub name: String,
    pub kind: Kind,
    pub role: Role,
    /// Busy seconds in the window: CPU seconds summed over cores, or a disk's busy time.
    pub busy_s: f64,
    /// Capacity in the same unit per second: cores (CPU), 1 (disk), 0 (network: unknown).
    pub capacity: f64,
    /// Where the capacity comes from: `cgroup v1 cpu quota`, `cgroup v2 cpu.max`,
    /// `affinity`, `host cores`, `node_exporter cores`, `100 % busy`, `unknown`.
    pub capacity_from: String,
    /// Seconds runnable but waiting for a core (processes: summed over their threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_s: Option<f64>,
    /// Kernel time of a host's CPU: system + irq + softirq, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_s: Option<f64>,
    /// Steal time of a host's CPU (a hypervisor ran someone else), seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_s: Option<f64>,
    /// irq + softirq of a host's CPU (inside `kernel_s`), seconds: kernel work that belongs
    /// to no process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_s: Option<f64>,
    /// This host's CPU: seconds busy outside the path (other processes: a build, a backup,
    /// another tenant): busy − steal − irq − softirq − the client's and the local servers'
    /// CPU. Kept out of the documents' demand (`analysis::demands`). Absent in older results
    /// and where a process of the path could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_busy_s: Option<f64>,
    /// The niced part of `other_busy_s` (`/proc/stat`'s nice column, at most the other load):
    /// work that yields the cores to the path when it wants them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_niced_s: Option<f64>,
    /// Bytes read from / written to storage (processes, disks) or received / sent (network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
    /// Why it could not be read (then the numbers are 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every resource's use over one run's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResources {
    /// Seconds between the two readings (the measured window, give or take a few ms).
    pub window_s: f64,
    pub resources: Vec<ResourceUse>,
}

/// CPU capacity of a process: cores, and where the number comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuCapacity {
    pub cores: f64,
    pub from: String,
}

/// Counters of a set of tasks at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskCounters {
    pub cpu_s: f64,
    pub run_delay_s: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Resident memory of a pid and its descendants (`Proc::Tree` only).
    pub rss_bytes: Option<u64>,
    /// How long the pid had run (`Proc::Tree` only), s.
    pub age_s: Option<f64>,
}

/// A host's `/proc/stat` CPU line, in seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostCpu {
    pub busy_s: f64,
    pub kernel_s: f64,
    pub steal_s: f64,
    /// User time of niced processes (already inside `busy_s`).
    pub nice_s: f64,
    /// irq + softirq: the kernel's work that belongs to no process (inside `kernel_s`).
    pub irq_s: f64,
    pub cores: f64,
}

/// One block device's counters: busy milliseconds, sectors read and written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskCounters {
    pub busy_s: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// A remote host's counters from node_exporter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteCounters {
    pub cpu: HostCpu,
    pub disks: BTreeMap<String, DiskCounters>,
    pub net: BTreeMap<String, (u64, u64)>,
    /// CPU seconds in every mode, idle included, summed over cores: the host's own clock
    /// for a share of its cores between two scrapes.
    pub cpu_total_s: f64,
    /// `node_memory_MemTotal_bytes` and `node_memory_MemAvailable_bytes`.
    pub memory_total_bytes: Option<u64>,
    pub memory_available_bytes: Option<u64>,
}

impl RemoteCounters {
    /// Memory in use: MemTotal − MemAvailable.
    pub fn memory_used_bytes(&self) -> Option<u64> {
        Some(
            self.memory_total_bytes?
                .saturating_sub(self.memory_available_bytes?),
        )
    }
}

/// One reading of every source of a [`Sources`], in its order (taken by the `sampler`).
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub at: Instant,
    /// Per process of `Sources::procs`.
    pub procs: Vec<Result<TaskCounters, String>>,
    pub host: Result<HostCpu, String>,
    pub disks: BTreeMap<String, DiskCounters>,
    pub net: BTreeMap<String, (u64, u64)>,
    /// Per URL of `Sources::remote`.
    pub remote: Vec<Result<RemoteCounters, String>>,
}

/// A process whose CPU is read.
#[derive(Debug, Clone, PartialEq)]
pub enum Proc {
    /// This process less the embedded target's threads.
    Client,
    /// The embedded target's threads in this process.
    Embedded,
    /// A pid and its descendants.
    Tree { name: String, pid: u32 },
}

impl Proc {
    pub fn name(&self) -> String {
        match self {
            Proc::Client => "ingestbench (client)".into(),
            Proc::Embedded => "embedded target".into(),
            Proc::Tree { name, pid } => format!("{name} (pid {pid})"),
        }
    }
}

/// What is read for one access method: the client, its servers' processes, this host, and
/// the remote hosts of its node_exporter probes.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The probes as given, in order: the servers' usage follows it.
    pub probes: Vec<Probe>,
    /// The client first, then each local probe's process.
    pub procs: Vec<Proc>,
    /// Each node_exporter probe's URL.
    pub remote: Vec<String>,
    /// This host's cores (a process's capacity when nothing tighter is known).
    pub host_cores: f64,
}

impl Sources {
    /// The client, this host and every probe of a method.
    pub fn of(probes: Vec<Probe>, host_cores: f64) -> Sources {
        let mut procs = vec![Proc::Client];
        let mut remote = Vec::new();
        for p in &probes {
            match p {
                Probe::EmbeddedThreads => procs.push(Proc::Embedded),
                Probe::Process { name, pid } => procs.push(Proc::Tree {
                    name: name.clone(),
                    pid: *pid,
                }),
                Probe::NodeExporter { url } => remote.push(url.clone()),
            }
        }
        Sources {
            probes,
            procs,
            remote,
            host_cores,
        }
    }

    /// Where a probe's readings stand in a [`Snapshot`]: its process, or its remote host.
    pub fn reading_of(&self, p: &Probe) -> Option<Reading> {
        match p {
            Probe::EmbeddedThreads => self
                .procs
                .iter()
                .position(|x| *x == Proc::Embedded)
                .map(Reading::Proc),
            Probe::Process { pid, .. } => self
                .procs
                .iter()
                .position(|x| matches!(x, Proc::Tree { pid: q, .. } if q == pid))
                .map(Reading::Proc),
            Probe::NodeExporter { url } => self
                .remote
                .iter()
                .position(|u| u == url)
                .map(Reading::Remote),
        }
    }
}

/// An index into a [`Snapshot`]'s `procs` or `remote`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    Proc(usize),
    Remote(usize),
}

/// Each resource's use between two snapshots of `src`, with each process's CPU capacity
/// (`caps`, one per `src.procs`, read when the window closed).
pub fn between(src: &Sources, caps: &[CpuCapacity], a: &Snapshot, b: &Snapshot) -> RunResources {
    let window_s = b.at.duration_since(a.at).as_secs_f64().max(1e-3);
    let mut out = Vec::new();
    for (i, p) in src.procs.iter().enumerate() {
        out.push(process_use(p, &caps[i], &a.procs[i], &b.procs[i]));
    }
    match (&a.host, &b.host) {
        (Ok(x), Ok(y)) => {
            let mut u = host_cpu_use("this host's CPU", Role::Host, x, y);
            if let Some((other, niced)) = other_load(&out, &u, y.nice_s - x.nice_s) {
                u.other_busy_s = Some(round6(other));
                u.other_niced_s = Some(round6(niced));
            }
            out.push(u);
        }
        (Err(e), _) | (_, Err(e)) => out.push(unread_cpu(
            "this host's CPU".into(),
            Role::Host,
            src.host_cores,
            "host cores",
            e,
        )),
    }
    out.extend(disk_uses("", Role::Host, &a.disks, &b.disks));
    out.extend(net_uses("", Role::Host, &a.net, &b.net));
    for (i, url) in src.remote.iter().enumerate() {
        match (&a.remote[i], &b.remote[i]) {
            (Ok(x), Ok(y)) => {
                out.push(host_cpu_use(
                    &format!("{url} CPU"),
                    Role::RemoteHost,
                    &x.cpu,
                    &y.cpu,
                ));
                out.extend(disk_uses(url, Role::RemoteHost, &x.disks, &y.disks));
                out.extend(net_uses(url, Role::RemoteHost, &x.net, &y.net));
            }
            (Err(e), _) | (_, Err(e)) => out.push(unread_cpu(
                format!("{url} CPU"),
                Role::RemoteHost,
                0.0,
                "unknown",
                e,
            )),
        }
    }
    RunResources {
        window_s: round6(window_s),
        resources: out,
    }
}

/// This host's CPU spent outside the path, and its niced part, from the host's reading
/// (`host`, with its irq + softirq in the window) and the processes already read (`procs`:
/// the client and the local servers), `nice_s` the window's niced seconds. The kernel's irq
/// and softirq are charged to the path (loopback networking, TLS and disk completions of the
/// documents run there and belong to no process), steal to the hypervisor; the rest of the
/// host's busy time that no process of the path spent is someone else's. `None` when a
/// process of the path could not be read (its CPU would be counted as someone else's).
fn other_load(procs: &[ResourceUse], host: &ResourceUse, nice_s: f64) -> Option<(f64, f64)> {
    if procs.iter().any(|p| p.error.is_some()) {
        return None;
    }
    let ours: f64 = procs
        .iter()
        .filter(|p| p.kind == Kind::ProcessCpu)
        .map(|p| p.busy_s)
        .sum();
    let irq = host.irq_s.unwrap_or(0.0);
    let other = (host.busy_s - host.steal_s.unwrap_or(0.0) - irq - ours).max(0.0);
    Some((other, nice_s.clamp(0.0, other)))
}

/// One process's CPU, run delay and storage I/O between two readings.
fn process_use(
    p: &Proc,
    cap: &CpuCapacity,
    a: &Result<TaskCounters, String>,
    b: &Result<TaskCounters, String>,
) -> ResourceUse {
    let role = if *p == Proc::Client {
        Role::Client
    } else {
        Role::Server
    };
    let mut u = ResourceUse::new(
        p.name(),
        Kind::ProcessCpu,
        role,
        cap.cores,
        cap.from.clone(),
    );
    match (a, b) {
        (Ok(x), Ok(y)) => {
            u.busy_s = round6((y.cpu_s - x.cpu_s).max(0.0));
            u.run_delay_s = Some(round6((y.run_delay_s - x.run_delay_s).max(0.0)));
            u.read_bytes = Some(y.read_bytes.saturating_sub(x.read_bytes));
            u.write_bytes = Some(y.write_bytes.saturating_sub(x.write_bytes));
        }
        (Err(e), _) | (_, Err(e)) => u.error = Some(e.clone()),
    }
    u
}

/// A host's CPU that could not be read: named, with why.
fn unread_cpu(name: String, role: Role, capacity: f64, from: &str, why: &str) -> ResourceUse {
    let mut u = ResourceUse::new(name, Kind::HostCpu, role, capacity, from.into());
    u.error = Some(why.to_string());
    u
}

impl ResourceUse {
    fn new(name: String, kind: Kind, role: Role, capacity: f64, from: String) -> ResourceUse {
        ResourceUse {
            name,
            kind,
            role,
            busy_s: 0.0,
            capacity: round6(capacity),
            capacity_from: from,
            run_delay_s: None,
            kernel_s: None,
            steal_s: None,
            irq_s: None,
            other_busy_s: None,
            other_niced_s: None,
            read_bytes: None,
            write_bytes: None,
            error: None,
        }
    }
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

fn host_cpu_use(name: &str, role: Role, x: &HostCpu, y: &HostCpu) -> ResourceUse {
    let from = if role == Role::Host {
        "host cores"
    } else {
        "node_exporter cores"
    };
    let mut u = ResourceUse::new(name.into(), Kind::HostCpu, role, y.cores, from.into());
    u.busy_s = round6((y.busy_s - x.busy_s).max(0.0));
    u.kernel_s = Some(round6((y.kernel_s - x.kernel_s).max(0.0)));
    u.steal_s = Some(round6((y.steal_s - x.steal_s).max(0.0)));
    u.irq_s = Some(round6((y.irq_s - x.irq_s).max(0.0)));
    u
}

/// A device's name: `disk sda` on this host, `http://db:9100/metrics disk sda` on a remote
/// one (`prefix`, its URL).
fn device_name(prefix: &str, kind: &str, dev: &str) -> String {
    if prefix.is_empty() {
        format!("{kind} {dev}")
    } else {
        format!("{prefix} {kind} {dev}")
    }
}

/// Devices that did some work in the window (an idle disk is no candidate).
fn disk_uses(
    prefix: &str,
    role: Role,
    a: &BTreeMap<String, DiskCounters>,
    b: &BTreeMap<String, DiskCounters>,
) -> Vec<ResourceUse> {
    let mut out = Vec::new();
    for (dev, y) in b {
        let Some(x) = a.get(dev) else { continue };
        let busy = (y.busy_s - x.busy_s).max(0.0);
        let (r, w) = (
            y.read_bytes.saturating_sub(x.read_bytes),
            y.write_bytes.saturating_sub(x.write_bytes),
        );
        if busy == 0.0 && r == 0 && w == 0 {
            continue;
        }
        let name = device_name(prefix, "disk", dev);
        let mut u = ResourceUse::new(name, Kind::Disk, role, 1.0, "100 % busy".into());
        u.busy_s = round6(busy);
        u.read_bytes = Some(r);
        u.write_bytes = Some(w);
        out.push(u);
    }
    out
}

/// Interfaces that moved bytes in the window (received = read, sent = written).
fn net_uses(
    prefix: &str,
    role: Role,
    a: &BTreeMap<String, (u64, u64)>,
    b: &BTreeMap<String, (u64, u64)>,
) -> Vec<ResourceUse> {
    let mut out = Vec::new();
    for (dev, y) in b {
        let Some(x) = a.get(dev) else { continue };
        let (r, w) = (y.0.saturating_sub(x.0), y.1.saturating_sub(x.1));
        if r == 0 && w == 0 {
            continue;
        }
        let name = device_name(prefix, "net", dev);
        let mut u = ResourceUse::new(name, Kind::Network, role, 0.0, "unknown".into());
        u.read_bytes = Some(r);
        u.write_bytes = Some(w);
        out.push(u);
    }
    out
}

/// `/proc/<pid>/task/<tid>/schedstat`: time on a core, time waiting for one (run delay),
/// timeslices, in ns; the run delay in seconds.
pub fn parse_schedstat(text: &str) -> Option<f64> {
    let v: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(v as f64 / 1e9)
}

/// `/proc/<pid>/io`: `read_bytes` and `write_bytes` (what reached the storage layer).
pub fn parse_io(text: &str) -> (u64, u64) {
    let mut r = (0, 0);
    for l in text.lines() {
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim().parse().unwrap_or(0);
            match k.trim() {
                "read_bytes" => r.0 = v,
                "write_bytes" => r.1 = v,
                _ => {}
            }
        }
    }
    r
}

/// `/proc/stat`'s aggregate `cpu` line: busy = all but idle and iowait (kernel and steal
/// included), kernel = system + irq + softirq, nice (niced processes' user time), irq =
/// irq + softirq; cores = the `cpuN` lines.
pub fn parse_proc_stat(text: &str) -> Option<HostCpu> {
    let mut h = HostCpu::default();
    let mut seen = false;
    for l in text.lines() {
        let mut it = l.split_whitespace();
        let Some(head) = it.next() else { continue };
        if head == "cpu" {
            let v: Vec<f64> = it.map(|x| x.parse().unwrap_or(0.0) / TICKS).collect();
            let g = |i: usize| v.get(i).copied().unwrap_or(0.0);
            // user nice system idle iowait irq softirq steal (guest is inside user).
            h.busy_s = g(0) + g(1) + g(2) + g(5) + g(6) + g(7);
            h.kernel_s = g(2) + g(5) + g(6);
            h.steal_s = g(7);
            h.nice_s = g(1);
            h.irq_s = g(5) + g(6);
            seen = true;
        } else if head.starts_with("cpu") {
            h.cores += 1.0;
        }
    }
    seen.then_some(h)
}

/// `/proc/diskstats`: per device (kept by `keep`), io_ticks (field 13, ms busy) and the
/// sectors read and written (512 bytes each).
pub fn parse_diskstats(text: &str, keep: impl Fn(&str) -> bool) -> BTreeMap<String, DiskCounters> {
    let mut out = BTreeMap::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 13 || !keep(f[2]) {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        out.insert(
            f[2].to_string(),
            DiskCounters {
                busy_s: n(12) as f64 / 1000.0,
                read_bytes: n(5) * 512,
                write_bytes: n(9) * 512,
            },
        );
    }
    out
}

/// `/proc/net/dev`: received and sent bytes per interface.
pub fn parse_net_dev(text: &str) -> BTreeMap<String, (u64, u64)> {
    let mut out = BTreeMap::new();
    for l in text.lines().skip(2) {
        let Some((name, rest)) = l.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        if f.len() >= 9 {
            out.insert(name.trim().to_string(), (f[0], f[8]));
        }
    }
    out
}

/// node_exporter's counters: `node_cpu_seconds_total` by mode (busy = all but idle and
/// iowait), `node_disk_io_time_seconds_total` and `node_disk_{read,written}_bytes_total` per
/// device, `node_network_{receive,transmit}_bytes_total` per interface,
/// `node_memory_MemTotal_bytes` and `node_memory_MemAvailable_bytes`.
pub fn parse_node_exporter(text: &str) -> Result<RemoteCounters, String> {
    let samples = super::exposition::parse(text)
        .map_err(|e| format!("not the Prometheus text format: {e}"))?;
    let mut r = RemoteCounters::default();
    let mut cpus = HashSet::new();
    for s in &samples {
        let v = s.value;
        let dev = || s.label("device").unwrap_or("").to_string();
        match s.metric.as_str() {
            "node_cpu_seconds_total" => {
                if let Some(c) = s.label("cpu") {
                    cpus.insert(c.to_string());
                }
                r.cpu_total_s += v;
                let mode = s.label("mode").unwrap_or("");
                if !matches!(mode, "idle" | "iowait") {
                    r.cpu.busy_s += v;
                }
                if matches!(mode, "system" | "irq" | "softirq") {
                    r.cpu.kernel_s += v;
                }
                if matches!(mode, "irq" | "softirq") {
                    r.cpu.irq_s += v;
                }
                if mode == "nice" {
                    r.cpu.nice_s += v;
                }
                if mode == "steal" {
                    r.cpu.steal_s += v;
                }
            }
            "node_disk_io_time_seconds_total" => r.disks.entry(dev()).or_default().busy_s = v,
            "node_disk_read_bytes_total" => r.disks.entry(dev()).or_default().read_bytes = v as u64,
            "node_disk_written_bytes_total" => {
                r.disks.entry(dev()).or_default().write_bytes = v as u64
            }
            "node_network_receive_bytes_total" => r.net.entry(dev()).or_default().0 = v as u64,
            "node_network_transmit_bytes_total" => r.net.entry(dev()).or_default().1 = v as u64,
            "node_memory_MemTotal_bytes" => r.memory_total_bytes = Some(v as u64),
            "node_memory_MemAvailable_bytes" => r.memory_available_bytes = Some(v as u64),
            _ => {}
        }
    }
    if cpus.is_empty() {
        return Err("no node_cpu_seconds_total: is this a node_exporter /metrics URL?".into());
    }
    r.cpu.cores = cpus.len() as f64;
    Ok(r)
}

/// A cgroup a process belongs to: `(1, path)` for a v1 hierarchy with the `cpu` controller,
/// `(2, path)` for the unified one.
pub fn parse_cgroup(text: &str) -> Vec<(u8, String)> {
    let mut out = Vec::new();
    for l in text.lines() {
        let mut it = l.splitn(3, ':');
        let (Some(id), Some(ctrl), Some(path)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if id == "0" && ctrl.is_empty() {
            out.push((2, path.to_string()));
        } else if ctrl.split(',').any(|c| c == "cpu") {
            out.push((1, path.to_string()));
        }
    }
    out
}

/// A v1 quota: `cpu.cfs_quota_us` over `cpu.cfs_period_us` (-1: none).
pub fn quota_v1(quota: &str, period: &str) -> Option<f64> {
    let q: f64 = quota.trim().parse().ok()?;
    let p: f64 = period.trim().parse().ok()?;
    (q > 0.0 && p > 0.0).then(|| q / p)
}

/// A v2 `cpu.max`: `QUOTA PERIOD` or `max PERIOD`.
pub fn cpu_max(text: &str) -> Option<f64> {
    let mut it = text.split_whitespace();
    let q: f64 = it.next()?.parse().ok()?;
    let p: f64 = it.next()?.parse().ok()?;
    (q > 0.0 && p > 0.0).then(|| q / p)
}

/// How many CPUs a `Cpus_allowed_list` names (`0-3,8,10-11` → 7).
pub fn cpu_list_len(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().ok()? - a.parse::<usize>().ok()? + 1,
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

/// The tightest CPU quota on a cgroup's path to its root, read through `read` (a file
/// path → its text; the real one reads `/sys/fs/cgroup`).
pub fn quota_of(
    cgroups: &[(u8, String)],
    read: impl Fn(&str) -> Option<String>,
) -> Option<(f64, String)> {
    let mut best: Option<(f64, String)> = None;
    for (v, path) in cgroups {
        let roots: &[&str] = if *v == 1 {
            &["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
        } else {
            &["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        };
        let mut p = path.trim_end_matches('/').to_string();
        loop {
            for root in roots {
                let q = if *v == 1 {
                    match (
                        read(&format!("{root}{p}/cpu.cfs_quota_us")),
                        read(&format!("{root}{p}/cpu.cfs_period_us")),
                    ) {
                        (Some(q), Some(per)) => quota_v1(&q, &per),
                        _ => None,
                    }
                } else {
                    read(&format!("{root}{p}/cpu.max")).and_then(|t| cpu_max(&t))
                };
                if let Some(q) = q
                    && best.as_ref().is_none_or(|b| q < b.0)
                {
                    let from = if *v == 1 {
                        "cgroup v1 cpu quota"
                    } else {
                        "cgroup v2 cpu.max"
                    };
                    best = Some((q, from.to_string()));
                }
            }
            match p.rfind('/') {
                Some(i) if !p.is_empty() => p.truncate(i),
                _ => break,
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const STAT_A: &str = "cpu  32299 0 6921 16252 609 0 137 638 0 0
cpu0 15892 0 2971 9122 111 0 20 305 0 0
cpu1 16407 0 3950 7130 498 0 117 333 0 0
intr 123
";

    #[test]
    fn host_cpu_counts_the_kernel_and_steal() {
        let h = parse_proc_stat(STAT_A).unwrap();
        assert_eq!(h.cores, 2.0);
        assert!((h.busy_s - (32299.0 + 6921.0 + 137.0 + 638.0) / 100.0).abs() < 1e-9);
        assert!((h.kernel_s - (6921.0 + 137.0) / 100.0).abs() < 1e-9);
        assert!((h.steal_s - 6.38).abs() < 1e-9);
        assert!(parse_proc_stat("intr 1\n").is_none());
    }

    /// A `/proc/stat` of a 2-core host: the `cpu` line from ticks (user nice system idle
    /// iowait irq softirq steal), two `cpuN` lines.
    fn stat(t: [u64; 8]) -> String {
        let l: Vec<String> = t.iter().map(u64::to_string).collect();
        format!("cpu  {} 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n", l.join(" "))
    }

    /// The client and the embedded target spent 1 s and 5 s of a 10 s window on a 2-core
    /// host, the kernel 0.5 s of softirq for them; `user` and `nice` are someone else's work
    /// (ticks of user and of nice time).
    fn window(user: u64, nice: u64) -> RunResources {
        let src = Sources::of(vec![Probe::EmbeddedThreads], 2.0);
        let caps = vec![
            CpuCapacity {
                cores: 2.0,
                from: "host cores".into(),
            };
            2
        ];
        let at = Instant::now();
        let snap = |at, client: f64, target: f64, host: [u64; 8]| Snapshot {
            at,
            procs: vec![
                Ok(TaskCounters {
                    cpu_s: client,
                    ..TaskCounters::default()
                }),
                Ok(TaskCounters {
                    cpu_s: target,
                    ..TaskCounters::default()
                }),
            ],
            host: Ok(parse_proc_stat(&stat(host)).unwrap()),
            disks: BTreeMap::new(),
            net: BTreeMap::new(),
            remote: Vec::new(),
        };
        let a = snap(at, 10.0, 20.0, [1000, 500, 300, 9000, 0, 0, 100, 0]);
        // The path: 6 s of process CPU (450 user + 150 system ticks) and 50 softirq ticks.
        let b = snap(
            at + std::time::Duration::from_secs(10),
            11.0,
            25.0,
            [
                1450 + user,
                500 + nice,
                450,
                9000 + 2000 - 650 - user - nice,
                0,
                0,
                150,
                0,
            ],
        );
        between(&src, &caps, &a, &b)
    }

    #[test]
    fn the_host_s_other_load_is_what_the_path_did_not_spend_and_niced_time_is_apart() {
        let host = |r: &RunResources| {
            r.resources
                .iter()
                .find(|u| u.kind == Kind::HostCpu)
                .unwrap()
                .clone()
        };
        // Nothing else: the host's busy time is the path's.
        let quiet = host(&window(0, 0));
        assert!((quiet.busy_s - 6.5).abs() < 1e-9, "{quiet:?}");
        assert_eq!(quiet.irq_s, Some(0.5));
        assert_eq!(quiet.other_busy_s, Some(0.0));
        assert_eq!(quiet.other_niced_s, Some(0.0));
        // A nice-19 build on 0.8 cores: all of it niced.
        let niced = host(&window(0, 800));
        assert_eq!(niced.other_busy_s, Some(8.0));
        assert_eq!(niced.other_niced_s, Some(8.0));
        // The same at normal priority: other load, none of it niced.
        let normal = host(&window(800, 0));
        assert_eq!(normal.other_busy_s, Some(8.0));
        assert_eq!(normal.other_niced_s, Some(0.0));
        // A process of the path that could not be read: the other load is not known.
        let src = Sources::of(vec![Probe::EmbeddedThreads], 2.0);
        let mut a = Snapshot {
            at: Instant::now(),
            procs: vec![Ok(TaskCounters::default()), Err("gone".into())],
            host: Ok(parse_proc_stat(&stat([0; 8])).unwrap()),
            disks: BTreeMap::new(),
            net: BTreeMap::new(),
            remote: Vec::new(),
        };
        let caps = vec![
            CpuCapacity {
                cores: 2.0,
                from: "host cores".into(),
            };
            2
        ];
        let b = a.clone();
        a.host = Ok(HostCpu::default());
        let r = between(&src, &caps, &a, &b);
        assert_eq!(host(&r).other_busy_s, None);
    }

    #[test]
    fn disks_networks_tasks_are_parsed() {
        let ds = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   8       0 sda 1200 10 48000 900 3400 50 96000 5000 0 4200 6100 0 0 0 0
   8       1 sda1 1100 10 47000 800 3300 50 95000 4900 0 4100 6000 0 0 0 0
";
        let d = parse_diskstats(ds, |d| d == "sda");
        assert_eq!(d.len(), 1);
        assert_eq!(
            d["sda"],
            DiskCounters {
                busy_s: 4.2,
                read_bytes: 48000 * 512,
                write_bytes: 96000 * 512
            }
        );
        let nd = "Inter-|   Receive |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets
    lo:    3193      29    0    0    0     0          0         0     3194      29    0    0    0     0       0          0
  eth0: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0
";
        let n = parse_net_dev(nd);
        assert_eq!(n["lo"], (3193, 3194));
        assert_eq!(n["eth0"], (100, 200));
        assert_eq!(parse_schedstat("145753 2045525000 2\n"), Some(2.045525));
        let io = "rchar: 6976\nwchar: 0\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(io), (4096, 8192));
    }

    #[test]
    fn quotas_affinity_and_cgroups_are_read() {
        let cg = "12:cpu,cpuacct:/ib/node1\n4:memory:/x\n0::/user.slice\n";
        assert_eq!(
            parse_cgroup(cg),
            vec![(1, "/ib/node1".to_string()), (2, "/user.slice".to_string())]
        );
        assert_eq!(quota_v1("50000\n", "100000\n"), Some(0.5));
        assert_eq!(quota_v1("-1", "100000"), None);
        assert_eq!(cpu_max("150000 100000\n"), Some(1.5));
        assert_eq!(cpu_max("max 100000\n"), None);
        assert_eq!(cpu_list_len("\t0-3,8,10-11\n"), Some(7));
        assert_eq!(cpu_list_len("0"), Some(1));
        // The parent's quota is tighter than the child's: the tighter one applies.
        let files: HashMap<&str, &str> = HashMap::from([
            ("/sys/fs/cgroup/cpu/ib/node1/cpu.cfs_quota_us", "80000"),
            ("/sys/fs/cgroup/cpu/ib/node1/cpu.cfs_period_us", "100000"),
            ("/sys/fs/cgroup/cpu/ib/cpu.cfs_quota_us", "50000"),
            ("/sys/fs/cgroup/cpu/ib/cpu.cfs_period_us", "100000"),
            ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1"),
            ("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000"),
            ("/sys/fs/cgroup/unified/user.slice/cpu.max", "max 100000"),
        ]);
        let q = quota_of(&parse_cgroup(cg), |p| files.get(p).map(|s| s.to_string()));
        assert_eq!(q, Some((0.5, "cgroup v1 cpu quota".to_string())));
        let v2 = [(2, "/a/b".to_string())];
        let q = quota_of(&v2, |p| {
            (p == "/sys/fs/cgroup/a/cpu.max").then(|| "200000 100000".to_string())
        });
        assert_eq!(q, Some((2.0, "cgroup v2 cpu.max".to_string())));
        assert_eq!(quota_of(&v2, |_| None), None);
    }

    #[test]
    fn node_exporter_disks_and_networks() {
        let t = "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 100
node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 30
node_cpu_seconds_total{cpu=\"0\",mode=\"softirq\"} 2
node_cpu_seconds_total{cpu=\"1\",mode=\"system\"} 10
node_cpu_seconds_total{cpu=\"1\",mode=\"steal\"} 1
node_disk_io_time_seconds_total{device=\"sda\"} 12.5
node_disk_written_bytes_total{device=\"sda\"} 4096
node_network_receive_bytes_total{device=\"eth0\"} 10
node_network_transmit_bytes_total{device=\"eth0\"} 20
";
        let r = parse_node_exporter(t).unwrap();
        assert_eq!(r.cpu.cores, 2.0);
        assert_eq!(r.cpu.busy_s, 43.0);
        assert_eq!(r.cpu.kernel_s, 12.0);
        assert_eq!(r.cpu.steal_s, 1.0);
        assert_eq!(r.disks["sda"].busy_s, 12.5);
        assert_eq!(r.disks["sda"].write_bytes, 4096);
        assert_eq!(r.net["eth0"], (10, 20));
        assert!(parse_node_exporter("up 1\n").is_err());
    }
}
