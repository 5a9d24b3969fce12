//! Where results are kept. One trait, so the embedded SQLite store and (later) a shared
//! PostgreSQL one are interchangeable to the commands that use them.

pub mod fallback;
mod sqlite;

pub use sqlite::{SqliteStore, BUSY_TIMEOUT};

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::model::RunResult;

/// One line of `results list`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEntry {
    pub id: i64,
    /// None when the stored time is malformed (see `problem`).
    pub started_at: Option<DateTime<Utc>>,
    pub suites: String,
    pub host: String,
    pub headline: String,
    pub incomplete: bool,
    /// What is wrong with a row whose columns do not hold what hostbench wrote.
    pub problem: Option<String>,
}

pub trait ResultStore {
    /// Saves a result, with its headline for `results list` (rendered by the caller), and
    /// returns its id.
    fn save(&mut self, result: &RunResult, headline: &str) -> Result<i64>;
    /// Replaces the result stored as `id` (a run stored as it goes).
    fn replace(&mut self, id: i64, result: &RunResult, headline: &str) -> Result<()>;
    /// Every stored result, oldest first.
    fn list(&self) -> Result<Vec<StoredEntry>>;
    /// The result with this id, or None.
    fn load(&self, id: i64) -> Result<Option<RunResult>>;
    /// The ids of the runs of repeat group `group` (a `--repeat N` command), oldest first.
    fn group(&self, group: i64) -> Result<Vec<i64>>;
}
