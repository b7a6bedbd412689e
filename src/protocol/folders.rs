//! The folder chain of a run, for the APIs that make folders one at a time (Liferay, CMIS):
//! each level of a path below the parent created once (or found, when an earlier run made
//! it), and its id kept by path. Filled before the start barrier only, so the lock is never
//! taken during a measurement.

use std::collections::HashMap;
use std::sync::Mutex;

use anyhow::Context;

use super::Api;

/// Folder path (below the parent, `/`-separated) → the API's id for it.
#[derive(Default)]
pub struct Folders {
    by_path: Mutex<HashMap<String, String>>,
}

impl Folders {
    fn get(&self, path: &str) -> Option<String> {
        self.by_path.lock().expect("folders").get(path).cloned()
    }
    fn insert(&self, path: &str, id: &str) {
        self.by_path
            .lock()
            .expect("folders")
            .insert(path.to_string(), id.to_string());
    }
    /// The path of the folder with id `id`, when this client made or found it.
    pub fn path_of(&self, id: &str) -> Option<String> {
        self.by_path
            .lock()
            .expect("folders")
            .iter()
            .find(|(_, v)| v.as_str() == id)
            .map(|(p, _)| p.clone())
    }
}

/// Makes sure the folder at `path` exists, each level once, and returns its id; for an API
/// without a folder cache the path itself is the reference.
pub async fn prepare<A: Api>(api: &A, path: &str) -> anyhow::Result<String> {
    let Some(folders) = api.folders() else {
        return Ok(path.to_string());
    };
    let mut parent = api.root_folder();
    let mut sofar = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        if !sofar.is_empty() {
            sofar.push('/');
        }
        sofar.push_str(seg);
        let id = match folders.get(&sofar) {
            Some(id) => id,
            None => {
                let id = api.create_folder(parent.as_deref(), &sofar, seg).await?;
                folders.insert(&sofar, &id);
                id
            }
        };
        parent = Some(id);
    }
    parent.context("empty folder path")
}

#[cfg(test)]
mod tests {
    use super::Folders;

    #[test]
    fn a_folder_is_found_by_path_and_by_id() {
        let f = Folders::default();
        f.insert("a", "1");
        f.insert("a/b", "2");
        assert_eq!(f.get("a/b").as_deref(), Some("2"));
        assert_eq!(f.path_of("1").as_deref(), Some("a"));
        assert_eq!(f.path_of("3"), None);
    }
}
