//! The emulator behind the embedded reference target (`ingestbench target`, and `run`/`sweep`
//! with no `--url`): ingestbench's own emulation of the repository endpoints the
//! tool uses, over HTTP and HTTPS, backed by a durable on-disk store, with a performance
//! model so its capacity is known (service time per request, cost per MiB, at most N requests
//! processed at once; the rest queue). Started by `ingestbench target`, by `run` when no
//! `--url` is given, and in-process by tests. It must stay as strict as the real servers.

mod alfresco;
mod content;
mod liferay;
pub mod multipart;
pub mod store;
mod tls;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::protocol::Secret;
use crate::protocol::alfresco::model::{self, Dictionary};
use store::Store;

use crate::transport::access::NODE_HEADER;

/// Known capacity: each request holds one of `max_concurrent` slots for
/// `service_time + size_mib × per_mib + served/1000 × growth_per_1000` (0 slots = unlimited);
/// `growth_per_1000` models a repository that slows as it grows (indexes, folder sizes). A
/// cold start adds `cold_extra` to each of the first `cold_requests` requests (a JVM's JIT,
/// empty caches); `jitter` spreads each request's cost uniformly over ±that fraction, from a
/// deterministic sequence, so the mean capacity stays known.
///
/// `contention` σ and `coherency` κ shape concurrency as the Universal Scalability Law does:
/// a request that arrives with `n` requests in flight (itself included) costs
/// `1 + σ(n−1) + κn(n−1)` times its base cost, so N clients without think time and without
/// slots get `X(N) = (N/cost) / (1 + σ(N−1) + κN(N−1))`: throughput that peaks at
/// `√((1−σ)/κ)` clients and then falls, a known ground truth for the USL fit.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct PerfModel {
    pub service_time: Duration,
    pub per_mib: Duration,
    pub max_concurrent: usize,
    pub growth_per_1000: Duration,
    pub cold_requests: u64,
    pub cold_extra: Duration,
    pub jitter: f64,
    pub contention: f64,
    pub coherency: f64,
    /// CPU time each upload spends on a core (a hashing loop, not a sleep): a known CPU
    /// demand per document, for checking measured demands and CPU-bound verdicts.
    pub cpu_per_doc: Duration,
    /// One stall: upload number `stall_after` (0-based, counting the requests faults strike:
    /// creates, folders included, and new versions) holds its slot this much longer (0 = never), e.g. a garbage-collection pause:
    /// what a paced run's response time must show and its service time hides.
    pub stall_once: Duration,
    pub stall_after: u64,
    /// A step: from request number `step_after` on (0 = never), each costs `step_extra`
    /// more, as a cache that stops holding the working set or a heap's threshold would: a
    /// known growth of another shape than `growth_per_1000`'s line.
    pub step_after: u64,
    pub step_extra: Duration,
}

impl PerfModel {
    /// The USL factor of a request arriving with `n` requests in flight (itself included).
    fn concurrency_factor(&self, n: u64) -> f64 {
        let n = n.max(1) as f64;
        1.0 + self.contention * (n - 1.0) + self.coherency * n * (n - 1.0)
    }

    fn cost(&self, body_len: usize, served: u64) -> Duration {
        let base = self.service_time
            + self.per_mib.mul_f64(body_len as f64 / (1024.0 * 1024.0))
            + self.growth_per_1000.mul_f64(served as f64 / 1000.0);
        let base = if self.jitter > 0.0 {
            let mut r =
                crate::fixtures::Rng::new(0x7177_E55E ^ served.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            base.mul_f64((1.0 + self.jitter * (2.0 * u - 1.0)).max(0.0))
        } else {
            base
        };
        let base = if self.step_after > 0 && served >= self.step_after {
            base + self.step_extra
        } else {
            base
        };
        if served < self.cold_requests {
            base + self.cold_extra
        } else {
            base
        }
    }
}

/// Fault injection on uploads (create-document requests only), each a probability per
/// request, decided by a deterministic sequence so a test sees the same faults every time.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Faults {
    /// Answer 503 without storing anything.
    pub error_5xx: f64,
    /// Store the document, then answer 500 (the ambiguous case).
    pub commit_500: f64,
    /// Store the document, then hold the answer for `stall_for` (past the client's timeout).
    pub stall: f64,
    pub stall_for: Duration,
    /// Store the document, then drop the connection without an answer.
    pub reset: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Error5xx,
    Commit500,
    Stall,
    Reset,
}

