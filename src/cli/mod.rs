//! The command line: clap definitions, one file per subcommand, each with a thin `exec` that
//! validates its arguments into a config and calls the library. Only this layer reads argv and
//! the environment variables that name files.

mod compare;
mod console;
mod history;
mod index;
mod interactive;
mod load;
mod measuring;
mod noise;
pub mod output;
mod report;
mod results;
mod run;
mod sched;
mod session;
mod shell;
pub mod worker;

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use crate::calibration::CalibrationOptions;
use crate::error::UsageError;
use crate::model::label;
use crate::store::{ResultStore, StoreLocation};

#[derive(Debug, Parser)]
#[command(
    name = "hostbench",
    version,
    about = "A Linux host benchmark suite: interactivity, scheduler, BYTE index and run-to-run noise",
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand accepts.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The result store: an SQLite file, or a PostgreSQL URL (postgres://user@host/db)
    /// [default: DATA_DIR/hostbench/results.sqlite]
    #[arg(long, global = true, env = "HOSTBENCH_DB", value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Where the CPU calibration and the index suite's C tests are kept [default: CACHE_DIR/hostbench]
    #[arg(long, global = true, env = "HOSTBENCH_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Print the full result as JSON on standard output (and nothing else there)
    #[arg(long, global = true)]
    pub json: bool,
    /// No progress and no calibration chatter: only the report
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Run the measuring command N times, stored as one group of runs (`compare gID` judges on
    /// their per-run figures)
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
    /// Skip the short noise check a measuring command makes before it starts and the drift
    /// check when it ends (about half a second in all); `compare` then notes that the result
    /// carries no noise of its own
    #[arg(long, global = true)]
    pub no_noise_check: bool,
    /// A PostgreSQL store: the server's statement_timeout, and (plus 5 s) the longest wait for
    /// any answer from it, in seconds; then the result is saved in a JSON file instead
    #[arg(long, global = true, env = "HOSTBENCH_DB_TIMEOUT", value_name = "SECONDS", default_value_t = crate::store::STATEMENT_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub db_timeout: u64,
    /// A measuring command: the name this host goes by in a fleet, stored with its result
    #[arg(long, global = true, value_name = "LABEL", value_parser = parse_host_label)]
    pub host_label: Option<String>,
    /// A measuring command: KEY=VALUE stored with its result (kernel=6.18-rc3, fleet=rack12);
    /// `results list`, `hosts`, `push`, `pull`, `report`, `compare`, `history`: only the
    /// results with this tag (repeatable)
    #[arg(long = "tag", global = true, value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,
    /// Set while a `--repeat` runs: which run this is, and the group once its first run is
    /// stored.
    #[arg(skip)]
    pub repeating: Option<Repeating>,
}

/// One run of a `--repeat N` command.
#[derive(Debug, Clone, Default)]
pub struct Repeating {
    pub run: u32,
    pub of: u32,
    /// The group's id (its first run's), shared by the runs once the first is stored.
    pub group: std::rc::Rc<std::cell::Cell<Option<i64>>>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The standard run: noise, index (quick), interactive and a sched sweep, in one result
    Run(run::RunArgs),
    /// p1bench: how much a fixed CPU or memory job varies from run to run on this host
    Noise(noise::NoiseArgs),
    /// interbench: latency, jitter and deadlines of simulated audio, video, X and gaming tasks under background loads
    Interactive(Box<interactive::InteractiveArgs>),
    /// reflex: scheduler cost per round with a tunable number of runnable threads
    Sched(sched::SchedArgs),
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
    #[command(subcommand)]
    Results(results::ResultsCommand),
    /// A completion script for bash, zsh, fish, elvish or PowerShell, on standard output
    Completions(shell::CompletionsArgs),
    /// A manual page (roff), on standard output: hostbench man > hostbench.1, hostbench man run > hostbench-run.1
    Man(shell::ManArgs),
}

/// `--tag KEY=VALUE`.
fn parse_tag(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() && !k.contains(char::is_whitespace) => {
            let (k, v) = (label::normalized(k), label::normalized(v));
            label::check_tag(&k, &v)?;
            Ok((k, v))
        }
        _ => Err(format!("\"{}\" is not KEY=VALUE", label::printable(s, 64))),
    }
}

