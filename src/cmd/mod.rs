//! The commands (`run`, `sweep`, `report`, `compare`, `verify`, `cleanup`, `target`) and
//! what they share: credentials (prompting only on a terminal), signal handling, the
//! `--fail-if` verdict on finished results. The progress display is `progress`, the live page
//! `dashboard`.
//! Each command parses, builds its validated plan, calls the engine or the library modules,
//! prints, and maps the result to an [`Outcome`]; none loops over workers
//! or cells.

pub mod cleanup;
pub mod compare;
pub mod corpus;
pub mod docs;
pub mod estimate;
pub mod merge;
pub mod report;
pub mod run;
pub mod sweep;
pub mod target;
pub mod verify;

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result, bail};

use crate::engine::{LiveCounters, RunObserver, Sidecars, SweepEnd, SweepJob};
use crate::plan::CommonPlan;
use crate::progress::Progress;
use crate::protocol::Secret;

/// The program: parse the command line, start the async runtime, run the command; returns the
/// exit code. Here, not in `main.rs`, so that the whole async engine (the future `execute`
/// returns, and every state machine inside it) is compiled once, in this crate: polled from
/// the binary, it was compiled a second time there, a quarter of a cold build's tail.
pub fn main() -> i32 {
    use clap::Parser;
    let cli = crate::cli::Cli::parse();
    if let Err(e) = crate::host::check_upload_runtimes() {
        eprintln!("error: {e}");
        return 2;
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 2;
        }
    };
    let code = match rt.block_on(execute(cli)) {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    let code = match crate::console::stdout_failed() {
        Some(e) if code != 2 => {
            eprintln!("error: {e}");
            2
        }
        _ => code,
    };
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}

/// How a command ended, short of a setup error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything succeeded.
    Success,
    /// Finished, but some uploads failed.
    Failures,
    /// Finished (results written), but a `--fail-if` threshold was crossed.
    ThresholdCrossed,
    /// Stopped by SIGINT/SIGTERM after flushing results.
    Interrupted,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Success => 0,
            Outcome::Failures => 1,
            Outcome::ThresholdCrossed => 3,
            Outcome::Interrupted => 130,
        }
    }
}

/// Runs one parsed command line.
pub async fn execute(cli: crate::cli::Cli) -> Result<Outcome> {
    use crate::cli::Command;
    match cli.command {
        Command::Run(args) => run::run_command(&args).await.map(|(o, _)| o),
        Command::Sweep(args) => sweep::sweep_command(&args).await.map(|(o, _)| o),
        Command::Report(args) => report::report_command(&args),
        Command::Merge(args) => merge::merge_command(&args),
        Command::Compare(args) => compare::compare_command(&args),
        Command::Corpus(args) => corpus::corpus_command(&args),
        Command::Estimate(args) => estimate::estimate_command(&args),
        Command::Verify(args) => verify::verify_command(&args).await,
        Command::Cleanup(args) => cleanup::cleanup_command(&args).await,
        Command::Target(args) => target::target_command(args).await,
        Command::Completions(args) => docs::completions(args.shell),
        Command::Man => docs::man(),
    }
}

/// The password: --password-file, INGESTBENCH_PASSWORD, or a hidden prompt on a terminal.
pub fn password(user: &str, password_file: Option<&Path>) -> Result<Secret> {
    if let Some(f) = password_file {
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
        let p = rpassword::prompt_password(format!("Password for {user}: "))
            .context("reading the password from the terminal")?;
        return Ok(Secret::new(p));
    }
    bail!(
        "no password for --user {user}: set INGESTBENCH_PASSWORD or use --password-file (no terminal to prompt on)"
    )
}

/// Whether a password was given (a file or the environment) rather than left to a prompt.
fn password_given(plan: &CommonPlan) -> bool {
    plan.password_file.is_some() || std::env::var_os("INGESTBENCH_PASSWORD").is_some()
}

/// The password for the embedded target: the one given, else `admin` (no prompt: the target
/// is ours and starts with whatever we tell it).
pub fn embedded_password(plan: &CommonPlan) -> Result<Secret> {
    if password_given(plan) {
        password(&plan.user, plan.password_file.as_deref())
    } else {
        Ok(Secret::new("admin"))
    }
}

/// The `--fail-if` verdict on finished results (already written): each crossing named on
/// stderr, and exit 3 in place of 0 or 1. An interrupted command keeps its 130.
pub fn gate(outcome: Outcome, crossed: &[crate::threshold::Crossing]) -> Outcome {
    if outcome == Outcome::Interrupted || crossed.is_empty() {
        return outcome;
    }
    for c in crossed {
        eprintln!("threshold crossed: {c}");
    }
    eprintln!(
        "{} threshold crossing{}: exit 3",
        crossed.len(),
        if crossed.len() == 1 { "" } else { "s" }
    );
    Outcome::ThresholdCrossed
}

pub fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)?;
    Ok(())
}

pub fn rand_u64() -> u64 {
    crate::fixtures::random_u64()
}

/// SIGINT/SIGTERM: workers stop before their next upload, in-flight uploads finish, results
/// and the manifest are flushed, the command exits 130. A second signal exits at once.
pub fn watch_signals(live: Arc<LiveCounters>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let mut first = true;
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async {
                    match term.as_mut() {
                        Some(t) => { t.recv().await; }
                        None => std::future::pending::<()>().await,
                    }
                } => {}
            }
            if !first {
                eprintln!("interrupted again: exiting now");
                std::process::exit(130);
            }
            first = false;
            live.interrupted.store(true, Ordering::Relaxed);
            live.stop.store(true, Ordering::Relaxed);
            eprintln!(
                "\ninterrupted: finishing the uploads in flight, then writing results (interrupt again to quit at once)"
            );
        }
    })
}

/// The sidecars (`--jtl`, `--metrics-listen`) set up before anything is written, so one that
/// cannot be used fails first; says where the metrics are served.
pub async fn start_sidecars(common: &crate::plan::CommonPlan) -> Result<Sidecars> {
    let sidecars = Sidecars::start(common).await?;
    if let (Some(addr), false) = (&common.metrics_listen, common.quiet) {
        eprintln!("  metrics for Prometheus: http://{addr}/metrics");
    }
    Ok(sidecars)
}

/// Runs a job through the engine with signal handling and the progress display, then
/// finishes the sidecars, whatever stopped the runs.
pub async fn drive(
    job: SweepJob<'_>,
    obs: &mut dyn RunObserver,
    progress: &Progress,
    sidecars: Sidecars,
) -> Result<SweepEnd> {
    let live = job.live.clone();
    let signals = watch_signals(live.clone());
    let end = crate::engine::run_sweep(job, obs).await;
    progress.finish().await;
    signals.abort();
    sidecars
        .finish(live.interrupted.load(std::sync::atomic::Ordering::Relaxed))
        .await?;
    end
}
