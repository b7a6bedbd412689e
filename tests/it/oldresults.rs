//! Results written by earlier releases still load: `report`, `compare`, `verify`, `merge` and
//! `run --resume` accept them, and a sweep directory of each release too. Every case runs once
//! per set under `tests/old-results/` (see its README.md): the release before one results model
//! (f47d13e: a `run` directory held only `result.json` and the manifest), and the previous
//! release (8d335e4: a `run` directory also held its plan, methods and a record per run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::cli::TargetProcess;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.env("INGESTBENCH_PASSWORD", "admin").stdin(Stdio::null());
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The set written by f47d13e, the release before one results model.
const F47D13E: &str = ".";
/// The set written by 8d335e4, the previous release.
const R8D335E4: &str = "8d335e4";

/// Every case, as a test per set of old results.
macro_rules! for_each_set {
    ($($case:ident),* $(,)?) => {
        mod f47d13e {
            $(#[test]
            fn $case() {
                super::$case(super::F47D13E)
            })*
        }
        mod r8d335e4 {
            $(#[test]
            fn $case() {
                super::$case(super::R8D335E4)
            })*
        }
    };
}

for_each_set!(
    report_renders_an_old_run_directory_from_its_result,
    compare_reads_an_old_run_directory_and_an_old_result_json,
    verify_reads_an_old_run_directory,
    verify_reads_an_old_sweep_directory,
    merge_joins_the_shards_of_an_old_run,
    resume_finishes_an_interrupted_old_run,
    resume_of_a_finished_old_run_has_nothing_to_do,
    report_renders_an_old_sweep_directory,
);

/// A fresh copy of `tests/old-results/<set>/<name>` in `into`, so the tests never write into
/// the checked-in directories.
fn copy(set: &str, name: &str, into: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/old-results")
        .join(set)
        .join(name);
    let to = into.join(name);
    copy_dir(&from, &to);
    to
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn manifest_lines(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .count() as u64
}

fn report_renders_an_old_run_directory_from_its_result(set: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(set, "run", tmp.path());
    let before = std::fs::read_to_string(dir.join("result.json")).unwrap();
    let o = bin().arg("report").arg(&dir).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = json(&dir.join("result.json"));
    let s = json(&dir.join("summary.json"));
    let cell = &s["cells"][0];
    assert_eq!(cell["docs_ok"], r["docs_ok"], "{s}");
    assert_eq!(cell["runs"], 2);
    // The same figure, from the durations the runs recorded (to the µs) rather than the
    // clock's: equal to the last digit or two of three decimals.
    let (a, b) = (cell["docs_per_sec"].as_f64(), r["docs_per_sec"].as_f64());
    assert!((a.unwrap() - b.unwrap()).abs() < 0.01, "{a:?} {b:?}");
    assert_eq!(cell["latency_ms"]["p99"], r["latency_ms"]["p99"]);
    assert!(dir.join("report.md").is_file() && dir.join("report.html").is_file());
    // The result is written again from the same runs: the same, but for what a newer model
    // says on them (the what-ifs).
    let mut after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    let mut before: serde_json::Value = serde_json::from_str(&before).unwrap();
    without_what_ifs(&mut after);
    without_what_ifs(&mut before);
    assert_eq!(after, before);
}

/// `v` without its `what_if` lists: what a model says on the measurements, which a newer
/// model may say differently (more node counts, pooled demands) from the same runs.
fn without_what_ifs(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("what_if");
            m.values_mut().for_each(without_what_ifs);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_what_ifs),
        _ => {}
    }
}

fn compare_reads_an_old_run_directory_and_an_old_result_json(set: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(set, "run", tmp.path());
    let o = bin()
        .arg("compare")
        .arg(&dir)
        .arg(dir.join("result.json"))
        .output()
        .unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("run reuse small 2 threads (2 vs 2 runs)"),
        "{out}"
    );
    // An old sweep directory, against itself.
    let sweep = copy(set, "sweep", tmp.path());
    let o = bin()
        .arg("compare")
        .arg(&sweep)
        .arg(&sweep)
        .output()
        .unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("embedded-http reuse small 2 threads"), "{out}");
}

/// `verify` of a copy of `set`'s `name` against a fresh target: the old documents are not
/// there, and verify says so, one by one (exit 1).
fn verify_against_a_fresh_target(set: &str, name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(set, name, tmp.path());
    let target = TargetProcess::start(tmp.path(), &[]);
    let url = format!("http://127.0.0.1:{}", target.port);
    let o = bin()
        .args(["verify", "--quiet", "--url", &url])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v = json(&dir.join("verify.json"));
    let lines = manifest_lines(&dir);
    assert_eq!(v["checked"], lines, "{v}");
    assert_eq!(v["missing"], lines, "{v}");
}

