//! Where results are kept. One trait, two back ends: the embedded SQLite file (the default)
//! and a PostgreSQL server shared by many hosts, chosen by what `--db` names. Both hold the
//! same layout, made and migrated by one list of migrations (`migrations`).

mod copy;
pub mod fallback;
mod migrations;
mod pg_tls;
mod postgres;
pub mod retention;
mod sql;
mod sqlite;

pub use self::copy::{copy, import, Copied, Headline};
pub use self::postgres::{PgStore, STATEMENT_TIMEOUT};
/// A stored result as `results list` shows it: the model's, since renderers read it.
pub use crate::model::stored::StoredEntry;
pub use sqlite::{SqliteStore, BUSY_TIMEOUT};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::error::UsageError;
use crate::model::figures::Kept;
use crate::model::headline::HeadlineFigures;
use crate::model::run_state::{Outcome, RunState};
use crate::model::RunResult;

/// Which results `results list` shows: all of them, or those of a host (its hostname or its
/// `--host-label`), with all of these tags, started on or after a time, and (`history
/// --until`) on or before one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub host: Option<String>,
    pub tags: Vec<(String, String)>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

impl Filter {
    /// The filter in words, as a side of `compare` is named: `host:H, tag:K=V, since DATE`
    /// (shown: `label::printable`).
    pub fn describe(&self) -> String {
        use crate::model::label::{printable, MAX_HOST_LABEL, MAX_TAG_KEY, MAX_TAG_VALUE};
        let mut parts: Vec<String> = self
            .host
            .iter()
            .map(|h| format!("host:{}", printable(h, MAX_HOST_LABEL)))
            .collect();
        parts.extend(self.tags.iter().map(|(k, v)| {
            format!(
                "tag:{}={}",
                printable(k, MAX_TAG_KEY),
                printable(v, MAX_TAG_VALUE)
            )
        }));
        parts.extend(
            self.since
                .map(|t| format!("since {}", t.format("%Y-%m-%d %H:%M UTC"))),
        );
        parts.extend(
            self.until
                .map(|t| format!("until {}", t.format("%Y-%m-%d %H:%M UTC"))),
        );
        parts.join(", ")
    }

    /// The `WHERE` clause (empty for no filter) and its text parameters, the placeholders
    /// written by `placeholder(n)` (n from 1): the same SQL for both back ends.
    fn sql(&self, placeholder: impl Fn(usize) -> String) -> (String, Vec<String>) {
        // By the (key, value) index: the results of a tag, not a look at every result's tags.
        self.clause(placeholder, |pk, pv| {
            format!(
                "results.id IN (SELECT t.result_id FROM result_tags t WHERE t.key = {pk} AND t.value = {pv})"
            )
        })
    }

    /// The `WHERE` clause of `sql` and `runs_sql`: `tag(key, value)` writes the test of one
    /// tag (the results' tags are a table, a run's a JSON object).
    fn clause(
        &self,
        placeholder: impl Fn(usize) -> String,
        tag: impl Fn(&str, &str) -> String,
    ) -> (String, Vec<String>) {
        let mut clauses = Vec::new();
        let mut params: Vec<String> = Vec::new();
        let mut next = |value: &str| {
            params.push(value.to_string());
            placeholder(params.len())
        };
        if let Some(h) = &self.host {
            let (p, q) = (next(h), next(h));
            clauses.push(format!("(host = {p} OR host_label = {q})"));
        }
        for (k, v) in &self.tags {
            let (pk, pv) = (next(k), next(v));
            clauses.push(tag(&pk, &pv));
        }
        // Stored as RFC 3339 in UTC: text order is time order.
        if let Some(t) = &self.since {
            let p = next(&t.to_rfc3339());
            clauses.push(format!("started_at >= {p}"));
        }
        if let Some(t) = &self.until {
            let p = next(&t.to_rfc3339());
            clauses.push(format!("started_at <= {p}"));
        }
        let clause = if clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", clauses.join(" AND "))
        };
        (clause, params)
    }
}

/// A stored result as a run, from its list columns alone (`ResultStore::identity`): what
/// `results push` compares to leave a result that is there already as it is, without reading
/// it whole on either side.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub id: i64,
    pub uuid: String,
    pub started_at: DateTime<Utc>,
    pub hostname: String,
    pub machine_id: Option<String>,
    /// Stored while the run went on (a checkpoint), or cut short.
    pub incomplete: bool,
    /// Its `--repeat` group, whose name differs between stores.
    pub repeat_group: Option<i64>,
    /// Stored by another login than this connection's (PostgreSQL).
    pub another_login: bool,
}

