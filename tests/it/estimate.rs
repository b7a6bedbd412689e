//! Corpus description and the migration estimate: a generated listing is described in
//! constant memory; and the accuracy claim, against a target whose capacity is known: an
//! estimate made from a sample of 10 % of a corpus (a `sweep --corpus` of its three quantile
//! sizes) predicts the measured duration of uploading the whole corpus (its 1,500 real files)
//! within ±10 %, at two thread counts; and the import of a corpus with versions, which the
//! estimate adds to what a sample of its documents costs.
//!
//! The accuracy scenarios share one known-capacity target setup.

use std::path::Path;

use clap::Parser;
use ingestbench::cli::{Cli, Command};

use crate::common;
use crate::versions::{corpus, only_dir};

/// A deterministic log-normal listing of `n` documents (median ~12 KiB, long tail).
pub(crate) fn listing(path: &Path, n: usize) {
    let mut rng = ingestbench::fixtures::Rng::new(42);
    let mut text = String::from("path,size,mime\n");
    for i in 0..n {
        // Box–Muller from two uniforms.
        let u1 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let z = (-2.0 * u1.max(1e-12).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let size = (9.4 + 1.3 * z).exp().clamp(200.0, 4e6) as u64;
        text.push_str(&format!(
            "/src/{:03}/doc-{i}.pdf,{size},application/pdf\n",
            i / 250
        ));
    }
    text.push_str("/src/bad,notanumber,x\n\"unclosed,1,x\n");
    std::fs::write(path, text).unwrap();
}

fn cli(args: &[&str]) -> Command {
    Cli::try_parse_from(args).unwrap().command
}

#[test]
fn a_listing_is_described_with_its_problems_counted() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("listing.csv");
    listing(&csv, 2000);
    let d = ingestbench::corpus::describe(&csv).unwrap();
    assert_eq!(d.documents, 2000);
    assert_eq!(d.malformed_lines.count, 2, "{:?}", d.malformed_lines);
    assert!(d.malformed_lines.samples[0].contains("line 2002"));
    assert_eq!(d.folders, 8);
    assert!(d.sizes.p50 > 8_000 && d.sizes.p50 < 20_000, "{:?}", d.sizes);
    assert!(
        d.sizes.bytes_p50 > d.sizes.p90 / 2,
        "the bytes sit in the tail"
    );
    let total: u64 = d.size_histogram.iter().map(|b| b.files).sum();
    assert_eq!(total, 2000);
}

