use std::fmt::Write;

use crate::fleet::status::HostStatus;
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

/// The `results hosts` table: a row per host, the stalest first, `STALE` where its latest result
/// is older than `stale_hours`.
pub fn hosts_table(rows: &[HostStatus], stale_hours: u32) -> String {
    let hosts: Vec<String> = rows
        .iter()
        .map(|r| printable(&r.host, label::MAX_HOST_LABEL))
        .collect();
    let host_w = hosts
        .iter()
        .map(|h| h.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<host_w$}  {:>7}  {:>6}  {:<19}  {:>9}  {:<5}  LATEST",
        "HOST", "RESULTS", "ID", "STARTED (UTC)", "AGE", "STATE"
    );
    for (r, host) in rows.iter().zip(&hosts) {
        let _ = writeln!(
            out,
            "{:<host_w$}  {:>7}  {:>6}  {:<19}  {:>9}  {:<5}  {}{}",
            host,
            r.results,
            r.last_id,
            r.last_started_at.format("%Y-%m-%d %H:%M:%S"),
            age(r.age_s),
            if r.stale { "STALE" } else { "ok" },
            printable(&r.last_headline, 200),
            if r.last_incomplete {
                " [incomplete]"
            } else {
                ""
            }
        );
    }
    let stale = rows.iter().filter(|r| r.stale).count();
    let _ = writeln!(
        out,
        "{} host{}, {stale} stale (no result for over {stale_hours} h).",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    );
    out
}

/// An age as a person reads it: 45 s, 12 min, 5.2 h, 3.0 d.
fn age(seconds: i64) -> String {
    let s = seconds.max(0) as f64;
    if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 86_400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} d", s / 86_400.0)
    }
}
