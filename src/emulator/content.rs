//! How the embedded target keeps document bytes on disk. A durable store (`ingestbench
//! target`, `--target-data-dir`) writes every byte of every document to `content/<id>`.
//! The temporary store of `run` and `sweep` appends to one pack file instead, indexed in
//! memory (it dies with the process), and may keep a document as a reference to the common
//! prefix it shares with an earlier document plus its own rest, so a quick start of
//! thousands of 3 MiB fixtures (which share everything up to a marker near their end)
//! writes kilobytes per document instead of megabytes: disk write-back then neither fills
//! the disk nor decides the measurement. One file, not one per document: creating a file is
//! an inode allocation, and on ext4 right after another store's thousands of files were
//! deleted that took half the target's CPU (`recently_deleted` in `ext4_create`, perf), and
//! the first seconds of every quick start ran at half speed. Reads return the same bytes
//! either way (prefixes are compared byte for byte, never trusted by a hash).
//! Blocking calls.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

/// Smaller documents are written whole.
const MIN_SHARED: usize = 4 * 1024;
/// Bytes of earlier documents kept in memory for comparison; past this, a document that
/// shares nothing with them is written whole.
const CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Where a temporary store's document lies: `base` = (which base, how many of its first
/// bytes), then `len` bytes of its own at `offset` in the pack.
#[derive(Clone, Copy)]
struct Loc {
    base: Option<(usize, usize)>,
    offset: u64,
    len: usize,
}

/// A temporary store: one append-only pack file, its index, and the bases (earlier
/// documents, held in memory, that later ones may start with).
struct Pack {
    file: std::fs::File,
    end: AtomicU64,
    index: Mutex<HashMap<String, Loc>>,
    bases: Mutex<Vec<Bytes>>,
}

/// Where content goes.
pub struct ContentStore {
    dir: PathBuf,
    /// `None`: durable, every byte written to a file of its own.
    pack: Option<Pack>,
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

impl Pack {
    fn open(dir: &Path) -> std::io::Result<Pack> {
        std::fs::create_dir_all(dir)?;
        let file = std::fs::File::options()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(dir.join("pack"))?;
        Ok(Pack {
            file,
            end: AtomicU64::new(0),
            index: Mutex::new(HashMap::new()),
            bases: Mutex::new(Vec::new()),
        })
    }

    /// The base `content` shares most of its bytes with, and how many: (base, length). A
    /// document sharing nothing is made a base itself while there is room.
    fn prefix_of(&self, content: &Bytes) -> Option<(usize, usize)> {
        if content.len() < MIN_SHARED {
            return None;
        }
        let mut bases = self.bases.lock().expect("bases");
        let best = bases
            .iter()
            .enumerate()
            .filter(|(_, b)| b[..64] == content[..64])
            .map(|(i, b)| (i, common_prefix(b, content)))
            .max_by_key(|(_, n)| *n);
        if let Some((i, n)) = best
            && n >= MIN_SHARED
            && n >= content.len() / 2
        {
            return Some((i, n));
        }
        let held: usize = bases.iter().map(Bytes::len).sum();
        if held + content.len() > CACHE_BYTES {
            return None;
        }
        bases.push(content.clone());
        Some((bases.len() - 1, content.len()))
    }

    fn write(&self, id: &str, content: &Bytes) -> std::io::Result<()> {
        let base = self.prefix_of(content);
        let rest = &content[base.map_or(0, |b| b.1)..];
        // Space reserved without a lock; concurrent writes land side by side.
        let offset = self.end.fetch_add(rest.len() as u64, Ordering::Relaxed);
        self.file.write_all_at(rest, offset)?;
        let loc = Loc {
            base,
            offset,
            len: rest.len(),
        };
        self.index
            .lock()
            .expect("index")
            .insert(id.to_string(), loc);
        Ok(())
    }

    fn read(&self, id: &str) -> std::io::Result<Vec<u8>> {
        let loc = self.index.lock().expect("index").get(id).copied();
        let Some(loc) = loc else {
            return Err(std::io::Error::new(ErrorKind::NotFound, "no such content"));
        };
        let mut out = Vec::new();
        if let Some((i, n)) = loc.base {
            out.extend_from_slice(&self.bases.lock().expect("bases")[i][..n]);
        }
        let at = out.len();
        out.resize(at + loc.len, 0);
        self.file.read_exact_at(&mut out[at..], loc.offset)?;
        Ok(out)
    }
}

impl ContentStore {
    /// `temporary`: a store that dies with the process (one pack file, shared prefixes).
    pub fn new(dir: PathBuf, temporary: bool) -> std::io::Result<ContentStore> {
        let pack = if temporary {
            Some(Pack::open(&dir)?)
        } else {
            None
        };
        Ok(ContentStore { dir, pack })
    }

    fn path(&self, id: &str) -> PathBuf {
        let shard = id.get(..2).unwrap_or("xx");
        self.dir.join(shard).join(id)
    }

    /// Writes a document's content (before its node is committed).
    pub fn write(&self, id: &str, content: &Bytes) -> std::io::Result<()> {
        if let Some(p) = &self.pack {
            return p.write(id, content);
        }
        let path = self.path(id);
        std::fs::create_dir_all(path.parent().expect("sharded path"))?;
        std::fs::write(&path, content)
    }

    /// The document's bytes, whichever way they were kept.
    pub fn read(&self, id: &str) -> std::io::Result<Vec<u8>> {
        match &self.pack {
            Some(p) => p.read(id),
            None => std::fs::read(self.path(id)),
        }
    }

    /// Removes a document's content (a temporary store forgets it; its bytes stay in the
    /// pack until the store is removed).
    pub fn remove(&self, id: &str) {
        match &self.pack {
            Some(p) => {
                p.index.lock().expect("index").remove(id);
            }
            None => {
                let _ = std::fs::remove_file(self.path(id));
            }
        }
    }

    /// Bytes under this store's content directory.
    #[cfg(test)]
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
        let s = ContentStore::new(dir.path().to_path_buf(), true).unwrap();
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
        let s = ContentStore::new(dir.path().to_path_buf(), true).unwrap();
        let mut other = doc(1 << 20, 1).to_vec();
        other[10] ^= 0xff;
        let other = Bytes::from(other);
        s.write("aa1", &doc(1 << 20, 1)).unwrap();
        s.write("aa2", &other).unwrap();
        assert_eq!(s.read("aa2").unwrap(), other);
        let d = ContentStore::new(dir.path().join("durable"), false).unwrap();
        d.write("cc1", &other).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("durable/cc/cc1")).unwrap(),
            other
        );
    }
}
