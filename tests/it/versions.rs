//! A corpus imported as a migration imports it: a generated bulk-import source (folders,
//! shadow files with typed and multi-valued properties, documents with 0 to 5 version files,
//! some with their own metadata) is uploaded into the embedded Alfresco and Liferay with its
//! versions as versions, its metadata typed and its folder tree recreated, and verified
//! version by version: a tampered version or property makes verify fail naming it; failures
//! and a SIGKILL between versions are completed, never duplicated. The generator is shared
//! with `versions_cmis` (real OpenCMIS) and `estimate` (a versioned import's estimate).
//!
//! The generated corpus and the end-to-end scenarios that share it.

use std::path::Path;

use clap::Parser;
use ingestbench::cli::{Cli, Command};

use crate::common;

/// What the generator made: documents, and version files (of content) in all.
pub(crate) struct Generated {
    pub documents: u64,
    pub versions: u64,
}

const FOLDERS: [&str; 4] = ["", "a", "a/b", "c/d/e"];

/// The shadow metadata of document `i` (version `v`, 0 = the head): typed and multi-valued
/// properties of the acme model, a title that differs per version.
fn shadow(i: usize, v: usize) -> String {
    let title = if v == 0 {
        format!("Document {i}")
    } else {
        format!("Document {i}, version {v}")
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE properties SYSTEM "http://java.sun.com/dtd/properties.dtd">
<properties>
  <entry key="type">acme:document</entry>
  <entry key="cm:title">{title}</entry>
  <entry key="acme:documentId">src-{i}</entry>
  <entry key="acme:caseNumber">{}</entry>
  <entry key="acme:amount">{}.25</entry>
  <entry key="acme:documentDate">2021-0{}-1{}</entry>
  <entry key="acme:receivedAt">2021-03-0{}T10:15:30.000Z</entry>
  <entry key="acme:confidential">{}</entry>
  <entry key="acme:keywords">alpha,beta{i},gamma</entry>
</properties>"#,
        100 + i,
        i * 3,
        1 + i % 9,
        v % 10,
        1 + v % 9,
        i.is_multiple_of(2)
    )
}

/// Writes `n` documents under `root` in four folders (the root, `a`, `a/b`, `c/d/e`):
/// document i has i % 6 versions; two in three a shadow file, and their versions 1 and 4
/// their own.
pub(crate) fn corpus(root: &Path, n: usize) -> Generated {
    corpus_with(root, n, 6)
}

/// [`corpus`] with `i % cycle` versions for document i (1: none).
pub(crate) fn corpus_with(root: &Path, n: usize, cycle: usize) -> Generated {
    let mut g = Generated {
        documents: 0,
        versions: 0,
    };
    for i in 0..n {
        let dir = root.join(FOLDERS[i % FOLDERS.len()]);
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("doc{i}.txt");
        let body = |v: usize| -> Vec<u8> {
            let len = 200 + (i * 131 + v * 977) % 5000;
            (0..len)
                .map(|k| b'a' + ((k * 7 + i * 3 + v * 11) % 26) as u8)
                .collect()
        };
        std::fs::write(dir.join(&name), body(0)).unwrap();
        if i % 3 != 1 {
            std::fs::write(
                dir.join(format!("{name}.metadata.properties.xml")),
                shadow(i, 0),
            )
            .unwrap();
        }
        for v in 1..=i % cycle {
            std::fs::write(dir.join(format!("{name}.v{v}")), body(v)).unwrap();
            if i % 3 != 1 && v % 3 == 1 {
                std::fs::write(
                    dir.join(format!("{name}.metadata.properties.xml.v{v}")),
                    shadow(i, v),
                )
                .unwrap();
            }
            g.versions += 1;
        }
        g.documents += 1;
    }
    g
}

fn cli(args: &[&str]) -> Command {
    Cli::try_parse_from(args).unwrap().command
}

