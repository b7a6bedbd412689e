//! `ingestbench run`: one measured cell against a URL or the embedded target.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result, bail};

use super::{Progress, password, rand_u64, write_file};
use crate::cli::RunArgs;
use crate::engine::{
    self, Folders, JobSpec, LiveCounters, RunMeasurement, RunObserver, Session, SweepJob,
};
use crate::manifest::{Manifest, ManifestEntry};
use crate::plan::{self, RunPlan};
use crate::transport::ConnectionPolicy;
use crate::{Outcome, host, report, timefmt};

/// For `--resume DIR`: the interrupted run's own plan (flags from its result.json, the URL
/// and credentials from this command line), its id, what its manifest shows done, and which
/// attempt this is (k for the k-th resume: the interrupted results kept as result.k.json).
type Resumed = (RunArgs, String, Vec<ManifestEntry>, u32);

/// Did the run whose final result this is upload every planned document (count mode)? Then
/// a `--resume` (after a stop at its very end) has nothing to do and keeps its result.
fn finished(r: &report::RunResult, entries: &[ManifestEntry]) -> bool {
    let p = &r.plan;
    if r.in_progress || p.measure.duration_s.is_some() || p.measure.precision_pct.is_some() {
        return false;
    }
    let quotas: u64 = r.worker_quotas.iter().sum();
    let done: std::collections::HashSet<(u32, u64)> = entries
        .iter()
        .filter(|e| e.ok && !e.warmup)
        .map(|e| (e.run, e.index))
        .collect();
    done.len() as u64 >= quotas * u64::from(p.runs)
}

/// `--resume` of a run that had finished (stopped after its final result was written): its
/// result, kept as it is.
fn already_finished(args: &RunArgs) -> Result<Option<report::RunResult>> {
    let Some(dir) = &args.resume else {
        return Ok(None);
    };
    let Ok(text) = std::fs::read_to_string(dir.join("result.json")) else {
        return Ok(None);
    };
    let Ok(r) = serde_json::from_str::<report::RunResult>(&text) else {
        return Ok(None);
    };
    let entries = Manifest::read(&dir.join("manifest.jsonl"))?;
    Ok(finished(&r, &entries).then_some(r))
}

fn resumed_args(args: &RunArgs) -> Result<Option<Resumed>> {
    let Some(dir) = &args.resume else {
        return Ok(None);
    };
    let path = dir.join("result.json");
    if !path.exists() && dir.join("manifest.jsonl").exists() {
        bail!(
            "--resume {}: the run stopped before its first upload (no result.json yet): nothing was uploaded; start a new run",
            dir.display()
        );
    }
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "--resume {}: no result.json there (give a results/run-<id> directory)",
            dir.display()
        )
    })?;
    let r: report::RunResult = serde_json::from_str(&text)
        .with_context(|| format!("{}: not an ingestbench run result", path.display()))?;
    let entries = Manifest::read(&dir.join("manifest.jsonl"))?;
    let mut a = args.clone();
    let p = &r.plan;
    a.docs = p.docs;
    a.threads = p.threads;
    a.runs = p.runs;
    a.size = p.size_class;
    let bytes = p.doc_size_bytes.to_string();
    match a.size {
        crate::fixtures::SizeClass::Small => a.common.small_size = bytes,
        crate::fixtures::SizeClass::Average => a.common.average_size = bytes,
        crate::fixtures::SizeClass::Large => a.common.large_size = bytes,
    }
    a.common.seed = p.seed;
    a.corpus = p.corpus.as_ref().map(PathBuf::from);
    if a.corpus.as_ref().is_some_and(|c| c.is_dir()) {
        a.sample = Some(p.corpus_names.map_or(p.docs, |n| n.sample));
        a.flatten = !p.corpus_tree;
        if let Some(n) = p.corpus_names {
            (a.on_name_clash, a.on_bad_name) = (n.on_name_clash, n.on_bad_name);
        }
    }
    a.common.profile = Some(
        p.profile
            .strip_prefix("built-in:")
            .unwrap_or(&p.profile)
            .to_string(),
    );
    a.common.protocol = p.protocol;
    a.common.parent = Some(p.parent.clone());
    a.common.user = p.user.clone();
    a.common.docs_per_folder = p.docs_per_folder;
    a.common.no_versioning = !p.versioning;
    let m = &p.measure;
    a.common.warmup = match m.warmup {
        crate::records::Warmup::Auto | crate::records::Warmup::Steady => "auto".into(),
        crate::records::Warmup::Docs(n) => n.to_string(),
        crate::records::Warmup::Seconds(s) => format!("{s}s"),
    };
    a.common.duration = m.duration_s.map(|d| format!("{d}s"));
    a.common.precision = m.precision_pct.map(|p| format!("{p}%"));
    a.common.max_runs = Some(m.max_runs.max(1));
    a.results_dir = dir
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    if a.url.is_none() {
        if r.target.embedded && a.target_data_dir.is_none() {
            bail!(
                "--resume {}: the run used the embedded target with a temporary store, which is gone; nothing to resume into",
                dir.display()
            );
        }
        if !r.target.embedded {
            a.url = Some(r.target.url.clone());
        }
    }
    // Keep the interrupted run's result beside the new one: a copy, so result.json stays in
    // place until the new in-progress result replaces it (a stop in between loses nothing).
    // The copy's number is this attempt's, on disk before its first upload.
    let mut k = 1;
    while dir.join(format!("result.{k}.json")).exists() {
        k += 1;
    }
    crate::results::write_atomic(&dir.join(format!("result.{k}.json")), &text)?;
    Ok(Some((a, r.id, entries, k)))
}

