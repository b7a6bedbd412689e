//! The route of an upload: the access path's fast endpoint (when it has one) or the shared
//! reqwest client, and where the access path names the backend node that served it (a
//! response header, or the `.route` suffix of a session cookie). Protocols build the request
//! body and headers; this sends it and hands back status, node and body.

use bytes::Bytes;
use reqwest::header::{HeaderName, HeaderValue};

use super::body::ChunkBody;
use super::fast::{Endpoint, Lane};
use crate::metrics::UploadError;

static SET_COOKIE: HeaderName = reqwest::header::SET_COOKIE;

/// How uploads of one access method travel, shared by all its workers.
#[derive(Debug, Clone, Default)]
pub struct Route {
    /// The upload fast path (per-worker HTTP/1.1 connections), when the access path allows it.
    pub fast: Option<std::sync::Arc<Endpoint>>,
    /// Response header naming the backend node, if the access path sets one.
    pub node_header: Option<HeaderName>,
    /// Or a cookie carrying a `.route` suffix (`JSESSIONID=abc.node1`).
    pub node_cookie: Option<String>,
}

impl Route {
    /// Sends one upload body: over the worker's own connection when the fast path applies
    /// (`path` is the request target there), else through reqwest (`url()`, built only then).
    /// `headers` are the request's own (authorization, content type). Returns the status,
    /// the backend node that served it, and the answer's body.
    pub async fn send_upload(
        &self,
        client: &reqwest::Client,
        lane: &mut Lane,
        url: impl FnOnce() -> String,
        path: &str,
        headers: &[(HeaderName, &HeaderValue)],
        body: ChunkBody,
    ) -> Result<(reqwest::StatusCode, Option<String>, Bytes), UploadError> {
        if let Some(fast) = &self.fast {
            let keep = [
                self.node_header.as_ref(),
                self.node_cookie.as_ref().map(|_| &SET_COOKIE),
            ];
            let a = fast.send(lane, "POST", path, headers, body, &keep).await?;
            return Ok((
                a.status,
                node_of(
                    &a.headers,
                    self.node_header.as_ref(),
                    self.node_cookie.as_deref(),
                ),
                a.body,
            ));
        }
        let mut req = client.post(url());
        for (k, v) in headers {
            req = req.header(k.clone(), (*v).clone());
        }
        let resp = req
            .body(reqwest::Body::wrap(body))
            .send()
            .await
            .map_err(|e| UploadError::transport(&e))?;
        let status = resp.status();
        let node = node_of(
            resp.headers(),
            self.node_header.as_ref(),
            self.node_cookie.as_deref(),
        );
        let bytes = resp.bytes().await.map_err(|e| UploadError::transport(&e))?;
        Ok((status, node, bytes))
    }
}

/// The backend node that served a response: the node header, else the route suffix of a
/// session cookie (`Set-Cookie: JSESSIONID=1A2B.node2; Path=/` → `node2`).
pub fn node_of(
    headers: &reqwest::header::HeaderMap,
    header: Option<&reqwest::header::HeaderName>,
    cookie: Option<&str>,
) -> Option<String> {
    if let Some(v) = header
        .and_then(|h| headers.get(h))
        .and_then(|v| v.to_str().ok())
    {
        return Some(v.to_string());
    }
    let name = cookie?;
    headers
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| {
            let (k, v) = c.split(';').next()?.split_once('=')?;
            if k.trim() != name {
                return None;
            }
            let (_, route) = v.trim().rsplit_once('.')?;
            (!route.is_empty()).then(|| route.to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_from_header_or_route_cookie() {
        use reqwest::header::{HeaderMap, HeaderName, HeaderValue, SET_COOKIE};
        let mut h = HeaderMap::new();
        h.append(SET_COOKIE, HeaderValue::from_static("other=1; Path=/"));
        h.append(
            SET_COOKIE,
            HeaderValue::from_static("JSESSIONID=8F1A2B3C.node2; Path=/alfresco; HttpOnly"),
        );
        assert_eq!(
            node_of(&h, None, Some("JSESSIONID")).as_deref(),
            Some("node2")
        );
        let name = HeaderName::from_static("x-node");
        assert_eq!(node_of(&h, Some(&name), None), None);
        h.insert(name.clone(), HeaderValue::from_static("n1"));
        assert_eq!(
            node_of(&h, Some(&name), Some("JSESSIONID")).as_deref(),
            Some("n1")
        );
    }
}
