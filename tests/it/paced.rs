//! Paced, open-model runs (`--rate`) against an embedded target of known capacity: a stall
//! shows in the response time (from when documents were due) and not in the service time
//! (from the send), a rate above capacity is reported as a backlog and late documents with
//! the achieved rate near capacity, and a rate under capacity keeps up; the documents are
//! verified like a closed-loop run's.

use std::time::Duration;

use crate::common::{capacity, password_file, target_with};
use clap::Parser;
use ingestbench::cli::{Cli, Command};

async fn run(url: &str, dir: &std::path::Path, extra: &[&str]) -> ingestbench::report::RunResult {
    let args = [&["--warmup", "0", "--runs", "1"], extra].concat();
    let (outcome, r) = crate::common::run_basic(url, dir, &args).await;
    assert_eq!(outcome, ingestbench::Outcome::Success);
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_shows_in_the_response_time_and_not_in_the_service_time() {
    let _one = crate::common::TIMED.lock().await;
    // One slot of 20 ms (50 docs/s), paced at 35 docs/s (ρ = 0.7) through one worker, as
    // wrk2 demonstrates coordinated omission with one connection; upload 20 holds the slot
    // 1 s longer. After the stall the queue drains at 50 − 35 = 15 docs/s, and document j
    // after the stalled one answers 1 s + S + j(S − 1/rate) after it was due: the stalled
    // document and the next one (1 s + 12 ms) take at least the stall, the rest less. Of
    // 150 documents p99 is the 2nd largest, so p99 ≥ 1 s exactly when the response time
    // counts from the due time; the service time of every document but the stalled one
    // stays near 20 ms.
    let (t, _d) = target_with(|cfg| {
        capacity(1, 20)(cfg);
        cfg.perf.stall_once = Duration::from_secs(1);
        cfg.perf.stall_after = 20;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        &t.http_url().unwrap(),
        dir.path(),
        &["--docs", "150", "--threads", "1", "--rate", "35"],
    )
    .await;
    let run = &r.runs[0];
    let p = run
        .paced
        .as_ref()
        .expect("a paced run records its schedule");
    eprintln!(
        "service p99 {:.1} ms max {:.1} ms; response p99 {:.1} ms max {:.1} ms; late {} backlog {} achieved {:.1}",
        run.latency_ms.p99,
        run.latency_ms.max,
        p.response_ms.p99,
        p.response_ms.max,
        p.late,
        p.backlog,
        p.achieved_per_s
    );
    assert_eq!(r.docs_ok, 150);
    assert!(
        run.latency_ms.max >= 1000.0,
        "the stall happened: {:?}",
        run.latency_ms
    );
    assert!(
        p.response_ms.p99 >= 1000.0,
        "response p99 {} ms",
        p.response_ms.p99
    );
    assert!(
        run.latency_ms.p99 < 250.0,
        "service p99 {} ms",
        run.latency_ms.p99
    );
    // The documents due during the stall started late. (Whether the queue drained before
    // the last due time depends on the client's own cost per document, which adds to the
    // modelled 20 ms: a debug build on a loaded machine leaves a backlog of a few.)
    assert!(p.late >= 20, "late {}", p.late);
    assert!(!p.kept_up);
    assert_eq!(p.due, 150);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_above_capacity_reports_the_backlog_and_the_achieved_rate() {
    let _one = crate::common::TIMED.lock().await;
    // 2 slots × 20 ms: 100 docs/s, asked for 200.
    let (t, _d) = target_with(capacity(2, 20)).await;
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        &t.http_url().unwrap(),
        dir.path(),
        &["--docs", "300", "--threads", "8", "--rate", "200"],
    )
    .await;
    let p = r.runs[0].paced.as_ref().unwrap();
    eprintln!(
        "asked 200, achieved {:.1} docs/s, backlog {}, late {}, response p99 {:.0} ms",
        p.achieved_per_s, p.backlog, p.late, p.response_ms.p99
    );
    assert!(!p.kept_up);
    assert_ne!(
        r.bottleneck.as_ref().map(|b| b.kind.as_str()),
        Some("schedule")
    );
    assert!(
        (p.achieved_per_s / 100.0 - 1.0).abs() <= 0.2,
        "achieved {} docs/s against a capacity of 100",
        p.achieved_per_s
    );
    // When the last document was due (1.5 s), about 150 had been started: the rest waited.
    assert!(p.backlog >= 100 && p.backlog < 300, "backlog {}", p.backlog);
    assert!(p.late >= 150, "late {}", p.late);
    assert!(p.response_ms.p99 > 1000.0, "{:?}", p.response_ms);
    let text = ingestbench::report::summary_text(&r);
    assert!(text.contains("DID NOT KEEP UP"), "{text}");
    // The same documents, manifest and read-back as a closed-loop run.
    let run_dir = dir.path().join("results").join(format!("run-{}", r.id));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .env("INGESTBENCH_PASSWORD", "admin")
        .arg("verify")
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(v["checked"], 300);
    // result.json keeps the schedule, valid against the schema.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    let schema = crate::common::result_schema();
    crate::common::assert_valid(&schema, &schema, &json);
    assert_eq!(json["plan"]["measure"]["rate_per_s"], 200.0);
    assert_eq!(json["runs"][0]["paced"]["due"], 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_under_capacity_keeps_up_in_a_steady_state_window() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _d) = target_with(capacity(2, 20)).await;
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        &t.http_url().unwrap(),
        dir.path(),
        &["--duration", "2s", "--threads", "4", "--rate", "50"],
    )
    .await;
    let p = r.runs[0].paced.as_ref().unwrap();
    eprintln!(
        "asked 50, achieved {:.1} docs/s, late {}, backlog {}, response p99 {:.1} ms",
        p.achieved_per_s, p.late, p.backlog, p.response_ms.p99
    );
    assert_eq!(p.due, 100, "due every 20 ms inside 2 s");
    assert!(p.kept_up, "{p:?}");
    assert_eq!(p.backlog, 0);
    // Held to its schedule, not limited by a resource: no closed-loop "likely limit" (the
    // embedded target of the real binary, whose resources are read).
    let o = crate::cli::bin()
        .args([
            "run",
            "--rate",
            "50",
            "--docs",
            "60",
            "--threads",
            "4",
            "--runs",
            "1",
        ])
        .args(["--warmup", "0", "--json", "--results-dir"])
        .arg(dir.path().join("cli"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["bottleneck"]["kind"], "schedule", "{}", v["bottleneck"]);
    assert!(
        (p.achieved_per_s / 50.0 - 1.0).abs() <= 0.1,
        "achieved {}",
        p.achieved_per_s
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_read_what_the_paced_import_stores_while_it_runs() {
    let _one = crate::common::TIMED.lock().await;
    // 4 slots × 10 ms (400 requests/s), shared by uploads and reads.
    let (t, _d) = target_with(capacity(4, 10)).await;
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        &t.http_url().unwrap(),
        dir.path(),
        &[
            "--docs",
            "150",
            "--threads",
            "4",
            "--rate",
            "50",
            "--readers",
            "3",
            "--think-time",
            "20ms",
        ],
    )
    .await;
    let run = &r.runs[0];
    let rd = run.readers.as_ref().expect("readers recorded");
    for l in rd.lines() {
        eprintln!("{l}");
    }
    assert_eq!(rd.readers, 3);
    assert!(
        rd.window_s >= 2.5,
        "the readers read while the import ran: {rd:?}"
    );
    let ops: Vec<_> = rd.ops.iter().map(|o| o.op).collect();
    use ingestbench::protocol::reads::ReadOp;
    assert_eq!(ops, ReadOp::ALL.to_vec());
    for o in &rd.ops {
        assert!(o.ok >= 5, "{:?}: {} ok", o.op, o.ok);
        assert_eq!(o.failed, 0, "{:?}: {:?}", o.op, o.errors);
        assert!(
            o.latency_ms.p50 >= 10.0,
            "{:?} takes a slot: {:?}",
            o.op,
            o.latency_ms
        );
    }
    // Downloads read whole documents (10 KiB each).
    let dl = rd.ops.iter().find(|o| o.op == ReadOp::Download).unwrap();
    assert!(
        dl.bytes >= dl.ok * 10_000,
        "{} bytes for {}",
        dl.bytes,
        dl.ok
    );
    assert!(run.paced.as_ref().unwrap().kept_up);
    let text = ingestbench::report::summary_text(&r);
    assert!(text.contains("readers beside the import"), "{text}");
    let json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            dir.path()
                .join("results")
                .join(format!("run-{}", r.id))
                .join("result.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let schema = crate::common::result_schema();
    crate::common::assert_valid(&schema, &schema, &json);
}

/// A sweep (in-process) of `direct` against the embedded target at `url`, small documents,
/// `--profile basic` unless `extra` names one, with `extra` flags; returns its summary and
/// results directory.
pub(crate) async fn sweep(
    url: &str,
    dir: &std::path::Path,
    extra: &[&str],
) -> (
    ingestbench::analysis::summary::SweepSummary,
    std::path::PathBuf,
) {
    let methods = crate::common::direct_method(dir, url);
    let pw = password_file(dir, "admin");
    let results = dir.join("results");
    let mut v = vec![
        "ingestbench",
        "sweep",
        "--quiet",
        "--access-methods",
        "direct",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--sizes",
        "small",
        "--warmup",
        "0",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ];
    if !extra.contains(&"--profile") {
        v.extend_from_slice(&["--profile", "basic"]);
    }
    v.extend_from_slice(extra);
    let Command::Sweep(a) = Cli::try_parse_from(v).unwrap().command else {
        unreachable!()
    };
    let (outcome, s) = ingestbench::sweep_command(&a).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let d = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (s, d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rates_sweep_has_a_cell_per_rate_and_a_readers_alone_baseline_first() {
    let _one = crate::common::TIMED.lock().await;
    // 4 slots × 10 ms (400 requests/s), shared by uploads and reads.
    let (t, _d) = target_with(capacity(4, 10)).await;
    let dir = tempfile::tempdir().unwrap();
    let (s, d) = sweep(
        &t.http_url().unwrap(),
        dir.path(),
        &[
            "--threads",
            "4",
            "--docs",
            "40",
            "--runs",
            "2",
            "--rates",
            "40,20",
            "--readers",
            "2",
            "--think-time",
            "20ms",
        ],
    )
    .await;
    let rates: Vec<Option<f64>> = s.cells.iter().map(|c| c.rate_per_s).collect();
    assert_eq!(rates, vec![Some(0.0), Some(20.0), Some(40.0)]);
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["rates"], serde_json::json!([0.0, 20.0, 40.0]));
    for stem in ["rate0_r1", "rate20_r1", "rate40_r2"] {
        let f = d.join(format!("runs/direct_reuse_small_t4_{stem}.json"));
        assert!(f.exists(), "{}", f.display());
    }
    // Interleaved: each round runs the baseline, then every rate, as the manifest shows.
    let manifest = std::fs::read_to_string(d.join("manifest.jsonl")).unwrap();
    let order: Vec<(String, u64)> = manifest
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| {
            (
                v["cell"].as_str().unwrap().to_string(),
                v["run"].as_u64().unwrap(),
            )
        })
        .fold(Vec::new(), |mut acc, x| {
            if acc.last() != Some(&x) && !acc.contains(&x) {
                acc.push(x);
            }
            acc
        });
    let cells: Vec<String> = order
        .iter()
        .map(|(c, r)| format!("{}/{r}", c.rsplit('_').next().unwrap()))
        .collect();
    assert_eq!(
        cells,
        [
            "rate0/1", "rate20/1", "rate40/1", "rate0/2", "rate20/2", "rate40/2"
        ]
    );
    let (plan, runs) = ingestbench::results::load_dir(&d).unwrap();
    // The answer: the readers at each rate against the readers alone, under the default
    // objective of 500 ms (4 slots of 10 ms are far from it at 20 and 40 docs/s).
    assert_eq!(s.slo.len(), 1, "{:?}", s.slo);
    let a = &s.slo[0];
    eprintln!("{}", a.text);
    assert_eq!(a.slo_ms, 500.0);
    assert_eq!(
        a.verdict,
        ingestbench::analysis::slo::SloVerdict::HighestMeets
    );
    assert_eq!(a.highest_rate_per_s, Some(40.0));
    let b = a.baseline.as_ref().expect("the readers alone");
    assert!(b.ops.iter().all(|o| o.ok > 0 && o.p99_ms > 0.0), "{b:?}");
    assert_eq!(
        a.points.iter().map(|p| p.rate_per_s).collect::<Vec<_>>(),
        vec![20.0, 40.0]
    );
    for p in &a.points {
        assert!(
            (p.achieved_per_s / p.rate_per_s - 1.0).abs() < 0.35,
            "{p:?}"
        );
        // Two runs a side: each kind of read's change against the readers alone, paired.
        assert!(
            p.ops.iter().all(|o| o.p99_change_ci95_pct.is_some()),
            "{p:?}"
        );
    }
    let md = std::fs::read_to_string(d.join("report.md")).unwrap();
    assert!(md.contains("with readers' p99 under 500 ms"), "{md}");
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert_eq!(html.matches(r#"<svg class="chart slo""#).count(), 1);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["slo"][0]["verdict"], "highest_meets");
    // --fail-if reader_p99_ms: every cell has readers; none crosses 500 ms, all cross 0.
    let gate = |e: &str| {
        let t =
            ingestbench::threshold::parse_all(&[e.into()], ingestbench::threshold::Scope::Results)
                .unwrap();
        ingestbench::threshold::check_results(&t, &plan, &runs).len()
    };
    assert_eq!(gate("reader_p99_ms>500"), 0);
    assert_eq!(gate("reader_p99_ms>0.001"), 3);
    for r in &runs {
        let rd = r.record.readers.as_ref().expect("readers in every cell");
        assert!(rd.ops.iter().map(|o| o.ok).sum::<u64>() > 0, "{rd:?}");
        match r.cell.rate_per_s {
            // The baseline: its seeding import is not paced; its readers read alone after it.
            Some(0.0) => {
                assert!(r.record.paced.is_none());
                assert_eq!(r.record.docs_ok, 40);
                assert!(rd.window_s >= 0.9, "readers alone for 40 / 20 s: {rd:?}");
            }
            Some(rate) => {
                let p = r.record.paced.as_ref().expect("paced at the cell's rate");
                assert_eq!(p.rate_per_s, rate);
                assert!(p.kept_up, "{p:?}");
            }
            None => panic!("every cell of a rates sweep has a rate"),
        }
    }
    // The sweep as `estimate --office-rate`: its highest rate meeting the objective, against
    // its own closed-loop rate (the readers-alone cell's seeding import).
    let w = ingestbench::plan::window::parse_window("Sat 06:00..Mon 06:00").unwrap();
    let oh = ingestbench::plan::window::office_hours("Sat 08:00-12:00", d.to_str().unwrap(), &w)
        .unwrap();
    assert_eq!(oh.rate_per_s, 40.0);
    assert_eq!(
        oh.full_rate_per_s,
        a.baseline.as_ref().map(|b| b.achieved_per_s)
    );
    assert!(
        oh.rate_source.contains("readers' p99 under 500 ms"),
        "{}",
        oh.rate_source
    );
    let v = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .env("INGESTBENCH_PASSWORD", "admin")
        .arg("verify")
        .arg(&d)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
}

/// Liferay's readers: a rates sweep through headless-delivery against the embedded target,
/// where reads (`GET /documents/{id}`, its content inline, a folder's page, the site's search)
/// share the slots with the uploads: every kind of read succeeds in every cell, the SLO
/// answer is there, and verify is clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rates_sweep_with_liferay_readers() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _d) = target_with(capacity(4, 10)).await;
    let dir = tempfile::tempdir().unwrap();
    let (s, d) = sweep(
        &t.http_url().unwrap(),
        dir.path(),
        &[
            "--protocol",
            "liferay",
            "--profile",
            "liferay",
            "--threads",
            "4",
            "--docs",
            "40",
            "--runs",
            "1",
            "--rates",
            "20,40",
            "--readers",
            "2",
            "--think-time",
            "20ms",
        ],
    )
    .await;
    let rates: Vec<Option<f64>> = s.cells.iter().map(|c| c.rate_per_s).collect();
    assert_eq!(rates, vec![Some(0.0), Some(20.0), Some(40.0)]);
    let (_, runs) = ingestbench::results::load_dir(&d).unwrap();
    use ingestbench::protocol::reads::ReadOp;
    for r in &runs {
        assert_eq!(r.record.docs_ok, 40);
        let rd = r.record.readers.as_ref().expect("readers in every cell");
        for l in rd.lines() {
            eprintln!("rate {:?}: {l}", r.cell.rate_per_s);
        }
        let ops: Vec<_> = rd.ops.iter().map(|o| o.op).collect();
        assert_eq!(ops, ReadOp::ALL.to_vec(), "{rd:?}");
        for o in &rd.ops {
            assert!(o.ok > 0, "{:?} at {:?}: {rd:?}", o.op, r.cell.rate_per_s);
            assert_eq!(o.failed, 0, "{:?}: {:?}", o.op, o.errors);
        }
        // Metadata alone is lighter than the document with its content inline.
        let per = |op: ReadOp| {
            let o = rd.ops.iter().find(|o| o.op == op).unwrap();
            o.bytes / o.ok
        };
        assert!(per(ReadOp::Meta) < per(ReadOp::Download), "{rd:?}");
    }
    assert_eq!(s.slo.len(), 1, "{:?}", s.slo);
    let a = &s.slo[0];
    eprintln!("{}", a.text);
    assert_eq!(
        a.verdict,
        ingestbench::analysis::slo::SloVerdict::HighestMeets
    );
    assert_eq!(a.highest_rate_per_s, Some(40.0));
    let v = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .env("INGESTBENCH_PASSWORD", "admin")
        .arg("verify")
        .arg(&d)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
}

/// A rates sweep with readers killed (SIGKILL) after some of its runs, then `--resume`d: the
/// runs done are not redone (their files unchanged), the rest run, every cell has its
/// readers and its rate, the SLO answer says how long the documents take at its rate, and
/// `verify` is clean.
#[test]
fn a_killed_rates_sweep_with_readers_resumes_without_redoing_its_runs() {
    // One end-to-end scenario, read top to bottom.
    use std::collections::BTreeMap;
    let _one = crate::common::TIMED.blocking_lock();
    let dir = tempfile::tempdir().unwrap();
    let target = crate::cli::TargetProcess::start(
        dir.path(),
        &["--service-time-ms", "5", "--max-concurrent", "4"],
    );
    let url = format!("http://127.0.0.1:{}", target.port);
    let methods = crate::common::direct_method(dir.path(), &url);
    let results = dir.path().join("results");
    let bin = || {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"));
        c.env("INGESTBENCH_PASSWORD", "admin");
        c
    };
    // 3 cells (the readers alone, 20 and 40 docs/s) × 2 runs, about 1.5 s each.
    let mut child = bin()
        .args([
            "sweep",
            "--quiet",
            "--warmup",
            "0",
            "--access-methods",
            "direct",
        ])
        .arg("--access-methods-dir")
        .arg(&methods)
        .args(["--sizes", "small", "--profile", "basic", "--threads", "2"])
        .args(["--docs", "30", "--runs", "2", "--rates", "20,40"])
        .args(["--readers", "2", "--think-time", "20ms"])
        .arg("--results-dir")
        .arg(&results)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let runs_dir = loop {
        if let Ok(mut rd) = std::fs::read_dir(&results)
            && let Some(Ok(e)) = rd.next()
        {
            let r = e.path().join("runs");
            let json = |d: std::fs::ReadDir| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .count()
            };
            if std::fs::read_dir(&r).map(json).unwrap_or(0) >= 2 {
                break r;
            }
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the sweep wrote no runs");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let files = || -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(&runs_dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .map(|e| {
                let name = e.file_name().to_string_lossy().into();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect()
    };
    let done = files();
    assert!(
        (2..6).contains(&done.len()),
        "killed midway: {:?}",
        done.keys()
    );
    let sweep_dir = runs_dir.parent().unwrap().to_path_buf();
    let o = bin()
        .args(["sweep", "--quiet", "--resume"])
        .arg(&sweep_dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = files();
    let want: Vec<String> = ["rate0", "rate20", "rate40"]
        .iter()
        .flat_map(|c| (1..=2).map(move |r| format!("direct_reuse_small_t2_{c}_r{r}.json")))
        .collect();
    assert_eq!(after.keys().cloned().collect::<Vec<_>>(), {
        let mut w = want.clone();
        w.sort();
        w
    });
    for (name, bytes) in &done {
        assert_eq!(after.get(name), Some(bytes), "{name} was redone");
    }
    let (_, runs) = ingestbench::results::load_dir(&sweep_dir).unwrap();
    assert_eq!(runs.len(), 6);
    for r in &runs {
        let rd = r.record.readers.as_ref().expect("readers in every run");
        assert!(rd.ops.iter().map(|o| o.ok).sum::<u64>() > 0, "{rd:?}");
        match r.cell.rate_per_s {
            Some(0.0) => assert!(r.record.paced.is_none()),
            Some(rate) => assert_eq!(r.record.paced.as_ref().unwrap().rate_per_s, rate),
            None => panic!("every cell of a rates sweep has a rate"),
        }
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sweep_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["slo"].as_array().map(Vec::len),
        Some(1),
        "{summary}"
    );
    // How long the 30 documents take at the highest rate meeting the objective (500 ms, far
    // above 4 slots of 5 ms): 40 docs/s, 0.75 s by the schedule.
    let import = &summary["slo"][0]["import"];
    assert_eq!(
        (
            import["docs"].as_u64(),
            import["rate_per_s"].as_f64(),
            import["duration_s"].as_f64()
        ),
        (Some(30), Some(40.0), Some(0.75)),
        "{summary}"
    );
    assert!(
        import["closed_loop_per_s"].as_f64().unwrap() > 0.0,
        "{import}"
    );
    let md = std::fs::read_to_string(sweep_dir.join("report.md")).unwrap();
    assert!(
        md.contains("at 40 docs/s, 30 documents take 750 ms"),
        "{md}"
    );
    let v = bin().arg("verify").arg(&sweep_dir).output().unwrap();
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    drop(target);
}

/// Paced cells are no capacity: a sweep over threads at one `--rate`, or over `--rates`,
/// fits no scaling model to them, compares no method's docs/sec, names no limit and gives
/// no closed-loop verdict ("more threads help"); it says whether each cell kept up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paced_cells_get_no_closed_loop_scaling_claims() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _d) = target_with(capacity(4, 5)).await;
    for rates in [&["--rate", "60"][..], &["--rates", "30,60"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            &["--threads", "1,2,4", "--docs", "30", "--runs", "1"][..],
            rates,
        ]
        .concat();
        let (s, d) = sweep(&t.http_url().unwrap(), dir.path(), &args).await;
        assert!(
            s.cells.len() >= 3 && s.cells.iter().all(|c| c.is_paced()),
            "{rates:?}"
        );
        assert!(s.scaling.is_empty(), "{rates:?}: {:?}", s.scaling);
        assert!(s.relative.is_empty(), "{rates:?}");
        assert!(
            s.cells.iter().all(|c| c.verdict.is_none()),
            "{rates:?}: {:?}",
            s.cells.iter().map(|c| &c.verdict).collect::<Vec<_>>()
        );
        let text = ingestbench::report::answers::terminal(&s).join("\n");
        let md = std::fs::read_to_string(d.join("report.md")).unwrap();
        for out in [&text, &md] {
            for claim in [
                "Where scaling stops",
                "USL",
                "more threads",
                "limited by",
                "The fastest cell",
                "What would make it faster",
            ] {
                assert!(!out.contains(claim), "{rates:?}: {claim:?} in\n{out}");
            }
        }
        assert!(text.contains("kept up"), "{rates:?}: {text}");
    }
}

/// Erlang C: the probability that an arrival waits, `k` servers offered `a` erlangs.
fn erlang_c(k: u32, a: f64) -> f64 {
    let rho = a / f64::from(k);
    if rho >= 1.0 {
        return 1.0;
    }
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..k {
        term *= a / f64::from(i);
        sum += term;
    }
    let last = term * a / f64::from(k) / (1.0 - rho);
    last / (sum + last)
}

/// The readers' p99 response time (s) that queueing arithmetic predicts with writes paced at
/// `writes` docs/s and `reads` reads/s sharing `k` slots of `s` seconds each: a G/D/k queue
/// by Allen–Cunneen, the wait of M/M/k (Erlang C) scaled by (ca² + cs²)/2, with cs² = 0
/// (every request holds its slot exactly `s`) and ca² = reads / (reads + writes) (paced
/// writes arrive evenly, ca² = 0; the readers' think-time loop about as Poisson, ca² = 1).
/// A request waits with probability C; given that, its wait is about exponential with mean
/// (ca² + cs²)/2 / (kμ − λ), so the p99 is s + that mean × ln(100 C) when C > 1 %.
fn predicted_reader_p99_s(k: u32, s: f64, writes: f64, reads: f64) -> f64 {
    let lambda = writes + reads;
    let cap = f64::from(k) / s;
    if lambda >= cap {
        return f64::INFINITY;
    }
    let c = erlang_c(k, lambda * s);
    let ca2 = reads / lambda;
    let mean_if_waiting = (ca2 + 0.0) / 2.0 / (cap - lambda);
    s + if c > 0.01 {
        mean_if_waiting * (100.0 * c).ln()
    } else {
        0.0
    }
}

/// The write rate (docs/s) at which the predicted readers' p99 reaches `slo_s` (bisection:
/// the p99 grows with the rate).
fn predicted_crossing(k: u32, s: f64, reads: f64, slo_s: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, f64::from(k) / s - reads);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if predicted_reader_p99_s(k, s, mid, reads) < slo_s {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[test]
fn the_queueing_arithmetic_behaves() {
    // One server, Poisson arrivals, fixed service (M/D/1): C = ρ = 0.5, the mean wait of
    // those waiting half M/M/1's 1 / (μ − λ) = 20 ms, so the p99 wait is 10 ms × ln 50.
    let p = predicted_reader_p99_s(1, 0.01, 0.0, 50.0) - 0.01;
    assert!((p - 0.01 * 50f64.ln()).abs() < 1e-9, "{p}");
    assert!((erlang_c(1, 0.5) - 0.5).abs() < 1e-12);
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
    // More writes, longer waits; none past capacity.
    let a = predicted_reader_p99_s(2, 0.02, 60.0, 8.0);
    let b = predicted_reader_p99_s(2, 0.02, 90.0, 8.0);
    assert!(a < b && b.is_finite(), "{a} {b}");
    assert!(predicted_reader_p99_s(2, 0.02, 95.0, 8.0).is_infinite());
}

/// Issue #42's check: against a target of known capacity (2 slots × 20 ms = 100 requests/s,
/// reads and writes sharing them), a rates sweep with one reader finds the rate at which the
/// readers' p99 crosses the objective within ±20 % of what queueing arithmetic predicts.
///
/// The prediction (`predicted_crossing`): the reader reads metadata, one request of 20 ms,
/// then thinks 100 ms, about 1 / 0.12 = 8.3 reads/s; by Allen–Cunneen's G/D/k the p99 of a
/// read reaches 60 ms at about 86.8 docs/s of writes (ρ = 0.95): paced writes and fixed
/// service times queue hardly at all until the slots are nearly full. The sweep's answer
/// interpolates between the achieved rates of the last rate that met it and the first that
/// broke it.
///
/// Why 60 ms and not 500: past capacity the queue grows in the client, not in the target:
/// at most T = 8 writes are in flight, so a read waits at most T × S / K = 80 ms for a slot,
/// and its p99 never passes S + 80 = 100 ms, whatever the rate (measured: 99 ms at 115
/// docs/s). An objective above that bound is met at every rate with 8 threads; the sweep
/// then says "the highest rate measured still meets it", which is true of that import.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_where_readers_cross_the_slo_is_what_queueing_predicts() {
    let _one = crate::common::TIMED.lock().await;
    let (k, s, think, slo, threads) = (2u32, 0.020, 0.100, 0.060, 8.0);
    let reads = 1.0 / (think + s);
    let predicted = predicted_crossing(k, s, reads, slo);
    let (t, _d) = target_with(capacity(k as usize, 20)).await;
    let dir = tempfile::tempdir().unwrap();
    let (summary, _) = sweep(
        &t.http_url().unwrap(),
        dir.path(),
        &[
            "--threads",
            "8",
            "--runs",
            "1",
            "--duration",
            "3s",
            "--rates",
            "40,60,75,85,95,115",
            "--readers",
            "1",
            "--think-time",
            "100ms",
            "--reader-mix",
            "meta=1",
            "--reader-slo",
            "60ms",
        ],
    )
    .await;
    let a = &summary.slo[0];
    for p in a.baseline.iter().chain(&a.points) {
        eprintln!(
            "rate {:>5} achieved {:>6.1} kept up {:?} reader p99 {:>7.1} ms",
            p.rate_per_s, p.achieved_per_s, p.kept_up, p.reader_p99_ms
        );
    }
    eprintln!("{}", a.text);
    eprintln!("predicted crossing {predicted:.1} docs/s of writes");
    assert!((80.0..92.0).contains(&predicted), "{predicted}");
    // Robust whatever the machine's load: well under capacity the reader meets 60 ms; past
    // it, it breaks it, but stays near the bound the import's 8 workers set.
    let at = |r: f64| a.points.iter().find(|p| p.rate_per_s == r).unwrap();
    assert!(at(40.0).reader_p99_ms < 60.0, "{:?}", at(40.0));
    let over = at(115.0).reader_p99_ms;
    let bound_ms = (s + threads * s / f64::from(k)) * 1000.0;
    assert!(
        over >= 60.0 && over <= 1.5 * bound_ms,
        "{over} ms, bound {bound_ms} ms"
    );
    assert_eq!(a.verdict, ingestbench::analysis::slo::SloVerdict::Found);
    let found = a.crossing_per_s.or(a.highest_achieved_per_s).unwrap();
    assert!(
        (found / predicted - 1.0).abs() <= 0.2,
        "found {found:.1} docs/s, predicted {predicted:.1}"
    );
}

/// `--rate` with `--shard`: two shard processes each pace half of 40 docs/s (their half of
/// the documents), start together, and `merge` makes one schedule of the whole rate that
/// kept up; every document is stored once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_each_pace_their_share_of_the_rate_and_merge_into_the_whole() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _d) = target_with(capacity(4, 10)).await;
    let dir = tempfile::tempdir().unwrap();
    let pw = password_file(dir.path(), "admin");
    let port = crate::common::free_port();
    let url = t.http_url().unwrap();
    let mut children = Vec::new();
    for k in 0..2 {
        let c = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .args(["run", "--quiet", "--warmup", "0", "--url", &url])
            .args(["--profile", "basic", "--docs", "80", "--threads", "4"])
            .args(["--runs", "1", "--rate", "40", "--plan-id", "paced-2"])
            .args(["--shard", &format!("{k}/2")])
            .args(["--rendezvous", &format!("127.0.0.1:{port}")])
            .arg("--password-file")
            .arg(&pw)
            .arg("--results-dir")
            .arg(dir.path().join("results"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        children.push(tokio::task::spawn_blocking(move || c.wait_with_output()));
    }
    for c in children {
        let o = c.await.unwrap().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let shard_dir = |k: u32| {
        dir.path()
            .join("results")
            .join(format!("run-paced-2-shard-{k}of2"))
    };
    for k in 0..2 {
        let r: ingestbench::report::RunResult = serde_json::from_str(
            &std::fs::read_to_string(shard_dir(k).join("result.json")).unwrap(),
        )
        .unwrap();
        let p = r.runs[0].paced.as_ref().unwrap();
        assert_eq!((p.rate_per_s, p.due), (20.0, 40), "shard {k}: {p:?}");
    }
    let merged = dir.path().join("merged");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .arg("merge")
        .arg(shard_dir(0))
        .arg(shard_dir(1))
        .arg("--output")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, runs) = ingestbench::results::load_dir(&merged).unwrap();
    let p = runs[0].record.paced.as_ref().expect("the merged schedule");
    eprintln!(
        "merged: asked {} achieved {} due {} late {} backlog {} response p99 {} ms",
        p.rate_per_s, p.achieved_per_s, p.due, p.late, p.backlog, p.response_ms.p99
    );
    assert_eq!((p.rate_per_s, p.due), (40.0, 80));
    assert!(p.kept_up, "{p:?}");
    assert!((p.achieved_per_s / 40.0 - 1.0).abs() < 0.15, "{p:?}");
    assert_eq!(runs[0].record.docs_ok, 80);
}
