//! Sweep tests: the acceptance sweep in-process, kill and `--resume` with the real binary,
//! `report DIR` reproducing identical files, and exporter snapshots on fixed data.
//!
//! The sweep's end-to-end scenarios, each read top to bottom.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use ingestbench::cli::{Cli, Command as Cmd};
use ingestbench::report::export;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.env_remove("INGESTBENCH_PASSWORD")
        .stdin(Stdio::null())
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn only_dir(p: &Path) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(p)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(v.len(), 1, "{v:?}");
    v.pop().unwrap()
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    ["summary.json", "cells.csv", "report.md", "report.html"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acceptance_sweep_writes_every_report_and_report_reproduces_them() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let methods = Path::new(env!("CARGO_MANIFEST_DIR")).join("access-methods");
    let cli = Cli::try_parse_from([
        "ingestbench",
        "sweep",
        "--warmup",
        "0",
        "--quiet",
        "--access-methods",
        "embedded-http,embedded-https",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--threads",
        "1,2,4,8",
        "--sizes",
        "small,average",
        "--docs",
        "200",
        "--runs",
        "3",
        "--baseline",
        "embedded-http",
        "--results-dir",
        results.to_str().unwrap(),
    ])
    .unwrap();
    let Cmd::Sweep(args) = cli.command else {
        unreachable!()
    };
    let (outcome, summary) = ingestbench::sweep_command(&args).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    assert_eq!((summary.runs_done, summary.runs_planned), (48, 48));
    assert_eq!(summary.cells.len(), 16);
    assert!(
        summary
            .cells
            .iter()
            .all(|c| c.runs == 3 && c.docs_ok == 600 && c.node_split.get("node1") == Some(&600))
    );
    let sweep = only_dir(&results);
    let csv = std::fs::read_to_string(sweep.join("cells.csv")).unwrap();
    assert_eq!(csv.lines().count(), 17, "header + 16 rows");
    assert_eq!(csv.lines().next().unwrap(), export::CSV_HEADER);
    assert_eq!(
        summary.relative.len(),
        8,
        "embedded-https vs embedded-http at 4 thread counts x 2 sizes"
    );
    assert_eq!(summary.scaling.len(), 4);
    let md = std::fs::read_to_string(sweep.join("report.md")).unwrap();
    assert!(md.contains("## What it means"));
    assert!(
        md.contains("slower")
            || md.contains("faster")
            || md.contains("no significant difference")
            || md.contains("too noisy to tell"),
        "the relative cost is stated, as a conclusion only when significant"
    );
    // `report DIR` re-renders identical files.
    let before = files(&sweep);
    let o = bin().arg("report").arg(&sweep).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files(&sweep), before);
}

/// `--budget`: runs beyond the planned ones go to the comparisons still open, within the
/// time; the budget is recorded and reported, and report.md answers first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_spends_its_runs_on_open_comparisons_and_the_report_answers_first() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let methods = Path::new(env!("CARGO_MANIFEST_DIR")).join("access-methods");
    let started = Instant::now();
    let cli = Cli::try_parse_from([
        "ingestbench",
        "sweep",
        "--warmup",
        "0",
        "--quiet",
        "--access-methods",
        "embedded-http,embedded-https",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--threads",
        "1",
        "--sizes",
        "small",
        "--docs",
        "30",
        "--runs",
        "2",
        "--budget",
        "8s",
        "--max-runs",
        "12",
        "--baseline",
        "embedded-http",
        "--results-dir",
        results.to_str().unwrap(),
    ])
    .unwrap();
    let Cmd::Sweep(args) = cli.command else {
        unreachable!()
    };
    let (outcome, summary) = ingestbench::sweep_command(&args).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(summary.plan.measure.budget_s, Some(8.0));
    assert_eq!(summary.runs_planned, 4);
    assert!(summary.runs_done >= 4 && summary.cells.iter().all(|c| c.runs <= 12));
    let r = &summary.relative[0];
    let budget = summary
        .warnings
        .iter()
        .find(|w| w.starts_with("--budget 8 s"))
        .expect("the budget is reported");
    if r.verdict == ingestbench::analysis::limits::Verdict::TooNoisy {
        assert!(
            summary.runs_done > 4,
            "an open comparison got runs: {budget}"
        );
        assert!(budget.contains("still too noisy"), "{budget}");
    } else {
        assert!(budget.contains("answered"), "{budget}");
    }
    let md = std::fs::read_to_string(only_dir(&results).join("report.md")).unwrap();
    let (answers, details) = (
        md.find("## Answers").unwrap(),
        md.find("## What it means").unwrap(),
    );
    assert!(answers < details, "the answers come first");
    assert!(md.contains("**What embedded-https costs against embedded-http:** small: "));
    assert!(md.contains(&format!("{:.1} % ± {:.1} %", r.diff_pct.abs(), r.ci95_pct)));
}

