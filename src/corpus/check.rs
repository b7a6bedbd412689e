//! The pre-flight check (`ingestbench corpus PATH --check alfresco|liferay|cmis`): every
//! document, version file, folder and shadow metadata file of a corpus against the rules of
//! the repository it will be imported into ([`super::rules`]), each rule counted with the
//! first paths it flags. Fed by the same streaming walk as the description (`scan`, one
//! directory at a time; `listing`, one line at a time): names are compared within the
//! current folder only, so memory is one folder's names whatever the corpus's size (for a
//! listing, exact when its lines are grouped by folder, as a sorted listing is).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::rules::{self, Rule, Severity};
use super::{CorpusDescription, Problem};
use crate::fixtures::{Profile, PropType, ShadowMetadata};
use crate::protocol::alfresco::model::{ACME_MODEL, Dictionary};
use crate::protocol::facts::{self, Metadata};
use crate::protocol_kind::ProtocolKind;

/// One rule's count in `corpus.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RuleCount {
    /// The rule (`name-clash`, `size-over-limit`, ...).
    pub rule: String,
    pub severity: Severity,
    /// What it flags, for this repository.
    pub says: String,
    /// Where the rule comes from (the vendor's source or configuration).
    pub source: String,
    /// Items flagged, and the first paths.
    pub count: u64,
    pub samples: Vec<String>,
}

/// The pre-flight check's result, in `corpus.json` as `preflight`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Preflight {
    /// The repository checked against: alfresco, liferay or cmis.
    pub repository: ProtocolKind,
    /// The metadata profile shadow metadata was checked against.
    pub profile: String,
    pub documents_checked: u64,
    pub folders_checked: u64,
    pub version_files_checked: u64,
    pub metadata_files_checked: u64,
    /// Items flagged, over every rule (an item breaking two rules counts twice).
    pub problems: u64,
    /// Items the repository will refuse (uploads that will fail), over every rule.
    pub refused: u64,
    /// Every rule the repository has, in report order, flagged or not.
    pub rules: Vec<RuleCount>,
}

impl Preflight {
    /// The rules that flagged something.
    pub fn flagged(&self) -> impl Iterator<Item = &RuleCount> {
        self.rules.iter().filter(|r| r.count > 0)
    }

    /// What `estimate` says of the check: the documents that will be refused or skipped
    /// (the estimate counts every document as imported), by rule, and what the import
    /// policy does with the name problems among them. None when nothing is refused or skipped.
    pub fn estimate_note(&self) -> Option<String> {
        let hit: Vec<&RuleCount> = self
            .flagged()
            .filter(|r| r.severity != Severity::Warning)
            .collect();
        if hit.is_empty() {
            return None;
        }
        let names: u64 = hit
            .iter()
            .filter(|r| r.rule.starts_with("name-"))
            .map(|r| r.count)
            .sum();
        let list: Vec<String> = hit
            .iter()
            .map(|r| format!("{} {}", r.rule, r.count))
            .collect();
        Some(format!(
            "  pre-flight ({}): {} will be refused and {} skipped ({}), counted above as imported; \
             of them {names} are name problems, which run --corpus DIR --on-name-clash/--on-bad-name \
             skip leaves out and rename imports under other names",
            self.repository.name(),
            self.refused,
            hit.iter()
                .filter(|r| r.severity == Severity::Skipped)
                .map(|r| r.count)
                .sum::<u64>(),
            list.join(", ")
        ))
    }
}

/// Accumulates the check, one folder at a time.
pub struct Checker {
    repo: ProtocolKind,
    dict: Dictionary,
    profile: Arc<Profile>,
    counts: BTreeMap<Rule, Problem>,
    folder: String,
    /// The current folder's names: the repository's key -> the first name with it.
    keys: HashMap<String, String>,
    /// The current folder's names in NFC: key -> the repository's key of the first.
    nfc: HashMap<String, String>,
    entries: u64,
    documents: u64,
    folders: u64,
    versions: u64,
    metadata: u64,
}

impl Checker {
    /// A check against `repo`, with shadow metadata read through `profile` (and, for
    /// Alfresco, the content model the embedded target deploys: stock and acme).
    pub fn new(repo: ProtocolKind, profile: Arc<Profile>) -> Result<Checker> {
        let dict = Dictionary::with_models(&[(ACME_MODEL.to_string(), "acme".into())])?;
        Ok(Checker {
            repo,
            dict,
            profile,
            counts: BTreeMap::new(),
            folder: String::new(),
            keys: HashMap::new(),
            nfc: HashMap::new(),
            entries: 0,
            documents: 0,
            folders: 0,
            versions: 0,
            metadata: 0,
        })
    }

    fn flag(&mut self, rule: Rule, sample: impl FnOnce() -> String) {
        if rule.applies(self.repo) {
            self.counts.entry(rule).or_default().add(sample);
        }
    }

