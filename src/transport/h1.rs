//! HTTP/1.1 on the wire for the upload fast path: a request head written into the worker's
//! reused buffer, and an answer read from the bytes received (its status, the few headers the
//! caller keeps, its body framed by `Content-Length`, chunked, or by the close). Pure: no I/O,
//! no repository API. The fast path sends one request at a time on a connection (no
//! pipelining), so an answer that leaves bytes behind ends the connection's reuse.

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Headers an answer may carry before the fast path calls it broken.
const MAX_HEADERS: usize = 96;
/// An answer's head larger than this is not HTTP the fast path will wait for.
pub const MAX_HEAD: usize = 1 << 20;

/// Writes a request head into `buf` (cleared first): request line, `host`, `user-agent`, the
/// caller's headers (any `host` or `content-length` among them left out: this writes its own)
/// and the body's length.
pub fn write_head(
    buf: &mut Vec<u8>,
    method: &str,
    target: &str,
    host: &HeaderValue,
    headers: &[(HeaderName, &HeaderValue)],
    content_length: u64,
) {
    buf.clear();
    buf.extend_from_slice(method.as_bytes());
    buf.push(b' ');
    buf.extend_from_slice(target.as_bytes());
    buf.extend_from_slice(b" HTTP/1.1\r\nhost: ");
    buf.extend_from_slice(host.as_bytes());
    buf.extend_from_slice(
        concat!(
            "\r\nuser-agent: ingestbench/",
            env!("CARGO_PKG_VERSION"),
            "\r\n"
        )
        .as_bytes(),
    );
    for (k, v) in headers {
        if k == reqwest::header::CONTENT_LENGTH || k == reqwest::header::HOST {
            continue;
        }
        buf.extend_from_slice(k.as_str().as_bytes());
        buf.extend_from_slice(b": ");
        buf.extend_from_slice(v.as_bytes());
        buf.extend_from_slice(b"\r\n");
    }
    buf.extend_from_slice(b"content-length: ");
    buf.extend_from_slice(itoa::Buffer::new().format(content_length).as_bytes());
    buf.extend_from_slice(b"\r\n\r\n");
}

/// Whether a request target can go on the request line as it is: visible ASCII, starting
/// with `/` (what the protocols build: percent-encoded paths and queries).
pub fn valid_target(target: &str) -> bool {
    target.starts_with('/') && target.bytes().all(|b| (0x21..0x7f).contains(&b))
}

/// Where an answer's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (1xx, 204, 304).
    Empty,
    Length(usize),
    Chunked,
    /// Until the server closes the connection.
    Close,
}

/// An answer's head, parsed.
#[derive(Debug)]
pub struct Head {
    pub status: u16,
    /// Bytes of the head, blank line included.
    pub len: usize,
    pub framing: Framing,
    /// The connection may carry the next request (HTTP/1.1 without `Connection: close`, or
    /// HTTP/1.0 with `keep-alive`), once the body is read.
    pub keep_alive: bool,
    /// The headers the caller asked to keep.
    pub kept: HeaderMap,
}

/// What the bytes read so far hold.
#[derive(Debug)]
pub enum Read {
    /// Not a whole head yet.
    Partial,
    /// An interim (1xx) answer of this many bytes, to drop before the real one.
    Interim(usize),
    Head(Head),
}

/// Parses an answer's head from `buf`, keeping the headers named in `keep`.
pub fn parse_head(buf: &[u8], keep: &[Option<&HeaderName>]) -> Result<Read, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(format!("an answer's head over {MAX_HEAD} bytes"));
        }
        Ok(httparse::Status::Partial) => return Ok(Read::Partial),
        Err(e) => return Err(format!("not an HTTP/1.1 answer: {e}")),
    };
    let status = resp.code.unwrap_or(0);
    if (100..200).contains(&status) && status != 101 {
        return Ok(Read::Interim(len));
    }
    let mut length = None;
    let mut chunked = false;
    let mut close = resp.version == Some(0);
    let mut kept = HeaderMap::new();
    for h in resp.headers.iter() {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .ok_or("an unreadable Content-Length")?;
            if length.is_some_and(|l| l != n) {
                return Err("two different Content-Lengths".into());
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h
                .value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            if !chunked {
                return Err("a Transfer-Encoding other than chunked".into());
            }
        } else if name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let t = token.trim_ascii();
                if t.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if t.eq_ignore_ascii_case(b"keep-alive") && resp.version == Some(0) {
                    close = false;
                }
            }
        }
        if keep
            .iter()
            .flatten()
            .any(|k| k.as_str().eq_ignore_ascii_case(name))
        {
            let (Ok(k), Ok(v)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_bytes(h.value),
            ) else {
                continue;
            };
            kept.append(k, v);
        }
    }
    let framing = match (status, chunked, length) {
        (101 | 204 | 304, _, _) => Framing::Empty,
        (_, true, _) => Framing::Chunked,
        (_, false, Some(n)) => Framing::Length(n),
        (_, false, None) => Framing::Close,
    };
    Ok(Read::Head(Head {
        status,
        len,
        framing,
        keep_alive: !close && framing != Framing::Close,
        kept,
    }))
}