/// `--host-label`: plain text of at most `label::MAX_HOST_LABEL` characters, kept in NFKC
/// form.
fn parse_host_label(s: &str) -> Result<String, String> {
    let s = label::normalized(s);
    label::check("the host label", &s, label::MAX_HOST_LABEL)?;
    Ok(s)
}

/// interbench's calibration options, shared by every suite that burns CPU.
#[derive(Debug, Clone, Args)]
pub struct CalibrationArgs {
    /// Re-measure loops_per_ms even if a cached value exists (interbench -b)
    #[arg(short = 'b', long = "recalibrate")]
    pub recalibrate: bool,
    /// Use this loops_per_ms instead of calibrating (interbench -l)
    #[arg(short = 'l', long = "loops-per-ms", value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::calibration::MAX_LOOPS_PER_MS))]
    pub loops_per_ms: Option<u64>,
}

impl CalibrationArgs {
    fn options(&self, global: &GlobalArgs) -> Result<CalibrationOptions> {
        let dir = global.cache_dir()?;
        Ok(CalibrationOptions {
            recalibrate: self.recalibrate,
            given_loops_per_ms: self.loops_per_ms,
            cache_file: dir.join("calibration.json"),
        })
    }
}

/// Runs the parsed command and returns the process exit code.
pub fn exec(cli: Cli, argv: Vec<String>) -> Result<i32> {
    // The command line is stored with the result: never with a password in it.
    let argv: Vec<String> = argv
        .iter()
        .map(|a| crate::store::redact_argument(a))
        .collect();
    let measuring = matches!(
        cli.command,
        Command::Run(_)
            | Command::Noise(_)
            | Command::Index(_)
            | Command::Interactive(_)
            | Command::Sched(_)
    );
    let selects = matches!(
        cli.command,
        Command::Results(
            results::ResultsCommand::List { .. }
                | results::ResultsCommand::Hosts { .. }
                | results::ResultsCommand::Push { .. }
                | results::ResultsCommand::Pull { .. }
        ) | Command::Report(_)
            | Command::Compare(_)
            | Command::History(_)
    );
    // clap refuses `index -q -v`, but not a global -q given before the subcommand.
    let verbose = match &cli.command {
        Command::Index(a) => a.verbose,
        Command::Noise(a) => a.verbose,
        _ => false,
    };
    if verbose && cli.global.quiet {
        return Err(
            UsageError::new("-q (quiet) and -v (verbose) ask for opposites: give one").into(),
        );
    }
    if cli.global.host_label.is_some() && !measuring {
        return Err(UsageError::new(
            "--host-label applies to the measuring commands: run, noise, index, interactive, sched",
        )
        .into());
    }
    if cli.global.tags.len() > label::MAX_TAGS {
        return Err(UsageError::new(format!(
            "--tag given {} times; a result carries at most {} tags",
            cli.global.tags.len(),
            label::MAX_TAGS
        ))
        .into());
    }
    let mut keys = std::collections::BTreeSet::new();
    if let Some((k, _)) = cli.global.tags.iter().find(|(k, _)| !keys.insert(k)) {
        return Err(UsageError::new(format!(
            "--tag {} is given twice; a tag has one value (give each key once)",
            label::printable(k, 64)
        ))
        .into());
    }
    if !cli.global.tags.is_empty() && !measuring && !selects {
        return Err(UsageError::new(
            "--tag labels what a measuring command stores (run, noise, index, interactive, sched) or selects the results of results list, hosts, push, pull, report, compare and history",
        )
        .into());
    }
    match cli.global.repeat {
        Some(_) if !measuring => Err(UsageError::new(
            "--repeat applies to the measuring commands: run, noise, index, interactive, sched",
        )
        .into()),
        Some(n) if n > 1 => repeat(&cli.command, &cli.global, argv, n),
        _ => exec_once(&cli.command, &cli.global, argv),
    }
}

