//! Access methods: how requests reach the repository (TLS or not, through a load balancer, a
//! plain reverse proxy, or straight to a node; keep-alive or a new connection per document).
//! Each is a TOML file in `access-methods/`; this module parses and checks them and builds
//! the one HTTP client a method uses. It knows nothing of any repository API.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};

/// Keep connections alive, or open a fresh TCP (+TLS) connection for every document.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    PartialOrd,
    Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionPolicy {
    Reuse,
    New,
}

impl ConnectionPolicy {
    pub fn name(self) -> &'static str {
        match self {
            ConnectionPolicy::Reuse => "reuse",
            ConnectionPolicy::New => "new",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HttpVersion {
    #[serde(rename = "1.1")]
    Http1,
    #[serde(rename = "2")]
    Http2,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSettings {
    /// CA certificate (PEM) to trust, relative to the method file.
    pub ca_cert: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS.
    pub client_cert: Option<PathBuf>,
    /// Private key (PEM) of `client_cert`.
    pub client_key: Option<PathBuf>,
    /// Name to verify the server certificate against (and send as SNI) when the URL host
    /// differs, e.g. an IP address.
    pub server_name: Option<String>,
    /// Skip certificate verification (prints a warning; measurements stay valid).
    #[serde(default)]
    pub insecure: bool,
}

/// One access method file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessMethod {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Server root, or `embedded:http` / `embedded:https` for the embedded target.
    pub url: String,
    #[serde(default = "default_version")]
    pub http_version: HttpVersion,
    #[serde(default = "default_connection")]
    pub connection: ConnectionPolicy,
    #[serde(default)]
    pub tls: TlsSettings,
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Response header naming the backend node, if the path has one.
    pub node_header: Option<String>,
    /// The repository API behind this path (default: the sweep's --protocol).
    pub protocol: Option<crate::protocol::ProtocolKind>,
    /// Or: a session cookie whose value ends in `.<route>` (mod_jk / Tomcat jvmRoute style),
    /// e.g. `JSESSIONID`.
    pub node_cookie: Option<String>,
    /// Where the method came from (not in the file).
    #[serde(skip)]
    pub source: PathBuf,
}

fn default_version() -> HttpVersion {
    HttpVersion::Http1
}

fn default_connection() -> ConnectionPolicy {
    ConnectionPolicy::Reuse
}

impl AccessMethod {
    pub fn parse(text: &str, source: &Path) -> Result<AccessMethod> {
        let mut m: AccessMethod = toml::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "access method {}: {}\n  (keys: name, description, url, http_version = \"1.1\"|\"2\", connection = \"reuse\"|\"new\", node_header, [tls] ca_cert/client_cert/client_key/server_name/insecure, [headers]; see access-methods/README.md)",
                source.display(),
                e.message().trim()
            )
        })?;
        m.source = source.to_path_buf();
        let base = source.parent().unwrap_or(Path::new("."));
        for p in [
            &mut m.tls.ca_cert,
            &mut m.tls.client_cert,
            &mut m.tls.client_key,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        m.check()?;
        Ok(m)
    }

