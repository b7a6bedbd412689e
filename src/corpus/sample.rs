//! A stratified random sample of a directory's real files, reproducible from the seed:
//! strata are the log2 size buckets of the corpus's description, each gets its share of the
//! sample (largest remainder), and within a stratum files are drawn by reservoir sampling
//! over a walk in sorted order, so memory is the sample's size whatever the corpus's. Each
//! drawn file is hashed and sniffed, and its bulk-import shadow metadata and version files
//! (each hashed, with its own shadow metadata) read, before the measurement starts.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::{CorpusDescription, rules, scan, sniff};
use crate::fixtures::shadow::{self, Role};
use crate::fixtures::{Rng, SampledFile, SampledVersion, VersionRecord};
use crate::protocol_kind::ProtocolKind;

/// The bucket index of a size: its bit length (as in the description's histogram).
fn bucket(size: u64) -> usize {
    (64 - size.leading_zeros()) as usize
}

/// How many files each bucket contributes to a sample of `n` (largest remainder).
fn quotas(d: &CorpusDescription, n: u64) -> [u64; 65] {
    let mut q = [0u64; 65];
    let total = d.documents.max(1);
    let n = n.min(d.documents);
    let mut rem: Vec<(f64, usize)> = Vec::new();
    let mut given = 0;
    for b in &d.size_histogram {
        let i = if b.lo_bytes == 0 {
            0
        } else {
            bucket(b.lo_bytes)
        };
        let exact = n as f64 * b.files as f64 / total as f64;
        q[i] = exact.floor() as u64;
        given += q[i];
        rem.push((exact - exact.floor(), i));
    }
    rem.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in rem.into_iter().take((n - given) as usize) {
        q[i] += 1;
    }
    q
}

/// Calls `f(path, size)` for every document below `root`, in sorted order (the same order
/// every time for an unchanged tree); skips what `scan` does not count as a document.
fn walk_documents(root: &Path, f: &mut dyn FnMut(&Path, u64)) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<(String, PathBuf)> = rd
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        entries.sort();
        let names: std::collections::HashSet<&str> =
            entries.iter().map(|(n, _)| n.as_str()).collect();
        let mut subdirs = Vec::new();
        for (name, path) in &entries {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if meta.is_dir() {
                subdirs.push(path.clone());
            } else if meta.is_file() && shadow::role(name, |n| names.contains(n)) == Role::Document
            {
                f(path, meta.len());
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
}

/// Up to `n` files of the tree below `root`, stratified by size, drawn with `seed`; with the
/// tree's description. Files that cannot be read when hashed are left out (and said).
pub fn sample(root: &Path, n: u64, seed: u64) -> Result<(Vec<SampledFile>, CorpusDescription)> {
    let d = scan::scan(root)?;
    if d.documents == 0 {
        bail!("--corpus {}: no documents to sample", root.display());
    }
    let q = quotas(&d, n);
    let mut reservoirs: Vec<Vec<(PathBuf, u64)>> = vec![Vec::new(); 65];
    let mut seen = [0u64; 65];
    let mut rng = Rng::new(seed ^ 0x5A3_91E);
    walk_documents(root, &mut |path, size| {
        let i = bucket(size);
        seen[i] += 1;
        let r = &mut reservoirs[i];
        if (r.len() as u64) < q[i] {
            r.push((path.to_path_buf(), size));
        } else if q[i] > 0 {
            let j = rng.below(seen[i]);
            if j < q[i] {
                r[j as usize] = (path.to_path_buf(), size);
            }
        }
    });
    let picked: Vec<(PathBuf, u64)> = reservoirs.into_iter().flatten().collect();
    Ok((finish(root, picked, &mut rng), d))
}

/// Up to `n` files of the tree whose size is in `lo..hi`, drawn uniformly with `seed` (a
/// sweep's size class of a real corpus). Without their version files: a sweep measures what
/// a document costs at a size, and `estimate` adds the corpus's versions to that.
pub fn sample_range(root: &Path, n: u64, seed: u64, lo: u64, hi: u64) -> Vec<SampledFile> {
    let mut rng = Rng::new(seed ^ lo.rotate_left(17) ^ 0x5A3_91F);
    let mut r: Vec<(PathBuf, u64)> = Vec::new();
    let mut seen = 0u64;
    walk_documents(root, &mut |path, size| {
        if !(lo..hi).contains(&size) {
            return;
        }
        seen += 1;
        if (r.len() as u64) < n {
            r.push((path.to_path_buf(), size));
        } else {
            let j = rng.below(seen);
            if j < n {
                r[j as usize] = (path.to_path_buf(), size);
            }
        }
    });
    let mut files = finish(root, r, &mut rng);
    for f in &mut files {
        f.versions.clear();
        // A sweep measures what a document of a size costs, not the corpus's names: its
        // files go under names every repository takes (what `--on-bad-name rename` makes).
        for repo in ProtocolKind::ALL {
            if rules::name_refused(repo, &f.name) {
                f.name = rules::fix_name(repo, &f.name);
            }
        }
    }
    files
}

/// Sorts the drawn files, hashes, types and reads the metadata of each, then shuffles them
/// with the seed so sizes mix across the workers' shares.
fn finish(root: &Path, mut picked: Vec<(PathBuf, u64)>, rng: &mut Rng) -> Vec<SampledFile> {
    picked.sort();
    let mut files = Vec::with_capacity(picked.len());
    let mut dirs = VersionFiles::default();
    for (path, size) in picked {
        match describe_file(root, &path, size, &mut dirs) {
            Ok(f) => files.push(f),
            Err(e) => eprintln!("warning: {}: left out of the sample: {e}", path.display()),
        }
    }
    for i in (1..files.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        files.swap(i, j);
    }
    files
}

/// SHA-256, size and first 512 bytes of a file, streamed.
fn hash_file(path: &Path) -> std::io::Result<(String, u64, Vec<u8>)> {
    use sha2::Digest;
    let mut f = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    let mut head = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if head.len() < 512 {
            head.extend_from_slice(&buf[..n.min(512 - head.len())]);
        }
        h.update(&buf[..n]);
        total += n as u64;
    }
    Ok((crate::fixtures::body::hex(&h.finalize()), total, head))
}