/// Which stored result `ResultStore::identity` reads.
#[derive(Debug, Clone, Copy)]
pub enum IdentityOf<'a> {
    Id(i64),
    /// By its UUID in its one spelling.
    Uuid(&'a str),
}

impl IdentityOf<'_> {
    /// The `WHERE` condition, its one parameter written by `placeholder`.
    fn condition(&self, placeholder: &str) -> String {
        match self {
            IdentityOf::Id(_) => format!("id = {placeholder}"),
            IdentityOf::Uuid(_) => format!("uuid = {placeholder}"),
        }
    }
}

/// The columns `ResultStore::identity` selects, in [`Identity::of`]'s order (the last one is
/// the back end's test of another login).
const IDENTITY_COLUMNS: &str = "id, uuid, started_at, host, machine_id, incomplete, repeat_group";

impl Identity {
    /// From the columns as read: None where the start does not parse.
    #[allow(clippy::too_many_arguments)]
    fn of(
        id: i64,
        uuid: String,
        started_at: &str,
        hostname: String,
        machine_id: Option<String>,
        incomplete: bool,
        repeat_group: Option<i64>,
        another_login: bool,
    ) -> Option<Identity> {
        Some(Identity {
            id,
            uuid,
            started_at: DateTime::parse_from_rfc3339(started_at)
                .ok()?
                .with_timezone(&Utc),
            hostname,
            machine_id,
            incomplete,
            repeat_group,
            another_login,
        })
    }

    /// Whether `there` (the row under the same UUID in another store) is this run, whole, and
    /// its login's to keep: `put` would leave it as it is. A row stored while its run went on
    /// (incomplete) may be replaced by a later copy: that is judged on the whole results.
    pub fn already_in(&self, there: &Identity) -> bool {
        self.uuid == there.uuid
            && self.started_at == there.started_at
            && self.hostname == there.hostname
            && self.machine_id == there.machine_id
            && !there.incomplete
            && !there.another_login
    }
}

/// Which run states `ResultStore::runs` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// Each host's latest (`results hosts`).
    LatestPerHost,
    /// All, oldest first (`results push`).
    All,
}

/// The columns of a result's stored headline figures, in the order each back end's
/// `figures_by` reads them: its id, hostname and figures.
const FIGURE_COLUMNS: &str = "id, host, figures";

/// The columns of a run state, in the order [`RunColumns`] reads them.
const RUN_COLUMNS: &str =
    "uuid, host, host_label, command, started_at, ended_at, outcome, why, stored, tags, owner";

impl Filter {
    /// The statement that reads the run states this filter selects, by the same rules as
    /// `sql` but on the `runs` table, whose tags are a JSON object: `tag(key, value)` writes
    /// the back end's test of one tag. Each host's latest (by the name it goes by: the label,
    /// else the hostname) is chosen in SQL: as many rows as hosts, however many runs.
    /// `time` is the back end's parse of `started_at` (NULL where it is no time): the latest
    /// is the latest in time, never in text order, so a row dated `zzzz` by hand neither
    /// wins nor hides the host's real runs.
    fn runs_sql(
        &self,
        which: Runs,
        placeholder: impl Fn(usize) -> String,
        tag: impl Fn(&str, &str) -> String,
        time: &str,
    ) -> (String, Vec<String>) {
        let (clause, params) = self.clause(placeholder, tag);
        let sql = match which {
            Runs::LatestPerHost => format!(
                "SELECT {RUN_COLUMNS}
                 FROM (SELECT r.*, ROW_NUMBER() OVER (
                           PARTITION BY coalesce(host_label, host)
                           ORDER BY {time} DESC NULLS LAST, started_at DESC, uuid) AS n
                       FROM runs r {clause}) latest
                 WHERE n = 1"
            ),
            Runs::All => {
                format!("SELECT {RUN_COLUMNS} FROM runs {clause} ORDER BY started_at, uuid")
            }
        };
        (sql, params)
    }
}

