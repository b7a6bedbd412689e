//! ingestbench: measure how fast documents can be pushed into a content repository.
//!
//! `run(cli)` is the whole tool; `main` only builds the runtime and maps the outcome to an
//! exit code, so tests drive everything in-process.

pub mod cli;
pub mod fixtures;
pub mod host;
pub mod metrics;
pub mod plan;
pub mod protocol;
pub mod report;
pub mod run;
pub mod target;
pub mod timefmt;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use cli::{Cli, Command, RunArgs, TargetArgs};
use fixtures::Fixtures;
use plan::RunPlan;
use protocol::Secret;
use protocol::alfresco::{Alfresco, AlfrescoOptions};
use run::{CellPlan, Live, Manifest};

/// How a command ended, short of a setup error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything succeeded.
    Success,
    /// Finished, but some uploads failed.
    Failures,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Success => 0,
            Outcome::Failures => 1,
        }
    }
}

pub async fn run(cli: Cli) -> Result<Outcome> {
    match cli.command {
        Command::Run(args) => run_command(&args).await.map(|(o, _)| o),
        Command::Target(args) => target_command(args).await,
    }
}

fn password(plan: &RunPlan) -> Result<Secret> {
    if let Some(f) = &plan.password_file {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("--password-file {}: cannot read", f.display()))?;
        let first = text.lines().next().unwrap_or("").to_string();
        if first.is_empty() {
            bail!("--password-file {}: the first line is empty", f.display());
        }
        return Ok(Secret::new(first));
    }
    if let Ok(p) = std::env::var("INGESTBENCH_PASSWORD") {
        return Ok(Secret::new(p));
    }
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let p = rpassword::prompt_password(format!("Password for {}: ", plan.user))
            .context("reading the password from the terminal")?;
        return Ok(Secret::new(p));
    }
    bail!(
        "no password for --user {}: set INGESTBENCH_PASSWORD or use --password-file (no terminal to prompt on)",
        plan.user
    )
}

/// Builds the HTTP client for uploads: one per access method, shared by all workers.
pub fn http_client(plan: &RunPlan, workers: usize) -> Result<reqwest::Client> {
    let mut b = reqwest::Client::builder()
        .timeout(plan.timeout)
        .connect_timeout(Duration::from_secs(10).min(plan.timeout))
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
    b.build().context("building the HTTP client")
}

