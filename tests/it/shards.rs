//! Several injectors as one: four shard processes started the way a Kubernetes Indexed Job
//! starts them (the same command, JOB_COMPLETION_INDEX 0–3) against one target: together
//! they upload exactly the plan, never the same document twice, and start every run
//! together through the rendezvous.

use std::collections::HashSet;

use ingestbench::results::manifest::Manifest;

use crate::common::{password_file, target};

/// `ingestbench run` as one shard of plan `plan` (its --shard flags in `shard`), against
/// `url`, meeting at `port`, writing below `dir` (which holds the file `password`).
fn shard_run(
    url: &str,
    dir: &std::path::Path,
    plan: &str,
    port: u16,
    shard: &[&str],
    sizes: &[&str],
) -> std::process::Command {
    let pw = dir.join("password");
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"));
    c.args([
        "run",
        "--quiet",
        "--warmup",
        "0",
        "--url",
        url,
        "--profile",
        "basic",
    ])
    .args(sizes)
    .args(shard)
    .args([
        "--plan-id",
        plan,
        "--rendezvous",
        &format!("127.0.0.1:{port}"),
    ])
    .args(["--rendezvous-timeout", "60"])
    .arg("--password-file")
    .arg(pw)
    .arg("--results-dir")
    .arg(dir.join("results"))
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_indexed_shards_upload_exactly_the_plan_and_start_together() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _store) = target().await;
    let dir = tempfile::tempdir().unwrap();
    password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let port = crate::common::free_port();
    let url = t.http_url().unwrap();
    let mut children = Vec::new();
    for k in 0..4 {
        let c = shard_run(
            &url,
            dir.path(),
            "job-7",
            port,
            &["--shard-index-env", "JOB_COMPLETION_INDEX", "--shards", "4"],
            &["--docs", "1000", "--threads", "6", "--runs", "2"],
        )
        .env("JOB_COMPLETION_INDEX", k.to_string())
        .spawn()
        .unwrap();
        children.push(tokio::task::spawn_blocking(move || c.wait_with_output()));
    }
    for c in children {
        let o = c.await.unwrap().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let mut names = HashSet::new();
    let mut ok = 0;
    let mut starts: Vec<Vec<i64>> = vec![Vec::new(); 2];
    for k in 0..4 {
        let d = results.join(format!("run-job-7-shard-{k}of4"));
        let r: ingestbench::report::RunResult =
            serde_json::from_str(&std::fs::read_to_string(d.join("result.json")).unwrap()).unwrap();
        let s = r.shard.as_ref().unwrap();
        assert_eq!((s.index, s.count, s.plan_id.as_str()), (k, 4, "job-7"));
        let schema = crate::common::result_schema();
        crate::common::assert_valid(&schema, &schema, &serde_json::to_value(&r).unwrap());
        // 6 workers over 4 shards: 2, 2, 1, 1; quotas 167 167 | 167 167 | 166 | 166.
        let want: &[u64] = match k {
            0 | 1 => &[167, 167],
            _ => &[166],
        };
        assert_eq!(r.worker_quotas, want);
        for run in &r.runs {
            assert!(
                run.start_lag_ms.unwrap().abs() < 1000,
                "{:?}",
                run.start_lag_ms
            );
            starts[(run.run - 1) as usize].push(run.started_unix_ms);
        }
        for e in Manifest::read(&d.join("manifest.jsonl")).unwrap() {
            assert!(e.ok, "{e:?}");
            assert!(
                names.insert((e.folder.clone(), e.name.clone())),
                "twice: {e:?}"
            );
            ok += 1;
        }
    }
    assert_eq!(ok, 2000, "every document of the plan, once");
    for (i, s) in starts.iter().enumerate() {
        let skew = s.iter().max().unwrap() - s.iter().min().unwrap();
        eprintln!("run {}: start skew across shards {skew} ms", i + 1);
        assert!(skew < 250, "run {}: skew {skew} ms", i + 1);
    }
    let stored = t
        .count_documents_under(
            ingestbench::protocol_kind::ProtocolKind::Alfresco,
            "admin",
            "ingestbench/job-7",
        )
        .await
        .unwrap();
    assert_eq!(stored, 2000);
}