#[test]
fn corpus_counts_versions_orphans_and_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("src");
    let g = corpus(&root, 12);
    std::fs::write(root.join("a/lost.pdf.v1"), "no head").unwrap();
    std::fs::write(root.join("gappy.txt"), "head").unwrap();
    std::fs::write(root.join("gappy.txt.v1"), "one").unwrap();
    std::fs::write(root.join("gappy.txt.v3"), "three").unwrap();
    let d = ingestbench::corpus::describe(&root).unwrap();
    assert_eq!(d.documents, g.documents + 1, "versions are not documents");
    assert_eq!(d.shadow.version_content_files, g.versions + 2);
    assert_eq!(d.shadow.max_versions, 5);
    assert_eq!(d.shadow.versions_histogram.get("5"), Some(&2));
    assert_eq!(d.orphan_version_files.count, 1);
    assert!(d.orphan_version_files.samples[0].contains("lost.pdf.v1"));
    assert_eq!(d.version_gaps.count, 1);
    assert!(d.version_gaps.samples[0].contains("gappy.txt: versions 1, 3"));
    assert_eq!(d.directories, 5, "a, a/b, c, c/d, c/d/e");
}

/// Versions as versions on the embedded Alfresco: every document's `.vN` files go up in
/// order before its head (`PUT nodes/{id}/content`, each with its own metadata), the results
/// count documents and versions apart, verify reads every version back; a version tampered
/// in the store makes verify fail naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_import_into_alfresco_and_verify_names_a_tampered_one() {
    // One end-to-end scenario, read top to bottom.
    let (target, dir) = common::target().await;
    let pw = common::password_file(dir.path(), "admin");
    let root = dir.path().join("corpus");
    let g = corpus(&root, 24);
    let results = dir.path().join("results");
    let url = target.http_url().unwrap();
    let Command::Run(ra) = cli(&[
        "ingestbench",
        "run",
        "--warmup",
        "0",
        "--quiet",
        "--url",
        &url,
        "--corpus",
        root.to_str().unwrap(),
        "--sample",
        "24",
        "--threads",
        "3",
        "--runs",
        "1",
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
    assert_eq!((r.docs_ok, r.versions_ok), (g.documents, g.versions));
    let v = r.verify.as_ref().unwrap();
    assert!(v.clean(), "{v:?}");
    assert_eq!((v.ok, v.versions_ok), (g.documents, g.versions), "{v:?}");
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let entries =
        ingestbench::results::manifest::Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    let five = entries
        .iter()
        .find(|e| e.versions.len() == 5)
        .expect("a document with 5 versions");
    assert_eq!(
        five.versions
            .iter()
            .map(|v| v.label.as_str())
            .collect::<Vec<_>>(),
        ["1", "2", "3", "4", "5"]
    );
    let id = five.id.clone().unwrap();
    let history = target
        .store()
        .versions(&id, "cm:versionLabel")
        .unwrap()
        .unwrap();
    let labels: Vec<&str> = history.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, ["1.0", "2.0", "3.0", "4.0", "5.0", "6.0"]);
    // Each version kept the metadata it was uploaded with: v1 and v4 their own titles.
    assert!(
        history[0].properties.contains(", version 1\""),
        "{history:?}"
    );
    assert!(
        history[3].properties.contains(", version 4\""),
        "{history:?}"
    );
    assert!(
        !history[5].properties.contains(", version"),
        "the head's own"
    );
    // A version altered in the store: verify fails (exit 1) and names it.
    assert!(
        target
            .store()
            .overwrite_version(&id, "3.0", "cm:versionLabel", b"tampered")
            .unwrap()
    );
    let Command::Verify(va) = cli(&[
        "ingestbench",
        "verify",
        "--quiet",
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
        run_dir.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let outcome = ingestbench::cmd::verify::verify_command(&va).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Failures);
    let v: ingestbench::verify::VerifyReport =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(v.version_mismatch, 1, "{v:?}");
    let p = v.problems.iter().find(|p| p.kind == "version").unwrap();
    assert_eq!(p.name, five.name);
    assert!(
        p.detail
            .contains("version 3 of 6 (source v3, repository version 3.0)"),
        "{}",
        p.detail
    );
}

/// Where the shadow properties go on Liferay: custom fields and the document type's fields,
/// typed, through the profile (`shadow = "<Alfresco property>"`).
const LIFERAY_PROFILE: &str = r#"
name = "liferay-migration"
protocol = "liferay"
node_type = "IngestBench Document"

[[property]]
name = "description"
type = "d:text"
gen = "words"
shadow = "cm:title"

[[property]]
name = "keywords"
type = "d:text"
multiple = true
values = ["none"]
shadow = "acme:keywords"

[[property]]
name = "customField:documentId"
type = "d:text"
gen = "marker"
shadow = "acme:documentId"

[[property]]
name = "customField:caseNumber"
type = "d:int"
shadow = "acme:caseNumber"

[[property]]
name = "customField:amount"
type = "d:double"
shadow = "acme:amount"

[[property]]
name = "customField:confidential"
type = "d:boolean"
shadow = "acme:confidential"

[[property]]
name = "customField:receivedAt"
type = "d:datetime"
shadow = "acme:receivedAt"

[[property]]
name = "contentField:documentDate"
type = "d:date"
shadow = "acme:documentDate"
"#;

/// The same corpus into the embedded Liferay: versions as file versions (`PUT
/// /documents/{id}`), shadow metadata as typed custom fields and document-type fields,
/// read back version by version; a tampered property makes verify name it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_and_shadow_metadata_import_into_liferay() {
    // One end-to-end scenario, read top to bottom.
    let (target, dir) = common::target().await;
    let pw = common::password_file(dir.path(), "admin");
    let root = dir.path().join("corpus");
    let g = corpus(&root, 18);
    let profile = dir.path().join("liferay-migration.toml");
    std::fs::write(&profile, LIFERAY_PROFILE).unwrap();
    let results = dir.path().join("results");
    let url = target.http_url().unwrap();
    let Command::Run(ra) = cli(&[
        "ingestbench",
        "run",
        "--warmup",
        "0",
        "--quiet",
        "--protocol",
        "liferay",
        "--url",
        &url,
        "--profile",
        profile.to_str().unwrap(),
        "--corpus",
        root.to_str().unwrap(),
        "--sample",
        "18",
        "--threads",
        "3",
        "--runs",
        "1",
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
    assert_eq!((r.docs_ok, r.versions_ok), (g.documents, g.versions));
    let v = r.verify.as_ref().unwrap();
    assert!(v.clean(), "{v:?}");
    assert_eq!((v.ok, v.versions_ok), (g.documents, g.versions), "{v:?}");
    assert!(
        r.folders_created >= 5,
        "the tree (a, a/b, c, c/d, c/d/e): {}",
        r.folders_created
    );
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let entries =
        ingestbench::results::manifest::Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    // Original names in the corpus's own folders.
    let e = entries.iter().find(|e| e.name == "doc6.txt").unwrap();
    assert!(e.folder.ends_with("/run-1/a/b"), "{}", e.folder);
    // The typed values reached the document: int, boolean, multi-valued keywords.
    let store = target.store();
    let node = store
        .get_by_num(e.id.as_deref().unwrap().parse().unwrap())
        .unwrap()
        .unwrap();
    assert!(node.properties.contains("\"beta6\""), "{}", node.properties);
    assert!(node.properties.contains("106"), "{}", node.properties);
    // A property changed behind the import's back: verify names it, typed.
    let tampered = node.properties.replace("106", "107");
    store
        .update_properties(&node.id, &tampered, &node.aspects, "version")
        .unwrap();
    let Command::Verify(va) = cli(&[
        "ingestbench",
        "verify",
        "--quiet",
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
        run_dir.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let outcome = ingestbench::cmd::verify::verify_command(&va).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Failures);
    let v: ingestbench::verify::VerifyReport =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(v.metadata_mismatch, 1, "{v:?}");
    let p = v.problems.iter().find(|p| p.kind == "metadata").unwrap();
    assert_eq!(p.name, "doc6.txt");
    assert!(
        p.detail
            .starts_with("customField:caseNumber (int): sent [\"106\"]"),
        "{}",
        p.detail
    );
}

/// A property the repository refuses is a counted error naming it, not a silent loss: an
/// Alfresco shadow file with a property its model does not know, among good ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_shadow_property_is_a_counted_error_naming_it() {
    let (target, dir) = common::target().await;
    let pw = common::password_file(dir.path(), "admin");
    let root = dir.path().join("corpus");
    let g = corpus_with(&root, 12, 1);
    std::fs::write(
        root.join("a/doc1.txt.metadata.properties.xml"),
        r#"<properties><entry key="cm:title">fine</entry><entry key="acme:bogus">1</entry></properties>"#,
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
        "12",
        "--threads",
        "1",
        "--runs",
        "1",
        "--password-file",
        pw.to_str().unwrap(),
        "--results-dir",
        results.to_str().unwrap(),
    ]) else {
        unreachable!()
    };
    let (outcome, r) = ingestbench::run_command(&ra).await.unwrap();
    assert_eq!(
        outcome,
        ingestbench::Outcome::Failures,
        "exit 1, not an abort"
    );
    assert_eq!(
        (r.docs_ok, r.docs_failed),
        (g.documents - 1, 1),
        "{:?}",
        r.errors
    );
    assert!(
        r.errors[0].sample.contains("Unknown property: acme:bogus"),
        "{:?}",
        r.errors
    );
}

/// Failures between versions: a create or a new version that the target stores and then
/// answers 500 (ambiguous). The retry finds the document, reads how many versions it has and
/// uploads only the rest, in order: every document ends with every version once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_between_versions_is_completed_not_duplicated() {
    let (target, dir) = common::target_with(|c| c.faults.commit_500 = 0.2).await;
    let pw = common::password_file(dir.path(), "admin");
    let root = dir.path().join("corpus");
    let g = corpus(&root, 24);
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
        "24",
        "--threads",
        "2",
        "--runs",
        "1",
        "--retries",
        "5",
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
    assert!(
        r.recovered > 0,
        "some uploads were adopted: {}",
        r.recovered
    );
    let v = r.verify.as_ref().unwrap();
    assert!(v.clean(), "{v:?}");
    assert_eq!((v.ok, v.versions_ok), (g.documents, g.versions), "{v:?}");
}