/// Collects the runs as they end (the result is written once, at the end).
struct Runs {
    done: Vec<RunMeasurement>,
    cpu_s: f64,
    /// `--json-lines`: a line per finished run.
    lines: bool,
}

impl RunObserver for Runs {
    fn finished(
        &mut self,
        cell: &crate::records::CellKey,
        m: RunMeasurement,
        client_cpu_s: f64,
        interrupted: bool,
    ) -> Result<()> {
        if self.lines && !interrupted {
            let line = report::lines::run_line(cell, &report::run_record(&m))?;
            report::lines::emit(&line)?;
        }
        self.done.push(m);
        self.cpu_s += client_cpu_s;
        Ok(())
    }
}

/// The password for `run`: the embedded target's (given or `admin`), or the given one.
fn secret_for(plan: &RunPlan) -> Result<crate::protocol::Secret> {
    match &plan.url {
        Some(_) => password(&plan.common),
        None if plan.common.protocol == crate::protocol::ProtocolKind::Cmis => bail!(
            "--protocol cmis needs --url (the CMIS browser binding service URL): the embedded target speaks Alfresco and Liferay; scripts/cmis.sh up starts a real CMIS repository"
        ),
        None => super::embedded_password(&plan.common),
    }
}

/// The measured runs of `run`, through the engine: one `direct` method, one cell.
async fn measure(
    plan: &RunPlan,
    session: &Session,
    id: &str,
    manifest: &Manifest,
    resumed: Option<(&[ManifestEntry], u32)>,
    live: &Arc<LiveCounters>,
    mut sidecars: crate::engine::Sidecars,
) -> Result<Runs> {
    // What the interrupted run's manifest shows (`--resume`).
    let (earlier, attempt) = resumed.unwrap_or_default();
    let resuming = resumed.is_some();
    let fixtures = HashMap::from([(plan.size, Arc::new(plan.fixtures()))]);
    let schedule = plan.schedule();
    let work = JobSpec {
        fixtures: &fixtures,
        schedule: &schedule,
        docs: plan.docs,
        folders: Folders::One {
            folder: format!("ingestbench/{id}"),
            // Derived from the id, so a resume after a hard stop that left no manifest line
            // makes the same documents (same markers, hence the same content) again.
            nonce: plan.common.seed ^ crate::fixtures::hash_str(id),
        },
        tag_manifest: false,
        resuming,
        attempt,
        earlier,
        history: HashMap::new(),
        baseline: None,
        paired: false,
    };
    let job = SweepJob::new(
        work,
        &plan.common,
        session,
        manifest,
        live.clone(),
        &mut sidecars,
    );
    let progress = Progress::start(job.docs_to_do(), plan.common.quiet, live.clone());
    let mut runs = Runs {
        done: Vec::new(),
        cpu_s: 0.0,
        lines: plan.common.json_lines,
    };
    let end = super::drive(job, &mut runs, &progress, sidecars).await;
    end?;
    Ok(runs)
}

