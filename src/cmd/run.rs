//! `ingestbench run`: one measured cell against a URL or the embedded target.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::{Progress, password, rand_u64, write_file};
use crate::cli::RunArgs;
use crate::fixtures::Fixtures;
use crate::plan::{self, RunPlan};
use crate::protocol::{Repo, RepoOptions};
use crate::run::{self, CellPlan, Live, Manifest};
use crate::{Outcome, emulator, host, report, timefmt};

/// Builds the HTTP client for uploads: one per access method, shared by all workers.
pub fn http_client(
    plan: &RunPlan,
    workers: usize,
) -> Result<(reqwest::Client, crate::access::ConnectionCounter)> {
    let mut b = reqwest::Client::builder()
        .timeout(plan.common.timeout)
        .connect_timeout(Duration::from_secs(10).min(plan.common.timeout))
        .pool_max_idle_per_host(workers.max(1))
        .tcp_nodelay(true)
        .user_agent(concat!("ingestbench/", env!("CARGO_PKG_VERSION")));
    if let Some(ca) = &plan.ca_cert {
        let pem = std::fs::read(ca)
            .with_context(|| format!("--ca-cert {}: cannot read", ca.display()))?;
        let cert = reqwest::Certificate::from_pem(&pem)
            .with_context(|| format!("--ca-cert {}: not a PEM certificate", ca.display()))?;
        b = b.add_root_certificate(cert);
    }
    let counter = crate::access::ConnectionCounter::default();
    b = b.connector_layer(counter.clone());
    Ok((b.build().context("building the HTTP client")?, counter))
}

/// For `--resume DIR`: the interrupted run's own plan (flags from its result.json, the URL
/// and credentials from this command line), its id, and what its manifest shows done.
fn resumed_args(args: &RunArgs) -> Result<Option<(RunArgs, String, Vec<run::ManifestEntry>)>> {
    let Some(dir) = &args.resume else {
        return Ok(None);
    };
    let path = dir.join("result.json");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "--resume {}: no result.json there (give a results/run-<id> directory)",
            dir.display()
        )
    })?;
    let r: report::RunResult = serde_json::from_str(&text)
        .with_context(|| format!("{}: not an ingestbench run result", path.display()))?;
    let entries = Manifest::read(&dir.join("manifest.jsonl"))?;
    let mut a = args.clone();
    let p = &r.plan;
    a.docs = p.docs;
    a.threads = p.threads;
    a.runs = p.runs;
    a.size = match p.size_class.as_str() {
        "average" => crate::fixtures::SizeClass::Average,
        "large" => crate::fixtures::SizeClass::Large,
        _ => crate::fixtures::SizeClass::Small,
    };
    let bytes = p.doc_size_bytes.to_string();
    match a.size {
        crate::fixtures::SizeClass::Small => a.common.small_size = bytes,
        crate::fixtures::SizeClass::Average => a.common.average_size = bytes,
        crate::fixtures::SizeClass::Large => a.common.large_size = bytes,
    }
    a.common.seed = p.seed;
    a.common.profile = Some(
        p.profile
            .strip_prefix("built-in:")
            .unwrap_or(&p.profile)
            .to_string(),
    );
    a.common.protocol = match p.protocol.as_str() {
        "liferay" => crate::protocol::ProtocolKind::Liferay,
        "cmis" => crate::protocol::ProtocolKind::Cmis,
        _ => crate::protocol::ProtocolKind::Alfresco,
    };
    a.common.parent = Some(p.parent.clone());
    a.common.user = p.user.clone();
    a.common.docs_per_folder = p.docs_per_folder;
    a.common.no_versioning = !p.versioning;
    a.results_dir = dir
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    if a.url.is_none() {
        if r.target.embedded && a.target_data_dir.is_none() {
            bail!(
                "--resume {}: the run used the embedded target with a temporary store, which is gone; nothing to resume into",
                dir.display()
            );
        }
        if !r.target.embedded {
            a.url = Some(r.target.url.clone());
        }
    }
    // Keep the interrupted run's result beside the new one.
    let mut k = 1;
    while dir.join(format!("result.{k}.json")).exists() {
        k += 1;
    }
    std::fs::rename(&path, dir.join(format!("result.{k}.json")))?;
    Ok(Some((a, r.id, entries)))
}

