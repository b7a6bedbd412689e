//! A corpus described from a listing exported from the source system, when the files cannot
//! be brought to the benchmark client: CSV with a header naming at least a `size` column
//! (bytes; also `bytes`, `size_bytes`), optionally `path` (or `name`) and `mime` (or
//! `content_type`, `mimetype`). Streamed line by line in constant memory; folder fan-out is
//! counted over consecutive lines of one folder (exact for a listing sorted by path).
//! Malformed lines are counted with their line number, never fatal.

use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::check::Checker;
use super::{CorpusDescription, Describer};

/// Splits one CSV line (RFC 4180 quoting; no newlines inside fields).
fn fields(line: &str) -> Result<Vec<String>, &'static str> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (false, '"') if at_start => {
                quoted = true;
                at_start = false;
            }
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            (true, '"') => {
                quoted = false;
                if !matches!(chars.peek(), None | Some(',')) {
                    return Err("text after a closing quote");
                }
            }
            (false, ',') => {
                out.push(std::mem::take(&mut cur));
                at_start = true;
            }
            (_, c) => {
                cur.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return Err("an unclosed quote");
    }
    out.push(cur);
    Ok(out)
}

/// Describes the listing at `path`.
pub fn read(path: &Path) -> Result<CorpusDescription> {
    read_checked(path, None)
}

/// [`read`], feeding the pre-flight `checker` line by line: names are compared within a run
/// of consecutive lines of one folder (all of a folder's lines when the listing is sorted by
/// path), and each folder's own name once, when its first line comes.
pub fn read_checked(path: &Path, mut checker: Option<&mut Checker>) -> Result<CorpusDescription> {
    let f = std::fs::File::open(path)
        .with_context(|| format!("corpus listing {}: cannot open", path.display()))?;
    let mut lines = std::io::BufReader::with_capacity(1 << 16, f).lines();
    let header = match lines.next() {
        Some(h) => h.with_context(|| format!("corpus listing {}: cannot read", path.display()))?,
        None => bail!(
            "corpus listing {}: empty (expected a header line such as `path,size,mime`)",
            path.display()
        ),
    };
    let cols: Vec<String> = fields(header.trim_start_matches('\u{feff}'))
        .map_err(|e| anyhow::anyhow!("corpus listing {}: header: {e}", path.display()))?
        .iter()
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let find = |names: &[&str]| cols.iter().position(|c| names.contains(&c.as_str()));
    let Some(size_col) = find(&["size", "bytes", "size_bytes"]) else {
        bail!(
            "corpus listing {}: the header `{header}` has no size column (name one `size`, in bytes; `path` and `mime` are optional)",
            path.display()
        );
    };
    let path_col = find(&["path", "name", "file"]);
    let mime_col = find(&["mime", "content_type", "mimetype", "mime_type"]);
    let mut d = Describer::new(&path.display().to_string(), "listing");
    let (mut folder, mut in_folder, mut folder_depth) = (String::new(), 0u64, 0u64);
    let mut opened = false;
    for (i, line) in lines.enumerate() {
        let n = i as u64 + 2;
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                d.malformed(n, &e.to_string());
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let f = match fields(&line) {
            Ok(f) => f,
            Err(e) => {
                d.malformed(n, e);
                continue;
            }
        };
        let size = match f.get(size_col).map(|s| s.trim().parse::<u64>()) {
            Some(Ok(s)) => s,
            _ => {
                d.malformed(n, "no size in bytes");
                continue;
            }
        };
        let mime = mime_col
            .and_then(|c| f.get(c))
            .map(|m| m.trim())
            .filter(|m| !m.is_empty())
            .unwrap_or("application/octet-stream");
        d.document(size, mime);
        if let Some(p) = path_col.and_then(|c| f.get(c)) {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p.as_str()));
            if dir != folder {
                if let Some(c) = checker.as_deref_mut() {
                    if in_folder > 0 {
                        c.end_folder();
                    }
                    check_new_folders(c, &folder, dir);
                    c.begin_folder(dir);
                }
                opened = true;
                d.folder(&folder, in_folder, folder_depth);
                folder = dir.to_string();
                in_folder = 0;
                folder_depth = dir.split('/').filter(|s| !s.is_empty()).count() as u64;
            }
            in_folder += 1;
            if let Some(c) = checker.as_deref_mut() {
                if !opened {
                    // The root's lines come first: no folder change opened it.
                    c.begin_folder("");
                }
                c.entry(name, false, size);
            }
            opened = true;
        } else if let Some(c) = checker.as_deref_mut() {
            // No path column: nothing to name or compare, sizes only.
            c.sized(&format!("line {n}"), size);
        }
    }
    if let Some(c) = checker {
        c.end_folder();
    }
    d.folder(&folder, in_folder, folder_depth);
    Ok(d.finish())
}

/// The folders of `dir` that `prev` did not already open (their names, checked once).
fn check_new_folders(c: &mut Checker, prev: &str, dir: &str) {
    let (p, n): (Vec<&str>, Vec<&str>) = (
        prev.split('/').filter(|s| !s.is_empty()).collect(),
        dir.split('/').filter(|s| !s.is_empty()).collect(),
    );
    let shared = p.iter().zip(&n).take_while(|(a, b)| a == b).count();
    for i in shared..n.len() {
        c.folder_name(&n[..=i].join("/"), n[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields() {
        assert_eq!(fields("a,b,c").unwrap(), vec!["a", "b", "c"]);
        assert_eq!(
            fields(r#""a,b",2,"x""y""#).unwrap(),
            vec!["a,b", "2", "x\"y"]
        );
        assert_eq!(fields("a,,").unwrap(), vec!["a", "", ""]);
        assert!(fields(r#""open,1"#).is_err());
        assert!(fields(r#""a"b,1"#).is_err());
    }
}
