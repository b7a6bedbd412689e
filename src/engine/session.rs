//! Connecting: the embedded target (started one way for every command), and for each access
//! method and connection policy one HTTP client, one upload route and one login, shared by
//! all the runs that use them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::emulator::{self, EmulatorHandle};
use crate::metrics::probe::Probe;
use crate::plan::CommonPlan;
use crate::protocol::{Repo, RepoOptions, Secret};
use crate::sampler::{self, Sampler};
use crate::transport::route::Route;
use crate::transport::{AccessMethod, ConnectionCounter, ConnectionPolicy};

/// The embedded target and its temporary store (removed when dropped). It runs on a
/// runtime of its own whose threads are named `ib-target`, so its CPU is told apart from
/// the client's in the same process (fields drop in order: listeners, runtime, store).
pub struct Embedded {
    pub handle: EmulatorHandle,
    _runtime: TargetRuntime,
    _tmp: Option<TempStore>,
}

struct TargetRuntime(Option<tokio::runtime::Runtime>);

impl Drop for TargetRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

struct TempStore(std::path::PathBuf);

/// Temporary stores are `<base>/ingestbench-target-<pid>-<uuid>`.
const STORE_PREFIX: &str = "ingestbench-target-";

/// Free space a memory-backed directory must have to take a temporary store.
const SHM_MIN_FREE: u64 = 2 << 30;

