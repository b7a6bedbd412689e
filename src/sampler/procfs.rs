//! This host's `/proc` as the sampler reads it: the counters of a process (or of this
//! process's threads), a process's tree of descendants and its CPU capacity, the host's CPU,
//! disks and network, and which local process serves a loopback port. The formats are
//! parsed by `metrics::resources` and `metrics::probe`; a file that cannot be read is an
//! error naming it (for the result), never fatal.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use crate::metrics::probe::{TARGET_THREAD, TICKS, stat_fields, stat_seconds};
use crate::metrics::resources::{
    CpuCapacity, DiskCounters, HostCpu, Proc, TaskCounters, cpu_list_len, parse_cgroup,
    parse_diskstats, parse_io, parse_net_dev, parse_proc_stat, parse_schedstat, quota_of,
};

/// Bytes of a memory page (`rss` in `/proc/<pid>/stat` counts pages).
const PAGE: u64 = 4096;

/// The counters of one process now.
pub fn read_proc(p: &Proc) -> Result<TaskCounters, String> {
    match p {
        Proc::Embedded => Ok(tasks_of_self(true)),
        Proc::Client => {
            // Whole-process CPU and I/O (threads that exited still count) less the target's.
            let me = process_counters(std::process::id(), None)?;
            let t = tasks_of_self(true);
            let c = tasks_of_self(false);
            Ok(TaskCounters {
                cpu_s: (me.cpu_s - t.cpu_s).max(0.0),
                run_delay_s: c.run_delay_s,
                read_bytes: me.read_bytes.saturating_sub(t.read_bytes),
                write_bytes: me.write_bytes.saturating_sub(t.write_bytes),
                ..TaskCounters::default()
            })
        }
        Proc::Tree { pid, .. } => {
            let (tree, stats) = process_tree(*pid)?;
            let mut sum = TaskCounters::default();
            let mut rss = 0;
            for p in tree {
                if let Ok(c) = process_counters(p, stats.get(&p).map(String::as_str)) {
                    sum.cpu_s += c.cpu_s;
                    sum.run_delay_s += c.run_delay_s;
                    sum.read_bytes += c.read_bytes;
                    sum.write_bytes += c.write_bytes;
                    rss += c.rss_bytes.unwrap_or(0);
                }
            }
            sum.rss_bytes = Some(rss);
            sum.age_s = stats.get(pid).and_then(|s| age_of(s));
            Ok(sum)
        }
    }
}

/// Each of this process's threads, with its `/proc/self/task/<tid>` directory, its name and
/// its `stat` fields.
fn each_thread(mut f: impl FnMut(&Path, &str, &[&str])) {
    let Ok(rd) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for e in rd.flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        if let Some((comm, fields)) = stat_fields(&stat) {
            f(&e.path(), &comm, &fields);
        }
    }
}

/// This process's threads named like the embedded target's (`target`) or all the others.
fn tasks_of_self(target: bool) -> TaskCounters {
    let mut sum = TaskCounters::default();
    each_thread(|dir, comm, f| {
        if comm.starts_with(TARGET_THREAD) != target {
            return;
        }
        sum.cpu_s += stat_seconds(f, 11) + stat_seconds(f, 12);
        if let Ok(s) = std::fs::read_to_string(dir.join("schedstat")) {
            sum.run_delay_s += parse_schedstat(&s).unwrap_or(0.0);
        }
        if target && let Ok(io) = std::fs::read_to_string(dir.join("io")) {
            let (r, w) = parse_io(&io);
            sum.read_bytes += r;
            sum.write_bytes += w;
        }
    });
    sum
}

/// CPU seconds of the embedded target's threads so far (0 when there are none).
pub fn embedded_target_cpu_seconds() -> f64 {
    let mut busy = 0.0;
    each_thread(|_, comm, f| {
        if comm.starts_with(TARGET_THREAD) {
            busy += stat_seconds(f, 11) + stat_seconds(f, 12);
        }
    });
    busy
}

/// One process: utime + stime + what reaped children left (cutime + cstime), its threads'
/// run delay, its storage I/O, its resident memory; `stat` when its line was read already.
fn process_counters(pid: u32, stat: Option<&str>) -> Result<TaskCounters, String> {
    let dir = format!("/proc/{pid}");
    let read;
    let stat = match stat {
        Some(s) => s,
        None => {
            read = std::fs::read_to_string(format!("{dir}/stat"))
                .map_err(|e| format!("{dir}/stat: {e}"))?;
            &read
        }
    };
    let (_, f) = stat_fields(stat).ok_or_else(|| format!("{dir}/stat: unreadable"))?;
    let mut c = TaskCounters {
        cpu_s: (11..=14).map(|i| stat_seconds(&f, i)).sum(),
        // rss: field 24, index 21 after the name, in pages.
        rss_bytes: Some(f.get(21).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) * PAGE),
        ..TaskCounters::default()
    };
    if let Ok(rd) = std::fs::read_dir(format!("{dir}/task")) {
        for e in rd.flatten() {
            if let Ok(s) = std::fs::read_to_string(e.path().join("schedstat")) {
                c.run_delay_s += parse_schedstat(&s).unwrap_or(0.0);
            }
        }
    }
    // Another user's process hides its io file: CPU still counts.
    if let Ok(io) = std::fs::read_to_string(format!("{dir}/io")) {
        (c.read_bytes, c.write_bytes) = parse_io(&io);
    }
    Ok(c)
}

