//! The flags a plan is built from, as plain values: what `cli.rs` parsed, before any of it is
//! checked. The clap surface converts into these once (its `From` impls) and the plans are
//! built from them (`TryFrom`), so nothing below `cmd/` knows clap's types or `cli.rs`, and
//! `cmd/run.rs` can rebuild a resumed run's flags from its recorded plan. Each field means
//! what the flag of the same name says in `--help` (`cli.rs`).

use std::path::PathBuf;

use crate::api::{AuthMode, ProtocolKind};
use crate::fixtures::SizeClass;
use crate::records::Order;
use crate::transport::ConnectionPolicy;

/// The flags `run` and `sweep` share.
#[derive(Debug, Clone)]
pub struct CommonFlags {
    pub user: String,
    pub password_file: Option<PathBuf>,
    pub protocol: ProtocolKind,
    pub auth: Option<AuthMode>,
    pub parent: Option<String>,
    pub small_size: String,
    pub average_size: String,
    pub large_size: String,
    pub seed: u64,
    pub profile: Option<String>,
    pub docs_per_folder: u64,
    pub no_versioning: bool,
    pub timeout: f64,
    pub retries: u32,
    pub quiet: bool,
    pub fail_if: Vec<String>,
    pub json_lines: bool,
    pub jtl: Option<PathBuf>,
    pub metrics_listen: Option<String>,
    pub metrics_hold: f64,
    pub warmup: String,
    pub duration: Option<String>,
    pub precision: Option<String>,
    pub max_runs: Option<u32>,
    pub server_metrics: Vec<String>,
    pub server_pid: Vec<u32>,
    pub shard: Option<String>,
    pub shard_index_env: Option<String>,
    pub shards: Option<u64>,
    pub plan_id: Option<String>,
    pub rendezvous: Option<String>,
    pub rendezvous_timeout: f64,
}

/// `run`'s flags that its plan reads.
#[derive(Debug, Clone)]
pub struct RunFlags {
    pub url: Option<String>,
    pub ca_cert: Option<PathBuf>,
    pub size: SizeClass,
    pub docs: u64,
    pub threads: u64,
    pub runs: u32,
    pub json: bool,
    pub output: Option<PathBuf>,
    pub results_dir: PathBuf,
    pub target_data_dir: Option<PathBuf>,
    pub corpus: Option<PathBuf>,
    pub sample: Option<u64>,
    pub flatten: bool,
    pub on_name_clash: crate::corpus::policy::OnProblem,
    pub on_bad_name: crate::corpus::policy::OnProblem,
    pub common: CommonFlags,
}

/// `sweep`'s flags that its plan reads.
#[derive(Debug, Clone)]
pub struct SweepFlags {
    pub access_methods: Vec<String>,
    pub access_methods_dir: PathBuf,
    pub threads: String,
    pub sizes: Vec<SizeClass>,
    pub connection: Vec<ConnectionPolicy>,
    pub docs: u64,
    pub runs: u32,
    pub order: Order,
    pub baseline: Option<String>,
    pub budget: Option<String>,
    pub corpus: Option<PathBuf>,
    pub common: CommonFlags,
}
