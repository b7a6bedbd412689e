//! Validated plans built from the options in one place (`TryFrom` of the clap structs in
//! `options`, which `cli` takes as they are): every flag a user can get wrong is checked here
//! with a message naming it. `run` becomes one `direct` access method and one cell here;
//! `sweep` expands its axes, its schedule and its recorded plan here too; `estimate --window`
//! becomes the cutover plan's window and office hours (`window`).

pub mod options;
pub mod quota;
pub mod schedule;
pub mod sweep;
pub mod window;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::fixtures::{Profile, SizeClass, Sizes, parse_size};
use crate::metrics::servers::Probe;
use crate::protocol_kind::{AuthMode, ProtocolKind};
use crate::results::{CellKey, MeasurePolicy, MethodRecord, PlanRecord, Warmup};
use crate::transport::access::{direct_method, redact};
use crate::transport::{AccessMethod, ConnectionPolicy};
use options::{CommonArgs, RunArgs};

/// What `run` and `sweep` share.
#[derive(Debug, Clone)]
pub struct CommonPlan {
    pub protocol: ProtocolKind,
    pub user: String,
    pub password_file: Option<PathBuf>,
    pub auth: AuthMode,
    pub parent: String,
    pub sizes: Sizes,
    pub seed: u64,
    pub profile: Arc<Profile>,
    pub docs_per_folder: u64,
    pub versioning: bool,
    pub timeout: Duration,
    pub retries: u32,
    pub quiet: bool,
    /// `--json-lines`: a JSON line on stdout per finished run and cell.
    pub json_lines: bool,
    /// `--jtl FILE`.
    pub jtl: Option<std::path::PathBuf>,
    /// `--metrics-listen HOST:PORT` and `--metrics-hold`.
    pub metrics_listen: Option<String>,
    pub metrics_hold: Duration,
    /// `--dashboard [ADDR]` (resolved) and `--dashboard-hold`.
    pub dashboard: Option<std::net::SocketAddr>,
    pub dashboard_hold: Duration,
    /// Warm-up, steady state, precision.
    pub measure: MeasurePolicy,
    /// Servers to read CPU and memory of, as given (`--server-metrics`, `--server-pid`).
    pub probes: Vec<Probe>,
    /// `--shard K/N` (or `--shard-index-env`): this process's part of a plan.
    pub shard: Option<ShardPlan>,
    /// `--fail-if`: checked against the finished results (exit 3 when crossed).
    pub thresholds: Vec<crate::threshold::Threshold>,
}

/// One shard of a plan run on several machines.
#[derive(Debug, Clone)]
pub struct ShardPlan {
    pub plan_id: String,
    pub index: u64,
    pub count: u64,
    /// Where shard 0 listens (needed when count > 1).
    pub rendezvous: Option<String>,
    pub timeout: Duration,
}

impl ShardPlan {
    /// What the results record of this shard.
    pub fn record(&self) -> crate::results::ShardRecord {
        crate::results::ShardRecord {
            plan_id: self.plan_id.clone(),
            index: self.index,
            count: self.count,
        }
    }
}

