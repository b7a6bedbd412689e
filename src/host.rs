//! Facts about the machine running ingestbench, recorded with every result, and the
//! process's own CPU time (to tell when the client itself was the bottleneck).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub kernel: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    /// Single-threaded runtimes for the upload workers (one per CPU unless
    /// INGESTBENCH_WORKER_RUNTIMES said otherwise; 0: one shared runtime); a cell of small
    /// documents to a target on this host is dealt to half of them. Absent in results from
    /// versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_runtimes: Option<usize>,
}

fn read_trim(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn facts() -> HostFacts {
    let memory_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024);
    HostFacts {
        hostname: read_trim("/proc/sys/kernel/hostname"),
        os: std::env::consts::OS.into(),
        arch: std::env::consts::ARCH.into(),
        kernel: read_trim("/proc/sys/kernel/osrelease"),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        upload_runtimes: Some(crate::engine::pool::planned()),
    }
}

/// CPU seconds (user + system) this process has used so far; 0 where unknown.
pub fn process_cpu_seconds() -> f64 {
    let stat = read_trim("/proc/self/stat");
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 (1-based); here index 11 and 12.
    (ticks(11) + ticks(12)) / 100.0
}
