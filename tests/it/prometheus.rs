//! `--metrics-listen` scraped by the real Prometheus server (Debian's `prometheus`, started on
//! loopback by the test): its query API returns the counts of the final result.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the server when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The value of an instant query (a single series), or None when it has none yet.
async fn query(client: &reqwest::Client, web: u16, q: &str) -> Option<f64> {
    let r: serde_json::Value = client
        .get(format!("http://127.0.0.1:{web}/api/v1/query"))
        .query(&[("query", q)])
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    r["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs prometheus (scripts/deps.sh installs it); scripts/test.sh runs it"]
async fn prometheus_scrapes_the_live_metrics_and_they_end_at_the_result() {
    let _one = crate::common::TIMED.lock().await;
    assert!(
        Command::new("prometheus").arg("--version").output().is_ok(),
        "prometheus is missing: apt-get install prometheus (scripts/deps.sh)"
    );
    let dir = tempfile::tempdir().unwrap();
    let (metrics, web) = (crate::common::free_port(), crate::common::free_port());
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: ingestbench\n    static_configs:\n      - targets: ['127.0.0.1:{metrics}']\n"
        ),
    )
    .unwrap();
    let _prom = Server(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{web}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let client = ingestbench::reqwest_builder().build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = client
            .get(format!("http://127.0.0.1:{web}/-/ready"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "prometheus did not become ready");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Ready is not scraping: the scrape loop starts once discovery has delivered the target
    // (about 5 s after start), and a quick run with its hold can end before that.
    loop {
        let targets: serde_json::Value = match client
            .get(format!("http://127.0.0.1:{web}/api/v1/targets"))
            .send()
            .await
        {
            Ok(r) => r.json().await.unwrap_or_default(),
            Err(_) => serde_json::Value::Null,
        };
        let listed = targets["data"]["activeTargets"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
        if listed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "prometheus never listed the scrape target"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let o = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_ingestbench"))
            .args(["run", "--docs", "1500", "--threads", "4", "--runs", "2"])
            .args(["--warmup", "0", "--quiet", "--json", "--metrics-listen"])
            .arg(format!("127.0.0.1:{metrics}"))
            .args(["--metrics-hold", "4", "--results-dir"])
            .arg(dir.path().join("results"))
            .env_remove("INGESTBENCH_PASSWORD")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let docs_ok = r["docs_ok"].as_f64().unwrap();
    let bytes_ok: f64 = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["bytes_ok"].as_f64().unwrap())
        .sum();
    let sel = r#"{job="ingestbench",method="direct",size="small",threads="4"}"#;
    let ok = r#"max_over_time(ingestbench_documents_total{job="ingestbench",outcome="ok"}[5m])"#;
    let count = format!("max_over_time(ingestbench_upload_latency_seconds_count{sel}[5m])");
    let bytes = format!("max_over_time(ingestbench_document_bytes_total{sel}[5m])");
    let failed =
        r#"sum(max_over_time(ingestbench_documents_total{job="ingestbench",outcome!="ok"}[5m]))"#;
    for (q, want) in [
        (ok, docs_ok),
        (&count, docs_ok),
        (&bytes, bytes_ok),
        (failed, 0.0),
    ] {
        assert_eq!(settled(&client, web, q, want).await, Some(want), "{q}");
    }
}

/// The query's value once it is `want`, or what it last was after 10 s (the last scrape
/// can still be on its way into the store when the run ends).
async fn settled(client: &reqwest::Client, web: u16, q: &str, want: f64) -> Option<f64> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = query(client, web, q).await;
        if got == Some(want) || Instant::now() >= deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