/// Where a temporary store goes: `/dev/shm` (memory) when it is there with room, else the
/// system's temporary directory. On disk, the kernel writes a store's pages back about 30 s
/// after they were written (`vm.dirty_expire_centisecs`), in the middle of whichever later
/// cell is running on these same 2 cores: measured on the quick start, the runs of one
/// cell scattered by CV 10-12 % on disk and 3-5 % in memory, and a third of its HTTPS-vs-HTTP
/// comparisons stayed unresolved on disk, none in memory. A durable store
/// (`--target-data-dir`, `ingestbench target`) stays where it is asked to be.
fn temp_store_base() -> std::path::PathBuf {
    let shm = Path::new("/dev/shm");
    let room = std::ffi::CString::new("/dev/shm").ok().and_then(|c| {
        // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        (unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0)
            .then(|| s.f_bavail as u64 * s.f_frsize as u64)
    });
    let writable = std::fs::metadata(shm).is_ok_and(|m| m.is_dir() && !m.permissions().readonly());
    if writable && room.is_some_and(|r| r >= SHM_MIN_FREE) {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Removes temporary stores whose process is gone (a SIGKILL or an OOM kill skips `Drop`),
/// so memory-backed stores do not pile up until the next boot.
fn remove_stale_stores(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(STORE_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts the embedded target on loopback (HTTP and HTTPS on free ports), with its store in
/// `data_dir` or a temporary directory, accepting exactly `--user` with `secret`, so the
/// target and the client always agree on the credentials.
async fn start_embedded(
    plan: &CommonPlan,
    data_dir: Option<&Path>,
    secret: &Secret,
) -> Result<Embedded> {
    let (dir, tmp) = match data_dir {
        Some(d) => (d.to_path_buf(), None),
        None => {
            let name = format!(
                "{STORE_PREFIX}{}-{}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            );
            let base = temp_store_base();
            remove_stale_stores(&base);
            // Memory first; a /dev/shm that refuses the directory falls back to disk.
            let mut p = base.join(&name);
            if std::fs::create_dir_all(&p).is_err() {
                p = std::env::temp_dir().join(&name);
                std::fs::create_dir_all(&p)
                    .with_context(|| format!("creating {} (set TMPDIR to a writable directory, or give --target-data-dir)", p.display()))?;
            }
            (p.clone(), Some(TempStore(p)))
        }
    };
    let mut cfg = emulator::EmulatorConfig::local(dir);
    cfg.https_listen = Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
    cfg.users = vec![(plan.user.clone(), secret.clone())];
    // Only a store removed at exit shares prefixes: a kept one holds every byte.
    cfg.share_prefixes = tmp.is_some();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(crate::metrics::probe::TARGET_THREAD)
        // Blocking threads (store writes, modelled service times) live on, so their CPU
        // time is not lost from the per-thread sums between a run's start and end.
        .thread_keep_alive(std::time::Duration::from_secs(3600))
        .enable_all()
        .build()
        .context("starting the embedded target's runtime")?;
    let handle = rt
        .spawn(emulator::start(cfg))
        .await
        .context("starting the embedded target")??;
    Ok(Embedded {
        handle,
        _runtime: TargetRuntime(Some(rt)),
        _tmp: tmp,
    })
}

/// One access method with one connection policy, connected and logged in.
#[derive(Clone)]
pub struct Connected {
    pub repo: Arc<Repo>,
    /// Connections its client opened (read before and after each run).
    pub counter: ConnectionCounter,
    /// The URL requests go to.
    pub url: reqwest::Url,
    /// The embedded target serves it.
    pub embedded: bool,
    /// The method file's `server_metrics` and `server_pids`.
    pub server_metrics: Vec<String>,
    pub server_pids: Vec<u32>,
}

/// Everything a run or sweep uploads through.
pub struct Session {
    repos: HashMap<(String, ConnectionPolicy), Connected>,
    pub embedded: Option<Embedded>,
}

impl Session {
    /// Starts the embedded target if a method uses it, then connects every `(method,
    /// policy)` pair (the method's own `connection` is replaced by the policy).
    pub async fn open(
        common: &CommonPlan,
        pairs: &[(AccessMethod, ConnectionPolicy)],
        secret: &Secret,
        data_dir: Option<&Path>,
        workers: usize,
    ) -> Result<Session> {
        let embedded = if pairs.iter().any(|(m, _)| m.is_embedded()) {
            Some(start_embedded(common, data_dir, secret).await?)
        } else {
            None
        };
        let mut repos = HashMap::new();
        for (m, policy) in pairs {
            let mut m = m.clone();
            m.connection = *policy;
            let c = connect(common, &m, embedded.as_ref(), secret, workers)
                .await
                .with_context(|| format!("access method {} ({})", m.name, m.source.display()))?;
            repos.insert((m.name.clone(), *policy), c);
        }
        Ok(Session { repos, embedded })
    }

    /// What to read over each run's window of each method (`sampler`): the client, this
    /// host, and the servers: the embedded target's threads, the process listening on a loopback URL's port, the method file's
    /// `server_metrics` and `server_pids`, and those given on the command line
    /// (`--server-metrics`, `--server-pid`) for every method.
    pub fn servers(&self, common: &CommonPlan) -> HashMap<String, Arc<Sampler>> {
        let mut by_method: HashMap<String, Vec<Probe>> = HashMap::new();
        for ((name, _), c) in &self.repos {
            let probes = by_method.entry(name.clone()).or_default();
            let mut add = |p: Probe| {
                if !probes.contains(&p) {
                    probes.push(p);
                }
            };
            if c.embedded {
                add(Probe::EmbeddedThreads);
            } else if let Some(pid) = loopback_port(&c.url).and_then(sampler::listener_pid) {
                add(Probe::Process {
                    name: sampler::process_name(pid),
                    pid,
                });
            }
            for u in &c.server_metrics {
                add(Probe::NodeExporter { url: u.clone() });
            }
            for p in &c.server_pids {
                add(Probe::Process {
                    name: sampler::process_name(*p),
                    pid: *p,
                });
            }
            for p in &common.probes {
                add(p.clone());
            }
        }
        by_method
            .into_iter()
            .map(|(m, p)| (m, Arc::new(Sampler::new(p))))
            .collect()
    }

    /// The connection of `method` with `policy` (opened by [`Session::open`]).
    pub fn get(&self, method: &str, policy: ConnectionPolicy) -> Result<&Connected> {
        self.repos
            .get(&(method.to_string(), policy))
            .with_context(|| {
                format!(
                    "access method {method} ({}) is not connected",
                    policy.name()
                )
            })
    }
}

/// One client, route and login for `m`.
async fn connect(
    common: &CommonPlan,
    m: &AccessMethod,
    embedded: Option<&Embedded>,
    secret: &Secret,
    workers: usize,
) -> Result<Connected> {
    let emb = embedded.map(|e| {
        let t = &e.handle;
        let url = if m.url == "embedded:https" {
            t.https_url().unwrap_or_default()
        } else {
            t.http_url().unwrap_or_default()
        };
        (url, t.ca_pem.clone())
    });
    let (url, client, counter) = m.client(
        emb.as_ref().map(|(u, c)| (u.as_str(), c.as_deref())),
        common.timeout,
        workers,
    )?;
    let fast = m
        .fast_endpoint(
            &url,
            emb.as_ref().and_then(|(_, c)| c.as_deref()),
            common.timeout,
            counter.clone(),
        )
        .await?
        .map(Arc::new);
    let repo = Repo::connect(
        common.protocol,
        client,
        RepoOptions {
            url: url.clone(),
            user: common.user.clone(),
            password: secret.clone(),
            auth: common.auth,
            parent: common.parent.clone(),
            profile: common.profile.clone(),
            versioning: common.versioning,
            route: Route {
                fast,
                node_header: m.node_header(),
                node_cookie: m.node_cookie.clone(),
            },
        },
    )
    .await?;
    Ok(Connected {
        repo: Arc::new(repo),
        counter,
        url,
        embedded: emb.is_some(),
        server_metrics: m.server_metrics.clone(),
        server_pids: m.server_pids.clone(),
    })
}

/// The port of a URL on this machine (localhost or a loopback address).
fn loopback_port(url: &reqwest::Url) -> Option<u16> {
    crate::transport::access::is_loopback(url)
        .then(|| url.port_or_known_default())
        .flatten()
}