impl Filter {
    /// The statement that reads the hosts of the results this filter selects, each once.
    fn hosts_sql(&self, placeholder: impl Fn(usize) -> String) -> (String, Vec<String>) {
        let (clause, params) = self.sql(placeholder);
        (
            format!("SELECT DISTINCT coalesce(host_label, host) FROM results {clause}"),
            params,
        )
    }

    /// The statement that reads the hostname and headline figures of the results this filter
    /// selects ([`FIGURE_COLUMNS`]).
    fn figures_sql(&self, placeholder: impl Fn(usize) -> String) -> (String, Vec<String>) {
        let (clause, params) = self.sql(placeholder);
        (
            format!("SELECT {FIGURE_COLUMNS} FROM results {clause}"),
            params,
        )
    }

    /// The statement that reads what layout 9 keeps of the results this filter selects
    /// (`result_figures`): result id, kept.
    fn kept_sql(&self, placeholder: impl Fn(usize) -> String) -> (String, Vec<String>) {
        let (clause, params) = self.sql(placeholder);
        (
            format!(
                "SELECT f.result_id, f.kept FROM result_figures f
                 WHERE f.result_id IN (SELECT id FROM results {clause})"
            ),
            params,
        )
    }

    /// The statement that reads the tags of the results this filter selects: result id, key,
    /// value.
    /// The tags of the selected results, bounded as a command line bounds them: keys of at most
    /// 64 characters, values of at most 256, the first 64 tags of a result (by key). A row
    /// another host wrote with 2,000 tags of 100 KB costs a reader no more than an honest one.
    fn tags_sql(&self, placeholder: impl Fn(usize) -> String) -> (String, Vec<String>) {
        use crate::model::label::{MAX_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE};
        let (clause, params) = self.sql(placeholder);
        (
            format!(
                "SELECT result_id, key, value FROM (
                   SELECT t.result_id, t.key, t.value,
                          ROW_NUMBER() OVER (PARTITION BY t.result_id ORDER BY t.key) AS n
                   FROM result_tags t
                   WHERE t.result_id IN (SELECT id FROM results {clause})
                     AND LENGTH(t.key) <= {MAX_TAG_KEY} AND LENGTH(t.value) <= {MAX_TAG_VALUE}
                 ) bounded WHERE n <= {MAX_TAGS}"
            ),
            params,
        )
    }
}

