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
    // clap's own `help` subcommand has no page of its own: not listed as one.
    let page = if page.find_subcommand("help").is_some() {
        page.mut_subcommand("help", |h| h.hide(true))
    } else {
        page
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page.clone()).render(&mut roff)?;
    let name = args.subcommand.as_deref().unwrap_or("hostbench");
    roff.extend(extra_sections(name, &page).into_bytes());
    write(&roff)
}

/// Each page's examples: a command line as it is typed, and what it does.
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "hostbench",
        &[
            ("hostbench run", "The standard run: every suite, one result in the default store."),
            ("hostbench run --profile quick --tag kernel=6.18-rc3", "A shorter run, tagged."),
            ("hostbench compare tag:kernel=6.17 tag:kernel=6.18-rc3", "Which figures changed between two kernels, and whether the change is real."),
            ("hostbench results hosts --db postgresql://dashboards@dbhost/hostbench", "A fleet's hosts: the failed, hung and silent ones first."),
        ],
    ),
    (
        "run",
        &[
            ("hostbench run --dry-run", "The plan: the parts, what each runs, about how long."),
            ("hostbench run --profile quick --db postgresql://rack12_node3@dbhost/hostbench --host-label rack12-node3 --textfile-dir /var/lib/prometheus/node-exporter", "A fleet host's nightly run: stored on the server (or kept locally when it is down), its state and figures for node_exporter."),
        ],
    ),
    (
        "noise",
        &[
            ("hostbench noise", "p1bench's job: 100 runs of a 100 ms CPU loop, and how much they spread."),
            ("hostbench noise -m 64 50 40", "The memory job instead: a 64 MB working set, 40 runs of 50 ms."),
        ],
    ),
    (
        "interactive",
        &[
            ("hostbench interactive", "interbench's default: every simulated task under every default load, 30 s a pair."),
            ("hostbench interactive -t 5 -W Audio -w Burn", "Audio under a CPU burn only, 5 s."),
        ],
    ),
    (
        "sched",
        &[("hostbench sched", "reflex's sweep of runnable threads, each point's cost per round.")],
    ),
    (
        "wakeup",
        &[
            ("hostbench wakeup -r 10", "schbench for 10 s: wake-up and request latency percentiles."),
            ("hostbench wakeup -m 2 -t 4 -R 2000 -r 10", "Two message threads of four workers at 2,000 requests a second."),
        ],
    ),
    (
        "index",
        &[
            ("hostbench index --quick", "A first look at the BYTE index in a few minutes."),
            ("hostbench index -c 1 -c 4 dhry2reg pipe context1", "Three tests, with one copy and with four."),
        ],
    ),
    (
        "compare",
        &[
            ("hostbench compare 12 13", "Two stored results side by side."),
            ("hostbench compare g12 g20", "Two --repeat groups, judged on their runs."),
        ],
    ),
    (
        "report",
        &[
            ("hostbench report 12 13", "One HTML page of both results and their comparison."),
            ("hostbench report --fleet --tag fleet=rack12", "Every host of a rack on one page, the sick ones marked."),
        ],
    ),
    (
        "history",
        &[("hostbench history --host rack12-node3", "Where each figure of one host changed, newest first.")],
    ),
    (
        "results",
        &[
            ("hostbench results list --since 2026-11-01", "The results stored since a day."),
            ("hostbench results push --to postgresql://rack12_node3@dbhost/hostbench", "Copy the local results to a fleet's server, each once."),
            ("hostbench results export --fleet --format openmetrics", "Each host's latest figures and last run, for Prometheus."),
            ("hostbench results delete 12", "Remove a result (on a server, only one's own)."),
        ],
    ),
];