/// `pid` and every process descended from it, sorted, with each one's `/proc/<pid>/stat`
/// line (one pass over `/proc`).
pub fn process_tree(pid: u32) -> Result<(Vec<u32>, HashMap<u32, String>), String> {
    let mut parent_of: HashMap<u32, u32> = HashMap::new();
    let mut stats: HashMap<u32, String> = HashMap::new();
    let rd = std::fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?;
    for e in rd.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        if let Some((_, f)) = stat_fields(&stat)
            && let Some(pp) = f.get(1).and_then(|v| v.parse::<u32>().ok())
        {
            parent_of.insert(p, pp);
        }
        stats.insert(p, stat);
    }
    if !stats.contains_key(&pid) {
        return Err(format!("no process {pid}"));
    }
    let mut tree: HashSet<u32> = HashSet::from([pid]);
    loop {
        let before = tree.len();
        for (c, p) in &parent_of {
            if tree.contains(p) {
                tree.insert(*c);
            }
        }
        if tree.len() == before {
            break;
        }
    }
    let mut tree: Vec<u32> = tree.into_iter().collect();
    tree.sort_unstable();
    stats.retain(|p, _| tree.binary_search(p).is_ok());
    Ok((tree, stats))
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

/// This host's CPU (`/proc/stat`), whole block devices (`/proc/diskstats`) and network
/// interfaces (`/proc/net/dev`) now.
#[allow(clippy::type_complexity)]
pub fn read_host() -> (
    Result<HostCpu, String>,
    BTreeMap<String, DiskCounters>,
    BTreeMap<String, (u64, u64)>,
) {
    let host = std::fs::read_to_string("/proc/stat")
        .map_err(|e| format!("/proc/stat: {e}"))
        .and_then(|t| parse_proc_stat(&t).ok_or_else(|| "/proc/stat: no cpu line".into()));
    let disks = std::fs::read_to_string("/proc/diskstats")
        .map(|t| parse_diskstats(&t, whole_device))
        .unwrap_or_default();
    let net = std::fs::read_to_string("/proc/net/dev")
        .map(|t| parse_net_dev(&t))
        .unwrap_or_default();
    (host, disks, net)
}

/// A whole block device (not a partition, a loop or a ram disk): it has `/sys/block/<dev>`.
fn whole_device(dev: &str) -> bool {
    !dev.starts_with("loop")
        && !dev.starts_with("ram")
        && std::path::Path::new("/sys/block").join(dev).exists()
}

/// The CPU capacity of a process the sampler reads: a pid's own, or this process's (the
/// client and the embedded target run in it).
pub fn cpu_capacity_of(p: &Proc, host_cores: f64) -> CpuCapacity {
    match p {
        Proc::Tree { pid, .. } => cpu_capacity(*pid, host_cores),
        _ => cpu_capacity(std::process::id(), host_cores),
    }
}

/// A process's CPU capacity: its cgroup quota, its affinity, the host's cores, whichever
/// is least.
pub fn cpu_capacity(pid: u32, host_cores: f64) -> CpuCapacity {
    let mut cap = CpuCapacity {
        cores: host_cores,
        from: "host cores".into(),
    };
    if let Ok(st) = std::fs::read_to_string(format!("/proc/{pid}/status"))
        && let Some(n) = st
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .and_then(cpu_list_len)
        && (n as f64) < cap.cores
    {
        cap = CpuCapacity {
            cores: n as f64,
            from: "affinity".into(),
        };
    }
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .map(|t| parse_cgroup(&t))
        .unwrap_or_default();
    if let Some((q, from)) = quota_of(&cgroups, |p| std::fs::read_to_string(p).ok())
        && q < cap.cores
    {
        cap = CpuCapacity { cores: q, from };
    }
    cap
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

    #[test]
    fn this_process_and_its_listener_are_found() {
        let r = read_proc(&Proc::Tree {
            name: "me".into(),
            pid: std::process::id(),
        })
        .unwrap();
        assert!(r.rss_bytes.unwrap() > 0);
        let age = r.age_s.unwrap();
        assert!(
            (0.0..3600.0).contains(&age),
            "this test process has run {age} s"
        );
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // Our own listener is never reported as a server.
        assert_eq!(listener_pid(port), None);
        assert!(
            read_proc(&Proc::Tree {
                name: "gone".into(),
                pid: u32::MAX
            })
            .is_err()
        );
    }
}