pub trait ResultStore {
    /// Saves a result, with its headline for `results list` (rendered by the caller), and
    /// returns its id.
    fn save(&mut self, result: &RunResult, headline: &str) -> Result<i64>;
    /// Replaces the result stored as `id` (a run stored as it goes).
    fn replace(&mut self, id: i64, result: &RunResult, headline: &str) -> Result<()>;
    /// The stored results `filter` selects, oldest first.
    fn list(&self, filter: &Filter) -> Result<Vec<StoredEntry>>;
    /// The hosts of the results `filter` selects (each by the name `list` gives it: its label,
    /// else its hostname), sorted, each once; a row whose name is not text is left out.
    fn hosts(&self, filter: &Filter) -> Result<Vec<crate::text::Text>>;
    /// The results `filter` selects that are stored under the name `host` (one of
    /// [`hosts`](Self::hosts)): `filter` narrowed to that host, and their list rows — the
    /// fleet commands read a host at a time, so that memory grows with the hosts, not the
    /// results.
    fn list_of_host(
        &self,
        filter: &Filter,
        host: &crate::text::Text,
    ) -> Result<(Filter, Vec<StoredEntry>)> {
        let one = Filter {
            host: Some(host.raw().to_string()),
            ..filter.clone()
        };
        // The host filter also takes a hostname that equals this name: kept to the name.
        let mut entries = self.list(&one)?;
        entries.retain(|e| e.host == *host);
        Ok((one, entries))
    }
    /// The result with this id, or None.
    fn load(&self, id: i64) -> Result<Option<RunResult>>;
    /// The id of the result with this UUID (in its canonical spelling, `model::canonical_uuid`),
    /// or None.
    fn find(&self, uuid: &str) -> Result<Option<i64>>;
    /// The login that stored result `id`, where it is another than this connection's (a
    /// PostgreSQL store; SQLite has no logins): a result this login may not change.
    fn stored_by_another(&self, _id: i64) -> Result<Option<String>> {
        Ok(None)
    }
    /// What `put` would do with `result`, without storing: refused (exit 2) when its host
    /// label or tags could not have been given on a command line (`RunResult::label_problem`),
    /// when its UUID is not a UUID, or when the result stored under that UUID is another run (another start
    /// time, host or machine): a copied or forged UUID must never replace someone else's
    /// result. `results import` judges every file before it stores any.
    fn judge(&self, result: &RunResult) -> Result<Verdict> {
        if let Some(problem) = result.label_problem() {
            return Err(UsageError::new(format!("{problem}: refused")).into());
        }
        let uuid = match &result.uuid {
            Some(u) => match crate::model::canonical_uuid(u) {
                Some(c) => c,
                None => {
                    return Err(UsageError::new(format!(
                        "its uuid {:?} is not a UUID of a run (the nil and max UUIDs name none): refused",
                        crate::model::label::printable(u, 60)
                    ))
                    .into())
                }
            },
            // A result of an earlier version is stored under the name its JSON gives it.
            None => crate::model::derived_uuid(&serde_json::to_string(result)?),
        };
        let Some(id) = self.find(&uuid)? else {
            return Ok(Verdict::Add);
        };
        // Under another login's row: not this login's to add, replace or call its own.
        if let Some(owner) = self.stored_by_another(id)? {
            return Err(UsageError::new(format!(
                "its uuid {uuid} is that of result {id}, stored by the login {}: not yours (a login may add or change only the results it stored); refused",
                crate::model::label::printable(&owner, 64)
            ))
            .into());
        }
        let Some(stored) = self.load(id)? else {
            return Ok(Verdict::Replace(id));
        };
        let host = |r: &RunResult| {
            (
                r.environment.host.hostname.clone(),
                r.environment.host.machine_id.clone(),
            )
        };
        if stored.started_at != result.started_at || host(&stored) != host(result) {
            return Err(UsageError::new(format!(
                "its uuid {uuid} is that of stored result {id}, another run (started {} on {}); refused",
                stored.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
                stored.environment.host.hostname.cut(64)
            ))
            .into());
        }
        // A later copy of the same run (copied while it was still going) replaces it.
        Ok(if result.finished_at > stored.finished_at {
            Verdict::Replace(id)
        } else {
            Verdict::Same(id)
        })
    }
    /// Stores a copy of a result from elsewhere (`results push`, `pull`, `import`) once: a
    /// result whose UUID is already here is left as it is, unless this is a later copy of the
    /// same run (same UUID, start, host and machine, finished later), which replaces it;
    /// anything else under that UUID is refused (`judge`).
    fn put(&mut self, result: &RunResult, headline: &str) -> Result<(i64, Put)> {
        // Kept under its UUID's one spelling, in the row and in the result's own JSON.
        let respelled;
        let result = match result
            .uuid
            .as_deref()
            .and_then(crate::model::canonical_uuid)
        {
            Some(c) if result.uuid.as_deref() != Some(c.as_str()) => {
                let mut r = result.clone();
                r.uuid = Some(c);
                respelled = r;
                &respelled
            }
            _ => result,
        };
        match self.judge(result)? {
            Verdict::Add => match self.save(result, headline) {
                Ok(id) => Ok((id, Put::Added)),
                // Another process stored the same result meanwhile (the UUID is unique).
                Err(e) => match self.judge(result) {
                    Ok(Verdict::Same(id)) => Ok((id, Put::AlreadyThere)),
                    Ok(Verdict::Replace(id)) => {
                        self.replace(id, result, headline)?;
                        Ok((id, Put::Updated))
                    }
                    Ok(Verdict::Add) => Err(e),
                    Err(refused) => Err(refused),
                },
            },
            Verdict::Replace(id) => {
                self.replace(id, result, headline)?;
                Ok((id, Put::Updated))
            }
            Verdict::Same(id) => Ok((id, Put::AlreadyThere)),
        }
    }
    /// The hostname and headline figures of the stored results `filter` selects, by result
    /// id: what `report --fleet` reads of them besides their list rows.
    fn figures(&self, filter: &Filter) -> Result<HashMap<i64, StoredFigures>>;
    /// The hostname and headline figures of the stored result `id` (None: no such result):
    /// what `results export --fleet` reads of each host's latest.
    fn figures_of(&self, id: i64) -> Result<Option<StoredFigures>>;
    /// Every figure's value, the repeat group and the noise floor of the stored results
    /// `filter` selects, by result id (layout 9): what `history` reads of them. A result
    /// without (its row could not be filled in, or was changed by hand) is left out: read it
    /// whole.
    fn kept(&self, filter: &Filter) -> Result<HashMap<i64, Kept>>;
    /// The tags of the stored results `filter` selects, by result id (those with none left
    /// out).
    fn tags(&self, filter: &Filter) -> Result<HashMap<i64, BTreeMap<String, String>>>;
    /// The ids of the runs of repeat group `group` (a `--repeat N` command), oldest first.
    fn group(&self, group: i64) -> Result<Vec<i64>>;
    /// Where the store is, for messages (a path, or a URL without its password).
    fn location(&self) -> String;
    /// The layout its open found and the one it left, where the open made it (0: none was
    /// there) or migrated it: `results push` says so. None where the layout was as it is, and
    /// for SQLite, which makes and migrates a file it owns without a word.
    fn migrated(&self) -> Option<(i64, i64)> {
        None
    }
    /// How long a statement waits for another process holding what it needs.
    fn set_busy_timeout(&self, timeout: Duration) -> Result<()>;
    /// A directory beside the store, where a result it could not take is best kept.
    fn fallback_dir(&self) -> Option<PathBuf> {
        None
    }
    /// What names a stored result as a run, from its list columns (`results push` of a result
    /// already there asks only this of both stores). None where the row is not there or does
    /// not read back so (then the result is read whole).
    fn identity(&self, of: IdentityOf<'_>) -> Result<Option<Identity>>;
    /// Records a run's state: added, or over the same run's state while that has not ended
    /// (by its UUID): an ended run's state is final, so a copy (`results push`) never rewrites
    /// it. On PostgreSQL only the login that added a run may change it. False where nothing
    /// was written (the store holds that run ended already).
    fn record_run(&mut self, state: &RunState) -> Result<bool>;
    /// The run states `filter` selects, as stored: each host's latest, or all of them oldest
    /// first (`results push` copies them). A row that does not read back (its outcome or a
    /// time is not hostbench's) is left out.
    fn runs(&self, filter: &Filter, which: Runs) -> Result<Vec<RunState>>;
    /// Removes result `id` with its tags and figures (`results delete`). On PostgreSQL a login
    /// removes only the results it stored (the database's owner any): another's is refused,
    /// naming its login.
    fn delete(&mut self, id: i64) -> Result<()>;
    /// Why `delete(id)` would be refused, without deleting (`results delete` judges every id
    /// before it deletes any): no such result, or (PostgreSQL) another login's.
    fn deletable(&self, id: i64) -> Result<()>;
    /// Removes the results `ids` with their tags and figures (`results delete --before/--keep`),
    /// in one transaction, and says how many went. On PostgreSQL row-level security decides:
    /// another login's results stay (the database's owner removes any).
    fn delete_many(&mut self, ids: &[i64]) -> Result<usize>;
    /// Removes the run states of these run UUIDs, in one transaction, and says how many went;
    /// on PostgreSQL a login removes only its own runs' (the owner any).
    fn delete_runs(&mut self, uuids: &[String]) -> Result<usize>;
    /// The hosts an operator retired, each with when (layout 14; none in a store before it).
    /// A row whose time does not read back is left out.
    fn retired(&self) -> Result<Vec<(crate::text::Text, DateTime<Utc>)>>;
    /// Retires `host` as of `at` (again: its time moves), or with None brings it back; false
    /// where nothing changed. On PostgreSQL only the store's owner may (row-level security).
    fn set_retired(&mut self, host: &str, at: Option<DateTime<Utc>>) -> Result<bool>;
}

/// The retired hosts, bounded as every stored name is.
const RETIRED: &str =
    "SELECT name, retired_at FROM retired_hosts WHERE LENGTH(name) <= 256 ORDER BY name";

/// A retired host's row as read: its name and time, None where the time is not one
/// hostbench writes.
fn retired_row(name: String, at: &str) -> Option<(crate::text::Text, DateTime<Utc>)> {
    let at = DateTime::parse_from_rfc3339(at).ok()?.with_timezone(&Utc);
    Some((crate::text::Text::new(&name), at))
}

/// How many ids one statement of a bulk delete names: each statement short, within the
/// store's answer timeout.
pub(crate) const DELETE_CHUNK: usize = 5_000;

/// A stored run state's columns as read (uuid, host, host_label, command, started_at,
/// ended_at, outcome, why, stored, tags, owner: the order `latest_runs_sql` selects them in).
struct RunColumns {
    uuid: String,
    host: String,
    host_label: Option<String>,
    command: String,
    started_at: String,
    ended_at: Option<String>,
    outcome: String,
    why: Option<String>,
    stored: Option<String>,
    tags: String,
    owner: Option<String>,
}

impl RunColumns {
    /// The run state they hold, every string bounded; None where the outcome or a time is not
    /// one hostbench writes.
    fn state(self) -> Option<RunState> {
        use crate::model::label::MAX_HOST_LABEL;
        use crate::model::run_state::{MAX_COMMAND, MAX_STATE_TEXT};
        use crate::text::Text;
        let time = |t: &str| {
            DateTime::parse_from_rfc3339(t)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        };
        let bounded = |t: String, max| Text::new(t).truncated(max);
        Some(RunState {
            started_at: time(&self.started_at)?,
            ended_at: match &self.ended_at {
                Some(t) => Some(time(t)?),
                None => None,
            },
            outcome: Outcome::parse(&self.outcome)?,
            uuid: self.uuid.chars().take(64).collect(),
            host: bounded(self.host, MAX_HOST_LABEL),
            host_label: self.host_label.map(|l| bounded(l, MAX_HOST_LABEL)),
            command: bounded(self.command, MAX_COMMAND),
            why: self.why.map(|w| bounded(w, MAX_STATE_TEXT)),
            stored: self.stored.map(|w| bounded(w, MAX_STATE_TEXT)),
            tags: RunState::tags_from_json(&self.tags),
            owner: self.owner.map(|o| bounded(o, MAX_HOST_LABEL)),
        })
    }
}

/// A stored result's hostname and its headline figures as stored (None in rows of a layout
/// before 7, or not readable as such: the result is then read whole).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFigures {
    pub hostname: String,
    pub figures: Option<HeadlineFigures>,
}

