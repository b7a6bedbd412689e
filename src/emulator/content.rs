//! How the embedded target keeps document bytes on disk. A durable store (`ingestbench
//! target`, `--target-data-dir`) writes every byte of every document to `content/<id>`.
//! The temporary store of `run` and `sweep` may instead keep a document as a reference to a
//! shared prefix plus its own tail (`content/<id>.ref`: the prefix's name, a newline, the
//! tail), so a quick start of thousands of 3 MiB fixtures (which share everything but a
//! marker near their end) writes kilobytes per document instead of megabytes: disk
//! write-back then neither fills the disk nor decides the measurement. Reads return the same
//! bytes either way (prefixes are compared byte for byte, never trusted by a hash).
//! Blocking calls.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bytes::Bytes;

/// Bytes every document keeps for itself (its marker lies within them).
const TAIL: usize = 8 * 1024;
/// Smaller documents are written whole.
const MIN_SHARED: usize = 64 * 1024;
/// Prefixes kept in memory for comparison; past this, new documents are written whole.
const CACHE_BYTES: usize = 64 * 1024 * 1024;

/// One shared prefix: its bytes (compared in memory) and its file name under `blobs/`.
struct Prefix {
    sample: u64,
    bytes: Bytes,
    name: String,
}

/// Where content goes, and the shared prefixes of an ephemeral store.
pub struct ContentStore {
    dir: PathBuf,
    /// `None`: durable, every byte written.
    shared: Option<Mutex<Vec<Prefix>>>,
}

/// A cheap fingerprint (FNV-1a of a few windows); equal prefixes are then compared in full.
fn sample(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ b.len() as u64;
    let mid = b.len() / 2;
    for w in [&b[..256], &b[mid - 128..mid + 128], &b[b.len() - 256..]] {
        for x in w {
            h = (h ^ u64::from(*x)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
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

    /// The shared prefix `content` starts with, registering it when there is room.
    fn prefix_of(&self, content: &Bytes) -> std::io::Result<Option<String>> {
        let Some(shared) = &self.shared else {
            return Ok(None);
        };
        if content.len() < MIN_SHARED {
            return Ok(None);
        }
        let prefix = content.slice(..content.len() - TAIL);
        let s = sample(&prefix);
        let mut list = shared.lock().expect("prefixes");
        if let Some(p) = list
            .iter()
            .find(|p| p.sample == s && p.bytes.len() == prefix.len() && p.bytes == prefix)
        {
            return Ok(Some(p.name.clone()));
        }
        let held: usize = list.iter().map(|p| p.bytes.len()).sum();
        if held + prefix.len() > CACHE_BYTES {
            return Ok(None);
        }
        let name = format!("{}", uuid::Uuid::new_v4().simple());
        let path = self.blob_path(&name);
        std::fs::create_dir_all(path.parent().expect("blobs dir"))?;
        std::fs::write(&path, &prefix)?;
        list.push(Prefix {
            sample: s,
            bytes: prefix,
            name: name.clone(),
        });
        Ok(Some(name))
    }

    /// Writes a document's content (before its node is committed).
    pub fn write(&self, id: &str, content: &Bytes) -> std::io::Result<()> {
        let path = self.path(id);
        std::fs::create_dir_all(path.parent().expect("sharded path"))?;
        match self.prefix_of(content)? {
            None => std::fs::write(&path, content),
            Some(name) => {
                let tail = &content[content.len() - TAIL..];
                let mut v = Vec::with_capacity(name.len() + 1 + tail.len());
                v.extend_from_slice(name.as_bytes());
                v.push(b'\n');
                v.extend_from_slice(tail);
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
        let nl = memchr::memchr(b'\n', &r)
            .ok_or_else(|| std::io::Error::new(ErrorKind::InvalidData, "bad content reference"))?;
        let name = std::str::from_utf8(&r[..nl])
            .map_err(|_| std::io::Error::new(ErrorKind::InvalidData, "bad content reference"))?;
        let mut out = std::fs::read(self.blob_path(name))?;
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
        // One prefix plus two tails, not two whole documents.
        assert!(s.disk_bytes() < (3 << 20) + 3 * TAIL as u64);
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
