//! `ingestbench target`: serve the embedded reference target until SIGINT/SIGTERM.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::write_file;
use crate::cli::TargetArgs;
use crate::cmd::Outcome;
use crate::emulator;
use crate::protocol::Secret;

/// The emulator's configuration from the flags, every flag checked.
fn config(a: &TargetArgs) -> Result<emulator::EmulatorConfig> {
    for addr in std::iter::once(&a.listen).chain(a.tls_listen.iter()) {
        if !addr.ip().is_loopback() && !a.allow_remote {
            bail!(
                "--listen {addr}: not a loopback address; the target has test users, so pass --allow-remote to bind it anyway"
            );
        }
    }
    let users = if a.users.is_empty() {
        vec![("admin".to_string(), Secret::new("admin"))]
    } else {
        a.users
            .iter()
            .map(|u| match u.split_once(':') {
                Some((n, p)) if !n.is_empty() && !p.is_empty() => Ok((n.to_string(), Secret::new(p))),
                _ => bail!("--user must be NAME:PASSWORD (got a value without a colon or with an empty part)"),
            })
            .collect::<Result<_>>()?
    };
    let models = if a.models.is_empty() {
        vec![(
            crate::protocol::alfresco::model::ACME_MODEL.to_string(),
            "built-in acme-model.xml".to_string(),
        )]
    } else {
        a.models
            .iter()
            .map(|m| crate::protocol::alfresco::model::Dictionary::load_file(m))
            .collect::<Result<_>>()?
    };
    for (v, flag) in [
        (a.service_time_ms, "--service-time-ms"),
        (a.cost_per_mib_ms, "--cost-per-mib-ms"),
        (a.growth_ms_per_1000, "--growth-ms-per-1000"),
        (a.cpu_per_doc_ms, "--cpu-per-doc-ms"),
        (a.step_ms, "--step-ms"),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{flag} {v}: must be a number of milliseconds >= 0");
        }
    }
    for (v, flag) in [(a.contention, "--contention"), (a.coherency, "--coherency")] {
        if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
            bail!(
                "{flag} {v}: a coefficient from 0 to 1 (the USL's σ or κ; 0.05 and 0.001 are typical)"
            );
        }
    }
    let rates = [
        (a.fault_5xx, "--fault-5xx"),
        (a.fault_500_after_commit, "--fault-500-after-commit"),
        (a.fault_stall, "--fault-stall"),
        (a.fault_reset, "--fault-reset"),
    ];
    for (v, flag) in rates {
        if !(0.0..=1.0).contains(&v) {
            bail!("{flag} {v}: a rate from 0 to 1");
        }
    }
    if rates.iter().map(|r| r.0).sum::<f64>() > 1.0 {
        bail!("the --fault-* rates add up to more than 1");
    }
    Ok(emulator::EmulatorConfig {
        http_listen: Some(a.listen),
        https_listen: a.tls_listen,
        tls: match (&a.cert, &a.key) {
            (Some(c), Some(k)) => emulator::TlsSource::Files {
                cert: c.clone(),
                key: k.clone(),
            },
            _ => emulator::TlsSource::Generate,
        },
        data_dir: a.data_dir.clone(),
        node_name: a.node_name.clone(),
        users,
        models,
        perf: emulator::PerfModel {
            service_time: Duration::from_secs_f64(a.service_time_ms / 1000.0),
            per_mib: Duration::from_secs_f64(a.cost_per_mib_ms / 1000.0),
            max_concurrent: a.max_concurrent,
            growth_per_1000: Duration::from_secs_f64(a.growth_ms_per_1000 / 1000.0),
            cold_requests: a.cold_requests,
            step_after: a.step_after,
            step_extra: Duration::from_secs_f64(a.step_ms / 1000.0),
            cold_extra: Duration::from_secs_f64(a.cold_extra_ms.max(0.0) / 1000.0),
            jitter: (a.jitter_pct / 100.0).clamp(0.0, 1.0),
            contention: a.contention,
            coherency: a.coherency,
            cpu_per_doc: Duration::from_secs_f64(a.cpu_per_doc_ms / 1000.0),
            stall_once: Duration::from_millis(a.stall_once_ms),
            stall_after: a.stall_after,
        },
        token_lifetime: Duration::from_secs_f64(a.token_lifetime_s.max(0.001)),
        faults: emulator::Faults {
            error_5xx: a.fault_5xx,
            commit_500: a.fault_500_after_commit,
            stall: a.fault_stall,
            stall_for: Duration::from_millis(a.fault_stall_ms),
            reset: a.fault_reset,
        },
        share_prefixes: false,
    })
}

