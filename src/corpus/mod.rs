//! Real corpora: what a migration will really send. `describe` streams a directory tree of
//! real files (`scan`) or a listing exported from the source system (`listing`) into a
//! [`CorpusDescription`] (`corpus.json`): counts, bytes, a log-spaced size histogram with
//! percentiles, content types by sniffing (`sniff`), folder fan-out, and the Alfresco bulk-import
//! shadow metadata found (`shadow`). Constant memory whatever the number of files: only
//! aggregates are kept. Problems (symlinks, unreadable files, malformed lines, broken shadow
//! files) are counted with samples, never fatal.

pub mod check;
pub mod listing;
pub mod policy;
pub mod rules;
pub mod sample;
pub mod scan;

pub mod sniff;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Version of the `corpus.json` format.
pub const CORPUS_SCHEMA_VERSION: u32 = 1;

/// Most sample paths kept per kind of problem.
const SAMPLES: usize = 10;

/// One log-spaced size bucket: documents of `lo_bytes <= size < hi_bytes` (powers of two).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SizeBucket {
    pub lo_bytes: u64,
    pub hi_bytes: u64,
    pub files: u64,
    pub bytes: u64,
}

/// Size percentiles in bytes (by document count).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SizePercentiles {
    pub min: u64,
    pub p10: u64,
    pub p25: u64,
    pub p50: u64,
    pub p75: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub mean: f64,
    /// The size below which half the corpus's bytes lie (byte-weighted median).
    pub bytes_p50: u64,
}

/// Problems met while describing, counted with the first few paths or lines.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Problem {
    pub count: u64,
    pub samples: Vec<String>,
}

impl Problem {
    pub(crate) fn add(&mut self, sample: impl FnOnce() -> String) {
        self.count += 1;
        if self.samples.len() < SAMPLES {
            self.samples.push(sample());
        }
    }
}

/// Alfresco bulk-import shadow metadata found beside the documents.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ShadowSummary {
    /// `<file>.metadata.properties.xml` files (counted as metadata, not as documents).
    pub metadata_files: u64,
    /// Version files `<file>.vN` (and their `.metadata.properties.xml.vN`), not documents.
    pub version_files: u64,
    /// Content types named by `type`, with counts.
    pub types: BTreeMap<String, u64>,
    /// Aspects named by `aspects`, with counts.
    pub aspects: BTreeMap<String, u64>,
    /// Property names, with the number of shadow files that set them.
    pub properties: BTreeMap<String, u64>,
    /// Documents with at least one version file (imported as that many versions before the
    /// head file: a document with 5 versions is 6 uploads).
    #[serde(default)]
    pub documents_with_versions: u64,
    /// Version files of content (`<file>.vN`, not their metadata) and their bytes.
    #[serde(default)]
    pub version_content_files: u64,
    #[serde(default)]
    pub version_bytes: u64,
    /// The most versions one document has.
    #[serde(default)]
    pub max_versions: u64,
    /// Documents by number of versions (`"0"`, `"1"`, ..., `"10+"`).
    #[serde(default)]
    pub versions_histogram: BTreeMap<String, u64>,
    /// Times a document's metadata changes from one version to the next (a version with its
    /// own `.metadata.properties.xml.vN` and the ones after it): Alfresco's properties
    /// updates between versions.
    #[serde(default)]
    pub version_property_updates: u64,
}

/// `corpus.json`: what a corpus holds, as far as an import's duration is concerned.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CorpusDescription {
    pub schema_version: u32,
    /// The directory or listing described.
    pub source: String,
    /// `directory` or `listing`.
    pub kind: String,
    pub documents: u64,
    pub bytes: u64,
    pub sizes: SizePercentiles,
    /// Non-empty buckets, smallest first.
    pub size_histogram: Vec<SizeBucket>,
    /// Content types (sniffed from the bytes for a directory, as listed for a listing).
    pub content_types: BTreeMap<String, u64>,
    /// Folders holding documents; the largest one, its document count, the deepest level.
    pub folders: u64,
    pub largest_folder: Option<String>,
    pub largest_folder_documents: u64,
    pub max_depth: u64,
    pub shadow: ShadowSummary,
    pub symlinks_skipped: Problem,
    pub unreadable: Problem,
    pub malformed_lines: Problem,
    pub broken_shadow_files: Problem,
    /// Folders below the root, empty ones included: what an import that recreates the tree
    /// creates (a directory corpus; 0 for a listing, whose folders are `folders`).
    #[serde(default)]
    pub directories: u64,
    /// Version files whose head file is missing (`b.pdf.v1` without `b.pdf`): not imported.
    #[serde(default)]
    pub orphan_version_files: Problem,
    /// Documents whose version numbers skip (v1, v3): imported in number order, as the
    /// bulk-import tool does; listed so the source can be checked.
    #[serde(default)]
    pub version_gaps: Problem,
    /// The pre-flight check against a repository's rules (`corpus --check REPO`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<check::Preflight>,
}

