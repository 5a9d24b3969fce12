//! A stored result as the store's lists give it: what `results list`, `results hosts` and the
//! fleet page read of each result without reading the result whole.

use crate::text::Text;
use chrono::{DateTime, Utc};

/// One line of `results list` (`--json`: these fields, as they are).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredEntry {
    pub id: i64,
    /// None when the stored time is malformed (see `problem`).
    pub started_at: Option<DateTime<Utc>>,
    pub suites: Text,
    /// The host's `--host-label`, else its hostname.
    pub host: Text,
    pub headline: Text,
    pub incomplete: bool,
    /// The login that stored it, where the store keeps one (PostgreSQL: `current_user`, set by
    /// the server, so a host cannot claim another's); None in SQLite.
    pub owner: Option<Text>,
    /// What is wrong with a row whose columns do not hold what hostbench wrote.
    pub problem: Option<Text>,
}
