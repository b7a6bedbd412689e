//! `ingestbench run`: one measured cell against a URL or the embedded target: a sweep of one
//! cell, written by the one results writer (`plan.json`, `runs/`, `manifest.jsonl`, the
//! reports) and resumed as a sweep is, from the runs its directory holds; `result.json` is
//! exported from them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result, bail};

use super::{password, rand_u64, write_file};
use crate::cmd::Outcome;
use crate::engine::{Folders, JobSpec, LiveCounters, RunObserver, Session, SweepJob};
use crate::plan::RunPlan;
use crate::plan::options::RunArgs;
use crate::progress::Progress;
use crate::report::result_json::RunResult;
use crate::results::RunMeasurement;
use crate::results::manifest::{Manifest, ManifestEntry};
use crate::results::{CellRun, PlanKind, PlanRecord};
use crate::transport::ConnectionPolicy;
use crate::{report, timefmt};

/// For `--resume DIR`: the interrupted run's directory, its recorded plan and the runs it
/// finished.
struct Resumed {
    dir: PathBuf,
    plan: PlanRecord,
    done: Vec<CellRun>,
}

/// A run directory written before `plan.json` and `runs/` keeps only the runs its result
/// shows complete (count mode: every planned document attempted); the rest are finished from
/// the manifest, as a sweep's are.
fn complete_runs(plan: &PlanRecord, runs: Vec<CellRun>) -> Vec<CellRun> {
    if plan.measure.duration_s.is_some() {
        return runs;
    }
    let quota: u64 = crate::plan::quota::shard_quotas(
        plan.docs,
        plan.threads.first().copied().unwrap_or(1),
        plan.shard.as_ref().map(|s| (s.index, s.count)),
    )
    .iter()
    .sum();
    runs.into_iter()
        .filter(|r| r.record.docs_ok + r.record.docs_failed >= quota)
        .collect()
}

fn resumed_args(args: &RunArgs) -> Result<Option<Resumed>> {
    let Some(dir) = &args.resume else {
        return Ok(None);
    };
    if !crate::results::is_results_dir(dir) {
        if dir.join("manifest.jsonl").exists() {
            bail!(
                "--resume {}: the run stopped before its first upload (no plan.json yet): nothing was uploaded; start a new run",
                dir.display()
            );
        }
        bail!(
            "--resume {}: no plan.json or result.json there (give a results/run-<id> directory)",
            dir.display()
        );
    }
    let legacy = !dir.join("plan.json").exists();
    let (plan, done) = crate::results::load_dir(dir)?;
    if plan.kind != PlanKind::Run {
        bail!(
            "--resume {}: a sweep's results; finish it with `ingestbench sweep --resume {}`",
            dir.display(),
            dir.display()
        );
    }
    let done = if legacy {
        complete_runs(&plan, done)
    } else {
        done
    };
    if args.url.is_none()
        && args.target_data_dir.is_none()
        && plan.methods.first().is_some_and(|m| m.embedded)
    {
        bail!(
            "--resume {}: the run used the embedded target with a temporary store, which is gone; nothing to resume into",
            dir.display()
        );
    }
    Ok(Some(Resumed {
        dir: dir.clone(),
        plan,
        done,
    }))
}

/// Writes each run's record the moment it ends (through the one results writer); keeps the
/// part of a run an interrupt stopped for `result.json` (`--resume` measures it again).
struct Runs<'a> {
    dir: &'a Path,
    partial: Option<CellRun>,
    /// `--json-lines`: a line per finished run.
    lines: bool,
    /// Where an auto pilot's stop is said (unless quiet).
    progress: &'a Progress,
    quiet: bool,
}

impl RunObserver for Runs<'_> {
    fn starting(&mut self, k: usize, n: usize, _cell: &crate::results::CellKey, run: u32) {
        self.progress
            .set_stage(format!("[{}/{n}] run {run}", k + 1));
    }

    fn finished(
        &mut self,
        cell: &crate::results::CellKey,
        m: RunMeasurement,
        client_cpu_s: f64,
        interrupted: bool,
    ) -> Result<()> {
        let run = crate::results::cell_run(cell, &m, client_cpu_s);
        if interrupted {
            self.partial = Some(run);
            return Ok(());
        }
        crate::results::write_cell_run(self.dir, &run)?;
        if let (Some(stop), false) = (&run.record.sample_stop, self.quiet) {
            let r = &run.record;
            self.progress.println(&crate::analysis::sharp::stop_text(
                stop,
                r.duration_s,
                r.docs_ok,
            ));
        }
        if self.lines {
            report::lines::emit(&report::lines::run_line(cell, &run.record)?)?;
        }
        Ok(())
    }
}

