//! Real-binary tests: help, bad input, exit codes, and that secrets never reach any output.
//! One test per user-facing behaviour of the real binary, each short and independent.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.env_remove("INGESTBENCH_PASSWORD").stdin(Stdio::null());
    c
}

fn run(args: &[&str], dir: &Path) -> Output {
    let mut c = bin();
    c.args(["run", "--warmup", "0"])
        .args(args)
        .arg("--results-dir")
        .arg(dir.join("results"));
    c.output().unwrap()
}

pub(crate) fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn help_documents_exit_codes() {
    let o = bin().arg("run").arg("--help").output().unwrap();
    assert!(o.status.success());
    let (out, _) = text(&o);
    for s in [
        "Exit codes",
        "--threads <T>",
        "--docs <N>",
        "INGESTBENCH_PASSWORD",
        "--timeout <SECONDS>",
        "--sample-time <DURATION|auto>",
        "--max-sample-time <DURATION>",
        "--target-precision <PCT>",
        "--max-sample-share <PCT>",
    ] {
        assert!(out.contains(s), "help mentions {s}");
    }
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["--threads", "0"], "--threads"),
        (vec!["--docs", "0"], "--docs"),
        (vec!["--size", "huge"], "--size"),
        (vec!["--small-size", "10parsecs"], "--small-size"),
        (vec!["--url", "ftp://example"], "--url"),
        (vec!["--profile", "/no/such/profile.toml"], "--profile"),
        (vec!["--timeout", "0"], "--timeout"),
        (vec!["--duration", "soon"], "--duration"),
        (vec!["--duration", "0s"], "--duration"),
        (vec!["--precision", "120%"], "--precision"),
        (
            vec!["--corpus", ".", "--sample-time", "soon"],
            "--sample-time",
        ),
        (vec!["--sample-time", "1m"], "--corpus"),
        (
            vec![
                "--corpus",
                ".",
                "--sample-time",
                "auto",
                "--target-precision",
                "0",
            ],
            "--target-precision 0",
        ),
        (
            vec!["--corpus", ".", "--max-sample-time", "5m"],
            "--max-sample-time 5m",
        ),
        (
            vec!["--corpus", ".", "--max-sample-share", "10"],
            "--max-sample-share 10",
        ),
        (
            vec![
                "--corpus",
                ".",
                "--sample-time",
                "auto",
                "--max-sample-time",
                "soon",
            ],
            "--max-sample-time soon",
        ),
        (vec!["--server-metrics", "host:9100"], "--server-metrics"),
        (vec!["--server-pid", "4294967295"], "--server-pid"),
        (vec!["--jtl", "/no/such/dir/uploads.jtl"], "--jtl"),
        (
            vec!["--metrics-listen", "127.0.0.1:99999"],
            "--metrics-listen",
        ),
        (
            vec!["--metrics-listen", "127.0.0.1:0", "--metrics-hold=-1"],
            "--metrics-hold",
        ),
        (vec!["--json", "--json-lines"], "--json-lines"),
        (vec!["--shard", "4/4", "--plan-id", "p"], "--shard"),
    ] {
        let o = run(&args, dir.path());
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?} names {needle}: {err}");
    }
    // The upload runtimes' variable is checked before anything runs.
    for bad in ["many", "-1", "100000"] {
        let o = bin()
            .env("INGESTBENCH_WORKER_RUNTIMES", bad)
            .args(["run", "--docs", "1"])
            .output()
            .unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("INGESTBENCH_WORKER_RUNTIMES"), "{bad}: {err}");
    }
    // --warmup is given by the helper; here on its own.
    let o = bin()
        .args(["run", "--warmup", "a while", "--docs", "1"])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--warmup a while: give auto"), "{err}");
}

#[test]
fn unreachable_url_exits_2_naming_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let pw = common::password_file(dir.path(), "x");
    let o = run(
        &[
            "--url",
            "http://127.0.0.1:1",
            "--password-file",
            pw.to_str().unwrap(),
            "--docs",
            "5",
        ],
        dir.path(),
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot reach http://127.0.0.1:1/") && err.contains("--url"),
        "{err}"
    );
}

#[test]
fn no_password_and_no_terminal_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["--url", "http://127.0.0.1:1", "--docs", "5"], dir.path());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("INGESTBENCH_PASSWORD") && err.contains("--password-file"),
        "{err}"
    );
}

