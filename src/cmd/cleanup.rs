//! `ingestbench cleanup DIR`: delete the folder a run or sweep created, and only that one.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Result, bail};

use super::verify::connect;
use crate::cli::CleanupArgs;
use crate::cmd::Outcome;
use crate::results::manifest::Manifest;
use crate::timefmt;

/// Only a folder `ingestbench/<id>` whose id has the shape ingestbench gives (a UTC stamp and
/// four hex digits) is ever deleted.
fn own_folder(path: &str) -> bool {
    let Some(id) = path.strip_prefix("ingestbench/") else {
        return false;
    };
    let (stamp, tag) = id.split_once('-').unwrap_or(("", ""));
    stamp.len() == 16
        && stamp.ends_with('Z')
        && stamp.as_bytes()[8] == b'T'
        && timefmt::parse_iso(&format!(
            "{}-{}-{}",
            &stamp[..4],
            &stamp[4..6],
            &stamp[6..8]
        ))
        .is_some()
        && tag.len() == 4
        && tag.bytes().all(|b| b.is_ascii_hexdigit())
}

pub async fn cleanup_command(a: &CleanupArgs) -> Result<Outcome> {
    let (repo, rec, _) = connect(&a.results, 4).await?;
    let dir = &a.results.dir;
    if !own_folder(&rec.folder) {
        bail!(
            "{}: refusing to delete `{}`: not a folder ingestbench created",
            dir.display(),
            rec.folder
        );
    }
    let docs = Manifest::read(&dir.join("manifest.jsonl"))
        .map(|m| m.iter().filter(|e| e.ok).count())
        .unwrap_or(0);
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            bail!(
                "cleanup would delete {} ({docs} documents); pass --yes to confirm when not on a terminal",
                rec.folder
            );
        }
        eprint!("Delete {} and its {docs} documents? [y/N] ", rec.folder);
        std::io::stderr().flush()?;
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            eprintln!("cleanup: nothing deleted");
            return Ok(Outcome::Success);
        }
    }
    match repo.delete_folder(&rec.folder).await {
        Ok(true) => {
            println!("cleanup: deleted {} ({docs} documents)", rec.folder);
            Ok(Outcome::Success)
        }
        Ok(false) => {
            println!("cleanup: {} does not exist (already deleted?)", rec.folder);
            Ok(Outcome::Success)
        }
        Err(m) => bail!("cleanup of {} failed: {m}", rec.folder),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_own_folders() {
        assert!(own_folder("ingestbench/20261122T002455Z-f520"));
        for bad in [
            "ingestbench",
            "ingestbench/",
            "Sites/x",
            "ingestbench/../etc",
            "ingestbench/20261122T002455Z-f520/..",
            "ingestbench/x-1234",
        ] {
            assert!(!own_folder(bad), "{bad}");
        }
    }
}
