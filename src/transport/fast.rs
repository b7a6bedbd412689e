//! The per-worker upload connection (the fast path): each worker drives its own HTTP/1.1
//! connection, writing its request head and body in one vectored write and reading the answer
//! itself (`h1`), as wrk does: no connection pool, no connection task, no channel between the
//! worker and its socket, no shared state. Used for uploads when the access path is plain
//! HTTP/1.1 or HTTPS with system/given CA roots; anything else (HTTP/2, client certificates,
//! `insecure`, a server-name override) stays on the shared reqwest client. Knows nothing of
//! any repository API.

use std::io::IoSlice;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Context as _, Result};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::StatusCode;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use super::body::ChunkBody;
use super::counter::ConnectionCounter;
use super::h1;
use crate::metrics::{ErrorClass, UploadError, error_chain};

/// Where uploads go and how to connect there.
pub struct Endpoint {
    addr: SocketAddr,
    host: HeaderValue,
    tls: Option<(
        tokio_rustls::TlsConnector,
        rustls::pki_types::ServerName<'static>,
    )>,
    /// Keep the connection for the next document (`reuse`), or open one per document.
    reuse: bool,
    timeout: Duration,
    connect_timeout: Duration,
    counter: ConnectionCounter,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("addr", &self.addr)
            .field("tls", &self.tls.is_some())
            .field("reuse", &self.reuse)
            .finish()
    }
}

/// A worker's own connection.
enum Conn {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Conn {
    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Plain(t) => t,
            Conn::Tls(t) => t.get_ref().0,
        }
    }

    /// Whether an idle connection has been closed by the server (or holds bytes nobody asked
    /// for, which ends it as well): checked before reusing it, so a request goes out on a
    /// connection that is still open, as hyper's `is_closed` does.
    fn looks_closed(&self) -> bool {
        let mut byte = [0u8; 1];
        let mut buf = ReadBuf::new(&mut byte);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        self.tcp().poll_peek(&mut cx, &mut buf).is_ready()
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_read(cx, buf),
            Conn::Tls(t) => Pin::new(t.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_write(cx, buf),
            Conn::Tls(t) => Pin::new(t.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_write_vectored(cx, bufs),
            Conn::Tls(t) => Pin::new(t.as_mut()).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        true
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_flush(cx),
            Conn::Tls(t) => Pin::new(t.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(t) => Pin::new(t).poll_shutdown(cx),
            Conn::Tls(t) => Pin::new(t.as_mut()).poll_shutdown(cx),
        }
    }
}

/// A worker's own fast-path state: its connection (while open), the request target it last
/// checked (an upload's target is the same document after document) and the buffers its
/// request heads and answers are written and read in, reused upload after upload.
#[derive(Default)]
pub struct Lane {
    conn: Option<Conn>,
    target: Box<str>,
    head: Vec<u8>,
    read: Vec<u8>,
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane")
            .field("open", &self.conn.is_some())
            .finish()
    }
}

impl Lane {
    /// Checks `path` as a request target, only when it differs from the last one.
    fn check_target(&mut self, path: &str) -> Result<(), UploadError> {
        if *self.target != *path {
            if !h1::valid_target(path) {
                return Err(UploadError::protocol(format!(
                    "request target {path:?}: not a percent-encoded path"
                )));
            }
            self.target = path.into();
        }
        Ok(())
    }
}

