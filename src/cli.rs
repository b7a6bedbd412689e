//! Command-line interface (clap derive). Doc comments are the `--help` text; units are in
//! value names. These derive structs are the options the plans are built from, in one
//! conversion each (`plan`: `CommonPlan`, `RunPlan`, `SweepPlanSpec`), nowhere else; a
//! resumed plan comes from its record, never from flags rebuilt as strings.
//!
//! It is the whole `--help` of every subcommand, one argument struct each, kept in one file
//! so the help a user reads is in one place.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::fixtures::SizeClass;
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::transport::ConnectionPolicy;

pub const EXIT_CODES: &str = "\
Exit codes:
  0  every document was acknowledged by the repository
  1  finished, but some uploads failed (counted and classified in the report)
  2  usage, configuration or setup error (bad flag or file, unreachable URL, login rejected,
     the repository rejected the documents outright, the manifest or results could not be
     written); nothing was measured or the run stopped
  3  a --fail-if threshold was crossed: the results were written first, then each crossing
     named on stderr (cell, value, expression); takes precedence over 1
  130 interrupted (SIGINT/SIGTERM): uploads in flight finished, results and manifest written;
     finish with --resume (thresholds are not checked)

Password: INGESTBENCH_PASSWORD, --password-file, or a hidden prompt on a terminal. It is
never printed, logged or written to results.

Upload workers run on one single-threaded runtime per CPU; small documents (64 KiB or less)
to a target on this host (embedded, localhost, a loopback address) use half of them, leaving
the server its cores. INGESTBENCH_WORKER_RUNTIMES=N sets how many, all used (0: every worker
on the shared work-stealing runtime; 1: all on one thread).";

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
    /// Estimate how long importing a corpus takes, per measured access method and thread
    /// count, with a 95 % interval, from sweep results (ideally `sweep --corpus`).
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
#[command(after_help = EXIT_CODES)]
pub struct RunArgs {
    /// Repository server root, e.g. http://alfresco:8080 (no credentials in it). Omitted:
    /// start the embedded target on 127.0.0.1 with a temporary store; it accepts --user
    /// (default admin) with the password given (INGESTBENCH_PASSWORD, --password-file), or
    /// with the password admin when none is given.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// CA certificate (PEM) to trust for an https:// URL.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// Size class of the documents.
    #[arg(long, value_enum, default_value = "small")]
    pub size: SizeClass,

    /// Documents per run (the total quota, divided over the workers).
    #[arg(long, default_value_t = 1000, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub docs: u64,

    /// Parallel upload workers.
    #[arg(long, default_value_t = 4, value_name = "T", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub threads: u64,

    /// Repetitions of the measurement; docs/sec is averaged over them.
    #[arg(long, default_value_t = 3, value_name = "R", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,

    /// Print the JSON result to stdout (the human summary goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Also write the JSON result to this file.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Directory for results: each invocation writes <dir>/run-<id>/result.json and
    /// manifest.jsonl.
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub results_dir: PathBuf,

    /// With no --url: keep the embedded target's store in this directory (default: a
    /// temporary directory removed at exit).
    #[arg(long, value_name = "DIR")]
    pub target_data_dir: Option<PathBuf>,

    /// After the runs, read every document back by id and check name, size, content hash
    /// and metadata (writes verify.json; exit 1 when anything is missing or wrong).
    #[arg(long)]
    pub verify: bool,

    /// Finish an interrupted run in DIR (results/run-<id>): the same plan, folders and
    /// documents, uploading exactly those its manifest does not show as acknowledged.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,

    /// A corpus instead of one size class. A directory: upload a stratified random sample
    /// of its real files (--sample N, reproducible from --seed), streamed from disk with their
    /// sniffed type, their bulk-import shadow metadata (as it is on Alfresco; where the
    /// profile maps it elsewhere) and their version files (`x.pdf.v1`, ... as versions, before
    /// the head), into the corpus's own folder tree (see --flatten). A corpus.json (from
    /// `ingestbench corpus`): synthetic documents whose sizes follow its distribution (with
    /// --docs set to its document count this replays the whole import's size mix).
    #[arg(long, value_name = "DIR|CORPUS.json", conflicts_with = "size")]
    pub corpus: Option<PathBuf>,

