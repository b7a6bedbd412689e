//! `--metrics-listen ADDR:PORT`: live metrics for Prometheus while ingestbench runs, in the
//! OpenMetrics text format (encoded with the `prometheus-client` crate), per cell (labels
//! method, connection, size, threads):
//!
//! - `ingestbench_documents_total{outcome}`: measured documents, `ok` or the error class;
//! - `ingestbench_document_bytes_total`: bytes of the documents acknowledged;
//! - `ingestbench_upload_latency_seconds`: a histogram of the measured uploads' latency;
//! - `ingestbench_workers_in_flight`: workers uploading now.
//!
//! Documents acknowledged after a steady-state window and warm-up documents are not counted,
//! so the counters end equal to the result's. Workers only add to atomics (no lock, no
//! allocation per upload); a scrape reads them. The cell table is locked once per run.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

use crate::metrics::ErrorClass;
use crate::results::CellKey;

/// Upper bounds of the latency buckets, seconds (+Inf implied).
pub const BOUNDS: [f64; 15] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// The error classes counted, in the order of [`CellReading::failed`].
pub const CLASSES: [ErrorClass; 7] = [
    ErrorClass::Connect,
    ErrorClass::Tls,
    ErrorClass::Timeout,
    ErrorClass::Http4xx,
    ErrorClass::Http5xx,
    ErrorClass::Protocol,
    ErrorClass::Io,
];

/// One cell's counters (shared by its workers, run after run).
#[derive(Debug, Default)]
pub struct CellCounters {
    ok: AtomicU64,
    failed: [AtomicU64; 7],
    bytes: AtomicU64,
    /// Per bucket (not cumulative); the last is +Inf.
    buckets: [AtomicU64; 16],
    sum_us: AtomicU64,
    in_flight: AtomicI64,
}

impl CellCounters {
    /// A measured upload that was acknowledged.
    pub fn ok(&self, bytes: u64, latency: Duration) {
        self.ok.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        let s = latency.as_secs_f64();
        let k = BOUNDS.iter().position(|b| s <= *b).unwrap_or(BOUNDS.len());
        self.buckets[k].fetch_add(1, Ordering::Relaxed);
        self.sum_us
            .fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
    }

    /// A measured upload that failed.
    pub fn failed(&self, class: ErrorClass) {
        let k = CLASSES.iter().position(|c| *c == class).unwrap_or(6);
        self.failed[k].fetch_add(1, Ordering::Relaxed);
    }

    /// A worker starts (+1) or ends (-1) its measured uploads.
    pub fn worker(&self, delta: i64) {
        self.in_flight.fetch_add(delta, Ordering::Relaxed);
    }
}

/// What a cell's counters held when read (on a timer, never per upload).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CellReading {
    pub ok: u64,
    /// By [`CLASSES`].
    pub failed: [u64; 7],
    pub bytes: u64,
    /// Per bucket of [`BOUNDS`] (not cumulative); the last is +Inf.
    pub buckets: [u64; 16],
    pub in_flight: i64,
}

impl CellCounters {
    /// The counters now.
    pub fn read(&self) -> CellReading {
        CellReading {
            ok: self.ok.load(Ordering::Relaxed),
            failed: std::array::from_fn(|k| self.failed[k].load(Ordering::Relaxed)),
            bytes: self.bytes.load(Ordering::Relaxed),
            buckets: std::array::from_fn(|k| self.buckets[k].load(Ordering::Relaxed)),
            in_flight: self.in_flight.load(Ordering::Relaxed),
        }
    }
}

/// Every cell's counters, by cell.
#[derive(Debug, Default)]
pub struct LiveMetrics {
    cells: Mutex<BTreeMap<CellKey, Arc<CellCounters>>>,
}

type Labels = Vec<(&'static str, String)>;

/// A cell's labels; a rates sweep's cells also carry their `rate_per_s`, so each cell is
/// one series.
fn labels(c: &CellKey) -> Labels {
    let mut l = vec![
        ("method", c.method.clone()),
        ("connection", c.connection.name().to_string()),
        ("size", c.size.name().to_string()),
        ("threads", c.threads.to_string()),
    ];
    if let Some(r) = c.rate_per_s {
        l.push(("rate_per_s", r.to_string()));
    }
    l
}

impl LiveMetrics {
    /// The counters of `cell` (called once per run, never per upload).
    pub fn cell(&self, cell: &CellKey) -> Arc<CellCounters> {
        let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        cells.entry(cell.clone()).or_default().clone()
    }

    /// Every cell's counters now (the table is locked once, to copy it).
    pub fn readings(&self) -> Vec<(CellKey, CellReading)> {
        let cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        cells.iter().map(|(k, c)| (k.clone(), c.read())).collect()
    }

    /// The OpenMetrics text of every cell's counters.
    pub fn render(self: &Arc<Self>) -> Result<String> {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(self.clone()));
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry)?;
        Ok(out)
    }
}

