//! `--dashboard [ADDR]`: a live page served by the binary while `run` or `sweep` measures.
//!
//! - `GET /`: one self-contained HTML page (`page.html`, embedded; its charts are inline SVG
//!   drawn by plain JS, nothing fetched from elsewhere);
//! - `GET /events`: Server-Sent Events, one [`Snapshot`] a second; a browser that connects
//!   late or reloads first gets every snapshot since the start (kept in memory: one a
//!   second, thinned to one every 2 s, 4 s, ... past a day's worth);
//! - `GET /report`: once the job has ended, the report it wrote (`report.html`);
//! - `GET /metrics`: the OpenMetrics text too, when `--metrics-listen` names this address.
//!
//! Cost to the run: one task builds a snapshot a second from the counters the workers
//! already add to (`engine::live`, atomics) and sends it once to a broadcast channel; each
//! browser's connection forwards from it, and one that vanishes is dropped at its next
//! send. Nothing here runs per upload. The page carries no URL, user or password.

mod snapshot;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::engine::LiveCounters;
use crate::engine::live::LiveMetrics;
pub use snapshot::{Percentiles, Sampler, Snapshot};

/// The page, its style and script inline.
const PAGE: &str = include_str!("page.html");

/// Snapshots kept before the history is thinned (a day at one a second).
const HISTORY_MAX: usize = 86_400;

/// What the server and the sampler share.
struct Shared {
    /// Every snapshot so far, each as its SSE event.
    history: Mutex<Vec<Bytes>>,
    tx: broadcast::Sender<Bytes>,
    /// The counters the snapshots read.
    metrics: Arc<LiveMetrics>,
    /// `/metrics` served here as well.
    serve_metrics: bool,
    sampler: Mutex<Sampler>,
    t0: tokio::time::Instant,
    /// The report once the job has ended.
    report: Mutex<Option<PathBuf>>,
}

/// The live page: bound before any upload, fed once a second, finished with the report.
pub struct Dashboard {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: JoinHandle<()>,
    feeder: Mutex<Option<JoinHandle<()>>>,
}

type Body = BoxBody<Bytes, Infallible>;

fn full(status: u16, kind: &str, body: impl Into<Bytes>) -> hyper::Response<Body> {
    hyper::Response::builder()
        .status(status)
        .header("content-type", kind)
        .header("cache-control", "no-store")
        .body(http_body_util::Full::new(body.into()).boxed())
        .unwrap_or_default()
}

/// The SSE event of a snapshot.
fn event(s: &Snapshot) -> Bytes {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "{}".into());
    Bytes::from(format!("id: {}\ndata: {json}\n\n", s.seq))
}

/// An event stream's body: what the forwarding task sends, until the browser goes (then
/// the body is dropped and the task's next send fails).
struct Events(tokio::sync::mpsc::Receiver<Bytes>);

impl http_body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|ev| ev.map(|b| Ok(http_body::Frame::data(b))))
    }
}

impl Shared {
    /// Keeps `snap` and sends it to every browser connected now.
    fn publish(&self, snap: &Snapshot) {
        let ev = event(snap);
        let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if h.len() >= HISTORY_MAX {
            // Every other snapshot goes: the whole job stays, at half the resolution.
            let kept: Vec<Bytes> = h.iter().step_by(2).cloned().collect();
            *h = kept;
        }
        h.push(ev.clone());
        // Sent under the lock, so a browser that subscribes gets each snapshot once.
        let _ = self.tx.send(ev);
    }

    /// The snapshot of the counters now.
    fn take(&self, live: &LiveCounters) -> Snapshot {
        let t = self.t0.elapsed().as_secs_f64();
        let readings = self.metrics.readings();
        let mut s = self.sampler.lock().unwrap_or_else(|e| e.into_inner());
        s.take(t, &readings, live)
    }

