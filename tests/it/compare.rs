//! Regression gates: `compare` against targets with a known capacity change (the embedded
//! target's modelled service time), `--fail-if` thresholds on run, sweep and compare with
//! their exit codes (0, 2, 3), and the pipeline recipe `scripts/regression-gate.sh`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use clap::Parser;
use ingestbench::analysis::stats::Verdict;
use ingestbench::cli::{Cli, Command as Cmd};
use ingestbench::compare::{self, Comparison};

use crate::common;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.env_remove("INGESTBENCH_PASSWORD")
        .stdin(Stdio::null())
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn only_dir(p: &Path) -> PathBuf {
    let v: Vec<PathBuf> = std::fs::read_dir(p)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(v.len(), 1, "{v:?}");
    v[0].clone()
}

/// A sweep (in-process) of 1 thread, small documents, 3 runs of `docs`, against a target of
/// its own whose every request takes `service_ms`; returns the sweep directory.
async fn sweep_at(service_ms: u64, docs: u64, tmp: &Path) -> PathBuf {
    let (target, dir) = common::target_with(|c| {
        c.perf.service_time = Duration::from_millis(service_ms);
    })
    .await;
    let methods = common::direct_method(dir.path(), &target.http_url().unwrap());
    let pw = common::password_file(dir.path(), "admin");
    let results = tmp.join(format!(
        "results-{service_ms}ms-{}",
        ingestbench::fixtures::random_u64()
    ));
    let cli = Cli::try_parse_from([
        "ingestbench",
        "sweep",
        "--warmup",
        "5",
        "--quiet",
        "--access-methods",
        "direct",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--threads",
        "1",
        "--sizes",
        "small",
        "--docs",
        &docs.to_string(),
        "--runs",
        "3",
        "--profile",
        "basic",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ])
    .unwrap();
    let Cmd::Sweep(args) = cli.command else {
        unreachable!()
    };
    let (outcome, _) = ingestbench::sweep_command(&args).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    drop(target);
    only_dir(&results)
}

fn compare_dirs(base: &Path, cand: &Path) -> Comparison {
    compare::compare(
        &compare::load::load("BASELINE", base).unwrap(),
        &compare::load::load("CANDIDATE", cand).unwrap(),
    )
}

