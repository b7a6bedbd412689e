//! Thin entry point: runtime, parse, call the library, map the outcome to an exit code
//! (0 success, 1 finished with failed uploads, 2 usage/config/setup error, 3 a `--fail-if`
//! threshold crossed, 130 interrupted).

use clap::Parser;

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
    let cli = ingestbench::cli::Cli::parse();
    if let Err(e) = ingestbench::engine::pool::check() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    let code = match rt.block_on(ingestbench::execute(cli)) {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    std::process::exit(code);
}
