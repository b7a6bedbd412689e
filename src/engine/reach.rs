//! Whether the access methods a sweep asks for answer: asked once, before the first run and
//! before the plan is printed or recorded, so the plan itself is built without network I/O
//! (`plan::sweep::SweepDraft`). A named method that does not answer is a setup error (exit
//! 2); of the default set (every method of the directory), those that do not answer are
//! skipped and named, and none answering is a setup error.

use std::time::Duration;

use anyhow::{Result, bail};

use crate::plan::sweep::{SweepDraft, SweepPlan};
use crate::transport::access;

/// How long a method has to accept a TCP connection.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// The plan of the methods of `draft` that answer (see the module header).
pub async fn settle_methods(draft: SweepDraft) -> Result<SweepPlan> {
    let mut methods = Vec::new();
    let mut unreachable = Vec::new();
    for m in &draft.methods {
        match (
            access::reachable(m, ANSWER_WITHIN).await,
            &draft.listed_from,
        ) {
            (Ok(()), _) => methods.push(m.clone()),
            (Err(why), Some(_)) => unreachable.push((m.name.clone(), why)),
            (Err(why), None) => bail!(
                "--access-methods: `{}` does not answer ({why}); check its url in {}",
                m.name,
                m.source.display()
            ),
        }
    }
    if let Some(dir) = &draft.listed_from
        && methods.is_empty()
    {
        bail!(
            "--access-methods: none of the methods in {} answers; start the lab (scripts/lab.sh up) or name methods, e.g. --access-methods embedded-http",
            dir.display()
        );
    }
    draft.settle(methods, unreachable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Sweep {
        #[command(flatten)]
        a: crate::plan::options::SweepArgs,
    }

    fn draft(dir: &std::path::Path, extra: &[&str]) -> Result<SweepDraft> {
        let d = dir.display().to_string();
        let mut args = vec!["sweep", "--access-methods-dir", &d, "--docs", "1"];
        args.extend(extra);
        SweepPlan::draft(&Sweep::parse_from(args).a)
    }

    #[tokio::test]
    async fn a_named_method_must_answer_and_of_the_default_set_the_silent_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, url: &str| {
            let body = format!("name = \"{name}\"\nurl = \"{url}\"\n");
            std::fs::write(dir.path().join(format!("{name}.toml")), body).unwrap();
        };
        write("dead", "http://127.0.0.1:1");
        // Building the plan asks no method anything.
        let named = draft(dir.path(), &["--access-methods", "dead"]).unwrap();
        let e = format!("{:#}", settle_methods(named).await.unwrap_err());
        assert!(
            e.contains("`dead` does not answer") && e.contains("dead.toml"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            settle_methods(draft(dir.path(), &[]).unwrap())
                .await
                .unwrap_err()
        );
        assert!(
            e.contains("none of the methods in") && e.contains("answers"),
            "{e}"
        );
        write("embedded-http", "embedded:http");
        let spec = settle_methods(draft(dir.path(), &[]).unwrap())
            .await
            .unwrap();
        let names: Vec<&str> = spec.methods.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["embedded-http"]);
        assert_eq!(spec.baseline, "embedded-http");
        assert_eq!(spec.unreachable.len(), 1);
        assert_eq!(spec.unreachable[0].0, "dead");
        // The baseline is checked against the methods that answer.
        let d = draft(dir.path(), &["--baseline", "dead"]).unwrap();
        let e = format!("{:#}", settle_methods(d).await.unwrap_err());
        assert!(
            e.contains("--baseline dead: not one of the swept methods (embedded-http)"),
            "{e}"
        );
    }
}
