//! The integration tests, one binary (one link of the crate instead of one per file): each
//! area keeps its own module. Tests that need software `scripts/deps.sh` installs are
//! `#[ignore = "needs …"]` and run by `scripts/test.sh` with `--include-ignored`.

mod autopilot;
mod cli;
mod cmis;
mod common;
mod compare;
mod contract;
mod dashboard;
mod docs;
mod e2e;
mod estimate;
mod faults;
mod fuzz;
mod html;
mod jtl;
mod killpoints;
mod lab;
mod labjava;
mod liferay;
mod malformed;
mod measure;
mod oldresults;
mod paced;
mod preflight;
mod prometheus;
mod resource_demands;
mod shards;
mod sweep;
mod versions;
mod versions_cmis;
