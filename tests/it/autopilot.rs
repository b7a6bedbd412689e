//! `run --sample-time auto`: a pilot whose first run stops when its estimate of the whole
//! corpus's import is sharp (or at `--max-sample-time`, at `--max-sample-share` of the
//! corpus, or when the files run out), whose
//! later runs import its files, and whose records say why it stopped. Against an embedded target
//! of known, flat capacity (2 slots × 12 ms: about 165 documents a second) and a corpus of
//! 3,000 small files, so every run is a few seconds.

use std::path::{Path, PathBuf};

use clap::Parser;
use ingestbench::cli::{Cli, Command};
use ingestbench::results::SampleStopReason;

use crate::common;

/// 3,000 small files (1-8 KiB) in 12 folders under `root`.
fn small_files(root: &Path) {
    let mut rng = ingestbench::fixtures::Rng::new(7);
    for i in 0..3000u64 {
        let dir = root.join(format!("f{:02}", i % 12));
        std::fs::create_dir_all(&dir).unwrap();
        let size = 1024 + rng.below(7 * 1024) as usize;
        let body: Vec<u8> = (0..size)
            .map(|k| b'a' + ((k + i as usize) % 23) as u8)
            .collect();
        std::fs::write(dir.join(format!("doc-{i}.txt")), body).unwrap();
    }
}

/// A flat target, its temporary directory (with `password` and the corpus under `files/`)
/// and its URL.
async fn flat_target() -> (
    ingestbench::emulator::EmulatorHandle,
    tempfile::TempDir,
    String,
) {
    let (target, dir) = common::target_with(common::capacity(2, 12)).await;
    common::password_file(dir.path(), "admin");
    small_files(&dir.path().join("files"));
    let url = target.http_url().unwrap();
    (target, dir, url)
}