/// What a request returned.
pub struct Answer {
    pub status: StatusCode,
    /// The headers the caller asked to keep, and no others.
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Endpoint {
    /// `extra_ca`: PEM certificates to trust besides the public roots.
    pub async fn new(
        url: &reqwest::Url,
        extra_ca: &[Vec<u8>],
        reuse: bool,
        timeout: Duration,
        counter: ConnectionCounter,
    ) -> Result<Endpoint> {
        let host = url.host_str().context("URL without a host")?.to_string();
        let port = url.port_or_known_default().context("URL without a port")?;
        let addr = tokio::net::lookup_host((host.trim_matches(|c| c == '[' || c == ']'), port))
            .await
            .with_context(|| format!("cannot resolve {host}"))?
            .next()
            .with_context(|| format!("{host} has no address"))?;
        let default_port = matches!((url.scheme(), port), ("http", 80) | ("https", 443));
        let host_header = if default_port {
            host.clone()
        } else {
            format!("{host}:{port}")
        };
        let tls = if url.scheme() == "https" {
            let mut roots = rustls::RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            for pem in extra_ca {
                for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
                    roots
                        .add(cert.context("not a PEM certificate")?)
                        .context("unusable CA certificate")?;
                }
            }
            let mut cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
                crate::transport::tls_provider(),
            ))
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
            cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
            let name = rustls::pki_types::ServerName::try_from(
                host.trim_matches(|c| c == '[' || c == ']').to_string(),
            )
            .context("not a TLS server name")?;
            Some((tokio_rustls::TlsConnector::from(Arc::new(cfg)), name))
        } else {
            None
        };
        Ok(Endpoint {
            addr,
            host: HeaderValue::from_str(&host_header)?,
            tls,
            reuse,
            timeout,
            connect_timeout: Duration::from_secs(10).min(timeout),
            counter,
        })
    }

    async fn connect(&self) -> Result<Conn, UploadError> {
        self.counter.0.fetch_add(1, Ordering::Relaxed);
        let tcp = match tokio::time::timeout(
            self.connect_timeout,
            tokio::net::TcpStream::connect(self.addr),
        )
        .await
        {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return Err(UploadError {
                    class: ErrorClass::Connect,
                    status: None,
                    message: format!("connect {}: {e}", self.addr),
                });
            }
            Err(_) => {
                return Err(UploadError {
                    class: ErrorClass::Connect,
                    status: None,
                    message: format!("connect {}: timed out", self.addr),
                });
            }
        };
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            Some((connector, name)) => connector
                .connect(name.clone(), tcp)
                .await
                .map(|s| Conn::Tls(Box::new(s)))
                .map_err(|e| UploadError {
                    class: ErrorClass::Tls,
                    status: None,
                    message: format!("TLS handshake: {}", error_chain(&e)),
                }),
            None => Ok(Conn::Plain(tcp)),
        }
    }

    /// Sends one request on the worker's connection (opening one when there is none or it
    /// closed), within the timeout, and keeps the answer's headers named in `keep`. A body
    /// held in memory whose connection failed while it was being written is sent again, once,
    /// on a new connection: the server cannot have taken a request it did not receive whole.
    pub async fn send(
        &self,
        lane: &mut Lane,
        method: &str,
        path: &str,
        headers: &[(HeaderName, &HeaderValue)],
        mut body: ChunkBody,
        keep: &[Option<&HeaderName>],
    ) -> Result<Answer, UploadError> {
        lane.check_target(path)?;
        h1::write_head(
            &mut lane.head,
            method,
            path,
            &self.host,
            headers,
            body.len(),
        );
        let Lane {
            conn: slot,
            head,
            read,
            ..
        } = lane;
        let work = async {
            for attempt in 0..2 {
                let (mut conn, reused) = match slot.take() {
                    Some(c) if !c.looks_closed() => (c, true),
                    _ => (self.connect().await?, false),
                };
                let sent = match body.in_memory() {
                    Some(parts) => write_all(&mut conn, head, &parts).await,
                    None => write_streamed(&mut conn, head, &mut body).await,
                };
                if let Err(e) = sent {
                    if reused && attempt == 0 && body.in_memory().is_some() {
                        continue;
                    }
                    return Err(UploadError {
                        class: ErrorClass::Io,
                        status: None,
                        message: format!("sending the request: {}", error_chain(&e)),
                    });
                }
                let (answer, reusable) = read_answer(&mut conn, read, keep).await?;
                if self.reuse && reusable {
                    *slot = Some(conn);
                }
                return Ok(answer);
            }
            Err(UploadError {
                class: ErrorClass::Io,
                status: None,
                message: "connection closed before the request was sent, twice".into(),
            })
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => r,
            Err(_) => {
                lane.conn = None;
                Err(UploadError {
                    class: ErrorClass::Timeout,
                    status: None,
                    message: format!("no answer within {:?}", self.timeout),
                })
            }
        }
    }
}

