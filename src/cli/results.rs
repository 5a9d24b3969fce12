use anyhow::Result;
use clap::Subcommand;

use super::GlobalArgs;
use crate::error::UsageError;
use crate::render;
use crate::store::ResultStore;

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// One line per stored result: id, time, suite, host, headline figure
    List,
    /// One stored result in full (text, or JSON with --json)
    Show {
        /// The result's id, as `results list` shows it
        id: i64,
    },
}

pub fn exec(cmd: &ResultsCommand, global: &GlobalArgs) -> Result<i32> {
    let store = global.open_store()?;
    match cmd {
        ResultsCommand::List => print!("{}", render::results::list_table(&store.list()?)),
        ResultsCommand::Show { id } => {
            let result = store.load(*id)?.ok_or_else(|| {
                UsageError::new(format!(
                    "no stored result with id {id} in {}",
                    store.path().display()
                ))
            })?;
            if global.json {
                println!("{}", render::json::to_json(&result)?);
            } else {
                print!("{}", render::text_report(&result));
            }
        }
    }
    Ok(0)
}
