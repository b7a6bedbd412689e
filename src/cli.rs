//! Command-line interface (clap derive): the command line and every subcommand's arguments.
//! Doc comments are the `--help` text; units are in value names. `run` and `sweep` take
//! their options as the plans define them (`plan::options`), so the plans never import this
//! file; the other commands' arguments are here, one struct each.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::plan::options::{EXIT_CODES, RunArgs, SweepArgs};
use crate::protocol_kind::ProtocolKind;

/// Measure how fast documents can be pushed into a content repository (Alfresco REST v1,
/// Liferay headless-delivery v1.0, CMIS 1.1 browser binding), with how many parallel
/// importers, and what the access path costs.
#[derive(Debug, Parser)]
#[command(name = "ingestbench", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Upload N documents with T parallel workers, R times, and report docs/sec, MB/s,
    /// latency percentiles and errors. With no --url, an embedded reference target is
    /// started on a free loopback port.
    Run(RunArgs),
    /// Sweep access methods × thread counts × size classes, R runs each, and write
    /// summary.json, cells.csv, report.md and report.html.
    Sweep(SweepArgs),
    /// Re-render the reports of a sweep directory from its saved results.
    Report(ReportArgs),
    /// Compare two results (run or sweep directories, or their summary.json / result.json)
    /// cell by cell: the change in docs/sec, MB/s and p95/p99 latency with its 95 % interval,
    /// called slower or faster only when significant. Text, --json or --markdown (for a
    /// pull-request comment); --fail-if 'slower>5%' exits 3 on a significant regression.
    Compare(CompareArgs),
    /// Merge the results of the shards of one plan (run-<plan-id>-shard-<K>of<N> or
    /// sweep-<plan-id>-shard-<K>of<N>) into the result one injector would have written for
    /// the same uploads: counts and bytes summed,
    /// each run from the first shard's start to the last shard's end, HDR histograms merged
    /// (never percentiles averaged), manifests concatenated. A missing or unfinished shard
    /// is an error naming it. verify, cleanup and report work on the merged directory.
    Merge(MergeArgs),
    /// Describe a corpus: a directory of real files (content sniffed, Alfresco bulk-import
    /// shadow metadata and version files read) or a CSV listing exported from the source
    /// system. Writes corpus.json: counts, bytes, size histogram and percentiles, types,
    /// folders, versions per document.
    Corpus(CorpusArgs),
    /// Estimate how long importing a corpus takes, with a 95 % interval, from a pilot import
    /// (`run --corpus DIR --sample N --runs 2`) or from size-class sweeps (`sweep --corpus`).
    Estimate(EstimateArgs),
    /// Read back every document a run or sweep uploaded (by id, from its manifest) and check
    /// it: exists, name, size, SHA-256 of the content, the metadata sent; and that the run
    /// folders hold nothing else. Exit 1 when anything is missing, corrupt or duplicated.
    Verify(VerifyArgs),
    /// Delete what a run or sweep created: its own folder `ingestbench/<id>` below the parent
    /// (Alfresco permanently), and nothing else. Asks first; --yes for scripts.
    Cleanup(CleanupArgs),
    /// Serve the embedded reference target (Alfresco REST v1 and Liferay headless-delivery
    /// emulation, durable store).
    Target(TargetArgs),
    /// Print a shell completion script, e.g.
    /// `ingestbench completions bash > /etc/bash_completion.d/ingestbench`,
    /// `ingestbench completions zsh > "${fpath[1]}/_ingestbench"`,
    /// `ingestbench completions fish > ~/.config/fish/completions/ingestbench.fish`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), e.g.
    /// `ingestbench man > /usr/local/share/man/man1/ingestbench.1` then `man ingestbench`,
    /// or `ingestbench man | man -l -`.
    Man,
}

#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// The shards' results directories, all N: results/run-<plan-id>-shard-<K>of<N>, or
    /// results/sweep-<plan-id>-shard-<K>of<N> for a sharded sweep.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// The merged results directory to write (must not exist yet).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

#[derive(Debug, Args, Clone)]
#[command(after_help = EXIT_CODES)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub results: RecordedTarget,

    /// Documents read back at once.
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub concurrency: u64,

    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args, Clone)]
#[command(after_help = EXIT_CODES)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub results: RecordedTarget,

    /// Delete without asking (required when not on a terminal).
    #[arg(long, short)]
    pub yes: bool,
}

