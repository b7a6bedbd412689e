//! The lab of real access paths (scripts/lab.sh) with real nginx and real Apache httpd in
//! front of two embedded target nodes sharing one store: a sweep over all five lab methods,
//! then the node split, stored-exactly-once and TLS checks, then lab down leaves nothing.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};

use ingestbench::analysis::summary::SweepSummary;
use ingestbench::results::manifest::{Manifest, ManifestEntry};

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn lab(dir: &Path, base: u16, args: &[&str]) -> std::process::Output {
    let o = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/lab.sh"))
        .args(args)
        .env("LAB_DIR", dir.join("lab"))
        .env("LAB_METHODS_DIR", dir.join("methods"))
        .env("LAB_BASE_PORT", base.to_string())
        .env("INGESTBENCH_BIN", env!("CARGO_BIN_EXE_ingestbench"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "lab.sh {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Running and not a zombie (a killed process its parent has not reaped yet).
fn pid_alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}

fn check_frontend(frontend: &str, base: u16) {
    // One end-to-end scenario, read top to bottom.
    let dir = tempfile::tempdir().unwrap();
    lab(dir.path(), base, &["up", "--frontend", frontend]);
    let pids: Vec<String> = std::fs::read_dir(dir.path().join("lab/run"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(pids.len(), 3, "two nodes and the front end");
    // Idempotent: a second `up` changes nothing.
    lab(dir.path(), base, &["up", "--frontend", frontend]);

    let results = dir.path().join("results");
    let o = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args([
            "sweep",
            "--warmup",
            "0",
            "--quiet",
            "--access-methods",
            "https-lb,http-lb,direct,https-proxy,http-proxy",
            "--connection",
            "reuse,new",
        ])
        .args([
            "--threads",
            "1,4",
            "--sizes",
            "small,average",
            "--docs",
            "100",
            "--runs",
            "3",
        ])
        .arg("--access-methods-dir")
        .arg(dir.path().join("methods"))
        .arg("--results-dir")
        .arg(&results)
        .env("INGESTBENCH_PASSWORD", "admin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let result = std::panic::catch_unwind(|| {
        assert!(
            o.status.success(),
            "{frontend} sweep: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let sweep = std::fs::read_dir(&results)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let s: SweepSummary =
            serde_json::from_str(&std::fs::read_to_string(sweep.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(s.cells.len(), 5 * 2 * 2 * 2);
        let mut acknowledged = 0;
        for c in &s.cells {
            assert_eq!((c.docs_ok, c.docs_failed), (300, 0), "{frontend} {c:?}");
            acknowledged += c.docs_ok;
            let n1 = *c.node_split.get("node1").unwrap_or(&0) as f64;
            let n2 = *c.node_split.get("node2").unwrap_or(&0) as f64;
            if c.method.ends_with("-lb") {
                assert!(
                    (n1 / (n1 + n2) - 0.5).abs() <= 0.10,
                    "{frontend} {} {} t{}: split {n1}/{n2}",
                    c.method,
                    c.size,
                    c.threads
                );
            } else {
                assert_eq!(
                    (n1, n2),
                    (300.0, 0.0),
                    "{frontend} {}: all on node 1",
                    c.method
                );
            }
            // The frontend (found from the URL's port) and the nodes (server_pids) were read.
            let read: Vec<&str> = c
                .servers
                .iter()
                .filter(|x| x.cpu_cores.is_some() && x.error.is_none())
                .map(|x| x.name.as_str())
                .collect();
            let nodes = if c.method.ends_with("-lb") { 2 } else { 1 };
            let front = usize::from(c.method != "direct");
            assert_eq!(
                read.len(),
                nodes + front,
                "{frontend} {}: servers read {read:?}",
                c.method
            );
            assert!(c.bottleneck.is_some(), "{frontend} {}", c.method);
            if c.connection == ingestbench::transport::ConnectionPolicy::New {
                assert!(
                    c.new_connections >= 300,
                    "{frontend} {}: a connection per document ({})",
                    c.method,
                    c.new_connections
                );
            } else {
                assert!(
                    c.new_connections <= 3 * c.threads,
                    "{frontend} {}: keep-alive ({})",
                    c.method,
                    c.new_connections
                );
            }
        }
        // Every acknowledged document is stored exactly once, where the manifest says.
        let entries: Vec<ManifestEntry> = Manifest::read(&sweep.join("manifest.jsonl")).unwrap();
        assert_eq!(entries.len() as u64, acknowledged);
        let ids: HashSet<_> = entries.iter().map(|e| e.id.clone().unwrap()).collect();
        assert_eq!(ids.len() as u64, acknowledged, "no id twice");
        let store =
            ingestbench::emulator::store::Store::open(&dir.path().join("lab/store")).unwrap();
        assert_eq!(
            store.count_documents().unwrap(),
            acknowledged,
            "the cluster's store holds each document once"
        );
        for e in entries.iter().step_by(97) {
            let n = store.get(e.id.as_ref().unwrap()).unwrap().expect("stored");
            assert_eq!((n.name.as_str(), n.size), (e.name.as_str(), e.size));
        }
        // The HTTPS methods verified the lab CA (none is insecure), and without it TLS fails.
        let methods: Vec<ingestbench::transport::AccessMethod> =
            serde_json::from_str(&std::fs::read_to_string(sweep.join("methods.json")).unwrap())
                .unwrap();
        for m in methods.iter().filter(|m| m.url.starts_with("https")) {
            assert!(!m.tls.insecure && m.tls.ca_cert.is_some(), "{}", m.name);
        }
        let https = methods
            .iter()
            .find(|m| m.name == "https-lb")
            .unwrap()
            .url
            .clone();
        let o = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .args([
                "run", "--warmup", "0", "--quiet", "--docs", "1", "--url", &https,
            ])
            .arg("--results-dir")
            .arg(dir.path().join("r2"))
            .env("INGESTBENCH_PASSWORD", "admin")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .to_lowercase()
                .contains("certificate"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // A node killed mid-run behind the balancer: the run finishes, failures are counted,
        // and reading back finds no silent loss and no duplicate; `up` restarts the node.
        if frontend == "nginx" {
            let node2 = std::fs::read_to_string(dir.path().join("lab/run/node2.pid")).unwrap();
            let lb = methods
                .iter()
                .find(|m| m.name == "http-lb")
                .unwrap()
                .url
                .clone();
            let child = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
                .args([
                    "run",
                    "--warmup",
                    "0",
                    "--quiet",
                    "--docs",
                    "1500",
                    "--threads",
                    "4",
                    "--runs",
                    "1",
                    "--verify",
                    "--retries",
                    "2",
                    "--url",
                    &lb,
                ])
                .arg("--results-dir")
                .arg(dir.path().join("r3"))
                .env("INGESTBENCH_PASSWORD", "admin")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(400));
            Command::new("kill")
                .arg("-9")
                .arg(node2.trim())
                .status()
                .unwrap();
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(matches!(out.status.code(), Some(0) | Some(1)), "{err}");
            let run = std::fs::read_dir(dir.path().join("r3"))
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path();
            let r: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(run.join("result.json")).unwrap())
                    .unwrap();
            assert_eq!(
                r["docs_ok"].as_u64().unwrap() + r["docs_failed"].as_u64().unwrap(),
                1500
            );
            let v = &r["verify"];
            assert_eq!(
                (v["missing"].as_u64(), v["duplicates"].as_u64()),
                (Some(0), Some(0)),
                "{v}"
            );
            assert_eq!(v["ok"], r["docs_ok"]);
            lab(dir.path(), base, &["up", "--frontend", frontend]);
            assert!(!pid_alive(&node2), "node2 was killed");
            hard_stop_behind_the_balancer(dir.path(), base, &lb);
        }
        // The relative table states the costs against direct with an interval, and the
        // findings state each as a conclusion only when it is significant.
        let md = std::fs::read_to_string(sweep.join("report.md")).unwrap();
        assert!(
            md.contains("Relative cost against direct")
                && (md.contains("https-lb is") || md.contains("https-lb vs direct")),
            "{md}"
        );
    });
    let pids: Vec<String> = std::fs::read_dir(dir.path().join("lab/run"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .chain(pids)
        .collect();
    lab(dir.path(), base, &["down"]);
    for p in &pids {
        assert!(
            !pid_alive(p),
            "{frontend}: pid {p} still running after down"
        );
    }
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// The client killed with SIGKILL and a node killed at the same moment, behind nginx: after
/// `lab up` restarts the node, `--resume` through the balancer finishes the run and reading
/// back finds every planned document exactly once.
fn hard_stop_behind_the_balancer(dir: &Path, base: u16, lb: &str) {
    let results = dir.join("r4");
    let run = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ingestbench"));
        c.args([
            "run",
            "--warmup",
            "0",
            "--quiet",
            "--url",
            lb,
            "--retries",
            "2",
        ])
        .args(extra)
        .arg("--results-dir")
        .arg(&results)
        .env("INGESTBENCH_PASSWORD", "admin")
        .stdout(Stdio::null());
        c
    };
    let mut child = run(&["--docs", "1500", "--threads", "4", "--runs", "1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let run_dir = loop {
        let found = std::fs::read_dir(&results)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path());
        if let Some(d) = &found
            && std::fs::read_to_string(d.join("manifest.jsonl")).map_or(0, |m| m.lines().count())
                >= 200
        {
            break d.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run never got going"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let node2 = std::fs::read_to_string(dir.join("lab/run/node2.pid")).unwrap();
    Command::new("kill")
        .args(["-9", node2.trim()])
        .status()
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    lab(dir, base, &["up", "--frontend", "nginx"]);
    let o = run(&["--resume", run_dir.to_str().unwrap(), "--verify"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(0) | Some(1)), "{err}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("result.json")).unwrap())
            .unwrap();
    let v = &r["verify"];
    assert_eq!(
        v["checked"], 1500,
        "every planned document acknowledged once: {v}"
    );
    assert_eq!(
        (
            v["missing"].as_u64(),
            v["duplicates"].as_u64(),
            v["unrecorded"].as_u64()
        ),
        (Some(0), Some(0), Some(0)),
        "{v}"
    );
}

#[test]
#[ignore = "needs nginx, apache2 and openssl (scripts/deps.sh installs them); scripts/test.sh runs it"]
fn lab_sweeps_through_real_nginx_and_real_httpd() {
    // Its servers load both cores: the timing tests wait.
    let _one = crate::common::TIMED.blocking_lock();
    let missing: Vec<&str> = ["nginx", "apache2", "openssl"]
        .into_iter()
        .filter(|c| !have(c))
        .collect();
    assert!(
        missing.is_empty(),
        "{missing:?} missing: install the Debian packages nginx, apache2 and openssl (scripts/deps.sh does, as root)"
    );
    // One after the other: both use the same kinds of ports.
    check_frontend("nginx", 21000);
    check_frontend("httpd", 22000);
}