    fn path(&self, name: &str) -> String {
        if self.folder.is_empty() || self.folder == "." {
            name.to_string()
        } else {
            format!("{}/{name}", self.folder.trim_end_matches('/'))
        }
    }

    /// Starts the folder at `path` (as it is to be shown); forgets the previous folder's names.
    pub fn begin_folder(&mut self, path: &str) {
        self.folder = path.to_string();
        self.keys.clear();
        self.nfc.clear();
        self.entries = 0;
        self.folders += 1;
    }

    /// A document (`is_folder` false, `size` bytes) or a subfolder named `name` in the
    /// current folder: its name on its own, and against the folder's other names.
    pub fn entry(&mut self, name: &str, is_folder: bool, size: u64) {
        self.entries += 1;
        if !is_folder {
            self.documents += 1;
        }
        let path = self.path(name);
        for rule in rules::name_problems(self.repo, name) {
            self.flag(rule, || path.clone());
        }
        if !is_folder && rules::max_size(self.repo).is_some_and(|max| size > max) {
            self.flag(Rule::SizeOverLimit, || format!("{path} ({size} bytes)"));
        }
        let key = rules::name_key(self.repo, name);
        if let Some(first) = self.keys.get(&key) {
            let first = self.path(first);
            self.flag(Rule::NameClash, || format!("{path} (clashes with {first})"));
            return;
        }
        let nfc_key = rules::name_key(self.repo, &nfc(name));
        if let Some(other) = self.nfc.get(&nfc_key)
            && *other != key
        {
            let first = self.path(&self.keys[other]);
            self.flag(Rule::NameUnicodeNormalisation, || {
                format!("{path} (normalises as {first})")
            });
        } else {
            self.nfc.insert(nfc_key, key.clone());
        }
        self.keys.insert(key, name.to_string());
    }

    /// A document known only by its size (a listing without paths).
    pub fn sized(&mut self, what: &str, size: u64) {
        self.documents += 1;
        if rules::max_size(self.repo).is_some_and(|max| size > max) {
            self.flag(Rule::SizeOverLimit, || format!("{what} ({size} bytes)"));
        }
    }

    /// A folder named in a listing's paths (no clash check: its siblings are not known).
    pub fn folder_name(&mut self, path: &str, name: &str) {
        for rule in rules::name_problems(self.repo, name) {
            self.flag(rule, || path.to_string());
        }
    }

    /// Ends the current folder (its fan-out).
    pub fn end_folder(&mut self) {
        if self.entries > rules::FAN_OUT_WARN {
            let (p, n) = (self.folder.clone(), self.entries);
            self.flag(Rule::FolderFanOut, || format!("{p} ({n} entries)"));
        }
    }

    /// A version file of `size` bytes (uploaded as a version of its head document).
    pub fn version_file(&mut self, path: &str, size: u64) {
        self.versions += 1;
        if rules::max_size(self.repo).is_some_and(|max| size > max) {
            self.flag(Rule::SizeOverLimit, || format!("{path} ({size} bytes)"));
        }
    }