pub async fn target_command(a: TargetArgs) -> Result<Outcome> {
    let cfg = config(&a)?;
    let _quota = match a.node_cpus {
        Some(cpus) => Some(QuotaGroup::enter(cpus, &a.node_name)?),
        None => None,
    };
    let handle = emulator::start(cfg).await?;
    if let Some(ca) = &handle.ca_pem {
        let path = a
            .ca_out
            .clone()
            .unwrap_or_else(|| a.data_dir.join("ca.pem"));
        write_file(&path, ca).with_context(|| format!("--ca-out {}", path.display()))?;
        eprintln!(
            "ingestbench target: CA certificate written to {}",
            path.display()
        );
    }
    if let Some(pf) = &a.port_file {
        let mut text = format!("{}\n", handle.http.map_or(0, |x| x.port()));
        if let Some(h) = handle.https {
            text.push_str(&format!("{}\n", h.port()));
        }
        write_file(pf, &text).with_context(|| format!("--port-file {}", pf.display()))?;
    }
    eprintln!(
        "ingestbench target {}: {}{} (store {})",
        a.node_name,
        handle.http_url().unwrap_or_default(),
        handle
            .https_url()
            .map(|u| format!(" and {u}"))
            .unwrap_or_default(),
        a.data_dir.display()
    );
    wait_for_shutdown().await;
    handle.stop();
    Ok(Outcome::Success)
}

/// A cgroup with a CPU quota this process moved itself into (`--node-cpus`): what a
/// container's CPU limit sets, so one machine stands in for nodes of known capacity. At drop
/// the process moves back to where it was and the group is removed.
struct QuotaGroup {
    dir: PathBuf,
    back_to: PathBuf,
}

/// CFS period of the quotas set (the kernel's default).
const PERIOD_US: u64 = 100_000;

impl QuotaGroup {
    fn enter(cpus: f64, node: &str) -> Result<QuotaGroup> {
        if !(cpus.is_finite() && cpus >= 0.01) {
            bail!("--node-cpus {cpus}: a number of CPUs of at least 0.01 (e.g. 0.5)");
        }
        let quota = (cpus * PERIOD_US as f64).round() as u64;
        let name: String = format!("ingestbench-{node}-{}", std::process::id())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let groups = crate::metrics::resources::parse_cgroup(&own);
        let mut why = Vec::new();
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        if v1.join("cpu.cfs_quota_us").exists() {
            let back = groups
                .iter()
                .find(|g| g.0 == 1)
                .map_or("/", |g| g.1.as_str());
            match Self::enter_in(v1, &name, back, |dir| {
                std::fs::write(dir.join("cpu.cfs_period_us"), PERIOD_US.to_string())?;
                std::fs::write(dir.join("cpu.cfs_quota_us"), quota.to_string())
            }) {
                Ok(g) => return Ok(g),
                Err(e) => why.push(format!("cgroup v1 {}: {e:#}", v1.display())),
            }
        } else {
            why.push(format!("no cgroup v1 cpu controller at {}", v1.display()));
        }
        for root in ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
            let root = Path::new(root);
            let Ok(ctl) = std::fs::read_to_string(root.join("cgroup.controllers")) else {
                continue;
            };
            if !ctl.split_whitespace().any(|c| c == "cpu") {
                why.push(format!(
                    "cgroup v2 {}: the cpu controller is not available there",
                    root.display()
                ));
                continue;
            }
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu");
            let back = groups
                .iter()
                .find(|g| g.0 == 2)
                .map_or("/", |g| g.1.as_str());
            match Self::enter_in(root, &name, back, |dir| {
                std::fs::write(dir.join("cpu.max"), format!("{quota} {PERIOD_US}"))
            }) {
                Ok(g) => return Ok(g),
                Err(e) => why.push(format!("cgroup v2 {}: {e:#}", root.display())),
            }
        }
        bail!(
            "--node-cpus {cpus}: cannot put this target under a CPU quota ({}); run it where a cgroup can be written (root, or a delegated cgroup), or drop --node-cpus",
            why.join("; ")
        )
    }

    fn enter_in(
        root: &Path,
        name: &str,
        back: &str,
        limit: impl Fn(&Path) -> std::io::Result<()>,
    ) -> Result<QuotaGroup> {
        // Groups left by targets that were killed: empty ones go (a busy one refuses).
        if let Ok(rd) = std::fs::read_dir(root) {
            for e in rd.flatten() {
                if e.file_name().to_string_lossy().starts_with("ingestbench-") {
                    let _ = std::fs::remove_dir(e.path());
                }
            }
        }
        let dir = root.join(name);
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let g = QuotaGroup {
            back_to: root.join(back.trim_start_matches('/')),
            dir,
        };
        limit(&g.dir).with_context(|| format!("setting the quota in {}", g.dir.display()))?;
        std::fs::write(g.dir.join("cgroup.procs"), std::process::id().to_string())
            .with_context(|| format!("moving this process into {}", g.dir.display()))?;
        eprintln!(
            "ingestbench target: under a CPU quota in {}",
            g.dir.display()
        );
        Ok(g)
    }
}

impl Drop for QuotaGroup {
    fn drop(&mut self) {
        let _ = std::fs::write(
            self.back_to.join("cgroup.procs"),
            std::process::id().to_string(),
        );
        let _ = std::fs::remove_dir(&self.dir);
    }
}

async fn wait_for_shutdown() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