#[test]
fn a_directory_is_sniffed_and_shadow_metadata_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("src");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("a/report.txt"), "%PDF-1.4 really a pdf").unwrap();
    std::fs::write(root.join("a/notes"), "plain words\n").unwrap();
    std::fs::write(
        root.join("a/notes.metadata.properties.xml"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE properties SYSTEM "http://java.sun.com/dtd/properties.dtd">
<properties><entry key="type">cm:content</entry><entry key="cm:title">Notes</entry></properties>"#,
    )
    .unwrap();
    std::fs::write(root.join("a/notes.v1"), "older words\n").unwrap();
    std::fs::write(
        root.join("a/b/broken.metadata.properties.xml"),
        "<properties>",
    )
    .unwrap();
    std::os::unix::fs::symlink(root.join("a/notes"), root.join("a/link")).unwrap();
    let d = ingestbench::corpus::describe(&root).unwrap();
    assert_eq!(
        d.documents, 2,
        "shadow, version and link files are not documents"
    );
    assert_eq!(
        d.content_types.get("application/pdf"),
        Some(&1),
        "sniffed, not by extension"
    );
    assert_eq!(d.shadow.metadata_files, 1);
    assert_eq!(d.shadow.version_files, 1);
    assert_eq!(d.shadow.properties.get("cm:title"), Some(&1));
    assert_eq!(d.broken_shadow_files.count, 1);
    assert!(d.broken_shadow_files.samples[0].contains("broken.metadata.properties.xml"));
    assert_eq!(d.symlinks_skipped.count, 1);
    assert_eq!(d.max_depth, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_from_a_ten_percent_sample_predicts_the_whole_import() {
    sample_predicts_the_import(0.0).await;
}

/// A repository that slows as it fills (0.5 ms more per 1,000 requests served, about +60 %
/// over sample and import): the estimate finds the growth in the sample's runs, calls it
/// linear, and the import, on top of what the sample left, lies inside its interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_on_a_repository_that_slows_as_it_fills_models_the_growth() {
    sample_predicts_the_import(0.5).await;
}

/// The pilot estimate where its model is exact (2 slots x 12 ms + 40 ms/MiB): a pilot import
/// of a random 25 % of a 1,500-file corpus (its real files, 4 threads), then the whole import
/// on top of it: inside the stated interval, within ±10 %, and an interval under ±50 % (the
/// pilot's calibrated model error, 20 % one σ, is most of it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_from_a_pilot_import_predicts_the_whole_import() {
    let _one = common::TIMED.lock().await;
    let (_target, dir, url) = corpus_target(|c| {
        c.perf.per_mib = std::time::Duration::from_millis(40);
        c.share_prefixes = true;
    })
    .await;
    let (pw, root, results) = (
        dir.path().join("password"),
        dir.path().join("files"),
        dir.path().join("results"),
    );
    let import =
        |sample: &str, warmup: &str| corpus_run(&url, &root, &pw, &results, sample, warmup, 1);
    let (outcome, pilot) = ingestbench::run_command(&import("375", "100"))
        .await
        .unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let pilot_dir = results.join(format!("run-{}", pilot.id));
    let corpus = ingestbench::corpus::describe(&root).unwrap();
    let sweeps = vec![ingestbench::results::load_dir(&pilot_dir).unwrap()];
    let est = ingestbench::analysis::estimate::estimate_from(&corpus, &sweeps, None);
    let fit = est.pilot.as_ref().expect("the run is read as a pilot");
    assert_eq!(fit.docs, 375);
    assert_eq!(
        est.existing_docs, fit.fill_import_start as u64,
        "the import starts at what the pilot left"
    );
    assert!(fit.fill_import_start >= 475.0, "{fit:?}");
    let o = &est.options[0];
    // Beside the estimate, what it would take if the pilot's bottleneck were relieved: a
    // duration only where a resource saturated, else why not; in the findings and the JSON.
    let relieved = o
        .if_relieved
        .as_ref()
        .expect("the pilot read its resources");
    eprintln!("if relieved: {relieved:?}");
    assert_eq!(relieved.duration_s.is_some(), relieved.change.is_some());
    if let Some(t) = relieved.duration_s {
        assert!(t < o.duration_s, "{relieved:?}");
    } else {
        assert!(
            relieved.text.starts_with("no estimate if relieved"),
            "{relieved:?}"
        );
    }
    assert_eq!(est.findings.last(), Some(&relieved.text));
    assert!(
        serde_json::to_string(&est)
            .unwrap()
            .contains("\"if_relieved\":{")
    );
    // The import, with the estimate as its live ETA's prior (`--estimate`).
    let est_file = dir.path().join("estimate.json");
    std::fs::write(&est_file, serde_json::to_string(&est).unwrap()).unwrap();
    let mut whole = import("1500", "0");
    whole.estimate = Some(est_file);
    let (outcome, r) = ingestbench::run_command(&whole).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let (predicted, half, measured) = (o.duration_s, o.ci95_s, r.mean_duration_s);
    let (lo, hi) = o.bounds_s();
    eprintln!(
        "pilot: predicted {predicted:.2} s ± {half:.2}, measured {measured:.2} s, ratio {:.3}; {}",
        predicted / measured,
        fit.evidence
    );
    assert!(
        (0.9..=1.1).contains(&(predicted / measured)) && (lo..=hi).contains(&measured),
        "predicted {predicted:.2} s ± {half:.2} vs measured {measured:.2} s: {}",
        fit.evidence
    );
    // A pilot of a fifth of the import cannot rule out a growth over the import's fill: the
    // upper side holds it and is the wider (measured: 6.86-14.93 s on 9.91 s, the growth's
    // bound +38 %), the mean half-width stays under ±50 %.
    assert!(half <= 0.5 * predicted, "±{half:.2} s on {predicted:.2} s");
    assert!(
        hi - predicted >= predicted - lo && fit.one_sided.iter().any(|w| w.contains("growth")),
        "{lo:.2}-{hi:.2} s on {predicted:.2} s: {:?}",
        fit.one_sided
    );
    // A pilot too short to read gives no estimate: an error naming it and what would do,
    // exit 2, not a success with an empty table.
    let (_, short) = ingestbench::run_command(&import("20", "0")).await.unwrap();
    let short_dir = results.join(format!("run-{}", short.id));
    let err = ingestbench::execute(
        Cli::try_parse_from([
            "ingestbench",
            "estimate",
            "--corpus",
            root.to_str().unwrap(),
            short_dir.to_str().unwrap(),
        ])
        .unwrap(),
    )
    .await
    .expect_err("no estimate from 20 documents");
    let text = format!("{err:#}");
    assert!(
        text.contains(short_dir.to_str().unwrap()) && text.contains("import at least"),
        "{text}"
    );
}

/// An embedded target of 2 slots at 12 ms a request (then `f`), and beside it in its temporary
/// directory a `password` file and 1,500 real files of the listing's sizes under `files/`:
/// the target, the directory and the target's URL.
async fn corpus_target(
    f: impl FnOnce(&mut ingestbench::emulator::EmulatorConfig),
) -> (
    ingestbench::emulator::EmulatorHandle,
    tempfile::TempDir,
    String,
) {
    let (target, dir) = common::target_with(|c| {
        c.perf.max_concurrent = 2;
        c.perf.service_time = std::time::Duration::from_millis(12);
        f(c);
    })
    .await;
    common::password_file(dir.path(), "admin");
    let csv = dir.path().join("listing.csv");
    listing(&csv, 1500);
    files_of(&csv, &dir.path().join("files"), 1500);
    let url = target.http_url().unwrap();
    (target, dir, url)
}

/// A server whose every request costs 50 % more from the 480th on (`--step-after`: a cache
/// that stops holding the working set), after the 100 warm-up documents and half of a
/// one-run pilot: the estimate
/// tells the step from a line, costs the import at the pace after it, and the import (all of
/// it past the step) lies inside, within 10 %.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_the_pilot_crossed_is_carried_at_its_pace_after() {
    let _one = common::TIMED.lock().await;
    let (est, r) = pilot_then_import(
        |c| {
            c.perf.step_after = 480;
            c.perf.step_extra = std::time::Duration::from_millis(6);
        },
        "750",
        1,
    )
    .await;
    let fit = est.pilot.as_ref().expect("the run is read as a pilot");
    assert_eq!(fit.growth_model, "step", "{}", fit.evidence);
    let o = &est.options[0];
    let (predicted, measured) = (o.duration_s, r.mean_duration_s);
    let (lo, hi) = o.bounds_s();
    eprintln!(
        "step: predicted {predicted:.2} s ({lo:.2}-{hi:.2}), measured {measured:.2} s, ratio {:.3}; {}",
        predicted / measured,
        fit.evidence
    );
    assert!(
        (0.9..=1.1).contains(&(predicted / measured)) && (lo..=hi).contains(&measured),
        "predicted {predicted:.2} s ({lo:.2}-{hi:.2}) vs measured {measured:.2} s: {}",
        fit.evidence
    );
}