/// `run`: returns the outcome and the result (for tests).
pub async fn run_command(args: &RunArgs) -> Result<(Outcome, report::RunResult)> {
    let resumed = resumed_args(args)?;
    let args = resumed.as_ref().map_or(args, |r| &r.0);
    let plan = RunPlan::try_from(args)?;
    let id = match &resumed {
        Some((_, id, _)) => id.clone(),
        None => format!("{}-{:04x}", timefmt::compact_now(), rand_u64() & 0xffff),
    };
    let started_at = timefmt::datetime_ms(timefmt::now_ms());

    // The repository: the given URL, or the embedded target.
    let mut embedded: Option<super::Embedded> = None;
    let (url, secret) = match &plan.url {
        Some(u) => (u.clone(), password(&plan.common)?),
        None if plan.common.protocol == crate::protocol::ProtocolKind::Cmis => {
            bail!(
                "--protocol cmis needs --url (the CMIS browser binding service URL): the embedded target speaks Alfresco and Liferay; scripts/cmis.sh up starts a real CMIS repository"
            )
        }
        None => {
            let secret = super::embedded_password(&plan.common)?;
            let e = super::start_embedded(&plan.common, plan.target_data_dir.as_deref(), &secret)
                .await?;
            let url = plan::parse_url(&e.handle.http_url().expect("http listener"))?;
            embedded = Some(e);
            (url, secret)
        }
    };
    let (client, counter) = http_client(&plan, plan.threads as usize)?;
    let extra_ca: Vec<Vec<u8>> = match &plan.ca_cert {
        Some(ca) => vec![std::fs::read(ca).with_context(|| format!("--ca-cert {}", ca.display()))?],
        None => Vec::new(),
    };
    let proto = Arc::new(
        Repo::connect(
            plan.common.protocol,
            client,
            RepoOptions {
                url: url.clone(),
                user: plan.common.user.clone(),
                password: secret,
                auth: plan.common.auth,
                parent: plan.common.parent.clone(),
                profile: plan.common.profile.clone(),
                versioning: plan.common.versioning,
                node_header: Some(reqwest::header::HeaderName::from_static(
                    emulator::NODE_HEADER,
                )),
                node_cookie: None,
                fast: Some(Arc::new(
                    crate::http1::Endpoint::new(
                        &url,
                        &extra_ca,
                        true,
                        plan.common.timeout,
                        counter.clone(),
                    )
                    .await
                    .with_context(|| format!("--url {}", plan::redact(&url)))?,
                )),
            },
        )
        .await?,
    );

    let results = plan.results_dir.join(format!("run-{id}"));
    std::fs::create_dir_all(&results).with_context(|| {
        format!(
            "--results-dir {}: cannot create {}",
            plan.results_dir.display(),
            results.display()
        )
    })?;
    let manifest = Manifest::create(&results.join("manifest.jsonl"))?;
    let fixtures = Arc::new(Fixtures::new(
        plan.size,
        plan.doc_size(),
        plan.common.seed,
        plan.common.profile.clone(),
    ));
    let cell = CellPlan {
        docs: plan.docs,
        threads: plan.threads,
        runs: plan.runs,
        docs_per_folder: plan.common.docs_per_folder,
        folder: format!("ingestbench/{id}"),
        nonce: plan.common.seed ^ rand_u64(),
        tag: None,
        retries: plan.common.retries,
        connections: Some(counter),
    };

    let resume: std::collections::HashMap<u32, run::Resume> = match &resumed {
        Some((_, _, entries)) => (1..=plan.runs)
            .filter_map(|r| {
                run::Resume::from_entries(entries.iter().filter(|e| e.run == r), plan.docs)
                    .map(|x| (r, x))
            })
            .collect(),
        None => Default::default(),
    };
    let todo: u64 = (1..=plan.runs)
        .map(|r| resume.get(&r).map_or(plan.docs, |x| x.todo.len() as u64))
        .sum();

    let live = Arc::new(Live::default());
    let signals = super::watch_signals(live.clone());
    let progress = Progress::start(todo, plan.common.quiet, live.clone());
    let cpu0 = host::process_cpu_seconds();
    let outcomes = run::run_cell(
        proto.clone(),
        fixtures,
        &cell,
        live.clone(),
        &manifest,
        &resume,
    )
    .await;
    signals.abort();
    let interrupted = live.interrupted.load(Ordering::Relaxed);
    let cpu = host::process_cpu_seconds() - cpu0;
    progress.finish().await;
    let outcomes = outcomes?;

    let verified = if args.verify
        && !interrupted
        && !manifest.broken()
        && outcomes.iter().all(|o| o.fatal.is_none())
    {
        let entries = Manifest::read(manifest.path())?;
        let expect = Arc::new(crate::verify::Expect {
            protocol: plan.common.protocol,
            profile: plan.common.profile.clone(),
            seed: plan.common.seed,
        });
        let bar = super::bar(entries.len() as u64, plan.common.quiet, "verifying");
        let repos = std::collections::HashMap::from([(String::new(), proto.clone())]);
        Some(
            crate::verify::verify(
                repos,
                expect,
                entries,
                (plan.threads as usize).clamp(1, 16),
                bar,
            )
            .await,
        )
    } else {
        None
    };

    let stored_docs = match &embedded {
        Some(t) => Some(
            t.handle
                .count_documents_under(plan.common.protocol, &plan.common.user, &cell.folder)
                .await?,
        ),
        None => None,
    };
    let result = report::build(
        report::Inputs {
            id: id.clone(),
            started_at,
            plan: plan.record(),
            host: host::facts(),
            target: report::RepositoryRecord {
                url: plan::redact(&url),
                embedded: embedded.is_some(),
                stored_docs,
            },
            worker_quotas: run::split_quota(plan.docs, plan.threads),
            client_cpu_s: cpu,
            manifest: "manifest.jsonl".into(),
        },
        &outcomes,
    );
    let mut result = result;
    result.verify = verified;
    let json = serde_json::to_string_pretty(&result)?;
    let result_path = results.join("result.json");
    std::fs::write(&result_path, &json)
        .with_context(|| format!("writing {}", result_path.display()))?;
    if let Some(out) = &plan.output {
        write_file(out, &json).with_context(|| format!("--output {}", out.display()))?;
    }
    if plan.json {
        println!("{json}");
    }
    if !plan.common.quiet {
        let text = report::summary_text(&result);
        let tail = format!("  results: {}\n", result_path.display());
        if plan.json {
            eprint!("{text}{tail}");
        } else {
            print!("{text}{tail}");
        }
    }
    drop(embedded);
    if let Err(e) = manifest.flush() {
        bail!("{e:#}\n  partial results: {}", result_path.display());
    }
    if let Some(reason) = &result.aborted {
        bail!(
            "the repository rejected the documents: {reason}\n  check --profile ({}) against the repository's content model, and --parent; partial results: {}",
            plan.common.profile.source,
            result_path.display()
        );
    }
    if let Some(v) = &result.verify {
        std::fs::write(
            results.join("verify.json"),
            serde_json::to_string_pretty(v)?,
        )?;
    }
    if interrupted {
        eprintln!(
            "interrupted: {} documents acknowledged, {} failed; results and manifest in {}; finish with: ingestbench run --resume {}",
            result.docs_ok,
            result.docs_failed,
            results.display(),
            results.display()
        );
        return Ok((Outcome::Interrupted, result));
    }
    let verified_clean = result.verify.as_ref().is_none_or(|v| v.clean());
    let outcome = if result.docs_failed == 0 && verified_clean && !live.stop.load(Ordering::Relaxed)
    {
        Outcome::Success
    } else {
        Outcome::Failures
    };
    Ok((outcome, result))
}