#[test]
fn wrong_password_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let target = TargetProcess::start(dir.path(), &[]);
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "wrong")
        .arg("run")
        .arg("--url")
        .arg(format!("http://127.0.0.1:{}", target.port))
        .args(["--docs", "5", "--results-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("login rejected for user `admin`"), "{err}");
}

#[test]
fn unknown_property_exits_2_with_the_servers_reason() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("bogus.toml");
    std::fs::write(&profile, "name = 'bogus'\nnode_type = 'cm:content'\n[[property]]\nname = 'acme:bogus'\ntype = 'd:text'\n").unwrap();
    let o = run(
        &[
            "--profile",
            profile.to_str().unwrap(),
            "--docs",
            "50",
            "--threads",
            "2",
        ],
        dir.path(),
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("Unknown property: acme:bogus") && err.contains("--profile"),
        "{err}"
    );
    // Partial results and the manifest are still written.
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .collect();
    assert_eq!(runs.len(), 1);
    let run_dir = runs[0].as_ref().unwrap().path();
    assert!(run_dir.join("result.json").exists() && run_dir.join("manifest.jsonl").exists());
}

#[test]
fn default_run_against_the_embedded_target_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &["--docs", "30", "--threads", "4", "--runs", "2", "--json"],
        dir.path(),
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is the JSON result");
    assert_eq!(v["docs_ok"], 60);
    assert_eq!(v["target"]["stored_docs"], 60);
    assert_eq!(v["worker_quotas"], serde_json::json!([8, 8, 7, 7]));
    // One upload runtime per CPU unless the variable says otherwise; recorded with the host.
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(v["host"]["upload_runtimes"], cpus, "{}", v["host"]);
    assert!(
        err.contains("docs/sec"),
        "summary on stderr with --json: {err}"
    );
}

/// A message that cannot be written (stderr on a full disk: /dev/full answers ENOSPC) is
/// dropped: the run finishes with its own exit code, not SIGABRT from a panicking `eprintln!`.
#[test]
fn stderr_on_a_full_disk_changes_no_exit_code() {
    let full = || {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args([
            "run",
            "--warmup",
            "0",
            "--docs",
            "30",
            "--threads",
            "2",
            "--runs",
            "1",
            "--json",
        ])
        .arg("--results-dir")
        .arg(dir.path())
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "the summary went to stderr: {o:?}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["docs_ok"], 30);
    let o = bin()
        .args(["report", "/no/such/results"])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "the error went to stderr: {o:?}");
}

/// Command output that cannot be written is an error, never a result cut short with exit 0:
/// stdout on a full disk exits 2 naming standard output; a reader that went away (a closed
/// pipe, as `| head` leaves) ends the output quietly, with the run's own exit code.
#[test]
fn stdout_on_a_full_disk_exits_2_and_a_closed_pipe_is_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let json_run = || {
        let mut c = bin();
        c.args([
            "run", "--warmup", "0", "--docs", "30", "--runs", "1", "--json",
        ])
        .arg("--results-dir")
        .arg(dir.path());
        c
    };
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = json_run().stdout(full).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
    let mut child = json_run()
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// Starts `ingestbench target` as a process and reads its port from --port-file.
pub(crate) struct TargetProcess {
    pub(crate) child: std::process::Child,
    pub(crate) port: u16,
}