/// With `--verify`, right after the runs: every acknowledged document read back.
async fn verify_now(
    plan: &RunPlan,
    repo: Arc<crate::protocol::Repo>,
    manifest: &Manifest,
) -> Result<crate::verify::VerifyReport> {
    let entries = Manifest::read(manifest.path())?;
    let expect = Arc::new(crate::verify::Expect {
        protocol: plan.common.protocol,
        profile: plan.common.profile.clone(),
        seed: plan.common.seed,
        hard_stopped: false,
    });
    let bar = super::bar(entries.len() as u64, plan.common.quiet, "verifying");
    let repos = HashMap::from([(String::new(), repo)]);
    Ok(crate::verify::verify(
        repos,
        expect,
        entries,
        (plan.threads as usize).clamp(1, 16),
        bar,
    )
    .await)
}

/// Writes result.json (and `--output`), prints the summary; returns result.json's path.
fn write_result(plan: &RunPlan, results: &Path, result: &report::RunResult) -> Result<PathBuf> {
    let json = serde_json::to_string_pretty(result)?;
    let result_path = results.join("result.json");
    crate::results::write_atomic(&result_path, &json)?;
    if let Some(out) = &plan.output {
        write_file(out, &json).with_context(|| format!("--output {}", out.display()))?;
    }
    if plan.json {
        println!("{json}");
    }
    if !plan.common.quiet {
        let text = report::summary_text(result);
        let tail = format!("  results: {}\n", result_path.display());
        if plan.json || plan.common.json_lines {
            eprint!("{text}{tail}");
        } else {
            print!("{text}{tail}");
        }
    }
    if let Some(v) = &result.verify {
        std::fs::write(
            results.join("verify.json"),
            serde_json::to_string_pretty(v)?,
        )?;
    }
    Ok(result_path)
}

/// Creates the results directory and the manifest, and writes the in-progress result.json
/// (what --resume, verify and cleanup need) before the first upload; returns the manifest and
/// the result's inputs.
fn prepare_results(
    plan: &RunPlan,
    results: &Path,
    id: &str,
    started_at: String,
    session: &Session,
    direct: &engine::Connected,
) -> Result<(Manifest, report::Inputs)> {
    std::fs::create_dir_all(results).with_context(|| {
        format!(
            "--results-dir {}: cannot create {}",
            plan.results_dir.display(),
            results.display()
        )
    })?;
    let manifest = Manifest::create(&results.join("manifest.jsonl"))?;
    let inputs = report::Inputs {
        id: id.to_string(),
        started_at,
        plan: plan.record(),
        host: host::facts(),
        target: report::RepositoryRecord {
            url: plan::redact(&direct.url),
            embedded: session.embedded.is_some(),
            stored_docs: None,
        },
        worker_quotas: engine::shard_quotas(
            plan.docs,
            plan.threads,
            plan.common.shard.as_ref().map(|s| (s.index, s.count)),
        ),
        client_cpu_s: 0.0,
        manifest: "manifest.jsonl".into(),
    };
    let mut pending = report::build(inputs.clone(), &[]);
    pending.in_progress = true;
    pending.shard = plan
        .common
        .shard
        .as_ref()
        .map(crate::plan::ShardPlan::record);
    crate::results::write_atomic(
        &results.join("result.json"),
        &serde_json::to_string_pretty(&pending)?,
    )?;
    Ok((manifest, inputs))
}

