//! What reading a run's documents back found (`verify.json`, and `verify` in a run's
//! `result.json`): counts by kind and the first problems one by one. The record only; the
//! reading back is `crate::verify`.

use serde::{Deserialize, Serialize};

use crate::results::manifest::ManifestEntry;

/// At most this many problems are listed one by one.
const MAX_LISTED: usize = 200;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Problem {
    /// missing, corrupt, metadata, error, duplicate
    pub kind: String,
    pub name: String,
    pub id: String,
    pub folder: String,
    pub detail: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Acknowledged documents read back.
    pub checked: u64,
    pub ok: u64,
    pub missing: u64,
    /// Present, but the name, size or content hash differs.
    pub corrupt: u64,
    /// Present and intact, but a property sent is absent or different.
    pub metadata_mismatch: u64,
    /// A document with versions whose history differs from its source's: a version missing
    /// or extra, out of order, or with other bytes (size or SHA-256).
    #[serde(default)]
    pub version_mismatch: u64,
    /// Versions read back and found intact (besides the heads, which `ok` counts).
    #[serde(default)]
    pub versions_ok: u64,
    /// Could not be read (transport or server error).
    pub errors: u64,
    /// Documents in the run folders that no acknowledged upload accounts for: extra copies
    /// the repository really holds.
    pub duplicates: u64,
    /// Manifest lines naming an id that another line names already: a defect of the
    /// manifest (one stored document recorded twice), not a second stored document.
    #[serde(default)]
    pub manifest_duplicates: u64,
    /// Uploads the manifest lists as failed (not expected to be there).
    pub failed_uploads: u64,
    /// Documents found in a run folder beyond the acknowledged ones, up to the number of
    /// failed uploads there: an ambiguous failure (timeout, 500, reset) that had committed.
    /// Not a loss, but the report counted them as failed.
    #[serde(default)]
    pub unacknowledged: u64,
    /// After a hard stop (the result still in progress): documents in a run folder beyond
    /// what the manifest accounts for, stored by uploads whose lines were lost. Not copies:
    /// `--resume` adopts them.
    #[serde(default)]
    pub unrecorded: u64,
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    pub fn clean(&self) -> bool {
        self.missing
            + self.corrupt
            + self.metadata_mismatch
            + self.version_mismatch
            + self.errors
            + self.duplicates
            + self.manifest_duplicates
            + self.unrecorded
            == 0
    }

    pub fn summary(&self) -> String {
        format!(
            "verify: {} checked, {} ok, {} missing, {} corrupt, {} metadata mismatches, {}{} unreadable, {} duplicates, {}{} stored but not in the manifest ({} uploads listed as failed, {} of them stored anyway)",
            self.checked,
            self.ok,
            self.missing,
            self.corrupt,
            self.metadata_mismatch,
            match (self.version_mismatch, self.versions_ok) {
                (0, 0) => String::new(),
                (bad, good) => format!("{bad} version histories wrong ({good} versions intact), "),
            },
            self.errors,
            self.duplicates,
            match self.manifest_duplicates {
                0 => String::new(),
                n => format!("{n} ids listed twice in the manifest, "),
            },
            self.unrecorded,
            self.failed_uploads,
            self.unacknowledged
        )
    }

    pub(crate) fn add(&mut self, kind: &str, e: &ManifestEntry, detail: String) {
        match kind {
            "missing" => self.missing += 1,
            "corrupt" => self.corrupt += 1,
            "metadata" => self.metadata_mismatch += 1,
            "version" => self.version_mismatch += 1,
            "duplicate" => self.duplicates += 1,
            "manifest_duplicate" => self.manifest_duplicates += 1,
            "unrecorded" => self.unrecorded += 1,
            _ => self.errors += 1,
        }
        if self.problems.len() < MAX_LISTED {
            self.problems.push(Problem {
                kind: kind.into(),
                name: e.name.clone(),
                id: e.id.clone().unwrap_or_default(),
                folder: e.folder.clone(),
                detail,
            });
        }
    }

    pub(crate) fn merge(&mut self, o: VerifyReport) {
        self.checked += o.checked;
        self.ok += o.ok;
        self.missing += o.missing;
        self.corrupt += o.corrupt;
        self.metadata_mismatch += o.metadata_mismatch;
        self.version_mismatch += o.version_mismatch;
        self.versions_ok += o.versions_ok;
        self.errors += o.errors;
        self.duplicates += o.duplicates;
        self.manifest_duplicates += o.manifest_duplicates;
        self.failed_uploads += o.failed_uploads;
        self.unacknowledged += o.unacknowledged;
        for p in o.problems {
            if self.problems.len() < MAX_LISTED {
                self.problems.push(p);
            }
        }
    }
}
