//! `--jtl` checked by the real JMeter: its dashboard generator (`jmeter -g`, JMeter 5.6.3
//! from Maven Central through scripts/jmeter.sh) reads the file, and its statistics agree
//! with ingestbench's result (samples, errors, throughput).

use std::path::Path;
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and mvn (scripts/deps.sh) and JMeter from Maven Central (scripts/jmeter.sh); scripts/test.sh runs it"]
async fn jmeters_dashboard_reads_the_jtl_and_agrees_with_the_result() {
    let _one = crate::common::TIMED.lock().await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = Command::new("bash")
        .arg(root.join("scripts/jmeter.sh"))
        .arg("home")
        .output()
        .unwrap();
    assert!(
        home.status.success(),
        "JMeter could not be installed: {}",
        String::from_utf8_lossy(&home.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let jtl = dir.path().join("uploads.jtl");
    let o = Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(["run", "--docs", "2000", "--threads", "4", "--runs", "1"])
        .args(["--warmup", "0", "--quiet", "--json", "--jtl"])
        .arg(&jtl)
        .arg("--results-dir")
        .arg(dir.path().join("results"))
        .env_remove("INGESTBENCH_PASSWORD")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let dash = dir.path().join("dashboard");
    let g = Command::new("bash")
        .arg(root.join("scripts/jmeter.sh"))
        .arg("dashboard")
        .arg(&jtl)
        .arg(&dash)
        .output()
        .unwrap();
    assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
    assert!(dash.join("index.html").is_file());
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dash.join("statistics.json")).unwrap())
            .unwrap();
    let total = &stats["Total"];
    let label = &stats["direct_reuse_small_t4"];
    assert_eq!(
        total["sampleCount"], label["sampleCount"],
        "one label per cell"
    );
    let ok = r["docs_ok"].as_u64().unwrap();
    let failed = r["docs_failed"].as_u64().unwrap();
    assert_eq!(total["sampleCount"].as_u64().unwrap(), ok + failed);
    assert_eq!(total["errorCount"].as_u64().unwrap(), failed);
    let theirs = total["throughput"].as_f64().unwrap();
    let ours = r["docs_per_sec"].as_f64().unwrap();
    eprintln!("JMeter's throughput {theirs:.1}/s, ingestbench's docs/sec {ours:.1}");
    assert!(
        (theirs / ours - 1.0).abs() < 0.05,
        "JMeter {theirs:.1}/s vs ingestbench {ours:.1}/s"
    );
}
