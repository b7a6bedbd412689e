//! The engine every measuring command drives: open a [`Session`] (the embedded target when a
//! method uses it, one client and one login per access method and connection policy), then
//! [`run_sweep`] over a schedule of `(cell, run)` pairs, each run measured by [`run_cell`]
//! (quota with remainder, barrier, recorder merge; each worker's loop in `worker.rs`, run
//! on the upload runtimes of [`pool`]) and handed to a [`RunObserver`]
//! the moment it ends. `ingestbench run` is one `direct` method and one cell through the same
//! functions, so warm-up, shards or a corpus are added here once for both commands.
//! Before any of it, [`settle_methods`] asks a sweep's access methods whether they answer.
//! Knows nothing of the CLI, of printing, or of report formats.

pub mod autopilot;
pub mod budget;
mod cell;
pub mod live;
mod pace;
pub mod pool;
mod reach;
mod readers;
mod session;
mod sidecars;
mod sweep;
pub mod timeline;
pub mod warmup;
mod worker;

pub mod rendezvous;

pub use autopilot::AutoPilot;
pub use cell::ResumePoint;
pub use cell::{CellPlan, EarlierRun, run_cell};
pub use reach::settle_methods;
pub use session::{Connected, Embedded, Session};
pub use sidecars::{Sidecars, join_rendezvous};
pub use sweep::{Folders, JobSpec, RunObserver, SweepEnd, SweepJob, run_sweep};
pub use worker::{LiveCounters, PacedNow, RunDone};
