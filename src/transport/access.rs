//! Access-method files: how requests reach the repository (TLS or not, through a load
//! balancer, a plain reverse proxy, or straight to a node; keep-alive or a new connection per
//! document). Each is a TOML file in `access-methods/`; this module parses and checks them,
//! lists and resolves them, and probes reachability. Building clients from them is
//! `transport::client`. It knows nothing of any repository API beyond its name.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use reqwest::header::HeaderName;
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

impl std::fmt::Display for ConnectionPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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
    pub protocol: Option<crate::protocol_kind::ProtocolKind>,
    /// Or: a session cookie whose value ends in `.<route>` (mod_jk / Tomcat jvmRoute style),
    /// e.g. `JSESSIONID`.
    pub node_cookie: Option<String>,
    /// node_exporter URLs of the servers behind this path (their CPU and memory are read over
    /// every run's measured window, as with --server-metrics).
    #[serde(default)]
    pub server_metrics: Vec<String>,
    /// Local processes serving this path (e.g. the nodes behind a local load balancer).
    #[serde(default)]
    pub server_pids: Vec<u32>,
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
                "access method {}: {}\n  (keys: name, description, url, http_version = \"1.1\"|\"2\", connection = \"reuse\"|\"new\", node_header, server_metrics = [URL], server_pids = [PID], [tls] ca_cert/client_cert/client_key/server_name/insecure, [headers]; see access-methods/README.md)",
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
}

/// Whether `url` names `localhost` or a loopback address.
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(h) = url.host_str() else {
        return false;
    };
    let ip = h.trim_matches(['[', ']']).parse::<std::net::IpAddr>();
    h.eq_ignore_ascii_case("localhost") || ip.is_ok_and(|ip| ip.is_loopback())
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

/// The response header the embedded target names the node that served a request in
/// (`x-ingestbench-node`); `run`'s direct method reads it.
pub const NODE_HEADER: &str = "x-ingestbench-node";

/// `run`'s access method: `direct` to `url` (`embedded:http` for the embedded target),
/// keep-alive, trusting `ca_cert`, the serving node named by the emulator's header.
pub fn direct_method(
    url: String,
    ca_cert: Option<PathBuf>,
    protocol: crate::protocol_kind::ProtocolKind,
) -> AccessMethod {
    AccessMethod {
        name: "direct".into(),
        description: "run: straight to --url".into(),
        source: PathBuf::from(if url.starts_with("embedded:") {
            "--url (embedded target)".to_string()
        } else {
            format!(
                "--url {}",
                reqwest::Url::parse(&url).map_or(url.clone(), |u| redact(&u))
            )
        }),
        url,
        http_version: HttpVersion::Http1,
        connection: ConnectionPolicy::Reuse,
        tls: TlsSettings {
            ca_cert,
            ..TlsSettings::default()
        },
        headers: Default::default(),
        node_header: Some(NODE_HEADER.to_string()),
        protocol: Some(protocol),
        node_cookie: None,
        server_metrics: Vec::new(),
        server_pids: Vec::new(),
    }
}

/// The URL with any credentials removed, for output.
pub fn redact(url: &reqwest::Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls_are_on_this_host() {
        let on = |u: &str| is_loopback(&reqwest::Url::parse(u).unwrap());
        for u in [
            "http://localhost:8080",
            "https://LOCALHOST",
            "http://127.0.0.2:1",
            "http://[::1]:80",
        ] {
            assert!(on(u), "{u}");
        }
        for u in [
            "http://alfresco:8080",
            "https://10.0.0.1",
            "http://[fe80::1]:80",
        ] {
            assert!(!on(u), "{u}");
        }
    }

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