/// The password for `run`: the embedded target's (given or `admin`), or the given one.
fn secret_for(plan: &RunPlan) -> Result<crate::protocol::Secret> {
    match &plan.url {
        Some(_) => password(&plan.common.user, plan.common.password_file.as_deref()),
        None if plan.common.protocol == crate::protocol_kind::ProtocolKind::Cmis => bail!(
            "--protocol cmis needs --url (the CMIS browser binding service URL): the embedded target speaks Alfresco and Liferay; scripts/cmis.sh up starts a real CMIS repository"
        ),
        None => super::embedded_password(&plan.common),
    }
}

/// What a run goes on from: the runs its directory holds, what its manifest shows of the
/// rest, and which attempt this is (0: a new run).
struct Start<'a> {
    done: &'a [CellRun],
    earlier: &'a [ManifestEntry],
    attempt: u32,
}

/// The measured runs of `run`, through the engine: one `direct` method, one cell, the runs
/// its directory does not hold yet.
async fn measure(
    plan: &RunPlan,
    session: &Session,
    (id, dir): (&str, &Path),
    manifest: &Manifest,
    start: &Start<'_>,
    live: &Arc<LiveCounters>,
    mut sidecars: crate::engine::Sidecars,
) -> Result<Option<CellRun>> {
    let fixtures = HashMap::from([(plan.size, Arc::new(plan.fixtures()))]);
    let schedule: Vec<_> = plan
        .schedule()
        .into_iter()
        .filter(|(_, r)| !start.done.iter().any(|d| d.record.run == *r))
        .collect();
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
        resuming: start.attempt > 0,
        attempt: start.attempt,
        earlier: start.earlier,
        history: super::sweep::history(start.done),
        baseline: None,
        paired: false,
        deferred: &[],
        auto: plan.auto.clone().map(|a| {
            crate::engine::AutoPilot::new(a, crate::engine::autopilot::first_run_docs(start.done))
        }),
    };
    let job = SweepJob::new(
        work,
        &plan.common,
        session,
        manifest,
        live.clone(),
        &mut sidecars,
    );
    let progress = Progress::start(
        job.docs_to_do(),
        job.work_to_do(),
        plan.common.quiet,
        live.clone(),
    );
    let mut runs = Runs {
        dir,
        partial: None,
        lines: plan.common.json_lines,
        progress: &progress,
        quiet: plan.common.quiet,
    };
    super::drive(job, &mut runs, &progress, sidecars).await?;
    Ok(runs.partial)
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
    let bar = crate::progress::bar(entries.len() as u64, plan.common.quiet, "verifying");
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
fn write_result(plan: &RunPlan, results: &Path, result: &RunResult) -> Result<PathBuf> {
    let json = crate::report::result_json::write_result(results, result)?;
    let result_path = results.join("result.json");
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

/// `--resume` of a run whose planned runs are all recorded (count mode, stopped at its very
/// end): nothing to upload; its result, re-exported from its runs.
fn already_finished(r: &Resumed) -> Result<Option<RunResult>> {
    let m = &r.plan.measure;
    if m.duration_s.is_some()
        || m.precision_pct.is_some()
        || (r.done.len() as u64) < r.plan.runs_planned()
    {
        return Ok(None);
    }
    crate::report::result_json::rewrite_result(&r.dir, &r.plan, &r.done)?;
    let text = std::fs::read_to_string(r.dir.join("result.json"))?;
    Ok(Some(serde_json::from_str(&text)?))
}

/// `--resume` of a run whose every planned document is in: says so and exits as the run did,
/// its thresholds checked again.
fn nothing_to_finish(
    args: &RunArgs,
    r: &Resumed,
    result: RunResult,
) -> Result<(Outcome, RunResult)> {
    eprintln!(
        "--resume {}: nothing to finish: all {} planned documents were uploaded and result.json is final (check them with `ingestbench verify {}`)",
        r.dir.display(),
        result.worker_quotas.iter().sum::<u64>() * u64::from(result.plan.runs),
        r.dir.display()
    );
    let outcome = if result.docs_failed == 0 {
        Outcome::Success
    } else {
        Outcome::Failures
    };
    let thresholds =
        crate::threshold::parse_all(&args.common.fail_if, crate::threshold::Scope::Results)?;
    let crossed = crate::threshold::check_results(&thresholds, &r.plan, &r.done);
    Ok((super::gate(outcome, &crossed), result))
}

/// The run's id: the resumed run's, the shards' common plan id (every shard of a plan uploads
/// below the same folder with the same document markers), or a new one.
fn run_id(resumed: Option<&Resumed>, shard: Option<&crate::plan::ShardPlan>) -> String {
    match (resumed, shard) {
        (Some(r), _) => r.plan.id.clone(),
        (None, Some(s)) => s.plan_id.clone(),
        (None, None) => format!("{}-{:04x}", timefmt::compact_now(), rand_u64() & 0xffff),
    }
}

/// A resumed run's directory written again as recorded (an older run directory takes this
/// layout here: its plan and the runs it finished; a hard stop may have left the methods
/// unwritten): its plan and finished runs.
fn rewrite_resumed(
    plan: &RunPlan,
    results: &Path,
    r: &Resumed,
) -> Result<(PlanRecord, Vec<CellRun>)> {
    crate::results::create_dir(results, &r.plan, &[plan.method()])?;
    for run in &r.done {
        crate::results::write_cell_run(results, run)?;
    }
    Ok((r.plan.clone(), r.done.clone()))
}

/// The documents the embedded target holds in the run's folder (embedded only).
async fn stored_docs(plan: &RunPlan, session: &Session, id: &str) -> Result<Option<u64>> {
    Ok(match &session.embedded {
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
    })
}

/// `run`: returns the outcome and the result (for tests).
pub async fn run_command(args: &RunArgs) -> Result<(Outcome, RunResult)> {
    let resumed = resumed_args(args)?;
    if let Some(r) = &resumed
        && let Some(result) = already_finished(r)?
    {
        return nothing_to_finish(args, r, result);
    }
    let plan = match &resumed {
        Some(r) => RunPlan::resumed(args, &r.plan)?,
        None => RunPlan::try_from(args)?,
    };
    let shard = plan.common.shard.clone();
    let id = run_id(resumed.as_ref(), shard.as_ref());
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
    let results = match &resumed {
        Some(r) => r.dir.clone(),
        None => plan.results_dir.join(match &shard {
            Some(s) => format!("run-{id}-shard-{}of{}", s.index, s.count),
            None => format!("run-{id}"),
        }),
    };
    // A --jtl file or --metrics-listen address that cannot be used fails before anything
    // is written.
    let mut sidecars = super::start_sidecars(&plan.common).await?;
    let dashboard = crate::dashboard::start(&plan.common, &sidecars).await?;
    let (record, done) = match &resumed {
        Some(r) => rewrite_resumed(&plan, &results, r)?,
        None => {
            let url = crate::transport::access::redact(&direct.url);
            let record = plan.record(&id, &url, session.embedded.is_some());
            crate::results::create_dir(&results, &record, &[plan.method()])
                .with_context(|| format!("--results-dir {}", plan.results_dir.display()))?;
            (record, Vec::new())
        }
    };
    // What the interrupted attempts' manifest holds; read before this attempt appends.
    let listed = results.join("manifest.jsonl");
    let earlier = if resumed.is_some() && listed.exists() {
        Manifest::read(&listed)?
    } else {
        Vec::new()
    };
    let attempt = match &resumed {
        Some(_) => crate::results::next_attempt(&results)?,
        None => 0,
    };
    let manifest = Manifest::create(&listed)?;
    // What --resume, verify and cleanup need, before the first upload.
    let pending = crate::report::result_json::Extras {
        in_progress: true,
        ..Default::default()
    };
    crate::report::result_json::write_result(
        &results,
        &crate::report::result_json::run_result(&record, &done, pending),
    )?;
    let live = Arc::new(LiveCounters::default());
    *live.eta_prior.lock().unwrap_or_else(|e| e.into_inner()) = plan.eta_prior;
    if let Some(d) = &dashboard {
        d.watch(live.clone());
    }
    sidecars.rendezvous = crate::engine::join_rendezvous(shard.as_ref(), resumed.is_some()).await?;
    let start = Start {
        done: &done,
        earlier: &earlier,
        attempt,
    };
    let partial = measure(
        &plan,
        &session,
        (&id, &results),
        &manifest,
        &start,
        &live,
        sidecars,
    )
    .await?;
    let (_, mut runs) = crate::results::load_dir(&results)?;
    let summary = crate::report::summary_of(&results, &record, &runs)?;
    crate::report::write_reports(&results, &summary)?;
    let interrupted = live.interrupted.load(Ordering::Relaxed);
    let verified = if args.verify
        && !interrupted
        && !manifest.broken()
        && runs.iter().all(|r| r.record.aborted.is_none())
    {
        Some(verify_now(&plan, direct.repo.clone(), &manifest).await?)
    } else {
        None
    };
    runs.extend(partial);
    let extras = crate::report::result_json::Extras {
        stored_docs: stored_docs(&plan, &session, &id).await?,
        verify: verified,
        in_progress: false,
    };
    let result = crate::report::result_json::run_result(&record, &runs, extras);
    let crossed = crate::threshold::check_results(&plan.common.thresholds, &record, &runs);
    let result_path = write_result(&plan, &results, &result)?;
    if let Some(d) = &dashboard {
        let report = results.join("report.html");
        d.finish(&live, Some(report), plan.common.dashboard_hold)
            .await;
    }
    drop(session);
    let (outcome, result) = finish(&plan, &results, &result_path, &manifest, &live, result)?;
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
    result: RunResult,
) -> Result<(Outcome, RunResult)> {
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
