//! The embedded target's durable store: an SQLite database (nodes, tickets) plus one file per
//! document's content under `<data-dir>/content/`. Several target processes may open the same
//! directory at once (a cluster sharing one store): SQLite serializes the writers, and name
//! uniqueness per folder (case-insensitive, as in Alfresco) is a database constraint. Version
//! histories live in `versions` (this module's child).
//! Blocking calls: run them off the async runtime.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use bytes::Bytes;
use rusqlite::{Connection, OptionalExtension, params};

mod versions;
pub use versions::{ContentUpdate, Increase, Version};

pub const COMPANY_HOME: &str = "8f2105b4-daaf-4874-9e8a-2152569d109b";
pub const SHARED: &str = "c4b2f0e5-1a3d-4f6b-9c70-3a8e5d2b1f04";
pub const USER_HOMES: &str = "5e1f7c2a-9b34-4d8e-a6f1-0c2d3b4a5e6f";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS nodes (
  id TEXT PRIMARY KEY,
  parent_id TEXT,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  node_type TEXT NOT NULL,
  is_folder INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  creator TEXT NOT NULL,
  size INTEGER NOT NULL DEFAULT 0,
  mime TEXT,
  properties TEXT NOT NULL DEFAULT '{}',
  aspects TEXT NOT NULL DEFAULT '[]',
  served_by TEXT NOT NULL DEFAULT '',
  title TEXT,
  title_key TEXT,
  erc TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS nodes_child ON nodes(parent_id, name_key);

CREATE TABLE IF NOT EXISTS tickets (ticket TEXT PRIMARY KEY, user_id TEXT NOT NULL, created_at INTEGER NOT NULL);
";

/// A stored node.
#[derive(Debug, Clone)]
pub struct Node {
    pub id: String,
    pub parent_id: Option<String>,
    pub name: String,
    pub node_type: String,
    pub is_folder: bool,
    pub created_at_ms: i64,
    pub creator: String,
    pub size: u64,
    pub mime: Option<String>,
    /// JSON object text.
    pub properties: String,
    /// JSON array text.
    pub aspects: String,
    pub served_by: String,
    /// The integer id (Liferay's `id`; SQLite's rowid).
    pub num: i64,
    /// Liferay title (unique per folder, case-insensitive), absent for Alfresco nodes.
    pub title: Option<String>,
    /// Liferay external reference code (unique), absent for Alfresco nodes.
    pub erc: Option<String>,
}

/// A document (or folder, with no content) to create.
pub struct NewNode {
    pub parent_id: String,
    pub relative_path: Option<String>,
    pub name: String,
    pub node_type: String,
    pub is_folder: bool,
    pub creator: String,
    pub mime: Option<String>,
    pub properties: String,
    pub aspects: String,
    pub served_by: String,
    pub content: Option<Bytes>,
    pub title: Option<String>,
    pub erc: Option<String>,
}

#[derive(Debug, PartialEq)]
pub enum StoreError {
    /// The parent (or a path element's parent) does not exist.
    ParentNotFound,
    /// A path element or the parent is not a folder.
    NotAFolder(String),
    /// The name exists in the folder.
    Duplicate(String),
    /// The title exists in the folder (Liferay).
    DuplicateTitle(String),
    /// The external reference code exists (Liferay).
    DuplicateErc(String),
    /// Anything else (I/O, database).
    Internal(String),
}

pub struct Store {
    dir: PathBuf,
    /// A temporary store: no fsync (`synchronous = OFF`); nothing survives it anyway.
    ephemeral: bool,
    pool: Mutex<Vec<Connection>>,
    content: super::content::ContentStore,
}

const COLS: &str = "id, parent_id, name, node_type, is_folder, created_at, creator, size, mime, properties, aspects, served_by, rowid, title, erc";

/// Indexes on columns added after the first release (created after the migration).
const LATE_INDEXES: &str = "
CREATE UNIQUE INDEX IF NOT EXISTS nodes_title ON nodes(parent_id, title_key);
CREATE UNIQUE INDEX IF NOT EXISTS nodes_erc ON nodes(erc);
";

fn row_to_node(r: &rusqlite::Row<'_>) -> rusqlite::Result<Node> {
    Ok(Node {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        name: r.get(2)?,
        node_type: r.get(3)?,
        is_folder: r.get::<_, i64>(4)? != 0,
        created_at_ms: r.get(5)?,
        creator: r.get(6)?,
        size: r.get::<_, i64>(7)? as u64,
        mime: r.get(8)?,
        properties: r.get(9)?,
        aspects: r.get(10)?,
        served_by: r.get(11)?,
        num: r.get(12)?,
        title: r.get(13)?,
        erc: r.get(14)?,
    })
}

/// Runs `f` on the store off the async runtime; a task that panicked is an internal error.
pub(crate) async fn blocking<T: Send + 'static>(
    store: &std::sync::Arc<Store>,
    f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .unwrap_or_else(|e| Err(StoreError::Internal(e.to_string())))
}

