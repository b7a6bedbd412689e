//! Models over measurements, apart from the exporters that show them: statistics (means,
//! intervals, Welch and paired comparisons), the scaling of docs/sec with threads (knee,
//! USL fit) and drift within runs, what limited a cell and how a comparison reads, and the
//! import estimate with its growth model. Pure functions: values in, values out, no I/O.

pub mod estimate;
pub mod growth;
pub mod limits;
pub mod scaling;
pub mod stats;
