//! Numbers a team can act on: warm-up against a cold start, steady-state windows,
//! `--precision` against a jittery target, and the servers' side (the real
//! prometheus-node-exporter), each against a target whose capacity is known.

use std::time::Duration;

use ingestbench::emulator::{EmulatorConfig, PerfModel};

use crate::common::target_with;

/// 4 slots × 50 ms: exactly 80 uploads/s however many workers queue for them. 50 ms leaves
/// the store's own work (a temporary store: no fsync) room to fit inside the modelled time
/// while the rest of the suite loads both cores.
const CAPACITY: f64 = 80.0;

fn known_capacity(cfg: &mut EmulatorConfig) {
    crate::common::capacity(4, 50)(cfg)
}

async fn run(url: &str, dir: &std::path::Path, extra: &[&str]) -> ingestbench::report::RunResult {
    let (outcome, r) =
        crate::common::run_basic(url, dir, &[&["--threads", "8"], extra].concat()).await;
    assert_eq!(outcome, ingestbench::Outcome::Success);
    r
}

fn within(x: f64, want: f64, pct: f64) -> bool {
    (x / want - 1.0).abs() * 100.0 <= pct
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_up_measures_the_known_capacity_a_cold_run_does_not() {
    let _one = crate::common::TIMED.lock().await;
    // The first 200 requests take 40 ms longer (a JVM's JIT, empty caches).
    let cold = |cfg: &mut EmulatorConfig| {
        known_capacity(cfg);
        cfg.perf.cold_requests = 200;
        cfg.perf.cold_extra = Duration::from_millis(40);
    };
    let dir = tempfile::tempdir().unwrap();
    let (t1, _d1) = target_with(cold).await;
    let warm = run(
        &t1.http_url().unwrap(),
        dir.path(),
        &["--docs", "300", "--runs", "1", "--warmup", "240"],
    )
    .await;
    let (t2, _d2) = target_with(cold).await;
    let unwarmed = run(
        &t2.http_url().unwrap(),
        dir.path(),
        &["--docs", "300", "--runs", "1", "--warmup", "0"],
    )
    .await;
    eprintln!(
        "warm {:.1} docs/s, cold {:.1} docs/s (capacity {CAPACITY})",
        warm.docs_per_sec, unwarmed.docs_per_sec
    );
    assert!(
        within(warm.docs_per_sec, CAPACITY, 2.0),
        "with warm-up: {} docs/s",
        warm.docs_per_sec
    );
    assert!(
        !within(unwarmed.docs_per_sec, CAPACITY, 2.0),
        "cold: {} docs/s",
        unwarmed.docs_per_sec
    );
    assert_eq!(warm.warmup_docs, 240);
    assert_eq!(warm.docs_ok, 300);
    assert_eq!(unwarmed.warmup_docs, 0);
    // The report says which was which.
    let text = ingestbench::report::summary_text(&unwarmed);
    assert!(text.contains("warm-up: none"), "{text}");
    assert!(ingestbench::report::summary_text(&warm).contains("warm-up: 240 documents"));
    // Warm-up documents are in the manifest, in their own folder, and verify covers them.
    let run_dir = dir.path().join("results").join(format!("run-{}", warm.id));
    let entries =
        ingestbench::results::manifest::Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    let w: Vec<_> = entries.iter().filter(|e| e.warmup).collect();
    assert_eq!(w.len(), 240);
    assert!(w.iter().all(|e| e.ok && e.folder.contains("/warmup/")));
    // Their own documents: no warm-up content is ever a measured document's.
    let measured: std::collections::HashSet<_> = entries
        .iter()
        .filter(|e| !e.warmup)
        .map(|e| &e.sha256)
        .collect();
    assert!(w.iter().all(|e| !measured.contains(&e.sha256)));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .env("INGESTBENCH_PASSWORD", "admin")
        .arg("verify")
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("verify.json")).unwrap()).unwrap();
    assert_eq!(v["checked"], 540);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn precision_repeats_runs_until_the_interval_is_within_three_percent() {
    let _one = crate::common::TIMED.lock().await;
    // 4 slots × 50 ms ± 50 %: 80 docs/s on average; long service times keep a loaded
    // machine's scheduling delays small against the modelled jitter, which dominates.
    let (t, _d) = target_with(|cfg| {
        known_capacity(cfg);
        cfg.perf.service_time = Duration::from_millis(50);
        cfg.perf.jitter = 0.5;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        &t.http_url().unwrap(),
        dir.path(),
        &[
            "--docs",
            "48",
            "--runs",
            "3",
            "--precision",
            "3%",
            "--max-runs",
            "60",
            "--warmup",
            "16",
        ],
    )
    .await;
    let h = r.ci95_pct.unwrap();
    eprintln!(
        "{} runs, CV {:.1} %, ±{h:.2} %, {:.1} docs/s",
        r.runs.len(),
        r.cv_pct,
        r.docs_per_sec
    );
    assert!(h <= 3.0, "±{h} % after {} runs", r.runs.len());
    assert!(
        r.runs.len() >= 3 && r.runs.len() < 60,
        "{} runs",
        r.runs.len()
    );
    assert_eq!(r.plan.measure.precision_pct, Some(3.0));
    // Every run was recorded with its own number.
    let nums: Vec<u32> = r.runs.iter().map(|x| x.run).collect();
    assert_eq!(nums, (1..=r.runs.len() as u32).collect::<Vec<_>>());
    assert!(within(r.docs_per_sec, 80.0, 15.0), "{}", r.docs_per_sec);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steady_state_window_counts_only_what_it_acknowledged() {
    let _one = crate::common::TIMED.lock().await;
    let (t, _d) = target_with(known_capacity).await;
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        &t.http_url().unwrap(),
        dir.path(),
        &["--duration", "2s", "--runs", "2", "--warmup", "0.2s"],
    )
    .await;
    eprintln!("{:.1} docs/s over 2 s windows", r.docs_per_sec);
    // The uploads in flight at the deadline (up to one per slot) are not counted: 156 of 160.
    assert!(within(r.docs_per_sec, CAPACITY, 8.0), "{}", r.docs_per_sec);
    for run in &r.runs {
        assert_eq!(run.window_s, Some(2.0));
        assert_eq!(run.duration_s, 2.0);
        // At most one upload per worker can be in flight when the window closes.
        assert!(run.docs_after_window <= 8, "{}", run.docs_after_window);
        assert!(run.warmup_docs > 0);
    }
    // Everything acknowledged, in the window or after it, is in the manifest.
    let run_dir = dir.path().join("results").join(format!("run-{}", r.id));
    let entries =
        ingestbench::results::manifest::Manifest::read(&run_dir.join("manifest.jsonl")).unwrap();
    let ok = entries.iter().filter(|e| e.ok && !e.warmup).count() as u64;
    let late: u64 = r.runs.iter().map(|x| x.docs_after_window).sum();
    assert_eq!(ok, r.docs_ok + late);
    let places: std::collections::HashSet<_> =
        entries.iter().map(|e| (&e.folder, &e.name)).collect();
    assert_eq!(places.len(), entries.len(), "no document uploaded twice");
    let schema = crate::common::result_schema();
    crate::common::assert_valid(&schema, &schema, &serde_json::to_value(&r).unwrap());
}

/// The real node_exporter from Debian, on a free loopback port.
struct NodeExporter {
    child: std::process::Child,
    url: String,
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn node_exporter() -> NodeExporter {
    let bin = "/usr/bin/prometheus-node-exporter";
    assert!(
        std::path::Path::new(bin).exists(),
        "{bin} missing: install the Debian package prometheus-node-exporter (scripts/deps.sh does)"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(bin)
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .args([
            "--collector.disable-defaults",
            "--collector.cpu",
            "--collector.meminfo",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/metrics");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "node_exporter did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    NodeExporter { child, url }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs prometheus-node-exporter (scripts/deps.sh)"]
async fn the_servers_cpu_and_memory_come_from_node_exporter_and_proc() {
    let ne = node_exporter();
    // A target that burns CPU: no modelled sleep, content hashed by the client's verify.
    let (t, _d) = target_with(|_| {}).await;
    let dir = tempfile::tempdir().unwrap();
    let dead = "http://127.0.0.1:9/metrics";
    let r = run(
        &t.http_url().unwrap(),
        dir.path(),
        &[
            "--docs",
            "300",
            "--runs",
            "2",
            "--server-metrics",
            &ne.url,
            "--server-metrics",
            dead,
            "--server-pid",
            &std::process::id().to_string(),
        ],
    )
    .await;
    let by = |n: &str| r.servers.iter().find(|s| s.name.contains(n)).unwrap();
    let host = by(&ne.url);
    assert_eq!(host.source, "node_exporter");
    let share = host.cpu_share.unwrap();
    assert!(share > 0.0 && share <= 1.0, "{share}");
    assert!(host.memory_bytes.unwrap() > 0);
    // This machine is busy with the run: the exporter sees at least the client's CPU.
    assert!(host.cpu_cores.unwrap() > 0.05, "{:?}", host);
    let gone = by(dead);
    assert!(gone.cpu_share.is_none());
    assert!(
        gone.error.as_deref().unwrap().contains("unreachable"),
        "{gone:?}"
    );
    let me = by(&format!("pid {}", std::process::id()));
    assert_eq!(me.source, "proc");
    assert!(me.cpu_cores.unwrap() > 0.0 && me.memory_bytes.unwrap() > 1 << 20);
    let b = r.bottleneck.as_ref().unwrap();
    assert!(
        [
            "client",
            "server_cpu",
            "host_cpu",
            "remote_host",
            "latency_or_serializing"
        ]
        .contains(&b.kind.as_str()),
        "{b:?}"
    );
    let text = ingestbench::report::summary_text(&r);
    assert!(
        text.contains("not read (unreachable") && text.contains("likely limit:"),
        "{text}"
    );
}

/// A target shaped by the Universal Scalability Law (σ 0.05, κ 0.01 over 25 ms, no slots):
/// X(N) = 40N / (1 + 0.05(N−1) + 0.01N(N−1)), which peaks at √(0.95/0.01) ≈ 9.7 threads and
/// 170 docs/s and then falls. A sweep over 1–24 threads finds the retrograde region, and the
/// USL fit recovers σ, κ, the peak thread count and the peak docs/sec.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_usl_fit_recovers_a_known_contention_and_coherency() {
    let _one = crate::common::TIMED.lock().await;
    let (sigma, kappa, cost) = (0.05, 0.01, 0.025);
    let (t, dir) = target_with(|c| {
        c.perf = PerfModel {
            service_time: Duration::from_secs_f64(cost),
            contention: sigma,
            coherency: kappa,
            ..PerfModel::default()
        };
        c.share_prefixes = true;
    })
    .await;
    let results = dir.path().join("results");
    let s = crate::common::sweep_basic(
        &t.http_url().unwrap(),
        dir.path(),
        &results,
        &[
            "--warmup",
            "24",
            "--threads",
            "1,2,4,8,12,16,24",
            "--sizes",
            "small",
            "--docs",
            "144",
            "--runs",
            "2",
        ],
    )
    .await;
    let row = &s.scaling[0];
    let u = row.usl.as_ref().expect("a USL fit over 7 thread counts");
    let truth = |n: f64| n / cost / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    let peak_n = ((1.0 - sigma) / kappa).sqrt();
    let seen: Vec<String> = s
        .cells
        .iter()
        .map(|c| {
            format!(
                "t{} {:.1} (truth {:.1})",
                c.threads,
                c.docs_per_sec,
                truth(c.threads as f64)
            )
        })
        .collect();
    eprintln!("{}\nUSL {u:?}", seen.join("\n"));
    assert!((u.sigma - sigma).abs() < 0.03, "σ {} vs {sigma}", u.sigma);
    assert!(within(u.kappa, kappa, 30.0), "κ {} vs {kappa}", u.kappa);
    let n = u.peak_concurrency.expect("κ > 0: a peak");
    assert!(
        (n - peak_n).abs() < 2.0,
        "peak at {n:.1} threads vs {peak_n:.1}"
    );
    let x = u.peak_docs_per_sec.unwrap();
    assert!(
        within(x, truth(peak_n), 10.0),
        "peak {x:.1} docs/s vs {:.1}",
        truth(peak_n)
    );
    assert!(
        row.scaling.degrades_after_threads.is_some(),
        "the retrograde region is named: {:?}",
        row.scaling
    );
    let findings = ingestbench::report::answers::terminal(&s);
    assert!(
        findings.iter().any(|f| f.contains("makes it worse")),
        "{findings:?}"
    );
}