/// A results directory and how to reach the repository it records (`verify`, `cleanup`).
#[derive(Debug, Args, Clone)]
pub struct RecordedTarget {
    /// A results directory: results/run-<id> or results/sweep-<id>.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Repository URL (default: the one recorded in the results).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// CA certificate (PEM) for an https:// URL.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// For a sweep: the access method to go through (default: the first that is not the
    /// embedded target).
    #[arg(long, value_name = "NAME")]
    pub access_method: Option<String>,

    /// User (default: the one recorded in the results).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,

    /// File whose first line is the password (else INGESTBENCH_PASSWORD, else a prompt).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "A listing is CSV with a header naming a `size` column (bytes) and optionally `path`\nand `mime`. Nothing is uploaded; the files are only read for their first 512 bytes.\n\nExit codes: 0 described (problems are counted in corpus.json) and, with --check, nothing\nflagged; 1 --check flagged something (one line per rule); 2 unreadable path or listing."
)]
pub struct CorpusArgs {
    /// A directory of real files, or a CSV listing of them.
    #[arg(value_name = "DIR|LISTING.csv")]
    pub path: PathBuf,

    /// Where to write the description.
    #[arg(long, default_value = "corpus.json", value_name = "FILE")]
    pub output: PathBuf,

    /// Print the description as JSON on stdout (the summary goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Pre-flight: check every document, version, folder and shadow metadata file against
    /// the rules of this repository (names, sizes, metadata, versions, fan-out; each rule
    /// cited from the vendor's source), before any upload. Counted in corpus.json.
    #[arg(long, value_enum, value_name = "REPOSITORY")]
    pub check: Option<ProtocolKind>,

    /// With --check: the metadata profile shadow metadata is checked against (default: the
    /// repository's, as for `run`).
    #[arg(long, value_name = "NAME|FILE", requires = "check")]
    pub profile: Option<String>,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "From a pilot import (a random slice of the corpus imported as the import will be): the\npilot's cost per request from its windows, the import's requests and bytes, the pilot's\nstart and tail once; a pilot run twice also says how far the server moved between its\nruns (the level is then the last run's) and carries growth both runs confirm. The 95 %\ninterval covers the fit, the import's own noise and a model error (calibrated on real\nservers: 15 % for a pilot of 10 s or less, falling towards 5 % for longer ones, see\n--sample-time), widened by one run's swing (the move between the runs over √2). A risk the pilot could\nnot rule out widens the side it acts on: growth the upper side, a young server both.\nA local server under 5 minutes old, or a JVM that has used under 100 CPU seconds, is said:\nit may still change its pace after the pilot.\nFrom size-class sweeps: per-document cost a + c x bytes at each method, policy and thread\ncount; the corpus takes N x a + c x B, plus growth with the documents stored over the\nimport's fill; a 2.5 % model error. See docs/estimate.md.\n\nExit codes: 0 estimated, 2 unreadable corpus.json or results directory, or a pilot too\nshort to read."
)]
pub struct EstimateArgs {
    /// The corpus: its corpus.json (from `ingestbench corpus`), or a directory or listing,
    /// described on the spot.
    #[arg(long, value_name = "CORPUS.json|DIR|LISTING.csv")]
    pub corpus: PathBuf,

    /// Results directories to estimate from: a pilot's (results/run-<id>) or sweeps'
    /// (results/sweep-<id>).
    #[arg(value_name = "RESULTS_DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// Where to write estimate.json (default: in the first results directory).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print estimate.json on stdout (the table goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Documents the repository will already hold when the import starts, beyond what it
    /// held when the sample was measured (a repository that slows as it fills is slower
    /// still with 10 TB in it).
    /// Default: the import goes into the repository the measurement filled, so it starts
    /// with what the measurement left (printed); 0 for a repository of its own.
    #[arg(long, value_name = "N")]
    pub existing_docs: Option<u64>,

    /// The team's window for the import: a length (`48h`, `2d`) or a start and end on the
    /// weekly clock (`"Sat 06:00..Mon 06:00"`). Adds the cutover plan: for every option
    /// measured, and with its bottleneck relieved where that is a conclusion, whether it
    /// finishes inside the window, with what probability (from the interval), the margin,
    /// and what to add first where it does not.
    #[arg(long, value_name = "48h|\"Sat 06:00..Mon 06:00\"")]
    pub window: Option<String>,

