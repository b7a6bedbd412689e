//! HTTPS for the embedded target: a generated local CA plus a server certificate for
//! localhost, 127.0.0.1 and ::1 (the CA's PEM is handed back so clients can trust it), or a
//! certificate and key from files. ALPN offers h2 and http/1.1.

use std::sync::Arc;

use anyhow::{Context, Result};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::TlsSource;

/// (CA PEM, server cert PEM, server key PEM) for a new local CA.
pub fn generate() -> Result<(String, String, String)> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name
        .push(DnType::CommonName, "ingestbench local CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;
    let key = KeyPair::generate()?;
    let mut leaf = CertificateParams::new(vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ])?;
    leaf.distinguished_name
        .push(DnType::CommonName, "localhost");
    let cert = leaf.signed_by(&key, &ca_cert, &ca_key)?;
    Ok((ca_cert.pem(), cert.pem(), key.serialize_pem()))
}

pub fn acceptor(src: &TlsSource) -> Result<(TlsAcceptor, Option<String>)> {
    let (ca, cert_pem, key_pem) = match src {
        TlsSource::Generate => {
            let (ca, c, k) = generate()?;
            (Some(ca), c, k)
        }
        TlsSource::Files { cert, key } => (
            None,
            std::fs::read_to_string(cert)
                .with_context(|| format!("--cert {}: cannot read", cert.display()))?,
            std::fs::read_to_string(key)
                .with_context(|| format!("--key {}: cannot read", key.display()))?,
        ),
    };
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .context("--cert: not a PEM certificate")?;
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut key_pem.as_bytes())
        .context("--key: not a PEM private key")?
        .context("--key: no private key in the file")?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        crate::transport::tls_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .context("the certificate and key do not match")?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((TlsAcceptor::from(Arc::new(cfg)), ca))
}