/// A temporary directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> Result<TempDir> {
        let p = std::env::temp_dir().join(format!("{prefix}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `run`: returns the outcome and the result (for tests).
pub async fn run_command(args: &RunArgs) -> Result<(Outcome, report::RunResult)> {
    let plan = RunPlan::try_from(args)?;
    let id = format!("{}-{:04x}", timefmt::compact_now(), rand_u64() & 0xffff);
    let started_at = timefmt::datetime_ms(timefmt::now_ms());

    // The repository: the given URL, or the embedded target.
    let mut _tmp = None;
    let mut embedded = None;
    let (url, secret) = match &plan.url {
        Some(u) => (u.clone(), password(&plan)?),
        None => {
            let dir = match &plan.target_data_dir {
                Some(d) => d.clone(),
                None => {
                    let t = TempDir::new("ingestbench-target")?;
                    let p = t.0.clone();
                    _tmp = Some(t);
                    p
                }
            };
            let handle = target::start(target::TargetConfig::local(dir)).await?;
            let url = plan::parse_url(&handle.http_url().expect("http listener"))?;
            embedded = Some(handle);
            let secret = if plan.password_file.is_some()
                || std::env::var_os("INGESTBENCH_PASSWORD").is_some()
            {
                password(&plan)?
            } else {
                Secret::new("admin")
            };
            (url, secret)
        }
    };
    let client = http_client(&plan, plan.threads as usize)?;
    let proto = Arc::new(
        Alfresco::connect(
            client,
            AlfrescoOptions {
                url: url.clone(),
                user: plan.user.clone(),
                password: secret,
                auth: plan.auth,
                parent: plan.parent.clone(),
                profile: plan.profile.clone(),
                versioning: plan.versioning,
                node_header: Some(reqwest::header::HeaderName::from_static(
                    target::NODE_HEADER,
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
        plan.seed,
        plan.profile.clone(),
    ));
    let cell = CellPlan {
        docs: plan.docs,
        threads: plan.threads,
        runs: plan.runs,
        docs_per_folder: plan.docs_per_folder,
        folder: format!("ingestbench/{id}"),
        nonce: plan.seed ^ rand_u64(),
    };

    let live = Arc::new(Live::default());
    let progress = Progress::start(plan.docs * u64::from(plan.runs), plan.quiet, live.clone());
    let cpu0 = host::process_cpu_seconds();
    let outcomes = run::run_cell(proto, fixtures, &cell, live.clone(), &manifest).await;
    let cpu = host::process_cpu_seconds() - cpu0;
    progress.finish().await;
    let outcomes = outcomes?;

    let stored_docs = match &embedded {
        Some(t) => Some(
            t.count_documents_under_home(&plan.user, &cell.folder)
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
            target: report::TargetRecord {
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
    if !plan.quiet {
        let text = report::summary_text(&result);
        let tail = format!("  results: {}\n", result_path.display());
        if plan.json {
            eprint!("{text}{tail}");
        } else {
            print!("{text}{tail}");
        }
    }
    drop(embedded);
    if let Some(reason) = &result.aborted {
        bail!(
            "the repository rejected the documents: {reason}\n  check --profile ({}) against the repository's content model, and --parent; partial results: {}",
            plan.profile.source,
            result_path.display()
        );
    }
    let outcome = if result.docs_failed == 0 && !live.stop.load(Ordering::Relaxed) {
        Outcome::Success
    } else {
        Outcome::Failures
    };
    Ok((outcome, result))
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)?;
    Ok(())
}

fn rand_u64() -> u64 {
    let u = uuid::Uuid::new_v4();
    let b = u.as_bytes();
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// The progress bar: reads the live counters on a timer (never per upload). Hidden when
/// stderr is not a terminal or with --quiet.
struct Progress {
    task: Option<tokio::task::JoinHandle<()>>,
    stop: Arc<tokio::sync::Notify>,
}

impl Progress {
    fn start(total: u64, quiet: bool, live: Arc<Live>) -> Progress {
        let stop = Arc::new(tokio::sync::Notify::new());
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { task: None, stop };
        }
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} docs  {per_sec}  ETA {eta}  {msg}")
                .expect("template")
                .progress_chars("=> "),
        );
        let s = stop.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = s.notified() => break,
                }
                bar.set_position(live.done.load(Ordering::Relaxed));
                let failed = live.failed.load(Ordering::Relaxed);
                if failed > 0 {
                    bar.set_message(format!("{failed} failed"));
                }
            }
            bar.finish_and_clear();
        });
        Progress {
            task: Some(task),
            stop,
        }
    }

    async fn finish(self) {
        self.stop.notify_one();
        if let Some(t) = self.task {
            let _ = t.await;
        }
    }
}

async fn target_command(a: TargetArgs) -> Result<Outcome> {
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
            target::model::ACME_MODEL.to_string(),
            "built-in acme-model.xml".to_string(),
        )]
    } else {
        a.models
            .iter()
            .map(|m| target::model::Dictionary::load_file(m))
            .collect::<Result<_>>()?
    };
    for (v, flag) in [
        (a.service_time_ms, "--service-time-ms"),
        (a.cost_per_mib_ms, "--cost-per-mib-ms"),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{flag} {v}: must be a number of milliseconds >= 0");
        }
    }
    let cfg = target::TargetConfig {
        http_listen: Some(a.listen),
        https_listen: a.tls_listen,
        tls: match (&a.cert, &a.key) {
            (Some(c), Some(k)) => target::TlsSource::Files {
                cert: c.clone(),
                key: k.clone(),
            },
            _ => target::TlsSource::Generate,
        },
        data_dir: a.data_dir.clone(),
        node_name: a.node_name.clone(),
        users,
        models,
        perf: target::PerfModel {
            service_time: Duration::from_secs_f64(a.service_time_ms / 1000.0),
            per_mib: Duration::from_secs_f64(a.cost_per_mib_ms / 1000.0),
            max_concurrent: a.max_concurrent,
        },
    };
    let handle = target::start(cfg).await?;
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
