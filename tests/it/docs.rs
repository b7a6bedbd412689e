//! The guide's commands are real. Every shell block in README.md and docs/*.md whose fence is
//! preceded by the line `<!-- test: run -->` is run against the binary cargo built, so a
//! renamed flag fails here rather than in a reader's terminal. Also checked: every docs page
//! is linked from README, and every relative link in README and docs points to a file.
//!
//! How a block runs: as a script of `bash -euo pipefail`, in a fresh temp dir as its working
//! directory (results go to ./results there), stdin from /dev/null, with `ingestbench` on
//! PATH (a symlink to the built binary, in a directory put first on PATH), and without `CI`
//! or any `INGESTBENCH_*` variable from the caller's environment, so it runs the same on a
//! laptop and in CI. The binary has no environment variable for `--access-methods-dir`,
//! whose default `access-methods` is relative to the working directory; so the temp dir
//! holds symlinks `access-methods` and `fixtures` to the repository's copies: the layout a
//! user running from a clone has. Each block runs in a process group of its own, killed when
//! the block ends (a block's background `ingestbench target` never outlives it), with a
//! timeout of [`BLOCK_TIMEOUT`]. The blocks load both cores with several processes, so the
//! test holds [`crate::common::TIMED`].

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The line that marks the next fenced shell block as one the test runs.
const MARKER: &str = "<!-- test: run -->";
/// Longest a single block may take; each is meant to take a few seconds.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// docs/*.md, sorted.
fn docs_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

/// README.md, then docs/*.md.
fn pages() -> Vec<PathBuf> {
    let mut all = vec![root().join("README.md")];
    all.extend(docs_pages());
    all
}

fn read(page: &Path) -> String {
    std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()))
}

/// A page's path relative to the repository, for messages.
fn rel(page: &Path) -> String {
    page.strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string()
}

/// A marked shell block: where it is and what it says.
struct Block {
    page: String,
    /// 1-based line of the block's first command.
    line: usize,
    script: String,
}

/// The marked blocks of one page. A marker not followed by a ```sh (or ```bash) fence, or a
/// block never closed, is an error naming the line.
fn marked_blocks(page: &Path) -> Vec<Block> {
    let text = read(page);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != MARKER {
            i += 1;
            continue;
        }
        let fence = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
        assert!(
            fence == "```sh" || fence == "```bash",
            "{}:{}: {MARKER} must be followed by a ```sh fence, found {fence:?}",
            rel(page),
            i + 1
        );
        let mut j = i + 2;
        let mut script = String::new();
        while j < lines.len() && lines[j].trim() != "```" {
            script.push_str(lines[j]);
            script.push('\n');
            j += 1;
        }
        assert!(
            j < lines.len(),
            "{}:{}: the marked block is never closed",
            rel(page),
            i + 2
        );
        out.push(Block {
            page: rel(page),
            line: i + 3,
            script,
        });
        i = j + 1;
    }
    out
}

/// Whether `pid` has exited, without reaping it: its pid (the group's id) stays taken until
/// the group has been killed.
fn exited(pid: u32) -> bool {
    // SAFETY: waitid fills `info`, a plain C struct, and WNOWAIT leaves the child waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        r == 0 && info.si_pid() != 0
    }
}

/// The threads' stacks of every `ingestbench` process in the process group `pgid`, as gdb
/// prints them (the frames of this crate only, a thread's first few), or a line saying why
/// there are none.
fn stacks_of_group(pgid: u32) -> String {
    let pids: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // pid (comm) state ppid pgrp ...
            let (comm, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
            let pgrp: u32 = rest.split_whitespace().nth(2)?.parse().ok()?;
            (pgrp == pgid && comm == "ingestbench").then(|| e.file_name().to_string_lossy().into())
        })
        .collect();
    if pids.is_empty() {
        return "--- stacks: no ingestbench process was left running\n".into();
    }
    let mut out = String::new();
    for pid in pids {
        let dump = Command::new("timeout")
            .args([
                "60",
                "gdb",
                "-p",
                &pid,
                "-batch",
                "-ex",
                "thread apply all bt",
            ])
            .stdin(Stdio::null())
            .output();
        let text = match dump {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            Ok(o) => format!("gdb: {}", o.status),
            Err(e) => format!("gdb: {e}"),
        };
        out.push_str(&format!(
            "--- stacks of ingestbench pid {pid}\n{}",
            crate_frames(&text)
        ));
    }
    out
}

/// From gdb's `thread apply all bt`: each thread's heading and its first frames in this
/// crate's code.
fn crate_frames(gdb: &str) -> String {
    let mut out = String::new();
    let mut kept = 0;
    for line in gdb.lines() {
        if line.starts_with("Thread ") {
            out.push_str(line);
            out.push('\n');
            kept = 0;
        } else if line.starts_with('#') && line.contains("ingestbench::") && kept < 6 {
            out.push_str("  ");
            out.push_str(&line.chars().take(200).collect::<String>());
            out.push('\n');
            kept += 1;
        }
    }
    if out.is_empty() {
        out = tail_text(gdb, 2000);
    }
    out
}

/// The last `max` bytes of `text` (fewer, to start on a character).
fn tail_text(text: &str, max: usize) -> String {
    let mut cut = text.len().saturating_sub(max);
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_string()
}

