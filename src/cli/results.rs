use std::path::PathBuf;

use anyhow::Result;
use clap::{Subcommand, ValueEnum};

use super::compare::load_file;
use super::output::Output;
use super::GlobalArgs;
use crate::error::UsageError;
use crate::model::figures::figures;
use crate::model::RunResult;
use crate::render;
use crate::store::{ResultStore, SqliteStore};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The whole result, as stored
    Json,
    /// One row per measurement, stable column names
    Csv,
    /// One table row per measurement
    Markdown,
}

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// One line per stored result: id, time, suite, host, headline figure
    List,
    /// One stored result in full (text, or JSON with --json)
    Show {
        /// The result's id, as `results list` shows it
        id: i64,
    },
    /// One stored result as JSON, CSV (a row per measurement) or Markdown
    Export {
        /// The result's id, as `results list` shows it
        id: i64,
        #[arg(long, value_enum)]
        format: ExportFormat,
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
                    store.path().display()
                ));
            }
        }
        ResultsCommand::List => {
            let (path, store) = global.open_store_read_only()?;
            match store {
                Some(store) => out.out(&render::results::list_table(&store.list()?)),
                None => out.out(&format!("No stored results in {}.\n", path.display())),
            }
        }
        ResultsCommand::Export { id, format } => {
            let result = load(global, *id)?;
            let text = match format {
                ExportFormat::Json => format!("{}\n", render::json::to_json(&result)?),
                ExportFormat::Csv => render::export::figures_csv(*id, &figures(&result))?,
                ExportFormat::Markdown => render::export::figures_markdown(*id, &figures(&result)),
            };
            out.out(&text);
        }
        ResultsCommand::Show { id } => {
            let result = load(global, *id)?;
            if global.json {
                out.out(&format!("{}\n", render::json::to_json(&result)?));
            } else {
                out.out(&render::text_report(&result));
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
    load_stored(store.as_ref(), &path, id)
}

pub(super) fn load_stored(
    store: Option<&SqliteStore>,
    path: &std::path::Path,
    id: i64,
) -> Result<RunResult> {
    let found = match store {
        Some(s) => s.load(id).map_err(|e| UsageError::new(format!("{e:#}")))?,
        None => None,
    };
    found.ok_or_else(|| {
        UsageError::new(format!(
            "no stored result with id {id} in {}",
            path.display()
        ))
        .into()
    })
}
