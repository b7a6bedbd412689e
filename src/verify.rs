//! Nothing lost: read back every document the manifest lists, by id (never by search, which
//! lags), and check it exists with the same name, size and SHA-256 of its content, every
//! version a corpus document had (in order, each one's size and SHA-256), and the
//! metadata that was sent (properties the server adds are tolerated); then count each run
//! folder's documents so anything the manifest does not account for (a retry that had
//! committed, a duplicate) shows up. Concurrent, with a progress bar; pure data out.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

mod metadata;

use crate::fixtures::{Profile, PropType};
use crate::protocol::Repo;
use crate::protocol_kind::ProtocolKind;
use crate::results::manifest::ManifestEntry;
pub use crate::results::verified::{Problem, VerifyReport};
use crate::timefmt;

/// Are two values of a property's type the same (numbers numerically, dates as instants)?
pub fn same_value(ty: PropType, sent: &str, got: &str) -> bool {
    match ty {
        PropType::Int | PropType::Long => {
            sent.trim().parse::<i64>().ok() == got.trim().parse::<i64>().ok()
                && sent.trim().parse::<i64>().is_ok()
        }
        PropType::Float | PropType::Double => {
            match (sent.trim().parse::<f64>(), got.trim().parse::<f64>()) {
                (Ok(a), Ok(b)) => (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0),
                _ => false,
            }
        }
        PropType::Date | PropType::DateTime => {
            let t = |s: &str| timefmt::parse_iso(s.trim()).or_else(|| s.trim().parse::<i64>().ok());
            t(sent).is_some() && t(sent) == t(got)
        }
        PropType::Boolean => sent.trim().eq_ignore_ascii_case(got.trim()),
        PropType::Text => sent == got,
    }
}

/// The 12 first hex digits of a hash, for messages.
fn short(h: &str) -> &str {
    &h[..12.min(h.len())]
}

/// A document's version history read back against its source's: as many versions as its
/// `.vN` files plus the head, oldest first, each with the recorded size and SHA-256. The
/// first difference is reported, naming the version; true when all match.
fn check_versions(
    expect: &Expect,
    e: &ManifestEntry,
    got: &[crate::protocol::Fetched],
    rep: &mut VerifyReport,
) -> bool {
    let want = e.versions.len() + 1;
    let sources: Vec<String> = e
        .versions
        .iter()
        .map(|v| format!("v{}", v.label))
        .chain(std::iter::once("head".into()))
        .collect();
    if got.len() != want {
        let labels: Vec<&str> = got.iter().map(|g| g.name.as_str()).collect();
        rep.add(
            "version",
            e,
            format!(
                "{} versions found ({}), {want} expected (the source's {})",
                got.len(),
                labels.join(", "),
                sources.join(", ")
            ),
        );
        return false;
    }
    let expected = e
        .versions
        .iter()
        .map(|v| (v.size, v.sha256.as_str()))
        .chain(std::iter::once((e.size, e.sha256.as_str())));
    for (i, ((size, sha), g)) in expected.zip(got).enumerate() {
        if g.size != size || g.sha256 != sha {
            rep.add(
                "version",
                e,
                format!(
                    "version {} of {want} (source {}, repository version {}): expected {size} bytes, sha256 {}, found {} bytes, sha256 {}",
                    i + 1,
                    sources[i],
                    g.name,
                    short(sha),
                    g.size,
                    short(&g.sha256)
                ),
            );
            return false;
        }
        // Its metadata, where the repository keeps it per version (Alfresco, CMIS).
        if g.props.is_empty() {
            continue;
        }
        let label = e.versions.get(i).map(|v| v.label.as_str());
        let shadow = e
            .source
            .as_deref()
            .and_then(|s| metadata::shadow_of(s, label));
        let wants = metadata::expected(expect, e, shadow.as_ref());
        if let Some(d) = metadata::first_difference(&wants, &g.props) {
            rep.add(
                "version",
                e,
                format!(
                    "version {} of {want} (source {}, repository version {}): metadata {d}",
                    i + 1,
                    sources[i],
                    g.name
                ),
            );
            return false;
        }
    }
    rep.versions_ok += e.versions.len() as u64;
    true
}

/// What to check against, besides the manifest.
pub struct Expect {
    pub protocol: ProtocolKind,
    pub profile: Arc<Profile>,
    pub seed: u64,
    /// The results are of a run stopped hard (result still in progress, or a sweep missing
    /// runs): documents beyond the manifest are unrecorded, not duplicates.
    pub hard_stopped: bool,
}

fn check_one(
    expect: &Expect,
    e: &ManifestEntry,
    got: &crate::protocol::Fetched,
    rep: &mut VerifyReport,
) {
    if got.name != e.name || got.size != e.size || got.sha256 != e.sha256 {
        let detail = format!(
            "expected {} ({} bytes, sha256 {}), found {} ({} bytes, sha256 {})",
            e.name,
            e.size,
            &e.sha256[..12.min(e.sha256.len())],
            got.name,
            got.size,
            &got.sha256[..12.min(got.sha256.len())]
        );
        rep.add("corrupt", e, detail);
        return;
    }
    let shadow = e
        .source
        .as_deref()
        .and_then(|s| metadata::shadow_of(s, None));
    let wants = metadata::expected(expect, e, shadow.as_ref());
    if let Some(d) = metadata::first_difference(&wants, &got.props) {
        rep.add("metadata", e, d);
        return;
    }
    rep.ok += 1;
}