    /// With --corpus DIR: how many files to sample (default: --docs); every run uploads the
    /// same sample, each into its own folder.
    #[arg(long, value_name = "N", requires = "corpus", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,

    /// With --corpus DIR: upload the files into numbered folders (--docs-per-folder) under
    /// generated names, instead of recreating the corpus's folder tree below each run's
    /// folder with the files' own names (creating those folders is part of the import timed).
    #[arg(long, requires = "corpus")]
    pub flatten: bool,

    /// With --corpus DIR: two files of one folder whose names the repository takes for the
    /// same (Alfresco, Liferay: ignoring case): fail (upload both; the second is refused),
    /// skip the later ones, or rename them `name-2.ext` (recorded in the manifest with the
    /// source path). `ingestbench corpus DIR --check REPO` lists them beforehand.
    #[arg(long, value_enum, default_value = "fail", requires = "corpus")]
    pub on_name_clash: crate::corpus::policy::OnProblem,

    /// With --corpus DIR: a name the repository refuses (characters, a trailing dot or space,
    /// reserved or too long): fail (send it; refused), skip it, or rename it (refused
    /// characters become `_`).
    #[arg(long, value_enum, default_value = "fail", requires = "corpus")]
    pub on_bad_name: crate::corpus::policy::OnProblem,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// Flags `run` and `sweep` share: who uploads what, where, and how.
#[derive(Debug, Args, Clone)]
pub struct CommonArgs {
    /// User to log in as (the embedded target's default user is admin, password admin).
    #[arg(long, default_value = "admin", value_name = "USER")]
    pub user: String,

    /// File whose first line is the password (else INGESTBENCH_PASSWORD, else a prompt).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,

    /// The repository API: alfresco (REST v1), liferay (headless-delivery v1.0) or cmis
    /// (CMIS 1.1 browser binding; needs --url, the service URL such as
    /// http://host:8080/cmis/browser).
    #[arg(long, value_enum, default_value = "alfresco")]
    pub protocol: ProtocolKind,

    /// How to authenticate. Alfresco: ticket (default: log in once, reuse the ticket) or
    /// basic. Liferay: basic (default) or oauth2 (client credentials: --user is the client
    /// id, the password its secret).
    #[arg(long, value_enum)]
    pub auth: Option<AuthMode>,

    /// Where documents go. Alfresco: the parent folder, -my- (default, the user's home),
    /// -root-, -shared- or a folder node id. Liferay: the site id or key (default guest).
    /// Each invocation creates its own folder below it.
    #[arg(long, value_name = "NODE|SITE")]
    pub parent: Option<String>,

    /// Bytes of a small document (units: B, KiB, MiB, KB, MB).
    #[arg(long, default_value = "10KiB", value_name = "SIZE")]
    pub small_size: String,

    /// Bytes of an average document.
    #[arg(long, default_value = "300KiB", value_name = "SIZE")]
    pub average_size: String,

    /// Bytes of a large document.
    #[arg(long, default_value = "3MiB", value_name = "SIZE")]
    pub large_size: String,

    /// Seed of document content and metadata values.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub seed: u64,

    /// Metadata profile: acme (Alfresco default: custom type, needs
    /// fixtures/alfresco/acme-model.xml deployed), basic (Alfresco stock properties only),
    /// liferay (Liferay default) or a profile TOML file.
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,

    /// Most documents in one folder; more go to the next numbered folder.
    #[arg(long, default_value_t = 500, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub docs_per_folder: u64,

    /// Send versioningEnabled=false (no version history write per document).
    #[arg(long)]
    pub no_versioning: bool,

    /// Per-request timeout.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub timeout: f64,

    /// Extra attempts per document after a timeout, a lost connection, a 5xx or a 429
    /// (default 0, so measurements stay honest). Before resending, the document is looked up
    /// by its name (Liferay: external reference code), so a retry never duplicates it.
    /// Retries are counted and reported; docs/sec counts each document once.
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub retries: u32,

    /// No progress bar and no human summary.
    #[arg(long, short)]
    pub quiet: bool,

