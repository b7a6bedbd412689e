//! Shared test helpers: a JSON-Schema/Swagger subset validator (type, required, properties,
//! items, enum, $ref, additionalProperties, date-time format), spec loading, and an
//! embedded target on port 0 with its own temp dir.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

/// `tests/specs/<rel>`: the in-repo copies of the API definitions (see tests/specs/README.md).
pub fn spec(rel: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/specs")
        .join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the API spec {} is required for contract tests: {e}",
            path.display()
        )
    });
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).expect("spec is YAML");
    serde_json::to_value(yaml).expect("YAML to JSON")
}

pub fn result_schema() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/run-result.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn resolve<'a>(root: &'a Value, r: &str) -> &'a Value {
    let mut cur = root;
    for seg in r.trim_start_matches("#/").split('/') {
        cur = cur
            .get(seg)
            .unwrap_or_else(|| panic!("unresolved $ref {r}"));
    }
    cur
}

/// Validates `v` against `schema` (resolving `$ref`s in `root`); returns the problems.
pub fn validate(root: &Value, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return validate(root, resolve(root, r), v, at, out);
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for s in all {
            validate(root, s, v, at, out);
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => true,
        });
        if !ok {
            out.push(format!("{at}: expected {types:?}, got {v}"));
            return;
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        out.push(format!("{at}: {v} not in {e:?}"));
    }
    if schema.get("format").and_then(Value::as_str) == Some("date-time")
        && let Some(s) = v.as_str()
        && ingestbench::timefmt::parse_iso(s).is_none()
    {
        out.push(format!("{at}: `{s}` is not a date-time"));
    }
    if let Some(obj) = v.as_object() {
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let k = r.as_str().unwrap();
            if !obj.contains_key(k) {
                out.push(format!("{at}: missing required `{k}`"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(root, s, val, &format!("{at}.{k}"), out),
                None => {
                    if let Some(ap) = schema.get("additionalProperties")
                        && ap.is_object()
                    {
                        validate(root, ap, val, &format!("{at}.{k}"), out);
                    }
                }
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            validate(root, items, item, &format!("{at}[{i}]"), out);
        }
    }
}

pub fn assert_valid(root: &Value, schema: &Value, v: &Value) {
    let mut problems = Vec::new();
    validate(root, schema, v, "$", &mut problems);
    assert!(
        problems.is_empty(),
        "schema violations:\n{}",
        problems.join("\n")
    );
}

/// Tests that measure time, and tests that load the machine with several processes, run one
/// at a time (each holds this), so the second kind never skews the first on 2 cores.
pub static TIMED: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// An embedded target on 127.0.0.1:0 with a temp store (kept alive by the returned dir).
pub async fn target() -> (ingestbench::emulator::EmulatorHandle, tempfile::TempDir) {
    target_with(|_| {}).await
}

pub async fn target_with(
    f: impl FnOnce(&mut ingestbench::emulator::EmulatorConfig),
) -> (ingestbench::emulator::EmulatorHandle, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ingestbench::emulator::EmulatorConfig::local(dir.path().join("store"));
    f(&mut cfg);
    (ingestbench::emulator::start(cfg).await.unwrap(), dir)
}

/// A file holding `password`, for --password-file.
pub fn password_file(dir: &std::path::Path, password: &str) -> PathBuf {
    let p = dir.join("password");
    std::fs::write(&p, format!("{password}\n")).unwrap();
    p
}

/// One request a [`capture`] server saw: method, path, lower-cased headers, body.
pub type Seen =
    std::sync::Arc<std::sync::Mutex<Vec<(String, String, Vec<(String, String)>, bytes::Bytes)>>>;

/// A raw HTTP/1.1 listener on 127.0.0.1:0 that records every request and answers with
/// `reply(method, path, n)` = (status line, JSON body); n counts requests from 0.
pub async fn capture(reply: fn(&str, &str, u64) -> (&'static str, String)) -> (String, Seen) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let seen: Seen = Default::default();
    let s2 = seen.clone();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = l.accept().await.unwrap();
            let (seen, count) = (s2.clone(), count.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let head_end = loop {
                        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break p;
                        }
                        let mut chunk = [0u8; 65536];
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let mut lines = head.split("\r\n");
                    let mut rl = lines.next().unwrap().split(' ');
                    let (method, path) = (
                        rl.next().unwrap().to_string(),
                        rl.next().unwrap().to_string(),
                    );
                    let headers: Vec<(String, String)> = lines
                        .filter_map(|l| l.split_once(':'))
                        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                        .collect();
                    let len: usize = headers
                        .iter()
                        .find(|(k, _)| k == "content-length")
                        .map_or(0, |(_, v)| v.parse().unwrap());
                    while buf.len() < head_end + 4 + len {
                        let mut chunk = [0u8; 65536];
                        let n = sock.read(&mut chunk).await.unwrap();
                        assert!(n > 0, "body shorter than Content-Length");
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    let body =
                        bytes::Bytes::copy_from_slice(&buf[head_end + 4..head_end + 4 + len]);
                    buf.drain(..head_end + 4 + len);
                    let (status, reply) = reply(
                        &method,
                        &path,
                        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                    );
                    seen.lock().unwrap().push((method, path, headers, body));
                    let resp = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
                        reply.len()
                    );
                    if sock.write_all(resp.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

/// A free loopback port (for a server a test starts).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An access-methods directory under `dir` holding `direct.toml`: the method `direct` at
/// `url`. Returns the directory.
pub fn direct_method(dir: &std::path::Path, url: &str) -> PathBuf {
    let methods = dir.join("methods");
    std::fs::create_dir_all(&methods).unwrap();
    std::fs::write(
        methods.join("direct.toml"),
        format!("name = \"direct\"\nurl = \"{url}\"\n"),
    )
    .unwrap();
    methods
}

/// A target of `slots` × `ms`: a capacity of slots × 1000 / ms documents per second (content
/// kept as shared prefixes, so the store's own work stays inside the modelled time).
pub fn capacity(slots: usize, ms: u64) -> impl FnOnce(&mut ingestbench::emulator::EmulatorConfig) {
    move |cfg: &mut ingestbench::emulator::EmulatorConfig| {
        cfg.perf = ingestbench::emulator::PerfModel {
            service_time: std::time::Duration::from_millis(ms),
            max_concurrent: slots,
            ..ingestbench::emulator::PerfModel::default()
        };
        cfg.share_prefixes = true;
    }
}

/// `ingestbench SUB --quiet --profile basic`, password `admin` (a file under `dir`), results in
/// `results`, then `args`, parsed.
fn basic_command(
    sub: &str,
    dir: &std::path::Path,
    results: &std::path::Path,
    args: &[&str],
) -> ingestbench::cli::Command {
    let pw = password_file(dir, "admin");
    let (pw, results) = (pw.to_str().unwrap(), results.to_str().unwrap());
    let head = ["ingestbench", sub, "--quiet", "--profile", "basic"];
    let tail = ["--password-file", pw, "--results-dir", results];
    let v = [&head[..], &tail[..], args].concat();
    <ingestbench::cli::Cli as clap::Parser>::try_parse_from(v)
        .unwrap()
        .command
}

/// `ingestbench run` in-process against `url` (see `basic_command`; results under
/// `dir/results`): its outcome and result.
pub async fn run_basic(
    url: &str,
    dir: &std::path::Path,
    args: &[&str],
) -> (ingestbench::Outcome, ingestbench::report::RunResult) {
    let args = [&["--url", url], args].concat();
    match basic_command("run", dir, &dir.join("results"), &args) {
        ingestbench::cli::Command::Run(a) => ingestbench::run_command(&a).await.unwrap(),
        _ => unreachable!(),
    }
}

/// `ingestbench sweep` in-process over one `direct` method to `url` (its file under `dir`; see
/// `basic_command`): the summary.
pub async fn sweep_basic(
    url: &str,
    dir: &std::path::Path,
    results: &std::path::Path,
    args: &[&str],
) -> ingestbench::analysis::summary::SweepSummary {
    let methods = direct_method(dir, url);
    let method = ["--access-methods", "direct", "--access-methods-dir"];
    let args = [&method[..], &[methods.to_str().unwrap()], args].concat();
    match basic_command("sweep", dir, results, &args) {
        ingestbench::cli::Command::Sweep(a) => ingestbench::sweep_command(&a).await.unwrap().1,
        _ => unreachable!(),
    }
}

/// `ingestbench estimate --corpus corpus.json RESULTS --json` in `dir`: the estimate's JSON
/// and what it printed on stderr; a non-zero exit fails the test with that stderr.
pub fn estimate_json(dir: &std::path::Path, results: &std::path::Path) -> (Value, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ingestbench"))
        .args(["estimate", "--corpus", "corpus.json"])
        .arg(results)
        .arg("--json")
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "estimate {}: {err}", results.display());
    (serde_json::from_slice(&o.stdout).unwrap(), err)
}

/// The summary of the fixed, deterministic sweep in `tests/data/fixed-sweep` (two methods ×
/// five thread counts × 3 runs on a USL-shaped curve) that the snapshot tests render.
pub fn fixed_summary() -> ingestbench::analysis::summary::SweepSummary {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixed-sweep");
    let (plan, runs) = ingestbench::results::load_dir(&dir).expect("tests/data/fixed-sweep loads");
    ingestbench::analysis::summary::summarize(&plan, &runs)
}