fn verify_reads_an_old_run_directory(set: &str) {
    verify_against_a_fresh_target(set, "run");
}

fn verify_reads_an_old_sweep_directory(set: &str) {
    verify_against_a_fresh_target(set, "sweep");
}

fn merge_joins_the_shards_of_an_old_run(set: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let a = copy(set, "run-old-plan-shard-0of2", tmp.path());
    let b = copy(set, "run-old-plan-shard-1of2", tmp.path());
    let out = tmp.path().join("merged");
    let o = bin()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("start skew between shards"), "{said}");
    let m = json(&out.join("result.json"));
    let (ra, rb) = (json(&a.join("result.json")), json(&b.join("result.json")));
    assert_eq!(
        m["docs_ok"].as_u64().unwrap(),
        ra["docs_ok"].as_u64().unwrap() + rb["docs_ok"].as_u64().unwrap()
    );
    assert_eq!(m["worker_quotas"], serde_json::json!([4, 4]));
    assert!(m.get("shard").is_none(), "{m}");
    assert_eq!(
        manifest_lines(&out),
        manifest_lines(&a) + manifest_lines(&b)
    );
    assert!(out.join("plan.json").is_file() && out.join("summary.json").is_file());
}

fn resume_finishes_an_interrupted_old_run(set: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(set, "run-interrupted", tmp.path());
    let old = json(&dir.join("result.json"));
    let planned = old["plan"]["docs"].as_u64().unwrap() * old["plan"]["runs"].as_u64().unwrap();
    let target = TargetProcess::start(tmp.path(), &[]);
    let url = format!("http://127.0.0.1:{}", target.port);
    let o = bin()
        .args(["run", "--quiet", "--warmup", "0", "--url", &url, "--resume"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The directory now has the one layout: its plan, a record per run, the reports.
    assert!(dir.join("plan.json").is_file() && dir.join("summary.json").is_file());
    let runs = std::fs::read_dir(dir.join("runs")).unwrap().count();
    assert_eq!(runs, 2);
    let r = json(&dir.join("result.json"));
    assert!(r.get("in_progress").is_none(), "{r}");
    assert_eq!(r["runs"].as_array().unwrap().len(), 2);
    // Every planned document has one successful manifest line, old and new together.
    let text = std::fs::read_to_string(dir.join("manifest.jsonl")).unwrap();
    let ok: std::collections::HashSet<(u64, u64)> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["ok"] == true && v.get("warmup").is_none_or(|w| w != true))
        .map(|v| (v["run"].as_u64().unwrap(), v["index"].as_u64().unwrap()))
        .collect();
    assert_eq!(ok.len() as u64, planned);
}

fn resume_of_a_finished_old_run_has_nothing_to_do(set: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(set, "run", tmp.path());
    let before = manifest_lines(&dir);
    let o = bin()
        .args([
            "run",
            "--quiet",
            "--warmup",
            "0",
            "--url",
            "http://127.0.0.1:9",
        ])
        .arg("--resume")
        .arg(&dir)
        .output()
        .unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("nothing to finish"), "{said}");
    assert_eq!(manifest_lines(&dir), before);
}

fn report_renders_an_old_sweep_directory(set: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy(set, "sweep", tmp.path());
    let mut before = json(&dir.join("summary.json"));
    let o = bin().arg("report").arg(&dir).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut after = json(&dir.join("summary.json"));
    // What this version adds to a cell's summary (the sums over its runs) aside, the same
    // (a release that wrote one of them already must agree on it); the bottleneck's kind too,
    // but not its words: a run without resource readings is now "latency-bound or
    // serializing", which a sweep over threads tells apart.
    let old_cells = before["cells"].as_array().unwrap().clone();
    for (c, old) in after["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .zip(&old_cells)
    {
        for added in ["retries", "recovered", "versions_ok", "folders_created"] {
            if old.get(added).is_none() {
                c.as_object_mut().unwrap().remove(added);
            }
        }
    }
    for cells in [&mut after["cells"], &mut before["cells"]] {
        for c in cells.as_array_mut().unwrap() {
            c["bottleneck"].as_object_mut().unwrap().remove("text");
        }
        without_what_ifs(cells);
    }
    assert_eq!(after["cells"], before["cells"]);
}