/// `--repeat N`: the command N times, each a result of its own in one group. Stops after a run
/// that did not end well (a stop, a failure: its exit code is the command's).
fn repeat(command: &Command, global: &GlobalArgs, argv: Vec<String>, n: u32) -> Result<i32> {
    let group = std::rc::Rc::new(std::cell::Cell::new(None));
    let mut code = 0;
    for run in 1..=n {
        let mut once = global.clone();
        once.repeating = Some(Repeating {
            run,
            of: n,
            group: group.clone(),
        });
        code = exec_once(command, &once, argv.clone())?;
        if code != 0 {
            break;
        }
    }
    if let (Some(g), false) = (group.get(), global.json) {
        let out = output::Output::new(false, global.quiet);
        out.out(&format!(
            "The {n} runs are group g{g}: `hostbench compare g{g} gOTHER` judges on their per-run figures.\n"
        ));
    }
    Ok(code)
}

fn exec_once(command: &Command, global: &GlobalArgs, argv: Vec<String>) -> Result<i32> {
    match command {
        Command::Run(args) => run::exec(args, global, argv),
        Command::Noise(args) => noise::exec(args, global, argv),
        Command::Index(args) => index::exec(args, global, argv),
        Command::Interactive(args) => interactive::exec(args, global, argv),
        Command::Results(cmd) => results::exec(cmd, global),
        Command::Compare(args) => compare::exec(args, global),
        Command::Report(args) => report::exec(args, global),
        Command::History(args) => history::exec(args, global),
        Command::Sched(args) => sched::exec(args, global, argv),
        Command::Completions(args) => shell::completions(args, global),
        Command::Man(args) => shell::man(args, global),
    }
}

impl GlobalArgs {
    /// The cache directory: the calibration, the index suite's C tests.
    fn cache_dir(&self) -> Result<PathBuf> {
        Ok(match &self.cache_dir {
            Some(d) => d.clone(),
            None => dirs::cache_dir()
                .ok_or_else(|| UsageError::new("cannot find a cache directory: pass --cache-dir"))?
                .join("hostbench"),
        })
    }

    /// The store `--db` names: an SQLite path (the default one in the data directory) or a
    /// PostgreSQL URL.
    fn store_location(&self) -> Result<StoreLocation> {
        Ok(StoreLocation::parse(&match &self.db {
            Some(p) => p.clone(),
            None => dirs::data_dir()
                .ok_or_else(|| UsageError::new("cannot find a data directory: pass --db"))?
                .join("hostbench")
                .join("results.sqlite"),
        })?
        .with_statement_timeout(std::time::Duration::from_secs(self.db_timeout)))
    }

    /// Opens the result store for storing; a path that cannot be opened is the user's to fix
    /// (exit 2).
    fn open_store(&self) -> Result<Box<dyn ResultStore>> {
        self.store_location()?
            .open()
            .map_err(|e| UsageError::new(format!("cannot open the result store {e:#}")).into())
    }

    /// Opens the result store for reading only (nothing is created; a read-only file will
    /// do). None when no result was ever stored there.
    /// The stored results `filter` selects, oldest first (none where there is no store yet),
    /// with the store read-only and its name.
    #[allow(clippy::type_complexity)]
    fn stored(
        &self,
        filter: &crate::store::Filter,
    ) -> Result<(
        String,
        Option<Box<dyn ResultStore>>,
        Vec<crate::model::stored::StoredEntry>,
    )> {
        let (db, store) = self.open_store_read_only()?;
        let entries = match &store {
            Some(s) => s
                .list(filter)
                .map_err(|e| UsageError::new(format!("{e:#}")))?,
            None => Vec::new(),
        };
        Ok((db, store, entries))
    }

    fn open_store_read_only(&self) -> Result<(String, Option<Box<dyn ResultStore>>)> {
        let location = self.store_location()?;
        let store = location.open_read_only().map_err(|e| {
            anyhow::Error::from(UsageError::new(format!(
                "cannot read the result store {e:#}"
            )))
        })?;
        Ok((location.display(), store))
    }

    /// Whether a live progress line is drawn: it goes to standard error, so when that is a
    /// terminal that can rewrite a line, unless quiet.
    fn shows_progress(&self) -> bool {
        !self.quiet
            && std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb")
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
            "-q",
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
        assert!(cli.global.quiet);
        let Command::Index(a) = cli.command else {
            panic!("not index")
        };
        assert!(a.verbose);
        assert_eq!((a.iterations, &a.copies[..]), (3, &[1, 2][..]));
        assert_eq!(a.tests, ["dhry2reg"]);
    }
}
