use std::path::PathBuf;

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use clap::Subcommand;

use super::compare::load_file;
use super::output::{FormatArgs, Output};
use super::GlobalArgs;
use crate::error::UsageError;
use crate::model::RunResult;
use crate::render;
use crate::render::exporters::{Format, Subject};
use crate::store::{Filter, ResultStore};

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// One line per stored result: id, time, suite, host, headline figure (--tag KEY=VALUE
    /// selects by tag)
    List {
        /// Only the results of this host: its hostname or its --host-label
        #[arg(long, value_name = "HOST")]
        host: Option<String>,
        /// Only the results started on or after this day (YYYY-MM-DD, UTC) or time (RFC 3339)
        #[arg(long, value_name = "DATE", value_parser = parse_since)]
        since: Option<DateTime<Utc>>,
    },
    /// One stored result in full: text, or --format json, csv (a row per measurement),
    /// markdown or html
    Show {
        /// The result's id, as `results list` shows it
        id: i64,
        #[command(flatten)]
        output: FormatArgs,
    },
    /// One stored result for another program: as `results show`, the format required
    Export {
        /// The result's id, as `results list` shows it
        id: i64,
        #[command(flatten)]
        output: FormatArgs,
    },
    /// Store results from JSON files (`--json` output, `results export --format json`, or the
    /// file a run saved when the store failed)
    Import {
        /// The result files
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
    },
}

pub fn exec(cmd: &ResultsCommand, global: &GlobalArgs) -> Result<i32> {
    let out = Output::new(global.json, global.quiet);
    match cmd {
        ResultsCommand::Import { files } => {
            // Every file is read before anything is stored: a bad one stores none.
            let results = files
                .iter()
                .map(|f| load_file(&f.to_string_lossy()))
                .collect::<Result<Vec<RunResult>>>()?;
            let mut store = global.open_store()?;
            for (file, result) in files.iter().zip(&results) {
                let id = store.save(result, &render::headline::run(result))?;
                out.out(&format!(
                    "Imported {} as result {id} in {}.\n",
                    file.display(),
                    store.location()
                ));
            }
        }
        ResultsCommand::List { host, since } => {
            let filter = Filter {
                host: host.clone(),
                tags: global.tags.clone(),
                since: *since,
            };
            let (path, store) = global.open_store_read_only()?;
            match store {
                Some(store) => out.out(&render::results::list_table(&store.list(&filter)?)),
                None => out.out(&format!("No stored results in {path}.\n")),
            }
        }
        ResultsCommand::Show { id, output } | ResultsCommand::Export { id, output } => {
            if matches!(cmd, ResultsCommand::Export { .. })
                && output.format.is_none()
                && !global.json
            {
                return Err(UsageError::new(
                    "results export needs --format: json, csv, markdown, html or text",
                )
                .into());
            }
            let format = output.format(global.json, Format::Text)?;
            let result = load(global, *id)?;
            let subject = Subject::Result {
                id: *id,
                result: &result,
            };
            if let Some(path) = output.emit(&out, format, subject, None)? {
                out.chatter(&format!("Written: {}\n", path.display()));
            }
        }
    }
    match out.stdout_error() {
        Some(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        None => Ok(0),
    }
}

/// The stored result `id`; an id that is not there is the user's mistake (exit 2).
fn load(global: &GlobalArgs, id: i64) -> Result<RunResult> {
    let (path, store) = global.open_store_read_only()?;
    load_stored(store.as_deref(), &path, id)
}

pub(super) fn load_stored(
    store: Option<&dyn ResultStore>,
    location: &str,
    id: i64,
) -> Result<RunResult> {
    let found = match store {
        Some(s) => s.load(id).map_err(|e| UsageError::new(format!("{e:#}")))?,
        None => None,
    };
    found.ok_or_else(|| {
        UsageError::new(format!("no stored result with id {id} in {location}")).into()
    })
}

/// `--since`: a day (midnight UTC) or an RFC 3339 time.
fn parse_since(s: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc());
    }
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("{s:?} is neither a day (YYYY-MM-DD) nor an RFC 3339 time"))
}