/// The flags of an auto pilot of `dir/files` at 4 threads, no warm-up, into `dir/results`.
fn pilot_flags(url: &str, dir: &Path, extra: &[&str]) -> Vec<String> {
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    let mut v: Vec<String> = [
        "run",
        "--warmup",
        "0",
        "--url",
        url,
        "--threads",
        "4",
        "--profile",
        "basic",
        "--sample-time",
        "auto",
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    v.extend([
        "--corpus".into(),
        s(dir.join("files")),
        "--password-file".into(),
        s(dir.join("password")),
        "--results-dir".into(),
        s(dir.join("results")),
    ]);
    v.extend(extra.iter().map(|x| x.to_string()));
    v
}

/// The real binary run with `flags` (exit 0 asserted): its stderr and the run's directory
/// under `dir/results`.
async fn pilot_binary(flags: Vec<String>, dir: &Path) -> (String, PathBuf) {
    let o = tokio::task::spawn_blocking(move || crate::cli::bin().args(&flags).output().unwrap())
        .await
        .unwrap();
    let (_, err) = crate::cli::text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let run_dir = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (err, run_dir)
}

fn run_args(flags: &[String]) -> ingestbench::plan::options::RunArgs {
    let v = [&["ingestbench".to_string()][..], flags].concat();
    let Command::Run(a) = Cli::try_parse_from(v).unwrap().command else {
        unreachable!()
    };
    a
}

/// (a) A flat target reaches a loose aim (±40 %) within seconds: the first run stops there,
/// long before its cap, because it is sharp, and says so in its record; the second run
/// imports the same files, as many as the first, however long they take. Then `--resume` of
/// the pilot with its second run's record gone runs it again to the first run's documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auto_pilot_stops_when_its_estimate_is_sharp_and_its_second_run_imports_its_files() {
    let _one = common::TIMED.lock().await;
    let (_target, dir, url) = flat_target().await;
    let flags = pilot_flags(
        &url,
        dir.path(),
        &[
            "--quiet",
            "--max-sample-time",
            "60s",
            "--target-precision",
            "40",
            "--max-sample-share",
            "100",
            "--runs",
            "2",
        ],
    );
    let t0 = std::time::Instant::now();
    let (outcome, r) = ingestbench::run_command(&run_args(&flags)).await.unwrap();
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(outcome, ingestbench::Outcome::Success, "{:?}", r.errors);
    let auto = r.plan.measure.auto_sample.expect("the plan records auto");
    assert_eq!(
        (auto.target_pct, auto.max_s, auto.max_share_pct),
        (40.0, 60.0, Some(100.0))
    );
    let (first, second) = (&r.runs[0], &r.runs[1]);
    let stop = first.sample_stop.as_ref().expect("run 1 records its stop");
    eprintln!(
        "auto pilot: {:.2} s, {} documents ({} after the window), {} checks, estimate {:?} s -{:.1} %/+{:.1} %; run 2 {:.2} s, {} documents; {wall:.1} s in all",
        first.duration_s,
        first.docs_ok,
        first.docs_after_window,
        stop.checks,
        stop.estimate_s,
        stop.rel_lo.unwrap_or(f64::NAN) * 100.0,
        stop.rel_hi.unwrap_or(f64::NAN) * 100.0,
        second.duration_s,
        second.docs_ok,
    );
    assert_eq!(stop.reason, SampleStopReason::Sharp, "{stop:?}");
    assert!(first.duration_s < 30.0, "stopped long before the cap");
    assert!(first.docs_ok < 3000, "before the files ran out");
    assert!(stop.rel_lo.unwrap() <= 0.40 && stop.rel_hi.unwrap() <= 0.40);
    assert!((first.window_s.unwrap() - first.duration_s).abs() < 1e-5);
    assert!(second.sample_stop.is_none(), "{second:?}");
    same_documents(first, second);
    let run_dir = dir.path().join("results").join(format!("run-{}", r.id));
    let (plan, runs) = ingestbench::results::load_dir(&run_dir).unwrap();
    assert_eq!(plan.measure.auto_sample, Some(auto));
    assert!(
        runs.iter()
            .any(|x| x.record.sample_stop.as_ref() == Some(stop))
    );
    // Each run sent each file at most once, and the second the files the first sent.
    let entries =
        ingestbench::results::manifest::Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    let sources = |run: u32| -> std::collections::HashSet<String> {
        let mine: Vec<_> = entries
            .iter()
            .filter(|e| e.run == run && !e.warmup)
            .collect();
        let set: std::collections::HashSet<_> =
            mine.iter().map(|e| e.source.clone().unwrap()).collect();
        assert_eq!(set.len(), mine.len(), "run {run} sent a file twice");
        set
    };
    let (one, two) = (sources(1), sources(2));
    let shared = one.intersection(&two).count() as u64;
    assert!(
        shared >= first.docs_ok.min(second.docs_ok),
        "run 2 sent other files than run 1: {shared} shared of {} and {}",
        one.len(),
        two.len()
    );

    // --resume with run 2's record lost: run 2 again, to run 1's documents.
    let r2 = std::fs::read_dir(run_dir.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("_r2.json"))
        .unwrap();
    std::fs::remove_file(r2).unwrap();
    let mut resume = pilot_flags(&url, dir.path(), &["--quiet"]);
    resume.extend(["--resume".into(), run_dir.to_str().unwrap().into()]);
    let (outcome, again) = ingestbench::run_command(&run_args(&resume)).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success, "{:?}", again.errors);
    let redone = again.runs.iter().find(|x| x.run == 2).unwrap();
    assert!(redone.sample_stop.is_none());
    same_documents(first, redone);
}

/// A later run of an auto pilot imported the first run's documents and stopped there:
/// read every 50 ms or sooner as it nears them at about 165 documents a second (8 a read);
/// a loaded host's late timer is given 60 more.
fn same_documents(
    first: &ingestbench::results::RunRecord,
    later: &ingestbench::results::RunRecord,
) {
    assert!(
        (first.docs_ok..=first.docs_ok + 60).contains(&later.docs_ok),
        "run {} imports run 1's {} documents: {} in {:.2} s (run 1: {:.2} s)",
        later.run,
        first.docs_ok,
        later.docs_ok,
        later.duration_s,
        first.duration_s
    );
}

