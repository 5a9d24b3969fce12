use std::fmt::Write;

use crate::model::label::{self, printable};
use crate::store::StoredEntry;

/// The `results list` table. Its text columns come from the store's columns, which an older
/// store (or another program) may have filled with anything: shown through
/// `label::printable`, bounded and with every control character escaped.
pub fn list_table(entries: &[StoredEntry]) -> String {
    if entries.is_empty() {
        return "No stored results.\n".into();
    }
    let entries: Vec<StoredEntry> = entries
        .iter()
        .map(|e| StoredEntry {
            host: printable(&e.host, label::MAX_HOST_LABEL),
            suites: printable(&e.suites, 64),
            headline: printable(&e.headline, 200),
            ..e.clone()
        })
        .collect();
    let host_w = entries
        .iter()
        .map(|e| e.host.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let suite_w = entries
        .iter()
        .map(|e| e.suites.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5}  {:<19}  {:<suite_w$}  {:<host_w$}  RESULT",
        "ID", "STARTED (UTC)", "SUITE", "HOST"
    );
    for e in &entries {
        let started = match e.started_at {
            Some(t) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
            None => "?".to_string(),
        };
        let _ = writeln!(
            out,
            "{:>5}  {:<19}  {:<suite_w$}  {:<host_w$}  {}{}{}",
            e.id,
            started,
            e.suites,
            e.host,
            e.headline,
            if e.incomplete { " [incomplete]" } else { "" },
            match &e.problem {
                Some(p) => format!(" [malformed row: {p}]"),
                None => String::new(),
            }
        );
    }
    out
}
