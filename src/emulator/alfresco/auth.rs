//! Alfresco authentication as the embedded target answers it: `POST tickets` (login),
//! `GET`/`DELETE tickets/-me-`, and who a request is: Basic `user:password`, a ticket in Basic
//! (`base64(ticket)`, `:ticket`, `ROLE_TICKET:ticket`) or `?alf_ticket=`. The REST routes are
//! in `alfresco`.

use base64::Engine;
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::http::request::Parts;
use serde_json::{Value, json};

use super::{blocking, error, json_resp, store_failure, unauthorized};
use crate::emulator::State;

type Resp = Response<Full<Bytes>>;

/// The authenticated user, from Basic user:password, a ticket in Basic, or `alf_ticket`.
pub(super) async fn authenticate(
    state: &State,
    parts: &Parts,
    query: &[(String, String)],
) -> Option<String> {
    let ticket_user = |t: String| async move {
        if let Some(u) = state.tickets.lock().expect("tickets").get(&t) {
            return Some(u.clone());
        }
        let u = blocking(&state.store, move |s| s.ticket_user(&t))
            .await
            .ok()
            .flatten()?;
        Some(u)
    };
    if let Some((_, t)) = query.iter().find(|(k, _)| k == "alf_ticket") {
        return ticket_user(t.clone()).await;
    }
    let raw = basic_credentials(parts)?;
    match raw.split_once(':') {
        None => ticket_user(raw).await,
        Some(("", t)) | Some(("ROLE_TICKET", t)) => ticket_user(t.to_string()).await,
        Some((user, pass)) => {
            let ok = state
                .users
                .get(user)
                .is_some_and(|p| constant_eq(p.expose(), pass));
            ok.then(|| user.to_string())
        }
    }
}

fn constant_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

pub(super) async fn tickets(
    state: &State,
    parts: &Parts,
    method: &str,
    rest: &str,
    query: &[(String, String)],
    body: Bytes,
) -> Resp {
    match (method, rest) {
        ("POST", "tickets") => {
            let v: Value = match serde_json::from_slice(&body) {
                Ok(v) => v,
                Err(_) => {
                    return error(
                        400,
                        "framework.exception.InvalidArgument",
                        "Could not read content from HTTP request body",
                    );
                }
            };
            let (Some(user), Some(pass)) = (
                v.get("userId").and_then(Value::as_str),
                v.get("password").and_then(Value::as_str),
            ) else {
                return error(
                    400,
                    "framework.exception.InvalidArgument",
                    "Invalid login details",
                );
            };
            if !state
                .users
                .get(user)
                .is_some_and(|p| constant_eq(p.expose(), pass))
            {
                return error(403, "framework.exception.PermissionDenied", "Login failed");
            }
            let ticket = format!("TICKET_{}", uuid::Uuid::new_v4().simple());
            let (t2, u2) = (ticket.clone(), user.to_string());
            if let Err(e) = blocking(&state.store, move |s| s.put_ticket(&t2, &u2)).await {
                return store_failure(e);
            }
            state
                .tickets
                .lock()
                .expect("tickets")
                .insert(ticket.clone(), user.to_string());
            state
                .logins
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            json_resp(201, &json!({"entry": {"id": ticket, "userId": user}}))
        }
        ("GET", "tickets/-me-") | ("DELETE", "tickets/-me-") => {
            let Some(user) = authenticate(state, parts, query).await else {
                return unauthorized();
            };
            let ticket = presented_ticket(parts, query);
            if method == "GET" {
                return json_resp(
                    200,
                    &json!({"entry": {"id": ticket.unwrap_or_default(), "userId": user}}),
                );
            }
            if let Some(t) = ticket {
                state.tickets.lock().expect("tickets").remove(&t);
                let _ = blocking(&state.store, move |s| s.delete_ticket(&t)).await;
            }
            Response::builder()
                .status(204)
                .body(Full::new(Bytes::new()))
                .expect("response")
        }
        _ => error(
            404,
            "framework.exception.ApiDefault",
            &format!("Unknown API path {rest}"),
        ),
    }
}

/// The decoded payload of a Basic `Authorization` header. The scheme is compared ignoring
/// case, as Alfresco's authenticators and its tickets resource do
/// (`authorizationParts[0].equalsIgnoreCase("basic")`) and RFC 7235 says.
fn basic_credentials(parts: &Parts) -> Option<String> {
    let h = parts
        .headers
        .get(hyper::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, b64) = h.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    String::from_utf8(raw).ok()
}

fn presented_ticket(parts: &Parts, query: &[(String, String)]) -> Option<String> {
    if let Some((_, t)) = query.iter().find(|(k, _)| k == "alf_ticket") {
        return Some(t.clone());
    }
    let raw = basic_credentials(parts)?;
    match raw.split_once(':') {
        None => Some(raw),
        Some(("", t)) | Some(("ROLE_TICKET", t)) => Some(t.to_string()),
        _ => None,
    }
}