/// A pilot of `sample` files (`runs` runs, 100 warm-up documents) on the corpus target that
/// `setup` shapes, its estimate, then the whole import (1,500 files) on top of it.
async fn pilot_then_import(
    setup: impl FnOnce(&mut ingestbench::emulator::EmulatorConfig),
    sample: &str,
    runs: u64,
) -> (
    ingestbench::analysis::estimate::Estimate,
    ingestbench::report::result_json::RunResult,
) {
    let (_target, dir, url) = corpus_target(setup).await;
    let (pw, root, results) = (
        dir.path().join("password"),
        dir.path().join("files"),
        dir.path().join("results"),
    );
    let (outcome, pilot) =
        ingestbench::run_command(&corpus_run(&url, &root, &pw, &results, sample, "100", runs))
            .await
            .unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let corpus = ingestbench::corpus::describe(&root).unwrap();
    let sweeps =
        vec![ingestbench::results::load_dir(&results.join(format!("run-{}", pilot.id))).unwrap()];
    let est = ingestbench::analysis::estimate::estimate_from(&corpus, &sweeps, None);
    let (_, r) = ingestbench::run_command(&corpus_run(&url, &root, &pw, &results, "1500", "0", 1))
        .await
        .unwrap();
    (est, r)
}

/// `run --corpus ROOT --sample N` at 4 threads, `runs` times, into `results`.
fn corpus_run(
    url: &str,
    root: &std::path::Path,
    pw: &std::path::Path,
    results: &std::path::Path,
    sample: &str,
    warmup: &str,
    runs: u64,
) -> ingestbench::plan::options::RunArgs {
    let runs = runs.to_string();
    let args = [
        "ingestbench",
        "run",
        "--warmup",
        warmup,
        "--quiet",
        "--url",
        url,
        "--corpus",
        root.to_str().unwrap(),
        "--sample",
        sample,
        "--threads",
        "4",
        "--runs",
        &runs,
        "--profile",
        "basic",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ];
    let Command::Run(ra) = cli(&args) else {
        unreachable!()
    };
    ra
}

/// A pilot run twice on a repository that slows as it fills (12 ms per request, +6 ms per
/// 1,000 requests served, 2 slots): the rise through the runs and from the first to the
/// second confirm the growth, which is carried over the import's fill. One run's mean would
/// say about two thirds of the import.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn growth_a_two_run_pilot_confirms_is_carried_over_the_import() {
    let _one = common::TIMED.lock().await;
    let (est, r) = pilot_then_import(
        |c| c.perf.growth_per_1000 = std::time::Duration::from_millis(6),
        "375",
        2,
    )
    .await;
    let fit = est.pilot.as_ref().expect("the run is read as a pilot");
    assert_eq!(fit.growth_model, "carried", "{}", fit.evidence);
    assert!(fit.run_drift.unwrap() > 0.05, "{:?}", fit.run_drift);
    let o = &est.options[0];
    let (predicted, half, measured) = (o.duration_s, o.ci95_s, r.mean_duration_s);
    let (lo, hi) = o.bounds_s();
    eprintln!(
        "two-run pilot: predicted {predicted:.2} s ± {half:.2}, measured {measured:.2} s, ratio {:.3}, drift {:?}; {}",
        predicted / measured,
        fit.run_drift,
        fit.evidence
    );
    assert!(
        (0.9..=1.1).contains(&(predicted / measured)) && (lo..=hi).contains(&measured),
        "predicted {predicted:.2} s ± {half:.2} vs measured {measured:.2} s: {}",
        fit.evidence
    );
}

