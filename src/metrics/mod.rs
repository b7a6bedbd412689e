//! Measurement: per-worker recorders (HDR latency histogram, counters, classified errors),
//! exact merging, and the summaries reports are made of. No I/O, no clocks of its own:
//! callers hand in durations and instants (timing semantics are written down in
//! `engine::cell`). What the servers, the client and the hosts spent over a run's window is
//! recorded in `resources` and `servers`; the top-level `sampler` reads it.

pub mod exposition;
pub mod jtl;
pub mod probe;
pub mod resources;
pub mod servers;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use serde::{Deserialize, Serialize};

/// Latencies are recorded in microseconds, from 1 µs to 1 hour, 3 significant digits.
const HIST_MAX_US: u64 = 3_600_000_000;

/// What went wrong with one upload, coarsely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// TCP connection could not be made (refused, unreachable, DNS).
    Connect,
    /// TLS handshake or certificate failure.
    Tls,
    /// The request did not complete within `--timeout`.
    Timeout,
    /// The server answered 4xx.
    #[serde(rename = "http_4xx")]
    Http4xx,
    /// The server answered 5xx.
    #[serde(rename = "http_5xx")]
    Http5xx,
    /// An answer that breaks the API contract (unexpected status, missing id, not JSON).
    Protocol,
    /// The connection failed while sending or receiving (reset, closed early).
    Io,
}

impl ErrorClass {
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Connect => "connect",
            ErrorClass::Tls => "tls",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Http4xx => "http_4xx",
            ErrorClass::Http5xx => "http_5xx",
            ErrorClass::Protocol => "protocol",
            ErrorClass::Io => "io",
        }
    }
}

/// A failed upload, as data.
#[derive(Debug, Clone)]
pub struct UploadError {
    pub class: ErrorClass,
    pub status: Option<u16>,
    pub message: String,
}

impl UploadError {
    pub fn http(status: u16, message: String) -> UploadError {
        let class = if status >= 500 {
            ErrorClass::Http5xx
        } else if status >= 400 {
            ErrorClass::Http4xx
        } else {
            ErrorClass::Protocol
        };
        UploadError {
            class,
            status: Some(status),
            message,
        }
    }
    /// The request may have been processed: a timeout, a connection lost after sending, a
    /// 5xx. A retry must look the document up first.
    pub fn ambiguous(&self) -> bool {
        matches!(
            self.class,
            ErrorClass::Timeout | ErrorClass::Io | ErrorClass::Http5xx
        )
    }
    /// Worth another attempt: ambiguous, or nothing reached the server (connect), or 429.
    pub fn retryable(&self) -> bool {
        self.ambiguous() || self.class == ErrorClass::Connect || self.status == Some(429)
    }
    pub fn protocol(message: impl Into<String>) -> UploadError {
        UploadError {
            class: ErrorClass::Protocol,
            status: None,
            message: message.into(),
        }
    }
    /// Classifies a transport error from the HTTP client.
    pub fn transport(e: &reqwest::Error) -> UploadError {
        let chain = error_chain(e);
        let lower = chain.to_ascii_lowercase();
        let class = if e.is_timeout() {
            ErrorClass::Timeout
        } else if lower.contains("certificate")
            || lower.contains("tls")
            || lower.contains("handshake")
            || has_rustls_source(e)
        {
            ErrorClass::Tls
        } else if e.is_connect() {
            ErrorClass::Connect
        } else {
            ErrorClass::Io
        };
        UploadError {
            class,
            status: None,
            message: chain,
        }
    }
}

fn has_rustls_source(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.downcast_ref::<rustls::Error>().is_some() {
            return true;
        }
        cur = err.source();
    }
    false
}

/// `outer: inner: innermost`, for error messages.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(err) = cur {
        let m = err.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = err.source();
    }
    s
}

/// Count of one kind of error with the first message seen.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorSummary {
    pub class: ErrorClass,
    /// HTTP status, when the server answered.
    pub status: Option<u16>,
    pub count: u64,
    /// The first message seen for this class and status.
    pub sample: String,
}