/// Files a page names: the measuring commands' and the stores'.
const FILES: &[(&str, &str)] = &[
    (
        "~/.local/share/hostbench/results.sqlite",
        "The default result store (the XDG data directory); also the default --fallback-db.",
    ),
    (
        "~/.cache/hostbench",
        "The CPU calibration and the index suite's compiled C tests (--cache-dir).",
    ),
    (
        "~/.pgpass",
        "A PostgreSQL store's password (PGPASSFILE names another file).",
    ),
    (
        "/etc/hostbench/hostbench.env",
        "What the package's hostbench.service runs, and where it stores.",
    ),
    (
        "/usr/lib/systemd/system/hostbench.service, hostbench.timer",
        "The package's scheduled run, not enabled until enabled.",
    ),
    (
        "/usr/share/doc/hostbench",
        "The README, the docs, roles.sql for a fleet's server.",
    ),
];

/// roff text: a backslash, a hyphen and a leading dot or quote as roff reads them literally.
fn roff_text(s: &str) -> String {
    let body = s.replace('\\', "\\e").replace('-', "\\-");
    if body.starts_with('.') || body.starts_with('\'') {
        format!("\\&{body}")
    } else {
        body
    }
}

/// The sections clap_mangen does not write: ENVIRONMENT (every variable an option of the page
/// reads), FILES, EXAMPLES (where the page has some) and SEE ALSO.
fn extra_sections(name: &str, page: &clap::Command) -> String {
    let mut out = String::new();
    // hostbench(1) names every command's variables; a command's page its own.
    let args: Vec<&clap::Arg> = if name == "hostbench" {
        page.get_subcommands()
            .flat_map(clap::Command::get_arguments)
            .collect()
    } else {
        page.get_arguments().collect()
    };
    let mut env: Vec<(String, String)> = args
        .into_iter()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| {
            let var = a.get_env()?.to_string_lossy().into_owned();
            Some((var, format!("--{}", a.get_long()?)))
        })
        .collect();
    env.sort();
    env.dedup();
    if !env.is_empty() {
        out.push_str(".SH ENVIRONMENT\n");
        for (var, option) in &env {
            out.push_str(&format!(
                ".TP\n\\fB{}\\fR\nThe default of \\fB{}\\fR.\n",
                roff_text(var),
                roff_text(option)
            ));
        }
    }
    out.push_str(".SH FILES\n");
    for (file, what) in FILES {
        out.push_str(&format!(
            ".TP\n\\fI{}\\fR\n{}\n",
            roff_text(file),
            roff_text(what)
        ));
    }
    if let Some((_, examples)) = EXAMPLES.iter().find(|(n, _)| *n == name) {
        out.push_str(".SH EXAMPLES\n");
        for (line, what) in *examples {
            out.push_str(&format!(
                ".TP\n\\fB{}\\fR\n{}\n",
                roff_text(line),
                roff_text(what)
            ));
        }
    }
    out.push_str(".SH SEE ALSO\n");
    out.push_str(&roff_text(if name == "hostbench" {
        "hostbench-run(1) and each command's page; /usr/share/doc/hostbench/README.md"
    } else {
        "hostbench(1); /usr/share/doc/hostbench/README.md"
    }));
    out.push('\n');
    out
}

fn write(bytes: &[u8]) -> Result<i32> {
    let out = Output::new(false, false);
    out.out(&String::from_utf8_lossy(bytes));
    match out.stdout_error() {
        Some(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        None => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_is_a_command_line_hostbench_takes() {
        for (page, examples) in EXAMPLES {
            assert!(!examples.is_empty(), "{page}");
            for (line, _) in *examples {
                let words: Vec<&str> = line.split_whitespace().collect();
                assert_eq!(words[0], "hostbench", "{line}");
                if *page != "hostbench" {
                    assert_eq!(words[1], *page, "{line} is on {page}'s page");
                }
                if let Err(e) = <crate::cli::Cli as clap::Parser>::try_parse_from(&words) {
                    panic!("{line}: {e}");
                }
            }
        }
    }

    #[test]
    fn roff_text_is_literal() {
        assert_eq!(roff_text("--db"), "\\-\\-db");
        assert_eq!(roff_text(".hidden"), "\\&.hidden");
        assert_eq!(roff_text("a\\b"), "a\\eb");
    }
}
