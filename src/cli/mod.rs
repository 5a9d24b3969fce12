//! The command line: clap definitions, one file per subcommand, each with a thin `exec` that
//! validates its arguments into a config and calls the library. Only this layer reads argv and
//! the environment variables that name files.

pub mod args;
mod compare;
mod console;
mod history;
mod index;
mod interactive;
mod load;
mod measuring;
mod noise;
pub mod output;
mod precision;
mod report;
mod results;
mod run;
mod sched;
mod session;
mod shell;
mod wakeup;
pub mod worker;

use std::time::Duration;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::error::UsageError;
use args::{MeasureArgs, Repeating};

#[derive(Debug, Parser)]
#[command(
    name = "hostbench",
    version,
    about = "A Linux host benchmark suite: interactivity, scheduler cost, wakeup latency, BYTE index and run-to-run noise",
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The standard run: noise, index (quick), interactive, a sched sweep and wakeup, in one result
    Run(run::RunArgs),
    /// p1bench: how much a fixed CPU or memory job varies from run to run on this host
    Noise(noise::NoiseArgs),
    /// interbench: latency, jitter and deadlines of simulated audio, video, X and gaming tasks under background loads
    Interactive(Box<interactive::InteractiveArgs>),
    /// reflex: scheduler cost per round with a tunable number of runnable threads
    Sched(sched::SchedArgs),
    /// schbench: wakeup latency, request latency and requests a second of message and worker threads
    Wakeup(wakeup::WakeupArgs),
    /// UnixBench: micro-benchmarks scored into the BYTE index against the baseline machine George
    Index(index::IndexArgs),
    /// Two results (or two sets of runs) side by side: the change of each shared measurement and whether it is real
    #[command(mut_arg("format", compare::formats))]
    Compare(compare::CompareArgs),
    /// One self-contained HTML page with plots of one or more results
    #[command(mut_arg("format", report::formats), mut_arg("output", report::output))]
    Report(report::ReportArgs),
    /// Where each figure changed across one host's stored results (E-divisive means), newest first
    #[command(mut_arg("format", history::formats))]
    History(history::HistoryArgs),
    /// The stored results: list them and their hosts, show or export one, import files, push to or pull from another store
    Results(results::ResultsArgs),
    /// A completion script for bash, zsh, fish, elvish or PowerShell, on standard output
    Completions(shell::CompletionsArgs),
    /// A manual page (roff), on standard output: hostbench man > hostbench.1, hostbench man run > hostbench-run.1
    Man(shell::ManArgs),
}

/// Runs the parsed command and returns the process exit code.
pub fn exec(cli: Cli, argv: Vec<String>) -> Result<i32> {
    // The command line is stored with the result: never with a password in it.
    let argv: Vec<String> = argv
        .iter()
        .map(|a| crate::store::redact_argument(a))
        .collect();
    let tags = match &cli.command {
        Command::Compare(a) => &a.select.tags,
        Command::Report(a) => &a.select.tags,
        Command::History(a) => &a.select.tags,
        Command::Results(a) => a.command.selection().map_or(&[][..], |s| &s.tags),
        c => c.measuring().map_or(&[][..], |m| &m.own.tags),
    };
    args::check_tags(tags)?;
    let own = cli
        .command
        .measuring()
        .map(|m| (m.own.precision, m.own.budget, m.own.repeat));
    match own {
        Some((Some(pct), budget, repeat)) => {
            let goal = precision::Goal {
                pct,
                most_runs: repeat.unwrap_or(precision::DEFAULT_MOST_RUNS),
                budget: budget.map(|m| Duration::from_secs(u64::from(m) * 60)),
            };
            precision::run(cli.command, argv, goal)
        }
        Some((None, Some(_), _)) => Err(UsageError::new(
            "--budget is the time for --precision: give --precision too",
        )
        .into()),
        Some((None, None, Some(n))) if n > 1 => repeat(cli.command, argv, n),
        _ => exec_once(&cli.command, argv),
    }
}

impl Command {
    /// The options of a measuring command.
    fn measuring(&self) -> Option<&MeasureArgs> {
        match self {
            Command::Run(a) => Some(&a.measure),
            Command::Noise(a) => Some(&a.measure),
            Command::Interactive(a) => Some(&a.measure),
            Command::Sched(a) => Some(&a.measure),
            Command::Wakeup(a) => Some(&a.measure),
            Command::Index(a) => Some(&a.measure),
            _ => None,
        }
    }

    fn measuring_mut(&mut self) -> Option<&mut MeasureArgs> {
        match self {
            Command::Run(a) => Some(&mut a.measure),
            Command::Noise(a) => Some(&mut a.measure),
            Command::Interactive(a) => Some(&mut a.measure),
            Command::Sched(a) => Some(&mut a.measure),
            Command::Wakeup(a) => Some(&mut a.measure),
            Command::Index(a) => Some(&mut a.measure),
            _ => None,
        }
    }
}

/// The runs of one group (`--repeat`, `--precision`): the last run's exit code, how many ran,
/// the group's id once its first run is stored, and each complete run's headline figures.
struct GroupRuns {
    code: i32,
    runs: u32,
    group: Option<i64>,
    heads: Vec<Vec<Option<f64>>>,
}

