//! Clients built from an access method: the shared reqwest client (HTTP version, connection
//! policy, CA, client certificate, server-name override, extra headers, connection counting)
//! and, where the path allows it, the per-worker upload fast path (`transport::fast`).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::access::{AccessMethod, ConnectionPolicy, HttpVersion};
use super::counter::ConnectionCounter;

impl AccessMethod {
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
        let mut b = crate::transport::reqwest_builder()
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
        let b = self.tls_settings(b, &mut url, embedded_ca)?;
        let mut b = b;
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

    /// The TLS part of the client: trusted CAs, client certificate, `insecure`, and a
    /// server-name override (which also changes the host of `url`).
    fn tls_settings(
        &self,
        mut b: reqwest::ClientBuilder,
        url: &mut reqwest::Url,
        embedded_ca: Option<&str>,
    ) -> Result<reqwest::ClientBuilder> {
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
        Ok(b)
    }
    /// The upload fast path for this method, when it is plain HTTP/1.1 or HTTPS trusting
    /// public roots and/or `tls.ca_cert` (or the embedded target's CA); `None` otherwise
    /// (HTTP/2, client certificates, `insecure`, a server-name override keep reqwest).
    pub async fn fast_endpoint(
        &self,
        url: &reqwest::Url,
        embedded_ca: Option<&str>,
        timeout: Duration,
        counter: ConnectionCounter,
    ) -> Result<Option<super::fast::Endpoint>> {
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
        super::fast::Endpoint::new(url, &extra, reuse, timeout, counter)
            .await
            .map(Some)
            .with_context(|| format!("access method {}", self.name))
    }
}