fn internal(e: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(e.to_string())
}

impl Store {
    pub fn open(dir: &Path) -> Result<Store> {
        Store::open_with(dir, false)
    }

    /// `share_prefixes`: an ephemeral store (removed at exit) that may keep documents as
    /// shared prefix + own rest (see `content`) and never fsyncs; durable stores write and
    /// sync every byte as the real server would.
    pub fn open_with(dir: &Path, share_prefixes: bool) -> Result<Store> {
        std::fs::create_dir_all(dir.join("content")).with_context(|| {
            format!(
                "--data-dir {}: cannot create the store directory",
                dir.display()
            )
        })?;
        let store = Store {
            dir: dir.to_path_buf(),
            ephemeral: share_prefixes,
            pool: Mutex::new(Vec::new()),
            content: super::content::ContentStore::new(dir.join("content"), share_prefixes)
                .with_context(|| {
                    format!(
                        "{}: cannot create the store's content pack",
                        dir.join("content").display()
                    )
                })?,
        };
        let conn = store.connect()?;
        conn.execute_batch(SCHEMA)
            .context("creating the store schema")?;
        conn.execute_batch(versions::SCHEMA)
            .context("creating the store's version table")?;
        // Stores made before the Liferay columns existed get them now.
        let has_title: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('nodes') WHERE name = 'title_key'")?
            .exists([])?;
        if !has_title {
            conn.execute_batch("ALTER TABLE nodes ADD COLUMN title TEXT; ALTER TABLE nodes ADD COLUMN title_key TEXT; ALTER TABLE nodes ADD COLUMN erc TEXT;")
                .context("upgrading the store schema")?;
        }
        conn.execute_batch(LATE_INDEXES)
            .context("creating the store indexes")?;
        let now = crate::timefmt::now_ms();
        for (id, parent, name) in [
            (COMPANY_HOME, None, "Company Home"),
            (SHARED, Some(COMPANY_HOME), "Shared"),
            (USER_HOMES, Some(COMPANY_HOME), "User Homes"),
        ] {
            conn.execute(
                "INSERT OR IGNORE INTO nodes (id, parent_id, name, name_key, node_type, is_folder, created_at, creator) VALUES (?1, ?2, ?3, ?4, 'cm:folder', 1, ?5, 'System')",
                params![id, parent, name, name.to_lowercase(), now],
            )?;
        }
        store.pool.lock().expect("pool").push(conn);
        Ok(store)
    }

