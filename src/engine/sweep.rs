//! Running a schedule of `(cell, run)` pairs, in the order given (interleaved or shuffled by
//! the plan): each run gets its folder and document markers (or those of the interrupted run
//! it finishes), is measured by [`run_cell`], and is handed to the [`RunObserver`] the moment
//! it ends, so results reach the disk run by run. Stops after an interrupt, a rejection of
//! the documents outright, or a manifest that can no longer be written.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::Result;

use super::cell::{CellPlan, LiveCounters, ResumePoint, RunMeasurement, run_cell};
use super::session::Session;
use crate::fixtures::{Fixtures, SizeClass};
use crate::manifest::{Manifest, ManifestEntry};
use crate::records::CellKey;

/// Where each run's documents go below the parent.
pub enum Folders {
    /// `run`: `<folder>/run-<r>` for every run, one nonce for the invocation.
    One { folder: String, nonce: u64 },
    /// `sweep`: `<base>/<method>-<conn>/<size>/t<T>/a<random>/run-<r>`, a fresh nonce per run.
    PerRun { base: String },
}

/// Everything a schedule needs besides the observer.
pub struct SweepJob<'a> {
    pub session: &'a Session,
    /// Fixtures by size class.
    pub fixtures: &'a HashMap<SizeClass, Arc<Fixtures>>,
    pub schedule: &'a [(CellKey, u32)],
    pub docs: u64,
    pub docs_per_folder: u64,
    pub retries: u32,
    pub seed: u64,
    pub folders: Folders,
    /// Write the cell's name into every manifest line (sweeps: one manifest, many cells).
    pub tag_manifest: bool,
    /// This is a `--resume`: name clashes are adopted (see `CellPlan::resuming`).
    pub resuming: bool,
    /// Manifest lines of an interrupted invocation: runs they cover are finished, not redone.
    pub earlier: &'a [ManifestEntry],
    pub manifest: &'a Manifest,
    pub live: Arc<LiveCounters>,
}

/// Told about each run as the schedule goes (between runs, never per upload).
pub trait RunObserver {
    /// Run `k` of `n` (0-based) is about to start.
    fn starting(&mut self, _k: usize, _n: usize, _cell: &CellKey, _run: u32) {}
    /// A run ended; `interrupted` when SIGINT/SIGTERM stopped it part-way. An error stops
    /// the schedule (a result that cannot be written).
    fn finished(
        &mut self,
        cell: &CellKey,
        m: RunMeasurement,
        client_cpu_s: f64,
        interrupted: bool,
    ) -> Result<()>;
}

/// How a schedule ended, short of a setup error.
#[derive(Debug, Default)]
pub struct SweepEnd {
    /// The cell whose documents the repository rejected outright, and its reason.
    pub fatal: Option<(CellKey, String)>,
}

impl SweepJob<'_> {
    /// The plan of one run of `cell`: its folder, nonce, manifest tag and connection counter.
    fn cell_plan(&self, cell: &CellKey, counter: crate::transport::ConnectionCounter) -> CellPlan {
        let (folder, nonce) = match &self.folders {
            Folders::One { folder, nonce } => (folder.clone(), *nonce),
            Folders::PerRun { base } => (
                format!(
                    "{base}/{}-{}/{}/t{}/a{:04x}",
                    cell.method,
                    cell.connection,
                    cell.size,
                    cell.threads,
                    crate::fixtures::random_u64() & 0xffff
                ),
                self.seed ^ crate::fixtures::random_u64(),
            ),
        };
        CellPlan {
            docs: self.docs,
            threads: cell.threads,
            docs_per_folder: self.docs_per_folder,
            folder,
            nonce,
            tag: self.tag_manifest.then(|| Arc::from(cell.tag())),
            retries: self.retries,
            resuming: self.resuming,
            connections: Some(counter),
        }
    }

    /// The interrupted run this one finishes, if the earlier manifest has one.
    fn resume_point(&self, plan: &CellPlan, run: u32) -> Option<ResumePoint> {
        let tag = plan.tag.as_deref();
        ResumePoint::from_entries(
            self.earlier
                .iter()
                .filter(|e| e.cell.as_deref() == tag && e.run == run),
            self.docs,
        )
    }
}

/// Runs the schedule; returns when it is done or stopped (see the module header).
pub async fn run_sweep(job: SweepJob<'_>, obs: &mut dyn RunObserver) -> Result<SweepEnd> {
    let n = job.schedule.len();
    for (k, (cell, run)) in job.schedule.iter().enumerate() {
        if job.live.stop.load(Ordering::Relaxed) || job.manifest.broken() {
            break;
        }
        let c = job.session.get(&cell.method, cell.connection)?;
        let plan = job.cell_plan(cell, c.counter.clone());
        let resume = job.resume_point(&plan, *run);
        if resume.as_ref().is_some_and(|r| r.todo.is_empty()) {
            continue;
        }
        obs.starting(k, n, cell, *run);
        let fixtures = job.fixtures[&cell.size].clone();
        let cpu0 = crate::host::process_cpu_seconds();
        let m = run_cell(
            c.repo.clone(),
            fixtures,
            &plan,
            *run,
            job.live.clone(),
            job.manifest,
            resume.as_ref(),
        )
        .await?;
        let cpu = crate::host::process_cpu_seconds() - cpu0;
        let interrupted = job.live.interrupted.load(Ordering::Relaxed);
        let fatal = m.fatal.clone();
        obs.finished(cell, m, cpu, interrupted)?;
        if let Some(reason) = fatal {
            return Ok(SweepEnd {
                fatal: Some((cell.clone(), reason)),
            });
        }
        if interrupted {
            break;
        }
    }
    Ok(SweepEnd::default())
}
