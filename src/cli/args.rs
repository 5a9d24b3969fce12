//! The option groups a command takes: where results are kept ([`StoreArgs`]), how it prints
//! ([`PrintArgs`]), what a measuring command adds to its result ([`MeasureArgs`]) and which
//! stored results a command reads ([`Selection`]). Each command flattens in only the groups it
//! uses, so clap refuses an option given to a command it does not apply to, and each `--help`
//! lists only what works there.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use clap::Args;

use super::output::Output;
use crate::calibration::CalibrationOptions;
use crate::error::UsageError;
use crate::model::label;
use crate::model::stored::StoredEntry;
use crate::store::{Filter, ResultStore, StoreLocation};

/// The result store. Its options are `global` so that `results --db F list` and `results list
/// --db F` both work; a command without subcommands has them as its own.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Store options")]
pub struct StoreArgs {
    /// The result store: an SQLite file, or a PostgreSQL URL (postgres://user@host/db)
    /// [default: DATA_DIR/hostbench/results.sqlite]
    #[arg(long, global = true, env = "HOSTBENCH_DB", value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// A PostgreSQL store: the server's statement_timeout, and (plus 5 s) the longest wait for
    /// any answer from it, in seconds; a measuring command then saves its result in a JSON file
    #[arg(long, global = true, env = "HOSTBENCH_DB_TIMEOUT", value_name = "SECONDS", default_value_t = crate::store::STATEMENT_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub db_timeout: u64,
}

/// The default SQLite store, in the data directory; `option` names the option to pass where
/// there is none.
fn default_store(option: &str) -> Result<PathBuf> {
    Ok(dirs::data_dir()
        .ok_or_else(|| UsageError::new(format!("cannot find a data directory: pass {option}")))?
        .join("hostbench")
        .join("results.sqlite"))
}

/// `--fallback-db`: where a measuring command stores when the PostgreSQL server `--db` names
/// cannot be reached at its start.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Store options")]
pub struct FallbackArgs {
    /// Where a run stores when the PostgreSQL server --db names cannot be reached as it starts
    /// (an SQLite file; send its results on with `results push`) [default:
    /// DATA_DIR/hostbench/results.sqlite]
    #[arg(long, env = "HOSTBENCH_FALLBACK_DB", value_name = "PATH")]
    pub fallback_db: Option<PathBuf>,
}

impl FallbackArgs {
    /// The fallback store: an SQLite file (a URL is refused, exit 2: a server that may be down
    /// is no fallback).
    pub fn location(&self) -> Result<StoreLocation> {
        let path = match &self.fallback_db {
            Some(p) => p.clone(),
            None => default_store("--fallback-db")?,
        };
        match StoreLocation::parse(&path)? {
            StoreLocation::Sqlite(p) => Ok(StoreLocation::Sqlite(p)),
            StoreLocation::Postgres { .. } => Err(UsageError::new(
                "--fallback-db names an SQLite file, not a server: the fallback must not depend on the network",
            )
            .into()),
        }
    }
}

impl StoreArgs {
    /// The store `--db` names: an SQLite path (the default one in the data directory) or a
    /// PostgreSQL URL.
    pub fn location(&self) -> Result<StoreLocation> {
        Ok(StoreLocation::parse(&match &self.db {
            Some(p) => p.clone(),
            None => default_store("--db")?,
        })?
        .with_statement_timeout(std::time::Duration::from_secs(self.db_timeout)))
    }

    /// Opens the store for storing; a path that cannot be opened is the user's to fix (exit 2).
    pub fn open(&self) -> Result<Box<dyn ResultStore>> {
        self.location()?
            .open()
            .map_err(|e| UsageError::new(format!("cannot open the result store {e:#}")).into())
    }

