//! The exact merge of the shards of one plan (a run's or a sweep's) into the runs a single
//! injector would have recorded for the same uploads, cell by cell and run by run: documents,
//! bytes, errors, node splits, retries and connections summed; the run from the earliest
//! shard's start to the latest shard's end; latency HDR histograms added bucket by bucket (so
//! the merged p99 is the p99 of every upload, never an average of percentiles); the start
//! skew between shards recorded. Pure: plans and runs in, plan and runs out. Checks that
//! every shard is there and finished.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, bail};

use super::record::{CellKey, CellRun, PlanKind, PlanRecord, RunRecord, ShardRecord};
use crate::metrics::{Recorder, decode_hist};
use crate::results::RunMeasurement;

/// One run's records of every shard (each with its latency histogram) as one measurement.
pub fn merge_records(run: u32, parts: &[(&RunRecord, &str)]) -> Result<RunMeasurement> {
    let mut rec = Recorder::new();
    let (mut start, mut end) = (i64::MAX, i64::MIN);
    let (mut warm_ok, mut warm_failed, mut late, mut conns) = (0, 0, 0, 0);
    let (mut warm_s, mut warm_settled) = (None, None);
    let mut servers = Vec::new();
    let mut folder = String::new();
    let mut by_size = Vec::new();
    let mut nodes: BTreeMap<String, u64> = BTreeMap::new();
    for (x, hist) in parts {
        if hist.is_empty() {
            bail!(
                "merge: a shard's run {run} has no latency histogram (written by an older ingestbench)"
            );
        }
        let h = decode_hist(hist)?;
        rec.latency_us.add(&h).expect("same bounds");
        rec.docs_ok += x.docs_ok;
        rec.docs_failed += x.docs_failed;
        rec.bytes_ok += x.bytes_ok;
        rec.retries += x.retries;
        rec.recovered += x.recovered;
        rec.versions_ok += x.versions_ok;
        rec.folders_created += x.folders_created;
        crate::results::SizeLatency::merge_into(&mut by_size, &x.latency_by_size);
        rec.add_errors(&x.errors);
        for (n, c) in &x.node_split {
            *nodes.entry(n.clone()).or_insert(0) += c;
        }
        start = start.min(x.started_unix_ms);
        end = end.max(x.started_unix_ms + (x.duration_s * 1000.0).round() as i64);
        warm_ok += x.warmup_docs;
        warm_failed += x.warmup_failed;
        // Every shard warms up until its own view is steady; the merged run waited for the
        // slowest, and settled only if every shard did.
        if let Some(s) = x.warmup_s {
            warm_s = Some(warm_s.unwrap_or(0.0f64).max(s));
        }
        if let Some(s) = x.warmup_settled {
            warm_settled = Some(warm_settled.unwrap_or(true) && s);
        }
        late += x.docs_after_window;
        conns += x.new_connections;
        // Shards read the same remote servers: each once.
        for u in &x.servers {
            if !servers
                .iter()
                .any(|v: &crate::metrics::servers::ServerUsage| v.name == u.name)
            {
                servers.push(u.clone());
            }
        }
        if folder.is_empty() {
            folder.clone_from(&x.folder);
        }
    }
    rec.nodes = nodes;
    let starts = parts.iter().map(|(x, _)| x.started_unix_ms);
    let skew = starts.clone().max().unwrap_or(0) - starts.min().unwrap_or(0);
    let window = parts.first().and_then(|(x, _)| x.window_s);
    let duration = match window {
        // Steady state: every shard measured the same window; the merged run is that window.
        Some(w) => Duration::from_secs_f64(w),
        None => Duration::from_millis((end - start).max(0) as u64),
    };
    // A paced run's shards each paced their share of the rate: together, the whole rate.
    let paced = crate::results::paced::PacedRecord::over_shards(
        parts.iter().filter_map(|(x, _)| x.paced.as_ref()),
        crate::metrics::round3(if duration.as_secs_f64() > 0.0 {
            rec.docs_ok as f64 / duration.as_secs_f64()
        } else {
            0.0
        }),
    );
    Ok(RunMeasurement {
        cpu_at_start_s: None,
        paced,
        readers: None,
        sample_stop: None,
        run,
        duration,
        recorder: rec,
        folder,
        fatal: None,
        new_connections: conns,
        upload_runtimes: None,
        progress_s: Vec::new(),
        timeline: Vec::new(),
        latency_by_size: by_size,
        warmup_ok: warm_ok,
        warmup_failed: warm_failed,
        warmup_s: warm_s,
        warmup_settled: warm_settled,
        docs_after_window: late,
        window_s: window,
        servers,
        // Shards read different hosts over different windows: no one set of demands.
        resources: None,
        started_unix_ms: start,
        go_unix_ms: None,
        start_skew_ms: Some(skew),
    })
}

