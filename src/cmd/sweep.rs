//! `ingestbench sweep`: every access method × connection policy × size × thread count, R
//! runs each in an order that spreads drift. This file parses, prints the plan, and hands
//! the schedule to the engine; each run's record is written the moment it ends (so an
//! interrupted sweep keeps everything done and `--resume` finishes only the rest), then the
//! reports.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::{Result, bail};

use super::{password, rand_u64};
use crate::analysis::summary::{SweepSummary, summarize};
use crate::cmd::Outcome;
use crate::engine::{Folders, JobSpec, LiveCounters, RunObserver, Session, SweepEnd, SweepJob};
use crate::fixtures::Fixtures;
use crate::plan::options::SweepArgs;
use crate::plan::sweep::{SweepPlan, method_record};
use crate::progress::Progress;
use crate::report::lines;
use crate::results::RunMeasurement;
use crate::results::manifest::{Manifest, ManifestEntry};
use crate::results::{CellKey, CellRun, PlanRecord};
use crate::transport::AccessMethod;
use crate::{results, timefmt};

fn human_secs(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// A sweep to do: where its results go, its recorded plan, its spec and the runs done.
struct Prepared {
    dir: PathBuf,
    plan: PlanRecord,
    spec: SweepPlan,
    done: Vec<CellRun>,
}

/// A new sweep from the flags, or an interrupted one from its directory (`--resume`).
async fn prepare(a: &SweepArgs) -> Result<Prepared> {
    if let Some(dir) = &a.resume {
        if !dir.join("plan.json").is_file() {
            bail!(
                "--resume {}: not a sweep results directory (no plan.json)",
                dir.display()
            );
        }
        let (plan, done) = results::load_dir(dir)?;
        if plan.kind == crate::results::PlanKind::Run {
            bail!(
                "--resume {}: a run's results; finish it with `ingestbench run --resume {}`",
                dir.display(),
                dir.display()
            );
        }
        let spec = SweepPlan::from_record(a, &plan, results::load_methods(dir)?)?;
        return Ok(Prepared {
            dir: dir.clone(),
            plan,
            spec,
            done,
        });
    }
    let spec = crate::engine::settle_methods(SweepPlan::draft(a)?).await?;
    // Every shard of a plan names its folders and documents from the one plan id.
    let (id, name) = match &spec.common.shard {
        Some(s) => (
            s.plan_id.clone(),
            format!("sweep-{}-shard-{}of{}", s.plan_id, s.index, s.count),
        ),
        None => {
            let id = format!("{}-{:04x}", timefmt::compact_now(), rand_u64() & 0xffff);
            (id.clone(), format!("sweep-{id}"))
        }
    };
    Ok(Prepared {
        dir: a.results_dir.join(name),
        plan: spec.record(&id),
        spec,
        done: Vec::new(),
    })
}

/// The plan, before anything runs.
fn print_plan(p: &Prepared, pending: &[(CellKey, u32)]) {
    let (plan, spec) = (&p.plan, &p.spec);
    eprintln!("ingestbench sweep {} -> {}", plan.id, p.dir.display());
    if let Some(s) = &plan.shard {
        eprintln!(
            "  shard {} of {}: this process runs its part of every cell's workers",
            s.index, s.count
        );
    }
    for m in &spec.methods {
        let conns: Vec<&str> = spec.connections_of(m).iter().map(|c| c.name()).collect();
        eprintln!(
            "  method {:<16} {} ({})",
            m.name,
            method_record(m, vec![]).url,
            conns.join(", ")
        );
    }
    for (name, why) in &spec.unreachable {
        eprintln!("  skipped {name}: unreachable ({why})");
    }
    let sizes: Vec<String> = plan
        .sizes
        .iter()
        .map(|(n, b)| format!("{n} ({b} B)"))
        .collect();
    let threads: Vec<String> = plan.threads.iter().map(u64::to_string).collect();
    eprintln!(
        "  sizes {}; threads {}; {} docs per run; {} runs per cell; order {}",
        sizes.join(", "),
        threads.join(","),
        spec.docs,
        spec.runs,
        plan.order
    );
    eprintln!(
        "  {} cells, {} runs to do ({} done), {} uploads; rough estimate {}",
        spec.cells().len(),
        pending.len(),
        p.done.len(),
        pending.len() as u64 * spec.docs,
        human_secs(spec.estimate_secs(pending))
    );
    let m = &spec.common.measure;
    let mut how = format!("  warm-up {} before every run", m.warmup);
    if let Some(d) = m.duration_s {
        how.push_str(&format!("; steady state: {d} s per run (not --docs)"));
    }
    if let (Some(pct), Some(max)) = (m.precision_pct, spec.estimate_secs_max(pending)) {
        how.push_str(&format!(
            "; --precision {pct}%: up to {} runs per cell, up to {}",
            m.max_runs,
            human_secs(max)
        ));
    }
    if let Some(b) = m.budget_s {
        how.push_str(&format!(
            "; --budget {}: further runs for open comparisons, up to {} runs per cell",
            human_secs(b),
            m.max_runs
        ));
        let later = plan.runs_deferred();
        if later > 0 {
            how.push_str(&format!(
                " (first those at the fewest and the most threads; then the {later} runs in between after the first, then the rest)"
            ));
        }
    }
    eprintln!("{how}");
}

/// Writes each finished run's record and shows which run is under way.
struct Recorder<'a> {
    dir: &'a Path,
    progress: &'a Progress,
    /// `shard K/N ` on a shard's console, else empty.
    shard: String,
    /// `--json-lines`: the plan, and every run so far (to summarise a cell when it is done).
    lines: Option<(&'a PlanRecord, Vec<CellRun>)>,
}

impl RunObserver for Recorder<'_> {
    fn starting(&mut self, k: usize, n: usize, cell: &CellKey, run: u32) {
        self.progress.set_message(format!(
            "{}[{}/{n}] {} {} {} t={} run {run}",
            self.shard,
            k + 1,
            cell.method,
            cell.connection,
            cell.size,
            cell.threads
        ));
    }

    fn finished(
        &mut self,
        cell: &CellKey,
        m: RunMeasurement,
        client_cpu_s: f64,
        interrupted: bool,
    ) -> Result<()> {
        // A partial run is not a result: --resume finishes its documents and records it.
        if interrupted {
            return Ok(());
        }
        let run = results::cell_run(cell, &m, client_cpu_s);
        results::write_cell_run(self.dir, &run)?;
        let Some((plan, runs)) = &mut self.lines else {
            return Ok(());
        };
        lines::emit(&lines::run_line(cell, &run.record)?)?;
        runs.push(run);
        let of_cell: Vec<CellRun> = runs.iter().filter(|r| &r.cell == cell).cloned().collect();
        if of_cell.len() as u32 >= plan.runs
            && let Some(c) = summarize(plan, &of_cell).cells.first()
        {
            lines::emit(&lines::cell_line(c)?)?;
        }
        Ok(())
    }
}

