//! Where upload workers run: one single-threaded tokio runtime per CPU, each driven by its own
//! OS thread for the life of the process, with a cell's workers dealt to them in turn (wrk's
//! model: no work stealing, and a worker, its connection task and their wake-ups stay on one
//! thread). The main runtime keeps everything else: setup, progress, sidecars, the embedded
//! target.
//!
//! A cell of small documents (at most [`SMALL_DOC_BYTES`] on average) whose target runs on
//! this host (the embedded target, `localhost`, a loopback address) is dealt to half of the
//! runtimes (at least one), leaving the server the other cores: there the cost of an upload
//! is its system calls and wake-ups, which the client and the server share, and a client
//! thread for every core preempts the server and stalls the connections of whichever thread
//! it displaced. Larger documents are work per byte (copies, encryption) that spreads over
//! every core. Measured on 2 cores shared with nginx, docs/performance.md.
//! `INGESTBENCH_WORKER_RUNTIMES=N` sets how many runtimes, every cell using all of them (0:
//! workers share the main work-stealing runtime); the variable is read, and a bad value
//! refused at startup, by `host` (the count is a host fact recorded with every result).

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use crate::host::RUNTIMES_VAR;

/// The largest mean document size (bytes) of a cell that leaves a server on this host half
/// of the cores. Measured on 2 cores, one runtime against two, paired rounds: 10 KiB
/// 1.03-1.33x (HTTP and HTTPS, every round), 64 KiB 0.80-1.47x (ahead in 4 of 6),
/// 300 KiB 0.86-0.98x, 3 MiB over HTTPS 0.83-0.94x.
pub const SMALL_DOC_BYTES: u64 = 64 * 1024;

/// The runtimes, started on first use; empty when workers share the main runtime.
fn runtimes() -> &'static [Handle] {
    static POOL: OnceLock<Vec<Handle>> = OnceLock::new();
    // `check` has refused a bad value before any worker starts; the fallback is for library
    // callers that skip it.
    POOL.get_or_init(|| {
        (0..crate::host::upload_runtimes())
            .filter_map(start)
            .collect()
    })
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

/// How many of the upload runtimes a cell's workers are dealt to: all of them, or half (at
/// least one) for small documents to a target on this host, unless [`RUNTIMES_VAR`] set the
/// number. 0 when workers share the main runtime.
pub fn width(target_on_this_host: bool, mean_doc_bytes: u64) -> usize {
    let chosen = std::env::var_os(RUNTIMES_VAR).is_some();
    share(
        runtimes().len(),
        chosen,
        target_on_this_host,
        mean_doc_bytes,
    )
}

/// [`width`] of `all` runtimes, `chosen` when the variable set their number.
fn share(all: usize, chosen: bool, target_on_this_host: bool, mean_doc_bytes: u64) -> usize {
    if target_on_this_host && mean_doc_bytes <= SMALL_DOC_BYTES && !chosen {
        (all / 2).max(all.min(1))
    } else {
        all
    }
}

/// Runs worker `index` of a cell on the first `width` runtimes (`index` modulo `width`), or on
/// the current runtime when there are none.
pub fn spawn_worker<F>(index: usize, width: usize, fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let rts = runtimes();
    match &rts[..width.min(rts.len())] {
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

    #[test]
    fn small_documents_to_this_host_leave_it_half_the_runtimes() {
        let small = 10_240;
        assert_eq!(share(2, false, true, small), 1);
        assert_eq!(share(8, false, true, small), 4);
        assert_eq!(share(1, false, true, small), 1);
        assert_eq!(
            share(0, false, true, small),
            0,
            "workers on the main runtime"
        );
        assert_eq!(share(2, false, true, SMALL_DOC_BYTES), 1);
        assert_eq!(share(2, false, true, SMALL_DOC_BYTES + 1), 2);
        assert_eq!(
            share(2, false, false, small),
            2,
            "a remote target gets every core"
        );
        assert_eq!(
            share(2, true, true, small),
            2,
            "the variable's number is used as it is"
        );
    }

    async fn futures_names() -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..2 {
            let h = spawn_worker(i, runtimes().len(), async {
                std::thread::current().name().unwrap_or("").to_string()
            });
            out.push(h.await.unwrap());
        }
        out
    }
}
