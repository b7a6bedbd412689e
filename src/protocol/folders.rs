//! The folder chain of a run, for the APIs that make folders one at a time (Liferay, CMIS):
//! each level of a path below the parent created once (or found, when an earlier run made
//! it), and its id kept by path. A corpus import makes its tree on first use, while it is
//! measured: a level is made by whoever asks first while the others that need it wait for
//! that one request, and the lock over the map is held only to look a level up, never
//! across a request, so workers making different folders do not wait for each other.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use tokio::sync::OnceCell;

use super::Api;

/// Folder path (below the parent, `/`-separated) → the API's id for it, once made.
#[derive(Default)]
pub struct Folders {
    by_path: Mutex<HashMap<String, Arc<OnceCell<String>>>>,
}

impl Folders {
    fn cell(&self, path: &str) -> Arc<OnceCell<String>> {
        let mut map = self.by_path.lock().expect("folders");
        match map.get(path) {
            Some(c) => c.clone(),
            None => map.entry(path.to_string()).or_default().clone(),
        }
    }

    /// The id of the folder at `path`, made by `make` the first time it is asked for; asked
    /// again while it is being made, the caller waits for that request rather than sending
    /// its own. A failed `make` leaves it unmade for the next caller.
    pub async fn get_or_make<F, Fut>(&self, path: &str, make: F) -> anyhow::Result<String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = anyhow::Result<String>>,
    {
        self.cell(path).get_or_try_init(make).await.cloned()
    }

    /// The path of the folder with id `id`, when this client made or found it.
    pub fn path_of(&self, id: &str) -> Option<String> {
        self.by_path
            .lock()
            .expect("folders")
            .iter()
            .find(|(_, v)| v.get().is_some_and(|v| v == id))
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
        let id = folders
            .get_or_make(&sofar, || api.create_folder(parent.as_deref(), &sofar, seg))
            .await?;
        parent = Some(id);
    }
    parent.context("empty folder path")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::Folders;

    #[tokio::test]
    async fn a_folder_is_found_by_path_and_by_id() {
        let f = Folders::default();
        f.get_or_make("a", || async { Ok("1".to_string()) })
            .await
            .unwrap();
        f.get_or_make("a/b", || async { Ok("2".to_string()) })
            .await
            .unwrap();
        let again = f
            .get_or_make("a/b", || async { panic!("made twice") })
            .await;
        assert_eq!(again.unwrap(), "2");
        assert_eq!(f.path_of("1").as_deref(), Some("a"));
        assert_eq!(f.path_of("3"), None);
    }

    /// Four workers making four different folders are all in their request at once (each
    /// waits at a barrier of four inside it: made one at a time, they would never pass it),
    /// and four asking for one new folder send one request.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn folders_are_made_side_by_side_and_each_once() {
        let f = Arc::new(Folders::default());
        let gate = Arc::new(tokio::sync::Barrier::new(4));
        let made = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 0..4 {
            let (f, gate) = (f.clone(), gate.clone());
            tasks.push(tokio::spawn(async move {
                f.get_or_make(&format!("d{i}"), || async move {
                    gate.wait().await;
                    Ok(format!("id{i}"))
                })
                .await
            }));
        }
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .expect("folders were made one at a time")
                .unwrap()
                .unwrap();
        }
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let (f, made) = (f.clone(), made.clone());
            tasks.push(tokio::spawn(async move {
                f.get_or_make("shared", || async move {
                    made.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok("s".to_string())
                })
                .await
            }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap().unwrap(), "s");
        }
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }
}