/// docs/sec of the runs done, by cell (for `--precision` on `--resume`).
pub(super) fn history(done: &[CellRun]) -> HashMap<CellKey, Vec<(u32, f64)>> {
    let mut h: HashMap<CellKey, Vec<(u32, f64)>> = HashMap::new();
    for r in done {
        let rate = if r.record.duration_s > 0.0 {
            r.record.docs_ok as f64 / r.record.duration_s
        } else {
            0.0
        };
        h.entry(r.cell.clone())
            .or_default()
            .push((r.record.run, rate));
    }
    h
}

/// `(cell, run)`s, in schedule order.
type Runs<'a> = &'a [(CellKey, u32)];

/// Runs the pending schedule, then (`--budget`) the deferred runs, through the engine.
async fn execute(
    p: &Prepared,
    session: &Session,
    (pending, deferred): (Runs<'_>, Runs<'_>),
    (earlier, attempt): (&[ManifestEntry], u32),
    manifest: &Manifest,
    live: &Arc<LiveCounters>,
    mut sidecars: crate::engine::Sidecars,
) -> Result<SweepEnd> {
    let c = &p.spec.common;
    let fixtures: HashMap<_, _> = p
        .spec
        .sizes
        .iter()
        .map(|s| {
            let f = match p.spec.files.as_ref().and_then(|m| m.get(s)) {
                Some(files) => Fixtures::files(files.to_vec(), c.seed, c.profile.clone()),
                None => Fixtures::new(*s, c.sizes.of(*s), c.seed, c.profile.clone()),
            };
            (*s, Arc::new(f))
        })
        .collect();
    let work = JobSpec {
        fixtures: &fixtures,
        schedule: pending,
        docs: p.spec.docs,
        folders: Folders::PerRun {
            base: format!("ingestbench/{}", p.plan.id),
        },
        tag_manifest: true,
        resuming: attempt > 0,
        attempt,
        earlier,
        history: history(&p.done),
        baseline: Some(p.spec.baseline.clone()),
        paired: p.spec.paired(),
        deferred,
        auto: None,
    };
    let job = SweepJob::new(work, c, session, manifest, live.clone(), &mut sidecars);
    let progress = Progress::start(job.docs_to_do(), job.work_to_do(), c.quiet, live.clone());
    let mut rec = Recorder {
        dir: &p.dir,
        progress: &progress,
        shard: c
            .shard
            .as_ref()
            .map(|s| format!("shard {}/{} ", s.index, s.count))
            .unwrap_or_default(),
        lines: c.json_lines.then(|| (&p.plan, p.done.clone())),
    };
    super::drive(job, &mut rec, &progress, sidecars).await
}

