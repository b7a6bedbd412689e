//! The exact merge of the shards of one plan into the result a single injector would have
//! written for the same uploads: per run, documents, bytes, errors, node splits, retries and
//! connections summed; the run from the earliest shard's start to the latest shard's end;
//! latency HDR histograms added bucket by bucket (so the merged p99 is the p99 of every
//! upload, never an average of percentiles); the start skew between shards recorded. Pure:
//! results in, result out. Checks that every shard is there and finished.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, bail};

use super::{Inputs, RepositoryRecord, RunResult};
use crate::engine::RunMeasurement;
use crate::metrics::{Recorder, decode_hist};

/// Merges the results of all N shards of one plan (any order).
pub fn merge(mut shards: Vec<RunResult>) -> Result<RunResult> {
    let Some(first) = shards.first() else {
        bail!("merge: no shard results given");
    };
    let Some(s0) = first.shard.clone() else {
        bail!(
            "merge: {} is not a shard's result (no shard record)",
            first.id
        );
    };
    for r in &shards {
        match &r.shard {
            Some(s) if s.plan_id == s0.plan_id && s.count == s0.count => {}
            Some(s) => bail!(
                "merge: shard {} of plan {} ({} shards) does not belong with plan {} ({} shards)",
                s.index,
                s.plan_id,
                s.count,
                s0.plan_id,
                s0.count
            ),
            None => bail!("merge: {} is not a shard's result", r.id),
        }
        if r.in_progress {
            bail!(
                "merge: shard {} of plan {} did not finish (its result is still in progress); finish it with `ingestbench run --resume` first",
                r.shard.as_ref().map_or(0, |s| s.index),
                s0.plan_id
            );
        }
    }
    shards.sort_by_key(|r| r.shard.as_ref().map_or(0, |s| s.index));
    let have: Vec<u64> = shards
        .iter()
        .filter_map(|r| r.shard.as_ref().map(|s| s.index))
        .collect();
    let missing: Vec<u64> = (0..s0.count).filter(|k| !have.contains(k)).collect();
    let mut dup = have.clone();
    dup.dedup();
    if !missing.is_empty() || dup.len() != have.len() {
        bail!(
            "merge: plan {} has {} shards; missing {:?}{} (give every results/run-{}-shard-<K>of{} directory)",
            s0.plan_id,
            s0.count,
            missing,
            if dup.len() != have.len() {
                ", and some given twice"
            } else {
                ""
            },
            s0.plan_id,
            s0.count
        );
    }
    let runs: std::collections::BTreeSet<u32> = shards
        .iter()
        .flat_map(|r| r.runs.iter().map(|x| x.run))
        .collect();
    let mut measured = Vec::new();
    for run in runs {
        measured.push(merge_run(&shards, run)?);
    }
    let first = &shards[0];
    let inputs = Inputs {
        id: s0.plan_id.clone(),
        started_at: shards
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        plan: first.plan.clone(),
        host: first.host.clone(),
        target: RepositoryRecord {
            stored_docs: None,
            ..first.target.clone()
        },
        worker_quotas: shards
            .iter()
            .flat_map(|r| r.worker_quotas.clone())
            .collect(),
        client_cpu_s: shards.iter().map(|r| r.client_cpu_s).sum(),
        manifest: "manifest.jsonl".into(),
    };
    let mut out = super::build(inputs, &measured);
    // Each shard's CPU share was of its own machine's cores: the merge's is their mean.
    out.client_cpu_share =
        shards.iter().map(|r| r.client_cpu_share).sum::<f64>() / shards.len() as f64;
    Ok(out)
}

/// Run `run` of every shard as one measurement.
fn merge_run(shards: &[RunResult], run: u32) -> Result<RunMeasurement> {
    let mut rec = Recorder::new();
    let (mut start, mut end) = (i64::MAX, i64::MIN);
    let (mut warm_ok, mut warm_failed, mut late, mut conns) = (0, 0, 0, 0);
    let mut servers = Vec::new();
    let mut folder = String::new();
    let mut nodes: BTreeMap<String, u64> = BTreeMap::new();
    for (k, r) in shards.iter().enumerate() {
        let Some(x) = r.runs.iter().find(|x| x.run == run) else {
            bail!("merge: shard {k} has no run {run}");
        };
        if x.latency_histogram_us.is_empty() {
            bail!(
                "merge: shard {k}, run {run} has no latency histogram (written by an older ingestbench)"
            );
        }
        let h = decode_hist(&x.latency_histogram_us)?;
        rec.latency_us.add(&h).expect("same bounds");
        rec.docs_ok += x.docs_ok;
        rec.docs_failed += x.docs_failed;
        rec.bytes_ok += x.bytes_ok;
        rec.retries += x.retries;
        rec.recovered += x.recovered;
        rec.add_errors(&x.errors);
        for (n, c) in &x.node_split {
            *nodes.entry(n.clone()).or_insert(0) += c;
        }
        start = start.min(x.started_unix_ms);
        end = end.max(x.started_unix_ms + (x.duration_s * 1000.0).round() as i64);
        warm_ok += x.warmup_docs;
        warm_failed += x.warmup_failed;
        late += x.docs_after_window;
        conns += x.new_connections;
        servers.extend(x.servers.iter().cloned());
        if folder.is_empty() {
            folder.clone_from(&x.folder);
        }
    }
    rec.nodes = nodes;
    let starts: Vec<i64> = shards
        .iter()
        .filter_map(|r| {
            r.runs
                .iter()
                .find(|x| x.run == run)
                .map(|x| x.started_unix_ms)
        })
        .collect();
    let skew = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
    let window = shards[0]
        .runs
        .iter()
        .find(|x| x.run == run)
        .and_then(|x| x.window_s);
    let duration = match window {
        // Steady state: every shard measured the same window; the merged run is that window.
        Some(w) => Duration::from_secs_f64(w),
        None => Duration::from_millis((end - start).max(0) as u64),
    };
    Ok(RunMeasurement {
        run,
        duration,
        recorder: rec,
        folder,
        fatal: None,
        new_connections: conns,
        progress_s: Vec::new(),
        warmup_ok: warm_ok,
        warmup_failed: warm_failed,
        docs_after_window: late,
        window_s: window,
        servers,
        started_unix_ms: start,
        go_unix_ms: None,
        start_skew_ms: Some(skew),
    })
}
