//! Where upload workers run: single-threaded tokio runtimes, each driven by its own OS thread
//! for the life of the process, with workers dealt to them in turn (wrk's model: no work
//! stealing, and a worker, its connection task and their wake-ups stay on one thread).
//! The main runtime keeps everything else: setup, progress, sidecars, the embedded target.
//!
//! How many: one per CPU when the targets are elsewhere; half the CPUs (at least one) when
//! every target runs on this host (the embedded target, `localhost` or a loopback address),
//! so that the client does not take the cores the server it measures needs: with client and
//! server on the same two cores, one runtime per CPU preempts the server and stalls the
//! connections of whichever thread it displaced (README, Performance: one runtime 1.17-1.27x
//! the per-CPU model on a co-located sink). `INGESTBENCH_WORKER_RUNTIMES=N` sets the number
//! (0: workers share the main work-stealing runtime); a bad value is refused at startup by
//! [`check`]. The number is settled once per process, by [`settle`], before the host facts
//! that record it and before the first worker.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// The variable that sets how many upload runtimes there are.
pub const RUNTIMES_VAR: &str = "INGESTBENCH_WORKER_RUNTIMES";

/// The most upload runtimes the variable may ask for (a thread each).
const MAX_RUNTIMES: usize = 1024;

/// How many upload runtimes: [`RUNTIMES_VAR`] if set, else one per CPU, or half of them (at
/// least one) when every target is on this host. An unusable value is a setup error naming
/// the variable (checked before anything runs, see [`check`]).
fn configured(targets_on_this_host: bool) -> Result<usize, String> {
    match std::env::var(RUNTIMES_VAR) {
        Err(std::env::VarError::NotPresent) => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            Ok(default_count(cpus, targets_on_this_host))
        }
        Err(e) => Err(format!("{RUNTIMES_VAR}: {e}")),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n <= MAX_RUNTIMES => Ok(n),
            _ => Err(format!(
                "{RUNTIMES_VAR}={v}: give a number of upload runtimes from 0 (workers share the \
                 main runtime) to {MAX_RUNTIMES}, or unset it for one per CPU"
            )),
        },
    }
}

/// The default number of upload runtimes on `cpus` CPUs.
fn default_count(cpus: usize, targets_on_this_host: bool) -> usize {
    if targets_on_this_host {
        (cpus / 2).max(1)
    } else {
        cpus.max(1)
    }
}

/// Checks [`RUNTIMES_VAR`] once at startup, so a bad value stops the command before it
/// writes or measures anything.
pub fn check() -> Result<(), String> {
    configured(false).map(|_| ())
}

static COUNT: OnceLock<usize> = OnceLock::new();

/// Settles how many upload runtimes this process has, from where its targets are; the first
/// call decides (a process measures one plan), later ones return that number.
pub fn settle(targets_on_this_host: bool) -> usize {
    // `check` has refused a bad value before any worker starts; the fallback is for library
    // callers that skip it.
    *COUNT.get_or_init(|| configured(targets_on_this_host).unwrap_or(1))
}

/// How many upload runtimes workers are dealt to (recorded with the host facts): as settled,
/// or the count for remote targets when nothing settled it.
pub fn planned() -> usize {
    settle(false)
}

/// The runtimes, started on first use; empty when workers share the main runtime.
fn runtimes() -> &'static [Handle] {
    static POOL: OnceLock<Vec<Handle>> = OnceLock::new();
    POOL.get_or_init(|| (0..planned()).filter_map(start).collect())
}

/// One runtime on its own thread; `None` (workers then use the main runtime) if the system
/// refuses a thread or a runtime.
fn start(i: usize) -> Option<Handle> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let handle = rt.handle().clone();
    std::thread::Builder::new()
        .name(format!("ingestbench-upload-{i}"))
        // Spawned tasks run while this thread waits on a future that never ends.
        .spawn(move || rt.block_on(std::future::pending::<()>()))
        .ok()?;
    Some(handle)
}

/// Runs worker `index` on its runtime (`index` modulo their number), or on the current
/// runtime when there are none.
pub fn spawn_worker<F>(index: usize, fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match runtimes() {
        [] => tokio::spawn(fut),
        rts => rts[index % rts.len()].spawn(fut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_on_this_host_leaves_it_half_the_cpus() {
        assert_eq!(default_count(2, true), 1);
        assert_eq!(default_count(1, true), 1);
        assert_eq!(default_count(8, true), 4);
        assert_eq!(default_count(2, false), 2);
        assert_eq!(default_count(8, false), 8);
    }

    #[tokio::test]
    async fn workers_run_on_the_upload_threads() {
        let names: Vec<String> = futures_names().await;
        for n in &names {
            assert!(n.starts_with("ingestbench-upload-"), "{names:?}");
        }
        // Dealt in turn: with two runtimes or more, neighbours land on different threads.
        if runtimes().len() > 1 {
            assert_ne!(names[0], names[1], "{names:?}");
        }
    }

    async fn futures_names() -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..2 {
            let h = spawn_worker(i, async {
                std::thread::current().name().unwrap_or("").to_string()
            });
            out.push(h.await.unwrap());
        }
        out
    }
}