pub async fn sweep_command(a: &SweepArgs) -> Result<(Outcome, SweepSummary)> {
    let p = prepare(a).await?;
    let pending = p.spec.pending(&p.done);
    let deferred = p.spec.deferred(&p.done);
    if !p.spec.common.quiet || a.dry_run {
        print_plan(&p, &pending);
    }
    if a.dry_run {
        return Ok((Outcome::Success, summarize(&p.plan, &p.done)));
    }
    // Credentials before anything is written: the embedded target takes admin/admin unless
    // a password was given; every other method needs one.
    let secret = if p.spec.methods.iter().all(AccessMethod::is_embedded) {
        super::embedded_password(&p.spec.common)?
    } else {
        password(&p.spec.common.user, p.spec.common.password_file.as_deref())?
    };
    // A --jtl file or --metrics-listen address that cannot be used fails before anything
    // is written.
    let mut sidecars = super::start_sidecars(&p.spec.common).await?;
    let dashboard = crate::dashboard::start(&p.spec.common, &sidecars).await?;
    if a.resume.is_none() {
        results::create_dir(&p.dir, &p.plan, &p.spec.methods)?;
    }
    let max_threads = *p.spec.threads.iter().max().unwrap_or(&1) as usize;
    let session = Session::open(
        &p.spec.common,
        &p.spec
            .pairs(&[pending.as_slice(), deferred.as_slice()].concat()),
        &secret,
        a.target_data_dir.as_deref(),
        max_threads,
    )
    .await?;
    // What an interrupted sweep already uploaded of a run it did not finish.
    // A manifest that cannot be read is an error, not an empty one: resuming without knowing
    // what is recorded would upload and record documents twice.
    let listed = p.dir.join("manifest.jsonl");
    let earlier = if a.resume.is_some() && listed.exists() {
        Manifest::read(&listed)?
    } else {
        Vec::new()
    };
    let attempt = match &a.resume {
        Some(dir) => results::next_attempt(dir)?,
        None => 0,
    };
    let manifest = Manifest::create(&p.dir.join("manifest.jsonl"))?;
    let live = Arc::new(LiveCounters::default());
    if let Some(d) = &dashboard {
        d.watch(live.clone());
    }
    sidecars.rendezvous =
        crate::engine::join_rendezvous(p.spec.common.shard.as_ref(), a.resume.is_some()).await?;
    let end = execute(
        &p,
        &session,
        (&pending, &deferred),
        (&earlier, attempt),
        &manifest,
        &live,
        sidecars,
    )
    .await?;
    drop(session);
    let reported = report(&p, end, &manifest, &live);
    if let Some(d) = &dashboard {
        let hold = p.spec.common.dashboard_hold;
        d.finish(&live, Some(p.dir.join("report.html")), hold).await;
    }
    let (outcome, summary) = reported?;
    let (_, runs) = results::load_dir(&p.dir)?;
    let crossed = crate::threshold::check_results(&p.spec.common.thresholds, &p.plan, &runs);
    Ok((super::gate(outcome, &crossed), summary))
}

/// Renders the reports from what is on disk, prints the findings, and maps the end to an
/// outcome: a manifest write error or a rejection is a setup error, an interrupt 130.
fn report(
    p: &Prepared,
    end: SweepEnd,
    manifest: &Manifest,
    live: &LiveCounters,
) -> Result<(Outcome, SweepSummary)> {
    let dir = &p.dir;
    let summary = crate::report::load_summary(dir)?;
    let written = crate::report::write_reports(dir, &summary)?;
    if let Err(e) = manifest.flush() {
        bail!(
            "{e:#}\n  finished runs are saved in {0}; finish with: ingestbench sweep --resume {0}",
            dir.display()
        );
    }
    if let Some((cell, reason)) = end.fatal {
        bail!(
            "access method {}: the repository rejected the documents: {reason}\n  check --profile and --parent; partial results in {}",
            cell.method,
            dir.display()
        );
    }
    if !p.spec.common.quiet {
        eprintln!();
        for line in crate::report::answers::terminal(&summary) {
            eprintln!("{line}");
        }
        for w in &summary.warnings {
            eprintln!("  warning: {w}");
        }
        for p in &written {
            eprintln!("  wrote {}", p.display());
        }
    }
    if live.interrupted.load(Ordering::Relaxed) {
        eprintln!(
            "interrupted: finished runs are saved in {0}; finish with: ingestbench sweep --resume {0}",
            dir.display()
        );
        return Ok((Outcome::Interrupted, summary));
    }
    if p.spec.common.json_lines {
        eprintln!("{}", dir.join("report.html").display());
    } else {
        println!("{}", dir.join("report.html").display());
    }
    let outcome = if summary.cells.iter().any(|c| c.docs_failed > 0) {
        Outcome::Failures
    } else {
        Outcome::Success
    };
    Ok((outcome, summary))
}
