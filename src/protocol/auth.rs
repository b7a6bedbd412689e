//! Credentials and authentication state the three APIs share: secrets that never print,
//! the Basic header, and the shared `Authorization` header with its per-worker cache (renewed
//! once per expiry however many workers notice; one atomic load per upload, no lock).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use reqwest::header::HeaderValue;

/// `Authorization: Basic base64(user:password)`, marked sensitive.
pub fn basic_header(user: &str, password: &str) -> HeaderValue {
    use base64::Engine;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let mut v = HeaderValue::from_str(&format!("Basic {token}")).expect("base64 is a valid header");
    v.set_sensitive(true);
    v
}

/// A secret (password, ticket, token). Its `Debug` and `Display` never show the value.
#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    /// The value, for building a request. Never log what this returns.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The shared `Authorization` header, renewed at most once per expiry however many workers
/// notice it. Workers read it through an [`AuthCache`]: an atomic load per upload, no lock.
pub struct SharedAuth {
    header: RwLock<HeaderValue>,
    generation: AtomicU64,
}

impl SharedAuth {
    pub fn new(header: HeaderValue) -> SharedAuth {
        SharedAuth {
            header: RwLock::new(header),
            generation: AtomicU64::new(0),
        }
    }
    pub fn cache(self: &Arc<Self>) -> AuthCache {
        let header = self.header.read().expect("auth lock").clone();
        AuthCache {
            shared: self.clone(),
            generation: self.generation.load(Ordering::Acquire),
            header,
        }
    }
    /// Replaces the header if nobody did since `seen` (a worker's generation).
    pub fn replace_if_current(&self, seen: u64, header: HeaderValue) {
        let mut h = self.header.write().expect("auth lock");
        if self.generation.load(Ordering::Acquire) == seen {
            *h = header;
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
    }
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

/// A worker's copy of the shared auth header.
pub struct AuthCache {
    shared: Arc<SharedAuth>,
    pub generation: u64,
    header: HeaderValue,
}

impl AuthCache {
    /// The current header (refreshed from the shared one only when it changed).
    pub fn header(&mut self) -> &HeaderValue {
        let g = self.shared.generation.load(Ordering::Acquire);
        if g != self.generation {
            self.header = self.shared.header.read().expect("auth lock").clone();
            self.generation = g;
        }
        &self.header
    }
    pub fn shared(&self) -> &Arc<SharedAuth> {
        &self.shared
    }
}