    /// Opens the store for reading only (nothing is created; a read-only file will do), with
    /// its name. None when no result was ever stored there.
    pub fn open_read_only(&self) -> Result<(String, Option<Box<dyn ResultStore>>)> {
        let location = self.location()?;
        let store = location.open_read_only().map_err(|e| {
            anyhow::Error::from(UsageError::new(format!(
                "cannot read the result store {e:#}"
            )))
        })?;
        Ok((location.display(), store))
    }

    /// The stored results `filter` selects, oldest first (none where there is no store yet),
    /// with the store, read-only, and its name.
    #[allow(clippy::type_complexity)]
    pub fn stored(
        &self,
        filter: &Filter,
    ) -> Result<(String, Option<Box<dyn ResultStore>>, Vec<StoredEntry>)> {
        let (name, store) = self.open_read_only()?;
        let entries = match &store {
            Some(s) => s
                .list(filter)
                .map_err(|e| UsageError::new(format!("{e:#}")))?,
            None => Vec::new(),
        };
        Ok((name, store, entries))
    }
}

/// How a command prints: `--json` and `-q`.
#[derive(Debug, Clone, Default, Args)]
pub struct PrintArgs {
    #[command(flatten)]
    pub json: JsonArg,
    #[command(flatten)]
    pub quiet: QuietArg,
}

/// `--json`, for a command whose output has a JSON form.
#[derive(Debug, Clone, Copy, Default, Args)]
#[command(next_help_heading = "Output options")]
pub struct JsonArg {
    /// Print the full result as JSON on standard output (and nothing else there)
    #[arg(id = "json", long = "json")]
    pub on: bool,
}

/// `-q`.
#[derive(Debug, Clone, Copy, Default, Args)]
#[command(next_help_heading = "Output options")]
pub struct QuietArg {
    /// No progress and no calibration chatter: only the report
    #[arg(id = "quiet", short = 'q', long = "quiet", global = true)]
    pub on: bool,
}

impl PrintArgs {
    /// Whether `--json` was given.
    pub fn json(&self) -> bool {
        self.json.on
    }

    /// Whether `-q` was given.
    pub fn quiet(&self) -> bool {
        self.quiet.on
    }

    /// Standard output and error as these options ask.
    pub fn output(&self) -> Output {
        Output::new(self.json(), self.quiet())
    }

    /// Whether a live progress line is drawn: it goes to standard error, so when that is a
    /// terminal that can rewrite a line, unless quiet.
    pub fn shows_progress(&self) -> bool {
        !self.quiet()
            && std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb")
    }
}

/// What every measuring command (`run`, `noise`, `index`, `interactive`, `sched`) takes beside
/// its own options: the store, the printing, and what is stored with its result.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub fallback: FallbackArgs,
    #[command(flatten)]
    pub print: PrintArgs,
    #[command(flatten)]
    pub own: MeasureOwn,
}

/// The options only a measuring command has.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Measuring options")]
pub struct MeasureOwn {
    /// Where the CPU calibration and the index suite's C tests are kept [default:
    /// CACHE_DIR/hostbench]
    #[arg(long, env = "HOSTBENCH_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Run the command N times, stored as one group of runs (`compare gID` judges on their
    /// per-run figures)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
    /// Run the command again, as one group, until each headline figure's 95% confidence
    /// interval over the runs is within ±PCT of its mean. At least 3 runs; at most --repeat's
    /// N (10 if not given), within --budget
    #[arg(long, value_name = "PCT", value_parser = parse_precision)]
    pub precision: Option<f64>,
    /// With --precision: begin no run that would end after MINUTES from the first's start
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u32).range(1..=10080))]
    pub budget: Option<u32>,
    /// Skip the short noise check made before measuring and the drift check when it ends
    /// (about half a second in all); `compare` then notes that the result carries no noise of
    /// its own
    #[arg(long)]
    pub no_noise_check: bool,
    /// The name this host goes by in a fleet, stored with the result [default: the hostname]
    #[arg(long, value_name = "LABEL", value_parser = parse_host_label)]
    pub host_label: Option<String>,
    /// KEY=VALUE stored with the result (kernel=6.18-rc3, fleet=rack12); repeatable
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,
    /// Also write the run's state (as it starts and ends) and its result's headline figures as
    /// metrics for node_exporter's textfile collector: hostbench-run.prom and hostbench.prom in
    /// DIR, each replaced whole
    #[arg(long, env = "HOSTBENCH_TEXTFILE_DIR", value_name = "DIR")]
    pub textfile_dir: Option<PathBuf>,
    /// Set while a `--repeat` runs: which run this is, and the group once its first run is
    /// stored.
    #[arg(skip)]
    pub repeating: Option<Repeating>,
}

