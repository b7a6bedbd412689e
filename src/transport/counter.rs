//! Connection counting: every call of a client's connector is a new TCP (and TLS)
//! connection. One atomic add per connection, nothing per request; read before and after a
//! run to report how many connections it opened.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
