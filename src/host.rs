//! Facts about the machine running ingestbench, recorded with every result (with how many
//! upload runtimes it runs, [`RUNTIMES_VAR`], which `engine::pool` starts), and the
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

/// The variable that sets how many upload runtimes there are (`engine::pool`).
pub const RUNTIMES_VAR: &str = "INGESTBENCH_WORKER_RUNTIMES";

/// The most upload runtimes the variable may ask for (a thread each).
const MAX_RUNTIMES: usize = 1024;

/// How many upload runtimes: [`RUNTIMES_VAR`] if set, else one per CPU. An unusable value is
/// a setup error naming the variable (checked before anything runs, see
/// [`check_upload_runtimes`]).
fn configured_runtimes() -> Result<usize, String> {
    match std::env::var(RUNTIMES_VAR) {
        Err(std::env::VarError::NotPresent) => {
            Ok(std::thread::available_parallelism().map_or(1, |n| n.get()))
        }
        Err(e) => Err(format!("{RUNTIMES_VAR}: {e}")),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n <= MAX_RUNTIMES => Ok(n),
            _ => Err(format!(
                "{RUNTIMES_VAR}={v}: give a number of upload runtimes from 0 (workers share the \
                 main runtime) to {MAX_RUNTIMES}, or unset it for one per CPU"
            )),
        },
    }
}

/// Checks [`RUNTIMES_VAR`] once at startup, so a bad value stops the command before it
/// writes or measures anything.
pub fn check_upload_runtimes() -> Result<(), String> {
    configured_runtimes().map(|_| ())
}

/// How many upload runtimes workers are dealt to (recorded with the host facts).
pub fn upload_runtimes() -> usize {
    configured_runtimes().unwrap_or(1)
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
        upload_runtimes: Some(upload_runtimes()),
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