/// Accumulates a description, one document at a time, in constant memory.
pub struct Describer {
    d: CorpusDescription,
    hist: hdrhistogram::Histogram<u64>,
    /// Files and bytes per power of two (index = bit length of the size).
    buckets: [(u64, u64); 65],
    /// Exact extremes (the histogram's are rounded to 3 significant figures).
    min: u64,
    max: u64,
}

impl Describer {
    pub fn new(source: &str, kind: &str) -> Describer {
        Describer {
            d: CorpusDescription {
                schema_version: CORPUS_SCHEMA_VERSION,
                source: source.to_string(),
                kind: kind.to_string(),
                documents: 0,
                bytes: 0,
                sizes: SizePercentiles::default(),
                size_histogram: Vec::new(),
                content_types: BTreeMap::new(),
                folders: 0,
                largest_folder: None,
                largest_folder_documents: 0,
                max_depth: 0,
                shadow: ShadowSummary::default(),
                symlinks_skipped: Problem::default(),
                unreadable: Problem::default(),
                malformed_lines: Problem::default(),
                broken_shadow_files: Problem::default(),
                directories: 0,
                orphan_version_files: Problem::default(),
                version_gaps: Problem::default(),
                preflight: None,
            },
            hist: hdrhistogram::Histogram::new_with_bounds(1, 1 << 50, 3)
                .expect("1 B to 1 PiB at 3 significant figures"),
            buckets: [(0, 0); 65],
            min: u64::MAX,
            max: 0,
        }
    }

    /// One document of `size` bytes and content type `mime`.
    pub fn document(&mut self, size: u64, mime: &str) {
        self.d.documents += 1;
        self.d.bytes += size;
        self.hist.saturating_record(size);
        self.min = self.min.min(size);
        self.max = self.max.max(size);
        let b = &mut self.buckets[(64 - size.leading_zeros()) as usize];
        b.0 += 1;
        b.1 += size;
        match self.d.content_types.get_mut(mime) {
            Some(n) => *n += 1,
            None => {
                self.d.content_types.insert(mime.to_string(), 1);
            }
        }
    }

    /// A folder holding `documents` documents at `depth` below the root.
    pub fn folder(&mut self, path: &str, documents: u64, depth: u64) {
        self.d.max_depth = self.d.max_depth.max(depth);
        if documents == 0 {
            return;
        }
        self.d.folders += 1;
        if documents > self.d.largest_folder_documents {
            self.d.largest_folder_documents = documents;
            self.d.largest_folder = Some(path.to_string());
        }
    }

    pub fn shadow(&mut self) -> &mut ShadowSummary {
        &mut self.d.shadow
    }
    pub fn symlink(&mut self, path: &Path) {
        self.d.symlinks_skipped.add(|| path.display().to_string());
    }
    pub fn unreadable(&mut self, path: &Path, why: &std::io::Error) {
        self.d
            .unreadable
            .add(|| format!("{}: {why}", path.display()));
    }
    pub fn malformed(&mut self, line: u64, why: &str) {
        self.d.malformed_lines.add(|| format!("line {line}: {why}"));
    }
    /// A document with `versions` version files (of content) holding `bytes`; `numbers`
    /// their version numbers, sorted.
    pub fn versions(&mut self, path: &Path, numbers: &[Vec<u64>], bytes: u64) {
        let n = numbers.len() as u64;
        let s = &mut self.d.shadow;
        let key = if n >= 10 {
            "10+".to_string()
        } else {
            n.to_string()
        };
        *s.versions_histogram.entry(key).or_default() += 1;
        if n == 0 {
            return;
        }
        s.documents_with_versions += 1;
        s.version_content_files += n;
        s.version_bytes += bytes;
        s.max_versions = s.max_versions.max(n);
        // Whole numbers that are not 1, 2, 3, ...: a gap (dotted numbers such as 1.1 are
        // minor versions, whose numbering skips by design).
        let gap = numbers.iter().all(|v| v.len() == 1)
            && numbers
                .iter()
                .enumerate()
                .any(|(i, v)| v[0] != i as u64 + 1);
        if gap {
            let labels: Vec<String> = numbers
                .iter()
                .map(|v| crate::fixtures::shadow::version_label(v))
                .collect();
            self.d
                .version_gaps
                .add(|| format!("{}: versions {}", path.display(), labels.join(", ")));
        }
    }
    pub fn orphan_version(&mut self, path: &Path) {
        self.d
            .orphan_version_files
            .add(|| format!("{}: no head file beside it", path.display()));
    }
    pub fn directory(&mut self) {
        self.d.directories += 1;
    }
    pub fn broken_shadow(&mut self, path: &Path, why: &str) {
        self.d
            .broken_shadow_files
            .add(|| format!("{}: {why}", path.display()));
    }

