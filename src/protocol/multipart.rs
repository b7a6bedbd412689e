//! The `multipart/form-data` bodies the APIs upload with: one boundary, a head of text (and
//! typed) fields, then the file part, so the document tail and the closing boundary are one
//! chunk and the document's shared head and fill are never copied.

use bytes::Bytes;
use reqwest::header::HeaderValue;

use crate::fixtures::{Content, Doc};
use crate::transport::ChunkBody;

/// Boundary of every multipart body ingestbench sends. Generated content is words, digits
/// and markup, so it never contains this string.
pub const BOUNDARY: &str = "ingestbench-7d3f1a9c2b6e4058";

/// Builds the head of a `multipart/form-data` body: text fields, then the file part header.
/// The file part is always last so the document tail and the closing boundary are one chunk.
pub struct MultipartHead {
    buf: Vec<u8>,
}

impl Default for MultipartHead {
    fn default() -> Self {
        Self::new()
    }
}

impl MultipartHead {
    pub fn new() -> MultipartHead {
        MultipartHead {
            buf: Vec::with_capacity(2048),
        }
    }
    pub fn text(&mut self, name: &str, value: &str) -> &mut Self {
        self.buf.extend_from_slice(b"--");
        self.buf.extend_from_slice(BOUNDARY.as_bytes());
        self.buf
            .extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\"\r\n\r\n");
        self.buf.extend_from_slice(value.as_bytes());
        self.buf.extend_from_slice(b"\r\n");
        self
    }
    /// A field with its own content type (Liferay's `document` JSON part).
    pub fn typed(&mut self, name: &str, content_type: &str, value: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b"--");
        self.buf.extend_from_slice(BOUNDARY.as_bytes());
        self.buf
            .extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\"\r\nContent-Type: ");
        self.buf.extend_from_slice(content_type.as_bytes());
        self.buf.extend_from_slice(b"\r\n\r\n");
        self.buf.extend_from_slice(value);
        self.buf.extend_from_slice(b"\r\n");
        self
    }
    /// Starts the file part; returns the head bytes.
    pub fn file(mut self, name: &str, filename: &str, mime: &str) -> Bytes {
        self.buf.extend_from_slice(b"--");
        self.buf.extend_from_slice(BOUNDARY.as_bytes());
        self.buf
            .extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\"; filename=\"");
        push_quoted(&mut self.buf, filename);
        self.buf.extend_from_slice(b"\"\r\nContent-Type: ");
        self.buf.extend_from_slice(mime.as_bytes());
        self.buf.extend_from_slice(b"\r\n\r\n");
        Bytes::from(self.buf)
    }
}

/// `s` inside a quoted `Content-Disposition` parameter, encoded as browsers do (the WHATWG
/// multipart/form-data encoding: `"`, CR and LF percent-encoded), so a real file named
/// `a "b".pdf` cannot end the parameter early. The repository takes the document's name from
/// its own field (`name`, `title`, `cmis:name`), never from this one.
fn push_quoted(buf: &mut Vec<u8>, s: &str) {
    for &b in s.as_bytes() {
        match b {
            b'"' => buf.extend_from_slice(b"%22"),
            b'\r' => buf.extend_from_slice(b"%0D"),
            b'\n' => buf.extend_from_slice(b"%0A"),
            _ => buf.push(b),
        }
    }
}

/// The document tail (fixtures) followed by the closing boundary.
pub fn multipart_tail(doc: &Doc<'_>) -> Bytes {
    let tail_len = doc.template().map_or(0, |t| t.tail_len());
    let mut t = Vec::with_capacity(tail_len + BOUNDARY.len() + 8);
    if let Some(tpl) = doc.template() {
        tpl.write_tail(&doc.marker, &mut t);
    }
    t.extend_from_slice(b"\r\n--");
    t.extend_from_slice(BOUNDARY.as_bytes());
    t.extend_from_slice(b"--\r\n");
    Bytes::from(t)
}

/// The whole upload body: `head` (fields and the file part's header), the document's
/// content (the fixture's shared head and fill, or the real file streamed from disk), the tail. A
/// file that cannot be opened fails this upload as an I/O error.
pub fn document_body(doc: &Doc<'_>, head: Bytes) -> Result<ChunkBody, crate::metrics::UploadError> {
    match doc.content {
        Content::Fixture(t) => Ok(ChunkBody::new(head, t.shared(), multipart_tail(doc))),
        Content::File(f) => {
            ChunkBody::file(head, &f.path, f.size, multipart_tail(doc)).map_err(|e| {
                crate::metrics::UploadError {
                    class: crate::metrics::ErrorClass::Io,
                    status: None,
                    message: format!("{}: {e}", f.path.display()),
                }
            })
        }
    }
}

/// [`document_body`], or for a document with versions the body that creates it: its first
/// version's bytes (`first`) in place of the head file's.
pub fn first_body(
    doc: &Doc<'_>,
    head: Bytes,
    first: Option<&super::versions::Step<'_>>,
) -> Result<ChunkBody, crate::metrics::UploadError> {
    match first {
        None => document_body(doc, head),
        Some(s) => ChunkBody::file(head, s.path, s.size, multipart_tail(doc)).map_err(|e| {
            crate::metrics::UploadError {
                class: crate::metrics::ErrorClass::Io,
                status: None,
                message: format!("{}: {e}", s.path.display()),
            }
        }),
    }
}

pub fn multipart_content_type() -> HeaderValue {
    HeaderValue::from_static("multipart/form-data; boundary=ingestbench-7d3f1a9c2b6e4058")
}

/// Percent-encodes everything but unreserved characters.
pub fn pct(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                o.push(b as char)
            }
            _ => o.push_str(&format!("%{b:02X}")),
        }
    }
    o
}

/// An `application/x-www-form-urlencoded` body from pairs.
pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", pct(k), pct(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_percent_encodes_all_but_unreserved_characters() {
        assert_eq!(pct("a b&c=d"), "a%20b%26c%3Dd");
        assert_eq!(form(&[("k_1", "x.y~z"), ("é", "")]), "k_1=x.y~z&%C3%A9=");
    }

    #[test]
    fn a_file_name_cannot_end_its_parameter() {
        let head = MultipartHead::new().file("filedata", "a \"b\"\r\n.pdf", "application/pdf");
        let text = std::str::from_utf8(&head).unwrap();
        assert!(
            text.contains("name=\"filedata\"; filename=\"a %22b%22%0D%0A.pdf\"\r\n"),
            "{text}"
        );
    }

    #[test]
    fn content_type_matches_boundary() {
        assert!(
            multipart_content_type()
                .to_str()
                .unwrap()
                .ends_with(BOUNDARY)
        );
    }
}