/// What `ResultStore::put` would do with a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Add,
    /// An earlier copy of the same run is stored as this id.
    Replace(i64),
    /// This copy, or a later one, is stored as this id.
    Same(i64),
}

/// What `ResultStore::put` did with a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Added,
    /// A copy that finished earlier was there: replaced.
    Updated,
    AlreadyThere,
}

pub use crate::text::{redact, redact_argument};

/// What `--db` names: an SQLite file, or a PostgreSQL server (`postgres://…`,
/// `postgresql://…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    Sqlite(PathBuf),
    /// The server's URL, and `--db-timeout`: its `statement_timeout`, and about the longest
    /// hostbench waits for an answer.
    Postgres {
        url: String,
        statement_timeout: Duration,
    },
}

/// libpq's connection keywords (PostgreSQL 17's documentation, "Parameter Key Words").
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "requiressl",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// Where `s` reads as a libpq keyword/value string (its first word `keyword=`, spaces around
/// `=` allowed as libpq allows them), the keywords of its words, in order; None for anything
/// else (a path such as `runs/host=a.sqlite`).
fn libpq_keywords(s: &str) -> Option<Vec<&'static str>> {
    let keyword = |word: &str| {
        let (k, _) = word.split_once('=')?;
        LIBPQ_KEYWORDS.iter().copied().find(|&known| known == k)
    };
    let compact = s.split('=').map(str::trim).collect::<Vec<_>>().join("=");
    let mut words = compact.split_whitespace();
    let first = keyword(words.next()?)?;
    Some(
        std::iter::once(first)
            .chain(words.filter_map(keyword))
            .collect(),
    )
}

