//! Thin entry point: `ingestbench::main` parses, starts the runtime and runs the command; its
//! exit code (0 success, 1 finished with failed uploads, 2 usage/config/setup error, 3 a
//! `--fail-if` threshold crossed, 130 interrupted) is the process's.

/// With the `jemalloc` feature (the peak build and the container image), jemalloc instead of
/// glibc's malloc (oha makes the same choice): hyper and tokio allocate a few small blocks per
/// request (the request's header map, the response channel, the answer), which per-thread
/// caches make cheaper on the upload threads, with little more memory than glibc
/// (docs/performance.md). Off in the quick start's release build: it is a C library built
/// from source, slow to compile for 3 % of the client's CPU. Set here, in the binary, so the
/// library leaves the choice to whoever embeds it.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    std::process::exit(ingestbench::main());
}
