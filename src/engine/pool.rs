//! Where upload workers run: one single-threaded tokio runtime per CPU, each driven by its own
//! OS thread for the life of the process, with workers dealt to them in turn (wrk's model: no
//! work stealing, and a worker, its connection task and their wake-ups stay on one thread).
//! The main runtime keeps everything else: setup, progress, sidecars, the embedded target.
//! `INGESTBENCH_WORKER_RUNTIMES=N` sets how many (0: workers share the main work-stealing
//! runtime; 1: all on one thread); a bad value is refused at startup by [`check`]. Which model
//! is fastest depends on the host when the server shares the client's cores (README,
//! Performance), so all of them stay selectable.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// The variable that sets how many upload runtimes there are.
pub const RUNTIMES_VAR: &str = "INGESTBENCH_WORKER_RUNTIMES";

/// The most upload runtimes the variable may ask for (a thread each).
const MAX_RUNTIMES: usize = 1024;

/// How many upload runtimes: [`RUNTIMES_VAR`] if set, else one per CPU. An unusable value is
/// a setup error naming the variable (checked before anything runs, see [`check`]).
fn configured() -> Result<usize, String> {
    match std::env::var(RUNTIMES_VAR) {
        Err(std::env::VarError::NotPresent) => {
            Ok(std::thread::available_parallelism().map_or(1, |n| n.get()))
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

/// Checks [`RUNTIMES_VAR`] once at startup, so a bad value stops the command before it
/// writes or measures anything.
pub fn check() -> Result<(), String> {
    configured().map(|_| ())
}

/// How many upload runtimes workers are dealt to (recorded with the host facts).
pub fn planned() -> usize {
    configured().unwrap_or(1)
}

/// The runtimes, started on first use; empty when workers share the main runtime.
fn runtimes() -> &'static [Handle] {
    static POOL: OnceLock<Vec<Handle>> = OnceLock::new();
    // `check` has refused a bad value before any worker starts; the fallback is for library
    // callers that skip it.
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