/// The last `max` bytes of a file, for failure messages.
fn tail(path: &Path, max: usize) -> String {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    if text.len() <= max {
        return text;
    }
    format!("[...]{}", tail_text(&text, max))
}

/// Runs one block as described in the module header; Err names the page, line, command,
/// the outcome and the block's stdout and stderr.
fn run_block(block: &Block, bin_dir: &Path) -> Result<Duration, String> {
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).expect("work dir");
    for d in ["access-methods", "fixtures"] {
        std::os::unix::fs::symlink(root().join(d), work.join(d)).expect("symlink");
    }
    let script = tmp.path().join("block.sh");
    std::fs::write(&script, &block.script).expect("write block.sh");
    let (out_path, err_path) = (tmp.path().join("stdout"), tmp.path().join("stderr"));
    let path = match std::env::var_os("PATH") {
        Some(p) => {
            let mut dirs = vec![bin_dir.to_path_buf()];
            dirs.extend(std::env::split_paths(&p));
            std::env::join_paths(dirs).expect("PATH")
        }
        None => bin_dir.as_os_str().to_owned(),
    };
    let mut cmd = Command::new("bash");
    cmd.args(["-euo", "pipefail"])
        .arg(&script)
        .current_dir(&work)
        .env("PATH", path)
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"))
        .process_group(0);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("INGESTBENCH_") {
            cmd.env_remove(k);
        }
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("bash: {e}"))?;
    let timed_out = loop {
        if exited(child.id()) {
            break false;
        }
        if start.elapsed() > BLOCK_TIMEOUT {
            break true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // A block that hangs says where: the stacks of its ingestbench processes, before the kill.
    let stacks = if timed_out {
        stacks_of_group(child.id())
    } else {
        String::new()
    };
    // The whole group: whatever the block left running in the background ends with it.
    // SAFETY: kill(2) on the group this test created; the child is not reaped yet, so its
    // pid cannot have been reused.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    let status = child.wait().expect("wait for bash");
    let took = start.elapsed();
    if !timed_out && status.success() {
        return Ok(took);
    }
    let outcome = if timed_out {
        format!("timed out after {} s", BLOCK_TIMEOUT.as_secs())
    } else {
        format!("{status}")
    };
    // The outcome is said first and last: a CI log that shows only the ends still has it.
    let head = format!(
        "{}:{}: {outcome} after {:.1} s",
        block.page,
        block.line,
        took.as_secs_f64()
    );
    Err(format!(
        "{head}\n--- command\n{}--- stdout\n{}\n--- stderr\n{}\n{stacks}--- {head}\n",
        block.script,
        tail(&out_path, 4000),
        tail(&err_path, 8000),
    ))
}

#[test]
fn the_marked_shell_blocks_of_readme_and_docs_run() {
    let _one = crate::common::TIMED.blocking_lock();
    let blocks: Vec<Block> = pages().iter().flat_map(|p| marked_blocks(p)).collect();
    assert!(
        blocks.len() >= 5,
        "only {} marked blocks: the guide's pages lost their `{MARKER}` blocks",
        blocks.len()
    );
    let bin_dir = tempfile::tempdir().expect("temp dir");
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_ingestbench"),
        bin_dir.path().join("ingestbench"),
    )
    .expect("symlink the binary");
    let mut failures = Vec::new();
    let all = Instant::now();
    for b in &blocks {
        match run_block(b, bin_dir.path()) {
            Ok(took) => eprintln!("ok {:>5.1} s  {}:{}", took.as_secs_f64(), b.page, b.line),
            Err(e) => {
                eprintln!("FAILED  {}:{}", b.page, b.line);
                failures.push(e);
            }
        }
    }
    eprintln!(
        "{} blocks in {:.1} s",
        blocks.len(),
        all.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} marked blocks failed:\n\n{}",
        failures.len(),
        blocks.len(),
        failures.join("\n")
    );
}

/// The targets of a page's Markdown links `[text](target)`, with their 1-based line,
/// outside fenced blocks and inline code.
fn links(page: &Path) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in read(page).lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop inline code spans: what is between backticks is not a link.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(k, _)| k % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find([')', ' ']).unwrap_or(rest.len());
            out.push((n + 1, rest[..end].to_string()));
            rest = &rest[end..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings, outside fenced blocks.
fn anchors(page: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in read(page).lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_docs_page_is_linked_from_readme_and_every_relative_link_resolves() {
    let readme = root().join("README.md");
    let from_readme: Vec<String> = links(&readme).into_iter().map(|(_, t)| t).collect();
    let mut problems = Vec::new();
    for page in docs_pages() {
        let want = rel(&page);
        if !from_readme
            .iter()
            .any(|t| t.split('#').next() == Some(want.as_str()))
        {
            problems.push(format!("README.md does not link {want}"));
        }
    }
    for page in pages() {
        for (line, target) in links(&page) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target.as_str(), ""));
            let dir = page.parent().expect("a page has a directory");
            let linked = if file.is_empty() {
                page.clone()
            } else {
                dir.join(file)
            };
            if !linked.exists() {
                problems.push(format!(
                    "{}:{line}: the link {target} points to nothing",
                    rel(&page)
                ));
            } else if !fragment.is_empty()
                && linked.extension().is_some_and(|e| e == "md")
                && !anchors(&linked).iter().any(|a| a == fragment)
            {
                problems.push(format!(
                    "{}:{line}: the link {target} names no heading of {}",
                    rel(&page),
                    rel(&linked)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
