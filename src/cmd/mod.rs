//! The commands (`run`, `sweep`, `report`, `compare`, `verify`, `cleanup`, `target`) and
//! what they share: credentials (prompting only on a terminal), signal handling, the progress
//! display, the `--fail-if` verdict on finished results.
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
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::engine::{LiveCounters, RunObserver, Sidecars, SweepEnd, SweepJob};
use crate::plan::CommonPlan;
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

/// A plain progress bar for `total` items (hidden when quiet or not on a terminal).
pub fn bar(total: u64, quiet: bool, what: &str) -> Option<indicatif::ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(total);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {prefix} [{elapsed_precise}] {wide_bar} {pos}/{len}  ETA {eta}",
        )
        .expect("template")
        .progress_chars("=> "),
    );
    b.set_prefix(what.to_string());
    Some(b)
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

/// `--dashboard`: the live page, bound before anything is written (a taken port fails
/// first, exit 2); its URL goes to stderr even with --quiet (it is how a free port is found).
pub async fn start_dashboard(
    common: &crate::plan::CommonPlan,
    sidecars: &Sidecars,
) -> Result<Option<crate::dashboard::Dashboard>> {
    let (Some(addr), Some(metrics)) = (common.dashboard, sidecars.metrics()) else {
        return Ok(None);
    };
    let d = crate::dashboard::Dashboard::bind(addr, metrics, common.metrics_on_dashboard()).await?;
    eprintln!("  live page: {}", d.url());
    if !addr.ip().is_loopback() && !common.quiet {
        eprintln!(
            "  (open to whoever reaches {addr}: the page shows the numbers, never the URL, user or password)"
        );
    }
    Ok(Some(d))
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

/// A rate with the precision a reader can use: `2,268 docs/s`, `22.7 docs/s`, `0.84 docs/s`.
pub fn human_rate(per_sec: f64) -> String {
    if !per_sec.is_finite() {
        return "- docs/s".into();
    }
    if per_sec >= 100.0 {
        let n = per_sec.round() as u64;
        let digits = n.to_string();
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{grouped} docs/s")
    } else if per_sec >= 10.0 {
        format!("{per_sec:.1} docs/s")
    } else {
        format!("{per_sec:.2} docs/s")
    }
}

/// The progress bar: reads the live counters on a timer (never per upload), with the ETA
/// and its interval (`analysis::eta`), the moving and the whole-run rate. Hidden when stderr
/// is not a terminal or with --quiet.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    live: Arc<LiveCounters>,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    stop: Arc<tokio::sync::Notify>,
}

/// `ETA 3m10s (2m40s–3m55s) · 412 docs/s now, 398 docs/s overall` (no ETA without a total).
fn eta_line(tracker: &crate::analysis::eta::Tracker, t: f64, total: u64) -> String {
    use crate::analysis::eta;
    let seen = tracker.observed(t, total as f64, None);
    let e = eta::eta(&seen);
    let overall = if seen.elapsed_s > 0.0 {
        seen.docs.done / seen.elapsed_s
    } else {
        f64::NAN
    };
    let now = if seen.window_s > 0.0 {
        seen.window_docs / seen.window_s
    } else {
        f64::NAN
    };
    let rates = format!("{} now, {} overall", human_rate(now), human_rate(overall));
    if total == 0 {
        return rates;
    }
    let stalled = match e {
        Some(e) if e.stalled_s > 0.0 => format!(" · stalled {}", eta::short_duration(e.stalled_s)),
        _ => String::new(),
    };
    format!("{} · {rates}{stalled}", eta::eta_text(e.as_ref()))
}

impl Progress {
    pub fn start(total: u64, quiet: bool, live: Arc<LiveCounters>) -> Progress {
        live.total.store(total, Ordering::Relaxed);
        let stop = Arc::new(tokio::sync::Notify::new());
        if quiet || !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                live,
                task: std::sync::Mutex::new(None),
                stop,
            };
        }
        // Colours on a terminal only, and never with NO_COLOR (https://no-color.org).
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let (spinner, failed) = if colour {
            ("{spinner:.green}", "{prefix:.red}")
        } else {
            ("{spinner}", "{prefix}")
        };
        // 0: no total known in advance (steady-state runs, --precision): a counter.
        let (bar, template) = if total == 0 {
            (
                indicatif::ProgressBar::no_length(),
                format!(
                    "{spinner} [{{elapsed_precise}}] {{pos}} docs  {{eta_line}}  {failed} {{msg}}"
                ),
            )
        } else {
            (
                indicatif::ProgressBar::new(total),
                format!(
                    "{spinner} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} docs  {{eta_line}}  {failed} {{msg}}"
                ),
            )
        };
        // Computed once a second by the timer below; the template only reads it.
        let shown_eta = Arc::new(std::sync::Mutex::new(String::new()));
        let read_eta = shown_eta.clone();
        bar.set_style(
            indicatif::ProgressStyle::with_template(&template)
                .expect("template")
                .with_key(
                    "eta_line",
                    move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        if let Ok(text) = read_eta.lock() {
                            let _ = w.write_str(&text);
                        }
                    },
                )
                .progress_chars("=> "),
        );
        let s = stop.clone();
        let shown = bar.clone();
        let counters = live.clone();
        let task = tokio::spawn(async move {
            let live = counters;
            let t0 = tokio::time::Instant::now();
            let mut tracker = crate::analysis::eta::Tracker::new(30.0, 0.0);
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            let mut n = 0u64;
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = s.notified() => break,
                }
                let done = live.done.load(Ordering::Relaxed);
                bar.set_position(done);
                let t = t0.elapsed().as_secs_f64();
                tracker.observe(t, done as f64);
                if n.is_multiple_of(10) {
                    let line = eta_line(&tracker, t, live.total.load(Ordering::Relaxed));
                    if let Ok(mut e) = shown_eta.lock() {
                        *e = line;
                    }
                }
                n += 1;
                // An auto pilot's estimate so far (set every few seconds by its watcher).
                if let Some(note) = live.note.lock().ok().and_then(|mut n| n.take()) {
                    bar.set_message(note);
                }
                let failed = live.failed.load(Ordering::Relaxed);
                bar.set_prefix(if failed > 0 {
                    format!("{failed} failed")
                } else {
                    String::new()
                });
            }
            bar.finish_and_clear();
        });
        Progress {
            bar: Some(shown),
            live,
            task: std::sync::Mutex::new(Some(task)),
            stop,
        }
    }

    /// What is being done now (called between runs, never per upload); the live page shows
    /// it too.
    pub fn set_message(&self, msg: String) {
        self.set_stage(msg.clone());
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    /// Which cell and run is under way, for the live page only (between runs).
    pub fn set_stage(&self, stage: String) {
        if let Ok(mut s) = self.live.stage.lock() {
            *s = stage;
        }
    }

    /// Prints a line above the bar (or to stderr when there is none).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Stops and clears the bar (again: nothing).
    pub async fn finish(&self) {
        self.stop.notify_one();
        let task = self.task.lock().map(|mut t| t.take()).unwrap_or(None);
        if let Some(t) = task {
            let _ = t.await;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates_read_with_sensible_precision() {
        assert_eq!(super::human_rate(226.8435), "227 docs/s");
        assert_eq!(super::human_rate(22_684.35), "22,684 docs/s");
        assert_eq!(super::human_rate(1_234_567.0), "1,234,567 docs/s");
        assert_eq!(super::human_rate(22.684), "22.7 docs/s");
        assert_eq!(super::human_rate(0.8412), "0.84 docs/s");
        assert_eq!(super::human_rate(f64::NAN), "- docs/s");
    }
}