/// The body in `buf` (the bytes after the head) and how many bytes it took, or None while
/// more are needed. `Framing::Close` is never whole here: its body is what is read by the close.
pub fn body(buf: &[u8], framing: Framing) -> Result<Option<(Bytes, usize)>, String> {
    match framing {
        Framing::Empty => Ok(Some((Bytes::new(), 0))),
        Framing::Length(n) => Ok((buf.len() >= n).then(|| (Bytes::copy_from_slice(&buf[..n]), n))),
        Framing::Chunked => chunked(buf),
        Framing::Close => Ok(None),
    }
}

fn crlf(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}

/// Decodes a chunked body: the data of its chunks, and the bytes taken through the trailers.
fn chunked(buf: &[u8]) -> Result<Option<(Bytes, usize)>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let Some(eol) = crlf(&buf[pos..]) else {
            return Ok(None);
        };
        let line = &buf[pos..pos + eol];
        let size = line
            .split(|&b| b == b';')
            .next()
            .unwrap_or(b"")
            .trim_ascii();
        let size = std::str::from_utf8(size)
            .ok()
            .filter(|s| !s.is_empty() && s.len() <= 15)
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or("an unreadable chunk size")?;
        pos += eol + 2;
        if size == 0 {
            loop {
                let Some(eol) = crlf(&buf[pos..]) else {
                    return Ok(None);
                };
                pos += eol + 2;
                if eol == 0 {
                    return Ok(Some((Bytes::from(out), pos)));
                }
            }
        }
        if buf.len() < pos + size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&buf[pos..pos + size]);
        if &buf[pos + size..pos + size + 2] != b"\r\n" {
            return Err("a chunk without its CRLF".into());
        }
        pos += size + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(buf: &[u8]) -> Head {
        match parse_head(buf, &[]).unwrap() {
            Read::Head(h) => h,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_request_head_carries_the_callers_headers_and_the_length() {
        let mut buf = b"old".to_vec();
        let auth = HeaderValue::from_static("Basic eA==");
        let len = HeaderValue::from_static("9");
        write_head(
            &mut buf,
            "POST",
            "/a/b?x=1",
            &HeaderValue::from_static("h:8080"),
            &[
                (reqwest::header::AUTHORIZATION, &auth),
                (reqwest::header::CONTENT_LENGTH, &len),
            ],
            11_345,
        );
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.starts_with("POST /a/b?x=1 HTTP/1.1\r\nhost: h:8080\r\nuser-agent: ingestbench/")
        );
        assert!(text.ends_with("authorization: Basic eA==\r\ncontent-length: 11345\r\n\r\n"));
        assert_eq!(text.matches("content-length").count(), 1);
        assert!(valid_target(
            "/alfresco/api/-default-/public/alfresco/versions/1/nodes/x/children"
        ));
        for bad in ["", "a/b", "/a b", "/a\r\nX: y", "/ä"] {
            assert!(!valid_target(bad), "{bad:?}");
        }
    }

    #[test]
    fn an_answer_is_framed_by_its_length_chunks_or_close() {
        let kept = HeaderName::from_static("x-node");
        let buf = b"HTTP/1.1 201 Created\r\nX-Node: n2\r\nContent-Length: 5\r\n\r\nhello";
        let Read::Head(h) = parse_head(buf, &[Some(&kept)]).unwrap() else {
            panic!()
        };
        assert_eq!(
            (h.status, h.framing, h.keep_alive),
            (201, Framing::Length(5), true)
        );
        assert_eq!(h.kept.get("x-node").unwrap(), "n2");
        assert_eq!(body(&buf[h.len..h.len + 3], h.framing).unwrap(), None);
        let (b, n) = body(&buf[h.len..], h.framing).unwrap().unwrap();
        assert_eq!((&b[..], n), (&b"hello"[..], 5));

        let buf = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n1\r\n!\r\n0\r\nT: 1\r\n\r\n";
        let h = head(buf);
        assert_eq!(h.framing, Framing::Chunked);
        let rest = &buf[h.len..];
        for cut in 0..rest.len() {
            assert_eq!(body(&rest[..cut], h.framing).unwrap(), None, "cut at {cut}");
        }
        let (b, n) = body(rest, h.framing).unwrap().unwrap();
        assert_eq!((&b[..], n), (&b"hello!"[..], rest.len()));
        assert!(body(b"5\r\nhelloXX0\r\n\r\n", Framing::Chunked).is_err());
        assert!(body(b"zz\r\n", Framing::Chunked).is_err());

        let h = head(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        assert!(!h.keep_alive);
        let h = head(b"HTTP/1.0 200 OK\r\n\r\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::Close, false));
        let h = head(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\n");
        assert!(h.keep_alive);
        let h = head(b"HTTP/1.1 204 No Content\r\n\r\n");
        assert_eq!(h.framing, Framing::Empty);
    }

    #[test]
    fn interim_partial_and_broken_answers_are_told_apart() {
        assert!(matches!(
            parse_head(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201", &[]).unwrap(),
            Read::Interim(25)
        ));
        assert!(matches!(
            parse_head(b"HTTP/1.1 201 Created\r\nContent-Le", &[]).unwrap(),
            Read::Partial
        ));
        for bad in [
            &b"SSH-2.0-OpenSSH\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        ] {
            assert!(
                parse_head(bad, &[]).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(parse_head(&vec![b'a'; MAX_HEAD + 1], &[]).is_err());
    }
}
