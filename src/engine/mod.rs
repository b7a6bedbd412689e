//! The engine every measuring command drives: open a [`Session`] (the embedded target when a
//! method uses it, one client and one login per access method and connection policy), then
//! [`run_sweep`] over a schedule of `(cell, run)` pairs, each run measured by [`run_cell`]
//! (workers, quota with remainder, barrier, recorder merge; workers run on the upload
//! runtimes of [`pool`], one per CPU) and handed to a [`RunObserver`]
//! the moment it ends. `ingestbench run` is one `direct` method and one cell through the same
//! functions, so warm-up, shards or a corpus are added here once for both commands.
//! Knows nothing of the CLI, of printing, or of report formats.

mod cell;
pub mod pool;
mod session;
mod sweep;

pub mod rendezvous;

pub use cell::{CellPlan, run_cell};
pub use cell::{LiveCounters, ResumePoint, RunMeasurement, shard_quotas, split_quota};
pub use session::{Connected, Embedded, Session};
pub use sweep::{Folders, RunObserver, SweepEnd, SweepJob, run_sweep};