impl Faults {
    fn any(&self) -> bool {
        self.error_5xx + self.commit_500 + self.stall + self.reset > 0.0
    }
    fn pick(&self, n: u64) -> Option<Fault> {
        let mut r = crate::fixtures::Rng::new(0xFA17_5EED ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let x = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut acc = 0.0;
        for (p, f) in [
            (self.error_5xx, Fault::Error5xx),
            (self.commit_500, Fault::Commit500),
            (self.stall, Fault::Stall),
            (self.reset, Fault::Reset),
        ] {
            acc += p;
            if x < acc {
                return Some(f);
            }
        }
        None
    }
}

/// Where the HTTPS certificate comes from.
#[derive(Debug, Clone)]
pub enum TlsSource {
    /// A fresh local CA and a server certificate for localhost/127.0.0.1/::1.
    Generate,
    /// PEM files.
    Files { cert: PathBuf, key: PathBuf },
}

#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    pub http_listen: Option<SocketAddr>,
    pub https_listen: Option<SocketAddr>,
    pub tls: TlsSource,
    pub data_dir: PathBuf,
    pub node_name: String,
    pub users: Vec<(String, Secret)>,
    /// Content models (XML text, source) on top of the stock dictionary.
    pub models: Vec<(String, String)>,
    pub perf: PerfModel,
    /// Lifetime of Liferay OAuth2 tokens.
    pub token_lifetime: Duration,
    pub faults: Faults,
    /// A temporary store: documents may share prefixes on disk (see `content`).
    pub share_prefixes: bool,
}

impl EmulatorConfig {
    /// Loopback HTTP on a free port, admin/admin, the acme model, no capacity limit.
    pub fn local(data_dir: PathBuf) -> EmulatorConfig {
        EmulatorConfig {
            http_listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            https_listen: None,
            tls: TlsSource::Generate,
            data_dir,
            node_name: "node1".into(),
            users: vec![("admin".into(), Secret::new("admin"))],
            models: vec![(
                model::ACME_MODEL.to_string(),
                "built-in acme-model.xml".into(),
            )],
            perf: PerfModel::default(),
            token_lifetime: liferay::DEFAULT_TOKEN_LIFETIME,
            faults: Faults::default(),
            share_prefixes: false,
        }
    }
}

/// Slots of the performance model. Each slot remembers when it is next free; a request that
/// waits for a slot starts at that time, not when the timer woke us, so timer overshoot does
/// not accumulate and throughput under queueing is exactly slots / cost.
struct Capacity {
    model: PerfModel,
    /// Requests served so far (for the growth term).
    served: std::sync::atomic::AtomicU64,
    /// Requests in flight (for the USL terms).
    in_flight: std::sync::atomic::AtomicU64,
    /// Uploads served so far (for the one stall).
    uploads: std::sync::atomic::AtomicU64,
    sem: Option<Semaphore>,
    free_at: Mutex<BinaryHeap<Reverse<Instant>>>,
}

impl Capacity {
    fn new(model: PerfModel) -> Capacity {
        let sem = (model.max_concurrent > 0).then(|| Semaphore::new(model.max_concurrent));
        let now = Instant::now();
        let free_at = (0..model.max_concurrent).map(|_| Reverse(now)).collect();
        Capacity {
            model,
            served: std::sync::atomic::AtomicU64::new(0),
            in_flight: std::sync::atomic::AtomicU64::new(0),
            uploads: std::sync::atomic::AtomicU64::new(0),
            sem,
            free_at: Mutex::new(free_at),
        }
    }