/// The shadow metadata at `path`, if there is a file: a broken one is said on stderr and
/// left out (the profile's metadata is sent instead), as `corpus` counts it.
fn shadow_at(path: &Path) -> Option<shadow::ShadowMetadata> {
    if !path.is_file() {
        return None;
    }
    match shadow::load(path) {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!(
                "warning: {}: broken shadow metadata ({e}); the profile's metadata is used",
                path.display()
            );
            None
        }
    }
}

/// The version files of the directory last read, by head name: each directory is read once
/// however many of its files are drawn (the files come sorted, so a directory's are together).
/// Reading it once per file made drawing all 48,106 files of /usr/share take minutes (a
/// directory of 5,000 files read 5,000 times) before the first upload.
#[derive(Default)]
struct VersionFiles {
    dir: Option<PathBuf>,
    by_head: std::collections::HashMap<String, Vec<(Vec<u64>, String, PathBuf)>>,
}

impl VersionFiles {
    fn of(&mut self, dir: &Path, name: &str) -> std::io::Result<Vec<(Vec<u64>, String, PathBuf)>> {
        if self.dir.as_deref() != Some(dir) {
            self.by_head.clear();
            self.dir = None;
            for e in std::fs::read_dir(dir)?.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if let Some(v) = shadow::version_name(&n)
                    && !v.metadata
                    && e.file_type().is_ok_and(|t| t.is_file())
                {
                    self.by_head.entry(v.head.to_string()).or_default().push((
                        v.number,
                        v.label.to_string(),
                        e.path(),
                    ));
                }
            }
            self.dir = Some(dir.to_path_buf());
        }
        Ok(self.by_head.get(name).cloned().unwrap_or_default())
    }
}

/// The version files of the document `name` in `dir`, oldest first (by number).
fn versions_of(
    dir: &Path,
    name: &str,
    dirs: &mut VersionFiles,
) -> std::io::Result<Vec<SampledVersion>> {
    let mut found = dirs.of(dir, name)?;
    found.sort();
    let mut out = Vec::with_capacity(found.len());
    for (_, label, path) in found {
        let (sha256, size, _) = hash_file(&path)?;
        let meta = dir.join(format!("{name}{}.v{label}", shadow::SUFFIX));
        out.push(SampledVersion {
            record: VersionRecord {
                label,
                size,
                sha256,
            },
            shadow: shadow_at(&meta),
            path,
        });
    }
    Ok(out)
}

/// Hash, type, shadow metadata and version files of one drawn file.
fn describe_file(
    root: &Path,
    path: &Path,
    size: u64,
    dirs: &mut VersionFiles,
) -> std::io::Result<SampledFile> {
    let (sha256, total, head) = hash_file(path)?;
    if total != size {
        return Err(std::io::Error::other(
            "its size changed while it was sampled",
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = path.parent().unwrap_or(root);
    let rel_dir = dir
        .strip_prefix(root)
        .unwrap_or(Path::new(""))
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok(SampledFile {
        path: path.to_path_buf(),
        name: name.clone(),
        size,
        sha256,
        mime: sniff::content_type(&head, &name),
        shadow: shadow_at(&PathBuf::from(format!(
            "{}{}",
            path.display(),
            shadow::SUFFIX
        ))),
        versions: versions_of(dir, &name, dirs)?,
        rel_dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_add_up_and_follow_the_strata() {
        let mut d = super::super::Describer::new("t", "directory");
        for _ in 0..90 {
            d.document(1000, "text/plain");
        }
        for _ in 0..10 {
            d.document(100_000, "text/plain");
        }
        let d = d.finish();
        let q = quotas(&d, 20);
        assert_eq!(q.iter().sum::<u64>(), 20);
        assert_eq!(q[bucket(1000)], 18);
        assert_eq!(q[bucket(100_000)], 2);
        assert_eq!(
            quotas(&d, 1000).iter().sum::<u64>(),
            100,
            "at most every file"
        );
    }
}
