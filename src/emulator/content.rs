//! How the embedded target keeps document bytes on disk. A durable store (`ingestbench
//! target`, `--target-data-dir`) writes every byte of every document to `content/<id>`.
//! The temporary store of `run` and `sweep` may instead keep a document as a reference to
//! the common prefix it shares with an earlier document plus its own rest
//! (`content/<id>.ref`: `<base> <prefix length>`, a newline, the rest), so a quick start of
//! thousands of 3 MiB fixtures (which share everything up to a marker near their end)
//! writes kilobytes per document instead of megabytes: disk write-back then neither fills
//! the disk nor decides the measurement. Reads return the same bytes either way (prefixes
//! are compared byte for byte, never trusted by a hash).
//! Blocking calls.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bytes::Bytes;

/// Smaller documents are written whole.
const MIN_SHARED: usize = 4 * 1024;
/// Bytes of earlier documents kept in memory for comparison; past this, a document that
/// shares nothing with them is written whole.
const CACHE_BYTES: usize = 64 * 1024 * 1024;

/// An earlier document whose bytes later ones may start with: kept in memory (compared byte
/// for byte) and on disk under `blobs/`.
struct Base {
    bytes: Bytes,
    name: String,
}

/// Where content goes, and the bases of an ephemeral store.
pub struct ContentStore {
    dir: PathBuf,
    /// `None`: durable, every byte written.
    shared: Option<Mutex<Vec<Base>>>,
}

/// Length of the common prefix of `a` and `b` (compared 4 KiB at a time, then by byte).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 4096 <= n && a[i..i + 4096] == b[i..i + 4096] {
        i += 4096;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

impl ContentStore {
    pub fn new(dir: PathBuf, share_prefixes: bool) -> ContentStore {
        ContentStore {
            dir,
            shared: share_prefixes.then(|| Mutex::new(Vec::new())),
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        let shard = id.get(..2).unwrap_or("xx");
        self.dir.join(shard).join(id)
    }

    fn ref_path(&self, id: &str) -> PathBuf {
        let mut p = self.path(id).into_os_string();
        p.push(".ref");
        PathBuf::from(p)
    }

    fn blob_path(&self, name: &str) -> PathBuf {
        self.dir.join("blobs").join(name)
    }

    /// The base `content` shares most of its bytes with, and how many: (name, length).
    /// A document sharing nothing is made a base itself while there is room.
    fn prefix_of(&self, content: &Bytes) -> std::io::Result<Option<(String, usize)>> {
        let Some(shared) = &self.shared else {
            return Ok(None);
        };
        if content.len() < MIN_SHARED {
            return Ok(None);
        }
        let mut bases = shared.lock().expect("bases");
        let best = bases
            .iter()
            .filter(|b| b.bytes[..64] == content[..64])
            .map(|b| (b, common_prefix(&b.bytes, content)))
            .max_by_key(|(_, n)| *n);
        if let Some((b, n)) = best
            && n >= MIN_SHARED
            && n >= content.len() / 2
        {
            return Ok(Some((b.name.clone(), n)));
        }
        let held: usize = bases.iter().map(|b| b.bytes.len()).sum();
        if held + content.len() > CACHE_BYTES {
            return Ok(None);
        }
        let name = format!("{}", uuid::Uuid::new_v4().simple());
        let path = self.blob_path(&name);
        std::fs::create_dir_all(path.parent().expect("blobs dir"))?;
        std::fs::write(&path, content)?;
        bases.push(Base {
            bytes: content.clone(),
            name: name.clone(),
        });
        Ok(Some((name, content.len())))
    }

    /// Writes a document's content (before its node is committed).
    pub fn write(&self, id: &str, content: &Bytes) -> std::io::Result<()> {
        let path = self.path(id);
        std::fs::create_dir_all(path.parent().expect("sharded path"))?;
        match self.prefix_of(content)? {
            None => std::fs::write(&path, content),
            Some((name, n)) => {
                let head = format!("{name} {n}\n");
                let mut v = Vec::with_capacity(head.len() + content.len() - n);
                v.extend_from_slice(head.as_bytes());
                v.extend_from_slice(&content[n..]);
                std::fs::write(self.ref_path(id), v)
            }
        }
    }

    /// The document's bytes, whichever way they were kept.
    pub fn read(&self, id: &str) -> std::io::Result<Vec<u8>> {
        match std::fs::read(self.path(id)) {
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            r => return r,
        }
        let r = std::fs::read(self.ref_path(id))?;
        let bad = || std::io::Error::new(ErrorKind::InvalidData, "bad content reference");
        let nl = memchr::memchr(b'\n', &r).ok_or_else(bad)?;
        let head = std::str::from_utf8(&r[..nl]).map_err(|_| bad())?;
        let (name, n) = head.split_once(' ').ok_or_else(bad)?;
        let n: usize = n.parse().map_err(|_| bad())?;
        let mut out = std::fs::read(self.blob_path(name))?;
        if out.len() < n {
            return Err(bad());
        }
        out.truncate(n);
        out.extend_from_slice(&r[nl + 1..]);
        Ok(out)
    }

    /// Removes a document's content (either form); shared prefixes stay.
    pub fn remove(&self, id: &str) {
        let _ = std::fs::remove_file(self.path(id));
        let _ = std::fs::remove_file(self.ref_path(id));
    }

    /// Bytes under this store's content directory (for tests and reports).
    pub fn disk_bytes(&self) -> u64 {
        fn walk(p: &Path) -> u64 {
            let Ok(rd) = std::fs::read_dir(p) else {
                return 0;
            };
            rd.flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(len: usize, marker: u8) -> Bytes {
        let mut v: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let n = v.len();
        v[n - 100] = marker;
        Bytes::from(v)
    }

    #[test]
    fn shared_prefixes_read_back_exactly_and_save_disk() {
        let dir = tempfile::tempdir().unwrap();
        let s = ContentStore::new(dir.path().to_path_buf(), true);
        let (a, b) = (doc(3 << 20, 1), doc(3 << 20, 2));
        s.write("aa1", &a).unwrap();
        s.write("aa2", &b).unwrap();
        s.write("bb3", &Bytes::from_static(b"small")).unwrap();
        assert_eq!(s.read("aa1").unwrap(), a);
        assert_eq!(s.read("aa2").unwrap(), b);
        assert_eq!(s.read("bb3").unwrap(), b"small");
        // One base plus two short tails, not two whole documents.
        assert!(s.disk_bytes() < (3 << 20) + 2048);
        s.remove("aa1");
        assert!(s.read("aa1").is_err());
        assert_eq!(s.read("aa2").unwrap(), b);
    }

    #[test]
    fn different_prefixes_and_durable_stores_keep_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let s = ContentStore::new(dir.path().to_path_buf(), true);
        let mut other = doc(1 << 20, 1).to_vec();
        other[10] ^= 0xff;
        let other = Bytes::from(other);
        s.write("aa1", &doc(1 << 20, 1)).unwrap();
        s.write("aa2", &other).unwrap();
        assert_eq!(s.read("aa2").unwrap(), other);
        let d = ContentStore::new(dir.path().join("durable"), false);
        d.write("cc1", &other).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("durable/cc/cc1")).unwrap(),
            other
        );
    }
}