/// What one worker (or a merge of workers) measured.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Latency of successful uploads, µs.
    pub latency_us: Histogram<u64>,
    pub docs_ok: u64,
    pub docs_failed: u64,
    /// Document bytes acknowledged by the server.
    pub bytes_ok: u64,
    /// When the last upload (success or failure) completed.
    pub last_done: Option<Instant>,
    errors: BTreeMap<(ErrorClass, Option<u16>), (u64, String)>,
    /// Successful uploads per backend node (from the node header); empty when unknown.
    pub nodes: BTreeMap<String, u64>,
    /// Extra attempts made (`--retries`); a document still counts once.
    pub retries: u64,
    /// Documents found already stored by the lookup after an ambiguous failure.
    pub recovered: u64,
    /// Earlier versions uploaded before the head of acknowledged documents (a corpus's
    /// `.vN` files): a document with 5 versions is one document and 5 versions here.
    pub versions_ok: u64,
    /// Folders the run created (a recreated corpus tree, or the numbered folders).
    pub folders_created: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder {
            latency_us: Histogram::new_with_bounds(1, HIST_MAX_US, 3)
                .expect("valid histogram bounds"),
            docs_ok: 0,
            docs_failed: 0,
            bytes_ok: 0,
            last_done: None,
            errors: BTreeMap::new(),
            nodes: BTreeMap::new(),
            retries: 0,
            recovered: 0,
            versions_ok: 0,
            folders_created: 0,
        }
    }

    pub fn record_ok(&mut self, latency: Duration, bytes: u64, done: Instant) {
        self.latency_us
            .saturating_record((latency.as_micros() as u64).clamp(1, HIST_MAX_US));
        self.docs_ok += 1;
        self.bytes_ok += bytes;
        self.last_done = Some(done);
    }

    pub fn record_node(&mut self, node: &str) {
        if let Some(n) = self.nodes.get_mut(node) {
            *n += 1;
        } else {
            self.nodes.insert(node.to_string(), 1);
        }
    }

    pub fn record_err(&mut self, err: UploadError, done: Instant) {
        self.docs_failed += 1;
        self.last_done = Some(done);
        self.errors
            .entry((err.class, err.status))
            .or_insert((0, err.message))
            .0 += 1;
    }

    /// Exact merge: histograms add bucket by bucket, counters add.
    pub fn merge(&mut self, other: &Recorder) {
        self.latency_us
            .add(&other.latency_us)
            .expect("same histogram bounds");
        self.docs_ok += other.docs_ok;
        self.docs_failed += other.docs_failed;
        self.bytes_ok += other.bytes_ok;
        self.retries += other.retries;
        self.recovered += other.recovered;
        self.versions_ok += other.versions_ok;
        self.folders_created += other.folders_created;
        self.last_done = match (self.last_done, other.last_done) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        for (k, (n, sample)) in &other.errors {
            self.errors.entry(*k).or_insert((0, sample.clone())).0 += n;
        }
        for (k, n) in &other.nodes {
            *self.nodes.entry(k.clone()).or_insert(0) += n;
        }
    }

    /// Adds counted errors (merging recorded results, e.g. shards).
    pub fn add_errors(&mut self, errors: &[ErrorSummary]) {
        for e in errors {
            self.errors
                .entry((e.class, e.status))
                .or_insert((0, e.sample.clone()))
                .0 += e.count;
        }
    }

    pub fn errors(&self) -> Vec<ErrorSummary> {
        self.errors
            .iter()
            .map(|((class, status), (count, sample))| ErrorSummary {
                class: *class,
                status: *status,
                count: *count,
                sample: sample.clone(),
            })
            .collect()
    }

    pub fn latency(&self) -> LatencyMs {
        LatencyMs::from_hist(&self.latency_us)
    }
}

/// Latency summary of successful uploads, milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LatencyMs {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    /// Standard deviation σ of the latencies, and 2σ (the seed studies' spread).
    #[serde(default)]
    pub stddev: f64,
    #[serde(default)]
    pub two_sigma: f64,
}

impl LatencyMs {
    pub fn from_hist(h: &Histogram<u64>) -> LatencyMs {
        if h.is_empty() {
            return LatencyMs::default();
        }
        let ms = |us: u64| round3(us as f64 / 1000.0);
        LatencyMs {
            min: ms(h.min()),
            mean: round3(h.mean() / 1000.0),
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
            stddev: round3(h.stdev() / 1000.0),
            two_sigma: round3(2.0 * h.stdev() / 1000.0),
        }
    }
}

pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// HDR histogram in the standard V2 encoding, base64: merge across machines exactly.
pub fn encode_hist(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut buf)
        .expect("serialize to memory");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

pub fn decode_hist(s: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(s)?;
    Ok(Deserializer::new().deserialize(&mut bytes.as_slice())?)
}

/// Mean and sample standard deviation (n-1); σ = 0 for fewer than two values.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_exact() {
        let now = Instant::now();
        let mut a = Recorder::new();
        let mut b = Recorder::new();
        let mut all = Recorder::new();
        for i in 1..=1000u64 {
            let d = Duration::from_micros(i * 37);
            if i % 2 == 0 {
                a.record_ok(d, 10, now)
            } else {
                b.record_ok(d, 10, now)
            }
            all.record_ok(d, 10, now);
        }
        a.record_err(UploadError::http(409, "first".into()), now);
        b.record_err(UploadError::http(409, "second".into()), now);
        a.merge(&b);
        assert_eq!(a.latency(), all.latency());
        assert_eq!(a.docs_ok, 1000);
        assert_eq!(a.bytes_ok, 10_000);
        let errs = a.errors();
        assert_eq!(errs.len(), 1);
        assert_eq!(
            (errs[0].count, errs[0].sample.as_str(), errs[0].class),
            (2, "first", ErrorClass::Http4xx)
        );
        let round = decode_hist(&encode_hist(&a.latency_us)).unwrap();
        assert_eq!(LatencyMs::from_hist(&round), a.latency());
    }

    #[test]
    fn mean_sd_sample() {
        let (m, s) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(m, 5.0);
        assert!((s - 2.138).abs() < 0.001);
    }
}