    /// The description, with percentiles and the histogram filled in.
    pub fn finish(mut self) -> CorpusDescription {
        let h = &self.hist;
        let q = |p: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(p)
            }
        };
        let mut bytes_p50 = 0;
        let mut acc = 0u64;
        for (i, (files, bytes)) in self.buckets.iter().enumerate() {
            if *files == 0 {
                continue;
            }
            let lo = if i == 0 { 0 } else { 1u64 << (i - 1) };
            let hi = if i >= 64 { u64::MAX } else { 1u64 << i };
            if bytes_p50 == 0 && (acc + bytes) * 2 >= self.d.bytes && self.d.bytes > 0 {
                // Within the bucket, interpolate by bytes.
                let need = (self.d.bytes as f64 / 2.0 - acc as f64) / (*bytes).max(1) as f64;
                let top = hi.min(self.max.saturating_add(1)).max(lo);
                bytes_p50 = lo + ((top - lo) as f64 * need) as u64;
            }
            acc += bytes;
            self.d.size_histogram.push(SizeBucket {
                lo_bytes: lo,
                hi_bytes: hi,
                files: *files,
                bytes: *bytes,
            });
        }
        self.d.sizes = SizePercentiles {
            min: if h.is_empty() { 0 } else { self.min },
            p10: q(0.10),
            p25: q(0.25),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p99: q(0.99),
            max: self.max,
            mean: if self.d.documents == 0 {
                0.0
            } else {
                (self.d.bytes as f64 / self.d.documents as f64 * 10.0).round() / 10.0
            },
            bytes_p50: bytes_p50.clamp(if h.is_empty() { 0 } else { self.min }, self.max),
        };
        self.d
    }
}

/// Describes `path`: a directory tree of real files, or a listing file (CSV).
pub fn describe(path: &Path) -> Result<CorpusDescription> {
    describe_checked(path, None)
}

/// [`describe`], and with a checker the pre-flight check in the same walk
/// (`description.preflight`).
pub fn describe_checked(
    path: &Path,
    mut checker: Option<check::Checker>,
) -> Result<CorpusDescription> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("corpus {}: cannot read it (check the path)", path.display()))?;
    let mut d = if meta.is_dir() {
        scan::scan_checked(path, checker.as_mut())?
    } else {
        listing::read_checked(path, checker.as_mut())?
    };
    if let Some(c) = checker {
        d.preflight = Some(c.finish(&d));
    }
    Ok(d)
}

impl CorpusDescription {
    /// Reads a `corpus.json` written by `ingestbench corpus`.
    pub fn load(path: &Path) -> Result<CorpusDescription> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--corpus {}: cannot read", path.display()))?;
        let d: CorpusDescription = serde_json::from_str(&text).with_context(|| {
            format!(
                "--corpus {}: not a corpus description (make one with `ingestbench corpus DIR|LISTING.csv`)",
                path.display()
            )
        })?;
        if d.schema_version != CORPUS_SCHEMA_VERSION {
            anyhow::bail!(
                "--corpus {}: schema_version {} is not the {CORPUS_SCHEMA_VERSION} this ingestbench reads",
                path.display(),
                d.schema_version
            );
        }
        Ok(d)
    }

    /// A corpus.json as written by `ingestbench corpus`, or else (a directory, a CSV
    /// listing) described on the spot.
    pub fn load_or_describe(path: &Path) -> Result<CorpusDescription> {
        if path.extension().is_some_and(|e| e == "json") {
            CorpusDescription::load(path)
        } else {
            describe(path).with_context(|| format!("--corpus {}", path.display()))
        }
    }

    /// The size mix: each histogram bucket's mean document size, weighted by its count.
    pub fn size_mix(&self) -> Vec<(u64, f64)> {
        self.size_histogram
            .iter()
            .filter(|b| b.files > 0)
            .map(|b| {
                (
                    (b.bytes as f64 / b.files as f64).round() as u64,
                    b.files as f64,
                )
            })
            .collect()
    }

    /// The mean size of the documents the mix produces (sizes raised to the smallest
    /// document ingestbench builds).
    pub fn mean_document_size(&self) -> u64 {
        let min = crate::fixtures::body::MIN_DOC_SIZE;
        let (n, b) = self.size_mix().iter().fold((0.0, 0.0), |(n, b), (s, w)| {
            (n + w, b + (*s).max(min) as f64 * w)
        });
        if n > 0.0 { (b / n).round() as u64 } else { min }
    }

    /// Bytes in the buckets wholly above `size`.
    pub fn bytes_above(&self, size: u64) -> u64 {
        self.size_histogram
            .iter()
            .filter(|b| b.lo_bytes > size)
            .map(|b| b.bytes)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_percentiles_and_byte_median() {
        let mut d = Describer::new("t", "listing");
        for _ in 0..90 {
            d.document(1000, "text/plain");
        }
        for _ in 0..10 {
            d.document(1_000_000, "application/pdf");
        }
        let c = d.finish();
        assert_eq!((c.documents, c.bytes), (100, 90_000 + 10_000_000));
        assert_eq!(c.size_histogram.len(), 2);
        assert_eq!(c.size_histogram[0].lo_bytes, 512);
        assert_eq!(c.size_histogram[0].hi_bytes, 1024);
        assert!(c.sizes.p50 >= 999 && c.sizes.p50 <= 1001, "{:?}", c.sizes);
        assert!(
            c.sizes.bytes_p50 >= 524_288,
            "bytes median in the big bucket"
        );
        assert_eq!(c.content_types["application/pdf"], 10);
    }
}