/// `run`: returns the outcome and the result (for tests).
pub async fn run_command(args: &RunArgs) -> Result<(Outcome, report::RunResult)> {
    if let Some(r) = already_finished(args)? {
        let dir = args.resume.as_deref().unwrap_or(Path::new("."));
        eprintln!(
            "--resume {}: nothing to finish: all {} planned documents were uploaded and result.json is final (check them with `ingestbench verify {}`)",
            dir.display(),
            r.worker_quotas.iter().sum::<u64>() * u64::from(r.plan.runs),
            dir.display()
        );
        let outcome = if r.docs_failed == 0 {
            Outcome::Success
        } else {
            Outcome::Failures
        };
        let thresholds =
            crate::threshold::parse_all(&args.common.fail_if, crate::threshold::Scope::Results)?;
        let crossed = crate::threshold::check_run(&thresholds, &r);
        return Ok((super::gate(outcome, &crossed), r));
    }
    let resumed = resumed_args(args)?;
    let args = resumed.as_ref().map_or(args, |r| &r.0);
    let plan = RunPlan::try_from(&crate::plan::flags::RunFlags::from(args))?;
    let shard = plan.common.shard.clone();
    // Every shard of a plan uploads below the same folder with the same document markers.
    let id = match (&resumed, &shard) {
        (Some((_, id, _, _)), _) => id.clone(),
        (None, Some(s)) => s.plan_id.clone(),
        (None, None) => format!("{}-{:04x}", timefmt::compact_now(), rand_u64() & 0xffff),
    };
    let started_at = timefmt::datetime_ms(timefmt::now_ms());
    let secret = secret_for(&plan)?;
    let session = Session::open(
        &plan.common,
        &[(plan.method(), ConnectionPolicy::Reuse)],
        &secret,
        plan.target_data_dir.as_deref(),
        plan.threads as usize,
    )
    .await?;
    let direct = session.get("direct", ConnectionPolicy::Reuse)?.clone();
    let results = plan.results_dir.join(match &shard {
        Some(s) => format!("run-{id}-shard-{}of{}", s.index, s.count),
        None => format!("run-{id}"),
    });
    // A --jtl file or --metrics-listen address that cannot be used fails before anything
    // is written.
    let mut sidecars = super::start_sidecars(&plan.common).await?;
    let (manifest, inputs) = prepare_results(&plan, &results, &id, started_at, &session, &direct)?;
    let earlier = resumed.as_ref().map(|r| (r.2.as_slice(), r.3));
    let live = Arc::new(LiveCounters::default());
    sidecars.rendezvous = crate::engine::join_rendezvous(shard.as_ref(), resumed.is_some()).await?;
    let runs = measure(&plan, &session, &id, &manifest, earlier, &live, sidecars).await?;
    let interrupted = live.interrupted.load(Ordering::Relaxed);
    let verified = if args.verify
        && !interrupted
        && !manifest.broken()
        && runs.done.iter().all(|o| o.fatal.is_none())
    {
        Some(verify_now(&plan, direct.repo.clone(), &manifest).await?)
    } else {
        None
    };
    let stored_docs = match &session.embedded {
        Some(t) => Some(
            t.handle
                .count_documents_under(
                    plan.common.protocol,
                    &plan.common.user,
                    &format!("ingestbench/{id}"),
                )
                .await?,
        ),
        None => None,
    };
    let mut result = report::build(
        report::Inputs {
            target: report::RepositoryRecord {
                stored_docs,
                ..inputs.target
            },
            client_cpu_s: runs.cpu_s,
            ..inputs
        },
        &runs.done,
    );
    result.verify = verified;
    result.shard = plan
        .common
        .shard
        .as_ref()
        .map(crate::plan::ShardPlan::record);
    let result_path = write_result(&plan, &results, &result)?;
    drop(session);
    let (outcome, result) = finish(&plan, &results, &result_path, &manifest, &live, result)?;
    let crossed = crate::threshold::check_run(&plan.common.thresholds, &result);
    Ok((super::gate(outcome, &crossed), result))
}

/// The exit: a manifest write error or a rejection is a setup error (2), an interrupt 130,
/// failed uploads or a failed verification 1.
fn finish(
    plan: &RunPlan,
    results: &Path,
    result_path: &Path,
    manifest: &Manifest,
    live: &LiveCounters,
    result: report::RunResult,
) -> Result<(Outcome, report::RunResult)> {
    if let Err(e) = manifest.flush() {
        bail!("{e:#}\n  partial results: {}", result_path.display());
    }
    if let Some(reason) = &result.aborted {
        bail!(
            "the repository rejected the documents: {reason}\n  check --profile ({}) against the repository's content model, and --parent; partial results: {}",
            plan.common.profile.source,
            result_path.display()
        );
    }
    if live.interrupted.load(Ordering::Relaxed) {
        eprintln!(
            "interrupted: {} documents acknowledged, {} failed; results and manifest in {}; finish with: ingestbench run --resume {}",
            result.docs_ok,
            result.docs_failed,
            results.display(),
            results.display()
        );
        return Ok((Outcome::Interrupted, result));
    }
    let verified_clean = result.verify.as_ref().is_none_or(|v| v.clean());
    let outcome = if result.docs_failed == 0 && verified_clean && !live.stop.load(Ordering::Relaxed)
    {
        Outcome::Success
    } else {
        Outcome::Failures
    };
    Ok((outcome, result))
}