/// Service time 20 ms against 30 ms at 1 thread: each upload takes 10 ms longer, so the
/// candidate's docs/sec is b / (1 + b × 10 ms) for the baseline's b (about a third less;
/// slightly less than that, as the client's and server's own work per upload is unchanged).
/// compare calls it significantly slower, by an amount whose interval holds that expectation;
/// `--fail-if slower>5%` exits 3 naming the cell, `slower>60%` exits 0.
///
/// 20 and 30 ms rather than 2 and 3: at 2 ms the debug build's own work per upload and the
/// scheduling delays of a loaded 2-core machine are a large share of each upload, and 3 runs
/// then gave intervals of ±15-85 % (too noisy to tell) whenever the machine was busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slower_target_is_significantly_slower_by_the_expected_amount() {
    let _one = common::TIMED.lock().await;
    let tmp = tempfile::tempdir().unwrap();
    let base = sweep_at(20, 40, tmp.path()).await;
    let cand = sweep_at(30, 40, tmp.path()).await;
    let cmp = compare_dirs(&base, &cand);
    assert_eq!(cmp.cells.len(), 1, "{cmp:?}");
    let runs = |d: &Path| {
        compare::load::load("", d).unwrap().cells[0]
            .summary
            .run_docs_per_sec
            .clone()
    };
    eprintln!("per-run docs/sec: {:?} vs {:?}", runs(&base), runs(&cand));
    let c = &cmp.cells[0].docs_per_sec;
    let b = c.baseline;
    let expected = -(b * 0.01) / (1.0 + b * 0.01) * 100.0;
    let h = c.ci95_pct.unwrap();
    eprintln!(
        "20 ms vs 30 ms: {:.0} -> {:.0} docs/sec, {:+.1} % ± {h:.1} % (expected {expected:+.1} %): {}",
        b, c.candidate, c.change_pct, c.text
    );
    assert_eq!(c.verdict, Some(Verdict::Slower), "{c:?}");
    assert!(
        (c.change_pct - expected).abs() <= h + 2.0,
        "expected {expected:.1} % within {:.1} % ± {h:.1} % (+2 % tolerance)",
        c.change_pct
    );
    assert!((-40.0..=-20.0).contains(&c.change_pct), "{c:?}");
    // Each upload 1 ms longer: latency up (a tail percentile per run is noisier than
    // docs/sec, so only its direction is asserted).
    let p95 = &cmp.cells[0].latency_p95_ms;
    assert!(
        p95.change_pct > 0.0 && p95.verdict != Some(Verdict::Faster),
        "{p95:?}"
    );
    assert!(c.text.starts_with("slower by "), "{}", c.text);

    let o = bin()
        .arg("compare")
        .args([&base, &cand])
        .args(["--fail-if", "slower>5%"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{err}");
    assert!(
        out.contains("docs/sec") && out.contains("slower by "),
        "{out}"
    );
    assert!(
        err.contains("threshold crossed: direct reuse small 1 thread: docs/sec slower by ")
            && err.contains("(--fail-if slower>5%)"),
        "{err}"
    );
    let o = bin()
        .arg("compare")
        .args([&base, &cand])
        .args(["--fail-if", "slower>60%", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/compare.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    common::assert_valid(&schema, &schema, &v);
    let j: Comparison = serde_json::from_value(v).unwrap();
    assert_eq!(j, cmp, "--json prints the comparison");
    let o = bin()
        .arg("compare")
        .args([&base, &cand])
        .args(["--markdown", "--fail-if", "slower>5%"])
        .output()
        .unwrap();
    let (md, _) = text(&o);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        md.contains("| cell | runs | docs/sec | MB/s | p95 ms | p99 ms |"),
        "{md}"
    );
    assert!(md.contains("**Thresholds crossed:**"), "{md}");
    // A summary.json read on its own still compares docs/sec with its interval.
    let alone = tmp.path().join("summary.json");
    std::fs::copy(base.join("summary.json"), &alone).unwrap();
    let c2 = compare_dirs(&alone, &cand);
    assert_eq!(c2.cells[0].docs_per_sec, cmp.cells[0].docs_per_sec);
    assert_eq!(
        c2.cells[0].latency_p95_ms.verdict, None,
        "no per-run p95 there"
    );
}

/// Two sweeps of the same configuration: "no significant difference". A 95 % interval calls
/// identical configurations different 5 % of the time by design, and a load spike in one of 3
/// runs widens the interval past ±5 % (too noisy to tell), so the pair may be measured up to 3
/// times (about 6 s each); the first "no significant difference" passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_configurations_show_no_significant_difference() {
    let _one = common::TIMED.lock().await;
    let tmp = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let a = sweep_at(20, 40, tmp.path()).await;
        let b = sweep_at(20, 40, tmp.path()).await;
        let cmp = compare_dirs(&a, &b);
        let c = cmp.cells[0].docs_per_sec.clone();
        eprintln!(
            "20 ms vs 20 ms: {} (per run {:?} vs {:?})",
            c.text,
            compare::load::load("", &a).unwrap().cells[0]
                .summary
                .run_docs_per_sec,
            compare::load::load("", &b).unwrap().cells[0]
                .summary
                .run_docs_per_sec
        );
        if c.verdict == Some(Verdict::NoDifference) {
            assert!(c.text.starts_with("no significant difference ("), "{c:?}");
            let o = bin()
                .arg("compare")
                .args([&a, &b])
                .args(["--fail-if", "slower>5%", "--fail-if", "p99_slower>50%"])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
            return;
        }
        seen.push(c.text);
    }
    panic!("identical configurations were never \"no significant difference\": {seen:?}");
}