impl MeasureArgs {
    /// The cache directory: the calibration, the index suite's C tests.
    pub fn cache_dir(&self) -> Result<PathBuf> {
        Ok(match &self.own.cache_dir {
            Some(d) => d.clone(),
            None => dirs::cache_dir()
                .ok_or_else(|| UsageError::new("cannot find a cache directory: pass --cache-dir"))?
                .join("hostbench"),
        })
    }
}

/// One run of a `--repeat N` command.
#[derive(Debug, Clone, Default)]
pub struct Repeating {
    pub run: u32,
    pub of: u32,
    /// The group's id (its first run's), shared by the runs once the first is stored.
    pub group: std::rc::Rc<std::cell::Cell<Option<i64>>>,
    /// Each complete run's headline figures, in `Column::all` order (`--precision` stops on
    /// them).
    pub heads: std::rc::Rc<std::cell::RefCell<Vec<Vec<Option<f64>>>>>,
}

/// `--precision PCT`: a half-width of 0.1% to 50%.
fn parse_precision(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.1..=50.0).contains(&p) => Ok(p),
        _ => Err(format!("{s:?} is not a percentage from 0.1 to 50")),
    }
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
    pub fn options(&self, measure: &MeasureArgs) -> Result<CalibrationOptions> {
        let dir = measure.cache_dir()?;
        Ok(CalibrationOptions {
            recalibrate: self.recalibrate,
            given_loops_per_ms: self.loops_per_ms,
            cache_file: dir.join("calibration.json"),
        })
    }
}

/// Which stored results a command reads: those of a host, with given tags, started since a
/// time.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Selection options")]
pub struct Selection {
    /// Only the results of this host: its hostname or its --host-label
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only the results started on or after this day (YYYY-MM-DD, UTC) or time (RFC 3339)
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    pub since: Option<DateTime<Utc>>,
    /// Only the results stored with this tag (repeatable: all of them)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,
}

impl Selection {
    /// The filter of this selection.
    pub fn filter(&self) -> Filter {
        Filter {
            host: self.host.clone(),
            tags: self.tags.clone(),
            since: self.since,
            until: None,
        }
    }

    /// Whether anything narrows the selection.
    pub fn narrows(&self) -> bool {
        self.filter() != Filter::default()
    }
}

/// `--since`: a day (midnight UTC) or an RFC 3339 time.
pub(super) fn parse_since(s: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc());
    }
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("{s:?} is neither a day (YYYY-MM-DD) nor an RFC 3339 time"))
}

/// The `--tag`s a command was given, checked together: at most `label::MAX_TAGS`, each key
/// once.
pub fn check_tags(tags: &[(String, String)]) -> Result<(), UsageError> {
    if tags.len() > label::MAX_TAGS {
        return Err(UsageError::new(format!(
            "--tag given {} times; a result carries at most {} tags",
            tags.len(),
            label::MAX_TAGS
        )));
    }
    let mut keys = std::collections::BTreeSet::new();
    if let Some((k, _)) = tags.iter().find(|(k, _)| !keys.insert(k)) {
        return Err(UsageError::new(format!(
            "--tag {} is given twice; a tag has one value (give each key once)",
            label::printable(k, 64)
        )));
    }
    Ok(())
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