    fn connect(&self) -> Result<Connection> {
        let path = self.dir.join("store.sqlite");
        let conn =
            Connection::open(&path).with_context(|| format!("opening {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        let sync = if self.ephemeral { "OFF" } else { "NORMAL" };
        conn.pragma_update(None, "synchronous", sync)?;
        Ok(conn)
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = self.pool.lock().expect("pool").pop();
        let mut conn = match conn {
            Some(c) => c,
            None => self.connect().map_err(internal)?,
        };
        let r = f(&mut conn);
        let mut pool = self.pool.lock().expect("pool");
        if pool.len() < 16 {
            pool.push(conn);
        }
        r
    }

    /// A document's content bytes (blocking).
    pub fn read_content(&self, id: &str) -> std::io::Result<Vec<u8>> {
        self.content.read(id)
    }

    /// Replaces a document's content bytes (fault-injection tests: a corrupted store).
    pub fn overwrite_content(&self, id: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.content.remove(id);
        self.content.write(id, &Bytes::copy_from_slice(bytes))
    }

    pub fn get(&self, id: &str) -> Result<Option<Node>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {COLS} FROM nodes WHERE id = ?1"),
                [id],
                row_to_node,
            )
            .optional()
            .map_err(internal)
        })
    }

    /// The home folder of `user` (`User Homes/<user>`), created on first use.
    pub fn user_home(&self, user: &str) -> Result<String, StoreError> {
        self.system_folder(USER_HOMES, user)
    }

    /// The folder `name` below `parent`, created by `System` on first use (safe when several
    /// nodes race to create it).
    pub fn system_folder(&self, parent: &str, name: &str) -> Result<String, StoreError> {
        self.with(|c| {
            let key = name.to_lowercase();
            let find = |c: &Connection| {
                c.query_row("SELECT id FROM nodes WHERE parent_id = ?1 AND name_key = ?2", params![parent, key], |r| r.get::<_, String>(0))
                    .optional()
            };
            if let Some(id) = find(c).map_err(internal)? {
                return Ok(id);
            }
            let id = uuid::Uuid::new_v4().to_string();
            c.execute(
                "INSERT OR IGNORE INTO nodes (id, parent_id, name, name_key, node_type, is_folder, created_at, creator) VALUES (?1, ?2, ?3, ?4, 'cm:folder', 1, ?5, 'System')",
                params![id, parent, name, key, crate::timefmt::now_ms()],
            )
            .map_err(internal)?;
            find(c).map_err(internal)?.ok_or_else(|| internal("system folder vanished"))
        })
    }

    /// A node by its integer id (Liferay ids).
    pub fn get_by_num(&self, num: i64) -> Result<Option<Node>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {COLS} FROM nodes WHERE rowid = ?1"),
                [num],
                row_to_node,
            )
            .optional()
            .map_err(internal)
        })
    }

    /// A node by its external reference code.
    pub fn get_by_erc(&self, erc: &str) -> Result<Option<Node>, StoreError> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {COLS} FROM nodes WHERE erc = ?1"),
                [erc],
                row_to_node,
            )
            .optional()
            .map_err(internal)
        })
    }

    /// One page of child documents (`folders` = false) or folders (true), by name.
    pub fn children_of_kind(
        &self,
        parent: &str,
        folders: bool,
        skip: u64,
        max: u64,
    ) -> Result<(Vec<Node>, u64), StoreError> {
        self.with(|c| {
            let total: i64 = c
                .query_row("SELECT COUNT(*) FROM nodes WHERE parent_id = ?1 AND is_folder = ?2", params![parent, folders as i64], |r| r.get(0))
                .map_err(internal)?;
            let mut st = c
                .prepare_cached(&format!("SELECT {COLS} FROM nodes WHERE parent_id = ?1 AND is_folder = ?2 ORDER BY name_key LIMIT ?3 OFFSET ?4"))
                .map_err(internal)?;
            let rows = st.query_map(params![parent, folders as i64, max as i64, skip as i64], row_to_node).map_err(internal)?;
            Ok((rows.collect::<rusqlite::Result<Vec<_>>>().map_err(internal)?, total as u64))
        })
    }

    /// Creates a node below `parent_id`/`relative_path` (missing folders are created), with
    /// its content written first so a committed node always has its bytes.
    pub fn create(&self, n: NewNode) -> Result<Node, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        let size = n.content.as_ref().map_or(0, |b| b.len() as u64);
        if let Some(content) = &n.content {
            self.content.write(&id, content).map_err(internal)?;
        }
        let now = crate::timefmt::now_ms();
        let r = self.with(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(internal)?;
            let parent = folder_for(&tx, &n, now)?;
                        let inserted = tx.execute(
                "INSERT INTO nodes (id, parent_id, name, name_key, node_type, is_folder, created_at, creator, size, mime, properties, aspects, served_by, title, title_key, erc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                params![
                    id,
                    parent,
                    n.name,
                    n.name.to_lowercase(),
                    n.node_type,
                    n.is_folder as i64,
                    now,
                    n.creator,
                    size as i64,
                    n.mime,
                    n.properties,
                    n.aspects,
                    n.served_by,
                    n.title,
                    n.title.as_ref().map(|t| t.to_lowercase()),
                    n.erc
                ],
            );
            let tx_rowid = tx.last_insert_rowid();
            match inserted {
                Ok(_) => {}
                                Err(rusqlite::Error::SqliteFailure(e, msg)) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
                    let msg = msg.unwrap_or_default();
                    return Err(if msg.contains("title_key") {
                        StoreError::DuplicateTitle(n.title.clone().unwrap_or_default())
                    } else if msg.contains("erc") {
                        StoreError::DuplicateErc(n.erc.clone().unwrap_or_default())
                    } else {
                        StoreError::Duplicate(n.name.clone())
                    });
                }
                Err(e) => return Err(internal(e)),
            }
            tx.commit().map_err(internal)?;
            Ok(Node {
                id: id.clone(),
                parent_id: Some(parent),
                name: n.name.clone(),
                node_type: n.node_type.clone(),
                is_folder: n.is_folder,
                created_at_ms: now,
                creator: n.creator.clone(),
                size,
                mime: n.mime.clone(),
                properties: n.properties.clone(),
                aspects: n.aspects.clone(),
                served_by: n.served_by.clone(),
                num: tx_rowid,
                title: n.title.clone(),
                erc: n.erc.clone(),
            })
        });
        if r.is_err() && n.content.is_some() {
            self.content.remove(&id);
        }
        r
    }

    /// Resolves `relative_path` below `parent` (404 when any element is missing).
    pub fn resolve_path(
        &self,
        parent: &str,
        relative_path: &str,
    ) -> Result<Option<Node>, StoreError> {
        let mut cur = parent.to_string();
        for seg in relative_path.split('/').filter(|s| !s.is_empty()) {
            let found: Option<String> = self.with(|c| {
                c.query_row(
                    "SELECT id FROM nodes WHERE parent_id = ?1 AND name_key = ?2",
                    params![cur, seg.to_lowercase()],
                    |r| r.get(0),
                )
                .optional()
                .map_err(internal)
            })?;
            match found {
                Some(id) => cur = id,
                None => return Ok(None),
            }
        }
        self.get(&cur)
    }

    /// One page of children ordered by name, and the total.
    pub fn children(
        &self,
        parent: &str,
        skip: u64,
        max: u64,
    ) -> Result<(Vec<Node>, u64), StoreError> {
        self.with(|c| {
            let total: i64 = c.query_row("SELECT COUNT(*) FROM nodes WHERE parent_id = ?1", [parent], |r| r.get(0)).map_err(internal)?;
            let mut st = c
                .prepare_cached(&format!("SELECT {COLS} FROM nodes WHERE parent_id = ?1 ORDER BY is_folder DESC, name_key LIMIT ?2 OFFSET ?3"))
                .map_err(internal)?;
            let rows = st.query_map(params![parent, max as i64, skip as i64], row_to_node).map_err(internal)?;
            let nodes = rows.collect::<rusqlite::Result<Vec<_>>>().map_err(internal)?;
            Ok((nodes, total as u64))
        })
    }

    /// One page, by name, of the nodes anywhere below `root` (not `root` itself) whose name
    /// matches `like` (a lower-case SQL LIKE pattern, `\\` escaping), documents (`Some(false)`),
    /// folders (`Some(true)`) or both; and the total. The name search of `queries/nodes`.
    pub fn search_names(
        &self,
        root: &str,
        like: &str,
        kind: Option<bool>,
        skip: u64,
        max: u64,
    ) -> Result<(Vec<Node>, u64), StoreError> {
        const SUB: &str = "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id)";
        const MATCH: &str = "id IN (SELECT id FROM sub) AND id != ?1 AND name_key LIKE ?2 ESCAPE '\\' AND (?3 < 0 OR is_folder = ?3)";
        let k: i64 = kind.map_or(-1, i64::from);
        self.with(|c| {
            let total: i64 = c
                .query_row(&format!("{SUB} SELECT COUNT(*) FROM nodes WHERE {MATCH}"), params![root, like, k], |r| r.get(0))
                .map_err(internal)?;
            let mut st = c
                .prepare_cached(&format!("{SUB} SELECT {COLS} FROM nodes WHERE {MATCH} ORDER BY name_key LIMIT ?4 OFFSET ?5"))
                .map_err(internal)?;
            let rows = st.query_map(params![root, like, k, max as i64, skip as i64], row_to_node).map_err(internal)?;
            Ok((rows.collect::<rusqlite::Result<Vec<_>>>().map_err(internal)?, total as u64))
        })
    }

    /// One page of the documents in folder `parent` (its whole subtree when `flatten`) that
    /// match `cond`, an SQL condition over the nodes' columns whose `?4`, `?5`, … are `args`
    /// (Liferay's `search` and `filter`), by name; with how many match in all.
    pub fn documents_where(
        &self,
        parent: &str,
        flatten: bool,
        cond: &str,
        args: &[String],
        skip: u64,
        max: u64,
    ) -> Result<(Vec<Node>, u64), StoreError> {
        let (with, within) = if flatten {
            (
                "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id) ",
                "id IN (SELECT id FROM sub) AND id != ?1",
            )
        } else {
            ("", "parent_id = ?1")
        };
        let m = format!("{within} AND is_folder = 0 AND ({cond})");
        let bind = |limit: i64, offset: i64| {
            let mut v: Vec<rusqlite::types::Value> =
                vec![parent.to_string().into(), limit.into(), offset.into()];
            v.extend(args.iter().map(|a| a.clone().into()));
            v
        };
        self.with(|c| {
            let total: i64 = c
                .query_row(
                    &format!("{with}SELECT COUNT(*) FROM nodes WHERE ?2 = ?2 AND ?3 = ?3 AND {m}"),
                    rusqlite::params_from_iter(bind(0, 0)),
                    |r| r.get(0),
                )
                .map_err(internal)?;
            let mut st = c
                .prepare(&format!(
                    "{with}SELECT {COLS} FROM nodes WHERE {m} ORDER BY name_key LIMIT ?2 OFFSET ?3"
                ))
                .map_err(internal)?;
            let rows = st
                .query_map(
                    rusqlite::params_from_iter(bind(max as i64, skip as i64)),
                    row_to_node,
                )
                .map_err(internal)?;
            Ok((
                rows.collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(internal)?,
                total as u64,
            ))
        })
    }

    /// Deletes a node and its subtree with their content; returns how many nodes went.
    pub fn delete_tree(&self, id: &str) -> Result<u64, StoreError> {
        let ids: (Vec<(String, i64)>, Vec<String>) = self.with(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(internal)?;
            let ids: Vec<(String, i64)> = {
                let mut st = tx
                    .prepare("WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id) SELECT nodes.id, nodes.is_folder FROM nodes JOIN sub ON nodes.id = sub.id")
                    .map_err(internal)?;
                let rows = st.query_map([id], |r| Ok((r.get(0)?, r.get(1)?))).map_err(internal)?;
                rows.collect::<rusqlite::Result<Vec<_>>>().map_err(internal)?
            };
            let mut kept = Vec::new();
            for (nid, folder) in &ids {
                tx.execute("DELETE FROM nodes WHERE id = ?1", [nid]).map_err(internal)?;
                if *folder == 0 {
                    kept.extend(Store::drop_versions(&tx, nid.as_str())?);
                }
            }
            tx.commit().map_err(internal)?;
            Ok((ids, kept))
        })?;
        let (ids, kept) = ids;
        for key in &kept {
            self.content.remove(key);
        }
        for (nid, folder) in &ids {
            if *folder == 0 {
                self.content.remove(nid);
            }
        }
        Ok(ids.len() as u64)
    }

    /// Number of documents (not folders) anywhere below `id`.
    pub fn count_documents_under(&self, id: &str) -> Result<u64, StoreError> {
        self.with(|c| {
            c.query_row(
                "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id) SELECT COUNT(*) FROM nodes JOIN sub ON nodes.id = sub.id WHERE nodes.is_folder = 0",
                [id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(internal)
        })
    }

    /// Number of documents in the whole store.
    pub fn count_documents(&self) -> Result<u64, StoreError> {
        self.with(|c| {
            c.query_row("SELECT COUNT(*) FROM nodes WHERE is_folder = 0", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(internal)
        })
    }

    pub fn put_ticket(&self, ticket: &str, user: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT OR REPLACE INTO tickets (ticket, user_id, created_at) VALUES (?1, ?2, ?3)",
                params![ticket, user, crate::timefmt::now_ms()],
            )
            .map(|_| ())
            .map_err(internal)
        })
    }

    pub fn ticket_user(&self, ticket: &str) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT user_id FROM tickets WHERE ticket = ?1",
                [ticket],
                |r| r.get(0),
            )
            .optional()
            .map_err(internal)
        })
    }

    pub fn delete_all_tickets(&self) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute("DELETE FROM tickets", [])
                .map(|_| ())
                .map_err(internal)
        })
    }

    pub fn delete_ticket(&self, ticket: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute("DELETE FROM tickets WHERE ticket = ?1", [ticket])
                .map(|_| ())
                .map_err(internal)
        })
    }
}

