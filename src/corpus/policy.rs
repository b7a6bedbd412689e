//! The import policy for what the pre-flight check flags in a sample of real files
//! (`run --corpus DIR --on-name-clash fail|skip|rename --on-bad-name fail|skip|rename`):
//! decides, before anything is uploaded, the name each sampled file is stored under, or that
//! it is left out. Deterministic (a resumed run decides the same): within a folder, names are
//! taken in byte order, the first keeps its name and the later ones that clash with it get
//! `-2`, `-3`, ... before the extension ([`rules::numbered`]); a refused name is replaced by
//! [`rules::fix_name`]. `fail`, the default, sends the file's own name, and the repository's
//! refusal is counted as a failed upload, as for any other.

use std::collections::{BTreeMap, HashSet};

use super::rules;
use crate::fixtures::SampledFile;
use crate::protocol_kind::ProtocolKind;

/// What to do with a file the repository would refuse.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum OnProblem {
    /// Upload it as it is: the repository refuses it, and the run counts a failure.
    #[default]
    Fail,
    /// Leave it out of the sample (said on stderr).
    Skip,
    /// Store it under another name, deterministic, recorded in the manifest with its source.
    Rename,
}

/// The policy for one run: the repository and what to do on a name clash or a refused name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamePolicy {
    pub repo: ProtocolKind,
    pub on_name_clash: OnProblem,
    pub on_bad_name: OnProblem,
}

/// The policy as a run's plan records it (`corpus_names` in plan.json), for `--resume`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NamesRecord {
    /// Files asked of the sample (`--sample`), before any were skipped.
    pub sample: u64,
    pub on_name_clash: OnProblem,
    pub on_bad_name: OnProblem,
}

/// What the policy did to a sample.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Files renamed: (source path, stored name).
    pub renamed: Vec<(String, String)>,
    /// Files left out: (source path, why).
    pub skipped: Vec<(String, String)>,
    /// Files sent as they are that the repository will refuse: (source path, why).
    pub will_fail: Vec<(String, String)>,
}

impl Applied {
    /// One line for stderr, or None when the policy changed nothing and nothing will fail.
    pub fn summary(&self) -> Option<String> {
        if self.renamed.is_empty() && self.skipped.is_empty() && self.will_fail.is_empty() {
            return None;
        }
        let first = |v: &[(String, String)]| {
            v.first()
                .map(|(p, w)| format!(" (first: {p}: {w})"))
                .unwrap_or_default()
        };
        Some(format!(
            "names: {} renamed{}, {} skipped{}, {} sent as they are that the repository refuses{}",
            self.renamed.len(),
            first(&self.renamed),
            self.skipped.len(),
            first(&self.skipped),
            self.will_fail.len(),
            first(&self.will_fail)
        ))
    }
}