impl StoreLocation {
    /// A PostgreSQL URL, an SQLite path, or — for anything else of the form `scheme://` (a
    /// `mysql://` URL, `POSTGRES://`) and for a libpq keyword string (`host=db dbname=hb`) — a
    /// refusal, rather than an SQLite file of that name (with the password in its name).
    pub fn parse(db: &Path) -> Result<StoreLocation, UsageError> {
        let s = db.to_string_lossy();
        if let Some(keys) = libpq_keywords(&s) {
            // The values are never shown: one of them may be a password.
            return Err(UsageError::new(format!(
                "--db: a libpq connection string (keywords {}) is not taken: name a PostgreSQL server by URL (postgresql://user@host/db, the password in ~/.pgpass or PGPASSWORD), or an SQLite file by a path (./{}=… for a file of that name)",
                keys.join(", "),
                keys[0]
            )));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(StoreLocation::Postgres {
                url: s.into_owned(),
                statement_timeout: STATEMENT_TIMEOUT,
            });
        }
        if let Some((scheme, _)) = s.split_once("://") {
            let is_scheme = !scheme.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
            if is_scheme {
                return Err(UsageError::new(format!(
                    "--db {}: hostbench stores into an SQLite file (a path) or a PostgreSQL server (postgres://… or postgresql://…, in lower case), not {}://",
                    crate::model::label::printable(&self::postgres::without_password(&s), 80),
                    crate::model::label::printable(scheme, 20)
                )));
            }
        }
        Ok(StoreLocation::Sqlite(db.to_path_buf()))
    }

