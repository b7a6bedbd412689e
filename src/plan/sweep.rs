//! The sweep plan: access methods × connection policies × size classes × thread counts ×
//! runs, expanded and ordered (interleaved or shuffled with the seed) in one place. Built
//! without network I/O: whether the access methods answer is asked by the engine before the
//! first run ([`SweepDraft`]).

use std::path::Path;

use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::CommonPlan;
use super::options::SweepArgs;
use crate::fixtures::{SampledFile, SizeClass};
use crate::results::Order;
use crate::results::{CellKey, CellRun, MethodRecord, PlanRecord};
use crate::transport::access::{self, AccessMethod, ConnectionPolicy};

/// Parses `1-10,15,20` into sorted, distinct thread counts (each 1..=10000).
pub fn parse_threads(s: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| -> Result<u64> {
            match t.trim().parse::<u64>() {
                Ok(n) if (1..=10_000).contains(&n) => Ok(n),
                _ => bail!(
                    "--threads `{s}`: `{t}` is not a thread count from 1 to 10000 (use e.g. 1-10,15,20)"
                ),
            }
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    bail!("--threads `{s}`: range `{part}` runs backwards");
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    if out.is_empty() {
        bail!("--threads is empty (use e.g. 1-10,15,20)");
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The methods asked for: those named (`--access-methods`), or every method in the
/// directory; whether each answers is the engine's to ask (`engine::settle_methods`).
fn asked_methods(a: &SweepArgs) -> Result<Vec<AccessMethod>> {
    if a.access_methods.is_empty() {
        return access::list(&a.access_methods_dir);
    }
    let mut methods: Vec<AccessMethod> = Vec::new();
    for spec in &a.access_methods {
        let m = access::resolve(spec, &a.access_methods_dir)?;
        if methods.iter().any(|x| x.name == m.name) {
            bail!("--access-methods: `{}` is listed twice", m.name);
        }
        methods.push(m);
    }
    Ok(methods)
}

/// A sweep's plan before its access methods are settled: every other flag checked and the
/// methods asked for read from their files, none yet asked whether it answers. The engine
/// asks before the first run (`engine::settle_methods`), then [`SweepDraft::settle`] makes
/// the plan of those that answer.
#[derive(Debug, Clone)]
pub struct SweepDraft {
    /// The methods asked for, in order.
    pub methods: Vec<AccessMethod>,
    /// `None`: the methods were named, and each must answer; else they are every method of
    /// this directory (the default), and those that do not answer are skipped.
    pub listed_from: Option<std::path::PathBuf>,
    /// `--baseline`.
    baseline: Option<String>,
    /// The rest of the plan; its methods, unreachable ones and baseline come with `settle`.
    spec: SweepPlan,
}

impl SweepDraft {
    /// The plan of `methods` (those of [`SweepDraft::methods`] that answer; `unreachable`:
    /// the others, skipped, with the reason): each speaks the sweep's protocol, and the
    /// baseline is one of them.
    pub fn settle(
        self,
        methods: Vec<AccessMethod>,
        unreachable: Vec<(String, String)>,
    ) -> Result<SweepPlan> {
        let common = &self.spec.common;
        for m in &methods {
            if m.is_embedded() && common.protocol == crate::protocol_kind::ProtocolKind::Cmis {
                bail!(
                    "access method {}: the embedded target does not speak CMIS; use a method pointing at a CMIS repository (scripts/cmis.sh up)",
                    m.name
                );
            }
            if let Some(p) = m.protocol
                && p != common.protocol
            {
                bail!(
                    "access method {} ({}) is for {}, but the sweep speaks {}; pass --protocol {} or choose other methods",
                    m.name,
                    m.source.display(),
                    p.name(),
                    common.protocol.name(),
                    p.name()
                );
            }
        }
        let baseline = match &self.baseline {
            Some(b) if methods.iter().any(|m| &m.name == b) => b.clone(),
            Some(b) => bail!(
                "--baseline {b}: not one of the swept methods ({})",
                methods
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None if methods.iter().any(|m| m.name == "direct") => "direct".to_string(),
            None => methods[0].name.clone(),
        };
        Ok(SweepPlan {
            methods,
            unreachable,
            baseline,
            ..self.spec
        })
    }
}

/// A validated `sweep`: every flag checked and the access methods that answer settled
/// (`engine::settle_methods`); recorded as a [`PlanRecord`](crate::results::PlanRecord).
#[derive(Debug, Clone)]
pub struct SweepPlan {
    pub common: CommonPlan,
    pub methods: Vec<AccessMethod>,
    /// Methods that were listed by default but did not answer (name, reason).
    pub unreachable: Vec<(String, String)>,
    /// Empty = each method's own connection policy.
    pub connections: Vec<ConnectionPolicy>,
    pub sizes: Vec<SizeClass>,
    pub threads: Vec<u64>,
    pub docs: u64,
    pub runs: u32,
    pub order: Order,
    pub baseline: String,
    /// The corpus whose size mix the size classes stand for (`--corpus`).
    pub corpus: Option<String>,
    /// `--corpus DIR`: each size class's sample of the directory's real files.
    pub files: Option<std::collections::HashMap<SizeClass, Arc<Vec<SampledFile>>>>,
    /// `--rates`: each cell's paced rate (docs/s), 0 first for the readers-alone baseline
    /// (`--readers`); empty: no rate axis.
    pub rates: Vec<f64>,
}

impl SweepPlan {
    /// Checks the axes and every other flag and reads the methods asked for: the plan but
    /// for which methods answer (see [`SweepDraft`]). No network I/O.
    pub fn draft(a: &SweepArgs) -> Result<SweepDraft> {
        let mut common = CommonPlan::try_from(&a.common)?;
        if let Some(b) = &a.budget {
            if common.shard.is_some() {
                bail!(
                    "--budget cannot be combined with --shard: every shard must run the same runs (give --runs instead)"
                );
            }
            common.measure.budget_s = match super::parse_duration(b) {
                Some(v) if v > 0.0 => Some(v),
                _ => bail!("--budget {b}: give a positive duration such as 90s, 3m or 1h"),
            };
            if a.common.max_runs.is_none() {
                common.measure.max_runs = super::MAX_RUNS_BUDGET;
            }
            common.measure.defer_between = true;
        }
        let mut sizes = a.sizes.clone();
        sizes.dedup();
        let (corpus, files) = match &a.corpus {
            Some(p) => {
                let c = crate::corpus::CorpusDescription::load_or_describe(p)?;
                common.sizes =
                    sizes_of_corpus(&c).with_context(|| format!("--corpus {}", p.display()))?;
                // A description of a directory that is still here samples its real files, as
                // `--corpus DIR` does: the import sends real files, and on the real OpenCMIS
                // server they cost 1.3-1.5x what generated documents of the same sizes cost.
                // Generated documents only where the files are not (a listing, another machine).
                let dir = if p.is_dir() {
                    Some(p.to_path_buf())
                } else {
                    Some(std::path::PathBuf::from(&c.source))
                        .filter(|d| c.kind == "directory" && d.is_absolute() && d.is_dir())
                };
                match dir {
                    Some(d) => {
                        let files = class_samples(&d, &mut common, &mut sizes, a.docs)?;
                        (Some(d.display().to_string()), Some(files))
                    }
                    None => (Some(c.source), None),
                }
            }
            None => (None, None),
        };
        let threads = parse_threads(&a.threads)?;
        let methods = asked_methods(a)?;
        let mut connections = a.connection.clone();
        connections.dedup();
        let rates = rate_axis(&a.rates, &common)?;
        Ok(SweepDraft {
            methods,
            listed_from: a
                .access_methods
                .is_empty()
                .then(|| a.access_methods_dir.clone()),
            baseline: a.baseline.clone(),
            spec: SweepPlan {
                common,
                methods: Vec::new(),
                unreachable: Vec::new(),
                connections,
                sizes,
                threads,
                docs: a.docs,
                runs: a.runs,
                order: a.order,
                baseline: String::new(),
                corpus,
                files,
                rates,
            },
        })
    }

    /// Connection policies a method runs with.
    pub fn connections_of(&self, m: &AccessMethod) -> Vec<ConnectionPolicy> {
        if self.connections.is_empty() {
            vec![m.connection]
        } else {
            self.connections.clone()
        }
    }

    /// Comparisons pair each method's runs with its baseline's of the same number: the
    /// interleaved schedule runs them back to back (see [`schedule`]).
    pub fn paired(&self) -> bool {
        self.order == Order::Interleaved
    }

    /// Every cell, in report order.
    pub fn cells(&self) -> Vec<CellKey> {
        let mut out = Vec::new();
        for m in &self.methods {
            for c in self.connections_of(m) {
                for s in &self.sizes {
                    for &t in &self.threads {
                        for rate_per_s in self.rate_keys() {
                            out.push(CellKey {
                                method: m.name.clone(),
                                connection: c,
                                size: *s,
                                threads: t,
                                rate_per_s,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The rate keys of the cells: `None` alone without a rate axis.
    fn rate_keys(&self) -> Vec<Option<f64>> {
        if self.rates.is_empty() {
            vec![None]
        } else {
            self.rates.iter().copied().map(Some).collect()
        }
    }
}

/// `--rates`, checked: each rate as `--rate` takes it, distinct, in increasing order, and 0
/// (the readers-alone baseline) first when readers run beside the import.
fn rate_axis(given: &[f64], common: &CommonPlan) -> Result<Vec<f64>> {
    if given.is_empty() {
        return Ok(Vec::new());
    }
    if common.measure.rate_per_s.is_some() {
        bail!("--rates cannot be combined with --rate: give the one rate in --rates");
    }
    let mut rates = Vec::with_capacity(given.len() + 1);
    for &r in given {
        if !(r.is_finite() && r > 0.0 && r <= 1e6) {
            bail!(
                "--rates: {r} is not a rate; give documents per second, each more than 0 and at most 1000000, e.g. 10,20,40"
            );
        }
        rates.push(r);
    }
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    if common.measure.readers.is_some() {
        rates.insert(0, 0.0);
    }
    Ok(rates)
}

impl SweepPlan {
    /// The plan as recorded in `plan.json` (no secrets), under the sweep's `id`.
    pub fn record(&self, id: &str) -> PlanRecord {
        let c = &self.common;
        let mut connections: Vec<ConnectionPolicy> = Vec::new();
        for p in self.methods.iter().flat_map(|m| self.connections_of(m)) {
            if !connections.contains(&p) {
                connections.push(p);
            }
        }
        PlanRecord {
            methods: self
                .methods
                .iter()
                .map(|m| method_record(m, self.connections_of(m)))
                .collect(),
            connections,
            sizes: self.sizes.iter().map(|s| (*s, c.sizes.of(*s))).collect(),
            threads: self.threads.clone(),
            docs: self.docs,
            runs: self.runs,
            order: self.order,
            baseline: self.baseline.clone(),
            corpus: self.corpus.clone(),
            rates: self.rates.clone(),
            ..c.record(id, crate::results::PlanKind::Sweep)
        }
    }

    /// The spec of an interrupted sweep, from its `plan.json` and `methods.json` (`--resume`):
    /// credentials, retries, quiet and thresholds come from this command line.
    pub fn from_record(
        a: &SweepArgs,
        plan: &PlanRecord,
        methods: Vec<AccessMethod>,
    ) -> Result<SweepPlan> {
        let common = CommonPlan::resumed(&a.common, plan)?;
        let (methods, connections) = recorded_policies(plan, methods);
        let mut common = common;
        let mut sizes: Vec<SizeClass> = plan.sizes.iter().map(|(s, _)| *s).collect();
        // A sweep of a directory's real files draws the same samples again (same seed).
        let files = match plan.corpus.as_deref().map(std::path::Path::new) {
            Some(dir) if dir.is_dir() => {
                let c = crate::corpus::describe(dir)?;
                common.sizes = sizes_of_corpus(&c)?;
                Some(class_samples(dir, &mut common, &mut sizes, plan.docs)?)
            }
            _ => None,
        };
        Ok(SweepPlan {
            common,
            methods,
            unreachable: vec![],
            connections,
            sizes,
            threads: plan.threads.clone(),
            docs: plan.docs,
            runs: plan.runs,
            order: plan.order,
            baseline: plan.baseline.clone(),
            corpus: plan.corpus.clone(),
            files,
            rates: plan.rates.clone(),
        })
    }

    /// The planned runs still to do, in schedule order: every `(cell, run)` not in `done`,
    /// but those `--budget` gives only if its time allows ([`Self::deferred`]).
    pub fn pending(&self, done: &[CellRun]) -> Vec<(CellKey, u32)> {
        self.todo(done, false)
    }

    /// With `--budget`: the runs at the thread counts in between not yet done, in schedule
    /// order, that the budget gives after the comparisons the answers state
    /// (`results::budget_defers`).
    pub fn deferred(&self, done: &[CellRun]) -> Vec<(CellKey, u32)> {
        self.todo(done, true)
    }

    fn todo(&self, done: &[CellRun], deferred: bool) -> Vec<(CellKey, u32)> {
        let compared = self.common.measure.defer_between && self.methods.len() > 1;
        super::schedule::schedule(&self.cells(), self.runs, self.order, self.common.seed)
            .into_iter()
            .filter(|(c, r)| {
                crate::results::budget_defers(compared, &self.threads, c.threads, *r) == deferred
            })
            .filter(|(c, r)| !done.iter().any(|d| &d.cell == c && d.record.run == *r))
            .collect()
    }

    /// Every `(method, policy)` pair some pending run uses, for connecting.
    pub fn pairs(&self, pending: &[(CellKey, u32)]) -> Vec<(AccessMethod, ConnectionPolicy)> {
        self.methods
            .iter()
            .flat_map(|m| self.connections_of(m).into_iter().map(move |p| (m, p)))
            .filter(|(m, p)| {
                pending
                    .iter()
                    .any(|(c, _)| c.method == m.name && c.connection == *p)
            })
            .map(|(m, p)| (m.clone(), p))
            .collect()
    }

    /// A rough duration, before anything is measured: a few ms per upload plus the bytes at
    /// ~150 MB/s, spread over the workers (at most 4 truly parallel on a small box).
    pub fn estimate_secs(&self, pending: &[(CellKey, u32)]) -> f64 {
        let m = &self.common.measure;
        pending
            .iter()
            .map(|(c, _)| {
                let per = 0.003 + self.common.sizes.of(c.size) as f64 / 150e6;
                let rate = c.threads.min(4) as f64 / per;
                let measured = match c.rate_per_s {
                    // Paced: the schedule's length; the readers-alone baseline: its seeding
                    // import, then the readers for the longest schedule's length.
                    Some(r) if r > 0.0 => m.duration_s.unwrap_or(self.docs as f64 / r),
                    Some(_) => {
                        let slowest = self.rates.iter().copied().find(|r| *r > 0.0);
                        self.docs as f64 / rate
                            + m.duration_s
                                .or(slowest.map(|r| self.docs as f64 / r))
                                .unwrap_or(0.0)
                    }
                    None => m.duration_s.unwrap_or(self.docs as f64 / rate),
                };
                let warm = match m.warmup.resolve(self.docs, c.threads, m.duration_s, true) {
                    crate::results::Warmup::Docs(n) => n as f64 / rate,
                    crate::results::Warmup::Seconds(s) => s,
                    crate::results::Warmup::Auto | crate::results::Warmup::Steady => {
                        let a = crate::results::Warmup::AUTO_RULE;
                        (a.min_window.as_secs_f64() * a.windows as f64)
                            .max(2.0 * a.horizon.as_secs_f64())
                    }
                };
                measured + warm
            })
            .sum()
    }

    /// With `--precision`: the estimate if every cell needed `--max-runs` runs.
    pub fn estimate_secs_max(&self, pending: &[(CellKey, u32)]) -> Option<f64> {
        let m = &self.common.measure;
        m.precision_pct?;
        let more = f64::from(m.max_runs.max(self.runs)) / f64::from(self.runs.max(1));
        Some(self.estimate_secs(pending) * more)
    }
}

/// The three size classes that stand for a corpus's mix: its 10th percentile, its median,
/// and the size below which half its bytes lie (at least the 90th percentile), so the
/// measured sizes span where its documents and its bytes are. At least 1 KiB each (the
/// smallest fixture), strictly increasing.
pub fn sizes_of_corpus(c: &crate::corpus::CorpusDescription) -> Result<crate::fixtures::Sizes> {
    if c.documents == 0 {
        bail!("the corpus has no documents");
    }
    let min = crate::fixtures::body::MIN_DOC_SIZE;
    let small = c.sizes.p10.max(min);
    let average = c.sizes.p50.max(small + 1);
    let large = c.sizes.bytes_p50.max(c.sizes.p90).max(average + 1);
    Ok(crate::fixtures::Sizes {
        small,
        average,
        large,
    })
}

/// `sweep --corpus DIR`: each size class becomes the directory's real files around its
/// quantile size (small below the geometric midpoint of small and average, large above that
/// of average and large), `docs` of them drawn with the seed; a class's size is then its
/// sample's mean. Classes the corpus has no files for are dropped.
fn class_samples(
    dir: &Path,
    common: &mut CommonPlan,
    sizes: &mut Vec<SizeClass>,
    docs: u64,
) -> Result<std::collections::HashMap<SizeClass, Arc<Vec<SampledFile>>>> {
    let s = common.sizes;
    let b1 = ((s.small as f64) * (s.average as f64)).sqrt() as u64;
    let b2 = ((s.average as f64) * (s.large as f64)).sqrt() as u64;
    let mut out = std::collections::HashMap::new();
    sizes.retain(|class| {
        let (lo, hi) = match class {
            SizeClass::Small => (0, b1),
            SizeClass::Average => (b1, b2),
            SizeClass::Large => (b2, u64::MAX),
        };
        let files = crate::corpus::sample::sample_range(dir, docs, common.seed, lo, hi);
        if files.is_empty() {
            return false;
        }
        let mean = files.iter().map(|f| f.size).sum::<u64>() / files.len() as u64;
        match class {
            SizeClass::Small => common.sizes.small = mean,
            SizeClass::Average => common.sizes.average = mean,
            SizeClass::Large => common.sizes.large = mean,
        }
        out.insert(*class, Arc::new(files));
        true
    });
    if sizes.is_empty() {
        bail!(
            "--corpus {}: no readable files in any size class",
            dir.display()
        );
    }
    Ok(out)
}

/// Each method's own connection policies, as `plan.json` recorded them. A `--connection`
/// list applied to every method (all lists equal) is the spec's override; otherwise each
/// method ran with its file's single policy. Plans from before per-method records: the
/// recorded union, as then.
fn recorded_policies(
    plan: &PlanRecord,
    mut methods: Vec<AccessMethod>,
) -> (Vec<AccessMethod>, Vec<ConnectionPolicy>) {
    let lists: Vec<Vec<ConnectionPolicy>> = methods
        .iter()
        .map(|m| {
            plan.methods
                .iter()
                .find(|r| r.name == m.name)
                .map(|r| r.connections.clone())
                .unwrap_or_default()
        })
        .collect();
    if lists.iter().any(Vec::is_empty) {
        return (methods, plan.connections.clone());
    }
    if lists.windows(2).all(|w| w[0] == w[1]) && lists[0].len() > 1 {
        return (methods, lists[0].clone());
    }
    for (m, l) in methods.iter_mut().zip(&lists) {
        m.connection = l[0];
    }
    (methods, Vec::new())
}

/// An access method as `plan.json` records it (URL without credentials).
pub fn method_record(m: &AccessMethod, connections: Vec<ConnectionPolicy>) -> MethodRecord {
    let url = match reqwest::Url::parse(&m.url) {
        Ok(u) if !m.is_embedded() => crate::transport::access::redact(&u),
        _ => m.url.clone(),
    };
    MethodRecord {
        name: m.name.clone(),
        description: m.description.clone(),
        url,
        http_version: m.http_version,
        embedded: m.is_embedded(),
        connections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists() {
        assert_eq!(
            parse_threads("1-10,15,20,30,50,70,90,100").unwrap().len(),
            17
        );
        assert_eq!(parse_threads("4,1,2-3,2").unwrap(), vec![1, 2, 3, 4]);
        for bad in ["0", "a", "5-2", "", "1-20000"] {
            assert!(
                format!("{:#}", parse_threads(bad).unwrap_err()).contains("--threads"),
                "{bad}"
            );
        }
    }
}