    /// Runs `work` as one request of `body_len` bytes (an upload or not) under the model.
    async fn serve<T>(
        &self,
        body_len: usize,
        upload: bool,
        work: impl std::future::Future<Output = T>,
    ) -> T {
        let served = self
            .served
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut cost = self.model.cost(body_len, served);
        if upload
            && !self.model.stall_once.is_zero()
            && self.uploads.fetch_add(1, Ordering::Relaxed) == self.model.stall_after
        {
            cost += self.model.stall_once;
        }
        let usl = self.model.contention > 0.0 || self.model.coherency > 0.0;
        let _flight = usl.then(|| {
            let n = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
            cost = cost.mul_f64(self.model.concurrency_factor(n));
            InFlight(&self.in_flight)
        });
        let Some(sem) = &self.sem else {
            let end = Instant::now() + cost;
            let out = work.await;
            precise_sleep_until(end).await;
            return out;
        };
        // A request starts when it arrived or when its slot became free, whichever is later.
        let arrived = Instant::now();
        let _permit = sem.acquire().await.expect("semaphore never closed");
        let slot_free = self
            .free_at
            .lock()
            .expect("slots")
            .pop()
            .map_or(arrived, |r| r.0);
        let end = slot_free.max(arrived) + cost;
        let out = work.await;
        // Work that overran the model frees the slot only when it is done.
        let end = end.max(Instant::now());
        precise_sleep_until(end).await;
        self.free_at.lock().expect("slots").push(Reverse(end));
        out
    }
}

/// CPU seconds this thread has run (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given and reads nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Spends `cpu` of CPU time hashing: real work on a core, measured by the thread's own CPU
/// clock, so a starved core stretches the wall time, not the work. On a multi-thread runtime
/// the work runs inline on the request's worker thread, as a servlet container's request
/// thread does its work (the runtime's other workers take the queued tasks meanwhile). Not
/// `block_in_place`: its hand-off of the worker to another thread, once per request, added
/// about 1 ms of CPU per document at one thread (+20 % over a 4 ms cost, quiet machine,
/// 2026-11-26); inline, 11 of 12 measurements at 1, 4 and 8 threads came within ±10 %, one
/// at one thread +14.2 %.
async fn burn_cpu(cpu: Duration) {
    let burn = move || {
        use sha2::Digest;
        let end = thread_cpu() + cpu;
        let mut h = sha2::Sha256::new();
        let block = [0x5Au8; 1024];
        while thread_cpu() < end {
            h.update(block);
        }
        std::hint::black_box(h.finalize());
    };
    if tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread
    {
        burn();
    } else {
        let _ = tokio::task::spawn_blocking(burn).await;
    }
}

/// One request in flight, counted until dropped (also when its future is dropped).
struct InFlight<'a>(&'a std::sync::atomic::AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Sleeps until `end` to within about 0.1 ms. tokio's timer works in whole milliseconds
/// and rounds up, which would add ~1 ms to every modelled service time; a blocking thread's
/// sleep does not. The performance model needs that precision for latencies to be known.
async fn precise_sleep_until(end: Instant) {
    let now = Instant::now();
    if end <= now {
        return;
    }
    let d = end - now;
    let _ = tokio::task::spawn_blocking(move || std::thread::sleep(d)).await;
}

pub(crate) struct State {
    store: Arc<Store>,
    dict: Dictionary,
    users: HashMap<String, Secret>,
    node_name: String,
    tickets: Mutex<HashMap<String, String>>,
    /// Successful ticket logins served by this node.
    logins: std::sync::atomic::AtomicU64,
    /// Liferay OAuth2 tokens: token → (client, expiry).
    lr_tokens: Mutex<HashMap<String, (String, Instant)>>,
    token_lifetime: Duration,
    faults: Faults,
    /// Uploads seen, the index into the fault sequence.
    uploads: std::sync::atomic::AtomicU64,
    capacity: Capacity,
}

