//! ingestbench: measure how fast documents can be pushed into a content repository.
//!
//! `cmd::execute(cli)` is the whole tool; `cmd::main` only builds the runtime and maps the
//! outcome to an exit code, so tests drive everything in-process. The commands (`cmd`) turn validated
//! plans (`plan`) into calls of one engine (`engine`), which uploads through a repository
//! API (`protocol`) over an access path (`transport`) and hands each run to the writers
//! (`results`, `report`); `compare` sets two results side by side and `threshold` checks
//! `--fail-if` against them; `emulator` is the embedded reference target.
//!
//! The layers, bottom first; a module imports only from the lines above its own (no import
//! circle: `scripts/modgraph.py`):
//!
//! 1. `console`, `timefmt`, `protocol_kind`, `host`: command output that never panics, dates,
//!    the names of the APIs and auth modes, the host's facts;
//! 2. `fixtures`: the documents and their metadata;
//! 3. `metrics`: recorders, classified errors, the servers' usage, resource demands;
//! 4. `transport`: access methods, clients, the upload fast path;
//! 5. `protocol`, `sampler`: the repository APIs over a transport; what the servers, the client
//!    and the hosts spent over a measured window, read from `/proc` and node_exporter;
//! 6. `emulator`: the embedded reference target;
//! 7. `corpus`: real corpora and each repository's rules for them;
//! 8. `results`: the one result model (the plan, each run, the manifest, the verify record)
//!    and the results directory (writer, loader, old layouts, shard merge): data and I/O;
//! 9. `analysis`: models over the results (the sweep's summary, scaling, demands, verdicts,
//!    the estimate), pure;
//! 10. `verify`, `compare`: reading documents back; two results side by side;
//! 11. `threshold`: `--fail-if` against results or a comparison;
//! 12. `plan`: validated plans from the options of `run` and `sweep`;
//! 13. `engine`: sessions, sweeps, cells, workers and their sidecars;
//! 14. `progress`, `dashboard`: watching long work, over the engine's live counters: the
//!     terminal's progress bar with its ETA, and the live page (`--dashboard`);
//! 15. `report`: the exporters;
//! 16. `cli`, `cmd`: the command line, and one file per command wiring the rest.
//!
//! The crate root declares the modules and re-exports the entry points, nothing else
//! (`scripts/modgraph.py --check` holds every import to the order above).

#[macro_use]
pub mod console;

pub mod analysis;
pub mod cli;
pub mod cmd;
pub mod compare;
pub mod corpus;
pub mod dashboard;
pub mod emulator;
pub mod engine;
pub mod fixtures;
pub mod host;
pub mod metrics;
pub mod plan;
pub mod progress;
pub mod protocol;
pub mod protocol_kind;
pub mod report;
pub mod results;
pub mod sampler;
pub mod threshold;
pub mod timefmt;
pub mod transport;
pub mod verify;

pub use cmd::run::run_command;
pub use cmd::sweep::sweep_command;
pub use cmd::{Outcome, execute, main};
pub use transport::reqwest_builder;
