//! A strict `multipart/form-data` parser for the embedded target (whole body in memory;
//! parts are zero-copy slices). Malformed input is an error, never a panic: it is fuzzed.

use bytes::Bytes;
use memchr::memmem;

#[derive(Debug, Clone)]
pub struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Bytes,
}

/// The boundary parameter of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (mime, params) = content_type.split_once(';')?;
    if !mime.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        if k.trim().eq_ignore_ascii_case("boundary") {
            let v = v.trim().trim_matches('"');
            (!v.is_empty() && v.len() <= 200).then(|| v.to_string())
        } else {
            None
        }
    })
}

pub fn parse(body: &Bytes, boundary: &str) -> Result<Vec<Part>, String> {
    let delim = format!("--{boundary}");
    let next_delim = format!("\r\n--{boundary}");
    let mut pos = match memmem::find(body, delim.as_bytes()) {
        Some(p) => p + delim.len(),
        None => return Err("no multipart boundary in the body".into()),
    };
    let mut parts = Vec::new();
    loop {
        let rest = &body[pos..];
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        if !rest.starts_with(b"\r\n") {
            return Err("malformed multipart boundary line".into());
        }
        pos += 2;
        let head_end =
            memmem::find(&body[pos..], b"\r\n\r\n").ok_or("multipart part without a header end")?;
        let headers = std::str::from_utf8(&body[pos..pos + head_end])
            .map_err(|_| "multipart headers are not UTF-8")?;
        let data_start = pos + head_end + 4;
        let data_len = memmem::find(&body[data_start..], next_delim.as_bytes())
            .ok_or("multipart body is truncated (no closing boundary)")?;
        let mut part = Part {
            name: String::new(),
            filename: None,
            content_type: None,
            data: body.slice(data_start..data_start + data_len),
        };
        let mut has_disposition = false;
        for line in headers.split("\r\n") {
            let (k, v) = line
                .split_once(':')
                .ok_or("malformed multipart header line")?;
            if k.trim().eq_ignore_ascii_case("content-disposition") {
                has_disposition = true;
                let mut items = split_params(v);
                if !items
                    .first()
                    .is_some_and(|f| f.eq_ignore_ascii_case("form-data"))
                {
                    return Err("Content-Disposition must be form-data".into());
                }
                items.remove(0);
                for item in items {
                    if let Some((pk, pv)) = item.split_once('=') {
                        let pv = unquote(pv.trim());
                        match pk.trim().to_ascii_lowercase().as_str() {
                            "name" => part.name = pv,
                            "filename" => part.filename = Some(pv),
                            _ => {}
                        }
                    }
                }
            } else if k.trim().eq_ignore_ascii_case("content-type") {
                part.content_type = Some(v.trim().to_string());
            }
        }
        if !has_disposition {
            return Err("multipart part without Content-Disposition".into());
        }
        parts.push(part);
        pos = data_start + data_len + next_delim.len();
    }
}

/// Splits on `;` outside double quotes.
fn split_params(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in s.chars() {
        match c {
            _ if escaped => {
                cur.push(c);
                escaped = false;
            }
            '\\' if quoted => {
                cur.push(c);
                escaped = true;
            }
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ';' if !quoted => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

fn unquote(s: &str) -> String {
    match s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_and_files() {
        let b = "XyZ";
        let body = Bytes::from(format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\na;b.txt\r\n--{b}\r\nContent-Disposition: form-data; name=\"filedata\"; filename=\"x \\\"q\\\".txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n\r\n--{b}--\r\n"
        ));
        let parts = parse(&body, b).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (parts[0].name.as_str(), &parts[0].data[..]),
            ("name", &b"a;b.txt"[..])
        );
        assert_eq!(parts[1].filename.as_deref(), Some("x \"q\".txt"));
        assert_eq!(&parts[1].data[..], b"hello\r\n");
        assert_eq!(
            boundary("multipart/form-data; boundary=\"XyZ\"").as_deref(),
            Some("XyZ")
        );
        assert_eq!(boundary("application/json"), None);
    }

    #[test]
    fn malformed_is_an_error_not_a_panic() {
        for body in [
            "",
            "--X",
            "--X\r\n",
            "--X\r\nContent-Disposition: form-data\r\n\r\nabc",
            "--Xjunk",
            "--X\r\nno-colon\r\n\r\n\r\n--X--",
        ] {
            assert!(parse(&Bytes::from(body), "X").is_err(), "{body:?}");
        }
    }
}
