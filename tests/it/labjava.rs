//! The Java lab (scripts/lab.sh --backend java): two real Tomcat 9 nodes running OpenCMIS
//! FileShare over one shared directory, behind real Apache httpd (mod_jk over AJP, mod_proxy)
//! and real HAProxy. A port taken is an error naming it; then a small sweep through all nine
//! methods with the node split of every balancer, everything read back through the mod_jk
//! balancer, what one node stored read back through the other, and `down` leaves nothing.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use ingestbench::results::summary::SweepSummary;

const METHODS: [&str; 9] = [
    "https-lb",
    "http-lb",
    "direct",
    "https-proxy",
    "http-proxy",
    "haproxy-https",
    "haproxy-http",
    "https-lb-1node",
    "https-lb-2node",
];
/// Methods that balance over both nodes; the others reach node 1 only.
const BALANCED: [&str; 5] = [
    "https-lb",
    "http-lb",
    "haproxy-https",
    "haproxy-http",
    "https-lb-2node",
];

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn lab(dir: &Path, base: u16, cmd: &str) -> Output {
    Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/lab.sh"))
        .args([cmd, "--backend", "java"])
        .env("LAB_JAVA_DIR", dir.join("lab"))
        .env("LAB_JAVA_METHODS_DIR", dir.join("methods"))
        .env("LAB_JAVA_BASE_PORT", base.to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn lab_ok(dir: &Path, base: u16, cmd: &str) -> String {
    let o = lab(dir, base, cmd);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "lab.sh {cmd} --backend java: {out}");
    out
}

fn ib(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(args)
        .env("INGESTBENCH_PASSWORD", "admin")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn pids(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("lab/run"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
                .map(|e| {
                    std::fs::read_to_string(e.path())
                        .unwrap()
                        .trim()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Running and not a zombie.
fn pid_alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}

fn only_dir(parent: &Path) -> std::path::PathBuf {
    std::fs::read_dir(parent)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

#[test]
#[ignore = "needs apache2, libapache2-mod-jk, haproxy, a JDK, maven, unzip, curl, openssl (scripts/deps.sh installs them) and Tomcat + OpenCMIS FileShare from Maven Central; scripts/test.sh runs it"]
fn lab_java_cluster_through_mod_jk_mod_proxy_and_haproxy() {
    // Two JVMs, httpd and HAProxy load both cores: the timing tests wait.
    let _one = crate::common::TIMED.blocking_lock();
    let mut missing: Vec<&str> = [
        ("apache2", "apache2"),
        ("haproxy", "haproxy"),
        ("java", "default-jdk-headless"),
        ("javac", "default-jdk-headless"),
        ("mvn", "maven"),
        ("unzip", "unzip"),
        ("curl", "curl"),
        ("openssl", "openssl"),
    ]
    .into_iter()
    .filter(|(c, _)| !have(c))
    .map(|(_, p)| p)
    .collect();
    if !Path::new("/usr/lib/apache2/modules/mod_jk.so").exists() {
        missing.push("libapache2-mod-jk");
    }
    assert!(
        missing.is_empty(),
        "missing: install the Debian packages {missing:?} (scripts/deps.sh does, as root)"
    );

    // A port of the lab taken: `up` names it and starts nothing.
    let taken = tempfile::tempdir().unwrap();
    let squat = TcpListener::bind("127.0.0.1:24943").unwrap();
    let o = lab(taken.path(), 24500, "up");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("port 24943") && err.contains("in use"),
        "{err}"
    );
    assert!(pids(taken.path()).is_empty(), "nothing started");
    drop(squat);

    let base = 24000;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t0 = std::time::Instant::now();
    lab_ok(d, base, "up");
    eprintln!("lab-java up: {:.1} s", t0.elapsed().as_secs_f64());
    let started = pids(d);
    assert_eq!(started.len(), 4, "two nodes, httpd and haproxy");
    let result = std::panic::catch_unwind(|| {
        // Idempotent: a second `up` starts nothing new.
        lab_ok(d, base, "up");
        let mut again = pids(d);
        again.sort();
        let mut first = started.clone();
        first.sort();
        assert_eq!(again, first);
        let node_pid = |n: &str| {
            std::fs::read_to_string(d.join(format!("lab/run/{n}.pid")))
                .unwrap()
                .trim()
                .to_string()
        };
        let (n1, n2) = (node_pid("node1"), node_pid("node2"));

        let methods = d.join("methods");
        let (code, _, err) = ib(
            d,
            &[
                "sweep",
                "--quiet",
                "--warmup",
                "0",
                "--protocol",
                "cmis",
                "--profile",
                "opencmis",
                "--access-methods-dir",
                methods.to_str().unwrap(),
                "--access-methods",
                &METHODS.join(","),
                "--baseline",
                "direct",
                "--threads",
                "4",
                "--sizes",
                "small",
                "--docs",
                "80",
                "--runs",
                "2",
                "--results-dir",
                "s",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let sweep = only_dir(&d.join("s"));
        let s: SweepSummary =
            serde_json::from_str(&std::fs::read_to_string(sweep.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(s.cells.len(), METHODS.len());
        for c in &s.cells {
            assert_eq!((c.docs_ok, c.docs_failed), (160, 0), "{c:?}");
            let a = *c.node_split.get("node1").unwrap_or(&0) as f64;
            let b = *c.node_split.get("node2").unwrap_or(&0) as f64;
            assert_eq!(a + b, 160.0, "{}: every answer names its node", c.method);
            if BALANCED.contains(&c.method.as_str()) {
                assert!(
                    (a / (a + b) - 0.5).abs() <= 0.10,
                    "{}: split {a}/{b}",
                    c.method
                );
            } else {
                assert_eq!((a, b), (160.0, 0.0), "{}: all on node 1", c.method);
            }
            // Both Tomcats' CPU is read beside the client's, on every path.
            for p in [&n1, &n2] {
                assert!(
                    c.servers
                        .iter()
                        .any(|x| x.name.ends_with(&format!("(pid {p})"))
                            && x.cpu_cores.is_some()
                            && x.error.is_none()),
                    "{}: Tomcat pid {p} not read: {:?}",
                    c.method,
                    c.servers
                );
            }
        }
        // Everything, whichever node stored it, read back through the mod_jk balancer.
        let (code, out, err) = ib(
            d,
            &[
                "verify",
                "--quiet",
                "--access-method",
                "https-lb",
                sweep.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.contains("1440 checked, 1440 ok, 0 missing, 0 corrupt, 0 metadata mismatches"),
            "{out}"
        );

        // Stored through node 1 (direct), read back through node 2 alone.
        let node = |port: u16| format!("http://127.0.0.1:{port}/fileshare/browser");
        let (code, _, err) = ib(
            d,
            &[
                "run",
                "--quiet",
                "--warmup",
                "0",
                "--protocol",
                "cmis",
                "--profile",
                "opencmis",
                "--url",
                &node(base + 81),
                "--docs",
                "40",
                "--threads",
                "2",
                "--runs",
                "1",
                "--results-dir",
                "r",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let run = only_dir(&d.join("r"));
        let (code, out, err) = ib(
            d,
            &[
                "verify",
                "--quiet",
                "--url",
                &node(base + 91),
                run.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("40 checked, 40 ok, 0 missing"), "{out}");
    });
    let mut all = pids(d);
    all.extend(started);
    let down = lab(d, base, "down");
    for p in &all {
        assert!(!pid_alive(p), "pid {p} still running after down");
    }
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    let o = lab(d, base, "status");
    assert!(String::from_utf8_lossy(&o.stdout).contains("lab: down"));
}
