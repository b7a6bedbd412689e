//! `ingestbench completions SHELL` and `ingestbench man`: the shell completion scripts and
//! the man page, generated from the clap definitions (so they never drift from `--help`) and
//! printed on stdout.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;
use crate::cmd::Outcome;

/// The completion script for `shell` (bash, zsh, fish, elvish, powershell).
pub fn completions(shell: clap_complete::Shell) -> Result<Outcome> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ingestbench", &mut out);
    std::io::stdout()
        .write_all(&out)
        .context("writing the completion script to stdout")?;
    Ok(Outcome::Success)
}

/// The man page: the top level, then a section per subcommand with its options.
pub fn man() -> Result<Outcome> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    let top = clap_mangen::Man::new(cmd.clone());
    top.render_title(&mut out)?;
    top.render_name_section(&mut out)?;
    top.render_synopsis_section(&mut out)?;
    top.render_description_section(&mut out)?;
    top.render_subcommands_section(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        writeln!(out, ".SH \"INGESTBENCH {}\"", sub.get_name().to_uppercase())?;
        let name = format!("ingestbench {}", sub.get_name());
        let sub = sub.clone().bin_name(name);
        let m = clap_mangen::Man::new(sub);
        m.render_synopsis_section(&mut out)?;
        m.render_description_section(&mut out)?;
        m.render_options_section(&mut out)?;
        m.render_extra_section(&mut out)?;
    }
    top.render_extra_section(&mut out)?;
    top.render_version_section(&mut out)?;
    top.render_authors_section(&mut out)?;
    std::io::stdout()
        .write_all(&out)
        .context("writing the man page to stdout")?;
    Ok(Outcome::Success)
}