/// A running target. Dropping it stops the listeners.
pub struct EmulatorHandle {
    pub http: Option<SocketAddr>,
    pub https: Option<SocketAddr>,
    /// PEM of the CA that signed the HTTPS certificate (when generated).
    pub ca_pem: Option<String>,
    state: Arc<State>,
    tasks: Vec<JoinHandle<()>>,
}

impl EmulatorHandle {
    pub fn http_url(&self) -> Option<String> {
        self.http.map(|a| format!("http://{a}"))
    }
    pub fn https_url(&self) -> Option<String> {
        self.https
            .map(|a| format!("https://localhost:{}", a.port()))
    }
    /// Documents in the store (all nodes sharing it).
    pub async fn count_documents(&self) -> Result<u64> {
        let store = self.state.store.clone();
        tokio::task::spawn_blocking(move || store.count_documents())
            .await?
            .map_err(|e| anyhow::anyhow!("{e:?}"))
    }
    /// Documents anywhere below the folder at `path`, relative to where `protocol` puts
    /// documents by default: Alfresco `-my-` (the user's home), Liferay the site's root.
    pub async fn count_documents_under(
        &self,
        protocol: crate::protocol_kind::ProtocolKind,
        user: &str,
        path: &str,
    ) -> Result<u64> {
        let store = self.state.store.clone();
        let (user, path) = (user.to_string(), path.to_string());
        tokio::task::spawn_blocking(move || -> Result<u64, store::StoreError> {
            let root = match protocol {
                crate::protocol_kind::ProtocolKind::Alfresco => store.user_home(&user)?,
                crate::protocol_kind::ProtocolKind::Liferay => {
                    store.system_folder(store::COMPANY_HOME, liferay::SITE_FOLDER)?
                }
                // The embedded target does not speak CMIS.
                crate::protocol_kind::ProtocolKind::Cmis => return Ok(0),
            };
            match store.resolve_path(&root, &path)? {
                Some(n) => store.count_documents_under(&n.id),
                None => Ok(0),
            }
        })
        .await?
        .map_err(|e| anyhow::anyhow!("{e:?}"))
    }

    /// Fault injection: forget every Liferay OAuth2 token (as if all had expired).
    pub fn token_expirer(&self) -> impl Fn() + Send + 'static {
        let state = self.state.clone();
        move || state.lr_tokens.lock().expect("tokens").clear()
    }

    /// Fault injection: a closure that forgets every login ticket (as a ticket expiring
    /// on the server does), so the next request with one gets 401.
    pub fn ticket_expirer(&self) -> impl Fn() + Send + 'static {
        let state = self.state.clone();
        move || {
            state.tickets.lock().expect("tickets").clear();
            let _ = state.store.delete_all_tickets();
        }
    }
    /// Successful ticket logins this node served.
    pub fn logins(&self) -> u64 {
        self.state.logins.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn store(&self) -> &Arc<Store> {
        &self.state.store
    }
    pub fn stop(mut self) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
    }
}