    /// The shadow metadata of the document at `doc_path`, as the import would send it.
    pub fn metadata(&mut self, doc_path: &str, m: &ShadowMetadata) {
        self.metadata += 1;
        let mut found: Vec<Rule> = Vec::new();
        if facts::of(self.repo).metadata == Metadata::ContentModel {
            let ty = m.node_type.as_deref().unwrap_or(&self.profile.node_type);
            let type_ok = self.dict.check_content_type(ty).is_ok();
            if !type_ok {
                found.push(Rule::MetadataUnknownType);
            }
            let mut sent: Vec<(String, Vec<String>)> = Vec::new();
            for (name, values) in &m.properties {
                // As the upload sends them: one field per value only for a multi-valued
                // profile property, else the values joined back with commas.
                let raw = if self.profile.multiple(name) {
                    values.clone()
                } else {
                    vec![values.join(",")]
                };
                match self.dict.convert_update(&[(name.clone(), raw.clone())]) {
                    Ok(_) => sent.push((name.clone(), raw)),
                    Err(r)
                        if r.message.starts_with("Failed to convert")
                            || r.message.contains("single-valued") =>
                    {
                        found.push(Rule::MetadataBadValue)
                    }
                    Err(_) => found.push(Rule::MetadataUnknownProperty),
                }
            }
            if type_ok
                && found.is_empty()
                && self.dict.convert(ty, &sent).is_err_and(|r| r.status == 422)
            {
                found.push(Rule::MetadataRequiredMissing);
            }
            if m.aspects.iter().any(|a| !self.dict.has_aspect(a)) {
                found.push(Rule::MetadataUnknownAspect);
            }
        } else {
            for (name, values) in &m.properties {
                match self
                    .profile
                    .properties
                    .iter()
                    .find(|p| p.shadow.as_deref() == Some(name.as_str()))
                {
                    None => found.push(Rule::MetadataUnknownProperty),
                    Some(spec) => {
                        if values.iter().any(|v| !parses(spec.ty, v)) {
                            found.push(Rule::MetadataBadValue);
                        }
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        for rule in found {
            self.flag(rule, || doc_path.to_string());
        }
    }

    /// The result, with the description's version problems (found by the same walk) as rules.
    pub fn finish(mut self, d: &CorpusDescription) -> Preflight {
        for (rule, p) in [
            (Rule::VersionOrphan, &d.orphan_version_files),
            (Rule::VersionGap, &d.version_gaps),
        ] {
            if p.count > 0 {
                self.counts.insert(rule, p.clone());
            }
        }
        let repo = self.repo;
        let mut rules_out = Vec::new();
        let (mut problems, mut refused) = (0, 0);
        for rule in Rule::ALL.into_iter().filter(|r| r.applies(repo)) {
            let p = self.counts.remove(&rule).unwrap_or_default();
            problems += p.count;
            if rule.severity(repo) == Severity::Refused {
                refused += p.count;
            }
            rules_out.push(RuleCount {
                rule: rule.id().to_string(),
                severity: rule.severity(repo),
                says: rule.says(repo).to_string(),
                source: rule.source(repo).to_string(),
                count: p.count,
                samples: p.samples,
            });
        }
        Preflight {
            repository: repo,
            profile: self.profile.source.clone(),
            documents_checked: self.documents,
            folders_checked: self.folders,
            version_files_checked: self.versions,
            metadata_files_checked: self.metadata,
            problems,
            refused,
            rules: rules_out,
        }
    }
}

/// Unicode NFC of `s` (the unicode-rs normaliser, already built for URL handling).
pub fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if s.is_ascii() {
        return s.to_string();
    }
    s.nfc().collect()
}

/// Whether `v` reads as a `ty` value the way the profile's protocols convert it.
fn parses(ty: PropType, v: &str) -> bool {
    let v = v.trim();
    match ty {
        PropType::Text => true,
        PropType::Int => v.parse::<i32>().is_ok(),
        PropType::Long => v.parse::<i64>().is_ok(),
        PropType::Float | PropType::Double => v.parse::<f64>().is_ok(),
        PropType::Date | PropType::DateTime => crate::timefmt::parse_iso(v).is_some(),
        PropType::Boolean => v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker(repo: ProtocolKind) -> Checker {
        let p = Profile::load(repo.default_profile()).unwrap();
        Checker::new(repo, Arc::new(p)).unwrap()
    }

    fn count(p: &Preflight, rule: &str) -> u64 {
        p.rules
            .iter()
            .find(|r| r.rule == rule)
            .map_or(0, |r| r.count)
    }

    #[test]
    fn clashes_are_per_folder_and_as_the_repository_compares() {
        let empty = super::super::Describer::new("t", "directory").finish();
        for (repo, case_clashes) in [
            (ProtocolKind::Alfresco, 1),
            (ProtocolKind::Liferay, 1),
            (ProtocolKind::Cmis, 0),
        ] {
            let mut c = checker(repo);
            c.begin_folder("a");
            c.entry("index.html", false, 1);
            c.entry("Index.html", false, 1);
            c.entry("caf\u{e9}.txt", false, 1);
            c.entry("cafe\u{301}.txt", false, 1);
            c.end_folder();
            c.begin_folder("b");
            c.entry("index.html", false, 1);
            c.end_folder();
            let p = c.finish(&empty);
            assert_eq!(count(&p, "name-clash"), case_clashes, "{repo:?}");
            assert_eq!(count(&p, "name-unicode-normalisation"), 1, "{repo:?}");
            assert_eq!(p.documents_checked, 5);
        }
    }

    #[test]
    fn metadata_against_the_content_model() {
        let empty = super::super::Describer::new("t", "directory").finish();
        let mut c = checker(ProtocolKind::Alfresco);
        let m = |text: &str| crate::fixtures::shadow::parse(text).unwrap();
        c.metadata(
            "ok.pdf",
            &m(r#"<properties><entry key="cm:title">t</entry></properties>"#),
        );
        c.metadata(
            "unknown.pdf",
            &m(r#"<properties><entry key="cm:nope">t</entry></properties>"#),
        );
        c.metadata(
            "type.pdf",
            &m(r#"<properties><entry key="type">acme:nope</entry></properties>"#),
        );
        c.metadata(
            "aspect.pdf",
            &m(r#"<properties><entry key="aspects">acme:nope</entry></properties>"#),
        );
        let p = c.finish(&empty);
        assert_eq!(count(&p, "metadata-unknown-property"), 1);
        assert_eq!(count(&p, "metadata-unknown-type"), 1);
        assert_eq!(count(&p, "metadata-unknown-aspect"), 1);
        assert_eq!(p.metadata_files_checked, 4);
    }
}
