//! `--dashboard`: the real binary serves its live page on a free loopback port while a paced
//! import runs against the embedded target; what `/events` carried ends at the result's
//! numbers, a browser that connects late gets the history from the first snapshot, the
//! report is served at the end, and a taken port or a bad address exits 2 before any upload.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli::{bin, text};

/// Reads `/events` until a snapshot says the job finished, or `deadline`; returns the
/// snapshots in order.
async fn events(client: &reqwest::Client, url: &str, deadline: Instant) -> Vec<Value> {
    let mut r = client
        .get(format!("{url}events"))
        .send()
        .await
        .expect("/events answers");
    assert_eq!(
        r.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let (mut buf, mut out) = (String::new(), Vec::<Value>::new());
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(Ok(Some(chunk))) = tokio::time::timeout(left, r.chunk()).await else {
            break;
        };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let ev: String = buf.drain(..end + 2).collect();
            if let Some(data) = ev.lines().find_map(|l| l.strip_prefix("data: ")) {
                out.push(serde_json::from_str(data).expect("a snapshot is JSON"));
            }
        }
        if out.last().is_some_and(|s| s["finished"] == true) {
            break;
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_page_streams_the_run_replays_its_history_and_ends_at_the_result() {
    let _one = crate::common::TIMED.lock().await;
    let dir = tempfile::tempdir().unwrap();
    // 1,000 documents paced at 200/s: about 5 s of uploads, a snapshot a second.
    let mut child = bin()
        .args([
            "run",
            "--warmup",
            "0",
            "--docs",
            "1000",
            "--threads",
            "4",
            "--runs",
            "1",
        ])
        .args([
            "--rate",
            "200",
            "--quiet",
            "--json",
            "--dashboard",
            "127.0.0.1:0",
        ])
        .args(["--dashboard-hold", "3", "--results-dir"])
        .arg(dir.path().join("results"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read as it comes: a result larger than the pipe would otherwise hold the run.
    let mut stdout = child.stdout.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
        v
    });
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.trim().strip_prefix("live page: ") {
                let _ = tx.send(url.to_string());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the live page's URL on stderr");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    let client = ingestbench::reqwest_builder().build().unwrap();
    let page = client.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("EventSource(\"/events\")"), "the page");
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "nothing fetched from elsewhere"
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    let early = {
        let (client, url) = (client.clone(), url.clone());
        tokio::spawn(async move { events(&client, &url, deadline).await })
    };
    tokio::time::sleep(Duration::from_secs(3)).await;
    let late = events(&client, &url, deadline).await;
    let early = early.await.unwrap();
    for (who, snaps) in [("early", &early), ("late", &late)] {
        assert!(snaps.len() >= 3, "{who}: {snaps:?}");
        let seqs: Vec<u64> = snaps.iter().map(|s| s["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs[0], 1, "{who}: from the first snapshot");
        assert!(
            seqs.windows(2).all(|w| w[1] == w[0] + 1),
            "{who}: every snapshot once, in order: {seqs:?}"
        );
    }
    assert_eq!(
        early, late,
        "a late browser sees the same history as one there from the start"
    );
    let last = late.last().unwrap();
    assert_eq!(last["finished"], true, "{last}");
    assert_eq!(last["report"], true, "{last}");
    assert!(
        late.iter().any(|s| s["eta"].is_object()),
        "an ETA while running"
    );
    // The paced schedule while the run is under way: its rate, the documents due so far and
    // those no worker has taken (4 workers keep up with 200/s here: few or none).
    let paced: Vec<&Value> = late.iter().filter_map(|s| s.get("paced")).collect();
    assert!(!paced.is_empty(), "the paced schedule on the page");
    assert!(
        paced
            .iter()
            .all(|p| p["rate_per_s"].as_f64() == Some(200.0)),
        "{paced:?}"
    );
    assert!(
        paced.iter().any(|p| p["due"].as_u64().unwrap_or(0) > 0)
            && paced.iter().all(|p| p["due"].as_u64().unwrap_or(0) <= 1000),
        "{paced:?}"
    );
    // The run, once it ended, with what the resources spent in its window (sent once).
    let runs: Vec<&Value> = late
        .iter()
        .filter_map(|s| s.get("runs_done"))
        .flat_map(|r| r.as_array().unwrap())
        .collect();
    assert_eq!(runs.len(), 1, "one run, sent once: {runs:?}");
    assert_eq!(runs[0]["cell"]["threads"], 4, "{runs:?}");
    assert!(
        runs[0]["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|u| u["busy_pct"].as_f64().is_some())),
        "{runs:?}"
    );
    let report = client.get(format!("{url}report")).send().await.unwrap();
    assert_eq!(report.status(), 200);
    assert!(report.text().await.unwrap().contains("<html"));
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let err = reader.join().unwrap();
    assert!(status.success(), "{err}");
    let r: Value = serde_json::from_slice(&out_reader.join().unwrap()).unwrap();
    let bytes_ok: u64 = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["bytes_ok"].as_u64().unwrap())
        .sum();
    assert_eq!(last["docs_ok"], r["docs_ok"], "{last}");
    assert_eq!(last["docs_failed"], r["docs_failed"], "{last}");
    assert_eq!(last["bytes_ok"].as_u64(), Some(bytes_ok), "{last}");
    assert_eq!(last["done"], 1000);
    assert_eq!(last["total"], 1000);
    // The counts only grow.
    let oks: Vec<u64> = late
        .iter()
        .map(|s| s["docs_ok"].as_u64().unwrap())
        .collect();
    assert!(oks.windows(2).all(|w| w[0] <= w[1]), "{oks:?}");
    // No URL, user or password on the page or in its stream.
    let stream = serde_json::to_string(&late).unwrap();
    for secret in ["admin", "http://127.0.0.1"] {
        assert!(
            !stream.contains(secret) && !page.contains(secret),
            "{secret}"
        );
    }
}

#[test]
fn a_taken_port_or_a_bad_address_exits_2_before_any_upload() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for bad in [addr.as_str(), "not-an-address"] {
        let dir = tempfile::tempdir().unwrap();
        let o = bin()
            .args(["run", "--warmup", "0", "--docs", "20", "--dashboard", bad])
            .arg("--results-dir")
            .arg(dir.path().join("results"))
            .output()
            .unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains(&format!("--dashboard {bad}")),
            "{bad}: names the flag and the address: {err}"
        );
        let runs = std::fs::read_dir(dir.path().join("results"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(runs, 0, "{bad}: nothing written, nothing uploaded");
    }
}

/// `run` of `docs` documents paced at 200/s on 2 workers, its live page on a free loopback
/// port held `hold_s` after the end, results under `dir`: the child and the page's URL.
fn paced_with_page(docs: u32, hold_s: u32, dir: &std::path::Path) -> (std::process::Child, String) {
    let mut child = bin()
        .args(["run", "--warmup", "0", "--threads", "2", "--runs", "1"])
        .args(["--rate", "200", "--quiet", "--dashboard", "127.0.0.1:0"])
        .args(["--docs", &docs.to_string()])
        .args(["--dashboard-hold", &hold_s.to_string(), "--results-dir"])
        .arg(dir.join("results"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .take(50)
        .map_while(Result::ok)
        .find_map(|l| l.trim().strip_prefix("live page: ").map(str::to_string))
        .expect("the live page's URL on stderr");
    (child, url)
}

#[test]
#[ignore = "needs chromium (scripts/deps.sh installs it); scripts/test.sh runs it"]
fn the_live_page_draws_in_headless_chromium_with_no_console_errors() {
    let browser = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("chromium is missing: install the Debian package chromium (scripts/deps.sh does, as root)");
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = paced_with_page(600, 30, dir.path());
    // Opened after the run (3 s of uploads) has ended: the history draws the charts and
    // the page says it finished.
    std::thread::sleep(Duration::from_secs(6));
    let profile = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=4000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(&url)
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let dom = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let console: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("Uncaught")))
        .collect();
    assert!(console.is_empty(), "console errors: {console:?}");
    assert!(dom.contains("Finished at"), "{dom}");
    assert!(dom.contains("href=\"/report\""), "{dom}");
    assert!(dom.matches("<polyline").count() >= 5, "{dom}");
    // The cell's runs as they ended: its chart and its row in the cells' table.
    assert!(dom.contains("<section id=\"sweep\">"), "{dom}");
    assert!(dom.contains("small documents"), "{dom}");
    assert!(dom.contains("<td>2</td>"), "the cell at 2 threads: {dom}");
    // The last run's resources against their capacity, and what limited it.
    assert!(dom.contains("<section id=\"last\">"), "{dom}");
    assert!(dom.contains("this host's CPU"), "{dom}");
    assert!(dom.contains("likely limit: "), "{dom}");
}

/// `a` and `b` hold the same, numbers compared as numbers (the browser writes 0.0 as 0).
fn same_numbers(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_numbers(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_numbers(v, w))
        }
        _ => a == b,
    }
}

/// A free loopback port for Chromium's DevTools (bound, read, released).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `scripts/watch-page.mjs` on `url`: headless Chromium over the DevTools protocol, as ops
/// would open the page, `wait_ms` on it; what the page held, and its console errors.
fn watch_page(url: &str, wait_ms: u64) -> Value {
    // Node 20 and 21 have WebSocket behind a flag; later ones have it built in.
    let v = std::process::Command::new("node")
        .arg("--version")
        .output()
        .expect("node is missing: install Node.js 20 or later (https://nodejs.org; Debian 12's nodejs is 18)");
    let major: u32 = text(&v)
        .0
        .trim_start_matches('v')
        .split('.')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut node = std::process::Command::new("node");
    if major < 22 {
        node.arg("--experimental-websocket");
    }
    let o = node
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/watch-page.mjs"
        ))
        .args([url, &wait_ms.to_string(), &free_port().to_string()])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "watch-page.mjs: {err}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs chromium and node (scripts/deps.sh installs chromium); scripts/test.sh runs it"]
