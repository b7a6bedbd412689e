//! Fixed, deterministic sweep data for snapshot tests and benches (no I/O, no clock in the
//! output). Not used by the tool itself.

use std::time::Duration;

use crate::analysis::summary::{SweepSummary, summarize};
use crate::results::{CellKey, CellRun, MethodRecord, SweepPlan};

/// Two methods × five thread counts × 3 runs on a USL-shaped curve, https-lb 10 % slower.
pub fn fixed_summary() -> SweepSummary {
    let methods = ["direct", "https-lb"];
    let plan = SweepPlan {
        schema_version: 1,
        tool: crate::results::Tool {
            name: "ingestbench".into(),
            version: "0.0.0-test".into(),
        },
        id: "20260101T000000Z-abcd".into(),
        started_at: "2026-01-01T00:00:00.000Z".into(),
        seed: 1,
        methods: methods
            .iter()
            .map(|m| MethodRecord {
                name: m.to_string(),
                description: String::new(),
                url: format!("http://{m}/"),
                http_version: crate::transport::HttpVersion::Http1,
                embedded: false,
                connections: vec![crate::transport::ConnectionPolicy::Reuse],
            })
            .collect(),
        connections: vec![crate::transport::ConnectionPolicy::Reuse],
        sizes: vec![(crate::fixtures::SizeClass::Small, 10240)],
        threads: vec![1, 2, 4, 8, 16],
        docs: 100,
        runs: 3,
        order: crate::results::Order::Interleaved,
        baseline: "direct".into(),
        kind: Default::default(),
        properties_per_doc: 0,
        retries: 0,
        corpus_tree: false,
        corpus_names: None,
        rates: Vec::new(),
        corpus: None,
        measure: crate::results::MeasurePolicy {
            warmup: crate::results::Warmup::Auto,
            ..Default::default()
        },
        protocol: crate::protocol_kind::ProtocolKind::Alfresco,
        auth: crate::protocol_kind::AuthMode::Ticket,
        user: "admin".into(),
        parent: "-my-".into(),
        profile: "built-in:acme".into(),
        node_type: "acme:document".into(),
        docs_per_folder: 500,
        versioning: true,
        timeout_s: 60.0,
        host: crate::host::HostFacts {
            hostname: "testhost".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
            kernel: "6.0".into(),
            cpus: 2,
            memory_bytes: 1 << 34,
            upload_runtimes: None,
        },
        shard: None,
    };
    let mut runs = Vec::new();
    for (mi, m) in methods.iter().enumerate() {
        for &t in &plan.threads {
            for r in 1..=3u32 {
                // A USL-shaped curve; https-lb ~10 % slower; small run-to-run spread.
                let x = 100.0 * t as f64
                    / (1.0 + 0.05 * (t as f64 - 1.0) + 0.002 * (t * (t - 1)) as f64)
                    * (1.0 - 0.1 * mi as f64)
                    * (1.0 + 0.01 * (r as f64 - 2.0));
                let mut rec = crate::metrics::Recorder::new();
                let now = std::time::Instant::now();
                for k in 0..100u64 {
                    rec.record_ok(
                        Duration::from_micros(1000 * t + 10 * k + 100 * mi as u64),
                        10240,
                        now,
                    );
                }
                rec.record_node("node1");
                let duration = Duration::from_secs_f64(100.0 / x);
                let o = crate::results::RunMeasurement {
                    cpu_at_start_s: None,
                    paced: None,
                    readers: None,
                    started_unix_ms: 0,
                    go_unix_ms: None,
                    start_skew_ms: None,
                    progress_s: Vec::new(),
                    timeline: Vec::new(),
                    run: r,
                    duration,
                    recorder: rec.clone(),
                    folder: format!("f/{m}/{t}/{r}"),
                    fatal: None,
                    new_connections: 4,
                    upload_runtimes: None,
                    warmup_ok: 20,
                    warmup_failed: 0,
                    warmup_s: None,
                    warmup_settled: None,
                    docs_after_window: 0,
                    window_s: None,
                    servers: Vec::new(),
                    resources: None,
                };
                runs.push(CellRun {
                    cell: CellKey {
                        method: m.to_string(),
                        connection: crate::transport::ConnectionPolicy::Reuse,
                        size: crate::fixtures::SizeClass::Small,
                        threads: t,
                        rate_per_s: None,
                    },
                    record: crate::results::run_record(&o),
                    latency_histogram_us: crate::metrics::encode_hist(&rec.latency_us),
                    client_cpu_s: 0.1,
                });
            }
        }
    }
    summarize(&plan, &runs)
}
