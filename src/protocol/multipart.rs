//! The `multipart/form-data` bodies the APIs upload with: one boundary, a head of text (and
//! typed) fields, then the file part, so the document tail and the closing boundary are one
//! chunk and the shared document prefix is never copied.

use bytes::Bytes;
use reqwest::header::HeaderValue;

use crate::fixtures::Doc;

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
        self.buf.extend_from_slice(filename.as_bytes());
        self.buf.extend_from_slice(b"\"\r\nContent-Type: ");
        self.buf.extend_from_slice(mime.as_bytes());
        self.buf.extend_from_slice(b"\r\n\r\n");
        Bytes::from(self.buf)
    }
}

/// The document tail followed by the closing boundary.
pub fn multipart_tail(doc: &Doc<'_>) -> Bytes {
    let mut t = Vec::with_capacity(doc.template.tail_len() + BOUNDARY.len() + 8);
    doc.template.write_tail(&doc.marker, &mut t);
    t.extend_from_slice(b"\r\n--");
    t.extend_from_slice(BOUNDARY.as_bytes());
    t.extend_from_slice(b"--\r\n");
    Bytes::from(t)
}

pub fn multipart_content_type() -> HeaderValue {
    HeaderValue::from_static("multipart/form-data; boundary=ingestbench-7d3f1a9c2b6e4058")
}

#[cfg(test)]
mod tests {
    use super::*;

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