    /// Office hours inside the window, when users keep working and the import must hold
    /// their objective: `"Sat 08:00-12:00"`, `"Mon-Fri 08:00-18:00"` (comma-separated). The
    /// import runs at --office-rate in them and at full speed outside.
    #[arg(long, value_name = "DAYS HH:MM-HH:MM", requires_all = ["window", "office_rate"])]
    pub office_hours: Option<String>,

    /// The import's rate in office hours: documents per second, or a rates sweep's results
    /// directory (`sweep --rates R1,R2 --readers N --reader-slo MS`), whose lowest rate that
    /// held the readers' p99 is taken.
    #[arg(
        long,
        value_name = "DOCS_PER_S|RATES_SWEEP_DIR",
        requires = "office_hours"
    )]
    pub office_rate: Option<String>,
}

pub const COMPARE_HELP: &str = "\
How changes are judged: cells are matched by method, connection, size and threads (a run's
one cell is named `run`, so two runs match whatever URL each measured). Each change is
(candidate - baseline) / baseline with a 95 % Welch interval over the runs of each side
(unpaired: the two results were measured at different times). It reads \"slower by 12.4 % ±
3.1 %\" (or faster) only when the interval excludes 0; \"no significant difference\" when the
interval lies within ±5 %; else \"too noisy to tell\". Latency is the mean of each run's own
p95/p99, with their run-to-run spread. A summary.json read on its own (not in its sweep
directory) stores no per-run MB/s or percentiles: those are compared as pooled values without
an interval and never called significant; a side with a single run gets no interval either.

Thresholds (--fail-if, repeatable):
  slower>PCT      docs/sec significantly lower than the baseline's, by more than PCT %
                  (the estimate; its interval must exclude 0: too noisy to tell passes)
  p95_slower>PCT  p95 (p99_slower: p99) latency significantly higher by more than PCT %
  docs_per_sec<N, mb_per_sec<N, p50_ms>N ... p99_ms>N, max_ms>N, error_pct>N
                  as for run and sweep, checked against the candidate's cells

Exit codes:
  0  compared, no threshold crossed
  2  usage error: an unreadable or unrecognised result, no cell in common, a malformed
     --fail-if expression (named)
  3  a --fail-if threshold was crossed (each crossing named on stderr)";

#[derive(Debug, Args, Clone)]
#[command(after_help = COMPARE_HELP)]
pub struct CompareArgs {
    /// The reference results: results/run-<id>, results/sweep-<id>, or a summary.json or
    /// result.json.
    #[arg(value_name = "BASELINE")]
    pub baseline: PathBuf,

    /// The results judged against the baseline (the same forms).
    #[arg(value_name = "CANDIDATE")]
    pub candidate: PathBuf,

    /// Print the comparison as JSON on stdout.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,

    /// Print a Markdown table on stdout (for a pull-request or merge-request comment), with
    /// the thresholds crossed above it.
    #[arg(long)]
    pub markdown: bool,

    /// Exit 3 when this threshold is crossed, e.g. 'slower>5%' (see below). Repeatable.
    #[arg(long, value_name = "EXPR")]
    pub fail_if: Vec<String>,
}

/// Re-render a sweep's reports from its saved run results.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// A sweep results directory (with plan.json and runs/).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "The target answers under /alfresco/api/-default-/public/... like Alfresco REST v1.\nEvery response carries x-ingestbench-node: <node name>.\n\nExit codes: 0 stopped cleanly, 2 configuration error (bad flag, port in use, unreadable file)."
)]
pub struct TargetArgs {
    /// HTTP listen address (port 0 = a free port).
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,

    /// Also serve HTTPS here (port 0 = a free port).
    #[arg(long, value_name = "ADDR:PORT")]
    pub tls_listen: Option<SocketAddr>,

    /// Server certificate (PEM) for HTTPS; default: generate a local CA and a certificate
    /// for localhost, 127.0.0.1 and ::1.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,

    /// Private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,

    /// Where to write the generated CA certificate (default: <data-dir>/ca.pem).
    #[arg(long, value_name = "FILE")]
    pub ca_out: Option<PathBuf>,

    /// Write the chosen HTTP port here (and the HTTPS port on a second line), for scripts.
    #[arg(long, value_name = "FILE")]
    pub port_file: Option<PathBuf>,

