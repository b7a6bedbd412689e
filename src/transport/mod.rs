//! Transport: how requests reach the repository, knowing nothing of any repository API.
//! Access-method files (`access`), the clients built from them (`client`), the per-worker
//! HTTP/1.1 upload fast path (`fast`, its wire format `h1`), the route an upload takes and the node that served it
//! (`route`), connection counting (`counter`) and the zero-copy upload body (`body`).
//! Protocols build requests and bodies with these types; nothing here imports `protocol`.

pub mod access;
pub mod body;
pub mod client;
pub mod counter;
pub mod fast;
mod h1;
pub mod route;

pub use access::{AccessMethod, ConnectionPolicy, HttpVersion};
pub use body::ChunkBody;
pub use counter::ConnectionCounter;

/// The one rustls crypto provider of the process (client fast path, reqwest, the embedded
/// target). *ring* by default: it builds in a fraction of AWS-LC's time, which is most of a
/// cold quick start's build saved. The `aws-lc` feature (the peak build, the container image)
/// selects aws-lc-rs instead, whose AES-GCM was 10-15 % cheaper on a CPU with AVX-512 and
/// is dearer on one with only VAES/AVX2 (docs/performance.md).
#[cfg(not(feature = "aws-lc"))]
pub fn tls_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// The one rustls crypto provider of the process: aws-lc-rs (the `aws-lc` feature).
#[cfg(feature = "aws-lc")]
pub fn tls_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::aws_lc_rs::default_provider()
}

/// A reqwest client builder with the project's one TLS implementation installed first.
/// Every reqwest client is made from this: reqwest is built without a crypto provider of its
/// own, so the process has one, [`tls_provider()`], as the upload fast path and the
/// embedded target have.
pub fn reqwest_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder()
}

/// Makes [`tls_provider()`] the process's rustls crypto provider (idempotent; a
/// provider installed earlier by an embedding program is kept).
fn install_tls_provider() {
    let _ = tls_provider().install_default();
}