/// (b) An aim no pilot reaches (±0.5 %) stops at the cap (4 s), records `cap`, and says on
/// stderr what stayed unresolved: the interval reached against the target and what would
/// narrow it (the real binary, not quiet).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auto_pilot_that_cannot_get_sharp_stops_at_its_cap_and_says_what_is_open() {
    let _one = common::TIMED.lock().await;
    let (_target, dir, url) = flat_target().await;
    let flags = pilot_flags(
        &url,
        dir.path(),
        &[
            "--max-sample-time",
            "4s",
            "--target-precision",
            "0.5",
            "--max-sample-share",
            "100",
            "--runs",
            "1",
        ],
    );
    let t0 = std::time::Instant::now();
    let (err, run_dir) = pilot_binary(flags, dir.path()).await;
    let (_, runs) = ingestbench::results::load_dir(&run_dir).unwrap();
    let first = &runs[0].record;
    let stop = first.sample_stop.as_ref().expect("the stop is recorded");
    eprintln!(
        "capped pilot: {:.2} s, {} documents, {} checks, estimate {:?} s -{:.1} %/+{:.1} %; {:.1} s in all\n{err}",
        first.duration_s,
        first.docs_ok,
        stop.checks,
        stop.estimate_s,
        stop.rel_lo.unwrap_or(f64::NAN) * 100.0,
        stop.rel_hi.unwrap_or(f64::NAN) * 100.0,
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(stop.reason, SampleStopReason::Cap, "{stop:?}");
    assert!((first.duration_s - 4.0).abs() < 1e-6, "{first:?}");
    assert!(stop.checks >= 1 && stop.estimate_s.is_some(), "{stop:?}");
    assert!(
        err.contains("pilot not sharp: --max-sample-time (4 s) reached")
            && err.contains("target ±0.5 % not reached"),
        "{err}"
    );
    let needed = stop.needed.as_deref().expect("what would narrow it");
    assert!(err.contains(needed), "{err}");
}

/// (c) A pilot whose runs together would import more than `--max-sample-share` of the corpus
/// (10 % of 3,000 files over 2 runs: 150 documents for the first) stops there unsharp,
/// records `share`, says so and what it leaves open, and its second run imports as many.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auto_pilot_stops_at_its_share_of_the_corpus_and_says_so() {
    let _one = common::TIMED.lock().await;
    let (_target, dir, url) = flat_target().await;
    let flags = pilot_flags(
        &url,
        dir.path(),
        &[
            "--max-sample-time",
            "60s",
            "--target-precision",
            "0.5",
            "--max-sample-share",
            "10",
            "--runs",
            "2",
        ],
    );
    let (err, run_dir) = pilot_binary(flags, dir.path()).await;
    let (plan, runs) = ingestbench::results::load_dir(&run_dir).unwrap();
    assert_eq!(
        plan.measure.auto_sample.and_then(|a| a.max_share_pct),
        Some(10.0)
    );
    let (first, second) = (&runs[0].record, &runs[1].record);
    let stop = first.sample_stop.as_ref().expect("the stop is recorded");
    eprintln!(
        "pilot at its share: {:.2} s, {} documents ({} after the window); run 2 {:.2} s, {} documents\n{err}",
        first.duration_s, first.docs_ok, first.docs_after_window, second.duration_s, second.docs_ok
    );
    assert_eq!(stop.reason, SampleStopReason::Share, "{stop:?}");
    // Read every 50 ms or sooner as it nears 150 at about 165 documents a second (8 a
    // read); a loaded host's late timer is given 60 more.
    assert!(
        (150..=210).contains(&first.docs_ok),
        "stopped at its share: {first:?}"
    );
    assert!(first.duration_s < 5.0, "long before the cap: {first:?}");
    same_documents(first, second);
    assert!(
        err.contains(
            "pilot not sharp: --max-sample-share (10 % of the corpus, its runs together) reached"
        ) && err.contains("raise --max-sample-share"),
        "{err}"
    );
}
