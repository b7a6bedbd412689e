//! Models over measurements: resource demands per document, the throughput bound and the
//! bottleneck, the verdict on what limited a cell and what a change would buy. Pure functions,
//! no I/O: the readings come from `metrics::resources`, the words go to `report`.

pub mod demands;
pub mod verdict;
