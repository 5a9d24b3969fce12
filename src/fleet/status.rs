//! `hostbench results hosts`: which hosts of a fleet are reporting, a row per host with its
//! latest result, its age, its last run and what needs a look (FAILED, HUNG, STALE). It reads the
//! store's list columns and each host's latest run state alone, no result's JSON, so it answers
//! as fast as `results list` over any number of results.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::model::label;
use crate::model::run_state::{Outcome, RunState};
use crate::store::StoredEntry;
use crate::text::Text;

/// What a host's row says of it, the worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HostState {
    /// Its last run failed or was stopped.
    Failed,
    /// Its last run has said "running" for longer than the stale threshold.
    Hung,
    /// No result within the stale threshold.
    Stale,
    Ok,
}

impl HostState {
    pub fn word(self) -> &'static str {
        match self {
            HostState::Failed => "FAILED",
            HostState::Hung => "HUNG",
            HostState::Stale => "STALE",
            HostState::Ok => "ok",
        }
    }
}

/// One host's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostStatus {
    /// Its `--host-label`, else its hostname, as `results list` shows it.
    pub host: Text,
    /// How many results it has in the selection.
    pub results: usize,
    /// Its latest result: id, start, headline, and whether it was cut short (None for a host
    /// whose runs stored nothing here).
    pub last_id: Option<i64>,
    pub last_started_at: Option<DateTime<Utc>>,
    pub last_headline: Option<Text>,
    pub last_incomplete: bool,
    /// How long ago its latest result started, in seconds.
    pub age_s: Option<i64>,
    /// No result within the threshold (or none at all).
    pub stale: bool,
    /// Its last run, as recorded as it started and ended (None: no run recorded, a result
    /// of an earlier hostbench or one imported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<RunState>,
    pub state: HostState,
    /// The logins that stored its results (PostgreSQL; none in SQLite). More than one means
    /// results under this label came from several logins: one may be posing as this host,
    /// since a login chooses its own `--host-label` and only the owner is set by the server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<Text>,
}

/// When a host needs a look: no result for longer than `stale_after` (STALE), or a run that has
/// said "running" for longer than `hung_after` (HUNG). The service stops a run at 6 h, so the
/// hung bound is shorter than the stale one, as the `HostbenchRunHung` rule's 8 h is.
/// Both in hours, fractions included (0.5 is half an hour).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub stale_hours: f64,
    pub hung_hours: f64,
}

/// `results hosts`' bounds when none are given.
pub const STALE_HOURS: f64 = 24.0;
pub const HUNG_HOURS: f64 = 8.0;

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            stale_hours: STALE_HOURS,
            hung_hours: HUNG_HOURS,
        }
    }
}

impl Thresholds {
    pub fn stale_after(&self) -> Duration {
        of_hours(self.stale_hours)
    }

    pub fn hung_after(&self) -> Duration {
        of_hours(self.hung_hours)
    }
}

fn of_hours(h: f64) -> Duration {
    Duration::milliseconds((h * 3_600_000.0).round() as i64)
}

/// A row per host of `entries` (a store's list) and of `runs` (each host's latest run state),
/// the ones that need a look first (failed, hung, stale; then the stalest); `now` and
/// `bounds` decide which are stale or hung. Rows whose start time is malformed are left
/// out (`results list` names them).
///
/// FAILED: the last run failed or was stopped. HUNG: it has said "running" longer than the
/// hung bound (killed outright, or stuck). STALE: no result for longer than it (a host
/// that stopped running, lost its network, or was taken out of the schedule).
pub fn host_status(
    entries: &[StoredEntry],
    runs: &[RunState],
    now: DateTime<Utc>,
    bounds: Thresholds,
) -> Vec<HostStatus> {
    let mut seen = Seen::default();
    seen.results(entries);
    seen.rows(runs, now, bounds)
}

/// What [`host_status`] keeps of the results, given in any number of parts (a host's at a
/// time: `results hosts` reads one host's list at a time): a host's count, latest result and
/// logins, whatever its number of results.
#[derive(Default)]
pub struct Seen {
    // Hosts by what their labels name: lookalike spellings (a zero-width space, full-width
    // letters) are one host, so two logins storing under them are seen.
    hosts: BTreeMap<String, Host>,
}

