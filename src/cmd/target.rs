//! `ingestbench target`: serve the embedded reference target until SIGINT/SIGTERM.

use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::write_file;
use crate::cli::TargetArgs;
use crate::protocol::Secret;
use crate::{Outcome, emulator};

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
            emulator::model::ACME_MODEL.to_string(),
            "built-in acme-model.xml".to_string(),
        )]
    } else {
        a.models
            .iter()
            .map(|m| emulator::model::Dictionary::load_file(m))
            .collect::<Result<_>>()?
    };
    for (v, flag) in [
        (a.service_time_ms, "--service-time-ms"),
        (a.cost_per_mib_ms, "--cost-per-mib-ms"),
        (a.growth_ms_per_1000, "--growth-ms-per-1000"),
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
            cold_extra: Duration::from_secs_f64(a.cold_extra_ms.max(0.0) / 1000.0),
            jitter: (a.jitter_pct / 100.0).clamp(0.0, 1.0),
            contention: a.contention,
            coherency: a.coherency,
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
    let handle = emulator::start(config(&a)?).await?;
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