/// `--metrics-hold SECONDS`, checked: 0 to an hour.
pub fn metrics_hold(secs: f64) -> Result<Duration> {
    if !(0.0..=3600.0).contains(&secs) {
        bail!("--metrics-hold {secs}: give seconds from 0 to 3600, e.g. 5");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--dashboard ADDR`, resolved to the one address the page is served on (a name that
/// resolves to several takes the first, as a listener would).
pub fn dashboard_addr(addr: &str) -> Result<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    let mut found = addr.to_socket_addrs().with_context(|| {
        format!("--dashboard {addr}: not a HOST:PORT address (e.g. 127.0.0.1:0 for a free port on loopback, 0.0.0.0:8088 for every interface)")
    })?;
    found
        .next()
        .with_context(|| format!("--dashboard {addr}: the name resolves to no address"))
}

/// `--shard`, `--shard-index-env`, `--shards`, `--plan-id`, `--rendezvous`, checked.
fn shard_plan(a: &CommonArgs) -> Result<Option<ShardPlan>> {
    let (index, count) = match (&a.shard, &a.shard_index_env, a.shards) {
        (Some(s), _, _) => {
            let parsed = s.split_once('/').and_then(|(k, n)| {
                Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?))
            });
            match parsed {
                Some((k, n)) if n >= 1 && k < n => (k, n),
                _ => bail!("--shard {s}: give K/N with 0 <= K < N, e.g. 0/4"),
            }
        }
        (None, Some(var), Some(n)) => {
            let v = std::env::var(var).with_context(|| {
                format!("--shard-index-env {var}: the variable is not set (Kubernetes Indexed Jobs set JOB_COMPLETION_INDEX)")
            })?;
            match v.trim().parse::<u64>() {
                Ok(k) if k < n => (k, n),
                _ => bail!(
                    "--shard-index-env {var}: its value `{v}` is not a shard index below --shards {n}"
                ),
            }
        }
        (None, None, Some(_)) => {
            bail!("--shards needs --shard-index-env VAR (or give --shard K/N)")
        }
        _ => return Ok(None),
    };
    let plan_id = a.plan_id.clone().unwrap_or_default();
    if plan_id.is_empty()
        || !plan_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        bail!(
            "--plan-id `{plan_id}`: letters, digits, '-', '_' and '.' only; the same on every shard"
        );
    }
    if count > 1 && a.rendezvous.is_none() {
        bail!(
            "--shard {index}/{count}: shards need --rendezvous HOST:PORT (shard 0 listens there) for a common start"
        );
    }
    if !(a.rendezvous_timeout.is_finite() && a.rendezvous_timeout > 0.0) {
        bail!(
            "--rendezvous-timeout {}: must be a positive number of seconds",
            a.rendezvous_timeout
        );
    }
    Ok(Some(ShardPlan {
        plan_id,
        index,
        count,
        rendezvous: a.rendezvous.clone(),
        timeout: Duration::from_secs_f64(a.rendezvous_timeout),
    }))
}

/// A duration such as `500ms`, `30s`, `5m`, `1h` or a plain number of seconds.
pub fn parse_duration(s: &str) -> Option<f64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Some(v * mult).filter(|v| v.is_finite())
}

/// `--warmup`: auto, N documents, or a duration.
fn parse_warmup(s: &str) -> Result<Warmup> {
    let t = s.trim();
    if t == "auto" {
        return Ok(Warmup::Auto);
    }
    if let Ok(n) = t.parse::<u64>() {
        return Ok(Warmup::Docs(n));
    }
    match parse_duration(t) {
        Some(secs) if secs >= 0.0 => Ok(Warmup::Seconds(secs)),
        _ => bail!(
            "--warmup {s}: give auto, a number of documents (e.g. 100) or a duration (e.g. 30s, 2m); 0 for none"
        ),
    }
}

/// `--max-runs` when not given: with `--precision`.
pub(crate) const MAX_RUNS_PRECISION: u32 = 10;
/// `--max-runs` when not given, with `sweep --budget`: the time budget is the real bound. A
/// comparison whose effect is near zero needs ~10-15 pairs to show "no difference" within
/// ±5 % when a pair's log-ratio scatters by ~7 %, and ~40 at ~15 % (a quick start on a
/// loaded 2-core machine: small at 1 thread); at 30 it stopped there at ±8 % with a tenth
/// of the budget unspent. 60 is more than the quick start's budget can buy one comparison.
pub(crate) const MAX_RUNS_BUDGET: u32 = 60;

/// The measurement flags, checked.
fn measure_policy(a: &CommonArgs) -> Result<MeasurePolicy> {
    let duration_s = match &a.duration {
        None => None,
        Some(d) => match parse_duration(d) {
            Some(v) if v > 0.0 => Some(v),
            _ => bail!("--duration {d}: give a positive duration such as 30s, 5m or 1h"),
        },
    };
    let precision_pct = match &a.precision {
        None => None,
        Some(p) => match p.trim().trim_end_matches('%').trim().parse::<f64>() {
            Ok(v) if v > 0.0 && v < 100.0 => Some(v),
            _ => bail!("--precision {p}: give a percentage between 0 and 100, e.g. 5%"),
        },
    };
    let rate_per_s = match a.rate {
        None => None,
        Some(r) if r.is_finite() && r > 0.0 && r <= 1e6 => Some(r),
        Some(r) => {
            bail!("--rate {r}: give documents per second, more than 0 and at most 1000000, e.g. 50")
        }
    };
    let readers = match a.readers {
        0 => None,
        n => {
            let think = match parse_duration(&a.think_time) {
                Some(v) if v >= 0.0 => v,
                _ => bail!(
                    "--think-time {}: give a duration such as 100ms or 1s (0 for none)",
                    a.think_time
                ),
            };
            Some(crate::results::readers::ReaderPolicy {
                readers: n,
                think_time_s: think,
                mix: options::parse_reader_mix(&a.reader_mix)?,
            })
        }
    };
    let reader_slo_ms = match readers {
        None => None,
        Some(_) => match parse_duration(&a.reader_slo) {
            Some(v) if v > 0.0 => Some(v * 1000.0),
            _ => bail!(
                "--reader-slo {}: give a positive duration such as 500ms or 1s",
                a.reader_slo
            ),
        },
    };
    Ok(MeasurePolicy {
        warmup: parse_warmup(&a.warmup)?,
        duration_s,
        precision_pct,
        max_runs: a.max_runs.unwrap_or(MAX_RUNS_PRECISION),
        budget_s: None,
        defer_between: false,
        rate_per_s,
        readers,
        reader_slo_ms,
        once: false,
        auto_sample: None,
    })
}

/// `--server-metrics` and `--server-pid`, checked.
pub(crate) fn probes(a: &CommonArgs) -> Result<Vec<Probe>> {
    let mut out = Vec::new();
    for u in &a.server_metrics {
        let url = reqwest::Url::parse(u).ok().filter(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.username().is_empty()
                && u.password().is_none()
        });
        if url.is_none() {
            bail!(
                "--server-metrics {u}: give the node_exporter URL, e.g. http://host:9100/metrics (no credentials in it)"
            );
        }
        out.push(Probe::NodeExporter { url: u.clone() });
    }
    for pid in &a.server_pid {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            bail!("--server-pid {pid}: no such process on this machine");
        }
        out.push(Probe::Process {
            name: crate::sampler::process_name(*pid),
            pid: *pid,
        });
    }
    Ok(out)
}

impl TryFrom<&CommonArgs> for CommonPlan {
    type Error = anyhow::Error;

    fn try_from(a: &CommonArgs) -> Result<CommonPlan> {
        let sizes = Sizes {
            small: parse_size(&a.small_size).context("--small-size")?,
            average: parse_size(&a.average_size).context("--average-size")?,
            large: parse_size(&a.large_size).context("--large-size")?,
        };
        if !(a.timeout.is_finite() && a.timeout > 0.0) {
            bail!(
                "--timeout {}: must be a positive number of seconds",
                a.timeout
            );
        }
        if a.user.is_empty() {
            bail!("--user must not be empty");
        }
        let kind = a.protocol;
        let parent = a
            .parent
            .clone()
            .unwrap_or_else(|| kind.default_parent().to_string());
        let path_ok = if kind == ProtocolKind::Cmis {
            parent.starts_with('/')
        } else {
            !parent.is_empty() && !parent.contains('/')
        };
        if !path_ok {
            bail!(
                "--parent `{parent}`: use -my-, -root-, -shared- or a node id (Alfresco), a site id or key (Liferay), or a folder path such as / (CMIS)"
            );
        }
        let auth = a.auth.unwrap_or(kind.default_auth());
        if !kind.auth_modes().contains(&auth) {
            bail!(
                "--auth {}: {} takes {}",
                auth.name(),
                kind.name(),
                kind.auth_modes()
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(" or ")
            );
        }
        let profile = Profile::load(a.profile.as_deref().unwrap_or(kind.default_profile()))?;
        if profile.protocol != kind.name() {
            bail!(
                "--profile {}: the profile is for {}, not {}; use --profile {} or a {} profile",
                profile.source,
                profile.protocol,
                kind.name(),
                kind.default_profile(),
                kind.name()
            );
        }
        let measure = measure_policy(a)?;
        let shard = shard_plan(a)?;
        if shard.is_some() && measure.precision_pct.is_some() {
            bail!(
                "--precision cannot be combined with --shard: every shard must run the same runs (give --runs instead)"
            );
        }
        if shard.is_some() && measure.readers.is_some() {
            bail!("--readers cannot be combined with --shard yet: run the readers on one injector");
        }
        if shard.as_ref().is_some_and(|s| s.count > 1) && !a.fail_if.is_empty() {
            bail!(
                "--fail-if cannot be combined with --shard: a shard measures only its part of the plan; merge the shards (`ingestbench merge`), then check the merged result with `ingestbench compare BASELINE MERGED --fail-if ...`"
            );
        }
        Ok(CommonPlan {
            protocol: kind,
            user: a.user.clone(),
            password_file: a.password_file.clone(),
            auth,
            parent,
            sizes,
            seed: a.seed,
            profile: Arc::new(profile),
            docs_per_folder: a.docs_per_folder,
            versioning: !a.no_versioning,
            timeout: Duration::from_secs_f64(a.timeout),
            retries: a.retries,
            quiet: a.quiet,
            json_lines: a.json_lines,
            jtl: a.jtl.clone(),
            metrics_listen: a.metrics_listen.clone(),
            metrics_hold: metrics_hold(a.metrics_hold)?,
            dashboard: a.dashboard.as_deref().map(dashboard_addr).transpose()?,
            dashboard_hold: metrics_hold(a.dashboard_hold).map_err(|_| {
                anyhow::anyhow!(
                    "--dashboard-hold {}: give seconds from 0 to 3600, e.g. 600",
                    a.dashboard_hold
                )
            })?,
            measure,
            probes: probes(a)?,
            shard,
            thresholds: crate::threshold::parse_all(&a.fail_if, crate::threshold::Scope::Results)?,
        })
    }
}

impl CommonPlan {
    /// `--metrics-listen` names the dashboard's own address: one listener serves both.
    pub fn metrics_on_dashboard(&self) -> bool {
        match (&self.metrics_listen, self.dashboard) {
            (Some(m), Some(d)) => dashboard_addr(m).is_ok_and(|m| m == d && d.port() != 0),
            _ => false,
        }
    }

    /// What every `plan.json` records of these options (no secrets), under `id`; a `run` or a
    /// `sweep` adds its cells.
    pub fn record(&self, id: &str, kind: crate::results::PlanKind) -> PlanRecord {
        PlanRecord {
            schema_version: crate::results::SCHEMA_VERSION,
            tool: crate::results::Tool {
                name: "ingestbench".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            id: id.to_string(),
            started_at: crate::timefmt::datetime_ms(crate::timefmt::now_ms()),
            seed: self.seed,
            methods: Vec::new(),
            connections: vec![ConnectionPolicy::Reuse],
            sizes: Vec::new(),
            threads: Vec::new(),
            docs: 0,
            runs: 0,
            order: crate::results::Order::Interleaved,
            baseline: "direct".into(),
            corpus: None,
            measure: self.measure,
            protocol: self.protocol,
            auth: self.auth,
            user: self.user.clone(),
            parent: self.parent.clone(),
            profile: self.profile.source.clone(),
            node_type: self.profile.node_type.clone(),
            docs_per_folder: self.docs_per_folder,
            versioning: self.versioning,
            timeout_s: self.timeout.as_secs_f64(),
            host: crate::host::facts(),
            shard: self.shard.as_ref().map(ShardPlan::record),
            kind,
            properties_per_doc: self.profile.properties.len(),
            retries: self.retries,
            corpus_tree: false,
            corpus_names: None,
            rates: Vec::new(),
        }
    }

    /// The plan of a resumed run or sweep: what its `plan.json` recorded, typed, in place of
    /// this command line's values (never turned back into flags to parse again); from the
    /// command line only what a record does not hold (credentials, retries, outputs, quiet,
    /// thresholds, the sidecars). A resumed shard finishes its part without waiting for the
    /// others.
    pub fn resumed(a: &CommonArgs, rec: &PlanRecord) -> Result<CommonPlan> {
        let mut a = a.clone();
        a.protocol = rec.protocol;
        a.auth = Some(rec.auth);
        a.user.clone_from(&rec.user);
        a.parent = Some(rec.parent.clone());
        a.seed = rec.seed;
        a.profile = Some(
            rec.profile
                .strip_prefix("built-in:")
                .unwrap_or(&rec.profile)
                .to_string(),
        );
        a.docs_per_folder = rec.docs_per_folder;
        a.no_versioning = !rec.versioning;
        a.timeout = rec.timeout_s;
        (a.shard, a.shard_index_env, a.shards) = (None, None, None);
        let mut c = CommonPlan::try_from(&a)?;
        let size_of = |k: SizeClass| rec.sizes.iter().find(|(s, _)| *s == k).map(|x| x.1);
        c.sizes = Sizes {
            small: size_of(SizeClass::Small).unwrap_or(c.sizes.small),
            average: size_of(SizeClass::Average).unwrap_or(c.sizes.average),
            large: size_of(SizeClass::Large).unwrap_or(c.sizes.large),
        };
        c.measure = rec.measure;
        c.shard = rec.shard.as_ref().map(|s| ShardPlan {
            plan_id: s.plan_id.clone(),
            index: s.index,
            count: s.count,
            rendezvous: None,
            // Unused: a resumed shard meets no other.
            timeout: Duration::try_from_secs_f64(a.rendezvous_timeout).unwrap_or_default(),
        });
        Ok(c)
    }
}

#[derive(Debug, Clone)]
pub struct RunPlan {
    pub common: CommonPlan,
    /// Repository root; `None` = embedded target.
    pub url: Option<reqwest::Url>,
    pub size: SizeClass,
    pub docs: u64,
    pub threads: u64,
    pub runs: u32,
    pub ca_cert: Option<PathBuf>,
    pub json: bool,
    pub output: Option<PathBuf>,
    pub results_dir: PathBuf,
    pub target_data_dir: Option<PathBuf>,
    /// `--corpus`: a size mix to follow, or real files to upload.
    pub corpus: Option<CorpusInput>,
    /// `--flatten`: a corpus directory's files go into numbered folders, renamed.
    pub flatten: bool,
    /// `--corpus DIR`: the files sampled (before `--on-*` skips any), and the name policy.
    pub sample: u64,
    pub on_name_clash: crate::corpus::policy::OnProblem,
    pub on_bad_name: crate::corpus::policy::OnProblem,
    /// `--sample-time auto`: what the first run's watcher judges the estimate by.
    pub auto: Option<AutoPlan>,
    /// `--estimate FILE`: the live ETA's prior, documents per second and its relative
    /// spread (1 sd, log scale).
    pub eta_prior: Option<(f64, f64)>,
}

/// `run --sample-time auto`: the first pilot run stops once the estimate of importing the
/// whole corpus is sharp (`engine` watches it; `analysis::pilot` judges it).
#[derive(Debug, Clone)]
pub struct AutoPlan {
    /// Both sides of the 95 % interval within this (relative: 0.15 = ±15 %).
    pub target: f64,
    /// The longest first run (`--max-sample-time`).
    pub cap: Duration,
    /// The most of the corpus's documents the pilot's runs import together
    /// (`--max-sample-share`, relative: 0.15 = 15 %); None in records made before it.
    pub max_share: Option<f64>,
    /// The whole corpus, whose import is estimated (not the sample drawn from it).
    pub corpus: Arc<crate::corpus::CorpusDescription>,
    pub protocol: ProtocolKind,
    /// The pilot's runs (`--runs`): the first stops where the pilot of all of them, each as
    /// long as it, would be sharp.
    pub runs: u64,
}

impl AutoPlan {
    /// The auto pilot of `measure` over `corpus` (none without `auto_sample` or a corpus).
    fn of(
        measure: &MeasurePolicy,
        protocol: ProtocolKind,
        corpus: Option<Arc<crate::corpus::CorpusDescription>>,
        runs: u64,
    ) -> Option<AutoPlan> {
        let auto = measure.auto_sample?;
        Some(AutoPlan {
            target: auto.target_pct / 100.0,
            cap: Duration::from_secs_f64(auto.max_s),
            max_share: auto.max_share_pct.map(|p| p / 100.0),
            corpus: corpus?,
            protocol,
            runs: runs.max(1),
        })
    }
}

/// What `run --corpus` uploads.
#[derive(Debug, Clone)]
pub enum CorpusInput {
    /// A corpus.json: synthetic documents whose sizes follow its distribution.
    Mix(PathBuf, Arc<crate::corpus::CorpusDescription>),
    /// A directory: these real files, a stratified sample of it.
    Files(PathBuf, Arc<Vec<crate::fixtures::SampledFile>>),
}

impl CorpusInput {
    pub fn path(&self) -> &std::path::Path {
        match self {
            CorpusInput::Mix(p, _) | CorpusInput::Files(p, _) => p,
        }
    }
}

impl RunPlan {
    pub fn doc_size(&self) -> u64 {
        match &self.corpus {
            Some(CorpusInput::Mix(_, c)) => c.mean_document_size(),
            Some(CorpusInput::Files(_, f)) => {
                f.iter().map(|x| x.size).sum::<u64>() / f.len().max(1) as u64
            }
            None => self.common.sizes.of(self.size),
        }
    }

    /// The documents this run uploads: one size class, or the corpus's size mix.
    pub fn fixtures(&self) -> crate::fixtures::Fixtures {
        let c = &self.common;
        match &self.corpus {
            Some(CorpusInput::Mix(_, corpus)) => {
                crate::fixtures::Fixtures::mix(&corpus.size_mix(), c.seed, c.profile.clone())
            }
            Some(CorpusInput::Files(_, files)) => {
                let f = crate::fixtures::Fixtures::files(files.to_vec(), c.seed, c.profile.clone());
                if self.flatten { f } else { f.with_tree() }
            }
            None => crate::fixtures::Fixtures::new(
                self.size,
                self.doc_size(),
                c.seed,
                c.profile.clone(),
            ),
        }
    }

    /// The plan as recorded in `plan.json` (no secrets): a sweep of one cell, `direct` to
    /// `url` (the redacted URL it reached), under the run's `id`.
    pub fn record(&self, id: &str, url: &str, embedded: bool) -> PlanRecord {
        let files = matches!(self.corpus, Some(CorpusInput::Files(..)));
        PlanRecord {
            methods: vec![MethodRecord::run(url, embedded)],
            sizes: vec![(self.size, self.doc_size())],
            threads: vec![self.threads],
            docs: self.docs,
            runs: self.runs,
            corpus: self.corpus.as_ref().map(|c| c.path().display().to_string()),
            corpus_tree: files && !self.flatten,
            corpus_names: files.then_some(crate::corpus::policy::NamesRecord {
                sample: self.sample,
                on_name_clash: self.on_name_clash,
                on_bad_name: self.on_bad_name,
            }),
            ..self.common.record(id, crate::results::PlanKind::Run)
        }
    }
}

impl RunPlan {
    /// `run` as an access method: `direct` to `--url` (or the embedded target over HTTP),
    /// keep-alive, trusting `--ca-cert`, the serving node named by the emulator's header.
    pub fn method(&self) -> AccessMethod {
        let url = self
            .url
            .as_ref()
            .map_or_else(|| "embedded:http".to_string(), |u| u.to_string());
        direct_method(url, self.ca_cert.clone(), self.common.protocol)
    }

    /// The one cell `run` measures.
    pub fn cell(&self) -> CellKey {
        CellKey {
            method: "direct".into(),
            connection: ConnectionPolicy::Reuse,
            size: self.size,
            threads: self.threads,
            rate_per_s: None,
        }
    }

    /// Its runs, in order.
    pub fn schedule(&self) -> Vec<(CellKey, u32)> {
        (1..=self.runs).map(|r| (self.cell(), r)).collect()
    }
}

/// Parses `--url`: http(s) only, no credentials, no query.
pub fn parse_url(s: &str) -> Result<reqwest::Url> {
    let url = reqwest::Url::parse(s)
        .with_context(|| format!("--url {s}: not a URL; expected e.g. http://alfresco:8080"))?;
    if !matches!(url.scheme(), "http" | "https") {
        bail!(
            "--url {s}: scheme `{}` is not supported; use http:// or https://",
            url.scheme()
        );
    }
    if !url.username().is_empty() || url.password().is_some() {
        bail!(
            "--url must not carry credentials; use --user and INGESTBENCH_PASSWORD or --password-file"
        );
    }
    if url.query().is_some() {
        bail!(
            "--url {}: remove the query string; give the server root",
            redact(&url)
        );
    }
    Ok(url)
}

impl RunPlan {
    /// A resumed run's plan: its recorded plan (see [`CommonPlan::resumed`]); the URL given
    /// on this command line, else the recorded one (none: the embedded target).
    pub fn resumed(a: &RunArgs, rec: &PlanRecord) -> Result<RunPlan> {
        let common = CommonPlan::resumed(&a.common, rec)?;
        let method = rec
            .methods
            .first()
            .context("plan.json: a run's plan names its method")?;
        let url = match (&a.url, method.embedded) {
            (Some(u), _) => Some(parse_url(u)?),
            (None, false) => Some(parse_url(&method.url)?),
            (None, true) => None,
        };
        let names = rec.corpus_names;
        let policy = crate::corpus::policy::NamePolicy {
            repo: common.protocol,
            on_name_clash: names.map(|n| n.on_name_clash).unwrap_or_default(),
            on_bad_name: names.map(|n| n.on_bad_name).unwrap_or_default(),
        };
        let sample = names.map_or(rec.docs, |n| n.sample);
        let input = rec
            .corpus
            .as_deref()
            .map(|p| corpus_input(std::path::Path::new(p), sample, &common, policy))
            .transpose()?;
        let auto = AutoPlan::of(
            &common.measure,
            common.protocol,
            input.as_ref().and_then(|i| i.2.clone()),
            u64::from(rec.runs),
        );
        let corpus = input.map(|(c, ..)| c);
        Ok(RunPlan {
            common,
            url,
            size: rec.sizes.first().map_or(a.size, |s| s.0),
            docs: rec.docs,
            threads: rec.threads.first().copied().unwrap_or(a.threads),
            runs: rec.runs,
            ca_cert: a.ca_cert.clone(),
            json: a.json,
            output: a.output.clone(),
            results_dir: a.results_dir.clone(),
            target_data_dir: a.target_data_dir.clone(),
            corpus,
            flatten: !rec.corpus_tree,
            sample,
            on_name_clash: policy.on_name_clash,
            on_bad_name: policy.on_bad_name,
            auto,
            eta_prior: a
                .estimate
                .as_deref()
                .map(|p| eta_prior(p, rec.threads.first().copied().unwrap_or(a.threads)))
                .transpose()?,
        })
    }
}

impl TryFrom<&RunArgs> for RunPlan {
    type Error = anyhow::Error;

    fn try_from(a: &RunArgs) -> Result<RunPlan> {
        let url = a.url.as_deref().map(parse_url).transpose()?;
        if let Some(ca) = &a.ca_cert
            && !ca.is_file()
        {
            bail!("--ca-cert {}: no such file", ca.display());
        }
        let common = CommonPlan::try_from(&a.common)?;
        let policy = crate::corpus::policy::NamePolicy {
            repo: common.protocol,
            on_name_clash: a.on_name_clash,
            on_bad_name: a.on_bad_name,
        };
        let mut common = common;
        if let Some(t) = &a.sample_time
            && !a.corpus.as_deref().is_some_and(std::path::Path::is_dir)
        {
            bail!(
                "--sample-time {t} imports real files: give --corpus a directory, not a corpus description"
            );
        }
        let wanted = match sample_time_of(a)? {
            Some((secs, auto)) => {
                common.measure.duration_s = Some(secs);
                common.measure.once = true;
                common.measure.auto_sample = auto;
                a.sample.unwrap_or(u64::MAX)
            }
            None => a.sample.unwrap_or(a.docs),
        };
        let (corpus, drawn, described) = match a.corpus.as_deref() {
            Some(p) => {
                let (c, n, d) = corpus_input(p, wanted, &common, policy)?;
                (Some(c), n, d)
            }
            None => (None, wanted, None),
        };
        let docs = match &corpus {
            Some(CorpusInput::Files(_, f)) => f.len() as u64,
            _ => a.docs,
        };
        if a.json && a.common.json_lines {
            bail!(
                "--json and --json-lines both write to stdout: give one (--json: the whole result at the end; --json-lines: a line per run as it ends)"
            );
        }
        Ok(RunPlan {
            url,
            size: a.size,
            docs,
            threads: a.threads,
            runs: a.runs,
            ca_cert: a.ca_cert.clone(),
            json: a.json,
            output: a.output.clone(),
            results_dir: a.results_dir.clone(),
            target_data_dir: a.target_data_dir.clone(),
            corpus,
            flatten: a.flatten,
            // What a resume draws again: the files asked for, or (by time) all it drew.
            sample: if a.sample_time.is_some() {
                drawn
            } else {
                wanted
            },
            on_name_clash: a.on_name_clash,
            on_bad_name: a.on_bad_name,
            auto: AutoPlan::of(
                &common.measure,
                common.protocol,
                described,
                u64::from(a.runs),
            ),
            eta_prior: a
                .estimate
                .as_deref()
                .map(|p| eta_prior(p, a.threads))
                .transpose()?,
            common,
        })
    }
}

/// `--estimate FILE`: the prior an estimate.json gives the import's ETA.
fn eta_prior(path: &std::path::Path, threads: u64) -> Result<(f64, f64)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--estimate {}: cannot read it", path.display()))?;
    let est: crate::analysis::estimate::Estimate =
        serde_json::from_str(&text).with_context(|| {
            format!(
                "--estimate {}: not an estimate.json (`ingestbench estimate` writes one)",
                path.display()
            )
        })?;
    est.eta_prior(threads).with_context(|| {
        format!(
            "--estimate {}: it holds no option with a duration to take the ETA's prior from",
            path.display()
        )
    })
}

/// `--sample-time`: a positive duration.
fn sample_time(t: &str) -> Result<f64> {
    match parse_duration(t) {
        Some(v) if v > 0.0 => Ok(v),
        _ => bail!("--sample-time {t}: give a positive duration such as 2m or 10m, or auto"),
    }
}

/// `--max-sample-time` when not given: what a fixed pilot's documentation suggests.
pub const MAX_SAMPLE_TIME_S: f64 = 600.0;
/// `--target-precision` when not given (%).
pub const TARGET_PRECISION_PCT: f64 = 15.0;
/// `--max-sample-share` when not given (% of the corpus's documents, the pilot's runs
/// together).
pub const MAX_SAMPLE_SHARE_PCT: f64 = 15.0;

/// A percentage as a flag gives it (`15`, `7.5%`, `40 %`), when more than 0.
fn percent(p: &str) -> Option<f64> {
    p.trim()
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0)
}

/// `--sample-time`, `--max-sample-time` and `--target-precision`, checked together: the
/// window of each run (auto: the cap) and, for auto, its aim.
fn sample_time_of(a: &RunArgs) -> Result<Option<(f64, Option<crate::results::AutoSample>)>> {
    let auto = a.sample_time.as_deref().map(str::trim) == Some("auto");
    if !auto && let Some(m) = &a.max_sample_time {
        bail!(
            "--max-sample-time {m}: it caps a pilot that stops when its estimate is sharp; give it with --sample-time auto (a fixed --sample-time is its own length)"
        );
    }
    if !auto && let Some(p) = &a.target_precision {
        bail!(
            "--target-precision {p}: it is what a pilot that stops when its estimate is sharp aims at; give it with --sample-time auto"
        );
    }
    if !auto && let Some(p) = &a.max_sample_share {
        bail!(
            "--max-sample-share {p}: it caps a pilot that stops when its estimate is sharp; give it with --sample-time auto (a fixed --sample-time or --sample is its own size)"
        );
    }
    let Some(t) = &a.sample_time else {
        return Ok(None);
    };
    if !auto {
        return Ok(Some((sample_time(t)?, None)));
    }
    let max_s = match a.max_sample_time.as_deref() {
        None => MAX_SAMPLE_TIME_S,
        Some(m) => match parse_duration(m) {
            Some(v) if v > 0.0 => v,
            _ => bail!("--max-sample-time {m}: give a positive duration such as 5m or 10m"),
        },
    };
    let target_pct = match a.target_precision.as_deref() {
        None => TARGET_PRECISION_PCT,
        Some(p) => percent(p).filter(|v| *v < 100.0).with_context(|| {
            format!("--target-precision {p}: give a percentage more than 0 and below 100, e.g. 15 (±15 %)")
        })?,
    };
    let max_share_pct = match a.max_sample_share.as_deref() {
        None => MAX_SAMPLE_SHARE_PCT,
        Some(p) => percent(p).filter(|v| *v <= 100.0).with_context(|| {
            format!("--max-sample-share {p}: give a percentage of the corpus more than 0 and at most 100, e.g. 15")
        })?,
    };
    let aim = crate::results::AutoSample {
        target_pct,
        max_s,
        max_share_pct: Some(max_share_pct),
    };
    Ok(Some((max_s, Some(aim))))
}

/// What `--corpus` resolved to: the input, the files drawn (at most the `n` asked, before
/// `--on-*` skips any), and the whole corpus's description.
type Resolved = (
    CorpusInput,
    u64,
    Option<Arc<crate::corpus::CorpusDescription>>,
);

/// `--corpus`: a directory's stratified sample of `n` files, or a description's size mix;
/// with the number of files drawn and the corpus's description.
fn corpus_input(
    p: &std::path::Path,
    n: u64,
    common: &CommonPlan,
    names: crate::corpus::policy::NamePolicy,
) -> Result<Resolved> {
    if p.is_dir() {
        return sample_files(p, n, common, names);
    }
    let described = Arc::new(crate::corpus::CorpusDescription::load_or_describe(p)?);
    let mix = CorpusInput::Mix(p.to_path_buf(), described.clone());
    Ok((mix, n, Some(described)))
}

/// `--corpus DIR`: a stratified sample of `n` of its files (said on stderr unless quiet).
fn sample_files(
    dir: &std::path::Path,
    n: u64,
    common: &CommonPlan,
    names: crate::corpus::policy::NamePolicy,
) -> Result<Resolved> {
    let (files, d) = crate::corpus::sample::sample(dir, n, common.seed)?;
    let drawn = n.min(d.documents);
    let (files, applied) = crate::corpus::policy::apply(names, files);
    if let Some(line) = applied.summary().filter(|_| !common.quiet) {
        eprintln!("{line}");
    }
    if files.is_empty() {
        bail!(
            "--corpus {}: none of the sampled files could be read",
            dir.display()
        );
    }
    if !common.quiet {
        let bytes: u64 = files.iter().map(|f| f.size).sum();
        let with_meta = files.iter().filter(|f| f.shadow.is_some()).count();
        eprintln!(
            "sampled {} files ({bytes} bytes, {with_meta} with shadow metadata) from {}",
            files.len(),
            dir.display()
        );
    }
    Ok((
        CorpusInput::Files(dir.to_path_buf(), Arc::new(files)),
        drawn,
        Some(Arc::new(d)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Run {
        #[command(flatten)]
        args: RunArgs,
    }

    fn run_args(args: &[&str]) -> RunArgs {
        let v = [&["ingestbench", "--corpus", "."], args].concat();
        <Run as clap::Parser>::try_parse_from(v).unwrap().args
    }

    /// `--estimate` names its file when it cannot be read or is not an estimate.
    #[test]
    fn a_bad_estimate_file_is_named() {
        let missing = format!(
            "{:#}",
            eta_prior(std::path::Path::new("/nonexistent/e.json"), 4).unwrap_err()
        );
        assert!(
            missing.contains("--estimate /nonexistent/e.json: cannot read it"),
            "{missing}"
        );
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("e.json");
        std::fs::write(&bad, "{\"docs\": 3}").unwrap();
        let wrong = format!("{:#}", eta_prior(&bad, 4).unwrap_err());
        assert!(wrong.contains("not an estimate.json"), "{wrong}");
    }

    fn sample_error(args: &[&str]) -> String {
        format!("{:#}", sample_time_of(&run_args(args)).unwrap_err())
    }

    #[test]
    fn sample_time_auto_parses_with_its_defaults_and_its_flags() {
        let auto = |target_pct, max_s, share| {
            Some(crate::results::AutoSample {
                target_pct,
                max_s,
                max_share_pct: Some(share),
            })
        };
        assert_eq!(
            sample_time_of(&run_args(&["--sample-time", "auto"])).unwrap(),
            Some((600.0, auto(15.0, 600.0, 15.0)))
        );
        let given = [
            "--sample-time",
            "auto",
            "--max-sample-time",
            "90s",
            "--target-precision",
            "7.5%",
            "--max-sample-share",
            "40 %",
        ];
        assert_eq!(
            sample_time_of(&run_args(&given)).unwrap(),
            Some((90.0, auto(7.5, 90.0, 40.0)))
        );
        assert_eq!(
            sample_time_of(&run_args(&["--sample-time", "2m"])).unwrap(),
            Some((120.0, None))
        );
        assert_eq!(sample_time_of(&run_args(&[])).unwrap(), None);
    }

    #[test]
    fn sample_time_auto_errors_name_the_flag() {
        for (args, needle) in [
            (&["--sample-time", "soon"][..], "--sample-time soon"),
            (&["--max-sample-time", "5m"], "--max-sample-time 5m"),
            (
                &["--sample-time", "2m", "--max-sample-time", "5m"],
                "--max-sample-time 5m",
            ),
            (&["--target-precision", "10"], "--target-precision 10"),
            (&["--max-sample-share", "10"], "--max-sample-share 10"),
            (
                &["--sample-time", "auto", "--max-sample-share", "0"],
                "--max-sample-share 0",
            ),
            (
                &["--sample-time", "auto", "--max-sample-share", "150"],
                "--max-sample-share 150",
            ),
            (
                &["--sample-time", "1m", "--target-precision", "10"],
                "--target-precision 10",
            ),
            (
                &["--sample-time", "auto", "--target-precision", "0"],
                "--target-precision 0",
            ),
            (
                &["--sample-time", "auto", "--target-precision", "100"],
                "--target-precision 100",
            ),
            (
                &["--sample-time", "auto", "--target-precision", "close"],
                "--target-precision close",
            ),
            (
                &["--sample-time", "auto", "--max-sample-time", "0s"],
                "--max-sample-time 0s",
            ),
            (
                &["--sample-time", "auto", "--max-sample-time", "a while"],
                "--max-sample-time a while",
            ),
        ] {
            let e = sample_error(args);
            assert!(e.contains(needle), "{args:?}: {e}");
        }
        assert!(sample_error(&["--max-sample-time", "5m"]).contains("--sample-time auto"));
    }

    /// `--sample-time auto` needs a directory: a corpus description fails before anything
    /// is read or uploaded, naming both flags.
    #[test]
    fn sample_time_auto_needs_a_corpus_directory() {
        let v = [
            "ingestbench",
            "--corpus",
            "Cargo.toml",
            "--sample-time",
            "auto",
        ];
        let a = <Run as clap::Parser>::try_parse_from(v).unwrap().args;
        let e = format!("{:#}", RunPlan::try_from(&a).unwrap_err());
        assert!(
            e.contains("--sample-time auto") && e.contains("--corpus a directory"),
            "{e}"
        );
    }

    #[test]
    fn urls_are_checked() {
        assert!(parse_url("http://localhost:8080").is_ok());
        assert!(format!("{:#}", parse_url("ftp://x").unwrap_err()).contains("--url"));
        assert!(
            format!("{:#}", parse_url("http://u:secret@x").unwrap_err()).contains("credentials")
        );
        assert!(!format!("{:#}", parse_url("http://u:secret@x").unwrap_err()).contains("secret"));
        assert!(parse_url("not a url").is_err());
    }
}