impl TargetProcess {
    pub(crate) fn start(dir: &Path, extra: &[&str]) -> TargetProcess {
        let port_file = dir.join("port");
        let child = bin()
            .arg("target")
            .arg("--data-dir")
            .arg(dir.join("store"))
            .arg("--port-file")
            .arg(&port_file)
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Owned (and so killed and waited for on drop) before anything can fail.
        let mut t = TargetProcess { child, port: 0 };
        let deadline = Instant::now() + Duration::from_secs(20);
        while t.port == 0 {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                t.port = text
                    .lines()
                    .next()
                    .and_then(|l| l.parse().ok())
                    .unwrap_or(0);
            }
            assert!(Instant::now() < deadline, "target did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        t
    }
}

impl Drop for TargetProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn secrets_never_reach_output_logs_or_results() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-Pa55-9f1e";
    let mut target = TargetProcess::start(dir.path(), &["--user", &format!("bob:{secret}")]);
    let url = format!("http://127.0.0.1:{}", target.port);
    let mut outputs = Vec::new();
    for auth in ["ticket", "basic"] {
        let o = bin()
            .env("INGESTBENCH_PASSWORD", secret)
            .args([
                "run",
                "--warmup",
                "0",
                "--url",
                &url,
                "--user",
                "bob",
                "--auth",
                auth,
                "--docs",
                "20",
                "--threads",
                "2",
                "--runs",
                "1",
                "--json",
                "--profile",
                "basic",
            ])
            .arg("--results-dir")
            .arg(dir.path().join("results"))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        outputs.push(o.stdout);
        outputs.push(o.stderr);
    }
    // A wrong password's error message must not echo what was typed either.
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "typo-Secret-77")
        .args([
            "run", "--warmup", "0", "--url", &url, "--user", "bob", "--docs", "1",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("typo-Secret-77"));
    for out in &outputs {
        assert!(!String::from_utf8_lossy(out).contains(secret));
    }
    for entry in walk(&dir.path().join("results")) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} leaks the password",
            entry.display()
        );
    }
    target.child.kill().unwrap();
    let stderr = BufReader::new(target.child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!stderr.contains(secret), "target log leaks the password");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

#[test]
fn target_refuses_non_loopback_without_opt_in() {
    let o = bin()
        .args([
            "target",
            "--listen",
            "0.0.0.0:0",
            "--data-dir",
            "/tmp/never-created-ib",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--allow-remote"));
}

#[test]
#[ignore = "needs pdfinfo (Debian poppler-utils, installed by scripts/deps.sh); scripts/test.sh runs it"]
fn generated_pdfs_pass_pdfinfo() {
    assert!(
        Command::new("pdfinfo").arg("-v").output().is_ok(),
        "pdfinfo is missing: install poppler-utils (scripts/deps.sh does, as root)"
    );
    let dir = tempfile::tempdir().unwrap();
    let profile = std::sync::Arc::new(ingestbench::fixtures::Profile::load("basic").unwrap());
    for size in [1024u64, 10 * 1024, 300 * 1024] {
        let f = ingestbench::fixtures::Fixtures::new(
            ingestbench::fixtures::SizeClass::Small,
            size,
            7,
            profile.clone(),
        );
        let doc = f.doc(1, 0);
        assert_eq!(
            doc.template().unwrap().kind,
            ingestbench::fixtures::DocKind::Pdf
        );
        let path = dir.path().join(format!("{size}.pdf"));
        std::fs::write(&path, doc.template().unwrap().materialize(&doc.marker)).unwrap();
        let o = Command::new("pdfinfo").arg(&path).output().unwrap();
        let (out, err) = text(&o);
        assert!(
            o.status.success() && err.trim().is_empty(),
            "pdfinfo rejects {size}: {out}{err}"
        );
        let field = |k: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(str::trim)
                .unwrap_or("")
        };
        assert_eq!(
            (field("Pages:"), field("PDF version:"), field("File size:")),
            ("1", "1.4", format!("{size} bytes").as_str()),
            "{out}"
        );
        assert!(
            out.contains(doc.marker_str()),
            "title carries the marker: {out}"
        );
    }
}

/// Waits until the run directory below `results` has `lines` manifest lines; returns it.
pub(crate) fn wait_for_manifest_lines(
    results: &Path,
    lines: usize,
    child: &mut std::process::Child,
) -> std::path::PathBuf {
    wait_for_run_dir(results, child, |d| {
        std::fs::read_to_string(d.join("manifest.jsonl")).map_or(0, |m| m.lines().count()) >= lines
    })
}

/// Waits until the run directory below `results` satisfies `ready`; returns it. Kills the
/// child and fails after 30 s.
fn wait_for_run_dir(
    results: &Path,
    child: &mut std::process::Child,
    ready: impl Fn(&Path) -> bool,
) -> std::path::PathBuf {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = std::fs::read_dir(results)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path());
        if let Some(d) = found.filter(|d| ready(d)) {
            return d;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run never got there");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn ctrl_c_flushes_exits_130_and_resume_completes_exactly_the_plan() {
    // One end-to-end scenario, read top to bottom.
    let dir = tempfile::tempdir().unwrap();
    // A slow target (2 slots x 5 ms = 400 docs/s) so the run is still going when interrupted.
    let target = TargetProcess::start(
        dir.path(),
        &["--service-time-ms", "5", "--max-concurrent", "2"],
    );
    let url = format!("http://127.0.0.1:{}", target.port);
    let results = dir.path().join("results");
    let mut child = bin()
        .env("INGESTBENCH_PASSWORD", "admin")
        .args([
            "run",
            "--warmup",
            "0",
            "--quiet",
            "--url",
            &url,
            "--docs",
            "600",
            "--threads",
            "4",
            "--runs",
            "2",
            "--small-size",
            "2KiB",
        ])
        .arg("--results-dir")
        .arg(&results)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run_dir = wait_for_manifest_lines(&results, 100, &mut child);
    // SIGINT, as Ctrl-C sends it.
    assert!(
        Command::new("kill")
            .arg("-INT")
            .arg(child.id().to_string())
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("--resume"), "{err}");
    let partial: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("result.json")).unwrap())
            .unwrap();
    let done = partial["docs_ok"].as_u64().unwrap();
    assert!(done > 0 && done < 1200, "interrupted midway ({done})");
    let lines = std::fs::read_to_string(run_dir.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .count() as u64;
    assert_eq!(
        lines,
        done + partial["docs_failed"].as_u64().unwrap(),
        "manifest flushed"
    );

    let o = bin()
        .env("INGESTBENCH_PASSWORD", "admin")
        .args(["run", "--warmup", "0", "--quiet", "--resume"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "admin")
        .args(["verify", "--quiet"])
        .arg(&run_dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("verify: 1200 checked, 1200 ok, 0 missing, 0 corrupt, 0 metadata mismatches, 0 unreadable, 0 duplicates"), "{out}");
}

/// A user's clone has nothing beside it: no code, test, script or build file may read (or send a
/// reader to) the team's `shared` folder next to the repository. The API definitions the tests
/// need are copied under `tests/specs/`.
#[test]
fn nothing_reads_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Spelled in pieces so this file does not match itself.
    let needles = [
        format!("..{}shared", '/'),
        format!("shared{}specs", '/'),
        format!("shared{}reference", '/'),
    ];
    let mut hits = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = ["src", "tests", "scripts", "benches", ".ci"]
        .iter()
        .map(|d| root.join(d))
        .chain(["Cargo.toml", "README.md"].iter().map(|f| root.join(f)))
        .collect();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            for e in std::fs::read_dir(&p).unwrap().flatten() {
                stack.push(e.path());
            }
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) {
                hits.push(format!("{}:{}: {line}", p.display(), i + 1));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "these lines reach outside the repository (copy what they need under tests/specs/ or fixtures/):\n{}",
        hits.join("\n")
    );
    assert!(
        root.join("tests/specs/alfresco/alfresco-core.yaml")
            .is_file()
    );
    assert!(
        root.join("tests/specs/liferay/headless-delivery-documents.yaml")
            .is_file()
    );
}

