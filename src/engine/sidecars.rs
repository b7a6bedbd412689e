//! What goes alongside a measured job, written once for `run` and `sweep`: the JTL file, the
//! live counters and their metrics endpoint (the live page, `--dashboard`, reads the same
//! counters and is started by the commands) and a shard's place at the rendezvous, set up
//! before the first run and finished whatever stopped them. The job itself is
//! [`SweepJob::new`](super::SweepJob::new); the commands add their progress display.

use std::time::Duration;

use anyhow::Result;

/// A shard's place at the rendezvous (`--shard` with more than one shard). A shard resumed
/// on its own finishes its part without waiting for the others: none.
pub async fn join_rendezvous(
    shard: Option<&crate::plan::ShardPlan>,
    resumed: bool,
) -> Result<Option<crate::engine::rendezvous::Rendezvous>> {
    match shard {
        Some(s) if s.count > 1 && !resumed => Ok(Some(
            crate::engine::rendezvous::Rendezvous::join(
                s.rendezvous.as_deref().unwrap_or_default(),
                &s.plan_id,
                s.index,
                s.count,
                s.timeout,
            )
            .await?,
        )),
        _ => Ok(None),
    }
}

/// What goes alongside the runs, set up before the first: the JTL file (`--jtl`), the live
/// metrics endpoint (`--metrics-listen`) and, for a shard, its place at the rendezvous.
pub struct Sidecars {
    pub rendezvous: Option<crate::engine::rendezvous::Rendezvous>,
    jtl: Option<crate::metrics::jtl::Jtl>,
    /// The live counters (with `--metrics-listen` or `--dashboard`) and the `/metrics`
    /// server of their own (none when the dashboard's listener serves `/metrics`).
    metrics: Option<(
        std::sync::Arc<crate::engine::live::LiveMetrics>,
        Option<tokio::task::JoinHandle<()>>,
    )>,
    hold: Duration,
}

impl Sidecars {
    pub async fn start(common: &crate::plan::CommonPlan) -> Result<Sidecars> {
        let jtl = common
            .jtl
            .as_deref()
            .map(crate::metrics::jtl::Jtl::create)
            .transpose()?;
        let metrics = match (&common.metrics_listen, common.dashboard) {
            (None, None) => None,
            (listen, _) => {
                let m = std::sync::Arc::new(crate::engine::live::LiveMetrics::default());
                let task = match listen {
                    Some(addr) if !common.metrics_on_dashboard() => {
                        Some(crate::engine::live::serve(addr, m.clone()).await?)
                    }
                    _ => None,
                };
                Some((m, task))
            }
        };
        Ok(Sidecars {
            rendezvous: None,
            jtl,
            metrics,
            hold: common.metrics_hold,
        })
    }

    pub fn jtl(&self) -> Option<crate::metrics::jtl::JtlSink> {
        self.jtl.as_ref().map(crate::metrics::jtl::Jtl::sink)
    }

    pub fn metrics(&self) -> Option<std::sync::Arc<crate::engine::live::LiveMetrics>> {
        self.metrics.as_ref().map(|m| m.0.clone())
    }

    /// Whatever stopped the runs: writes the samples taken so far, serves the metrics for
    /// `--metrics-hold` more (not after an interrupt), then stops.
    pub async fn finish(self, interrupted: bool) -> Result<()> {
        let written = self.jtl.map_or(Ok(()), crate::metrics::jtl::Jtl::finish);
        if let Some((_, Some(task))) = self.metrics {
            if !interrupted {
                tokio::time::sleep(self.hold).await;
            }
            task.abort();
        }
        written
    }
}