#[derive(Default)]
struct Host {
    results: usize,
    last: Option<(StoredEntry, DateTime<Utc>)>,
    owners: BTreeSet<Text>,
}

impl Seen {
    /// Some of the store's list rows (those with a malformed start time are passed over).
    pub fn results(&mut self, entries: &[StoredEntry]) {
        for e in entries {
            let Some(t) = e.started_at else { continue };
            let host = self.hosts.entry(label::identity(e.host.raw())).or_default();
            host.results += 1;
            if let Some(o) = &e.owner {
                if !host.owners.contains(o) {
                    host.owners.insert(o.clone());
                }
            }
            let later = match &host.last {
                Some((last, lt)) => t > *lt || (t == *lt && e.id > last.id),
                None => true,
            };
            if later {
                host.last = Some((e.clone(), t));
            }
        }
    }

    /// A row per host seen or with a run in `runs`, the ones that need a look first.
    pub fn rows(
        self,
        runs: &[RunState],
        now: DateTime<Utc>,
        bounds: Thresholds,
    ) -> Vec<HostStatus> {
        let mut by_host: BTreeMap<String, (Option<Host>, Option<&RunState>)> = self
            .hosts
            .into_iter()
            .map(|(k, h)| (k, (Some(h), None)))
            .collect();
        // Who recorded a host's runs counts as who stored it: a login posing as another host
        // by its runs alone is named too.
        let mut run_owners: BTreeMap<String, BTreeSet<Text>> = BTreeMap::new();
        for r in runs {
            let key = label::identity(r.host_name().raw());
            if let Some(o) = &r.owner {
                run_owners.entry(key.clone()).or_default().insert(o.clone());
            }
            let (_, run) = by_host.entry(key).or_default();
            if run.is_none_or(|seen| r.started_at > seen.started_at) {
                *run = Some(r);
            }
        }
        let mut rows: Vec<HostStatus> = by_host
            .into_iter()
            .map(|(key, (host, run))| {
                let mut host = host.unwrap_or_default();
                host.owners
                    .extend(run_owners.remove(&key).unwrap_or_default());
                let last = host.last.as_ref();
                let name = match (last, run) {
                    (Some((e, _)), _) => &e.host,
                    (None, Some(r)) => r.host_name(),
                    (None, None) => unreachable!("a host is seen by a result or a run"),
                };
                let stale = last.is_none_or(|(_, t)| now - *t > bounds.stale_after());
                let state = match run {
                    Some(r) if r.outcome.is_bad() => HostState::Failed,
                    Some(r)
                        if r.outcome == Outcome::Running
                            && now - r.started_at > bounds.hung_after() =>
                    {
                        HostState::Hung
                    }
                    _ if stale => HostState::Stale,
                    _ => HostState::Ok,
                };
                HostStatus {
                    host: name.truncated(label::MAX_HOST_LABEL),
                    results: host.results,
                    last_id: last.map(|(e, _)| e.id),
                    last_started_at: last.map(|(_, t)| *t),
                    last_headline: last.map(|(e, _)| e.headline.truncated(200)),
                    last_incomplete: last.is_some_and(|(e, _)| e.incomplete),
                    age_s: last.map(|(_, t)| (now - *t).num_seconds()),
                    stale,
                    last_run: run.cloned(),
                    state,
                    owners: host
                        .owners
                        .iter()
                        .map(|o| o.truncated(label::MAX_HOST_LABEL))
                        .collect(),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            a.state
                .cmp(&b.state)
                .then(a.last_started_at.cmp(&b.last_started_at))
                .then(a.host.cmp(&b.host))
        });
        rows
    }
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
        let rows = host_status(&[plain, hidden, wide], &[], now, Thresholds::default());
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
        let rows = host_status(&entries, &[], now, Thresholds::default());
        let hosts: Vec<(&str, i64, usize, bool)> = rows
            .iter()
            .map(|r| (r.host.raw(), r.last_id.unwrap(), r.results, r.stale))
            .collect();
        assert_eq!(
            hosts,
            [("n3", 4, 1, true), ("n2", 2, 1, true), ("n1", 3, 2, false)]
        );
        assert_eq!(rows[2].age_s, Some(2 * 3600));
        assert_eq!(rows[2].last_headline.as_ref().unwrap(), "headline 3");
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
            &[],
            now,
            Thresholds::default(),
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
        let rows = host_status(&[entry(1, "n1", 1, now)], &[], now, Thresholds::default());
        assert!(rows[0].owners.is_empty());
        assert!(!serde_json::to_string(&rows[0]).unwrap().contains("owners"));
    }