/// `--flatten` keeps the older layout: numbered folders and generated names, the versions
/// still going up as versions; without it the names and folders are the corpus's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flatten_keeps_numbered_folders_and_generated_names() {
    let (target, dir) = common::target().await;
    let pw = common::password_file(dir.path(), "admin");
    let root = dir.path().join("corpus");
    let g = corpus(&root, 8);
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
        "8",
        "--threads",
        "2",
        "--runs",
        "1",
        "--flatten",
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
    assert_eq!((r.versions_ok, r.folders_created), (g.versions, 1));
    assert!(!r.plan.corpus_tree);
    let entries =
        ingestbench::results::manifest::Manifest::read(&only_dir(&results).join("manifest.jsonl"))
            .unwrap();
    assert!(
        entries
            .iter()
            .all(|e| e.folder.ends_with("/run-1/0000") && e.name.starts_with("doc-0000000")),
        "{:?}",
        entries
            .iter()
            .map(|e| (&e.folder, &e.name))
            .collect::<Vec<_>>()
    );
}

/// The calls versions add, against the official Alfresco definitions: the spec declares
/// `majorVersion` and `comment` on a content update and the version history; the embedded
/// target answers them in the documented shapes, newest version first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_calls_are_the_documented_ones() {
    use serde_json::{Value, json};
    let core = common::spec("alfresco/alfresco-core.yaml");
    let update = &core["paths"]["/nodes/{nodeId}/content"]["put"];
    let params: Vec<&str> = update["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(params.contains(&"majorVersion") && params.contains(&"comment"));
    assert!(core["paths"]["/nodes/{nodeId}/versions"]["get"].is_object());
    let (target, _dir) = common::target().await;
    let api = format!(
        "{}{}",
        target.http_url().unwrap(),
        ingestbench::protocol::alfresco::CORE_PATH
    );
    let c = ingestbench::reqwest_builder().build().unwrap();
    let form = reqwest::multipart::Form::new().part(
        "filedata",
        reqwest::multipart::Part::bytes(b"one".to_vec())
            .file_name("v.txt")
            .mime_str("text/plain")
            .unwrap(),
    );
    let created: Value = c
        .post(format!("{api}/nodes/-my-/children"))
        .basic_auth("admin", Some("admin"))
        .multipart(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["entry"]["id"].as_str().unwrap();
    let put = c
        .put(format!(
            "{api}/nodes/{id}/content?majorVersion=true&comment=second"
        ))
        .basic_auth("admin", Some("admin"))
        .body("two!")
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let v: Value = put.json().await.unwrap();
    common::assert_valid(&core, &core["definitions"]["NodeEntry"], &v);
    assert_eq!(v["entry"]["properties"]["cm:versionLabel"], json!("2.0"));
    let list: Value = c
        .get(format!("{api}/nodes/{id}/versions?include=properties"))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    common::assert_valid(&core, &core["definitions"]["VersionPaging"], &list);
    let labels: Vec<&str> = list["list"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["2.0", "1.0"], "newest first");
    assert_eq!(
        list["list"]["entries"][0]["entry"]["versionComment"],
        json!("second")
    );
    let first = c
        .get(format!("{api}/nodes/{id}/versions/1.0/content"))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&first[..], b"one");
    let one: Value = c
        .get(format!("{api}/nodes/{id}/versions/2.0"))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    common::assert_valid(&core, &core["definitions"]["VersionEntry"], &one);
    // What the target does not emulate it refuses, never ignores.
    let rename = c
        .put(format!("{api}/nodes/{id}/content?name=w.txt"))
        .basic_auth("admin", Some("admin"))
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(rename.status(), 400);
}

