use anyhow::Result;
use clap::{Subcommand, ValueEnum};

use super::GlobalArgs;
use crate::error::UsageError;
use crate::model::figures::figures;
use crate::render;
use crate::store::ResultStore;

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
}

pub fn exec(cmd: &ResultsCommand, global: &GlobalArgs) -> Result<i32> {
    let store = global.open_store()?;
    match cmd {
        ResultsCommand::List => print!("{}", render::results::list_table(&store.list()?)),
        ResultsCommand::Export { id, format } => {
            let result = load(&store, *id)?;
            match format {
                ExportFormat::Json => println!("{}", render::json::to_json(&result)?),
                ExportFormat::Csv => {
                    print!("{}", render::export::figures_csv(*id, &figures(&result))?)
                }
                ExportFormat::Markdown => {
                    print!(
                        "{}",
                        render::export::figures_markdown(*id, &figures(&result))
                    )
                }
            }
        }
        ResultsCommand::Show { id } => {
            let result = load(&store, *id)?;
            if global.json {
                println!("{}", render::json::to_json(&result)?);
            } else {
                print!("{}", render::text_report(&result));
            }
        }
    }
    Ok(0)
}

fn load(store: &crate::store::SqliteStore, id: i64) -> Result<crate::model::RunResult> {
    Ok(store.load(id)?.ok_or_else(|| {
        UsageError::new(format!(
            "no stored result with id {id} in {}",
            store.path().display()
        ))
    })?)
}
