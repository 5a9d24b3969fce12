//! `hostbench results hosts`: which hosts of a fleet are reporting — a row per host with its
//! latest stored result, how old it is, and whether that is older than the stale threshold (a
//! host that stopped running, lost its network, or was taken out of the schedule).
//!
//! Read from the store's list columns alone (no result's JSON is loaded), so it answers as
//! fast as `results list` over any number of results.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::model::label;
use crate::store::StoredEntry;
use crate::text::Text;

/// One host's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostStatus {
    /// Its `--host-label`, else its hostname, as `results list` shows it.
    pub host: Text,
    /// How many results it has in the selection.
    pub results: usize,
    /// Its latest result: id, start, headline, and whether it was cut short.
    pub last_id: i64,
    pub last_started_at: DateTime<Utc>,
    pub last_headline: Text,
    pub last_incomplete: bool,
    /// How long ago its latest result started, in seconds.
    pub age_s: i64,
    /// Older than the threshold.
    pub stale: bool,
    /// The logins that stored its results (PostgreSQL; none in SQLite). More than one means
    /// results under this label came from several logins: one may be posing as this host,
    /// since a login chooses its own `--host-label` and only the owner is set by the server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<Text>,
}

/// A row per host of `entries` (a store's list), the stalest first, so the hosts that need a
/// look head the table; `now` and `stale_after` decide which are stale. Rows whose start time
/// is malformed are left out (`results list` names them).
pub fn host_status(
    entries: &[StoredEntry],
    now: DateTime<Utc>,
    stale_after: Duration,
) -> Vec<HostStatus> {
    struct Seen<'a> {
        results: usize,
        last: &'a StoredEntry,
        t: DateTime<Utc>,
        owners: BTreeSet<&'a Text>,
    }
    // Hosts by what their labels name: lookalike spellings (a zero-width space, full-width
    // letters) are one host, so two logins storing under them are seen.
    let mut by_host: BTreeMap<String, Seen> = BTreeMap::new();
    for e in entries {
        let Some(t) = e.started_at else { continue };
        let row = by_host
            .entry(label::identity(e.host.raw()))
            .or_insert(Seen {
                results: 0,
                last: e,
                t,
                owners: BTreeSet::new(),
            });
        row.results += 1;
        row.owners.extend(e.owner.as_ref());
        if t > row.t || (t == row.t && e.id > row.last.id) {
            row.last = e;
            row.t = t;
        }
    }
    let mut rows: Vec<HostStatus> = by_host
        .into_iter()
        .map(
            |(
                _,
                Seen {
                    results,
                    last,
                    t,
                    owners,
                },
            )| HostStatus {
                host: last.host.truncated(label::MAX_HOST_LABEL),
                results,
                last_id: last.id,
                last_started_at: t,
                last_headline: last.headline.truncated(200),
                last_incomplete: last.incomplete,
                age_s: (now - t).num_seconds(),
                stale: now - t > stale_after,
                owners: owners
                    .into_iter()
                    .map(|o| o.truncated(label::MAX_HOST_LABEL))
                    .collect(),
            },
        )
        .collect();
    rows.sort_by(|a, b| {
        a.last_started_at
            .cmp(&b.last_started_at)
            .then(a.host.cmp(&b.host))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64, host: &str, hours_ago: i64, now: DateTime<Utc>) -> StoredEntry {
        StoredEntry {
            id,
            started_at: Some(now - Duration::hours(hours_ago)),
            suites: "noise".into(),
            host: host.into(),
            headline: format!("headline {id}").into(),
            incomplete: false,
            owner: None,
            problem: None,
        }
    }

    #[test]
    fn lookalike_labels_are_one_host_and_both_logins_are_seen() {
        let now = Utc::now();
        let mut plain = entry(1, "node1", 2, now);
        plain.owner = Some("login_a".into());
        // The same label with a zero-width space, and in full-width letters, by another login.
        let mut hidden = entry(2, "node1\u{200b}", 1, now);
        hidden.owner = Some("login_b".into());
        let wide = entry(3, "ｎｏｄｅ１", 0, now);
        let rows = host_status(&[plain, hidden, wide], now, Duration::hours(24));
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].results, 3);
        let owners: Vec<&str> = rows[0].owners.iter().map(Text::raw).collect();
        assert_eq!(owners, ["login_a", "login_b"]);
    }

    #[test]
    fn each_host_by_its_latest_result_and_the_stale_first() {
        let now = Utc::now();
        let entries = [
            entry(1, "n1", 50, now),
            entry(2, "n2", 30, now),
            entry(3, "n1", 2, now),
            entry(4, "n3", 100, now),
            StoredEntry {
                started_at: None,
                ..entry(5, "n4", 0, now)
            },
        ];
        let rows = host_status(&entries, now, Duration::hours(24));
        let hosts: Vec<(&str, i64, usize, bool)> = rows
            .iter()
            .map(|r| (r.host.raw(), r.last_id, r.results, r.stale))
            .collect();
        assert_eq!(
            hosts,
            [("n3", 4, 1, true), ("n2", 2, 1, true), ("n1", 3, 2, false)]
        );
        assert_eq!(rows[2].age_s, 2 * 3600);
        assert_eq!(rows[2].last_headline, "headline 3");
    }

    #[test]
    fn a_label_stored_by_several_logins_names_them_all() {
        let now = Utc::now();
        let by = |id, host, owner: &str| StoredEntry {
            owner: Some(owner.into()),
            ..entry(id, host, 1, now)
        };
        let rows = host_status(
            &[
                by(1, "n1", "node1"),
                by(2, "n1", "node2"),
                by(3, "n1", "node1"),
                by(4, "n2", "node2"),
            ],
            now,
            Duration::hours(24),
        );
        let owners: Vec<(&str, Vec<&str>)> = rows
            .iter()
            .map(|r| (r.host.raw(), r.owners.iter().map(Text::raw).collect()))
            .collect();
        assert_eq!(
            owners,
            [("n1", vec!["node1", "node2"]), ("n2", vec!["node2"])]
        );
        // SQLite keeps no owner: none named, none serialised.
        let rows = host_status(&[entry(1, "n1", 1, now)], now, Duration::hours(24));
        assert!(rows[0].owners.is_empty());
        assert!(!serde_json::to_string(&rows[0]).unwrap().contains("owners"));
    }
}