/// The command run as one group of at most `of` runs, each a result of its own. Stops after a
/// run that did not end well (a stop, a failure: its exit code is the command's), or once
/// `done` says so of the runs so far and their headline figures.
fn group_runs(
    command: &mut Command,
    argv: &[String],
    of: u32,
    mut done: impl FnMut(u32, &[Vec<Option<f64>>]) -> bool,
) -> Result<GroupRuns> {
    let group = std::rc::Rc::new(std::cell::Cell::new(None));
    let heads = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let (mut runs, mut code) = (0, 0);
    while runs < of {
        runs += 1;
        if let Some(m) = command.measuring_mut() {
            m.own.repeating = Some(Repeating {
                run: runs,
                of,
                group: group.clone(),
                heads: heads.clone(),
            });
        }
        code = exec_once(command, argv.to_vec())?;
        if code != 0 || done(runs, &heads.borrow()) {
            break;
        }
    }
    Ok(GroupRuns {
        code,
        runs,
        group: group.get(),
        heads: heads.take(),
    })
}

/// `--repeat N`: the command N times, as one group.
fn repeat(mut command: Command, argv: Vec<String>, n: u32) -> Result<i32> {
    let done = group_runs(&mut command, &argv, n, |_, _| false)?;
    let print = command
        .measuring()
        .map(|m| m.print.clone())
        .unwrap_or_default();
    if let (Some(g), false) = (done.group, print.json()) {
        print.output().out(&format!(
            "The {n} runs are group g{g}: `hostbench compare g{g} gOTHER` judges on their per-run figures.\n"
        ));
    }
    Ok(done.code)
}

fn exec_once(command: &Command, argv: Vec<String>) -> Result<i32> {
    match command {
        Command::Run(args) => run::exec(args, argv),
        Command::Noise(args) => noise::exec(args, argv),
        Command::Index(args) => index::exec(args, argv),
        Command::Interactive(args) => interactive::exec(args, argv),
        Command::Results(args) => results::exec(args),
        Command::Compare(args) => compare::exec(args),
        Command::Report(args) => report::exec(args),
        Command::History(args) => history::exec(args),
        Command::Sched(args) => sched::exec(args, argv),
        Command::Wakeup(args) => wakeup::exec(args, argv),
        Command::Completions(args) => shell::completions(args, Cli::command()),
        Command::Man(args) => shell::man(args, Cli::command()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("hostbench").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .command
    }

    #[test]
    fn interbench_option_letters() {
        let Command::Interactive(a) = parse(&[
            "interactive",
            "-L",
            "3",
            "-t",
            "20",
            "-B",
            "5",
            "-N",
            "-5",
            "-b",
            "-l",
            "1000",
            "-c",
            "-r",
            "-C",
            "40",
            "-I",
            "10000",
            "-m",
            "note",
            "-w",
            "Burn",
            "-x",
            "Ring",
            "-W",
            "Audio",
            "-X",
            "X",
            "-u",
        ]) else {
            panic!("not interactive")
        };
        assert_eq!(
            (a.load_threads, a.time_s, a.bench_nice, a.load_nice),
            (3, 20, 5, -5)
        );
        assert!(a.calibration.recalibrate && a.console_only && a.realtime && a.uniprocessor);
        assert_eq!(a.calibration.loops_per_ms, Some(1000));
        assert_eq!((a.custom_cpu, a.custom_interval), (Some(40), Some(10000)));
        assert_eq!(a.comment.as_deref(), Some("note"));
        assert_eq!(
            (&a.loads[..], &a.exclude_loads[..]),
            (&["Burn".to_string()][..], &["Ring".to_string()][..])
        );
        assert_eq!(
            (&a.benches[..], &a.exclude_benches[..]),
            (&["Audio".to_string()][..], &["X".to_string()][..])
        );
    }

    #[test]
    fn reflex_option_letters() {
        let Command::Sched(a) = parse(&[
            "sched", "-w", "50", "-r", "20", "-c", "8", "-a", "2", "-t", "5", "-o", "1",
        ]) else {
            panic!("not sched")
        };
        assert_eq!(
            (
                a.weight,
                a.compute_us,
                a.threads,
                a.active,
                a.time_s,
                a.output
            ),
            (50, 20, 8, 2, 5, sched::OutputFormat::Runs)
        );
    }

    #[test]
    fn p1bench_arguments_and_letters() {
        let Command::Noise(a) = parse(&["noise", "-v", "-m", "64", "500", "20"]) else {
            panic!("not noise")
        };
        assert!(a.verbose);
        assert_eq!((a.memory_mb, a.time_ms, a.count), (Some(64), 500, 20));
    }

    #[test]
    fn unixbench_option_letters() {
        let cli = Cli::try_parse_from([
            "hostbench",
            "index",
            "-v",
            "-i",
            "3",
            "-c",
            "1",
            "-c",
            "2",
            "dhry2reg",
        ])
        .unwrap();
        let Command::Index(a) = cli.command else {
            panic!("not index")
        };
        assert!(a.verbose);
        assert_eq!((a.iterations, &a.copies[..]), (3, &[1, 2][..]));
        assert_eq!(a.tests, ["dhry2reg"]);
    }
}