    pub fn load(path: &Path) -> Result<AccessMethod> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("access method {}: cannot read the file", path.display()))?;
        Self::parse(&text, path)
    }

    fn check(&self) -> Result<()> {
        let src = self.source.display();
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            bail!(
                "access method {src}: key `name` = `{}` must be letters, digits, - and _",
                self.name
            );
        }
        if !self.is_embedded() {
            let url = reqwest::Url::parse(&self.url).with_context(|| format!("access method {src}: key `url` = `{}` is not a URL (e.g. https://alfresco:8443)", self.url))?;
            if !matches!(url.scheme(), "http" | "https") {
                bail!(
                    "access method {src}: key `url` must be http:// or https:// (or embedded:http, embedded:https)"
                );
            }
            if !url.username().is_empty() || url.password().is_some() {
                bail!("access method {src}: key `url` must not carry credentials");
            }
        } else if !matches!(self.url.as_str(), "embedded:http" | "embedded:https") {
            bail!(
                "access method {src}: key `url` = `{}`: the embedded target is `embedded:http` or `embedded:https`",
                self.url
            );
        }
        for (k, v) in [
            ("ca_cert", &self.tls.ca_cert),
            ("client_cert", &self.tls.client_cert),
            ("client_key", &self.tls.client_key),
        ] {
            if let Some(p) = v
                && !p.is_file()
            {
                bail!(
                    "access method {src}: key `tls.{k}` = {}: no such file",
                    p.display()
                );
            }
        }
        if self.tls.client_cert.is_some() != self.tls.client_key.is_some() {
            bail!("access method {src}: `tls.client_cert` and `tls.client_key` go together");
        }
        for k in self.headers.keys().chain(self.node_header.iter()) {
            HeaderName::from_bytes(k.as_bytes()).with_context(|| {
                format!("access method {src}: `{k}` is not a valid header name")
            })?;
        }
        Ok(())
    }

    pub fn is_embedded(&self) -> bool {
        self.url.starts_with("embedded:")
    }

    pub fn node_header(&self) -> Option<HeaderName> {
        self.node_header
            .as_deref()
            .and_then(|h| HeaderName::from_bytes(h.as_bytes()).ok())
    }

    /// The URL requests go to and the client for this method. `embedded` gives the embedded
    /// target's URL and CA for `embedded:*` methods.
    pub fn client(
        &self,
        embedded: Option<(&str, Option<&str>)>,
        timeout: Duration,
        workers: usize,
    ) -> Result<(reqwest::Url, reqwest::Client, ConnectionCounter)> {
        let (url_text, embedded_ca) = match (self.is_embedded(), embedded) {
            (true, Some((u, ca))) => (u.to_string(), ca),
            (true, None) => bail!(
                "access method {}: the embedded target is not running",
                self.name
            ),
            (false, _) => (self.url.clone(), None),
        };
        let mut url = reqwest::Url::parse(&url_text)?;
        let mut b = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .tcp_nodelay(true)
            .user_agent(concat!("ingestbench/", env!("CARGO_PKG_VERSION")));
        b = match self.connection {
            ConnectionPolicy::Reuse => b.pool_max_idle_per_host(workers.max(1)),
            ConnectionPolicy::New => b.pool_max_idle_per_host(0),
        };
        b = match (self.http_version, url.scheme()) {
            (HttpVersion::Http1, _) => b.http1_only(),
            (HttpVersion::Http2, "http") => b.http2_prior_knowledge(),
            (HttpVersion::Http2, _) => b,
        };
        if let Some(ca) = embedded_ca {
            b = b.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes())?);
        }
        if let Some(ca) = &self.tls.ca_cert {
            let pem = std::fs::read(ca).with_context(|| {
                format!("access method {}: tls.ca_cert {}", self.name, ca.display())
            })?;
            let cert = reqwest::Certificate::from_pem(&pem).with_context(|| {
                format!(
                    "access method {}: tls.ca_cert {} is not a PEM certificate",
                    self.name,
                    ca.display()
                )
            })?;
            b = b.add_root_certificate(cert);
        }
        if let (Some(c), Some(k)) = (&self.tls.client_cert, &self.tls.client_key) {
            let mut pem = std::fs::read(c)?;
            pem.extend(std::fs::read(k)?);
            let id = reqwest::Identity::from_pem(&pem).with_context(|| format!("access method {}: tls.client_cert/client_key are not a PEM certificate and key", self.name))?;
            b = b.identity(id);
        }
        if self.tls.insecure {
            eprintln!(
                "warning: access method {}: TLS certificate verification is OFF (tls.insecure = true)",
                self.name
            );
            b = b.danger_accept_invalid_certs(true);
        }
        if let Some(sn) = &self.tls.server_name {
            // Connect to the URL's address but verify (and send SNI for) `server_name`.
            let port = url.port_or_known_default().unwrap_or(443);
            let host = url
                .host_str()
                .unwrap_or_default()
                .trim_matches(|c| c == '[' || c == ']')
                .to_string();
            let ip: std::net::IpAddr = host.parse().with_context(|| {
                format!(
                    "access method {}: tls.server_name needs an IP address in `url`",
                    self.name
                )
            })?;
            b = b.resolve(sn, std::net::SocketAddr::new(ip, port));
            url.set_host(Some(sn)).with_context(|| {
                format!(
                    "access method {}: tls.server_name `{sn}` is not a host name",
                    self.name
                )
            })?;
        }
        let mut headers = HeaderMap::new();
        for (k, v) in &self.headers {
            headers.insert(
                HeaderName::from_bytes(k.as_bytes())?,
                HeaderValue::from_str(v).with_context(|| {
                    format!(
                        "access method {}: header {k} has an invalid value",
                        self.name
                    )
                })?,
            );
        }
        b = b.default_headers(headers);
        let counter = ConnectionCounter::default();
        b = b.connector_layer(counter.clone());
        Ok((url, b.build().context("building the HTTP client")?, counter))
    }
}

impl AccessMethod {
    /// The upload fast path for this method, when it is plain HTTP/1.1 or HTTPS trusting
    /// public roots and/or `tls.ca_cert` (or the embedded target's CA); `None` otherwise
    /// (HTTP/2, client certificates, `insecure`, a server-name override keep reqwest).
    pub async fn fast_endpoint(
        &self,
        url: &reqwest::Url,
        embedded_ca: Option<&str>,
        timeout: Duration,
        counter: ConnectionCounter,
    ) -> Result<Option<crate::http1::Endpoint>> {
        if self.http_version != HttpVersion::Http1
            || self.tls.client_cert.is_some()
            || self.tls.insecure
            || self.tls.server_name.is_some()
        {
            return Ok(None);
        }
        let mut extra = Vec::new();
        if let Some(ca) = embedded_ca {
            extra.push(ca.as_bytes().to_vec());
        }
        if let Some(ca) = &self.tls.ca_cert {
            extra.push(std::fs::read(ca).with_context(|| {
                format!("access method {}: tls.ca_cert {}", self.name, ca.display())
            })?);
        }
        let reuse = self.connection == ConnectionPolicy::Reuse;
        crate::http1::Endpoint::new(url, &extra, reuse, timeout, counter)
            .await
            .map(Some)
            .with_context(|| format!("access method {}", self.name))
    }
}

