//! Version history, as the real repositories keep it: a row per version with a snapshot of
//! the properties it was created with, its label, comment and bytes. Rows are made only when
//! a versionable document is first changed (its properties or its content), so a plain upload
//! costs what it did; until then its one version is the node itself. The current version's
//! bytes are the node's content; a superseded version's are kept under `<id>@<seq>`.

use rusqlite::{OptionalExtension, params};

use super::{Node, Store, StoreError, internal, row_to_node};

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS versions (
  node_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  label TEXT NOT NULL,
  size INTEGER NOT NULL,
  content_key TEXT,
  properties TEXT NOT NULL,
  comment TEXT,
  created_at INTEGER NOT NULL,
  creator TEXT NOT NULL,
  PRIMARY KEY (node_id, seq)
);
";

/// One version of a document.
#[derive(Debug, Clone)]
pub struct Version {
    pub seq: i64,
    pub label: String,
    pub size: u64,
    /// Properties (JSON object text) as they were when the version was made.
    pub properties: String,
    pub comment: Option<String>,
    pub created_at_ms: i64,
    pub creator: String,
    /// Where its bytes are: `None` for the current version (the node's content).
    content_key: Option<String>,
}

/// How the next version is numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Increase {
    /// 1.3 -> 2.0
    Major,
    /// 1.3 -> 1.4
    Minor,
}

/// The label after `label`.
pub fn next_label(label: &str, inc: Increase) -> String {
    let (maj, min) = label.split_once('.').unwrap_or((label, "0"));
    let (maj, min) = (
        maj.parse::<u64>().unwrap_or(1),
        min.parse::<u64>().unwrap_or(0),
    );
    match inc {
        Increase::Major => format!("{}.0", maj + 1),
        Increase::Minor => format!("{maj}.{}", min + 1),
    }
}

/// What a content update does to a document's versions.
pub struct ContentUpdate {
    /// `None`: the document is not versionable and versioning was not asked for: the bytes
    /// are replaced, no version is made.
    pub increase: Option<Increase>,
    pub comment: Option<String>,
    /// Label of a document's first version when this update makes it versionable.
    pub first_label: &'static str,
    /// Property (JSON key) holding the current label on the node (`cm:versionLabel`).
    pub label_key: &'static str,
    pub user: String,
}

fn row_to_version(r: &rusqlite::Row<'_>) -> rusqlite::Result<Version> {
    Ok(Version {
        seq: r.get(0)?,
        label: r.get(1)?,
        size: r.get::<_, i64>(2)? as u64,
        content_key: r.get(3)?,
        properties: r.get(4)?,
        comment: r.get(5)?,
        created_at_ms: r.get(6)?,
        creator: r.get(7)?,
    })
}

const VCOLS: &str = "seq, label, size, content_key, properties, comment, created_at, creator";

fn rows(tx: &rusqlite::Connection, id: &str) -> Result<Vec<Version>, StoreError> {
    let mut st = tx
        .prepare_cached(&format!(
            "SELECT {VCOLS} FROM versions WHERE node_id = ?1 ORDER BY seq"
        ))
        .map_err(internal)?;
    let r = st.query_map([id], row_to_version).map_err(internal)?;
    r.collect::<rusqlite::Result<Vec<_>>>().map_err(internal)
}

/// The label the node shows (`label_key` in its properties), if any.
fn node_label(n: &Node, label_key: &str) -> Option<String> {
    let props: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&n.properties).unwrap_or_default();
    props
        .get(label_key)
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// The node's one version before any row exists (it was made with the node).
fn implicit(n: &Node, label: String) -> Version {
    Version {
        seq: 1,
        label,
        size: n.size,
        properties: n.properties.clone(),
        comment: None,
        created_at_ms: n.created_at_ms,
        creator: n.creator.clone(),
        content_key: None,
    }
}

/// Makes the row of the node's current version if none exists yet, so a change that
/// follows does not alter the snapshot of what it was created with.
fn ensure_rows(
    tx: &rusqlite::Connection,
    n: &Node,
    label_key: &str,
) -> Result<Vec<Version>, StoreError> {
    let have = rows(tx, &n.id)?;
    if !have.is_empty() {
        return Ok(have);
    }
    let Some(label) = node_label(n, label_key) else {
        return Ok(have);
    };
    let v = implicit(n, label);
    tx.execute(
        &format!("INSERT INTO versions (node_id, {VCOLS}) VALUES (?1, ?2, ?3, ?4, NULL, ?5, NULL, ?6, ?7)"),
        params![n.id, v.seq, v.label, v.size as i64, v.properties, v.created_at_ms, v.creator],
    )
    .map_err(internal)?;
    Ok(vec![v])
}

impl Store {
    fn node_in(tx: &rusqlite::Connection, id: &str) -> Result<Option<Node>, StoreError> {
        tx.query_row(
            &format!("SELECT {} FROM nodes WHERE id = ?1", super::COLS),
            [id],
            row_to_node,
        )
        .optional()
        .map_err(internal)
    }

    /// The versions of document `id`, oldest first: its rows, or its one implicit version
    /// (`label_key` names the property holding its label; none: not versioned, no versions).
    pub fn versions(&self, id: &str, label_key: &str) -> Result<Option<Vec<Version>>, StoreError> {
        self.with(|c| {
            let Some(n) = Self::node_in(c, id)? else {
                return Ok(None);
            };
            let have = rows(c, id)?;
            if !have.is_empty() {
                return Ok(Some(have));
            }
            Ok(Some(
                node_label(&n, label_key)
                    .map(|l| vec![implicit(&n, l)])
                    .unwrap_or_default(),
            ))
        })
    }