/// Writes the head and a body held in memory with as few (vectored) writes as the socket
/// takes: one, for any document that fits its send buffer.
async fn write_all(conn: &mut Conn, head: &[u8], parts: &[&[u8]; 4]) -> std::io::Result<()> {
    let mut left: [&[u8]; 5] = [head, parts[0], parts[1], parts[2], parts[3]];
    let mut first = 0;
    loop {
        while first < left.len() && left[first].is_empty() {
            first += 1;
        }
        if first == left.len() {
            break;
        }
        let slices: [IoSlice<'_>; 5] = std::array::from_fn(|i| IoSlice::new(left[i]));
        let n = conn.write_vectored(&slices[first..]).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let mut n = n;
        for part in left[first..].iter_mut() {
            let take = n.min(part.len());
            *part = &part[take..];
            n -= take;
            if n == 0 {
                break;
            }
        }
    }
    conn.flush().await
}

/// Writes the head, then a body streamed from a file as it is read.
async fn write_streamed(conn: &mut Conn, head: &[u8], body: &mut ChunkBody) -> std::io::Result<()> {
    conn.write_all(head).await?;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            conn.write_all(&data).await?;
        }
    }
    conn.flush().await
}

/// Reads one answer: its head (interim 1xx answers dropped), then its body as the head frames
/// it. Also says whether the connection may carry the next request.
async fn read_answer(
    conn: &mut Conn,
    buf: &mut Vec<u8>,
    keep: &[Option<&HeaderName>],
) -> Result<(Answer, bool), UploadError> {
    buf.clear();
    let head = loop {
        match h1::parse_head(buf, keep).map_err(UploadError::protocol)? {
            h1::Read::Head(h) => break h,
            h1::Read::Interim(n) => {
                buf.drain(..n);
            }
            h1::Read::Partial => {
                if read_more(conn, buf).await? == 0 {
                    return Err(closed("before the answer's head"));
                }
            }
        }
    };
    let status = StatusCode::from_u16(head.status)
        .map_err(|_| UploadError::protocol(format!("status {}", head.status)))?;
    let (body, taken) = loop {
        match h1::body(&buf[head.len..], head.framing).map_err(UploadError::protocol)? {
            Some(b) => break b,
            None => {
                if read_more(conn, buf).await? == 0 {
                    if head.framing != h1::Framing::Close {
                        return Err(closed("before the answer's body ended"));
                    }
                    let rest = buf.len() - head.len;
                    break (Bytes::copy_from_slice(&buf[head.len..]), rest);
                }
            }
        }
    };
    let reusable = head.keep_alive && head.len + taken == buf.len();
    if buf.capacity() > 64 * 1024 {
        *buf = Vec::new();
    }
    Ok((
        Answer {
            status,
            headers: head.kept,
            body,
        },
        reusable,
    ))
}

async fn read_more(conn: &mut Conn, buf: &mut Vec<u8>) -> Result<usize, UploadError> {
    buf.reserve(8 * 1024);
    conn.read_buf(buf).await.map_err(|e| UploadError {
        class: ErrorClass::Io,
        status: None,
        message: format!("reading the answer: {}", error_chain(&e)),
    })
}

fn closed(when: &str) -> UploadError {
    UploadError {
        class: ErrorClass::Io,
        status: None,
        message: format!("connection closed {when}"),
    }
}
