//! In-process end-to-end tests: the real `run` against the embedded target on port 0, then
//! what the target stored is compared with what the report and the manifest claim.

use crate::common;

use std::collections::HashSet;

use clap::Parser;
use ingestbench::cli::{Cli, Command};
use ingestbench::plan::options::RunArgs;
use ingestbench::results::manifest::{Manifest, ManifestEntry};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn run_args(args: &[&str]) -> RunArgs {
    let mut v = vec!["ingestbench", "run", "--quiet", "--warmup", "0"];
    v.extend_from_slice(args);
    match Cli::try_parse_from(v).unwrap().command {
        Command::Run(a) => a,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_target_stored_is_what_the_report_claims() {
    let (target, dir) = common::target().await;
    let url = target.http_url().unwrap();
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let args = run_args(&[
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "60",
        "--threads",
        "6",
        "--runs",
        "2",
        "--docs-per-folder",
        "25",
        "--results-dir",
        results.to_str().unwrap(),
        "--size",
        "small",
        "--small-size",
        "4KiB",
    ]);
    let (outcome, result) = ingestbench::run_command(&args).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    assert_eq!(result.worker_quotas, vec![10; 6]);
    assert_eq!(result.docs_ok, 120);
    assert_eq!(result.runs.len(), 2);
    assert!(
        result
            .runs
            .iter()
            .all(|r| r.docs_ok == 60 && r.duration_s > 0.0)
    );
    assert_eq!(target.count_documents().await.unwrap(), 120);
    assert_eq!(result.node_split.get("node1"), Some(&120));
    // Small documents to a target on this host: the workers were dealt to half of the upload
    // runtimes (one per CPU), leaving the target the rest; the run says how many.
    if std::env::var_os(ingestbench::host::RUNTIMES_VAR).is_none() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        for r in &result.runs {
            assert_eq!(r.upload_runtimes, Some((cpus / 2).max(1)), "run {}", r.run);
        }
    }

    // The documents by size: a run's 60 of 4 KiB in one bucket, with their latencies.
    for r in &result.runs {
        assert_eq!(r.latency_by_size.len(), 1, "{:?}", r.latency_by_size);
        let b = r.latency_by_size[0];
        assert_eq!((b.lo_bytes, b.docs, b.bytes), (4096, 60, r.bytes_ok));
        let mean = b.latency_sum_ms / 60.0;
        assert!(
            mean >= r.latency_ms.min - 0.01 && mean <= r.latency_ms.max + 0.01,
            "{mean} against {:?}",
            r.latency_ms
        );
    }

    // The JSON result follows its schema.
    let schema = common::result_schema();
    common::assert_valid(&schema, &schema, &serde_json::to_value(&result).unwrap());

    // Every manifest line is a stored document with the same name, size, bytes and metadata.
    let run_dir = results.join(format!("run-{}", result.id));
    let entries: Vec<ManifestEntry> = Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    assert_eq!(entries.len(), 120);
    let mut ids = HashSet::new();
    let mut folders = HashSet::new();
    for e in &entries {
        assert!(e.ok);
        let id = e.id.clone().unwrap();
        assert!(ids.insert(id.clone()), "duplicate id");
        folders.insert(e.folder.clone());
        let node = target.store().get(&id).unwrap().expect("stored");
        assert_eq!(node.name, e.name);
        assert_eq!(node.size, e.size);
        assert_eq!(node.node_type, "acme:document");
        let bytes = target.store().read_content(&id).unwrap();
        let sha: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(sha, e.sha256);
        let props: Value = serde_json::from_str(&node.properties).unwrap();
        assert_eq!(props["acme:documentId"], Value::String(e.marker.clone()));
        assert!(props["acme:caseNumber"].is_i64());
    }
    // 60 documents per run at 25 per folder: three folders per run.
    assert_eq!(folders.len(), 6, "{folders:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_threads_than_documents_reports_idle_workers() {
    let (target, dir) = common::target().await;
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let args = run_args(&[
        "--url",
        &target.http_url().unwrap(),
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "3",
        "--threads",
        "5",
        "--runs",
        "1",
        "--results-dir",
        results.to_str().unwrap(),
        "--profile",
        "basic",
        "--auth",
        "basic",
    ]);
    let (_, result) = ingestbench::run_command(&args).await.unwrap();
    assert_eq!(result.worker_quotas, vec![1, 1, 1, 0, 0]);
    assert_eq!(result.idle_workers, 2);
    assert_eq!(result.docs_ok, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_ticket_is_renewed_once_and_the_upload_replayed() {
    let (target, dir) = common::target().await;
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    // Expire every ticket once, when the run is under way (30 documents stored). One expiry,
    // not a timer: expiring again between a worker's re-login and its replay would refuse
    // the new ticket too, which no real server does and which made this test flaky.
    let store = target.store().clone();
    let expire = target.ticket_expirer();
    let killer = tokio::spawn(async move {
        for _ in 0..5000 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            let s = store.clone();
            let n = tokio::task::spawn_blocking(move || s.count_documents().unwrap_or(0))
                .await
                .unwrap();
            if n >= 30 {
                expire();
                return;
            }
        }
        panic!("the run never stored 30 documents");
    });
    let args = run_args(&[
        "--url",
        &target.http_url().unwrap(),
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "300",
        "--threads",
        "4",
        "--runs",
        "1",
        "--results-dir",
        results.to_str().unwrap(),
        "--small-size",
        "2KiB",
    ]);
    let (outcome, result) = ingestbench::run_command(&args).await.unwrap();
    killer.await.unwrap();
    assert_eq!(
        outcome,
        ingestbench::Outcome::Success,
        "{:?}",
        result.errors
    );
    assert_eq!(result.docs_ok, 300);
    assert!(
        target.logins() > 1,
        "the client logged in again after expiry"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_capacity_bounds_throughput() {
    // 2 slots x 20 ms = 100 docs/s at most; 8 workers queue. A coarse check only: the
    // accuracy claim is made by scripts/accuracy.sh on a release build.
    let (target, dir) = common::target_with(|c| {
        c.perf.max_concurrent = 2;
        c.perf.service_time = std::time::Duration::from_millis(20);
    })
    .await;
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let args = run_args(&[
        "--url",
        &target.http_url().unwrap(),
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "40",
        "--threads",
        "8",
        "--runs",
        "1",
        "--results-dir",
        results.to_str().unwrap(),
        "--small-size",
        "2KiB",
        "--auth",
        "basic",
    ]);
    let (_, result) = ingestbench::run_command(&args).await.unwrap();
    assert!(result.docs_per_sec <= 105.0, "{}", result.docs_per_sec);
    assert!(result.latency_ms.p50 >= 20.0, "{:?}", result.latency_ms);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_the_generated_ca_and_a_restart_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut cfg = ingestbench::emulator::EmulatorConfig::local(store.clone());
    cfg.https_listen = Some("127.0.0.1:0".parse().unwrap());
    let target = ingestbench::emulator::start(cfg).await.unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, target.ca_pem.as_ref().unwrap()).unwrap();
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let url = target.https_url().unwrap();
    let base = [
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "20",
        "--threads",
        "2",
        "--runs",
        "1",
        "--results-dir",
        results.to_str().unwrap(),
    ];
    let mut a = vec!["--url", url.as_str(), "--ca-cert", ca.to_str().unwrap()];
    a.extend_from_slice(&base);
    let (outcome, result) = ingestbench::run_command(&run_args(&a)).await.unwrap();
    assert_eq!(
        (outcome, result.docs_ok),
        (ingestbench::Outcome::Success, 20)
    );

    // Without the CA the TLS handshake fails: a setup error naming the URL.
    let mut a = vec!["--url", url.as_str()];
    a.extend_from_slice(&base);
    let err = format!(
        "{:#}",
        ingestbench::run_command(&run_args(&a)).await.unwrap_err()
    );
    assert!(
        err.contains(&url) && err.to_lowercase().contains("certificate"),
        "{err}"
    );

    // Stop the node, start another on the same store: everything is still there.
    target.stop();
    let again = ingestbench::emulator::start(ingestbench::emulator::EmulatorConfig::local(store))
        .await
        .unwrap();
    assert_eq!(again.count_documents().await.unwrap(), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_what_went_missing_corrupt_or_extra() {
    // One end-to-end scenario, read top to bottom.
    let (target, dir) = common::target().await;
    let url = target.http_url().unwrap();
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let args = run_args(&[
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "60",
        "--threads",
        "3",
        "--runs",
        "1",
        "--docs-per-folder",
        "25",
        "--results-dir",
        results.to_str().unwrap(),
        "--verify",
    ]);
    let (outcome, result) = ingestbench::run_command(&args).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    assert!(result.verify.as_ref().unwrap().clean());
    let run_dir = results.join(format!("run-{}", result.id));
    let entries = Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    let store = target.store();
    // One document deleted, one corrupted (folder 0000); one stray document in folder 0001.
    let in_folder = |suffix: &str| {
        entries
            .iter()
            .filter(|e| e.folder.ends_with(suffix))
            .collect::<Vec<_>>()
    };
    let (a, b) = (in_folder("/0000")[0], in_folder("/0000")[1]);
    store.delete_tree(a.id.as_ref().unwrap()).unwrap();
    store
        .overwrite_content(b.id.as_ref().unwrap(), b"tampered")
        .unwrap();
    let home = store.user_home("admin").unwrap();
    let folder = store
        .resolve_path(&home, &in_folder("/0001")[0].folder)
        .unwrap()
        .unwrap();
    store
        .create(ingestbench::emulator::store::NewNode {
            parent_id: folder.id,
            relative_path: None,
            name: "stray.txt".into(),
            node_type: "cm:content".into(),
            is_folder: false,
            creator: "admin".into(),
            mime: Some("text/plain".into()),
            properties: "{}".into(),
            aspects: "[]".into(),
            served_by: "x".into(),
            content: Some(bytes::Bytes::from_static(b"stray")),
            title: None,
            erc: None,
        })
        .unwrap();
    let cli = Cli::try_parse_from([
        "ingestbench",
        "verify",
        "--quiet",
        run_dir.to_str().unwrap(),
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
    ])
    .unwrap();
    let outcome = ingestbench::execute(cli).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Failures, "exit 1");
    let v: ingestbench::verify::VerifyReport =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("verify.json")).unwrap())
            .unwrap();
    assert_eq!(
        (v.checked, v.ok, v.missing, v.corrupt, v.duplicates),
        (60, 58, 1, 1, 1),
        "{v:?}"
    );
    assert!(
        v.problems
            .iter()
            .any(|p| p.kind == "missing" && p.name == a.name)
    );
    assert!(
        v.problems
            .iter()
            .any(|p| p.kind == "corrupt" && p.name == b.name)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_deletes_only_its_own_folder() {
    let (target, dir) = common::target().await;
    let url = target.http_url().unwrap();
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let args = run_args(&[
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "30",
        "--threads",
        "3",
        "--runs",
        "2",
        "--results-dir",
        results.to_str().unwrap(),
    ]);
    let (_, keep) = ingestbench::run_command(&args).await.unwrap();
    let (_, gone) = ingestbench::run_command(&args).await.unwrap();
    assert_eq!(target.count_documents().await.unwrap(), 120);
    let dir_of = |id: &str| results.join(format!("run-{id}"));
    // Not on a terminal and no --yes: refused, nothing deleted.
    let cli = Cli::try_parse_from([
        "ingestbench",
        "cleanup",
        dir_of(&gone.id).to_str().unwrap(),
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
    ])
    .unwrap();
    let err = format!("{:#}", ingestbench::execute(cli).await.unwrap_err());
    assert!(
        err.contains("--yes") && err.contains("60 documents"),
        "{err}"
    );
    assert_eq!(target.count_documents().await.unwrap(), 120);
    let cli = Cli::try_parse_from([
        "ingestbench",
        "cleanup",
        "--yes",
        dir_of(&gone.id).to_str().unwrap(),
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
    ])
    .unwrap();
    assert_eq!(
        ingestbench::execute(cli).await.unwrap(),
        ingestbench::Outcome::Success
    );
    assert_eq!(
        target.count_documents().await.unwrap(),
        60,
        "only the second run's documents went"
    );
    assert_eq!(
        target
            .count_documents_under(
                ingestbench::protocol_kind::ProtocolKind::Alfresco,
                "admin",
                &format!("ingestbench/{}", keep.id)
            )
            .await
            .unwrap(),
        60
    );
}
