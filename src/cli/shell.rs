//! `hostbench completions SHELL` and `hostbench man [SUBCOMMAND]`: generated from the clap definitions, so
//! they list exactly the options the parser accepts.

use anyhow::Result;
use clap::Args;
use clap_complete::Shell;

use super::output::Output;
use crate::error::UsageError;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// The completion script for the shell, on standard output (`hostbench completions bash >
/// /etc/bash_completion.d/hostbench`).
pub fn completions(args: &CompletionsArgs, mut cmd: clap::Command) -> Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "hostbench", &mut script);
    write(&script)
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A subcommand's page (hostbench-SUBCOMMAND(1)) instead of hostbench(1)
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
}

/// A manual page (roff) on standard output: hostbench(1), which lists the subcommands, or one
/// subcommand's with its options (`hostbench man run > hostbench-run.1`).
pub fn man(args: &ManArgs, mut cmd: clap::Command) -> Result<i32> {
    // Built, each subcommand has its propagated options (`results`' store options on each of
    // its commands), as its --help does.
    cmd.build();
    let page = match &args.subcommand {
        None => cmd,
        Some(name) => {
            let sub = cmd
                .get_subcommands()
                .find(|s| s.get_name() == name && !s.is_hide_set())
                .ok_or_else(|| {
                    UsageError::new(format!("no subcommand {name:?}: see hostbench --help"))
                })?;
            let full = format!("hostbench-{name}");
            sub.clone().name(full.clone()).bin_name(full)
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    write(&roff)
}

fn write(bytes: &[u8]) -> Result<i32> {
    let out = Output::new(false, false);
    out.out(&String::from_utf8_lossy(bytes));
    match out.stdout_error() {
        Some(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        None => Ok(0),
    }
}