#[test]
fn a_shard_whose_peers_never_come_times_out_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let port = crate::common::free_port();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args([
            "run",
            "--quiet",
            "--docs",
            "10",
            "--shard",
            "0/3",
            "--plan-id",
            "p",
        ])
        .args([
            "--rendezvous",
            &format!("127.0.0.1:{port}"),
            "--rendezvous-timeout",
            "1",
        ])
        .arg("--results-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("only shards [0] of 0..3 connected"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_killed_mid_run_is_named_by_merge_and_its_resume_completes_the_plan() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _store) = crate::common::target_with(|cfg| {
        cfg.perf = ingestbench::emulator::PerfModel {
            service_time: std::time::Duration::from_millis(4),
            max_concurrent: 4,
            ..Default::default()
        };
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pw = password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let port = crate::common::free_port();
    let url = t.http_url().unwrap();
    let shard = |k: u64| {
        let spec = format!("{k}/4");
        shard_run(
            &url,
            dir.path(),
            "job-9",
            port,
            &["--shard", &spec],
            &["--docs", "1200", "--threads", "8", "--runs", "1"],
        )
    };
    let mut children: Vec<_> = (0..4).map(|k| shard(k).spawn().unwrap()).collect();
    // Shard 2 is killed once it has acknowledged some documents.
    let victim = results.join("run-job-9-shard-2of4/manifest.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(&victim).map_or(0, |m| m.lines().count()) < 20 {
        assert!(
            std::time::Instant::now() < deadline,
            "shard 2 never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    children[2].kill().unwrap();
    let mut outs = Vec::new();
    for c in children {
        outs.push(tokio::task::spawn_blocking(move || {
            c.wait_with_output().unwrap()
        }));
    }
    for (k, o) in outs.into_iter().enumerate() {
        let o = o.await.unwrap();
        if k != 2 {
            assert!(
                o.status.success(),
                "shard {k}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    let dirs: Vec<_> = (0..4)
        .map(|k| results.join(format!("run-job-9-shard-{k}of4")))
        .collect();
    let merge = |out: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .arg("merge")
            .args(&dirs)
            .arg("-o")
            .arg(dir.path().join(out))
            .output()
            .unwrap()
    };
    let o = merge("early");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("shard 2 of plan job-9 did not finish"),
        "{err}"
    );
    // The killed shard, resumed on its own, uploads exactly what it had left.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(["run", "--quiet", "--url", &url, "--resume"])
        .arg(&dirs[2])
        .args(["--shard", "2/4", "--plan-id", "job-9"])
        .args(["--rendezvous", "127.0.0.1:9"])
        .arg("--password-file")
        .arg(&pw)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = merge("merged");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stored = t
        .count_documents_under(
            ingestbench::protocol_kind::ProtocolKind::Alfresco,
            "admin",
            "ingestbench/job-9",
        )
        .await
        .unwrap();
    assert_eq!(stored, 1200, "every document of the plan, once");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .env("INGESTBENCH_PASSWORD", "admin")
        .arg("verify")
        .arg(dir.path().join("merged"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A sweep in three shards (the same command, `--shard K/3`): every cell's workers split
/// over the shards (1 thread: two shards idle but at every barrier), each run of every cell
/// started together, and `merge` makes the sweep one injector would have recorded: every
/// document once, histograms exact, reports rendered, `verify` clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_in_three_shards_merges_into_the_whole_sweep() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _store) = target().await;
    let dir = tempfile::tempdir().unwrap();
    let pw = password_file(dir.path(), "admin");
    let methods = crate::common::direct_method(dir.path(), &t.http_url().unwrap());
    let results = dir.path().join("results");
    let port = crate::common::free_port();
    let mut children = Vec::new();
    for k in 0..3 {
        let c = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .args(["sweep", "--warmup", "0", "--profile", "basic"])
            .args(["--access-methods", "direct", "--access-methods-dir"])
            .arg(&methods)
            .args(["--sizes", "small,average", "--small-size", "2KiB"])
            .args(["--average-size", "16KiB", "--threads", "1,4"])
            .args(["--docs", "40", "--runs", "2", "--shard", &format!("{k}/3")])
            .args(["--plan-id", "sw-3", "--rendezvous"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--rendezvous-timeout", "60", "--password-file"])
            .arg(&pw)
            .arg("--results-dir")
            .arg(&results)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        children.push(tokio::task::spawn_blocking(move || c.wait_with_output()));
    }
    for c in children {
        let o = c.await.unwrap().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("shard "), "the shard says which it is: {err}");
    }
    let dirs: Vec<_> = (0..3)
        .map(|k| results.join(format!("sweep-sw-3-shard-{k}of3")))
        .collect();
    let merged = dir.path().join("merged");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .arg("merge")
        .args(&dirs)
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("8 runs of 3 shards merged"), "{out}");
    let (plan, runs) = ingestbench::results::load_dir(&merged).unwrap();
    assert!(plan.shard.is_none());
    assert_eq!(plan.id, "sw-3");
    assert_eq!(runs.len(), 8);
    for r in &runs {
        assert_eq!(r.record.docs_ok, 40, "{:?} run {}", r.cell, r.record.run);
        let h = ingestbench::metrics::decode_hist(&r.latency_histogram_us).unwrap();
        assert_eq!(h.len(), 40, "the merged histogram holds every upload");
        assert!(r.record.start_skew_ms.unwrap() < 250, "{:?}", r.record);
    }
    let mut names = HashSet::new();
    for e in Manifest::read(&merged.join("manifest.jsonl")).unwrap() {
        assert!(e.ok, "{e:?}");
        assert!(
            names.insert((e.folder.clone(), e.name.clone())),
            "twice: {e:?}"
        );
    }
    assert_eq!(names.len(), 320);
    let stored = t
        .count_documents_under(
            ingestbench::protocol_kind::ProtocolKind::Alfresco,
            "admin",
            "ingestbench/sw-3",
        )
        .await
        .unwrap();
    assert_eq!(stored, 320, "every document of the plan, once");
    assert!(merged.join("report.html").is_file());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .env("INGESTBENCH_PASSWORD", "admin")
        .arg("verify")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // One shard missing: named.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .arg("merge")
        .args(&dirs[..2])
        .arg("-o")
        .arg(dir.path().join("partial"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("missing [2]"), "{err}");
}

fn repo(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
#[ignore = "needs go (the Kubernetes API types come from the Go module proxy)"]
fn the_kubernetes_manifest_decodes_strictly_into_the_real_api_types() {
    let go = |file: &std::path::Path| {
        std::process::Command::new("go")
            .args(["run", "."])
            .arg(file)
            .current_dir(repo("scripts/kubernetes/validate"))
            .output()
            .unwrap_or_else(|e| panic!("go: {e}; install Go 1.22+ (scripts/deps.sh checks)"))
    };
    let manifest = repo("scripts/kubernetes/ingestbench-job.yaml");
    let o = go(&manifest);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // A misspelt field fails: the decoding is strict.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &bad,
        text.replace("completionMode: Indexed", "completionsMode: Indexed"),
    )
    .unwrap();
    let o = go(&bad);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("unknown field \"completionsMode\""),
        "{err}"
    );
    // So does a Job whose shards would not all run at once.
    std::fs::write(&bad, text.replace("parallelism: 4", "parallelism: 2")).unwrap();
    let o = go(&bad);
    assert!(String::from_utf8_lossy(&o.stderr).contains("parallelism must equal completions"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs GNU parallel (scripts/deps.sh)"]
async fn the_ssh_script_in_local_mode_runs_shards_and_merges_them() {
    let _one = crate::common::TIMED.lock().await;
    assert!(
        std::path::Path::new("/usr/bin/parallel").exists(),
        "GNU parallel missing: install the Debian package parallel (scripts/deps.sh does)"
    );
    let (t, _store) = target().await;
    let dir = tempfile::tempdir().unwrap();
    let port = crate::common::free_port();
    let out = dir.path().join("merged");
    let url = t.http_url().unwrap();
    let script = repo("scripts/shards.sh");
    let bin = env!("CARGO_BIN_EXE_ingestbench");
    let port_s = port.to_string();
    let out_s = out.to_str().unwrap().to_string();
    let o = tokio::task::spawn_blocking(move || {
        std::process::Command::new("bash")
            .arg(script)
            .args([
                "--local",
                "3",
                "--plan-id",
                "ci-1",
                "--port",
                &port_s,
                "--bin",
                bin,
            ])
            .args(["--out", &out_s, "--"])
            .args([
                "--url",
                &url,
                "--docs",
                "600",
                "--threads",
                "5",
                "--runs",
                "2",
            ])
            .args(["--warmup", "0", "--profile", "basic"])
            .env("INGESTBENCH_PASSWORD", "admin")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("start skew between shards"), "{stdout}");
    let m: ingestbench::report::RunResult =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(m.docs_ok, 1200);
    assert_eq!(
        m.worker_quotas,
        ingestbench::plan::quota::split_quota(600, 5)
    );
    let stored = t
        .count_documents_under(
            ingestbench::protocol_kind::ProtocolKind::Alfresco,
            "admin",
            "ingestbench/ci-1",
        )
        .await
        .unwrap();
    assert_eq!(stored, 1200);
}

/// A throwaway sshd on 127.0.0.1 and 127.0.0.2 (scripts/sshd.sh), stopped by its pid when
/// dropped.
struct Sshd(std::path::PathBuf);

impl Sshd {
    fn up(dir: &std::path::Path) -> Sshd {
        assert!(
            std::path::Path::new("/usr/sbin/sshd").exists(),
            "sshd missing: install the Debian package openssh-server (scripts/deps.sh does)"
        );
        // The port is free when chosen but another test may bind it before sshd does
        // (exit 3): try a fresh one.
        for _ in 0..3 {
            let port = crate::common::free_port().to_string();
            let o = std::process::Command::new("bash")
                .arg(repo("scripts/sshd.sh"))
                .args(["up", dir.to_str().unwrap(), &port])
                .output()
                .unwrap();
            if o.status.code() == Some(3) {
                continue;
            }
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            return Sshd(dir.to_path_buf());
        }
        panic!("sshd.sh: three free ports were taken before sshd could bind them")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash")
            .arg(repo("scripts/sshd.sh"))
            .args(["down", self.0.to_str().unwrap()])
            .status();
    }
}

/// The SSH path against a real sshd, the first host a `Host` alias only SSH knows: the
/// script learns shard 0's address from the host, the shards meet, the plan is stored
/// exactly once and merged. Given the alias as the rendezvous, the shards say at once that
/// it does not resolve and stop with exit 2 naming it, instead of a silent stall.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs sshd and GNU parallel (scripts/deps.sh)"]
async fn the_ssh_script_over_real_sshd_with_a_host_alias_runs_and_merges() {
    let _one = crate::common::TIMED.lock().await;
    assert!(
        std::path::Path::new("/usr/bin/parallel").exists(),
        "GNU parallel missing: install the Debian package parallel (scripts/deps.sh does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let _sshd = Sshd::up(&dir.path().join("sshd"));
    let ssh_config = dir.path().join("sshd/ssh_config");
    let (t, _store) = target().await;
    let url = t.http_url().unwrap();
    let script = |plan: &str, extra: &[&str], ingest: &[&str]| {
        let mut c = std::process::Command::new("bash");
        c.arg(repo("scripts/shards.sh"))
            .args(["--hosts", "inj1,127.0.0.2", "--ssh-config"])
            .arg(&ssh_config)
            .args([
                "--plan-id",
                plan,
                "--bin",
                env!("CARGO_BIN_EXE_ingestbench"),
            ])
            .args(["--port", &crate::common::free_port().to_string(), "--out"])
            .arg(dir.path().join(plan))
            .args(extra)
            .arg("--")
            .args([
                "--url",
                &url,
                "--docs",
                "401",
                "--threads",
                "4",
                "--runs",
                "2",
            ])
            .args(["--warmup", "0", "--profile", "basic"])
            .args(ingest)
            .env("INGESTBENCH_PASSWORD", "admin");
        c
    };
    let mut ok = script("ssh-ci-1", &[], &[]);
    let o = tokio::task::spawn_blocking(move || ok.output().unwrap())
        .await
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("rendezvous at 127.0.0.1:"),
        "learned from the host: {stderr}"
    );
    assert!(stdout.contains("start skew between shards"), "{stdout}");
    let m: ingestbench::report::RunResult = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("ssh-ci-1/result.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m.docs_ok, 802);
    let stored = t
        .count_documents_under(
            ingestbench::protocol_kind::ProtocolKind::Alfresco,
            "admin",
            "ingestbench/ssh-ci-1",
        )
        .await
        .unwrap();
    assert_eq!(stored, 802);
    // The alias as the rendezvous: said at once, then exit 2 naming it, within seconds.
    let mut bad = script(
        "ssh-ci-2",
        &["--rendezvous", "inj1:7070"],
        &["--rendezvous-timeout", "3"],
    );
    let started = std::time::Instant::now();
    let o = tokio::task::spawn_blocking(move || bad.output().unwrap())
        .await
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("cannot resolve inj1"), "{out}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{out}"
    );
}
