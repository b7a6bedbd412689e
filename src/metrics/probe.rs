//! What a server is to the probes that read it (the `sampler` reads them; `servers` and
//! `resources` record what they spent), and the fields of a `/proc/.../stat` line. No I/O.

use serde::{Deserialize, Serialize};

/// Name the embedded target's runtime threads carry (kernel thread names: 15 bytes at most).
pub const TARGET_THREAD: &str = "ib-target";

/// Where a server's CPU and memory are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Probe {
    /// The embedded target's threads in this process.
    EmbeddedThreads,
    /// A local process and its descendants (nginx's workers, a JVM's children).
    Process { name: String, pid: u32 },
    /// A node_exporter `/metrics` URL.
    NodeExporter { url: String },
}

impl Probe {
    pub fn name(&self) -> String {
        match self {
            Probe::EmbeddedThreads => "embedded target".into(),
            Probe::Process { name, pid } => format!("{name} (pid {pid})"),
            Probe::NodeExporter { url } => url.clone(),
        }
    }
}

/// Clock ticks per second of `/proc` CPU times (USER_HZ, 100 on Linux).
pub const TICKS: f64 = 100.0;

/// Field `i` of a `stat` line's fields (as [`stat_fields`] gives them) in seconds: a CPU
/// time in clock ticks (utime is 11, stime 12, cutime 13, cstime 14), 0 when missing.
pub fn stat_seconds(f: &[&str], i: usize) -> f64 {
    f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / TICKS
}

/// Fields after the command name of a `/proc/.../stat` line (the name may hold spaces).
pub fn stat_fields(stat: &str) -> Option<(String, Vec<&str>)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat[open + 1..close].to_string();
    Some((comm, stat[close + 1..].split_whitespace().collect()))
}