/// The folder a new node goes into: its parent, which must exist and be a folder, and
/// below it the `relative_path` folders, created where missing (as Alfresco does).
fn folder_for(tx: &rusqlite::Transaction<'_>, n: &NewNode, now: i64) -> Result<String, StoreError> {
    let mut parent = n.parent_id.clone();
    let is_folder = |tx: &rusqlite::Transaction<'_>, id: &str| {
        tx.query_row("SELECT is_folder FROM nodes WHERE id = ?1", [id], |r| {
            r.get::<_, i64>(0)
        })
        .optional()
        .map_err(internal)
    };
    match is_folder(tx, &parent)? {
        None => return Err(StoreError::ParentNotFound),
        Some(0) => return Err(StoreError::NotAFolder(parent)),
        Some(_) => {}
    }
    for seg in n
        .relative_path
        .iter()
        .flat_map(|p| p.split('/'))
        .filter(|s| !s.is_empty())
    {
        let key = seg.to_lowercase();
        let found: Option<(String, i64)> = tx
            .query_row(
                "SELECT id, is_folder FROM nodes WHERE parent_id = ?1 AND name_key = ?2",
                params![parent, key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(internal)?;
        parent = match found {
            Some((_, 0)) => return Err(StoreError::NotAFolder(seg.to_string())),
            Some((fid, _)) => fid,
            None => {
                let fid = uuid::Uuid::new_v4().to_string();
                tx.execute(
                    "INSERT INTO nodes (id, parent_id, name, name_key, node_type, is_folder, created_at, creator, served_by) VALUES (?1, ?2, ?3, ?4, 'cm:folder', 1, ?5, ?6, ?7)",
                    params![fid, parent, seg, key, now, n.creator, n.served_by],
                )
                .map_err(internal)?;
                fid
            }
        };
    }
    Ok(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(parent: &str, path: &str, name: &str) -> NewNode {
        NewNode {
            parent_id: parent.into(),
            relative_path: Some(path.into()),
            name: name.into(),
            node_type: "cm:content".into(),
            is_folder: false,
            creator: "admin".into(),
            mime: Some("text/plain".into()),
            properties: "{}".into(),
            aspects: "[]".into(),
            served_by: "n1".into(),
            content: Some(Bytes::from_static(b"hello")),
            title: None,
            erc: None,
        }
    }

    #[test]
    fn two_handles_share_one_store_and_names_are_unique() {
        let dir = tempfile::tempdir().unwrap();
        let a = Store::open(dir.path()).unwrap();
        let b = Store::open(dir.path()).unwrap();
        let n = a.create(doc(SHARED, "x/y", "A.txt")).unwrap();
        assert_eq!(a.read_content(&n.id).unwrap(), b"hello");
        assert_eq!(
            b.create(doc(SHARED, "x/y", "a.TXT")).unwrap_err(),
            StoreError::Duplicate("a.TXT".into())
        );
        b.create(doc(SHARED, "x/y", "b.txt")).unwrap();
        let folder = b.resolve_path(SHARED, "x/y").unwrap().unwrap();
        assert_eq!(a.children(&folder.id, 0, 10).unwrap().1, 2);
        assert_eq!(a.count_documents_under(SHARED).unwrap(), 2);
        assert_eq!(
            a.create(doc("nope", "", "c.txt")).unwrap_err(),
            StoreError::ParentNotFound
        );
        assert!(matches!(
            a.create(doc(SHARED, "x/y/A.txt", "c.txt")).unwrap_err(),
            StoreError::NotAFolder(_)
        ));
        let x = a.resolve_path(SHARED, "x").unwrap().unwrap();
        assert_eq!(b.delete_tree(&x.id).unwrap(), 4);
        assert!(a.read_content(&n.id).is_err());
        assert_eq!(a.count_documents().unwrap(), 0);
        assert_eq!(a.user_home("admin").unwrap(), b.user_home("admin").unwrap());
    }
}