async fn a_browser_opened_mid_run_holds_the_history_and_the_streams_numbers() {
    let dir = tempfile::tempdir().unwrap();
    // 2,400 documents paced at 200/s: 12 s of uploads.
    let (mut child, url) = paced_with_page(2400, 20, dir.path());
    // The stream from the start: what the page's numbers are held against.
    let client = ingestbench::reqwest_builder().build().unwrap();
    let stream = {
        let (client, url) = (client.clone(), url.clone());
        let deadline = Instant::now() + Duration::from_secs(90);
        tokio::spawn(async move { events(&client, &url, deadline).await })
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mid = {
        let url = url.clone();
        tokio::task::spawn_blocking(move || watch_page(&url, 2500))
            .await
            .unwrap()
    };
    let stream = stream.await.unwrap();
    let after = tokio::task::spawn_blocking(move || watch_page(&url, 1500))
        .await
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    for (when, w) in [("mid-run", &mid), ("after the end", &after)] {
        assert_eq!(
            w["errors"],
            serde_json::json!([]),
            "{when}: console errors: {w}"
        );
        let page = &w["page"];
        assert_eq!(
            page["first_seq"], 1,
            "{when}: the history from the start: {w}"
        );
        assert_eq!(
            page["snaps"].as_u64(),
            page["last"]["seq"].as_u64(),
            "{when}: every snapshot once: {w}"
        );
        assert!(
            page["polylines"].as_u64().unwrap() >= 3,
            "{when}: charts: {w}"
        );
        // The page's last snapshot is the stream's of the same moment, number for number.
        let seq = page["last"]["seq"].as_u64().unwrap();
        let same = stream
            .iter()
            .find(|s| s["seq"].as_u64() == Some(seq))
            .unwrap_or_else(|| panic!("{when}: seq {seq} not in the stream"));
        assert!(
            same_numbers(&page["last"], same),
            "{when}: {} vs {same}",
            page["last"]
        );
    }
    // Opened while the run went on: its last snapshot is of a run still going, seconds in
    // (the page's own clock: a browser slow to start on a loaded host must not fail it).
    let page = &mid["page"];
    assert!(
        page["last"]["finished"] == false && page["last"]["t_s"].as_f64().unwrap() >= 3.0,
        "opened while the run went on: {mid}"
    );
    let eta = page["tiles"]["eta"].as_str().unwrap();
    let range = page["tiles"]["etarange"].as_str().unwrap();
    assert!(!["", "?", "–", "done"].contains(&eta), "an ETA: {mid}");
    assert!(range.contains(" – "), "an interval beside the ETA: {mid}");
    assert!(
        page["tiles"]["rates"].as_str().unwrap().contains("overall"),
        "{mid}"
    );
    let page = &after["page"];
    assert_eq!(page["last"]["finished"], true, "{after}");
    assert!(
        page["tiles"]["state"]
            .as_str()
            .unwrap()
            .contains("Finished"),
        "{after}"
    );
    assert_eq!(page["last"]["docs_ok"], 2400, "{after}");
}