    /// Exit 3 when a finished cell crosses this threshold: METRIC<VALUE or METRIC>VALUE
    /// (also <=, >=). METRIC: docs_per_sec, mb_per_sec, p50_ms, p90_ms, p95_ms, p99_ms,
    /// max_ms (latency over every upload of the cell's runs), error_pct (failed uploads, %
    /// of attempted) or reader_p99_ms (--readers: the highest p99 of the kinds of read).
    /// Repeatable, e.g. --fail-if 'docs_per_sec<200' --fail-if 'p99_ms>500'
    /// --fail-if 'error_pct>0.1'. Checked against every cell once the results are written;
    /// each crossing is named on stderr. A malformed expression exits 2 before anything runs.
    #[arg(long, value_name = "EXPR")]
    pub fail_if: Vec<String>,

    /// Print one JSON object per line on stdout as results come: each finished run
    /// (`"type":"run"`, with its cell) and, in a sweep, each cell once its runs are done
    /// (`"type":"cell"`; with --precision again after each further run, the last counts).
    /// The human output goes to stderr. For `... --json-lines | jq -c .` in scripts.
    #[arg(long)]
    pub json_lines: bool,

    /// Also write every measured upload to FILE as a JMeter JTL (CSV) line: label = the
    /// cell (method_connection_size_tT), so `jmeter -g FILE -o DIR` draws JMeter's dashboard.
    /// Written by a background thread, never by the workers.
    #[arg(long, value_name = "FILE")]
    pub jtl: Option<std::path::PathBuf>,

    /// Serve live metrics for Prometheus on HOST:PORT while running (OpenMetrics text at
    /// /metrics): documents by outcome, bytes, a latency histogram and workers in flight,
    /// per cell (labels method, connection, size, threads).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_listen: Option<String>,