/// `run` and `sweep` start the embedded target the same way: with a password given, the
/// target accepts exactly that (it used to start `run`'s target with admin/admin and then
/// send the given password).
#[test]
fn run_and_sweep_use_the_given_password_with_the_embedded_target() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "not-admin-7f2c")
        .args([
            "run",
            "--warmup",
            "0",
            "--docs",
            "10",
            "--threads",
            "2",
            "--runs",
            "1",
            "--quiet",
        ])
        .arg("--results-dir")
        .arg(dir.path().join("results"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "run: {}", text(&o).1);
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "not-admin-7f2c")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "sweep",
            "--warmup",
            "0",
            "--quiet",
            "--access-methods",
            "embedded-http,embedded-https",
        ])
        .args([
            "--threads",
            "2",
            "--sizes",
            "small",
            "--docs",
            "10",
            "--runs",
            "1",
        ])
        .arg("--results-dir")
        .arg(dir.path().join("results"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "sweep: {}", text(&o).1);
}

/// A full disk while uploading: the client runs with a 64 KiB file-size limit (SIGXFSZ
/// ignored, so writes past it fail with EFBIG as writes to a full disk fail with ENOSPC).
/// The manifest's write error is kept, no new uploads start, the results are flushed, and
/// the command exits 2 naming the manifest and the OS error.
#[test]
fn a_manifest_write_error_stops_uploads_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let target = TargetProcess::start(dir.path(), &[]);
    let results = dir.path().join("results");
    let o = Command::new("bash")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 64; exec "$@""#)
        .arg("bash")
        .arg(env!("CARGO_BIN_EXE_ingestbench"))
        .args([
            "run",
            "--warmup",
            "0",
            "--docs",
            "3000",
            "--threads",
            "2",
            "--runs",
            "1",
            "--quiet",
        ])
        .args(["--profile", "basic", "--url"])
        .arg(format!("http://127.0.0.1:{}", target.port))
        .arg("--results-dir")
        .arg(&results)
        .env("INGESTBENCH_PASSWORD", "admin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("manifest.jsonl"), "names the file: {err}");
    assert!(err.contains("File too large"), "names the OS error: {err}");
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let lines = std::fs::read_to_string(run_dir.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(
        lines < 1000,
        "uploads stopped early ({lines} manifest lines)"
    );
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    let ok = r["docs_ok"].as_u64().unwrap();
    assert!(
        ok < 1000,
        "no new uploads after the error: {ok} acknowledged"
    );
}

/// A hard stop (SIGKILL: no handler runs) in the middle of a run against a target with a
/// persistent store: result.json (in progress) and the manifest are there, `--resume`
/// adopts the documents the repository stored but the manifest lost (409 → looked up by
/// name), uploads exactly the rest, and `--verify` finds every planned document once.
#[test]
fn sigkill_mid_run_then_resume_stores_every_document_exactly_once() {
    sigkill_then_resume(&["--profile", "basic"]);
}

/// The same through Liferay's API (names and external reference codes).
#[test]
fn sigkill_mid_liferay_run_then_resume_stores_every_document_exactly_once() {
    sigkill_then_resume(&["--protocol", "liferay", "--profile", "liferay"]);
}

fn sigkill_then_resume(api: &[&str]) {
    // One end-to-end scenario, read top to bottom.
    let dir = tempfile::tempdir().unwrap();
    let target = TargetProcess::start(
        dir.path(),
        &["--service-time-ms", "3", "--max-concurrent", "2"],
    );
    let url = format!("http://127.0.0.1:{}", target.port);
    let results = dir.path().join("results");
    let args = |extra: &[&str]| {
        let mut c = bin();
        c.env("INGESTBENCH_PASSWORD", "admin")
            .args(["run", "--warmup", "0", "--quiet", "--url", &url])
            .args(api)
            .args(extra)
            .arg("--results-dir")
            .arg(&results)
            .stdout(Stdio::null());
        c
    };
    let mut child = args(&["--docs", "2000", "--threads", "4", "--runs", "1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = wait_for_manifest_lines(&results, 300, &mut child);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(
        r["in_progress"], true,
        "the plan was on disk before the first upload"
    );
    // verify before finishing: what the manifest lost is "stored but not in the manifest",
    // never a duplicate; the run is not clean (exit 1).
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "admin")
        .args(["verify", "--url", &url])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).1);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(
        (v["duplicates"].as_u64(), v["missing"].as_u64()),
        (Some(0), Some(0)),
        "{v}"
    );
    let before = v["unrecorded"].as_u64().unwrap();
    let o = args(&["--resume", run_dir.to_str().unwrap(), "--verify"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let after = std::fs::read_to_string(run_dir.join("result.json")).unwrap_or_default();
    let errors = serde_json::from_str::<serde_json::Value>(&after).map(|r| r["errors"].clone());
    assert_eq!(o.status.code(), Some(0), "resume: {err} {errors:?}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(v["checked"], 2000, "{v}");
    for k in ["missing", "corrupt", "duplicates"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    assert!(
        r.get("in_progress").is_none(),
        "the final result replaces it"
    );
    eprintln!(
        "verify before resume: {before} stored but not in the manifest; resume adopted {}",
        r["recovered"]
    );
    assert!(r["recovered"].as_u64().unwrap() >= before);
    // cleanup removes the run's folder; verify then finds every document gone.
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "admin")
        .args(["cleanup", "--yes", "--url", &url])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "cleanup: {}", text(&o).1);
    let o = bin()
        .env("INGESTBENCH_PASSWORD", "admin")
        .args(["verify", "--url", &url])
        .arg(&run_dir)
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(
        (o.status.code(), v["missing"].as_u64()),
        (Some(1), Some(2000)),
        "{v}"
    );
}

/// SIGKILL before the first upload (the result is on disk, the folders are being created):
/// nothing is in the manifest, and `--resume` uploads the whole plan.
#[test]
fn sigkill_before_the_first_upload_then_resume_uploads_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    // A slow target: creating the run's folder takes 300 ms, the window to kill in.
    let target = TargetProcess::start(
        dir.path(),
        &["--service-time-ms", "300", "--max-concurrent", "1"],
    );
    let url = format!("http://127.0.0.1:{}", target.port);
    let results = dir.path().join("results");
    let run = |extra: &[&str]| {
        let mut c = bin();
        c.env("INGESTBENCH_PASSWORD", "admin")
            .args([
                "run",
                "--warmup",
                "0",
                "--quiet",
                "--url",
                &url,
                "--profile",
                "basic",
            ])
            .args(extra)
            .arg("--results-dir")
            .arg(&results)
            .stdout(Stdio::null());
        c
    };
    let mut child = run(&["--docs", "6", "--threads", "2", "--runs", "1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = wait_for_run_dir(&results, &mut child, |d| d.join("result.json").exists());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(run_dir.join("manifest.jsonl")).unwrap(),
        "",
        "killed before the first upload"
    );
    let o = run(&["--resume", run_dir.to_str().unwrap(), "--verify"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(
        (r["docs_ok"].as_u64(), r["verify"]["ok"].as_u64()),
        (Some(6), Some(6))
    );
}

#[test]
fn completions_are_scripts_bash_accepts() {
    for shell in ["bash", "zsh", "fish"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        assert!(o.status.success(), "{shell}: {}", text(&o).1);
        let script = String::from_utf8(o.stdout).unwrap();
        assert!(
            script.contains("sweep") && script.contains("--threads"),
            "{shell}"
        );
        if shell == "bash" {
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("ingestbench.bash");
            std::fs::write(&f, &script).unwrap();
            let check = Command::new("bash").arg("-n").arg(&f).output().unwrap();
            assert!(check.status.success(), "{}", text(&check).1);
        }
    }
    let o = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
#[ignore = "needs man (man-db; scripts/deps.sh installs it); scripts/test.sh runs it"]
fn the_man_page_renders_with_man() {
    assert!(
        Command::new("man").arg("--version").output().is_ok(),
        "man is missing: apt-get install man-db (scripts/deps.sh)"
    );
    let o = bin().arg("man").output().unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("ingestbench.1");
    std::fs::write(&page, &o.stdout).unwrap();
    let r = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&page)
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .output()
        .unwrap();
    let (out, err) = text(&r);
    assert!(r.status.success() && err.is_empty(), "{err}");
    for want in [
        "INGESTBENCH SWEEP",
        "--threads",
        "--json-lines",
        "Exit codes",
    ] {
        assert!(out.contains(want), "man page lacks {want}");
    }
}

/// The loop in docs/results.md: `sweep ... --json-lines | jq -c .` in bash, one object per finished run
/// and per finished cell, and nothing else on stdout.
#[test]
#[ignore = "needs jq (scripts/deps.sh installs it); scripts/test.sh runs it"]
fn json_lines_feed_jq_in_a_bash_loop() {
    assert!(
        Command::new("jq").arg("--version").output().is_ok(),
        "jq is missing: apt-get install jq (scripts/deps.sh)"
    );
    let dir = tempfile::tempdir().unwrap();
    let script = r#"set -euo pipefail
for t in 1 2; do
  "$IB" sweep --access-methods embedded-http --access-methods-dir "$AM" --sizes small \
    --threads "$t" --docs 12 --runs 2 --warmup 0 --json-lines --results-dir "$OUT" \
    | jq -c '{type, threads, run, docs_ok, docs_per_sec}'
done"#;
    let o = Command::new("bash")
        .args(["-c", script])
        .env("IB", env!("CARGO_BIN_EXE_ingestbench"))
        .env(
            "AM",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("access-methods"),
        )
        .env("OUT", dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Per sweep: two runs, then the cell.
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["run", "run", "cell", "run", "run", "cell"], "{out}");
    for l in &lines {
        if l["type"] == "run" {
            assert_eq!(l["docs_ok"], 12, "{l}");
        }
    }
    assert_eq!(lines[5]["threads"], 2);
    assert!(
        err.contains("report.html"),
        "the human output is on stderr: {err}"
    );
}