impl prometheus_client::collector::Collector for LiveMetrics {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        let cells: Vec<(CellKey, Arc<CellCounters>)> = self
            .cells
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut m = enc.encode_descriptor(
            "ingestbench_documents",
            "Measured documents by outcome: ok, or the error class",
            None,
            MetricType::Counter,
        )?;
        for (cell, c) in &cells {
            let l = labels(cell);
            let ok = [&l[..], &[("outcome", "ok".to_string())]].concat();
            m.encode_family(&ok)?
                .encode_counter::<NoLabelSet, _, u64>(&c.ok.load(Ordering::Relaxed), None)?;
            for (k, class) in CLASSES.iter().enumerate() {
                let failed = [&l[..], &[("outcome", class.name().to_string())]].concat();
                m.encode_family(&failed)?
                    .encode_counter::<NoLabelSet, _, u64>(
                        &c.failed[k].load(Ordering::Relaxed),
                        None,
                    )?;
            }
        }
        let mut m = enc.encode_descriptor(
            "ingestbench_document_bytes",
            "Bytes of the documents acknowledged",
            None,
            MetricType::Counter,
        )?;
        for (cell, c) in &cells {
            m.encode_family(&labels(cell))?
                .encode_counter::<NoLabelSet, _, u64>(&c.bytes.load(Ordering::Relaxed), None)?;
        }
        let mut m = enc.encode_descriptor(
            "ingestbench_upload_latency_seconds",
            "Latency of the acknowledged measured uploads",
            None,
            MetricType::Histogram,
        )?;
        for (cell, c) in &cells {
            // Per bucket: the encoder makes them cumulative.
            let mut count = 0;
            let mut buckets = Vec::with_capacity(16);
            for (k, n) in c.buckets.iter().enumerate() {
                let n = n.load(Ordering::Relaxed);
                count += n;
                buckets.push((BOUNDS.get(k).copied().unwrap_or(f64::MAX), n));
            }
            let sum = c.sum_us.load(Ordering::Relaxed) as f64 / 1e6;
            m.encode_family(&labels(cell))?
                .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
        let mut m = enc.encode_descriptor(
            "ingestbench_workers_in_flight",
            "Workers uploading now",
            None,
            MetricType::Gauge,
        )?;
        for (cell, c) in &cells {
            m.encode_family(&labels(cell))?
                .encode_gauge(&c.in_flight.load(Ordering::Relaxed))?;
        }
        Ok(())
    }
}

/// The `/metrics` response: the OpenMetrics text (or the error, 500).
pub fn metrics_response(
    metrics: &Arc<LiveMetrics>,
) -> hyper::http::Result<hyper::Response<http_body_util::Full<bytes::Bytes>>> {
    let (status, body) = match metrics.render() {
        Ok(text) => (200, text),
        Err(e) => (500, format!("{e:#}\n")),
    };
    hyper::Response::builder()
        .status(status)
        .header(
            "content-type",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
}

/// Serves `/metrics` (and `/`) on `addr` until the returned task is aborted.
pub async fn serve(addr: &str, metrics: Arc<LiveMetrics>) -> Result<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("--metrics-listen {addr}: cannot listen there (give a free HOST:PORT)")
    })?;
    Ok(tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |_req| {
                    let metrics = metrics.clone();
                    async move { metrics_response(&metrics) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                    .await;
            });
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::SizeClass;
    use crate::transport::ConnectionPolicy;

    #[test]
    fn counters_render_as_openmetrics() {
        let m = Arc::new(LiveMetrics::default());
        let cell = CellKey {
            method: "direct".into(),
            connection: ConnectionPolicy::Reuse,
            size: SizeClass::Small,
            threads: 4,
            rate_per_s: None,
        };
        let c = m.cell(&cell);
        c.ok(10_240, Duration::from_millis(3));
        c.ok(10_240, Duration::from_millis(30));
        c.failed(ErrorClass::Http5xx);
        c.worker(4);
        let text = m.render().unwrap();
        let l = r#"method="direct",connection="reuse",size="small",threads="4""#;
        for want in [
            format!("ingestbench_documents_total{{{l},outcome=\"ok\"}} 2"),
            format!("ingestbench_documents_total{{{l},outcome=\"http_5xx\"}} 1"),
            format!("ingestbench_document_bytes_total{{{l}}} 20480"),
            format!("ingestbench_upload_latency_seconds_count{{{l}}} 2"),
            format!("ingestbench_upload_latency_seconds_bucket{{le=\"0.005\",{l}}} 1"),
            format!("ingestbench_upload_latency_seconds_bucket{{le=\"0.05\",{l}}} 2"),
            format!("ingestbench_upload_latency_seconds_bucket{{le=\"+Inf\",{l}}} 2"),
            format!("ingestbench_workers_in_flight{{{l}}} 4"),
        ] {
            assert!(text.contains(&want), "{want} not in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
        // A rates sweep's cells are series of their own.
        m.cell(&CellKey {
            rate_per_s: Some(40.0),
            ..cell.clone()
        })
        .worker(2);
        let text = m.render().unwrap();
        assert!(
            text.contains(&format!(
                "ingestbench_workers_in_flight{{{l},rate_per_s=\"40\"}} 2"
            )),
            "{text}"
        );
    }
}
