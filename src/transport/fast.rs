//! The per-worker upload connection (the fast path): each worker drives its own HTTP/1.1 connection with hyper directly
//! (as oha does), with no connection pool, no per-request URL parsing and no shared state.
//! Used for uploads when the access path is plain HTTP/1.1 or HTTPS with system/given CA
//! roots; anything else (HTTP/2, client certificates, `insecure`, a server-name override)
//! stays on the shared reqwest client. Knows nothing of any repository API.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HOST, HeaderMap, HeaderValue, USER_AGENT};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;

use super::body::ChunkBody;
use super::counter::ConnectionCounter;
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
pub struct Conn {
    send: SendRequest<ChunkBody>,
}

/// A worker's own fast-path state: its connection (while open) and the request target it
/// last sent to, parsed once (an upload's target is the same document after document).
#[derive(Debug, Default)]
pub struct Lane {
    conn: Option<Conn>,
    target: Option<(Box<str>, hyper::Uri)>,
}

impl Lane {
    /// `path` as a request target, parsed only when it differs from the last one.
    fn target(&mut self, path: &str) -> Result<hyper::Uri, UploadError> {
        match &self.target {
            Some((p, uri)) if **p == *path => Ok(uri.clone()),
            _ => {
                let uri = hyper::Uri::try_from(path)
                    .map_err(|e| UploadError::protocol(format!("request target {path}: {e}")))?;
                self.target = Some((path.into(), uri.clone()));
                Ok(uri)
            }
        }
    }
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Conn")
    }
}

/// What a request returned.
pub struct Answer {
    pub status: StatusCode,
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
        let send = match &self.tls {
            Some((connector, name)) => {
                let stream =
                    connector
                        .connect(name.clone(), tcp)
                        .await
                        .map_err(|e| UploadError {
                            class: ErrorClass::Tls,
                            status: None,
                            message: format!("TLS handshake: {}", error_chain(&e)),
                        })?;
                let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|e| hyper_err(&e))?;
                tokio::spawn(conn);
                send
            }
            None => {
                let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
                    .await
                    .map_err(|e| hyper_err(&e))?;
                tokio::spawn(conn);
                send
            }
        };
        Ok(Conn { send })
    }

    /// Sends one request on the worker's connection (opening one when there is none or it
    /// closed), within the timeout; a request the old connection never took is sent again
    /// on a new one, since nothing of it reached the server.
    pub async fn send(
        &self,
        lane: &mut Lane,
        method: hyper::Method,
        path: &str,
        headers: &[(hyper::header::HeaderName, &HeaderValue)],
        body: ChunkBody,
    ) -> Result<Answer, UploadError> {
        let uri = lane.target(path)?;
        let slot = &mut lane.conn;
        let mut req = Request::builder()
            .method(method)
            .uri(uri)
            .body(body)
            .map_err(|e| UploadError::protocol(format!("request: {e}")))?;
        let h = req.headers_mut();
        h.insert(HOST, self.host.clone());
        h.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("ingestbench/", env!("CARGO_PKG_VERSION"))),
        );
        for (k, v) in headers {
            h.insert(k.clone(), (*v).clone());
        }
        let work = async {
            let mut req = req;
            for _ in 0..2 {
                let mut conn = match slot.take() {
                    Some(c) if !c.send.is_closed() => c,
                    _ => self.connect().await?,
                };
                if conn.send.ready().await.is_err() {
                    continue;
                }
                match conn.send.try_send_request(req).await {
                    Ok(resp) => {
                        let (parts, body) = resp.into_parts();
                        let body = body.collect().await.map_err(|e| hyper_err(&e))?.to_bytes();
                        if self.reuse && !conn.send.is_closed() {
                            *slot = Some(conn);
                        }
                        return Ok(Answer {
                            status: parts.status,
                            headers: parts.headers,
                            body,
                        });
                    }
                    Err(mut e) => match e.take_message() {
                        Some(unsent) => req = unsent,
                        None => return Err(hyper_err(e.error())),
                    },
                }
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
                *slot = None;
                Err(UploadError {
                    class: ErrorClass::Timeout,
                    status: None,
                    message: format!("no answer within {:?}", self.timeout),
                })
            }
        }
    }
}

fn hyper_err(e: &hyper::Error) -> UploadError {
    UploadError {
        class: ErrorClass::Io,
        status: None,
        message: error_chain(e),
    }
}