/// Reads back every acknowledged entry with `concurrency` requests at once. `repos` maps a
/// manifest cell (or "" for `run`) to the client to read it through.
pub async fn verify(
    repos: HashMap<String, Arc<Repo>>,
    expect: Arc<Expect>,
    entries: Vec<ManifestEntry>,
    concurrency: usize,
    progress: Option<indicatif::ProgressBar>,
) -> VerifyReport {
    let entries = Arc::new(entries);
    let repos = Arc::new(repos);
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..concurrency.max(1) {
        let (entries, repos, next, expect, done, progress) = (
            entries.clone(),
            repos.clone(),
            next.clone(),
            expect.clone(),
            done.clone(),
            progress.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut rep = VerifyReport::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(e) = entries.get(i) else { break };
                if !e.ok {
                    rep.failed_uploads += 1;
                    continue;
                }
                rep.checked += 1;
                let repo = repos
                    .get(e.cell.as_deref().unwrap_or(""))
                    .or_else(|| repos.values().next())
                    .expect("a client");
                let id = e.id.as_deref().unwrap_or("");
                let history = if e.versions.is_empty() {
                    Ok(None)
                } else {
                    repo.fetch_versions(id).await
                };
                match (repo.fetch(id).await, history) {
                    (Ok(Some(got)), Ok(Some(h))) => {
                        if check_versions(&expect, e, &h, &mut rep) {
                            check_one(&expect, e, &got, &mut rep)
                        }
                    }
                    (Ok(Some(got)), Ok(None)) if e.versions.is_empty() => {
                        check_one(&expect, e, &got, &mut rep)
                    }
                    (Ok(None), _) | (Ok(Some(_)), Ok(None)) => {
                        rep.add("missing", e, "not found by id".into())
                    }
                    (Err(m), _) | (_, Err(m)) => rep.add("error", e, m),
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(p) = &progress
                    && n % 64 == 0
                {
                    p.set_position(n);
                }
            }
            rep
        }));
    }
    let mut report = VerifyReport::default();
    for t in tasks {
        if let Ok(r) = t.await {
            report.merge(r);
        }
    }
    check_folders(&repos, &entries, expect.hard_stopped, &mut report).await;
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    report
}

/// Ids the manifest lists twice (a defect of the manifest), then documents in the run
/// folders that nothing accounts for (a retried upload that had committed), counted per
/// folder against the distinct ids acknowledged there.
async fn check_folders(
    repos: &HashMap<String, Arc<Repo>>,
    entries: &[ManifestEntry],
    hard_stopped: bool,
    report: &mut VerifyReport,
) {
    let mut seen = HashSet::new();
    let mut listed_twice = Vec::new();
    // (cell, folder) -> (distinct ids acknowledged, failed uploads, an entry to name it by)
    let mut per_folder: BTreeMap<(String, String), (u64, u64, &ManifestEntry)> = BTreeMap::new();
    for e in entries.iter() {
        let slot = per_folder
            .entry((e.cell.clone().unwrap_or_default(), e.folder.clone()))
            .or_insert((0, 0, e));
        match (&e.id, e.ok) {
            (Some(id), true) if !seen.insert(id.clone()) => listed_twice.push(e),
            (_, true) => slot.0 += 1,
            (_, false) => slot.1 += 1,
        }
    }
    let mut extra_in: HashMap<(String, String), (u64, u64)> = HashMap::new();
    for ((cell, folder), (acked, failed, sample)) in &per_folder {
        let repo = repos
            .get(cell)
            .or_else(|| repos.values().next())
            .expect("a client");
        match repo.count_folder(folder).await {
            Ok(Some(n)) => {
                extra_in.insert((cell.clone(), folder.clone()), (n, *acked));
                if n > *acked {
                    let unacked = (n - acked).min(*failed);
                    report.unacknowledged += unacked;
                    for _ in acked + unacked..n {
                        let kind = if hard_stopped {
                            "unrecorded"
                        } else {
                            "duplicate"
                        };
                        report.add(kind, sample, format!("{folder} holds {n} documents: {acked} acknowledged, {failed} failed uploads"));
                    }
                }
            }
            Ok(None) => {}
            Err(m) => report.add("error", sample, format!("listing {folder}: {m}")),
        }
    }
    for e in listed_twice {
        let id = e.id.as_deref().unwrap_or_default();
        let held = match extra_in.get(&(e.cell.clone().unwrap_or_default(), e.folder.clone())) {
            Some((n, acked)) if n <= acked => format!(
                "the repository holds one document with this id ({}: {n} documents for {acked} distinct ids acknowledged, no extra copy)",
                e.folder
            ),
            Some((n, acked)) => format!(
                "{}: {n} documents for {acked} distinct ids acknowledged (the extra ones are counted as duplicates)",
                e.folder
            ),
            None => format!("{} could not be counted", e.folder),
        };
        report.add(
            "manifest_duplicate",
            e,
            format!("id {id} is listed twice in the manifest (a defect of the manifest, not a second stored document); {held}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_by_type() {
        assert!(same_value(PropType::Double, "12.50", "12.5"));
        assert!(!same_value(PropType::Double, "12.50", "12.6"));
        assert!(same_value(
            PropType::Date,
            "2005-03-01",
            "2005-03-01T00:00:00.000+0000"
        ));
        assert!(same_value(
            PropType::DateTime,
            "1970-01-01T00:00:01.000Z",
            "1000"
        ));
        assert!(same_value(PropType::Int, "7", "7") && !same_value(PropType::Int, "7", "8"));
        assert!(same_value(PropType::Boolean, "true", "TRUE"));
        assert!(!same_value(PropType::Text, "a", "b"));
    }
}
