//! Content types from the first bytes of a file (magic numbers), falling back to the
//! extension only when the bytes say nothing (plain text, XML without a declaration).

/// The content type of a file whose first bytes are `head`, named `name`.
pub fn content_type(head: &[u8], name: &str) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"%PDF-", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"II*\0", "image/tiff"),
        (b"MM\0*", "image/tiff"),
        (b"\x1f\x8b", "application/gzip"),
        (b"BZh", "application/x-bzip2"),
        (b"\xfd7zXZ\0", "application/x-xz"),
        (b"\x28\xb5\x2f\xfd", "application/zstd"),
        (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
        (
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
            "application/x-ole-storage",
        ),
        (b"\x7fELF", "application/x-executable"),
        (b"OggS", "audio/ogg"),
        (b"ID3", "audio/mpeg"),
        (b"{\\rtf", "application/rtf"),
    ];
    for (m, t) in MAGIC {
        if head.starts_with(m) {
            return t;
        }
    }
    if head.starts_with(b"PK\x03\x04") {
        return zip_kind(name);
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return "image/webp";
    }
    let text = head
        .iter()
        .all(|&b| b >= 0x20 || matches!(b, b'\n' | b'\r' | b'\t' | 0x0c))
        && std::str::from_utf8(trim_partial_utf8(head)).is_ok();
    if !text {
        return "application/octet-stream";
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(256)]).to_ascii_lowercase();
    let start = start.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("<?xml") {
        return "application/xml";
    }
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        return "text/html";
    }
    match extension(name).as_deref() {
        Some("xml") => "application/xml",
        Some("html" | "htm") => "text/html",
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        Some("md") => "text/markdown",
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        _ => "text/plain",
    }
}

/// A ZIP container: OOXML and ODF documents by their extension, else a ZIP archive.
fn zip_kind(name: &str) -> &'static str {
    match extension(name).as_deref() {
        Some("docx") => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        Some("xlsx") => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        Some("pptx") => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        Some("odt") => "application/vnd.oasis.opendocument.text",
        Some("ods") => "application/vnd.oasis.opendocument.spreadsheet",
        Some("jar") => "application/java-archive",
        _ => "application/zip",
    }
}

fn extension(name: &str) -> Option<String> {
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())
}

/// `head` without a UTF-8 sequence cut off at its end.
fn trim_partial_utf8(head: &[u8]) -> &[u8] {
    let mut end = head.len();
    for back in 1..=3.min(head.len()) {
        let b = head[head.len() - back];
        if b & 0xC0 == 0xC0 {
            end = head.len() - back;
            break;
        }
        if b & 0x80 == 0 {
            break;
        }
    }
    &head[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_bytes_before_extension() {
        assert_eq!(content_type(b"%PDF-1.7\n", "x.txt"), "application/pdf");
        assert_eq!(content_type(b"<?xml version", "a.dat"), "application/xml");
        assert_eq!(content_type(b"hello world\n", "README"), "text/plain");
        assert!(content_type(b"PK\x03\x04..", "a.docx").contains("wordprocessingml"));
        assert_eq!(
            content_type(&[0, 1, 2, 255], "a.txt"),
            "application/octet-stream"
        );
        assert_eq!(content_type("caf\u{e9}".as_bytes(), "a"), "text/plain");
        assert_eq!(
            content_type(&"caf\u{e9}".as_bytes()[..4], "a"),
            "text/plain"
        );
    }
}