    /// With --metrics-listen: keep serving this many seconds after the last run, so a
    /// scraper reads the final counts.
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "SECONDS",
        requires = "metrics_listen"
    )]
    pub metrics_hold: f64,

    /// Warm-up before every measured run, through the same workers and access method:
    /// N documents, or a duration such as 30s, or auto (before the first run through each
    /// access method: until the throughput is steady, 3 windows within 10 % and no climb over the
    /// last quarter of the warm-up, at most 180 s;
    /// before the others: 2 per worker and at least 10 % of --docs, or 10 % of --duration). Warm-up documents go to the run's warmup/ folder and the
    /// manifest (verify and cleanup cover them) but are never measured; 0 for none. Against a
    /// server just restarted, warm it the way its own benchmarks do (Liferay: 10 minutes).
    #[arg(long, default_value = "auto", value_name = "N|DURATION")]
    pub warmup: String,

    /// Steady-state runs: all workers start together and start no upload after this long
    /// (e.g. 30s, 5m); docs/sec = documents acknowledged in the window / its length. Uploads
    /// in flight at the deadline finish and are kept, but not counted. Replaces --docs.
    #[arg(long, value_name = "DURATION", conflicts_with = "docs")]
    pub duration: Option<String>,

    /// A paced, open-model import at this many documents per second: document k of a run is
    /// due at start + k/RATE; a free worker (at most --threads) takes the next due document,
    /// waits until it is due and sends it. Each document gets a service time (from the send,
    /// the run's latency) and a response time (from when it was due, so a stalled
    /// repository's queue shows). Documents started more than one interval or 10 ms late are
    /// counted as late, those not started when the last one was due as the backlog, and the
    /// run says when the repository did not keep up. Works with --docs and --duration; with
    /// --shard, each shard paces its share of the rate (its documents of the plan's).
    #[arg(long, value_name = "DOCS_PER_SEC")]
    pub rate: Option<f64>,

    /// Readers beside the import: N tasks, each a user who reads, pauses (--think-time) and
    /// reads again while the run's uploads go on: a document's metadata, its content, a
    /// listing of one of the run's folders, or a query by name (--reader-mix). Each kind of
    /// read gets its own latency histogram and classified errors; reads that end after the
    /// import are not counted. Alfresco and CMIS (children, object, content, a CMIS query)
    /// for now.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub readers: u64,

    /// Each reader's pause after each read, e.g. 100ms, 1s.
    #[arg(long, default_value = "100ms", value_name = "DURATION")]
    pub think_time: String,

    /// Relative weights of the readers' reads: meta (a document's metadata), download (its
    /// content), list (a folder's documents), query (documents by name).
    #[arg(
        long,
        default_value = "meta=4,download=2,list=2,query=1",
        value_name = "WEIGHTS"
    )]
    pub reader_mix: String,

    /// The readers' latency objective: the answers name the highest import rate whose
    /// readers' p99 (every kind of read) stays under it, e.g. 500ms, 1s.
    #[arg(long, default_value = "500ms", value_name = "DURATION")]
    pub reader_slo: String,

    /// Repeat each cell's runs (at least --runs, at most --max-runs) until the 95 % interval
    /// of its docs/sec is within ± this percentage of the mean, e.g. 5%.
    #[arg(long, value_name = "PCT")]
    pub precision: Option<String>,

    /// The most runs of one cell: with --precision (default 10), and with `sweep --budget`
    /// (default 30: the budget is what bounds it; a cell whose effect is near zero needs
    /// ~10-15 pairs to show "no difference" within +-5 %).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_runs: Option<u32>,

    /// A Prometheus node_exporter of a server machine (e.g. http://alfresco1:9100/metrics):
    /// its CPU and memory are read at every run's start and end and shown beside docs/sec.
    /// Repeatable. Unreachable ones are named in the report, never fatal.
    #[arg(long, value_name = "URL")]
    pub server_metrics: Vec<String>,

    /// A local server process (and its children) whose CPU and memory to read from /proc,
    /// beside the listener of a loopback URL and the embedded target, which are found on
    /// their own. Repeatable.
    #[arg(long, value_name = "PID")]
    pub server_pid: Vec<u32>,

    /// Run shard K (0-based) of N of one plan, for several injector machines: every shard
    /// computes the same plan (same --plan-id, --seed, --docs, --threads = the workers of all
    /// shards together) and runs only its part of the workers and documents; runs start
    /// together through --rendezvous. A sweep shard takes its part of every cell's workers
    /// (--precision cannot be sharded: give --runs).
    #[arg(long, value_name = "K/N", requires = "plan_id")]
    pub shard: Option<String>,

    /// Take the shard index from this environment variable (Kubernetes Indexed Jobs:
    /// JOB_COMPLETION_INDEX), with --shards N.
    #[arg(
        long,
        value_name = "VAR",
        requires = "shards",
        conflicts_with = "shard"
    )]
    pub shard_index_env: Option<String>,

    /// The number of shards, with --shard-index-env.
    #[arg(long, value_name = "N", requires = "plan_id", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub shards: Option<u64>,

    /// The plan id every shard shares (e.g. the Job's name); results go to
    /// run-<plan-id>-shard-<K>of<N>.
    #[arg(long, value_name = "ID")]
    pub plan_id: Option<String>,

    /// HOST:PORT where shard 0 listens and the other shards connect, so that every run starts
    /// on every shard at once (a real barrier, not a hoped-for clock).
    #[arg(long, value_name = "HOST:PORT")]
    pub rendezvous: Option<String>,

    /// Longest wait at the rendezvous (for the shards to connect, and before each run).
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS")]
    pub rendezvous_timeout: f64,
}

/// The field practice, automated: every access method × thread count × size class, each
/// point run several times, interleaved, with reports that say what it means.
#[derive(Debug, Args, Clone)]
#[command(after_help = EXIT_CODES)]
pub struct SweepArgs {
    /// Access methods: names in --access-methods-dir or paths to TOML files, comma-separated.
    /// Default: every method there that answers (unreachable ones are named and skipped).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub access_methods: Vec<String>,

    /// Where access method names are looked up.
    #[arg(long, default_value = "access-methods", value_name = "DIR")]
    pub access_methods_dir: PathBuf,