impl Drop for EmulatorHandle {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Opens the store and starts the listeners.
pub async fn start(cfg: EmulatorConfig) -> Result<EmulatorHandle> {
    let dict = Dictionary::with_models(&cfg.models)?;
    let dir = cfg.data_dir.clone();
    let share = cfg.share_prefixes;
    let store =
        Arc::new(tokio::task::spawn_blocking(move || Store::open_with(&dir, share)).await??);
    let state = Arc::new(State {
        store,
        dict,
        users: cfg.users.iter().cloned().collect(),
        node_name: cfg.node_name.clone(),
        tickets: Mutex::new(HashMap::new()),
        logins: std::sync::atomic::AtomicU64::new(0),
        lr_tokens: Mutex::new(HashMap::new()),
        token_lifetime: cfg.token_lifetime,
        faults: cfg.faults,
        uploads: std::sync::atomic::AtomicU64::new(0),
        capacity: Capacity::new(cfg.perf),
    });
    let mut tasks = Vec::new();
    let mut http = None;
    let mut https = None;
    let mut ca_pem = None;
    if let Some(addr) = cfg.http_listen {
        let l = TcpListener::bind(addr).await.with_context(|| {
            format!("--listen {addr}: cannot bind (in use? try another port or 127.0.0.1:0)")
        })?;
        http = Some(l.local_addr()?);
        tasks.push(tokio::spawn(accept_loop(l, None, state.clone())));
    }
    if let Some(addr) = cfg.https_listen {
        let (acceptor, ca) = tls::acceptor(&cfg.tls)?;
        ca_pem = ca;
        let l = TcpListener::bind(addr).await.with_context(|| {
            format!("--tls-listen {addr}: cannot bind (in use? try another port or 127.0.0.1:0)")
        })?;
        https = Some(l.local_addr()?);
        tasks.push(tokio::spawn(accept_loop(l, Some(acceptor), state.clone())));
    }
    Ok(EmulatorHandle {
        http,
        https,
        ca_pem,
        state,
        tasks,
    })
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: Arc<State>,
) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let state = state.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(state.clone(), req));
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            match tls {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(tcp).await {
                        let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
                    }
                }
                None => {
                    let _ = builder.serve_connection(TokioIo::new(tcp), svc).await;
                }
            }
        });
    }
}

/// A deliberately dropped connection (fault injection): hyper closes it without answering.
#[derive(Debug)]
struct Reset;

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection reset by fault injection")
    }
}

impl std::error::Error for Reset {}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Reset> {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return Ok(alfresco::error(
                400,
                "framework.exception.ApiDefault",
                "Could not read the request body",
            ));
        }
    };
    let len = body.len();
    let path = parts.uri.path();
    let liferay = path.starts_with("/o/")
        || path.starts_with(liferay::JSONWS_VERSIONS)
        || path.starts_with(liferay::SERVLET);
    // Uploads, and new versions of a document (its content replaced): where faults strike.
    let is_upload = (parts.method == hyper::Method::POST
        && (path.ends_with("/children") || (liferay && path.ends_with("/documents"))))
        || (parts.method == hyper::Method::PUT
            && (path.ends_with("/content") || (liferay && path.contains("/documents/"))));
    let fault = if is_upload && state.faults.any() {
        state.faults.pick(
            state
                .uploads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        )
    } else {
        None
    };
    let failure = |status: u16, text: &str| {
        if liferay {
            liferay::problem(status, text)
        } else {
            alfresco::error(status, "framework.exception.ApiDefault", text)
        }
    };
    if is_upload && !state.capacity.model.cpu_per_doc.is_zero() {
        burn_cpu(state.capacity.model.cpu_per_doc).await;
    }
    let mut resp = if fault == Some(Fault::Error5xx) {
        failure(503, "Service unavailable (injected)")
    } else if liferay {
        state
            .capacity
            .serve(len, is_upload, liferay::route(&state, &parts, body))
            .await
    } else {
        state
            .capacity
            .serve(len, is_upload, alfresco::route(&state, &parts, body))
            .await
    };
    match fault {
        Some(Fault::Commit500) => resp = failure(500, "Internal error after commit (injected)"),
        Some(Fault::Stall) => tokio::time::sleep(state.faults.stall_for).await,
        Some(Fault::Reset) => return Err(Reset),
        _ => {}
    }
    resp.headers_mut().insert(
        NODE_HEADER,
        hyper::header::HeaderValue::from_str(&state.node_name)
            .unwrap_or(hyper::header::HeaderValue::from_static("node")),
    );
    Ok(resp)
}
