//! Walks a directory tree of real files, one directory at a time (only the directory being
//! read and the stack of directories still to read are held), sniffing each document's
//! first bytes. Symlinks are not followed (counted); unreadable files and directories are
//! counted with their error; shadow metadata and version files are counted as such, versions
//! per document, orphan version files and gaps in version numbers too.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::check::Checker;
use super::{CorpusDescription, Describer, sniff};
use crate::fixtures::shadow::{self, Role};

/// Describes the tree below `root`.
pub fn scan(root: &Path) -> Result<CorpusDescription> {
    scan_checked(root, None)
}

/// [`scan`], feeding the pre-flight `checker` one directory at a time: the documents and
/// subfolders (what the import creates as nodes), version files and shadow metadata.
pub fn scan_checked(root: &Path, mut checker: Option<&mut Checker>) -> Result<CorpusDescription> {
    // Absolute, so a sweep given the description elsewhere finds the same files.
    let source = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let mut d = Describer::new(&source.display().to_string(), "directory");
    let mut stack: Vec<(PathBuf, u64)> = vec![(root.to_path_buf(), 0)];
    let mut head = vec![0u8; 512];
    while let Some((dir, depth)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                d.unreadable(&dir, &e);
                continue;
            }
        };
        let mut entries: Vec<std::fs::DirEntry> = entries.flatten().collect();
        // In name order, so the check names the same one of two clashing names every time.
        entries.sort_by_key(|e| e.file_name());
        let names: HashSet<String> = entries
            .iter()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let mut documents = 0u64;
        if let Some(c) = checker.as_deref_mut() {
            c.begin_folder(&dir.display().to_string());
        }
        // Per head file: its versions (number, label), their bytes, the labels with
        // metadata of their own.
        type Versions = (Vec<(Vec<u64>, String)>, u64, Vec<String>);
        let mut versions: HashMap<String, Versions> = HashMap::new();
        let mut heads: Vec<String> = Vec::new();
        for e in entries {
            let path = e.path();
            let meta = match std::fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(err) => {
                    d.unreadable(&path, &err);
                    continue;
                }
            };
            if meta.file_type().is_symlink() {
                d.symlink(&path);
                continue;
            }
            if meta.is_dir() {
                d.directory();
                if let Some(c) = checker.as_deref_mut() {
                    c.entry(&e.file_name().to_string_lossy(), true, 0);
                }
                stack.push((path, depth + 1));
                continue;
            }
            if !meta.is_file() {
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            match shadow::role(&name, |n| names.contains(n)) {
                Role::Version => {
                    d.shadow().version_files += 1;
                    if let Some(c) = checker.as_deref_mut()
                        && shadow::version_name(&name).is_some_and(|v| !v.metadata)
                    {
                        c.version_file(&path.display().to_string(), meta.len());
                    }
                    if let Some(v) = shadow::version_name(&name) {
                        let slot = versions.entry(v.head.to_string()).or_default();
                        if v.metadata {
                            slot.2.push(v.label.to_string());
                        } else {
                            slot.0.push((v.number, v.label.to_string()));
                            slot.1 += meta.len();
                        }
                    }
                }
                Role::OrphanVersion => d.orphan_version(&path),
                Role::Metadata => metadata_file(&mut d, &path, checker.as_deref_mut()),
                Role::Document => {
                    let n = match std::fs::File::open(&path).and_then(|f| read_head(f, &mut head)) {
                        Ok(n) => n,
                        Err(err) => {
                            d.unreadable(&path, &err);
                            continue;
                        }
                    };
                    d.document(meta.len(), sniff::content_type(&head[..n], &name));
                    if let Some(c) = checker.as_deref_mut() {
                        c.entry(&name, false, meta.len());
                    }
                    documents += 1;
                    heads.push(name);
                }
            }
        }
        for h in heads {
            let (mut found, bytes, own) = versions.remove(&h).unwrap_or_default();
            found.sort();
            // The metadata each step carries (its own file, else the head's): a change
            // between steps is a properties update on Alfresco.
            let carried: Vec<Option<&str>> = found
                .iter()
                .map(|(_, l)| own.iter().any(|o| o == l).then_some(l.as_str()))
                .chain(std::iter::once(None))
                .collect();
            let updates = carried.windows(2).filter(|w| w[0] != w[1]).count() as u64;
            let numbers: Vec<Vec<u64>> = found.into_iter().map(|(n, _)| n).collect();
            d.versions(&dir.join(&h), &numbers, bytes);
            d.shadow().version_property_updates += updates;
        }
        if let Some(c) = checker.as_deref_mut() {
            c.end_folder();
        }
        let rel = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
        d.folder(if rel.is_empty() { "." } else { &rel }, documents, depth);
    }
    Ok(d.finish())
}

fn read_head(mut f: std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn metadata_file(d: &mut Describer, path: &Path, checker: Option<&mut Checker>) {
    match shadow::load(path) {
        Ok(m) => {
            if let Some(c) = checker {
                let p = path.display().to_string();
                c.metadata(p.strip_suffix(shadow::SUFFIX).unwrap_or(&p), &m);
            }
            let s = d.shadow();
            s.metadata_files += 1;
            if let Some(t) = m.node_type {
                *s.types.entry(t).or_default() += 1;
            }
            for a in m.aspects {
                *s.aspects.entry(a).or_default() += 1;
            }
            for (p, _) in m.properties {
                *s.properties.entry(p).or_default() += 1;
            }
        }
        Err(why) => d.broken_shadow(path, &why),
    }
}
