//! What a server is to the probes that read it, and the `/proc` primitives both readers
//! (`servers`: CPU and memory per run; `resources`: demands per run window) share: a
//! process's `stat` fields and its tree of descendants. Read between runs, never per upload.

use std::collections::{HashMap, HashSet};

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

/// Fields after the command name of a `/proc/.../stat` line (the name may hold spaces).
pub fn stat_fields(stat: &str) -> Option<(String, Vec<&str>)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat[open + 1..close].to_string();
    Some((comm, stat[close + 1..].split_whitespace().collect()))
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

/// The text a node_exporter `/metrics` URL serves (an error says why not, for the result).
pub async fn scrape(http: Option<&reqwest::Client>, url: &str) -> Result<String, String> {
    let http = http.ok_or("no HTTP client")?;
    let r = http
        .get(url)
        .send()
        .await
        .map_err(|e| format!("unreachable: {}", super::error_chain(&e)))?;
    if !r.status().is_success() {
        return Err(format!("answered HTTP {}", r.status().as_u16()));
    }
    r.text().await.map_err(|e| format!("reading: {e}"))
}