    /// Store directory (SQLite + content files); several targets may share one.
    #[arg(long, default_value = "ingestbench-target-data", value_name = "DIR")]
    pub data_dir: PathBuf,

    /// Name of this node, sent in the x-ingestbench-node response header.
    #[arg(long, default_value = "node1", value_name = "NAME")]
    pub node_name: String,

    /// Accepted user as NAME:PASSWORD (repeatable; default admin:admin).
    #[arg(long = "user", value_name = "NAME:PASSWORD")]
    pub users: Vec<String>,

    /// Content model XML to validate against (repeatable; default: the acme model).
    #[arg(long = "model", value_name = "FILE")]
    pub models: Vec<PathBuf>,

    /// Service time of every request (performance model).
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub service_time_ms: f64,

    /// Extra service time per MiB of request body.
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub cost_per_mib_ms: f64,

    /// Extra service time per 1,000 requests already served: a repository that slows down
    /// as it grows (for testing drift detection).
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub growth_ms_per_1000: f64,

    /// A step: from request N on, each takes --step-ms longer (a cache that stops holding the
    /// working set, a heap's threshold), for testing the estimate's growth shapes. 0: never.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub step_after: u64,

    /// What each request costs more from --step-after on.
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub step_ms: f64,

    /// A cold start: the first N requests each take --cold-extra-ms longer (a JVM's JIT,
    /// empty caches), for testing warm-up.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub cold_requests: u64,

    /// Extra service time of each cold request.
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub cold_extra_ms: f64,

    /// Spread each request's service time uniformly over ± this percentage (the mean, hence
    /// the known capacity, is unchanged), for testing run-to-run noise.
    #[arg(long, default_value_t = 0.0, value_name = "PCT")]
    pub jitter_pct: f64,

    /// Contention σ of the Universal Scalability Law: a request arriving with n requests in
    /// flight costs 1 + σ(n−1) + κn(n−1) times its service time (0 = none).
    #[arg(long, default_value_t = 0.0, value_name = "SIGMA")]
    pub contention: f64,

    /// Coherency κ of the Universal Scalability Law (see --contention): throughput peaks at
    /// √((1−σ)/κ) requests in flight and then falls (0 = none).
    #[arg(long, default_value_t = 0.0, value_name = "KAPPA")]
    pub coherency: f64,

    /// Most requests processed at once; the rest queue (0 = unlimited).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub max_concurrent: usize,

    /// CPU time each upload spends on a core, hashing (real work, not a sleep): a known CPU
    /// demand per document (0 = none).
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    pub cpu_per_doc_ms: f64,

    /// Run this target under a CPU quota of this many CPUs (e.g. 0.5), as a container limit
    /// would: it moves itself into a new cgroup (v1 `cpu` controller under /sys/fs/cgroup/cpu,
    /// else v2 `cpu.max`), removed again at exit. Exit 2 naming the cause when neither can
    /// be written.
    #[arg(long, value_name = "CPUS")]
    pub node_cpus: Option<f64>,

    /// Lifetime of Liferay OAuth2 tokens issued by /o/oauth2/token.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    pub token_lifetime_s: f64,

    /// Fault injection: share of uploads answered 503 without storing anything.
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    pub fault_5xx: f64,

    /// Fault injection: share of uploads stored, then answered 500 (ambiguous).
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    pub fault_500_after_commit: f64,

    /// Fault injection: share of uploads stored, then answered only after --fault-stall-ms.
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    pub fault_stall: f64,

    /// How long a stalled answer is held.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    pub fault_stall_ms: u64,

    /// Fault injection: share of uploads stored, then the connection dropped unanswered.
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    pub fault_reset: f64,

    /// Fault injection, once: upload number --stall-after (0-based) holds its capacity slot
    /// this many ms longer (a pause such as a garbage collection), for testing that paced
    /// runs count response time from when documents were due.
    #[arg(long, default_value_t = 0, value_name = "MS", hide = true)]
    pub stall_once_ms: u64,

    /// Which upload (0-based) --stall-once-ms stalls.
    #[arg(long, default_value_t = 0, value_name = "N", hide = true)]
    pub stall_after: u64,

    /// Bind addresses other than loopback (the target has test users; think twice).
    #[arg(long)]
    pub allow_remote: bool,
}