/// `--budget` with thread counts in between: their runs after the first wait until the
/// comparisons at the fewest and the most threads are closed (answered or at `--max-runs`),
/// and come before any run of a comparison in between; the report counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_runs_the_counts_in_between_after_the_stated_comparisons() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let methods = Path::new(env!("CARGO_MANIFEST_DIR")).join("access-methods");
    let cli = Cli::try_parse_from([
        "ingestbench",
        "sweep",
        "--warmup",
        "0",
        "--quiet",
        "--access-methods",
        "embedded-http,embedded-https",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--threads",
        "1,2,4",
        "--sizes",
        "small",
        "--docs",
        "30",
        "--runs",
        "3",
        "--budget",
        "20s",
        "--max-runs",
        "5",
        "--baseline",
        "embedded-http",
        "--results-dir",
        results.to_str().unwrap(),
    ])
    .unwrap();
    let Cmd::Sweep(args) = cli.command else {
        unreachable!()
    };
    let (outcome, summary) = ingestbench::sweep_command(&args).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    // 2 methods x (3 runs at 1 and at 4 threads + the first at 2).
    assert_eq!(summary.runs_planned, 14);
    let (_, runs) = ingestbench::results::load_dir(&only_dir(&results)).unwrap();
    let start = |r: &ingestbench::results::CellRun| r.record.started_unix_ms;
    let last_stated = runs
        .iter()
        .filter(|r| r.cell.threads != 2)
        .map(start)
        .max()
        .unwrap();
    let later: Vec<_> = runs
        .iter()
        .filter(|r| r.cell.threads == 2 && r.record.run > 1)
        .collect();
    assert!(
        later.iter().all(|r| r.record.started_unix_ms > last_stated),
        "a run at 2 threads after the first came before a run at 1 or 4 threads"
    );
    // 20 s is far more than 5 runs of 30 documents per cell take: every run was given.
    assert!(
        later.len() >= 4,
        "the runs at 2 threads after the first were given: {}",
        later.len()
    );
    let budget = summary
        .warnings
        .iter()
        .find(|w| w.starts_with("--budget 20 s"))
        .expect("the budget is reported");
    assert!(
        budget.contains("of them at 2 threads (there, the 4 planned runs after each cell's first waited for the comparisons at 1 and 4 threads)"),
        "{budget}"
    );
}