/// `--fail-if` on run and sweep: crossed → exit 3 after the results were written, each
/// crossing named; not crossed → exit 0.
#[test]
fn thresholds_on_run_and_sweep_exit_3_when_crossed_and_0_when_not() {
    let _one = common::TIMED.blocking_lock();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let run = |fail_if: &[&str]| {
        let mut c = bin();
        c.args(["run", "--warmup", "0", "--quiet", "--profile", "basic"])
            .args(["--docs", "20", "--threads", "2", "--runs", "2"])
            .arg("--results-dir")
            .arg(&results);
        for f in fail_if {
            c.args(["--fail-if", f]);
        }
        c.stdout(Stdio::null()).output().unwrap()
    };
    let o = run(&["docs_per_sec<1000000000", "error_pct>0", "p99_ms>0"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("threshold crossed: run reuse small 2 threads: docs_per_sec ")
            && err.contains(" < 1000000000 (--fail-if docs_per_sec<1000000000)"),
        "{err}"
    );
    assert!(
        err.contains("(--fail-if p99_ms>0)") && !err.contains("error_pct>0)"),
        "{err}"
    );
    assert!(err.contains("2 threshold crossings: exit 3"), "{err}");
    let written = only_dir(&results).join("result.json");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    assert_eq!(r["docs_ok"], 40, "the results were written before exit 3");
    let first = dir.path().join("first");
    std::fs::rename(only_dir(&results), &first).unwrap();
    let o = run(&["docs_per_sec<0.001", "error_pct>0"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    // Two runs compare as one cell each, named `run`.
    let o = bin()
        .arg("compare")
        .arg(&first)
        .arg(only_dir(&results))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.contains("  run reuse small 2 threads (2 vs 2 runs)"),
        "{out}"
    );

    let methods = Path::new(env!("CARGO_MANIFEST_DIR")).join("access-methods");
    let sweep = |fail_if: &str| {
        bin()
            .args(["sweep", "--warmup", "0", "--quiet", "--access-methods"])
            .args(["embedded-http", "--access-methods-dir"])
            .arg(&methods)
            .args(["--threads", "1,2", "--sizes", "small", "--docs", "20"])
            .args(["--runs", "1", "--fail-if", fail_if, "--results-dir"])
            .arg(dir.path().join("sweeps"))
            .output()
            .unwrap()
    };
    let o = sweep("mb_per_sec>0");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    for cell in [
        "embedded-http reuse small 1 thread",
        "embedded-http reuse small 2 threads",
    ] {
        assert!(
            err.contains(&format!("threshold crossed: {cell}: mb_per_sec ")),
            "{err}"
        );
    }
    let o = sweep("max_ms>600000");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
}

/// A malformed expression is exit 2 naming it, before anything is measured; so is input
/// compare cannot use.
#[test]
fn bad_expressions_and_unusable_inputs_exit_2_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    for (args, needle) in [
        (
            vec!["run", "--fail-if", "docs_per_sec"],
            "--fail-if `docs_per_sec`: no comparison",
        ),
        (
            vec!["run", "--fail-if", "p99_ms>5", "--fail-if", "p99>5"],
            "unknown metric `p99`",
        ),
        (
            vec!["run", "--fail-if", "slower>5%"],
            "give it to `ingestbench compare",
        ),
        (
            vec![
                "run",
                "--fail-if",
                "p99_ms>5",
                "--shard",
                "0/2",
                "--plan-id",
                "p",
                "--rendezvous",
                "127.0.0.1:9",
            ],
            "--fail-if cannot be combined with --shard",
        ),
        (
            vec![
                "sweep",
                "--access-methods",
                "embedded-http",
                "--fail-if",
                "error_pct>lots",
            ],
            "`lots` is not a number",
        ),
    ] {
        let o = bin()
            .args(&args)
            .arg("--results-dir")
            .arg(&results)
            .output()
            .unwrap();
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!results.exists(), "{args:?}: nothing was measured");
    }
    for (args, needle) in [
        (vec!["a", "b", "--fail-if", "slower<5"], "`slower` takes >"),
        (
            vec!["no/such/a", "no/such/b"],
            "compare BASELINE no/such/a: no such file",
        ),
    ] {
        let o = bin().arg("compare").args(&args).output().unwrap();
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Two results with no cell in common.
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let summary = crate::common::fixed_summary();
    std::fs::write(&a, serde_json::to_string(&summary).unwrap()).unwrap();
    let mut other = summary.clone();
    for c in &mut other.cells {
        c.method = "elsewhere".into();
    }
    std::fs::write(&b, serde_json::to_string(&other).unwrap()).unwrap();
    let o = bin().arg("compare").args([&a, &b]).output().unwrap();
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no cell in common") && err.contains("elsewhere"),
        "{err}"
    );
    let o = bin().arg("compare").args([&a, &a]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
}

/// The pipeline recipe: the first call stores the baseline, later ones compare with it and
/// exit 3 on a crossing (here an absolute threshold no machine reaches, so the test is
/// deterministic), 0 otherwise; --update-baseline after a pass; a bad threshold exits 2 first.
#[test]
fn the_regression_gate_script_stores_a_baseline_then_gates_on_it() {
    let _one = common::TIMED.blocking_lock();
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/regression-gate.sh");
    let gate = |extra: &[&str]| {
        let o = Command::new("bash")
            .arg(&script)
            .arg("--baseline")
            .arg(dir.path().join("baseline"))
            .arg("--results-dir")
            .arg(dir.path().join("results"))
            .args(extra)
            .args(["--", "--access-methods", "embedded-http", "--threads", "1"])
            .args([
                "--sizes", "small", "--docs", "30", "--runs", "2", "--warmup", "0",
            ])
            .env("INGESTBENCH", env!("CARGO_BIN_EXE_ingestbench"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (out, err) = text(&o);
        (o.status.code(), format!("{out}{err}"))
    };
    let (code, out) = gate(&[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("no baseline yet"), "{out}");
    assert!(dir.path().join("baseline/plan.json").is_file(), "{out}");
    let (code, out) = gate(&["--fail-if", "slower>95%"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("docs/sec") && out.contains("gate passed"),
        "{out}"
    );
    let (code, out) = gate(&["--fail-if", "docs_per_sec<1000000000"]);
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("threshold crossed: embedded-http reuse small 1 thread"),
        "{out}"
    );
    let md = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("compare.md")).ok())
        .count();
    assert_eq!(md, 2, "each gated sweep has its compare.md");
    // A failing gate kept the baseline; a passing one with --update-baseline replaces it; a
    // malformed threshold stops before measuring.
    let id = || std::fs::read_to_string(dir.path().join("baseline/plan.json")).unwrap();
    let before = id();
    let (code, out) = gate(&["--fail-if", "slower>95%", "--update-baseline"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("is the new baseline"), "{out}");
    assert_ne!(id(), before, "the new sweep is the baseline");
    let (code, out) = gate(&["--fail-if", "slower"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("--fail-if `slower`") && !out.contains("measuring"),
        "{out}"
    );
}