    /// Thread counts: a list with ranges.
    #[arg(
        long,
        default_value = "1-10,15,20,30,50,70,90,100",
        value_name = "LIST"
    )]
    pub threads: String,

    /// Size classes, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "small,average,large",
        value_name = "LIST"
    )]
    pub sizes: Vec<SizeClass>,

    /// Connection policies to run every cell with: reuse (keep-alive), new (a fresh
    /// connection per document). Default: each method's own setting.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub connection: Vec<ConnectionPolicy>,

    /// Documents per run of each cell.
    #[arg(long, default_value_t = 1000, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub docs: u64,

    /// Runs per cell.
    #[arg(long, default_value_t = 3, value_name = "R", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,

    /// Run order: interleaved (run 1 of every cell, then run 2, ...; the methods of one point
    /// back to back, which goes first turning each round, and each method compared with the
    /// baseline pair by pair, runs of the same number) or random (shuffled with --seed;
    /// compared unpaired); either way slow drift of the machine does not bias one method.
    #[arg(long, value_enum, default_value = "interleaved")]
    pub order: Order,

    /// Reference method for the relative-cost table (default: direct when it is swept,
    /// else the first method).
    #[arg(long, value_name = "METHOD")]
    pub baseline: Option<String>,

    /// Parent directory of the sweep's results directory (sweep-<id>/).
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub results_dir: PathBuf,

    /// Finish an interrupted sweep in DIR: only the runs missing there are done.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,

    /// A time budget for the whole sweep (e.g. 3m): after the planned runs, further runs
    /// (up to --max-runs per cell, default 30) go to the comparisons with the baseline that
    /// are still too noisy to tell (or, with --precision, wider than asked), those at the
    /// fewest and the most threads first (the answers state them), nearest to an answer
    /// first (interleaved: a run on both sides, back to back), until all are answered or the
    /// time is spent; the report names what stayed open.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,

    /// Print the plan and the estimate, then stop.
    #[arg(long)]
    pub dry_run: bool,

    /// Keep the embedded target's store here (default: a temporary directory).
    #[arg(long, value_name = "DIR")]
    pub target_data_dir: Option<PathBuf>,

    /// Measure the size mix of this corpus (corpus.json from `ingestbench corpus`, or a
    /// directory or listing, described on the spot): the small,
    /// average and large classes become its 10th percentile, its median, and the size below
    /// which half its bytes lie, so `estimate` models cost per byte over the real range.
    #[arg(long, value_name = "CORPUS.json|DIR|LISTING.csv")]
    pub corpus: Option<PathBuf>,

    /// Paced imports at each of these rates (documents per second, comma-separated), a
    /// dimension of the sweep like the thread counts: each cell is paced as with --rate, and
    /// the rates are interleaved. With --readers, a readers-alone baseline cell (rate 0)
    /// comes first at each point. Not with --rate.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub rates: Vec<f64>,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The run order is a domain type (recorded in every sweep's plan); the flag takes it as is.
pub use crate::records::Order;

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
    /// A results directory: results/run-<id> or results/sweep-<id>.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Repository URL (default: the one recorded in the results).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// CA certificate (PEM) for an https:// URL.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// For a sweep: the access method to read through (default: the first that is not the
    /// embedded target).
    #[arg(long, value_name = "NAME")]
    pub access_method: Option<String>,

    /// User (default: the one recorded in the results).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,

    /// File whose first line is the password (else INGESTBENCH_PASSWORD, else a prompt).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,

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
    /// A results directory: results/run-<id> or results/sweep-<id>.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Delete without asking (required when not on a terminal).
    #[arg(long, short)]
    pub yes: bool,

    /// Repository URL (default: the one recorded in the results).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// CA certificate (PEM) for an https:// URL.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// For a sweep: the access method to delete through.
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
    after_help = "Model: per-document cost a + c x bytes at each method, policy and thread count, fitted\nfrom the measured sizes; the corpus takes N x a + c x B, plus growth with the documents\nstored (fitted from the runs' steady windows: flat or linear) over the import's fill. The\n95 % interval covers the fit, the growth, a single run's spread and a 2.5 % model error.\nSee docs/estimate.md.\n\nExit codes: 0 estimated, 2 unreadable corpus.json or results directory."
)]
pub struct EstimateArgs {
    /// The corpus: its corpus.json (from `ingestbench corpus`), or a directory or listing,
    /// described on the spot.
    #[arg(long, value_name = "CORPUS.json|DIR|LISTING.csv")]
    pub corpus: PathBuf,

    /// Sweep results directories (results/sweep-<id>) to estimate from.
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
