//! `ingestbench verify DIR`: read back what a run or sweep uploaded, from its manifest.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::password;
use crate::cli::{RecordedTarget, VerifyArgs};
use crate::cmd::Outcome;
use crate::fixtures::Profile;
use crate::plan;
use crate::protocol::{Repo, RepoOptions};
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::results::PlanKind;
use crate::results::manifest::Manifest;
use crate::verify::{Expect, verify};

/// What verification needs from a results directory: protocol, profile, seed, the
/// recorded user/auth/parent, a URL (and TLS settings for a sweep's method).
pub struct Recorded {
    protocol: ProtocolKind,
    profile: String,
    seed: u64,
    user: String,
    auth: AuthMode,
    parent: String,
    method: Option<crate::transport::AccessMethod>,
    /// The invocation's own top folder below the parent (`ingestbench/<id>`).
    pub folder: String,
    /// Stopped hard: runs missing from the plan's.
    hard_stopped: bool,
}

fn recorded(a: &RecordedTarget) -> Result<Recorded> {
    let dir = &a.dir;
    if !crate::results::is_results_dir(dir) {
        bail!(
            "{}: not a results directory (no plan.json or result.json); give results/run-<id> or results/sweep-<id>",
            dir.display()
        );
    }
    let (p, runs) = crate::results::load_dir(dir)?;
    let methods = crate::results::load_methods(dir)?;
    let m = match &a.access_method {
        Some(n) => methods
            .iter()
            .find(|m| &m.name == n)
            .cloned()
            .with_context(|| format!("--access-method {n}: not a method of this sweep"))?,
        None => match methods.iter().find(|m| !m.is_embedded()) {
            Some(m) => m.clone(),
            None if a.url.is_some() => methods[0].clone(),
            None if p.kind == PlanKind::Run => bail!(
                "{}: the run used the embedded target, which stopped with it; use `run --verify`, or keep its store (--target-data-dir), serve it with `ingestbench target --data-dir DIR` and pass --url",
                dir.display()
            ),
            None => bail!(
                "{}: the sweep only used the embedded target, which stopped with it; serve its store and pass --url",
                dir.display()
            ),
        },
    };
    Ok(Recorded {
        protocol: p.protocol,
        profile: p.profile.clone(),
        seed: p.seed,
        user: p.user.clone(),
        auth: p.auth,
        parent: p.parent.clone(),
        method: Some(m),
        folder: format!("ingestbench/{}", p.id),
        hard_stopped: (runs.len() as u64) < p.runs_planned(),
    })
}

/// Connects to the repository a results directory was written against.
/// Connects to the repository a results directory recorded, with `concurrency` connections
/// for a sweep's access method.
pub async fn connect(
    a: &RecordedTarget,
    concurrency: u64,
) -> Result<(Repo, Recorded, Arc<Profile>)> {
    let rec = recorded(a)?;
    let profile = Arc::new(Profile::load(
        rec.profile
            .strip_prefix("built-in:")
            .unwrap_or(&rec.profile),
    )?);
    let user = a.user.clone().unwrap_or_else(|| rec.user.clone());
    let secret = password(&user, a.password_file.as_deref())?;
    let (url, client) = match (&a.url, &rec.method) {
        (Some(u), _) => {
            let u = plan::parse_url(u)?;
            let mut b = crate::transport::reqwest_builder().timeout(Duration::from_secs(120));
            if let Some(ca) = &a.ca_cert {
                let pem =
                    std::fs::read(ca).with_context(|| format!("--ca-cert {}", ca.display()))?;
                b = b.add_root_certificate(
                    reqwest::Certificate::from_pem(&pem)
                        .with_context(|| format!("--ca-cert {}: not PEM", ca.display()))?,
                );
            }
            (u, b.build()?)
        }
        (None, Some(m)) => {
            let (u, c, _) = m.client(None, Duration::from_secs(120), concurrency as usize)?;
            (u, c)
        }
        (None, None) => bail!("no URL to verify against; pass --url"),
    };
    let repo = Repo::connect(
        rec.protocol,
        client,
        RepoOptions {
            url,
            user,
            password: secret,
            auth: rec.auth,
            parent: rec.parent.clone(),
            profile: profile.clone(),
            versioning: true,
            route: Default::default(),
        },
    )
    .await?;
    Ok((repo, rec, profile))
}

pub async fn verify_command(a: &VerifyArgs) -> Result<Outcome> {
    let (repo, rec, profile) = connect(&a.results, a.concurrency).await?;
    let dir = &a.results.dir;
    let entries = Manifest::read(&dir.join("manifest.jsonl"))?;
    let bar = crate::progress::bar(entries.len() as u64, a.quiet, "verifying");
    let repos = HashMap::from([(String::new(), Arc::new(repo))]);
    let report = verify(
        repos,
        Arc::new(Expect {
            protocol: rec.protocol,
            profile,
            seed: rec.seed,
            hard_stopped: rec.hard_stopped,
        }),
        entries,
        a.concurrency as usize,
        bar,
    )
    .await;
    write_report(dir, &report)?;
    println!("{}", report.summary());
    for p in report.problems.iter().take(20) {
        println!(
            "  {} {} ({}) in {}: {}",
            p.kind, p.name, p.id, p.folder, p.detail
        );
    }
    Ok(if report.clean() {
        Outcome::Success
    } else {
        Outcome::Failures
    })
}

fn write_report(dir: &Path, r: &crate::verify::VerifyReport) -> Result<()> {
    let p = dir.join("verify.json");
    std::fs::write(&p, serde_json::to_string_pretty(r)?)
        .with_context(|| format!("writing {}", p.display()))
}