    /// `/events`: the history, then each new snapshot, until the browser goes.
    fn events(self: &Arc<Self>) -> hyper::Response<Body> {
        let (tx, rx_body) = tokio::sync::mpsc::channel::<Bytes>(8);
        let body = Events(rx_body);
        let (backlog, mut rx) = {
            let h = self.history.lock().unwrap_or_else(|e| e.into_inner());
            (h.clone(), self.tx.subscribe())
        };
        tokio::spawn(async move {
            for ev in backlog {
                if tx.send(ev).await.is_err() {
                    return;
                }
            }
            loop {
                match rx.recv().await {
                    Ok(ev) => {
                        if tx.send(ev).await.is_err() {
                            return;
                        }
                    }
                    // A browser too slow to keep up misses snapshots, never holds the run.
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        hyper::Response::builder()
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-store")
            .body(body.boxed())
            .unwrap_or_default()
    }

    /// `/report`: the final report, once written.
    fn report(&self) -> hyper::Response<Body> {
        let path = self.report.lock().ok().and_then(|r| r.clone());
        match path.map(std::fs::read) {
            Some(Ok(bytes)) => full(200, "text/html; charset=utf-8", bytes),
            Some(Err(e)) => full(
                500,
                "text/plain",
                format!("the report cannot be read: {e}\n"),
            ),
            None => full(
                404,
                "text/plain",
                "no report yet: the job is still running\n",
            ),
        }
    }

    fn route(
        self: &Arc<Self>,
        req: &hyper::Request<hyper::body::Incoming>,
    ) -> hyper::Response<Body> {
        if req.method() != hyper::Method::GET {
            return full(405, "text/plain", "GET only\n");
        }
        match req.uri().path() {
            "/" | "/index.html" => full(200, "text/html; charset=utf-8", PAGE),
            "/events" => self.events(),
            "/report" => self.report(),
            "/metrics" if self.serve_metrics => {
                match crate::engine::live::metrics_response(&self.metrics) {
                    Ok(r) => r.map(|b| b.boxed()),
                    Err(e) => full(500, "text/plain", format!("{e}\n")),
                }
            }
            _ => full(404, "text/plain", "not found: /, /events, /report\n"),
        }
    }
}

/// `--dashboard`: the live page, bound before anything is written (a taken port fails
/// first, exit 2); its URL goes to stderr even with --quiet (it is how a free port is found).
/// `None` without `--dashboard`.
pub async fn start(
    common: &crate::plan::CommonPlan,
    sidecars: &crate::engine::Sidecars,
) -> Result<Option<Dashboard>> {
    let (Some(addr), Some(metrics)) = (common.dashboard, sidecars.metrics()) else {
        return Ok(None);
    };
    let d = Dashboard::bind(addr, metrics, common.metrics_on_dashboard()).await?;
    eprintln!("  live page: {}", d.url());
    if !addr.ip().is_loopback() && !common.quiet {
        eprintln!(
            "  (open to whoever reaches {addr}: the page shows the numbers, never the URL, user or password)"
        );
    }
    Ok(Some(d))
}

impl Dashboard {
    /// Listens on `addr` (before any upload: a taken port or an address not of this host
    /// fails here, naming `--dashboard`) and serves the page.
    pub async fn bind(
        addr: SocketAddr,
        metrics: Arc<LiveMetrics>,
        serve_metrics: bool,
    ) -> Result<Dashboard> {
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
            format!("--dashboard {addr}: cannot listen there (a port in use, or an address not of this host); give a free HOST:PORT, or 127.0.0.1:0 for any free port")
        })?;
        let bound = listener
            .local_addr()
            .with_context(|| format!("--dashboard {addr}: the listener has no address"))?;
        let (tx, _) = broadcast::channel(64);
        let shared = Arc::new(Shared {
            history: Mutex::new(Vec::new()),
            tx,
            metrics,
            serve_metrics,
            sampler: Mutex::new(Sampler::new()),
            t0: tokio::time::Instant::now(),
            report: Mutex::new(None),
        });
        let serving = shared.clone();
        let server = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    // Out of descriptors: wait rather than spin.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                let shared = serving.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let r = shared.route(&req);
                        async move { Ok::<_, Infallible>(r) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                        .await;
                });
            }
        });
        Ok(Dashboard {
            shared,
            addr: bound,
            server,
            feeder: Mutex::new(None),
        })
    }

    /// The page's address (the port chosen when 0 was given).
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Starts the snapshots: one a second from `live` and the cells' counters.
    pub fn watch(&self, live: Arc<LiveCounters>) {
        let shared = self.shared.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let snap = shared.take(&live);
                shared.publish(&snap);
            }
        });
        if let Ok(mut f) = self.feeder.lock()
            && let Some(old) = f.replace(task)
        {
            old.abort();
        }
    }

    /// The job has ended: a last snapshot says so (and that `report`, when given, is served
    /// at `/report`), then the page stays up for `hold`.
    pub async fn finish(&self, live: &LiveCounters, report: Option<PathBuf>, hold: Duration) {
        if let Some(t) = self.feeder.lock().ok().and_then(|mut f| f.take()) {
            t.abort();
        }
        let has_report = report.as_ref().is_some_and(|p| p.exists());
        if let Ok(mut r) = self.shared.report.lock() {
            *r = report.filter(|_| has_report);
        }
        let mut snap = self.shared.take(live);
        snap.finished = true;
        snap.report = has_report;
        self.shared.publish(&snap);
        // The last event reaches the browsers before the process may exit.
        tokio::time::sleep(hold.max(Duration::from_millis(300))).await;
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        self.server.abort();
        if let Some(t) = self.feeder.lock().ok().and_then(|mut f| f.take()) {
            t.abort();
        }
    }
}