/// Resolves `--access-methods` entries: a path to a TOML file, or a name looked up as
/// `<dir>/<name>.toml`.
pub fn resolve(spec: &str, dir: &Path) -> Result<AccessMethod> {
    let p = Path::new(spec);
    if spec.ends_with(".toml") || p.components().count() > 1 {
        return AccessMethod::load(p);
    }
    let file = dir.join(format!("{spec}.toml"));
    if !file.is_file() {
        let known = list(dir)
            .map(|v| {
                v.iter()
                    .map(|m| m.name.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        bail!(
            "--access-methods: no method `{spec}` (no file {}); known: {known}",
            file.display()
        );
    }
    AccessMethod::load(&file)
}

/// Counts the connections a client opens: every call of its connector is a new TCP (and
/// TLS) connection. One atomic add per connection, nothing per request.
#[derive(Debug, Clone, Default)]
pub struct ConnectionCounter(pub Arc<AtomicU64>);

impl ConnectionCounter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl<S> tower_layer::Layer<S> for ConnectionCounter {
    type Service = Counted<S>;
    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            n: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    n: Arc<AtomicU64>,
}

impl<S: tower_service::Service<R>, R> tower_service::Service<R> for Counted<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;
    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }
    fn call(&mut self, req: R) -> S::Future {
        self.n.fetch_add(1, Ordering::Relaxed);
        self.inner.call(req)
    }
}

/// Every method file in `dir`, by name.
pub fn list(dir: &Path) -> Result<Vec<AccessMethod>> {
    let mut out = Vec::new();
    let rd = std::fs::read_dir(dir)
        .with_context(|| format!("--access-methods-dir {}: cannot read", dir.display()))?;
    let mut paths: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    for p in paths {
        out.push(AccessMethod::load(&p)?);
    }
    Ok(out)
}

/// Can a TCP connection be made to the method's address within `timeout`?
pub async fn reachable(m: &AccessMethod, timeout: Duration) -> Result<(), String> {
    if m.is_embedded() {
        return Ok(());
    }
    let url = reqwest::Url::parse(&m.url).map_err(|e| e.to_string())?;
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_matches(|c| c == '[' || c == ']')
        .to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    match tokio::time::timeout(
        timeout,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("{}: {e}", m.url)),
        Err(_) => Err(format!("{}: no answer within {:?}", m.url, timeout)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_name_the_file_and_the_key() {
        let src = Path::new("access-methods/x.toml");
        let e = format!(
            "{:#}",
            AccessMethod::parse(
                "name = 'x'\nurl = 'http://h'\nconnection = 'sometimes'\n",
                src
            )
            .unwrap_err()
        );
        assert!(e.contains("x.toml") && e.contains("connection"), "{e}");
        let e = format!(
            "{:#}",
            AccessMethod::parse("name = 'x'\nurl = 'not a url'\n", src).unwrap_err()
        );
        assert!(e.contains("`url`"), "{e}");
        let e = format!(
            "{:#}",
            AccessMethod::parse("name = 'x'\nurl = 'http://h'\nbogus = 1\n", src).unwrap_err()
        );
        assert!(e.contains("bogus"), "{e}");
        let e = format!(
            "{:#}",
            AccessMethod::parse(
                "name = 'x'\nurl = 'https://h'\n[tls]\nca_cert = 'nope.pem'\n",
                src
            )
            .unwrap_err()
        );
        assert!(e.contains("tls.ca_cert"), "{e}");
        let ok = AccessMethod::parse(
            "name = 'x'\nurl = 'embedded:https'\nconnection = 'new'\nhttp_version = '2'\n",
            src,
        )
        .unwrap();
        assert!(
            ok.is_embedded()
                && ok.connection == ConnectionPolicy::New
                && ok.http_version == HttpVersion::Http2
        );
    }

    #[test]
    fn shipped_methods_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("access-methods");
        let names: Vec<String> = list(&dir).unwrap().into_iter().map(|m| m.name).collect();
        for n in [
            "https-lb",
            "http-lb",
            "direct",
            "https-proxy",
            "http-proxy",
            "embedded-http",
            "embedded-https",
        ] {
            assert!(names.contains(&n.to_string()), "{n} in {names:?}");
        }
    }
}