/// Which shards of which plan `records` are (each shard's record, in any order): all N of one
/// plan, each once, or an error that names what is missing.
fn check_shards(records: &[Option<&ShardRecord>], what: &str) -> Result<ShardRecord> {
    let Some(Some(s0)) = records.first() else {
        bail!("merge: the first directory is not a shard's {what} (no shard record)");
    };
    let mut have = Vec::new();
    for r in records {
        match r {
            Some(s) if s.plan_id == s0.plan_id && s.count == s0.count => have.push(s.index),
            Some(s) => bail!(
                "merge: shard {} of plan {} ({} shards) does not belong with plan {} ({} shards)",
                s.index,
                s.plan_id,
                s.count,
                s0.plan_id,
                s0.count
            ),
            None => bail!("merge: one of the directories is not a shard's {what}"),
        }
    }
    have.sort_unstable();
    let missing: Vec<u64> = (0..s0.count).filter(|k| !have.contains(k)).collect();
    let mut once = have.clone();
    once.dedup();
    if !missing.is_empty() || once.len() != have.len() {
        bail!(
            "merge: plan {} has {} shards; missing {:?}{} (give every results/{what}-{}-shard-<K>of{} directory)",
            s0.plan_id,
            s0.count,
            missing,
            if once.len() != have.len() {
                ", and some given twice"
            } else {
                ""
            },
            s0.plan_id,
            s0.count
        );
    }
    Ok((*s0).clone())
}

/// Merges the directories of all N shards of one plan (each its plan and finished runs) into
/// the plan and runs one injector would have recorded.
pub fn merge_sweep(shards: Vec<(PlanRecord, Vec<CellRun>)>) -> Result<(PlanRecord, Vec<CellRun>)> {
    let records: Vec<Option<&ShardRecord>> = shards.iter().map(|(p, _)| p.shard.as_ref()).collect();
    let what = match shards.first().map(|(p, _)| p.kind) {
        Some(PlanKind::Run) => "run",
        _ => "sweep",
    };
    let s0 = check_shards(&records, what)?;
    for (p, runs) in &shards {
        let planned = p.runs_planned();
        if (runs.len() as u64) < planned {
            bail!(
                "merge: shard {} of plan {} did not finish ({} of {planned} runs); finish it with `ingestbench {what} --resume` on its directory first",
                p.shard.as_ref().map_or(0, |s| s.index),
                s0.plan_id,
                runs.len()
            );
        }
    }
    let mut by_run: BTreeMap<(CellKey, u32), Vec<&CellRun>> = BTreeMap::new();
    for (_, runs) in &shards {
        for r in runs {
            by_run
                .entry((r.cell.clone(), r.record.run))
                .or_default()
                .push(r);
        }
    }
    let mut merged = Vec::with_capacity(by_run.len());
    for ((cell, run), parts) in by_run {
        if parts.len() as u64 != s0.count {
            bail!(
                "merge: {} run {run} is in {} of the {} shards",
                cell.tag(),
                parts.len(),
                s0.count
            );
        }
        let records: Vec<(&RunRecord, &str)> = parts
            .iter()
            .map(|c| (&c.record, c.latency_histogram_us.as_str()))
            .collect();
        let m = merge_records(run, &records)?;
        let cpu = parts.iter().map(|c| c.client_cpu_s).sum();
        merged.push(crate::results::cell_run(&cell, &m, cpu));
    }
    let mut plan = shards[0].0.clone();
    plan.id = s0.plan_id;
    plan.shard = None;
    plan.started_at = shards
        .iter()
        .map(|(p, _)| p.started_at.clone())
        .min()
        .unwrap_or_default();
    Ok((plan, merged))
}
