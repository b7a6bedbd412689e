//! ingestbench: measure how fast documents can be pushed into a content repository.
//!
//! `execute(cli)` is the whole tool; `main` only builds the runtime and maps the outcome to
//! an exit code, so tests drive everything in-process. The commands (`cmd`) turn validated
//! plans (`plan`) into calls of one engine (`engine`), which uploads through a repository
//! API (`protocol`) over an access path (`transport`) and hands each run to the writers
//! (`results`, `report`); `compare` sets two results side by side and `threshold` checks
//! `--fail-if` against them; `emulator` is the embedded reference target.
//!
//! The layers, bottom first; a module imports only from the lines above its own (no import
//! circle: `scripts/modgraph.py`):
//!
//! 1. `timefmt`, `protocol_kind`, `host`: dates, the names of the APIs and auth modes, the
//!    host's facts;
//! 2. `fixtures`: the documents and their metadata;
//! 3. `metrics`: recorders, classified errors, the servers' usage, resource demands;
//! 4. `transport`: access methods, clients, the upload fast path;
//! 5. `protocol`: the repository APIs over a transport;
//! 6. `emulator`: the embedded reference target;
//! 7. `corpus`: real corpora and each repository's rules for them;
//! 8. `records`: what a measurement writes (`plan.json`, `runs/*.json`), data only;
//! 9. `analysis`: models over the records, pure;
//! 10. `results`: the results directory (writer, loader, summary, a run's `result.json`);
//! 11. `verify`, `compare`: reading documents back; two results side by side;
//! 12. `threshold`: `--fail-if` against results or a comparison;
//! 13. `plan`: validated plans from the options of `run` and `sweep`;
//! 14. `engine`: sessions, sweeps, cells, workers and their sidecars;
//! 15. `report`: the exporters;
//! 16. `cli`, `cmd`: the command line, and one file per command wiring the rest.

/// `eprintln!` and `eprint!` for the whole crate, shadowing std's: a message that cannot be
/// written (stderr on a full disk, a closed pipe) is dropped instead of panicking, because with
/// `panic = "abort"` std's panic there killed a run that was stopping cleanly (SIGABRT, exit
/// 134, instead of exit 2). Defined before the modules, so every module's messages use it.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` and `print!` for the whole crate, shadowing std's: command output goes through
/// [`out`], so a reader that went away (`| head`) ends it quietly, and any other failure (a
/// full disk under `> file`) makes the exit code 2 instead of a panic, never 0 for a result
/// cut short.
macro_rules! println {
    () => {
        $crate::out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::out(format_args!($($arg)*))
    };
}

pub mod analysis;
pub mod cli;
pub mod cmd;
pub mod compare;
pub mod corpus;
pub mod emulator;
pub mod engine;
pub mod fixtures;
pub mod host;
pub mod metrics;
pub mod plan;
pub mod protocol;
pub mod protocol_kind;
pub mod records;
pub mod report;
pub mod results;
pub mod threshold;
pub mod timefmt;
pub mod transport;
pub mod verify;

use anyhow::Result;

use cli::{Cli, Command};
pub use cmd::run::run_command;
pub use cmd::sweep::sweep_command;

/// The program: parse the command line, start the async runtime, run the command; returns the
/// exit code. Here, not in `main.rs`, so that the whole async engine (the future `execute`
/// returns, and every state machine inside it) is compiled once, in this crate: polled from
/// the binary, it was compiled a second time there, a quarter of a cold build's tail.
pub fn main() -> i32 {
    use clap::Parser;
    let cli = Cli::parse();
    if let Err(e) = host::check_upload_runtimes() {
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
    let code = match STDOUT_FAILED.get() {
        Some(e) if code != 2 => {
            eprintln!("error: {e}");
            2
        }
        _ => code,
    };
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}

/// The first failure to write command output, other than a reader that went away.
static STDOUT_FAILED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Writes command output to stdout (what the crate's `print!`/`println!` call): a closed pipe
/// ends the output quietly; another failure is kept, and `main` exits 2 naming it.
#[doc(hidden)]
pub fn out(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|()| o.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let _ = STDOUT_FAILED.set(format!("cannot write to standard output: {e}"));
    }
}

/// A reqwest client builder with the project's one TLS implementation installed first.
/// Every reqwest client is made from this: reqwest is built without a crypto provider of its
/// own, so the process has one, `transport::tls_provider()`, as the upload fast path and the
/// embedded target have.
pub fn reqwest_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder()
}

/// Makes `transport::tls_provider()` the process's rustls crypto provider (idempotent; a
/// provider installed earlier by an embedding program is kept).
fn install_tls_provider() {
    let _ = transport::tls_provider().install_default();
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

pub async fn execute(cli: Cli) -> Result<Outcome> {
    match cli.command {
        Command::Run(args) => run_command(&args).await.map(|(o, _)| o),
        Command::Sweep(args) => sweep_command(&args).await.map(|(o, _)| o),
        Command::Report(args) => cmd::report::report_command(&args),
        Command::Merge(args) => cmd::merge::merge_command(&args),
        Command::Compare(args) => cmd::compare::compare_command(&args),
        Command::Corpus(args) => cmd::corpus::corpus_command(&args),
        Command::Estimate(args) => cmd::estimate::estimate_command(&args),
        Command::Verify(args) => cmd::verify::verify_command(&args).await,
        Command::Cleanup(args) => cmd::cleanup::cleanup_command(&args).await,
        Command::Target(args) => cmd::target::target_command(args).await,
        Command::Completions(args) => cmd::docs::completions(args.shell),
        Command::Man => cmd::docs::man(),
    }
}