/// A hard stop (SIGKILL) in the middle of a versioned import against a durable target:
/// documents stopped between their versions have no manifest line; `--resume` finds them by
/// name, uploads the versions they lack in order, and `--verify` finds every document with
/// every version once.
#[test]
fn sigkill_mid_versioned_import_then_resume_completes_every_version() {
    use crate::cli::{TargetProcess, bin, wait_for_manifest_lines};
    use std::process::Stdio;
    // Two processes loading both cores: the timing tests wait.
    let _one = common::TIMED.blocking_lock();
    let dir = tempfile::tempdir().unwrap();
    let target = TargetProcess::start(
        dir.path(),
        &["--service-time-ms", "3", "--max-concurrent", "2"],
    );
    let url = format!("http://127.0.0.1:{}", target.port);
    let root = dir.path().join("corpus");
    let g = corpus(&root, 300);
    let results = dir.path().join("results");
    let run = |extra: &[&str]| {
        let mut c = bin();
        c.env("INGESTBENCH_PASSWORD", "admin")
            .args(["run", "--warmup", "0", "--quiet", "--url", &url])
            .args(extra)
            .arg("--results-dir")
            .arg(&results)
            .stdout(Stdio::null());
        c
    };
    let mut child = run(&[
        "--corpus",
        root.to_str().unwrap(),
        "--sample",
        "300",
        "--threads",
        "4",
        "--runs",
        "1",
    ])
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let run_dir = wait_for_manifest_lines(&results, 40, &mut child);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let o = run(&["--resume", run_dir.to_str().unwrap(), "--verify"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: ingestbench::verify::VerifyReport =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert!(v.clean(), "{v:?}");
    assert_eq!((v.ok, v.versions_ok), (g.documents, g.versions), "{v:?}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    eprintln!("resume adopted {} documents", r["recovered"]);
    drop(target);
}

/// The one directory below `d` (a results directory holds one run or sweep).
pub(crate) fn only_dir(d: &Path) -> std::path::PathBuf {
    std::fs::read_dir(d)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}
