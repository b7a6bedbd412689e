//! The options of `run` and `sweep`, as clap derives them from the command line: the doc
//! comments are their `--help` text, units in value names. These structs are the options the
//! plans are built from, in one conversion each (`CommonPlan`, `RunPlan`, `SweepPlan`),
//! so a new flag of either command touches this file and the plan that reads it; a resumed
//! plan comes from its record, never from flags rebuilt as strings. The other commands'
//! arguments, and the command line itself, are `crate::cli`, which takes these as they are.

use std::path::PathBuf;

use clap::Args;

use crate::fixtures::SizeClass;
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::results::Order;
use crate::transport::ConnectionPolicy;

/// How a measuring command ends: the exit codes its `--help` ends with (and the program's).
pub const EXIT_CODES: &str = "\
Exit codes:
  0  every document was acknowledged by the repository
  1  finished, but some uploads failed (counted and classified in the report)
  2  usage, configuration or setup error (bad flag or file, unreachable URL, login rejected,
     the repository rejected the documents outright, the manifest, results or output could
     not be written); nothing was measured, the run stopped or its output is incomplete
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

    /// With --corpus DIR: a pilot of this long per run (e.g. 2m, 10m) instead of a number of
    /// files: each run imports the corpus's files in one random order (from --seed) until
    /// this long has passed or every file was sent, never the same file twice; every run
    /// starts the order again, into its own folder. The files drawn: --sample N of them
    /// (default: the whole corpus, read and hashed before the first upload). `auto`: the
    /// first run goes on until the estimate of importing the whole corpus is sharp (its 95 %
    /// interval within --target-precision, growth as the repository fills included, for the
    /// pilot of all its runs; checked every 2 s) and stops
    /// there, early, as a deadline would; at the latest at --max-sample-time, at
    /// --max-sample-share of the corpus, or when the files run out (then it says what stayed
    /// unresolved). Later runs (--runs) import the
    /// files the first run did, in the same order, and stop there.
    #[arg(long, value_name = "DURATION|auto", requires = "corpus", conflicts_with_all = ["duration", "rate"])]
    pub sample_time: Option<String>,

    /// With --sample-time auto: the longest the first pilot run may go on before it stops
    /// unsharp (default 10m).
    #[arg(long, value_name = "DURATION")]
    pub max_sample_time: Option<String>,

    /// With --sample-time auto: the precision the pilot stops at: the estimate's 95 %
    /// interval within ± this percentage, growth over the import's fill included, more than 0
    /// and below 100 (default 15).
    #[arg(long, value_name = "PCT")]
    pub target_precision: Option<String>,

    /// With --sample-time auto: the most of the corpus the pilot may import, its runs
    /// together (the first run stops when it times --runs reaches it), as a percentage of
    /// the corpus's documents, more than 0 and at most 100 (default 15): a pilot is worth
    /// running only while it is a small part of the import it estimates.
    #[arg(long, value_name = "PCT")]
    pub max_sample_share: Option<String>,

    /// With --corpus: the estimate made for this import (`ingestbench estimate`'s
    /// estimate.json). Its duration at --threads (else its answer's) is the live ETA's
    /// prior, its interval the prior's spread: it narrows the ETA while little is done and
    /// counts for less as the import's own progress grows.
    #[arg(long, value_name = "ESTIMATE.json", requires = "corpus")]
    pub estimate: Option<PathBuf>,

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

    /// Serve a live page on ADDR while running (default 127.0.0.1:0: loopback, a free port;
    /// the URL is printed on stderr): docs/s now and moving, MB/s, latency percentiles,
    /// errors by class, the cell and run under way, and the ETA with its 95 % interval, from
    /// the start (a page opened late or reloaded shows everything); as each run ends, its
    /// likely limit, its resources against their capacity and its readers' latencies, and
    /// every cell's docs/s by threads; at the end it links the report. Give another address
    /// (e.g. 0.0.0.0:8088) to watch from another machine: the page carries no URL, user or
    /// password, as /metrics does not. Given the same HOST:PORT
    /// as --metrics-listen, one listener serves both (/metrics there too).
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:0"
    )]
    pub dashboard: Option<String>,

    /// With --dashboard: keep serving the page (and its link to the report) this many
    /// seconds after the end.
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "SECONDS",
        requires = "dashboard"
    )]
    pub dashboard_hold: f64,

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
    /// (default 60: the budget is what bounds it; a cell whose effect is near zero needs
    /// 10-40 pairs to show "no difference" within +-5 %, as the machine is quiet or not).
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

/// `--reader-mix`: `meta=4,download=2,list=2,query=1` (any subset; the others 0), checked.
pub fn parse_reader_mix(s: &str) -> anyhow::Result<[u32; 4]> {
    let mut mix = [0u32; 4];
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let parsed = part.split_once('=').and_then(|(k, v)| {
            let i = crate::protocol::reads::ReadOp::ALL
                .iter()
                .position(|o| o.name() == k.trim())?;
            Some((i, v.trim().parse::<u32>().ok()?))
        });
        match parsed {
            Some((i, w)) => mix[i] = w,
            None => anyhow::bail!(
                "--reader-mix {s}: give weights as meta=N,download=N,list=N,query=N, e.g. meta=4,download=2,list=2,query=1"
            ),
        }
    }
    if mix.iter().all(|w| *w == 0) {
        anyhow::bail!("--reader-mix {s}: at least one weight must be above 0");
    }
    Ok(mix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_mix_parses() {
        assert_eq!(parse_reader_mix("meta=3, list=1").unwrap(), [3, 0, 1, 0]);
        assert!(parse_reader_mix("meta=0").is_err());
        assert!(parse_reader_mix("browse=1").is_err());
    }
}