    /// With `--db-timeout` (only a server's store waits on a network).
    pub fn with_statement_timeout(self, timeout: Duration) -> StoreLocation {
        match self {
            StoreLocation::Postgres { url, .. } => StoreLocation::Postgres {
                url,
                statement_timeout: timeout,
            },
            sqlite => sqlite,
        }
    }

    /// Opens the store for storing, creating its layout where it has none.
    pub fn open(&self) -> Result<Box<dyn ResultStore>> {
        Ok(match self {
            StoreLocation::Sqlite(p) => Box::new(SqliteStore::open(p)?),
            StoreLocation::Postgres {
                url,
                statement_timeout,
            } => Box::new(PgStore::open(url, *statement_timeout)?),
        })
    }

    /// Opens the store for reading only; None where no result was ever stored.
    pub fn open_read_only(&self) -> Result<Option<Box<dyn ResultStore>>> {
        Ok(match self {
            StoreLocation::Sqlite(p) => {
                SqliteStore::open_read_only(p)?.map(|s| Box::new(s) as Box<dyn ResultStore>)
            }
            StoreLocation::Postgres {
                url,
                statement_timeout,
            } => PgStore::open_read_only(url, *statement_timeout)?
                .map(|s| Box::new(s) as Box<dyn ResultStore>),
        })
    }

    /// For messages: the path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            StoreLocation::Sqlite(p) => p.display().to_string(),
            StoreLocation::Postgres { url, .. } => self::postgres::without_password(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_already_there_only_as_the_same_whole_run_of_this_login() {
        let id = |host: &str, incomplete: bool, another_login: bool| {
            Identity::of(
                7,
                "u".into(),
                "2026-11-29T01:00:00+00:00",
                host.into(),
                Some("m".into()),
                incomplete,
                None,
                another_login,
            )
            .unwrap()
        };
        let whole = id("h", false, false);
        assert!(whole.already_in(&whole));
        assert!(id("h", true, false).already_in(&whole));
        // A checkpoint there may be replaced by a later copy: judged whole.
        assert!(!whole.already_in(&id("h", true, false)));
        // Another host's run under the same UUID, or another login's row: judged (refused).
        assert!(!whole.already_in(&id("other", false, false)));
        assert!(!whole.already_in(&id("h", false, true)));
        assert!(Identity::of(
            1,
            "u".into(),
            "not a time",
            "h".into(),
            None,
            false,
            None,
            false
        )
        .is_none());
    }

    #[test]
    fn a_libpq_keyword_string_is_refused_and_its_values_never_shown() {
        for db in [
            "host=db.example dbname=hb user=bench password=s3cret",
            "  host = db.example password = 's3 cret'",
            "dbname=hb",
        ] {
            let e = StoreLocation::parse(Path::new(db)).unwrap_err().to_string();
            assert!(e.contains("a libpq connection string"), "{e}");
            assert!(!e.contains("s3") && !e.contains("db.example"), "{e}");
        }
        let e = StoreLocation::parse(Path::new("host=a password=b"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("(keywords host, password)"), "{e}");
        // Paths that only hold a `=`: SQLite files.
        for db in [
            "runs/host=a.sqlite",
            "./host=a",
            "results=old.sqlite",
            "r.sqlite",
        ] {
            assert_eq!(
                StoreLocation::parse(Path::new(db)).unwrap(),
                StoreLocation::Sqlite(PathBuf::from(db)),
                "{db}"
            );
        }
    }
}
