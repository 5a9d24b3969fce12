use std::fmt::Write;

use chrono::{DateTime, Utc};

use crate::fleet::status::{HostState, HostStatus, Thresholds};
use crate::model::label;
use crate::model::stored::StoredEntry;

/// A row of `results list` as it is shown: its text columns, which an older store (or another
/// program, or another host) may have filled with anything, escaped and bounded.
struct ShownEntry<'a> {
    entry: &'a StoredEntry,
    host: String,
    suites: String,
    headline: String,
    owner: Option<String>,
}

/// The `results list` table.
pub fn list_table(entries: &[StoredEntry]) -> String {
    if entries.is_empty() {
        return "No stored results.\n".into();
    }
    let entries: Vec<ShownEntry> = entries
        .iter()
        .map(|e| ShownEntry {
            entry: e,
            host: e.host.cut(label::MAX_HOST_LABEL).to_string(),
            suites: e.suites.cut(64).to_string(),
            headline: e.headline.cut(200).to_string(),
            owner: e
                .owner
                .as_ref()
                .map(|o| o.cut(label::MAX_HOST_LABEL).to_string()),
        })
        .collect();
    let width = |of: &dyn Fn(&ShownEntry) -> usize, least: usize| {
        entries.iter().map(of).max().unwrap_or(least).max(least)
    };
    let host_w = width(&|e| e.host.chars().count(), 4);
    let suite_w = width(&|e| e.suites.chars().count(), 5);
    // Who stored each row, where the store says (PostgreSQL): the one column a host cannot
    // choose for itself.
    let owners = entries.iter().any(|e| e.owner.is_some());
    let owner_w = width(&|e| e.owner.as_ref().map_or(0, |o| o.chars().count()), 9);
    let owner = |o: Option<&str>| match owners {
        true => format!("{:<owner_w$}  ", o.unwrap_or("-")),
        false => String::new(),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5}  {:<19}  {:<suite_w$}  {:<host_w$}  {}RESULT",
        "ID",
        "STARTED (UTC)",
        "SUITE",
        "HOST",
        owner(Some("STORED BY"))
    );
    for shown in &entries {
        let e = shown.entry;
        let started = match e.started_at {
            Some(t) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
            None => "?".to_string(),
        };
        let _ = writeln!(
            out,
            "{:>5}  {:<19}  {:<suite_w$}  {:<host_w$}  {}{}{}{}",
            e.id,
            started,
            shown.suites,
            shown.host,
            owner(shown.owner.as_deref()),
            shown.headline,
            if e.incomplete { " [incomplete]" } else { "" },
            match &e.problem {
                Some(p) => format!(" [malformed row: {p}]"),
                None => String::new(),
            }
        );
    }
    out
}

/// The line of the hosts `results hosts` left out as retired (`results retire`), the first
/// ten named; None where there are none.
pub fn retired_line(
    retired: &[(crate::text::Text, chrono::DateTime<chrono::Utc>)],
) -> Option<String> {
    const NAMED: usize = 10;
    if retired.is_empty() {
        return None;
    }
    let names: Vec<String> = retired
        .iter()
        .take(NAMED)
        .map(|(h, at)| format!("{} (since {})", h.cut(64), at.format("%Y-%m-%d")))
        .collect();
    Some(format!(
        "{} retired host{} left out: {}{} (`results retire --undo HOST` brings one back; `--host HOST` shows it).\n",
        retired.len(),
        if retired.len() == 1 { "" } else { "s" },
        names.join(", "),
        if retired.len() > NAMED {
            format!(" and {} more", retired.len() - NAMED)
        } else {
            String::new()
        }
    ))
}

/// The `results hosts` table: a row per host, those that need a look first: `FAILED` where its
/// last run failed or was stopped, `HUNG` where that run has said "running" for longer than
/// the hung bound, `STALE` where its latest result is older than the stale one (both in hours).
/// Under the table, each failed or hung host's last run: when, and why.
pub fn hosts_table(rows: &[HostStatus], bounds: &Thresholds, now: DateTime<Utc>) -> String {
    let Thresholds {
        stale_hours,
        hung_hours,
    } = *bounds;
    let hosts: Vec<String> = rows
        .iter()
        .map(|r| r.host.cut(label::MAX_HOST_LABEL).to_string())
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
        "{:<host_w$}  {:>7}  {:>6}  {:<19}  {:>9}  {:<6}  {:<22}  LATEST",
        "HOST", "RESULTS", "ID", "STARTED (UTC)", "AGE", "STATE", "LAST RUN"
    );
    let mut shared = Vec::new();
    let mut looks = Vec::new();
    for (r, host) in rows.iter().zip(&hosts) {
        let last_run = match &r.last_run {
            Some(run) => format!(
                "{} {} ago",
                run.outcome.name(),
                age((now - run.ended_at.unwrap_or(run.started_at)).num_seconds())
            ),
            None => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<host_w$}  {:>7}  {:>6}  {:<19}  {:>9}  {:<6}  {:<22}  {}{}",
            host,
            r.results,
            r.last_id.map_or("-".into(), |id| id.to_string()),
            r.last_started_at
                .map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string()),
            r.age_s.map_or("-".into(), age),
            r.state.word(),
            last_run,
            r.last_headline
                .as_ref()
                .map_or("(no result)".into(), |h| h.cut(200).to_string()),
            if r.last_incomplete {
                " [incomplete]"
            } else {
                ""
            }
        );
        if let (Some(run), HostState::Failed | HostState::Hung) = (&r.last_run, r.state) {
            looks.push(needs_a_look(host, run));
        }
        if r.owners.len() > 1 {
            let logins: Vec<String> = r
                .owners
                .iter()
                .map(|o| o.cut(label::MAX_HOST_LABEL).to_string())
                .collect();
            shared.push(format!("{host} (by {})", logins.join(", ")));
        }
    }
    let count = |s: HostState| rows.iter().filter(|r| r.state == s).count();
    let _ = writeln!(
        out,
        "{} host{}: {} failed, {} hung (running over {hung_hours} h), {} stale (no result for over {stale_hours} h).",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        count(HostState::Failed),
        count(HostState::Hung),
        count(HostState::Stale),
    );
    if !looks.is_empty() {
        let _ = writeln!(out, "Last runs that need a look:");
        for l in looks {
            let _ = writeln!(out, "{l}");
        }
    }
    // A login picks its own --host-label; the store knows who stored each row. A label stored
    // by several logins may be one host posing as another (or a host whose login changed).
    if !shared.is_empty() {
        let _ = writeln!(
            out,
            "Stored by more than one login (a host moved to a new login, or rows stored before layout 12 bound each host to one; `results list` says who stored each): {}.",
            shared.join("; ")
        );
    }
    out
}

/// The line of a host whose last run failed or hung: how, when, what, why, where it went.
fn needs_a_look(host: &str, run: &crate::model::run_state::RunState) -> String {
    format!(
        "  {host}: {}, started {} UTC ({}){}{}",
        run.outcome.name(),
        run.started_at.format("%Y-%m-%d %H:%M:%S"),
        run.command.cut(200),
        match &run.why {
            Some(why) => format!(": {}", why.cut(300)),
            None => String::new(),
        },
        match &run.stored {
            Some(s) => format!("; kept as {}", s.cut(200)),
            None => String::new(),
        },
    )
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