/// `run --corpus DIR --sample-time T`: a pilot measured by time. Each run imports the files in
/// one random order until its time is up, never a file twice and never going round again
/// (no `pass-N/` tree); a sample that runs out first ends the run there. The estimate reads
/// it as a pilot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pilot_by_time_sends_each_file_once_until_its_time_or_its_files_run_out() {
    let _one = common::TIMED.lock().await;
    let (_target, dir, url) = corpus_target(|_| {}).await;
    let (pw, root) = (dir.path().join("password"), dir.path().join("files"));
    let timed = |results: &Path, sample: Option<&str>, time: &str| {
        let mut ra = corpus_run(&url, &root, &pw, results, "1", "0", 2);
        ra.sample = sample.map(|s| s.parse().unwrap());
        ra.sample_time = Some(time.into());
        ra
    };
    // 2 slots at 12 ms: about 165 documents a second, so 1.5 s sends about 250 of 1,500.
    let results = dir.path().join("timed");
    let (outcome, r) = ingestbench::run_command(&timed(&results, None, "1.5s"))
        .await
        .unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success, "{:?}", r.errors);
    assert!(r.plan.measure.once && r.plan.docs == 1500, "{:?}", r.plan);
    let schema = common::result_schema();
    common::assert_valid(&schema, &schema, &serde_json::to_value(&r).unwrap());
    let run_dir = results.join(format!("run-{}", r.id));
    let entries =
        ingestbench::results::manifest::Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    for run in [1, 2] {
        let mine: Vec<_> = entries.iter().filter(|e| e.run == run).collect();
        let sources: std::collections::HashSet<_> =
            mine.iter().map(|e| e.source.clone().unwrap()).collect();
        assert_eq!(sources.len(), mine.len(), "run {run} sent a file twice");
        assert!(
            (100..1500).contains(&mine.len()),
            "run {run}: {} documents in 1.5 s",
            mine.len()
        );
        assert!(mine.iter().all(|e| !e.folder.contains("/pass-")));
    }
    for x in &r.runs {
        assert!((x.duration_s - 1.5).abs() < 1e-6, "{x:?}");
    }
    let corpus = ingestbench::corpus::describe(&root).unwrap();
    let est = ingestbench::analysis::estimate::estimate_from(
        &corpus,
        &[ingestbench::results::load_dir(&run_dir).unwrap()],
        None,
    );
    assert!(est.pilot.is_some(), "read as a pilot: {:?}", est.findings);
    // A sample of 40 runs out long before 30 s: the run ends when its last file is back.
    let results = dir.path().join("short");
    let (_, r) = ingestbench::run_command(&timed(&results, Some("40"), "30s"))
        .await
        .unwrap();
    for x in &r.runs {
        assert_eq!((x.docs_ok, x.docs_failed), (40, 0), "{x:?}");
        assert!(x.duration_s < 5.0, "{x:?}");
    }
}