/// Applies `policy` to a sample: sets each kept file's stored name (`name`), drops the
/// skipped ones; the files keep their order.
pub fn apply(policy: NamePolicy, files: Vec<SampledFile>) -> (Vec<SampledFile>, Applied) {
    let repo = policy.repo;
    let mut applied = Applied::default();
    let mut files = files;
    if policy.on_bad_name == OnProblem::Rename {
        // Folders first: a refused folder name is fixed like a file's, for every file below.
        for f in files.iter_mut() {
            let fixed: Vec<String> = f
                .rel_dir
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    if rules::name_refused(repo, s) {
                        rules::fix_name(repo, s)
                    } else {
                        s.to_string()
                    }
                })
                .collect();
            let fixed = fixed.join("/");
            if fixed != f.rel_dir {
                f.rel_dir = fixed;
            }
        }
    }
    // Per folder, the files' indices in byte order of their names.
    let mut by_folder: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        by_folder.entry(f.rel_dir.as_str()).or_default().push(i);
    }
    let mut names: Vec<Option<String>> = files.iter().map(|f| Some(f.name.clone())).collect();
    for idx in by_folder.values_mut() {
        idx.sort_by(|a, b| files[*a].name.cmp(&files[*b].name));
        let mut taken: HashSet<String> = HashSet::new();
        for &i in idx.iter() {
            let src = files[i].path.display().to_string();
            let mut name = files[i].name.clone();
            let bad_folder = files[i]
                .rel_dir
                .split('/')
                .filter(|s| !s.is_empty())
                .find(|s| rules::name_refused(repo, s));
            if let Some(seg) = bad_folder {
                // A folder the repository refuses: its files cannot go in under any name.
                let why = format!("folder name `{seg}` refused");
                match policy.on_bad_name {
                    OnProblem::Skip => {
                        applied.skipped.push((src, why));
                        names[i] = None;
                        continue;
                    }
                    _ => applied.will_fail.push((src.clone(), why)),
                }
            }
            if rules::name_refused(repo, &name) {
                match policy.on_bad_name {
                    OnProblem::Fail => {
                        applied.will_fail.push((src.clone(), "name refused".into()));
                    }
                    OnProblem::Skip => {
                        applied.skipped.push((src, "name refused".into()));
                        names[i] = None;
                        continue;
                    }
                    OnProblem::Rename => {
                        name = rules::fix_name(repo, &name);
                        applied.renamed.push((src.clone(), name.clone()));
                    }
                }
            }
            let key = rules::name_key(repo, &name);
            if taken.contains(&key) {
                match policy.on_name_clash {
                    OnProblem::Fail => {
                        applied.will_fail.push((src, "name clash".into()));
                    }
                    OnProblem::Skip => {
                        applied.skipped.push((src, "name clash".into()));
                        names[i] = None;
                        continue;
                    }
                    OnProblem::Rename => {
                        let mut n = 2;
                        while taken.contains(&rules::name_key(repo, &rules::numbered(&name, n))) {
                            n += 1;
                        }
                        name = rules::numbered(&name, n);
                        if applied.renamed.last().is_some_and(|l| l.0 == src) {
                            if let Some(last) = applied.renamed.last_mut() {
                                last.1 = name.clone();
                            }
                        } else {
                            applied.renamed.push((src, name.clone()));
                        }
                    }
                }
            }
            taken.insert(rules::name_key(repo, &name));
            names[i] = Some(name);
        }
    }
    let kept = files
        .into_iter()
        .zip(names)
        .filter_map(|(mut f, n)| {
            n.map(|n| {
                f.name = n;
                f
            })
        })
        .collect();
    (kept, applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &str, name: &str) -> SampledFile {
        SampledFile {
            path: std::path::PathBuf::from(format!("/c/{dir}/{name}")),
            name: name.into(),
            size: 1,
            sha256: String::new(),
            mime: "text/plain",
            shadow: None,
            rel_dir: dir.into(),
            versions: Vec::new(),
        }
    }

    fn policy(on_name_clash: OnProblem, on_bad_name: OnProblem) -> NamePolicy {
        NamePolicy {
            repo: ProtocolKind::Alfresco,
            on_name_clash,
            on_bad_name,
        }
    }

    #[test]
    fn rename_is_deterministic_whatever_the_sample_order() {
        let a = vec![
            file("d", "index.html"),
            file("d", "Index.html"),
            file("d", "a:b.txt"),
            file("e", "index.html"),
        ];
        let mut b = a.clone();
        b.reverse();
        let p = policy(OnProblem::Rename, OnProblem::Rename);
        let (ka, ra) = apply(p, a);
        let (kb, _) = apply(p, b);
        let names = |k: &[SampledFile]| {
            let mut v: Vec<(String, String)> = k
                .iter()
                .map(|f| (f.path.display().to_string(), f.name.clone()))
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&ka), names(&kb));
        let got = names(&ka);
        assert!(got.contains(&("/c/d/Index.html".into(), "Index.html".into())));
        assert!(got.contains(&("/c/d/index.html".into(), "index-2.html".into())));
        assert!(got.contains(&("/c/d/a:b.txt".into(), "a_b.txt".into())));
        assert_eq!(ra.renamed.len(), 2);
    }

    #[test]
    fn skip_and_fail() {
        let files = vec![
            file("d", "x.txt"),
            file("d", "X.txt"),
            file("d", "bad?.txt"),
        ];
        let (k, r) = apply(policy(OnProblem::Skip, OnProblem::Skip), files.clone());
        assert_eq!(k.len(), 1);
        assert_eq!(r.skipped.len(), 2);
        let (k, r) = apply(policy(OnProblem::Fail, OnProblem::Fail), files);
        assert_eq!(k.len(), 3);
        assert_eq!(r.will_fail.len(), 2);
        assert!(
            k.iter().any(|f| f.name == "bad?.txt"),
            "fail sends the name as it is"
        );
    }
}