/// A malformed or combined `--budget` is a usage error naming the flag.
#[test]
fn a_bad_budget_exits_2_naming_the_flag() {
    for args in [
        vec!["--budget", "soon"],
        vec!["--budget", "0s"],
        vec![
            "--budget",
            "1m",
            "--shard",
            "0/2",
            "--plan-id",
            "p",
            "--rendezvous",
            "127.0.0.1:9",
        ],
    ] {
        let o = bin()
            .args(["sweep", "--access-methods", "embedded-http", "--dry-run"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--budget"), "{args:?}: {err}");
    }
}

#[test]
fn killed_midway_then_resume_completes_without_repeating_runs() {
    // One end-to-end scenario, read top to bottom.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let mut child = bin()
        .args([
            "sweep",
            "--warmup",
            "0",
            "--quiet",
            "--access-methods",
            "embedded-http",
            "--threads",
            "1,2",
            "--sizes",
            "small",
            "--docs",
            "300",
            "--runs",
            "4",
        ])
        .arg("--results-dir")
        .arg(&results)
        .arg("--target-data-dir")
        .arg(dir.path().join("store"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let runs_dir = loop {
        if let Ok(mut rd) = std::fs::read_dir(&results)
            && let Some(Ok(e)) = rd.next()
        {
            let r = e.path().join("runs");
            if std::fs::read_dir(&r).map(|d| d.count()).unwrap_or(0) >= 3 {
                break r;
            }
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sweep wrote no runs");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let done: BTreeMap<String, Vec<u8>> = std::fs::read_dir(&runs_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    assert!(
        done.len() < 8,
        "killed before the end ({} runs)",
        done.len()
    );
    let sweep = runs_dir.parent().unwrap().to_path_buf();
    let o = bin()
        .arg("sweep")
        .arg("--quiet")
        .arg("--resume")
        .arg(&sweep)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after: BTreeMap<String, Vec<u8>> = std::fs::read_dir(&runs_dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    assert_eq!(after.len(), 8, "2 cells x 4 runs: {:?}", after.keys());
    for (name, bytes) in &done {
        assert_eq!(after.get(name), Some(bytes), "{name} was not repeated");
    }
    let csv = std::fs::read_to_string(sweep.join("cells.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3);
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args([
            "sweep",
            "--warmup",
            "0",
            "--access-methods",
            "embedded-http,embedded-https",
            "--threads",
            "1-4",
            "--dry-run",
        ])
        .arg("--results-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("24 cells") && err.contains("72000 uploads") && err.contains("estimate"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn bad_access_method_file_exits_2_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("broken.toml");
    std::fs::write(
        &f,
        "name = 'broken'\nurl = 'http://127.0.0.1:1'\nconnection = 'sometimes'\n",
    )
    .unwrap();
    let o = bin()
        .args(["sweep", "--warmup", "0", "--access-methods"])
        .arg(&f)
        .arg("--results-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("broken.toml") && err.contains("connection"),
        "{err}"
    );
    let o = bin()
        .args([
            "sweep",
            "--warmup",
            "0",
            "--access-methods",
            "no-such-method",
            "--results-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("no-such-method") && err.contains("embedded-http"),
        "lists the known methods: {err}"
    );
}

// ---- exporter snapshots on fixed data ----

#[test]
fn exporters_match_their_snapshots() {
    let s = crate::common::fixed_summary();
    assert_eq!(s.relative.len(), 5);
    assert!(
        s.relative.iter().all(|r| (r.diff_pct + 10.0).abs() < 0.5),
        "{:?}",
        s.relative
    );
    let snap_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    for e in export::all() {
        let got = e.render(&s);
        // Checked in both modes, so a broken table can neither pass nor be written.
        match e.file_name() {
            "report.md" => assert_markdown_tables_are_rectangular(&got),
            "report.html" => assert_html_tables_are_rectangular(&got),
            _ => {}
        }
        let path = snap_dir.join(e.file_name());
        if update {
            std::fs::create_dir_all(&snap_dir).unwrap();
            std::fs::write(&path, &got).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), got);
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!(
                "missing snapshot {} (UPDATE_SNAPSHOTS=1 cargo test --test sweep writes it)",
                path.display()
            )
        });
        assert!(
            got == want,
            "{} differs from its snapshot; review and UPDATE_SNAPSHOTS=1 if intended",
            e.file_name()
        );
    }
}

/// Cells of a Markdown table line (`\|` is a literal pipe inside a cell).
fn md_cells(line: &str) -> usize {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.replace("\\|", "").split('|').count()
}

/// Every Markdown table: the rule and every row have as many cells as the header.
fn assert_markdown_tables_are_rectangular(md: &str) {
    let mut tables = 0;
    let mut lines = md.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with('|') {
            continue;
        }
        tables += 1;
        let want = md_cells(line);
        while let Some(row) = lines.next_if(|l| l.starts_with('|')) {
            assert_eq!(md_cells(row), want, "row `{row}` under header `{line}`");
        }
    }
    assert!(tables >= 3, "the report has its tables ({tables})");
}

/// Every HTML table: each row has as many cells as the header row.
fn assert_html_tables_are_rectangular(html: &str) {
    let mut tables = 0;
    for t in html.split("<table>").skip(1) {
        let t = t.split("</table>").next().unwrap();
        tables += 1;
        let mut rows = t.split("<tr>").skip(1);
        let want = rows.next().unwrap().matches("<th>").count();
        for r in rows {
            assert_eq!(r.matches("<td>").count(), want, "row {r}");
        }
    }
    assert!(tables >= 3, "the report has its tables ({tables})");
}

/// Two methods whose files set different connection policies: plan.json records each
/// method's own policy, the summary plans exactly those cells, and `--resume` of the
/// finished sweep finds nothing to do (it used to plan the cross product of the union).
#[test]
fn each_method_keeps_its_own_connection_policy_through_resume() {
    let dir = tempfile::tempdir().unwrap();
    let methods = dir.path().join("methods");
    std::fs::create_dir_all(&methods).unwrap();
    for (name, conn) in [("keep", "reuse"), ("fresh", "new")] {
        std::fs::write(
            methods.join(format!("{name}.toml")),
            format!("name = \"{name}\"\nurl = \"embedded:http\"\nconnection = \"{conn}\"\n"),
        )
        .unwrap();
    }
    let results = dir.path().join("results");
    let sweep = |extra: &[&str]| {
        let o = bin()
            .args([
                "sweep",
                "--warmup",
                "0",
                "--quiet",
                "--threads",
                "1,2",
                "--sizes",
                "small",
            ])
            .args(["--docs", "6", "--runs", "2"])
            .arg("--access-methods-dir")
            .arg(&methods)
            .arg("--results-dir")
            .arg(&results)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    sweep(&["--access-methods", "keep,fresh"]);
    let out = only_dir(&results);
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(
        plan["methods"][0]["connections"],
        serde_json::json!(["reuse"])
    );
    assert_eq!(
        plan["methods"][1]["connections"],
        serde_json::json!(["new"])
    );
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
    };
    let s = summary(&out);
    assert_eq!(
        s["runs_planned"], 8,
        "2 methods x 1 policy x 2 thread counts x 2 runs"
    );
    assert_eq!(s["runs_done"], 8);
    let cells: Vec<(String, String)> = s["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["method"].as_str().unwrap().to_string(),
                c["connection"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        cells
            .iter()
            .all(|c| c == &("keep".into(), "reuse".into()) || c == &("fresh".into(), "new".into())),
        "{cells:?}"
    );
    let fresh = s["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["method"] == "fresh" && c["threads"] == 2)
        .unwrap();
    assert_eq!(fresh["new_connections"], 12, "one connection per document");
    sweep(&["--resume", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_dir(out.join("runs")).unwrap().count(), 8);
    assert_eq!(summary(&out)["runs_planned"], 8);
}

/// A sweep killed hard (SIGKILL) in the middle of a run, against a persistent store:
/// `--resume` finishes exactly the missing runs, adopting what the killed run stored but did
/// not record, and `verify` then finds every planned document stored exactly once.
#[test]
fn a_sweep_killed_mid_run_resumes_to_every_document_once() {
    // One end-to-end scenario, read top to bottom.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let store = dir.path().join("store");
    let sweep = |extra: &[&str]| {
        let mut c = bin();
        c.args(["sweep", "--warmup", "0", "--quiet"])
            .args(extra)
            .arg("--target-data-dir")
            .arg(&store)
            .stdout(Stdio::null());
        c
    };
    let mut child = sweep(&[
        "--access-methods",
        "embedded-http",
        "--threads",
        "2",
        "--sizes",
        "small",
        "--docs",
        "400",
        "--runs",
        "3",
        "--profile",
        "basic",
        "--results-dir",
        results.to_str().unwrap(),
    ])
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let sweep_dir = loop {
        if let Ok(mut rd) = std::fs::read_dir(&results)
            && let Some(Ok(e)) = rd.next()
        {
            let d = e.path();
            let runs = std::fs::read_dir(d.join("runs")).map_or(0, |r| r.count());
            let lines =
                std::fs::read_to_string(d.join("manifest.jsonl")).map_or(0, |m| m.lines().count());
            if runs >= 1 && lines >= 500 {
                break d;
            }
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the sweep never got into its second run");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let o = sweep(&["--resume", sweep_dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_dir(sweep_dir.join("runs")).unwrap().count(),
        3
    );
    // Serve the store and read everything back.
    let port_file = dir.path().join("port");
    let mut target = bin()
        .arg("target")
        .arg("--data-dir")
        .arg(&store)
        .arg("--port-file")
        .arg(&port_file)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let port = loop {
        if let Some(p) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.parse::<u16>().ok()))
        {
            break p;
        }
        assert!(Instant::now() < deadline, "target did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "admin")
        .args(["verify", "--url", &format!("http://127.0.0.1:{port}")])
        .arg(&sweep_dir)
        .output()
        .unwrap();
    let _ = target.kill();
    let _ = target.wait();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sweep_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["checked"], 1200, "{v}");
    assert_eq!(
        (v["duplicates"].as_u64(), v["unrecorded"].as_u64()),
        (Some(0), Some(0))
    );
}