    /// Where the bytes of version `label` of document `id` are kept (the document's own key
    /// when the version has none); None when there is no such version.
    fn version_key(
        &self,
        id: &str,
        label: &str,
        label_key: &str,
    ) -> Result<Option<String>, StoreError> {
        let Some(vs) = self.versions(id, label_key)? else {
            return Ok(None);
        };
        let v = vs.into_iter().find(|v| v.label == label);
        Ok(v.map(|v| v.content_key.unwrap_or_else(|| id.to_string())))
    }

    /// The bytes of version `label` of document `id`; None when there is no such version.
    pub fn read_version(
        &self,
        id: &str,
        label: &str,
        label_key: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(key) = self.version_key(id, label, label_key)? else {
            return Ok(None);
        };
        self.content.read(&key).map(Some).map_err(internal)
    }

    /// Replaces the bytes of version `label` of document `id` (fault-injection tests: a
    /// history corrupted in the store); false when there is no such version.
    pub fn overwrite_version(
        &self,
        id: &str,
        label: &str,
        label_key: &str,
        bytes: &[u8],
    ) -> Result<bool, StoreError> {
        let Some(key) = self.version_key(id, label, label_key)? else {
            return Ok(false);
        };
        self.content.remove(&key);
        self.content
            .write(&key, &bytes::Bytes::copy_from_slice(bytes))
            .map_err(internal)?;
        Ok(true)
    }

    /// Replaces the properties of document `id` by `properties` (JSON object text), after
    /// snapshotting its current version; returns the node.
    pub fn update_properties(
        &self,
        id: &str,
        properties: &str,
        aspects: &str,
        label_key: &str,
    ) -> Result<Node, StoreError> {
        self.with(|c| {
            let tx = c
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(internal)?;
            let Some(n) = Self::node_in(&tx, id)? else {
                return Err(StoreError::ParentNotFound);
            };
            ensure_rows(&tx, &n, label_key)?;
            tx.execute(
                "UPDATE nodes SET properties = ?2, aspects = ?3 WHERE id = ?1",
                params![id, properties, aspects],
            )
            .map_err(internal)?;
            let n = Self::node_in(&tx, id)?.ok_or_else(|| internal("node vanished"))?;
            tx.commit().map_err(internal)?;
            Ok(n)
        })
    }

    /// New content for document `id`: the current version's bytes are kept under their own
    /// key and a new version is made (or, unversioned, the bytes are replaced). `relabel`
    /// makes the node's properties and aspects with the new label set. Returns the node.
    pub fn update_content(
        &self,
        id: &str,
        content: &bytes::Bytes,
        u: &ContentUpdate,
        relabel: impl FnOnce(&str, &Node) -> (String, String),
    ) -> Result<Node, StoreError> {
        let now = crate::timefmt::now_ms();
        self.with(|c| {
            let tx = c
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(internal)?;
            let Some(n) = Self::node_in(&tx, id)? else {
                return Err(StoreError::ParentNotFound);
            };
            let have = ensure_rows(&tx, &n, u.label_key)?;
            let (label, seq) = match (have.last(), u.increase) {
                (_, None) => (None, 0),
                (None, Some(_)) => (Some(u.first_label.to_string()), 1),
                (Some(cur), Some(inc)) => {
                    // The current bytes become the superseded version's own.
                    let key = format!("{id}@{}", cur.seq);
                    let old = self.content.read(id).map_err(internal)?;
                    self.content
                        .write(&key, &bytes::Bytes::from(old))
                        .map_err(internal)?;
                    tx.execute(
                        "UPDATE versions SET content_key = ?3 WHERE node_id = ?1 AND seq = ?2",
                        params![id, cur.seq, key],
                    )
                    .map_err(internal)?;
                    (Some(next_label(&cur.label, inc)), cur.seq + 1)
                }
            };
            let (properties, aspects) = match &label {
                Some(l) => relabel(l, &n),
                None => (n.properties.clone(), n.aspects.clone()),
            };
            self.content.remove(id);
            self.content.write(id, content).map_err(internal)?;
            tx.execute(
                "UPDATE nodes SET size = ?2, properties = ?3, aspects = ?4 WHERE id = ?1",
                params![id, content.len() as i64, properties, aspects],
            )
            .map_err(internal)?;
            if let Some(l) = &label {
                tx.execute(
                    &format!("INSERT INTO versions (node_id, {VCOLS}) VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, ?8)"),
                    params![id, seq, l, content.len() as i64, properties, u.comment, now, u.user],
                )
                .map_err(internal)?;
            }
            let n = Self::node_in(&tx, id)?.ok_or_else(|| internal("node vanished"))?;
            tx.commit().map_err(internal)?;
            Ok(n)
        })
    }

    /// Keys of the superseded versions' bytes of the nodes `ids`, with their rows removed
    /// (in the caller's transaction: a deleted node takes its history with it).
    pub(super) fn drop_versions(
        tx: &rusqlite::Connection,
        id: &str,
    ) -> Result<Vec<String>, StoreError> {
        let keys: Vec<String> = rows(tx, id)?
            .into_iter()
            .filter_map(|v| v.content_key)
            .collect();
        tx.execute("DELETE FROM versions WHERE node_id = ?1", [id])
            .map_err(internal)?;
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_go_up() {
        assert_eq!(next_label("1.0", Increase::Major), "2.0");
        assert_eq!(next_label("1.0", Increase::Minor), "1.1");
        assert_eq!(next_label("2.9", Increase::Minor), "2.10");
    }
}