async fn sample_predicts_the_import(growth_ms_per_1000: f64) {
    let _one = common::TIMED.lock().await;
    // One end-to-end scenario, read top to bottom.
    let (target, dir) = common::target_with(|c| {
        c.perf.growth_per_1000 = std::time::Duration::from_secs_f64(growth_ms_per_1000 / 1000.0);
        // Two slots of 12 ms: at both thread counts the repository, not the client, sets the
        // pace, and the emulator's own work (a few ms under load) stays inside the model, so
        // the load of other tests on the 2 cores does not move the result.
        c.perf.max_concurrent = 2;
        c.perf.service_time = std::time::Duration::from_millis(12);
        c.perf.per_mib = std::time::Duration::from_millis(40);
        // A temporary store (no fsync, shared prefixes) keeps its work small under load.
        c.share_prefixes = true;
    })
    .await;
    let pw = common::password_file(dir.path(), "admin");
    // A corpus of 1,500 real files with log-normal sizes (the listing's).
    let csv = dir.path().join("listing.csv");
    listing(&csv, 1500);
    let root = dir.path().join("files");
    files_of(&csv, &root, 1500);
    // The sample: 150 documents per run (10 % of 1500), three sizes, two thread counts.
    let (corpus_json, sweep_dir) =
        sample_sweep(dir.path(), &target.http_url().unwrap(), &root, &pw, "4,8").await;
    let results = dir.path().join("results");
    let corpus = ingestbench::corpus::CorpusDescription::load(&corpus_json).unwrap();
    let sweeps = vec![ingestbench::results::load_dir(&sweep_dir).unwrap()];
    // The import goes on top of what the sample stored.
    let existing: u64 = sweeps[0]
        .1
        .iter()
        .map(|r| r.record.docs_ok + r.record.warmup_docs)
        .sum();
    let est = ingestbench::analysis::estimate::estimate(&corpus, &sweeps, existing);
    let g = est
        .growth
        .as_ref()
        .expect("growth fitted from 2 cells x 3 runs");
    eprintln!("growth: {} ({})", g.model, g.evidence);
    if growth_ms_per_1000 > 0.0 {
        assert_eq!(g.model, "linear", "{}", g.evidence);
        // The known growth: every request costs growth_ms_per_1000 more per 1,000 served, in
        // one of 2 slots, so a document's wall-clock cost grows by half of that per document
        // stored (one request each; the few folder requests aside).
        let known = growth_ms_per_1000 / 1000.0 / 1000.0 / 2.0;
        let ratio = g.s_per_doc_per_doc / known;
        eprintln!("growth recovered: {ratio:.3} of the known slope");
        assert!(
            (0.75..=1.33).contains(&ratio),
            "fitted {:.3e} s per document per document, known {known:.3e}: {}",
            g.s_per_doc_per_doc,
            g.evidence
        );
    } else {
        // No growth configured: flat, or a growth too small to matter (the emulator's own
        // store does grow a little; 72 windows can see +0.1 % per 1,000 documents).
        assert!(
            g.model == "flat" || g.per_1000_docs.abs() < 0.01,
            "{}",
            g.evidence
        );
    }
    // The command writes estimate.json and adds the estimate to the sweep's reports.
    let Command::Estimate(ea) = cli(&[
        "ingestbench",
        "estimate",
        "--corpus",
        corpus_json.to_str().unwrap(),
        sweep_dir.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    ingestbench::cmd::estimate::estimate_command(&ea).unwrap();
    assert!(sweep_dir.join("estimate.json").is_file());
    let md = std::fs::read_to_string(sweep_dir.join("report.md")).unwrap();
    assert!(
        md.contains("## Import estimate") && md.contains("- fastest: direct"),
        "{md}"
    );
    let html = std::fs::read_to_string(sweep_dir.join("report.html")).unwrap();
    assert!(html.contains(r#"class="chart estimate""#) && html.contains("<polygon class=\"band\""));
    // The growth evidence: the runs of the option whose growth is best determined, placed
    // by the documents stored, the fit through them.
    let growth = html
        .split(r#"class="chart growth""#)
        .nth(1)
        .and_then(|g| g.split("</svg>").next())
        .expect("no growth chart");
    assert_eq!(
        growth.matches(r#"<circle class="point""#).count(),
        9,
        "the option whose growth is best determined: 3 sizes x 3 runs"
    );
    assert!(growth.contains(r#"class="fit extrapolated""#));
    // The whole import: every file of the corpus, once, at each thread count (each on top
    // of the last: the second import's fill is the first's plus its documents).
    let mut on_top = 0;
    for threads in [4u64, 8] {
        let est = ingestbench::analysis::estimate::estimate(&corpus, &sweeps, existing + on_top);
        on_top += 1500;
        let o = est.options.iter().find(|o| o.threads == threads).unwrap();
        let (predicted, half) = (o.duration_s, o.ci95_s);
        let (lo, hi) = o.bounds_s();
        let Command::Run(ra) = cli(&[
            "ingestbench",
            "run",
            "--warmup",
            "0",
            "--quiet",
            "--url",
            &target.http_url().unwrap(),
            "--corpus",
            root.to_str().unwrap(),
            "--sample",
            "1500",
            "--threads",
            &threads.to_string(),
            "--runs",
            "1",
            "--profile",
            "basic",
            "--password-file",
            pw.to_str().unwrap(),
            "--results-dir",
            results.to_str().unwrap(),
        ]) else {
            unreachable!()
        };
        let (outcome, r) = ingestbench::run_command(&ra).await.unwrap();
        assert_eq!(outcome, ingestbench::Outcome::Success);
        let measured = r.mean_duration_s;
        let ratio = predicted / measured;
        eprintln!(
            "threads {threads}: predicted {predicted:.2} s ± {half:.2}, measured {measured:.2} s, ratio {ratio:.3}"
        );
        // The promise itself: the import inside the stated 95 % interval. On this target
        // (whose model is exact) the interval is conservative: 10 of 10 inside in every
        // calibration case (README), and here errors of 0.02-0.07 s under half-widths of
        // 0.48-1.03 s, so the bare interval fails a build far less often than 1 in 20 even
        // though this test makes four (how often it covers is measured over many trials by
        // scripts/estimate-accuracy.sh).
        assert!(
            (0.9..=1.1).contains(&ratio) && (lo..=hi).contains(&measured),
            "threads {threads}: predicted {predicted:.2} s ± {half:.2} vs measured {measured:.2} s"
        );
    }
}

#[test]
fn bad_corpus_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = format!(
        "{:#}",
        ingestbench::corpus::describe(&dir.path().join("nope")).unwrap_err()
    );
    assert!(e.contains("nope") && e.contains("cannot read"), "{e}");
    let csv = dir.path().join("l.csv");
    std::fs::write(&csv, "path,bytes_total\n/a,1\n").unwrap();
    let e = format!("{:#}", ingestbench::corpus::describe(&csv).unwrap_err());
    assert!(e.contains("l.csv") && e.contains("size column"), "{e}");
    std::fs::write(&csv, "").unwrap();
    let e = format!("{:#}", ingestbench::corpus::describe(&csv).unwrap_err());
    assert!(e.contains("empty"), "{e}");
    let e = format!(
        "{:#}",
        ingestbench::corpus::CorpusDescription::load(&csv).unwrap_err()
    );
    assert!(
        e.contains("--corpus") && e.contains("ingestbench corpus"),
        "{e}"
    );
}

/// A repository that slows as it grows: the drift within runs is found significant and shown
/// in the result (the estimate flags the same statistic for sweep cells).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_within_runs_is_detected_and_flagged() {
    // Timed: the other tests' load on the 2 cores must not hide the drift in noise.
    let _one = common::TIMED.lock().await;
    let (target, dir) = common::target_with(|c| {
        c.perf.max_concurrent = 1;
        // Large modelled times, so the emulator's own work under a loaded CI machine stays
        // small beside them.
        c.perf.service_time = std::time::Duration::from_millis(3);
        c.perf.growth_per_1000 = std::time::Duration::from_millis(30);
    })
    .await;
    let pw = common::password_file(dir.path(), "admin");
    let Command::Run(ra) = cli(&[
        "ingestbench",
        "run",
        "--warmup",
        "0",
        "--quiet",
        "--url",
        &target.http_url().unwrap(),
        "--docs",
        "100",
        "--threads",
        "2",
        "--runs",
        "6",
        "--profile",
        "basic",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        dir.path().join("results").to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let (_, r) = ingestbench::run_command(&ra).await.unwrap();
    assert!(r.runs.iter().all(|x| x.progress_s.len() == 10));
    let d = r.drift.clone().expect("6 runs give a drift test");
    eprintln!("drift: {d:?}");
    assert!(d.significant && d.end_vs_start < 0.9, "{d:?}");
    assert!(ingestbench::report::summary_text(&r).contains("throughput fell"));
}

/// `run --corpus DIR --sample N`: a stratified sample of real files is uploaded with its real
/// bytes (streamed), its sniffed type and its bulk-import shadow metadata; verify reads every
/// one back by id and finds the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_of_real_files_is_uploaded_and_verified() {
    // One end-to-end scenario, read top to bottom.
    let (target, dir) = common::target().await;
    let pw = common::password_file(dir.path(), "admin");
    let root = dir.path().join("corpus");
    let mut rng = ingestbench::fixtures::Rng::new(3);
    for i in 0..60u64 {
        let sub = root.join(format!("d{}", i % 4));
        std::fs::create_dir_all(&sub).unwrap();
        let size = 10 + rng.below(1 << (6 + i % 12)) as usize;
        let body: Vec<u8> = (0..size)
            .map(|k| b'a' + ((k * 7 + i as usize) % 26) as u8)
            .collect();
        let name = format!("file-{i}.txt");
        std::fs::write(sub.join(&name), &body).unwrap();
        if i % 6 == 0 {
            std::fs::write(
                sub.join(format!("{name}.metadata.properties.xml")),
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE properties SYSTEM "http://java.sun.com/dtd/properties.dtd">
<properties><entry key="type">cm:content</entry><entry key="cm:title">Title {i}</entry></properties>"#
                ),
            )
            .unwrap();
        }
    }
    std::fs::write(
        root.join("d1/file-1.txt.metadata.properties.xml"),
        "<broken",
    )
    .unwrap();
    let results = dir.path().join("results");
    let Command::Run(ra) = cli(&[
        "ingestbench",
        "run",
        "--warmup",
        "0",
        "--quiet",
        "--url",
        &target.http_url().unwrap(),
        "--corpus",
        root.to_str().unwrap(),
        "--sample",
        "30",
        "--threads",
        "4",
        "--runs",
        "2",
        "--profile",
        "basic",
        "--verify",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let (outcome, r) = ingestbench::run_command(&ra).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success, "{:?}", r.errors);
    assert_eq!((r.docs_ok, r.plan.docs), (60, 30));
    let v = r.verify.as_ref().unwrap();
    assert_eq!((v.checked, v.ok), (60, 60), "{v:?}");
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let entries =
        ingestbench::results::manifest::Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    assert!(
        entries
            .iter()
            .all(|e| e.source.is_some() && e.mime == "text/plain")
    );
    // The shadow metadata reached the repository.
    let shadowed = entries
        .iter()
        .find(|e| {
            let s = e.source.as_deref().unwrap();
            std::path::Path::new(&format!("{s}.metadata.properties.xml")).is_file()
                && !s.ends_with("file-1.txt")
        })
        .expect("the sample holds a file with shadow metadata");
    let node = target
        .store()
        .get(shadowed.id.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert!(node.properties.contains("Title "), "{}", node.properties);
    // sweep --corpus DIR: each size class is the directory's real files around its size.
    let methods = crate::common::direct_method(dir.path(), &target.http_url().unwrap());
    let sweeps = dir.path().join("sweeps");
    let Command::Sweep(sa) = cli(&[
        "ingestbench",
        "sweep",
        "--warmup",
        "0",
        "--quiet",
        "--corpus",
        root.to_str().unwrap(),
        "--access-methods",
        "direct",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--threads",
        "2",
        "--docs",
        "8",
        "--runs",
        "2",
        "--profile",
        "basic",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        sweeps.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let (outcome, summary) = ingestbench::sweep_command(&sa).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    assert_eq!(summary.runs_done, summary.runs_planned);
    let sizes: Vec<u64> = summary.plan.sizes.iter().map(|s| s.1).collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    let sweep_dir = std::fs::read_dir(&sweeps)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let m =
        ingestbench::results::manifest::Manifest::read(&sweep_dir.join("manifest.jsonl")).unwrap();
    assert!(!m.is_empty() && m.iter().all(|e| e.ok && e.source.is_some()));
    // The same seed draws the same sample.
    let (a, _) = ingestbench::corpus::sample::sample(&root, 30, 1).unwrap();
    let (b, _) = ingestbench::corpus::sample::sample(&root, 30, 1).unwrap();
    let paths = |x: &[ingestbench::fixtures::SampledFile]| -> Vec<std::path::PathBuf> {
        x.iter().map(|f| f.path.clone()).collect()
    };
    assert_eq!(paths(&a), paths(&b));
}

/// The first `n` files of a listing made real under `root`, each of its size.
pub(crate) fn files_of(csv: &Path, root: &Path, n: usize) {
    for line in std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(1)
        .take(n)
    {
        let mut f = line.split(',');
        let (path, size) = (
            f.next().unwrap(),
            f.next().unwrap().parse::<usize>().unwrap(),
        );
        let p = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let body: Vec<u8> = (0..size).map(|k| b'a' + (k % 23) as u8).collect();
        std::fs::write(p, body).unwrap();
    }
}

/// The estimate counts what versions cost: a sample of the corpus's documents (a sweep
/// measures documents, its files' versions left out) predicts the import of the whole
/// versioned corpus, whose 600 versions cost 4 times its 240 documents' uploads, within the
/// stated interval; the same sample's estimate without the versions would be far short. Run
/// alone and timed with the estimate's other accuracy tests (`::an_estimate_`).
/// A trial whose import lies outside the interval gets one more (as the real-OpenCMIS gate
/// does): load from outside the suite that falls on the import alone (the versions' calls
/// take more client CPU per request than the sample's uploads) can push one trial out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_of_a_versioned_corpus_counts_its_versions() {
    let _one = common::TIMED.lock().await;
    let mut misses = Vec::new();
    for _ in 0..2 {
        match versioned_trial().await {
            Ok(()) => return,
            Err(m) => {
                eprintln!("a trial missed: {m}");
                misses.push(m);
            }
        }
    }
    panic!("both trials missed: {misses:?}");
}

/// One trial: a fresh target, the sample, the estimate, the import; Err when the import lies
/// outside the stated interval.
async fn versioned_trial() -> Result<(), String> {
    // One end-to-end scenario, read top to bottom.
    // Two slots of 10 ms: the repository sets the pace (as in estimate.rs's accuracy tests).
    let (target, dir) = common::target_with(|c| {
        c.perf.max_concurrent = 2;
        c.perf.service_time = std::time::Duration::from_millis(10);
        c.perf.per_mib = std::time::Duration::from_millis(40);
        c.share_prefixes = true;
    })
    .await;
    let pw = common::password_file(dir.path(), "admin");
    let root = dir.path().join("corpus");
    let g = corpus(&root, 240);
    let corpus = ingestbench::corpus::describe(&root).unwrap();
    assert_eq!(corpus.shadow.version_content_files, g.versions);
    let corpus_json = dir.path().join("corpus.json");
    std::fs::write(&corpus_json, serde_json::to_string(&corpus).unwrap()).unwrap();
    let methods = common::direct_method(dir.path(), &target.http_url().unwrap());
    let results = dir.path().join("results");
    let Command::Sweep(sa) = cli(&[
        "ingestbench",
        "sweep",
        "--warmup",
        "10",
        "--quiet",
        "--corpus",
        corpus_json.to_str().unwrap(),
        "--access-methods",
        "direct",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--threads",
        "4",
        "--docs",
        "40",
        "--runs",
        "3",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let (outcome, _) = ingestbench::sweep_command(&sa).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let sweeps = vec![ingestbench::results::load_dir(&only_dir(&results)).unwrap()];
    assert!(
        sweeps[0].1.iter().all(|r| r.record.versions_ok == 0),
        "a sweep measures documents, not their versions"
    );
    let est = ingestbench::analysis::estimate::estimate(&corpus, &sweeps, 0);
    // Per version one upload; a properties update where a version's metadata changes.
    assert_eq!(
        est.extra_requests,
        g.versions + corpus.shadow.version_property_updates
    );
    let mut flat = corpus.clone();
    flat.shadow.version_content_files = 0;
    flat.shadow.version_bytes = 0;
    flat.shadow.version_property_updates = 0;
    let without = ingestbench::analysis::estimate::estimate(&flat, &sweeps, 0);
    let imports = dir.path().join("imports");
    let Command::Run(ra) = cli(&[
        "ingestbench",
        "run",
        "--warmup",
        "10",
        "--quiet",
        "--url",
        &target.http_url().unwrap(),
        "--corpus",
        root.to_str().unwrap(),
        "--sample",
        "240",
        "--threads",
        "4",
        "--runs",
        "1",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        imports.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let (outcome, r) = ingestbench::run_command(&ra).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success, "{:?}", r.errors);
    assert_eq!((r.docs_ok, r.versions_ok), (g.documents, g.versions));
    let (o, w) = (&est.options[0], &without.options[0]);
    let measured = r.mean_duration_s;
    eprintln!(
        "versioned import: measured {measured:.2} s, estimated {:.2} ± {:.2} s ({:.4} s per request, {} extra requests); without the versions {:.2} s",
        o.duration_s, o.ci95_s, o.per_doc_s, est.extra_requests, w.duration_s
    );
    assert!(
        o.duration_s > 2.0 * w.duration_s,
        "the versions are counted: {} vs {}",
        o.duration_s,
        w.duration_s
    );
    if !(o.bounds_s().0..=o.bounds_s().1).contains(&measured) {
        return Err(format!(
            "measured {measured:.2} s outside {:.2} ± {:.2} s",
            o.duration_s, o.ci95_s
        ));
    }
    Ok(())
}

/// `estimate --window`: the cutover plan joins the estimate (JSON and the printed table),
/// and windows or office hours it cannot read exit 2 naming the flag.
#[test]
fn a_window_is_planned_against_the_estimate_and_bad_windows_name_their_flag() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("listing.csv");
    listing(&csv, 2000);
    let fixed = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixed-sweep");
    let out = dir.path().join("estimate.json");
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .args(["estimate", "--corpus"])
            .arg(&csv)
            .arg(&fixed)
            .arg("--output")
            .arg(&out)
            .args(extra)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let o = run(&["--json", "--window", "Sat 06:00..Mon 06:00"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let e: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &e["window"];
    assert_eq!(w["window_s"], 172_800.0);
    let rows = w["rows"].as_array().unwrap();
    assert!(rows.len() >= e["options"].as_array().unwrap().len(), "{w}");
    assert!(
        rows.iter().all(|r| r["p_finish"].as_f64().unwrap() > 0.99),
        "{w}"
    );
    assert!(
        w["answer"]
            .as_str()
            .unwrap()
            .starts_with("finishes inside Sat 06:00..Mon 06:00: use "),
        "{w}"
    );
    assert!(err.contains("  window: finishes inside"), "{err}");
    // Without --output the plan joins the results directory's reports: an answer, a table
    // and a chart whose SVG parses.
    let copy = dir.path().join("sweep");
    std::fs::create_dir_all(copy.join("runs")).unwrap();
    for f in ["plan.json"].into_iter().map(String::from).chain(
        std::fs::read_dir(fixed.join("runs"))
            .unwrap()
            .map(|e| format!("runs/{}", e.unwrap().file_name().to_string_lossy())),
    ) {
        std::fs::copy(fixed.join(&f), copy.join(&f)).unwrap();
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(["estimate", "--corpus"])
        .arg(&csv)
        .arg(&copy)
        .args(["--window", "30m"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(copy.join("report.md")).unwrap();
    assert!(
        md.contains("Does the import finish inside 30m") && md.contains("## Cutover plan: 30m"),
        "{md}"
    );
    let html = std::fs::read_to_string(copy.join("report.html")).unwrap();
    let at = html
        .find("<svg class=\"chart window\"")
        .expect("the window chart");
    let svg = &html[at..at + html[at..].find("</svg>").unwrap() + 6];
    roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    for (args, flag) in [
        (&["--window", "soon"][..], "--window \"soon\""),
        (&["--window", "Sat 06:00..Mon 6"][..], "--window"),
        (
            &[
                "--window",
                "48h",
                "--office-hours",
                "Sat 08:00-12:00",
                "--office-rate",
                "40",
            ][..],
            "--office-hours needs a --window with a start",
        ),
        (
            &[
                "--window",
                "Sat 06:00..Mon 06:00",
                "--office-hours",
                "Sat",
                "--office-rate",
                "40",
            ][..],
            "--office-hours \"Sat\"",
        ),
        (
            &[
                "--window",
                "Sat 06:00..Mon 06:00",
                "--office-hours",
                "Sat 08:00-12:00",
                "--office-rate",
                "0",
            ][..],
            "--office-rate \"0\"",
        ),
        (
            &["--window", "48h", "--office-hours", "Sat 08:00-12:00"][..],
            "--office-rate",
        ),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// The cutover plan verified end to end: a sample of a corpus (`sweep --corpus`) at 1 and 4
/// threads on a repository of 2 slots of 12 ms, a window between what the two would take,
/// the plan's recommended configuration (the fewest threads that finish surely: 4), then the
/// whole import at it. It finishes inside the window and inside the interval the plan stated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_with_a_window_plans_a_configuration_that_finishes_inside_it() {
    let _one = common::TIMED.lock().await;
    let (_target, dir, url) = corpus_target(|c| c.share_prefixes = true).await;
    let (pw, root, results) = (
        dir.path().join("password"),
        dir.path().join("files"),
        dir.path().join("results"),
    );
    let (corpus_json, sweep_dir) = sample_sweep(dir.path(), &url, &root, &pw, "1,4").await;
    let corpus = ingestbench::corpus::CorpusDescription::load(&corpus_json).unwrap();
    let sweeps = vec![ingestbench::results::load_dir(&sweep_dir).unwrap()];
    let est = ingestbench::analysis::estimate::estimate_from(&corpus, &sweeps, None);
    let at = |t: u64| {
        est.options
            .iter()
            .find(|o| o.threads == t)
            .unwrap()
            .bounds_s()
    };
    let (one, four) = (at(1), at(4));
    // A window the 1-thread import misses and the 4-thread one meets.
    let w_s = (one.0 * four.1).sqrt();
    assert!(
        four.1 < w_s && w_s < one.0,
        "1 thread {one:?}, 4 threads {four:?}"
    );
    let window = ingestbench::plan::window::parse_window(&format!("{w_s:.2}s")).unwrap();
    let plan = ingestbench::analysis::window::plan(&est, &window, None);
    eprintln!("plan: {}", plan.answer);
    assert!(
        plan.answer.contains("finishes inside") && plan.answer.contains("at 4 threads"),
        "{}",
        plan.answer
    );
    let row = plan
        .rows
        .iter()
        .find(|r| r.threads == 4 && r.what_if.is_none())
        .unwrap();
    // The recommended configuration, run: the whole import at 4 threads.
    let (outcome, r) =
        ingestbench::run_command(&corpus_run(&url, &root, &pw, &results, "1500", "0", 1))
            .await
            .unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let measured = r.mean_duration_s;
    eprintln!(
        "window {w_s:.2} s: planned {:.2} s ({:.2}-{:.2}), measured {measured:.2} s",
        row.duration_s, row.duration_lo_s, row.duration_hi_s
    );
    assert!(
        measured <= w_s && (row.duration_lo_s..=row.duration_hi_s).contains(&measured),
        "window {w_s:.2} s, planned {row:?}, measured {measured:.2} s"
    );
}

/// `corpus ROOT` into `dir/corpus.json`, then the size-class sample of it (`sweep --corpus`,
/// 150 documents per run, 3 runs, at `threads`) on `url` into `dir/results`: the corpus
/// description's path and the sweep's directory.
async fn sample_sweep(
    dir: &Path,
    url: &str,
    root: &Path,
    pw: &Path,
    threads: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let corpus_json = dir.join("corpus.json");
    let Command::Corpus(ca) = cli(&[
        "ingestbench",
        "corpus",
        root.to_str().unwrap(),
        "--output",
        corpus_json.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    ingestbench::cmd::corpus::corpus_command(&ca).unwrap();
    let methods = crate::common::direct_method(dir, url);
    let results = dir.join("results");
    let Command::Sweep(sa) = cli(&[
        "ingestbench",
        "sweep",
        "--warmup",
        "0",
        "--quiet",
        "--corpus",
        corpus_json.to_str().unwrap(),
        "--access-methods",
        "direct",
        "--access-methods-dir",
        methods.to_str().unwrap(),
        "--threads",
        threads,
        "--docs",
        "150",
        "--runs",
        "3",
        "--profile",
        "basic",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let (outcome, _) = ingestbench::sweep_command(&sa).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let sweep_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (corpus_json, sweep_dir)
}
