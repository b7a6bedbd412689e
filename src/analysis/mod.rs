//! Models over measurements, apart from the exporters that show them: statistics (means,
//! intervals, Welch and paired comparisons), the scaling of docs/sec with threads (knee,
//! USL fit) and drift within runs, what limited a cell (resource demands per document, the
//! throughput bound, the bottleneck, the verdict and what a change would buy, with the
//! throughput it reaches at each thread count by mean value analysis, `mva`; who else used
//! this host, `busy_host`) and how a comparison reads, the import estimate with its growth
//! model, when an auto pilot's estimate is sharp enough to stop (`sharp`), the highest import
//! rate whose readers stay under their latency objective (`slo`), whether the import fits the
//! team's window (`window`), and when long work will end, with its interval (`eta`). Pure
//! functions: values in, values out, no I/O (the readings come from `metrics::resources`, the
//! words go to `report`).

pub mod busy_host;
pub mod demands;
pub mod estimate;
pub mod eta;
pub mod eta_fit;
pub mod growth;
pub mod limits;
pub mod mva;
pub mod pilot;
pub mod relieved;
pub mod scaling;
pub mod sharp;
pub mod slo;
pub mod stats;
pub mod summary;
pub mod verdict;
pub mod what_if;
pub mod window;