    fn run(host: &str, hours_ago: i64, outcome: Outcome, now: DateTime<Utc>) -> RunState {
        RunState {
            uuid: format!("{host}-{hours_ago}"),
            host: host.into(),
            host_label: None,
            command: "hostbench run".into(),
            started_at: now - Duration::hours(hours_ago),
            ended_at: None,
            outcome,
            why: (outcome == Outcome::Failed).then(|| "no server answers".into()),
            stored: None,
            tags: BTreeMap::new(),
            owner: None,
        }
    }

    #[test]
    fn a_failed_hung_or_silent_host_heads_the_table_by_its_last_run() {
        let now = Utc::now();
        let entries = [
            entry(1, "good", 3, now),
            entry(2, "broke", 26, now),
            entry(3, "stuck", 27, now),
            entry(4, "old", 50, now),
            entry(5, "busy", 1, now),
        ];
        let runs = [
            run("good", 3, Outcome::Finished, now),
            // Yesterday's run finished; tonight's failed and stored nothing.
            run("broke", 26, Outcome::Finished, now),
            run("broke", 2, Outcome::Failed, now),
            run("stuck", 25, Outcome::Running, now),
            // Running for an hour: still measuring, not hung.
            run("busy", 1, Outcome::Running, now),
            // A host whose every run failed before storing anything.
            run("never", 4, Outcome::Failed, now),
        ];
        let rows = host_status(&entries, &runs, now, Thresholds::default());
        let seen: Vec<(&str, HostState)> = rows.iter().map(|r| (r.host.raw(), r.state)).collect();
        assert_eq!(
            seen,
            [
                ("never", HostState::Failed),
                ("broke", HostState::Failed),
                ("stuck", HostState::Hung),
                ("old", HostState::Stale),
                ("good", HostState::Ok),
                ("busy", HostState::Ok),
            ]
        );
        let never = &rows[0];
        assert_eq!((never.results, never.last_id, never.stale), (0, None, true));
        assert_eq!(
            never.last_run.as_ref().unwrap().why.as_ref().unwrap(),
            "no server answers"
        );
        assert_eq!(rows[1].last_run.as_ref().unwrap().outcome, Outcome::Failed);
    }

    /// A run still "running" after the hung bound (8 h, the service stops a run at 6 h) is
    /// HUNG though the host's results are fresh; the stale bound takes a fraction of an hour.
    #[test]
    fn a_run_is_hung_after_its_own_bound_and_stale_takes_fractions_of_an_hour() {
        let now = Utc::now();
        let entries = [entry(1, "nine", 1, now), entry(2, "seven", 1, now)];
        let runs = [
            run("nine", 9, Outcome::Running, now),
            run("seven", 7, Outcome::Running, now),
        ];
        let rows = host_status(&entries, &runs, now, Thresholds::default());
        let seen: Vec<(&str, HostState)> = rows.iter().map(|r| (r.host.raw(), r.state)).collect();
        assert_eq!(seen, [("nine", HostState::Hung), ("seven", HostState::Ok)]);
        let rows = host_status(
            &entries,
            &[],
            now,
            Thresholds {
                stale_hours: 0.5,
                ..Thresholds::default()
            },
        );
        assert!(rows.iter().all(|r| r.stale && r.state == HostState::Stale));
    }

    /// A login that recorded a host's runs is one of the host's logins, though it stored no
    /// result there.
    #[test]
    fn the_login_that_recorded_a_run_is_named_beside_those_that_stored_results() {
        let now = Utc::now();
        let mut stored = entry(1, "node1", 3, now);
        stored.owner = Some("node1".into());
        let mut posed = run("node1", 1, Outcome::Finished, now);
        posed.owner = Some("node2".into());
        let mut seen = Seen::default();
        seen.results(&[stored]);
        let rows = seen.rows(&[posed], now, Thresholds::default());
        let owners: Vec<&str> = rows[0].owners.iter().map(Text::raw).collect();
        assert_eq!(owners, ["node1", "node2"]);
    }
}
