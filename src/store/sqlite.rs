use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use chrono::{DateTime, Utc};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{params_from_iter, Connection, ErrorCode, OpenFlags, OptionalExtension};

use super::sql;
use super::{
    migrations, Filter, Identity, IdentityOf, ResultStore, Runs, StoredEntry, StoredFigures,
    FIGURE_COLUMNS, IDENTITY_COLUMNS,
};
use crate::error::UsageError;
use crate::model::figures::Kept;
use crate::model::headline::HeadlineFigures;
use crate::model::run_state::RunState;
use crate::model::{RunResult, SCHEMA_VERSION};
use crate::platform::dir::{euid, split_file, Dir, Trust};
use crate::text::Text;

/// How long a statement waits for another hostbench process that holds the database.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The columns of the `results` table, in order.
const COLUMNS: [&str; 13] = [
    "id",
    "started_at",
    "suites",
    "host",
    "headline",
    "incomplete",
    "schema_version",
    "result_json",
    "host_label",
    "machine_id",
    "uuid",
    "repeat_group",
    "figures",
];

/// Results in one SQLite file: a row per run with the columns `results list` shows, and the
/// whole result as JSON so nothing measured is lost.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

/// `PRAGMA application_id` of a hostbench store ("hbst"): what marks the file as hostbench's,
/// so that a database of another program is never mistaken for a store and changed.
pub const APPLICATION_ID: i32 = 0x6862_7374;

/// The tables a store of an earlier hostbench (before the mark) holds, and the columns its
/// results table had from the first layout on.
const OWN_TABLES: [&str; 2] = ["results", "result_tags"];
const FIRST_COLUMNS: usize = 8;

impl SqliteStore {
    /// Whether the store has the table `name` (a store read without migrating it may lack one
    /// a later layout adds).
    fn has_table(&self, name: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                [name],
                |r| r.get(0),
            )
            .map_err(|e| explain(e.into(), &self.path))
    }

    /// Opens the database at `path` for storing results, creating it and its parent
    /// directories (mode 0700) if needed. What the file is is decided before anything is
    /// written (`classify`): a hostbench store is migrated if it must be, a new or empty
    /// database made a store, and anything else refused untouched. Then one write is tried and
    /// rolled back, so a store that opens but cannot be written (a read-only file or disk, an
    /// immutable file) is refused before a run is measured. A database that already has the
    /// layout is only read otherwise, so a store another process is writing to opens as soon
    /// as it may be read. A file this call created is removed again if the open fails (a full
    /// disk left a 0-byte file).
    pub fn open(path: &Path) -> Result<Self> {
        let placed = place(path, true).map_err(|e| explain(e, path))?;
        let target = placed.file;
        if placed.exists {
            refuse_foreign_at_rest(&target).map_err(|e| explain(e, path))?;
        }
        let existed = placed.exists;
        let opened = Connection::open_with_flags(
            &target,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_NOFOLLOW,
        )
        .map_err(anyhow::Error::from)
        .and_then(|conn| {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            prepare_layout(&conn)?;
            probe_write(&conn)?;
            Ok(conn)
        });
        match opened {
            Ok(conn) => Ok(SqliteStore {
                conn,
                path: path.to_path_buf(),
            }),
            Err(e) => {
                if !existed {
                    // Removed through the held directory: the name is the one this call made.
                    for suffix in ["", "-journal"] {
                        let mut name = placed.name.clone();
                        name.push(suffix);
                        let _ = placed.dir.remove_file(name);
                    }
                }
                Err(explain(e, path))
            }
        }
    }

    /// Opens an existing database read-only, for the commands that only read results: a
    /// read-only file or directory is enough, and nothing is created. None when there is no
    /// database at `path` yet. What the file is is decided at rest first (see
    /// [`refuse_foreign_at_rest`]), and a read-only connection never rolls back a journal or
    /// checkpoints a write-ahead log.
    pub fn open_read_only(path: &Path) -> Result<Option<Self>> {
        let placed = match place(path, false) {
            Ok(p) => p,
            // A directory that is not there holds no store either.
            Err(e)
                if e.root_cause()
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(explain(e, path)),
        };
        if !placed.exists {
            return Ok(None);
        }
        let target = placed.file;
        refuse_foreign_at_rest(&target).map_err(|e| explain(e, path))?;
        let opened = Connection::open_with_flags(
            &target,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_NOFOLLOW,
        )
        .map_err(anyhow::Error::from)
        .and_then(|conn| {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            match classify(&conn)? {
                Kind::Foreign(why) => bail!(why),
                Kind::Empty => bail!("it holds no table: not a hostbench result store"),
                Kind::Store => check_layout(&conn)?,
            }
            Ok(conn)
        });
        match opened {
            Ok(conn) => Ok(Some(SqliteStore {
                conn,
                path: path.to_path_buf(),
            })),
            Err(e) => Err(explain(e, path)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `FROM … WHERE …` of the rows a filter's `clause` selects, read by their list columns
    /// (`list`, `figures`). A narrowed selection (a host's, a tag's) finds its ids by the
    /// indexes on host, label, tags and time, then reads each row from the covering index
    /// `results_listed` (layout 8). From the table, SQLite would walk each row's JSON to reach
    /// the columns added after it: `report --fleet`, reading a host at a time, took 5 times
    /// as long (20,000 real results over 1,000 hosts).
    fn selected(&self, clause: &str) -> Result<String> {
        if clause.is_empty() {
            // A scan: the planner takes the covering index by itself.
            return Ok("FROM results".into());
        }
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| explain(e.into(), &self.path))?;
        Ok(if version >= migrations::LISTED {
            format!(
                "FROM results INDEXED BY results_listed WHERE id IN (SELECT id FROM results {clause})"
            )
        } else {
            format!("FROM results {clause}")
        })
    }

    /// The hostname and headline figures of the results `sql` selects (id, host, figures).
    fn figures_by(&self, sql: &str, params: Vec<String>) -> Result<HashMap<i64, StoredFigures>> {
        let text = |v: Value| match v {
            Value::Text(t) => Some(t),
            _ => None,
        };
        let rows = self.select(sql, params, |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Value>(1)?,
                r.get::<_, Value>(2)?,
            ))
        })?;
        Ok(rows
            .into_iter()
            .map(|(id, host, figures)| {
                let stored = StoredFigures {
                    hostname: text(host).unwrap_or_default(),
                    figures: text(figures).as_deref().and_then(HeadlineFigures::parse),
                };
                (id, stored)
            })
            .collect())
    }

    /// The rows a statement of `Filter`'s making (`sql`, its text `params`) selects, each
    /// read by `row`; SQLite's errors said in the store's terms.
    fn select<T>(
        &self,
        sql: &str,
        params: Vec<String>,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self
            .conn
            .prepare(sql)
            .map_err(|e| explain(e.into(), &self.path))?;
        let rows = stmt
            .query_map(params_from_iter(params), row)
            .map_err(|e| explain(e.into(), &self.path))?
            .collect::<rusqlite::Result<Vec<T>>>();
        rows.map_err(|e| explain(e.into(), &self.path))
    }
}

/// Where a store at `path` is: the file SQLite opens, its directory held, and whether a file
/// stands there already.
struct Placed {
    file: PathBuf,
    dir: Dir,
    name: std::ffi::OsString,
    exists: bool,
}

/// Finds where the store at `path` is, through a held directory, before SQLite opens it:
///
/// - `storing`: the store's directory (created, mode 0700, if missing), every directory above
///   it, and any a link leads through, must be this user's or root's, and no one else may
///   write the store's own directory (`Trust::Own`): SQLite makes the journal beside the
///   database by name, so a journal another user planted there would be rolled back into the
///   store, and a directory they made first on the path would hold their database. A store
///   file of another user's is refused (they can change it at any time). Then no one but this
///   user or root can change what the path names, and SQLite may open it by name.
/// - reading only: the directories are reached without following another user's link; a file
///   of another user's in a directory anyone can write is refused (they could have prepared
///   it, and may change it under the run).
///
/// At the name: nothing (a store to make), a regular file, or a symbolic link of this user's or
/// root's, followed to where it leads by the same rules; another user's link is refused (in a
/// shared directory it could lead to any file of root's), as is anything but a regular file (a
/// FIFO would hang the open, a device is no store).
fn place(path: &Path, storing: bool) -> Result<Placed> {
    use rustix::fs::FileType;
    let me = euid();
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        let (dir_path, name) = split_file(&current)?;
        let dir = if storing {
            Dir::open_or_create(&dir_path, 0o700, Trust::Own).map_err(|e| {
                anyhow::anyhow!(
                    "refusing to store there: {e:#}; another user could plant its journal or change it"
                )
            })?
        } else {
            Dir::open(&dir_path, Trust::Reach)?
        };
        let file = dir_path.join(&name);
        let st = match dir.stat_at(&name) {
            Ok(st) => st,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Placed {
                    file,
                    dir,
                    name,
                    exists: false,
                })
            }
            Err(e) => bail!("it cannot be looked at: {e}"),
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => {
                if st.st_uid != me && st.st_uid != 0 {
                    bail!(
                        "it is a symbolic link of another user's (uid {}); not followed",
                        st.st_uid
                    );
                }
                let (_, target) = dir
                    .read_link(&name)
                    .map_err(|e| anyhow::anyhow!("it cannot be followed: {e}"))?;
                current = dir_path.join(target);
            }
            FileType::RegularFile => {
                if st.st_uid != me && st.st_uid != 0 {
                    let open_dir = dir.stat().is_ok_and(|d| d.st_mode & 0o002 != 0);
                    if storing || open_dir {
                        bail!(
                            "it belongs to another user (uid {}){}; refusing to use it",
                            st.st_uid,
                            if open_dir {
                                format!(" in {}, a directory anyone can write", dir_path.display())
                            } else {
                                String::new()
                            }
                        );
                    }
                }
                return Ok(Placed {
                    file,
                    dir,
                    name,
                    exists: true,
                });
            }
            other => bail!(
                "it is {}, not a result store",
                crate::platform::dir::type_name(other)
            ),
        }
    }
    bail!("too many levels of symbolic links")
}

/// Decides what the file at `file` is before any connection that could change it: through a
/// read-only connection that takes the file as it lies on disk (`immutable=1`: no lock, no
/// journal rolled back, no write-ahead log read or checkpointed). Another program's database —
/// its mark, its tables or views — is refused byte for byte untouched, as is a file that is
/// not marked as a store and has a write-ahead log or a journal beside it: hostbench's stores
/// never use a write-ahead log, and what a journal or log would change is not known until it
/// is applied. A marked store goes on to the usual open (its own journal, after a crash, is
/// rolled back as SQLite does). A file that cannot be read at rest (another process writing a
/// new store at this moment) is judged by that open, under its lock.
fn refuse_foreign_at_rest(file: &Path) -> Result<()> {
    let side = |suffix: &str| {
        let mut p = file.as_os_str().to_owned();
        p.push(suffix);
        std::fs::symlink_metadata(PathBuf::from(p)).is_ok_and(|m| m.len() > 0)
    };
    let conn = Connection::open_with_flags(
        at_rest_uri(file),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW,
    )?;
    let kind = classify_snapshot(&conn);
    drop(conn);
    match kind {
        Ok(Kind::Foreign(why)) => bail!(why),
        Ok(Kind::Store) => Ok(()),
        Ok(Kind::Empty) | Err(_) if side("-wal") => bail!(
            "it has a write-ahead log beside it ({}-wal) and is not a hostbench result store; left untouched",
            file.display()
        ),
        // A journal beside a file that is not (yet) a store: another hostbench writing the
        // new store now, judged under its lock by the open, or another program's.
        Ok(Kind::Empty) | Err(_) => Ok(()),
    }
}

/// The URI of `file` opened as it lies on disk: `file:PATH?immutable=1`, the path with every
/// byte but the plain ones percent-encoded (a `?`, `#` or `%` in a name would otherwise end
/// it or be read as an escape).
fn at_rest_uri(file: &Path) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in file.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            uri.push(b as char);
        } else {
            let _ = write!(uri, "%{b:02X}");
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// What an SQLite file is, decided by reading only.
#[derive(Debug, PartialEq)]
enum Kind {
    /// No table and no mark: a new or empty database, which may be made a store.
    Empty,
    /// hostbench's: marked, or an earlier hostbench's (its tables and first columns).
    Store,
    /// Anything else, with what says so.
    Foreign(String),
}

/// What the database is, read from one snapshot of it: outside a transaction its mark and its
/// tables are read in a read transaction of their own, as another process may commit a new
/// store's tables and mark between two reads (a new store's tables without its mark look like
/// another program's).
fn classify(conn: &Connection) -> Result<Kind> {
    if !conn.is_autocommit() {
        return classify_snapshot(conn);
    }
    conn.execute_batch("BEGIN DEFERRED")?;
    let kind = classify_snapshot(conn);
    if conn.execute_batch("COMMIT").is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    kind
}

fn classify_snapshot(conn: &Connection) -> Result<Kind> {
    let app: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if app != 0 && app != APPLICATION_ID {
        return Ok(Kind::Foreign(format!(
            "it is another program's database (application_id {app:#x}): not a hostbench result store"
        )));
    }
    if version > migrations::latest() {
        bail!(migrations::too_new(version));
    }
    if app == APPLICATION_ID {
        return Ok(Kind::Store);
    }
    // Views and triggers: no hostbench store ever made one, and a database of only views has
    // no table yet is another program's.
    let mut stmt = conn.prepare(
        "SELECT type || ' ' || name FROM sqlite_master WHERE type IN ('view', 'trigger') ORDER BY name",
    )?;
    let others: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if !others.is_empty() {
        return Ok(Kind::Foreign(format!(
            "it holds {}: not a hostbench result store",
            others.join(", ")
        )));
    }
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )?;
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if tables.is_empty() {
        return Ok(if version == 0 {
            Kind::Empty
        } else {
            Kind::Foreign(format!(
                "it holds no table but is marked by another program (user_version {version}): not a hostbench result store"
            ))
        });
    }
    let others: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|t| !OWN_TABLES.contains(t))
        .collect();
    if !others.is_empty() {
        return Ok(Kind::Foreign(format!(
            "it holds other tables ({}): not a hostbench result store",
            others.join(", ")
        )));
    }
    if !tables.iter().any(|t| t == "results") {
        return Ok(Kind::Foreign(
            "it has no results table: not a hostbench result store".into(),
        ));
    }
    let names = column_names(conn)?;
    if let Some(missing) = COLUMNS[..FIRST_COLUMNS]
        .iter()
        .find(|c| !names.iter().any(|n| n == *c))
    {
        return Ok(Kind::Foreign(format!(
            "its results table has no column {missing}: not a hostbench result store"
        )));
    }
    Ok(Kind::Store)
}

fn column_names(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('results')")?;
    let names = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(names)
}

/// The layout version (`user_version`): the migrations after it applied, and the file marked
/// as hostbench's, in one write transaction, only where needed (a write needs the database's
/// write lock, which another process may hold for a while). Only a file `classify` finds
/// empty or hostbench's is written to; a newer layout is refused.
fn prepare_layout(conn: &Connection) -> Result<()> {
    let marked = |conn: &Connection| -> Result<bool> {
        let app: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
        Ok(app == APPLICATION_ID)
    };
    if let Kind::Foreign(why) = classify(conn)? {
        bail!(why);
    }
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version < migrations::latest() || !marked(conn)? {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let applied = (|| -> Result<()> {
            // Decided again under the lock: another process may have written meanwhile.
            if let Kind::Foreign(why) = classify(conn)? {
                bail!(why);
            }
            let now: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            for m in migrations::after(now) {
                conn.execute_batch(m.sqlite)?;
                if m.version == migrations::FIGURES {
                    fill(
                        conn,
                        &migrations::FILL_FIGURES,
                        migrations::figures_of_stored,
                    )?;
                }
                if m.version == migrations::REFIGURES {
                    fill(
                        conn,
                        &migrations::FILL_REFIGURES,
                        migrations::figures_of_stored,
                    )?;
                }
                if m.version == migrations::KEPT {
                    fill(conn, &migrations::FILL_KEPT, migrations::kept_of_stored)?;
                }
                if m.version == migrations::UUIDS {
                    respell_uuids(conn)?;
                }
                conn.pragma_update(None, "user_version", m.version)?;
            }
            conn.pragma_update(None, "application_id", APPLICATION_ID)?;
            Ok(())
        })();
        match applied {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
    check_layout(conn)
}

/// What a migration adds to the rows stored before it (`migrations::Fill`), each row read
/// once (one row's JSON in memory at a time).
fn fill(
    conn: &Connection,
    what: &migrations::Fill,
    of_stored: fn(i64, &str) -> Option<String>,
) -> Result<()> {
    let ids: Vec<i64> = conn
        .prepare(&format!("SELECT id FROM results WHERE {}", what.missing))?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut read = conn.prepare("SELECT schema_version, result_json FROM results WHERE id = ?1")?;
    let mut write = conn.prepare(&what.write.replace("$", "?"))?;
    for id in ids {
        // A row another program filled with other types is left as it is.
        let Ok((schema, json)) =
            read.query_row([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        else {
            continue;
        };
        if let Some(value) = of_stored(schema, &json) {
            write.execute(rusqlite::params![id, value])?;
        }
    }
    Ok(())
}

/// Layout [`migrations::UUIDS`]: every stored UUID put in its one spelling
/// ([`migrations::respelled`]): renamed, or — another spelling of a run stored already — dropped
/// with its tags and figures.
fn respell_uuids(conn: &Connection) -> Result<()> {
    let rows: Vec<(i64, String)> = conn
        .prepare("SELECT id, coalesce(uuid, '') FROM results")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let spelled = |u: &str| crate::model::canonical_uuid(u).as_deref() == Some(u);
    for (id, uuid) in rows.into_iter().filter(|(_, u)| !spelled(u)) {
        let Ok((json, started, host, machine)) = conn.query_row(
            "SELECT result_json, started_at, host, machine_id FROM results WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            },
        ) else {
            continue;
        };
        // Whether a row holds `target` already, and if so whether it is this run.
        let holder = |target: &str| -> Result<Option<bool>> {
            Ok(conn
                .query_row(
                    sql::SAME_UUID.sqlite(),
                    rusqlite::params![target, id],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, Option<String>>(2)?,
                        ))
                    },
                )
                .optional()?
                .map(|(s, h, m)| s == started && h == host && m == machine))
        };
        let held = match crate::model::canonical_uuid(&uuid) {
            Some(c) => holder(&c)?,
            None => None,
        };
        let drop = |conn: &Connection| -> Result<()> {
            conn.execute(sql::DELETE_TAGS.sqlite(), [id])?;
            conn.execute(sql::DELETE_FIGURES.sqlite(), [id])?;
            conn.execute(sql::DELETE_RESULT.sqlite(), [id])?;
            Ok(())
        };
        match migrations::respelled(&uuid, &json, held) {
            migrations::Respelling::Drop => drop(conn)?,
            migrations::Respelling::Rename { uuid: new, .. } if holder(&new)?.is_some() => {
                drop(conn)?
            }
            migrations::Respelling::Rename { uuid: new, json } => {
                conn.execute(sql::SET_UUID.sqlite(), rusqlite::params![new, json, id])?;
            }
        }
    }
    Ok(())
}

/// One row written and rolled back: a store that opens but cannot take a result (a read-only
/// file, disk or directory, an immutable file, a damaged last page) says so now, before a run
/// is measured, instead of at its end.
fn probe_write(conn: &Connection) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let written = conn.execute(
        "INSERT INTO results (id, started_at, suites, host, headline, incomplete, schema_version, result_json)
         VALUES (-1, '', '', '', '', 1, 0, '')",
        [],
    );
    let rolled_back = conn.execute_batch("ROLLBACK");
    written?;
    rolled_back?;
    Ok(())
}

/// A database whose `results` table lacks one of hostbench's columns is someone else's.
fn check_layout(conn: &Connection) -> Result<()> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > migrations::latest() {
        bail!(migrations::too_new(version));
    }
    let names = column_names(conn)?;
    if names.is_empty() {
        bail!("it has no results table: not a hostbench result store");
    }
    if let Some(missing) = COLUMNS.iter().find(|c| !names.iter().any(|n| n == *c)) {
        bail!("its results table has no column {missing}: not a hostbench result store");
    }
    Ok(())
}

/// SQLite's own words, said in terms of the store.
fn explain(e: anyhow::Error, path: &Path) -> anyhow::Error {
    let sqlite = e.downcast_ref::<rusqlite::Error>();
    let code = sqlite.and_then(|e| e.sqlite_error_code());
    let extended = match sqlite {
        Some(rusqlite::Error::SqliteFailure(f, _)) => f.extended_code,
        _ => 0,
    };
    let what = match code {
        _ if extended == rusqlite::ffi::SQLITE_READONLY_DBMOVED => {
            "the file was deleted or moved while hostbench had it open".to_string()
        }
        Some(ErrorCode::NotADatabase) => "it is not an SQLite database".to_string(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => format!(
            "another process has held it locked for over {} s",
            BUSY_TIMEOUT.as_secs()
        ),
        Some(ErrorCode::DiskFull) => "the disk it is on is full".to_string(),
        Some(ErrorCode::ReadOnly) => "it is read-only".to_string(),
        Some(ErrorCode::CannotOpen) => "it cannot be opened".to_string(),
        Some(ErrorCode::PermissionDenied) => "permission denied".to_string(),
        _ => format!("{e:#}"),
    };
    anyhow::anyhow!("{}: {what}", path.display())
}

impl ResultStore for SqliteStore {
    /// The row and its tags in one transaction: a result is stored whole or not at all.
    fn save(&mut self, result: &RunResult, headline: &str) -> Result<i64> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| explain(e.into(), &path))?;
        let id: i64 = tx
            .query_row(
                sql::INSERT_RESULT.sqlite(),
                params_from_iter(row_values(result, headline)?),
                |r| r.get(0),
            )
            .map_err(|e| explain(e.into(), &path))?;
        write_beside(&tx, id, result).map_err(|e| explain(e, &path))?;
        tx.commit().map_err(|e| explain(e.into(), &path))?;
        Ok(id)
    }

    fn replace(&mut self, id: i64, result: &RunResult, headline: &str) -> Result<()> {
        let path = self.path.clone();
        let values = std::iter::once(Value::Integer(id)).chain(row_values(result, headline)?);
        let tx = self
            .conn
            .transaction()
            .map_err(|e| explain(e.into(), &path))?;
        let changed = tx
            .execute(sql::UPDATE_RESULT.sqlite(), params_from_iter(values))
            .map_err(|e| explain(e.into(), &path))?;
        if changed != 1 {
            bail!("result {id} is no longer in {}", path.display());
        }
        write_beside(&tx, id, result).map_err(|e| explain(e, &path))?;
        tx.commit().map_err(|e| explain(e.into(), &path))?;
        Ok(())
    }

    /// Every row; a row whose columns do not hold what hostbench wrote is listed with what is
    /// wrong with it, so one bad row does not hide the others.
    fn list(&self, filter: &Filter) -> Result<Vec<StoredEntry>> {
        let (clause, params) = filter.sql(|n| format!("?{n}"));
        let rows = self.select(&list_sql(&self.selected(&clause)?), params, |r| {
            (0..7)
                .map(|i| r.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows.iter().map(|v| entry(v)).collect())
    }

    fn hosts(&self, filter: &Filter) -> Result<Vec<Text>> {
        let (sql, params) = filter.hosts_sql(|n| format!("?{n}"));
        let mut hosts: Vec<Text> = self
            .select(&sql, params, |r| r.get::<_, Value>(0))?
            .into_iter()
            .filter_map(|v| match v {
                Value::Text(t) => Some(Text::new(t)),
                _ => None,
            })
            .collect();
        hosts.sort_unstable();
        Ok(hosts)
    }

    fn figures(&self, filter: &Filter) -> Result<HashMap<i64, StoredFigures>> {
        let (clause, params) = filter.sql(|n| format!("?{n}"));
        let sql = format!("SELECT {FIGURE_COLUMNS} {}", self.selected(&clause)?);
        self.figures_by(&sql, params)
    }

    fn figures_of(&self, id: i64) -> Result<Option<StoredFigures>> {
        let sql = format!("SELECT {FIGURE_COLUMNS} FROM results WHERE id = CAST(?1 AS INTEGER)");
        Ok(self.figures_by(&sql, vec![id.to_string()])?.remove(&id))
    }

    fn kept(&self, filter: &Filter) -> Result<HashMap<i64, Kept>> {
        // A store of an earlier layout, opened to be read only, has no table yet.
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| explain(e.into(), &self.path))?;
        if version < migrations::KEPT {
            return Ok(HashMap::new());
        }
        let (sql, params) = filter.kept_sql(|n| format!("?{n}"));
        let rows = self.select(&sql, params, |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Value>(1)?))
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, kept)| match kept {
                Value::Text(t) => Some((id, Kept::parse(&t)?)),
                _ => None,
            })
            .collect())
    }

    fn tags(&self, filter: &Filter) -> Result<HashMap<i64, BTreeMap<String, String>>> {
        let (sql, params) = filter.tags_sql(|n| format!("?{n}"));
        let rows = self.select(&sql, params, |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut tags: HashMap<i64, BTreeMap<String, String>> = HashMap::new();
        for (id, k, v) in rows {
            tags.entry(id).or_default().insert(k, v);
        }
        Ok(tags)
    }

    fn group(&self, group: i64) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn
            .prepare(sql::GROUP_IDS.sqlite())
            .map_err(|e| explain(e.into(), &self.path))?;
        let ids = stmt
            .query_map([group], |r| r.get(0))
            .map_err(|e| explain(e.into(), &self.path))?
            .collect::<rusqlite::Result<Vec<i64>>>()
            .map_err(|e| explain(e.into(), &self.path))?;
        Ok(ids)
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    /// How long a statement waits for another process that holds the database.
    fn set_busy_timeout(&self, timeout: Duration) -> Result<()> {
        Ok(self.conn.busy_timeout(timeout)?)
    }

    fn fallback_dir(&self) -> Option<PathBuf> {
        self.path.parent().map(Path::to_path_buf)
    }

    fn load(&self, id: i64) -> Result<Option<RunResult>> {
        let row: Option<(Value, Value, Option<String>)> = self
            .conn
            .query_row(sql::RESULT_JSON.sqlite(), [id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2).unwrap_or(None)))
            })
            .optional()
            .map_err(|e| explain(e.into(), &self.path))?;
        let Some((schema, json, uuid)) = row else {
            return Ok(None);
        };
        let Value::Integer(schema) = schema else {
            bail!("result {id} is malformed in the store: its schema_version is not a number");
        };
        if schema != i64::from(SCHEMA_VERSION) {
            bail!("result {id} has schema version {schema}; this hostbench reads version {SCHEMA_VERSION}");
        }
        let Value::Text(json) = json else {
            bail!("result {id} is malformed in the store: its result_json is not text");
        };
        let mut result: RunResult = serde_json::from_str(&json)
            .map_err(|e| anyhow::anyhow!("result {id} is malformed in the store: {e}"))?;
        // A result stored before it had a UUID has the one the store gave it.
        result.uuid = result.uuid.or(uuid);
        Ok(Some(result))
    }

    fn find(&self, uuid: &str) -> Result<Option<i64>> {
        self.conn
            .query_row(sql::ID_OF_UUID.sqlite(), [uuid], |r| r.get(0))
            .optional()
            .map_err(|e| explain(e.into(), &self.path))
    }

    fn identity(&self, of: IdentityOf<'_>) -> Result<Option<Identity>> {
        let sql = format!(
            "SELECT {IDENTITY_COLUMNS} FROM results WHERE {}",
            of.condition("?1")
        );
        let read = |r: &rusqlite::Row<'_>| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, bool>(5)?,
                r.get::<_, Option<i64>>(6)?,
            ))
        };
        let row = match of {
            IdentityOf::Id(id) => self.conn.query_row(&sql, [id], read),
            IdentityOf::Uuid(u) => self.conn.query_row(&sql, [u], read),
        }
        .optional();
        // A row of other types than hostbench writes is read whole instead.
        Ok(match row {
            Ok(Some((id, uuid, started, host, machine, incomplete, group))) => {
                Identity::of(id, uuid, &started, host, machine, incomplete, group, false)
            }
            _ => None,
        })
    }

    fn record_run(&mut self, state: &RunState) -> Result<bool> {
        let time = |t: Option<DateTime<Utc>>| t.map(|t| t.to_rfc3339());
        let written = self
            .conn
            .execute(
                "INSERT INTO runs (uuid, host, host_label, command, started_at, ended_at, outcome, why, stored, tags, owner)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (uuid) DO UPDATE SET ended_at = excluded.ended_at,
                     outcome = excluded.outcome, why = excluded.why, stored = excluded.stored
                 WHERE runs.ended_at IS NULL",
                rusqlite::params![
                    state.uuid,
                    state.host.raw(),
                    state.host_label.as_ref().map(Text::raw),
                    state.command.raw(),
                    state.started_at.to_rfc3339(),
                    time(state.ended_at),
                    state.outcome.name(),
                    state.why.as_ref().map(Text::raw),
                    state.stored.as_ref().map(Text::raw),
                    state.tags_json(),
                    // A state pulled from a fleet store keeps the login that recorded it.
                    state.owner.as_ref().map(Text::raw),
                ],
            )
            .map_err(|e| explain(e.into(), &self.path))?;
        Ok(written > 0)
    }

    fn runs(&self, filter: &Filter, which: Runs) -> Result<Vec<RunState>> {
        // A tags column that is not JSON is no match (json_each would fail the whole read).
        let tag = |k: &str, v: &str| {
            format!(
                "CASE WHEN json_valid(tags) THEN EXISTS (SELECT 1 FROM json_each(tags) j WHERE j.key = {k} AND j.value = {v}) ELSE 0 END"
            )
        };
        // A store of a layout before 11, read without migrating it, records no runs.
        if !self.has_table("runs")? {
            return Ok(Vec::new());
        }
        let placeholder = |n| format!("?{n}");
        let (sql, params) = filter.runs_sql(which, placeholder, tag, "julianday(started_at)");
        let rows = self.select(&sql, params, |r| {
            (0..11)
                .map(|i| r.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows
            .into_iter()
            .filter_map(run_columns)
            .filter_map(super::RunColumns::state)
            .collect())
    }

    fn deletable(&self, id: i64) -> Result<()> {
        let there = self
            .conn
            .query_row("SELECT 1 FROM results WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map_err(|e| explain(e.into(), &self.path))?;
        if there.is_none() {
            return Err(UsageError::new(format!(
                "no stored result with id {id} in {}",
                self.path.display()
            ))
            .into());
        }
        Ok(())
    }

    fn delete_many(&mut self, ids: &[i64]) -> Result<usize> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| explain(e.into(), &path))?;
        let mut gone = 0;
        {
            let mut tags = tx.prepare(sql::DELETE_TAGS.sqlite())?;
            let mut figures = tx.prepare(sql::DELETE_FIGURES.sqlite())?;
            let mut results = tx.prepare(sql::DELETE_RESULT.sqlite())?;
            for id in ids {
                tags.execute([id])
                    .and_then(|_| figures.execute([id]))
                    .and_then(|_| results.execute([id]))
                    .map(|n| gone += n)
                    .map_err(|e| explain(e.into(), &path))?;
            }
        }
        tx.commit().map_err(|e| explain(e.into(), &path))?;
        Ok(gone)
    }

    fn delete_runs(&mut self, uuids: &[String]) -> Result<usize> {
        if uuids.is_empty() {
            return Ok(0);
        }
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| explain(e.into(), &path))?;
        let mut gone = 0;
        {
            let mut runs = tx.prepare("DELETE FROM runs WHERE uuid = ?1")?;
            for uuid in uuids {
                gone += runs.execute([uuid]).map_err(|e| explain(e.into(), &path))?;
            }
        }
        tx.commit().map_err(|e| explain(e.into(), &path))?;
        Ok(gone)
    }

    fn retired(&self) -> Result<Vec<(crate::text::Text, DateTime<Utc>)>> {
        // A store of a layout before 14, read without migrating it, retired no host.
        if !self.has_table("retired_hosts")? {
            return Ok(Vec::new());
        }
        let rows = self.select(super::RETIRED, Vec::new(), |r| {
            Ok((r.get::<_, Value>(0)?, r.get::<_, Value>(1)?))
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|row| match row {
                (Value::Text(name), Value::Text(at)) => super::retired_row(name, &at),
                _ => None,
            })
            .collect())
    }

    fn set_retired(&mut self, host: &str, at: Option<DateTime<Utc>>) -> Result<bool> {
        let changed = match at {
            Some(at) => self
                .conn
                .execute(sql::RETIRE.sqlite(), [host, &at.to_rfc3339()]),
            None => self.conn.execute(sql::UNRETIRE.sqlite(), [host]),
        }
        .map_err(|e| explain(e.into(), &self.path))?;
        Ok(changed > 0)
    }

    fn delete(&mut self, id: i64) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| explain(e.into(), &path))?;
        tx.execute(sql::DELETE_TAGS.sqlite(), [id])
            .and_then(|_| tx.execute(sql::DELETE_FIGURES.sqlite(), [id]))
            .map_err(|e| explain(e.into(), &path))?;
        let gone = tx
            .execute(sql::DELETE_RESULT.sqlite(), [id])
            .map_err(|e| explain(e.into(), &path))?;
        if gone != 1 {
            return Err(UsageError::new(format!(
                "no stored result with id {id} in {}",
                path.display()
            ))
            .into());
        }
        tx.commit().map_err(|e| explain(e.into(), &path))?;
        Ok(())
    }
}

/// A `runs` row's columns as `Filter::latest_runs_sql` selects them; None where one holds
/// another type than hostbench writes (the row is left out).
fn run_columns(v: Vec<Value>) -> Option<super::RunColumns> {
    let text = |v: &Value| match v {
        Value::Text(t) => Some(t.clone()),
        _ => None,
    };
    let maybe = |v: &Value| match v {
        Value::Null => Some(None),
        Value::Text(t) => Some(Some(t.clone())),
        _ => None,
    };
    Some(super::RunColumns {
        uuid: text(&v[0])?,
        host: text(&v[1])?,
        host_label: maybe(&v[2])?,
        command: text(&v[3])?,
        started_at: text(&v[4])?,
        ended_at: maybe(&v[5])?,
        outcome: text(&v[6])?,
        why: maybe(&v[7])?,
        stored: maybe(&v[8])?,
        tags: text(&v[9])?,
        owner: maybe(&v[10])?,
    })
}

/// A result's tags and its `result_figures` row (layout 9), in place of those it had.
fn write_beside(conn: &Connection, id: i64, result: &RunResult) -> Result<()> {
    conn.execute(sql::DELETE_FIGURES.sqlite(), [id])?;
    conn.execute(
        sql::INSERT_FIGURES.sqlite(),
        rusqlite::params![id, serde_json::to_string(&Kept::of(result))?],
    )?;
    conn.execute(sql::DELETE_TAGS.sqlite(), [id])?;
    for (k, v) in &result.tags {
        conn.execute(
            sql::INSERT_TAG.sqlite(),
            rusqlite::params![id, k.raw(), v.raw()],
        )?;
    }
    Ok(())
}

/// A result's columns after `id`, in table order; a result without a UUID (of an earlier
/// version) is named after its JSON.
fn row_values(result: &RunResult, headline: &str) -> Result<[Value; 12]> {
    let text = |s: &Option<Text>| {
        s.as_ref()
            .map_or(Value::Null, |t| Value::Text(t.raw().to_string()))
    };
    let json = serde_json::to_string(result)?;
    let uuid = result
        .uuid
        .clone()
        .unwrap_or_else(|| crate::model::derived_uuid(&json));
    Ok([
        Value::Text(result.started_at.to_rfc3339()),
        Value::Text(result.suite_names()),
        Value::Text(result.environment.host.hostname.raw().to_string()),
        Value::Text(headline.to_string()),
        Value::Integer(i64::from(result.incomplete)),
        Value::Integer(i64::from(result.schema_version)),
        Value::Text(json),
        text(&result.host_label),
        text(&result.environment.host.machine_id),
        Value::Text(uuid),
        result
            .repeat
            .map_or(Value::Null, |r| Value::Integer(r.group)),
        Value::Text(serde_json::to_string(&HeadlineFigures::of(result))?),
    ])
}

/// The statement of `results list`, `from` the rows (`SqliteStore::selected`): the columns
/// of the `results_listed` index alone (layout 8), so a scan never reads a result's JSON.
fn list_sql(from: &str) -> String {
    format!(
        "SELECT id, started_at, suites, coalesce(host_label, host), headline, incomplete, owner {from} ORDER BY id"
    )
}

/// One `results list` row from the columns as stored.
fn entry(v: &[Value]) -> StoredEntry {
    let mut problems = Vec::new();
    let id = match &v[0] {
        Value::Integer(i) => *i,
        _ => 0,
    };
    let mut text = |i: usize, name: &str| match ValueRef::from(&v[i]) {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        other => {
            problems.push(format!("{name} is {}", type_name(other)));
            String::new()
        }
    };
    let started = text(1, "started_at");
    let suites = text(2, "suites");
    let host = text(3, "host");
    let headline = text(4, "headline");
    let incomplete = match &v[5] {
        Value::Integer(0) => false,
        Value::Integer(1) => true,
        other => {
            problems.push(format!(
                "incomplete is {}",
                type_name(ValueRef::from(other))
            ));
            false
        }
    };
    let started_at = match DateTime::parse_from_rfc3339(&started) {
        Ok(t) => Some(t.with_timezone(&Utc)),
        Err(_) => {
            if !started.is_empty() {
                problems.push(format!("started_at {started:?} is not a time"));
            }
            None
        }
    };
    StoredEntry {
        id,
        started_at,
        suites: suites.into(),
        host: host.into(),
        headline: headline.into(),
        incomplete,
        // hostbench writes none into SQLite (a file has no logins); one another program put
        // there is still shown for what it is.
        owner: match &v[6] {
            Value::Text(t) => Some(t.into()),
            _ => None,
        },
        problem: (!problems.is_empty()).then(|| problems.join(", ").into()),
    }
}

fn type_name(v: ValueRef<'_>) -> &'static str {
    match v {
        ValueRef::Null => "empty (NULL)",
        ValueRef::Integer(_) => "a number",
        ValueRef::Real(_) => "a real number",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "a blob",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(host: &str, incomplete: bool) -> RunResult {
        RunResult::example(host, incomplete)
    }

    #[test]
    fn a_store_of_an_earlier_layout_is_migrated_and_keeps_its_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        // A store as hostbench of layout 1 left it, with one result.
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(migrations::MIGRATIONS[0].sqlite)
                .unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            let mut r = result("old", false);
            r.repeat = Some(crate::model::Repeat {
                group: 1,
                run: 1,
                of: 2,
            });
            // Runs measured, so it has figures to keep.
            if let crate::model::SuiteResult::Noise(n) = &mut r.suites[0] {
                n.runs = (0..5)
                    .map(|i| crate::model::noise::NoiseRun {
                        time_ns: 10_000_000 + i * 1000,
                        ..Default::default()
                    })
                    .collect();
                n.summary = crate::model::noise::summarize(&n.runs, 1000);
            }
            conn.execute(
                "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json)
                 VALUES (?1, 'noise', 'old', 'h', 0, ?2, ?3)",
                rusqlite::params![
                    r.started_at.to_rfc3339(),
                    SCHEMA_VERSION,
                    serde_json::to_string(&r).unwrap()
                ],
            )
            .unwrap();
        }
        let mut store = SqliteStore::open(&path).unwrap();
        let version: i64 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, migrations::latest());
        // Its repeat group was read out of its JSON into the indexed column, and its headline
        // figures computed into theirs, as a result stored now has them.
        assert_eq!(store.group(1).unwrap(), [1]);
        let figures: String = store
            .conn
            .query_row("SELECT figures FROM results WHERE id = 1", [], |r| r.get(0))
            .unwrap();
        let stored = store.load(1).unwrap().unwrap();
        assert_eq!(
            figures,
            serde_json::to_string(&crate::model::headline::HeadlineFigures::of(&stored)).unwrap()
        );
        // And every figure, its repeat group and noise floor into `result_figures` (layout 9).
        let kept = store.kept(&Filter::default()).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[&1], Kept::of(&stored));
        assert_eq!(kept[&1].repeat_group, Some(1));
        assert!(!kept[&1].figures.is_empty());
        // The old result was given a UUID, shaped as one, kept from one load to the next, and
        // found by it.
        let old = store.load(1).unwrap().unwrap();
        let uuid = old.uuid.clone().unwrap();
        assert_eq!(uuid::Uuid::parse_str(&uuid).unwrap().get_version_num(), 4);
        assert_eq!(store.load(1).unwrap().unwrap().uuid, Some(uuid.clone()));
        assert_eq!(store.find(&uuid).unwrap(), Some(1));
        // Put of that same result again stores nothing new.
        assert_eq!(
            store.put(&old, "h").unwrap(),
            (1, crate::store::Put::AlreadyThere)
        );
        let mut tagged = result("new", false);
        tagged.tags.insert("kernel".into(), "A".into());
        let id = store.save(&tagged, "h").unwrap();
        let filter = Filter {
            tags: vec![("kernel".into(), "A".into())],
            ..Filter::default()
        };
        let listed = store.list(&filter).unwrap();
        assert_eq!(listed.iter().map(|e| e.id).collect::<Vec<_>>(), [id]);
        assert_eq!(store.list(&Filter::default()).unwrap().len(), 2);
    }

    /// Layout 13: an index result stored under layout 12 kept the old kind ("1 copy, 12
    /// tests" whatever ran); upgraded, its stored figures say what it measured.
    #[test]
    fn layout_13_gives_stored_index_results_the_kind_of_what_they_measured() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v12.sqlite");
        let r: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/smoke-a.json")).unwrap();
        let id = SqliteStore::open(&path).unwrap().save(&r, "h").unwrap();
        let old = r#"{"values":[{"value":1.0,"kind":"1 copy, 12 tests","note":"n"}]}"#;
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute(
                "UPDATE results SET figures = ?1 WHERE id = ?2",
                rusqlite::params![old, id],
            )
            .unwrap();
            conn.pragma_update(None, "user_version", migrations::REFIGURES - 1)
                .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let figures: String = store
            .conn
            .query_row("SELECT figures FROM results WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap();
        let now = serde_json::to_string(&crate::model::headline::HeadlineFigures::of(&r)).unwrap();
        assert_eq!(figures, now);
        assert!(
            figures.contains("1 copy, 3 of 12 tests: dhry2reg syscall spawn, 0.2 s a test"),
            "{figures}"
        );
    }

    #[test]
    fn saves_lists_and_loads_in_a_real_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/results.sqlite");
        let mut store = SqliteStore::open(&path).unwrap();
        let id1 = store
            .save(&result("alpha", false), &format!("headline of {}", "alpha"))
            .unwrap();
        let id2 = store
            .save(&result("beta", true), &format!("headline of {}", "beta"))
            .unwrap();
        assert_ne!(id1, id2);
        drop(store);

        let store = SqliteStore::open(&path).unwrap();
        let list = store.list(&Filter::default()).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!((list[0].host.raw(), list[0].incomplete), ("alpha", false));
        assert_eq!((list[1].host.raw(), list[1].incomplete), ("beta", true));
        assert_eq!(list[1].suites, "noise");
        assert_eq!(list[0].headline, "headline of alpha");
        let back = store.load(id2).unwrap().unwrap();
        assert_eq!(back.environment.host.hostname, "beta");
        assert!(back.incomplete);
        assert!(store.load(9999).unwrap().is_none());

        let mut store = store;
        store
            .replace(id2, &result("gamma", false), "headline of gamma")
            .unwrap();
        let list = store.list(&Filter::default()).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!((list[1].host.raw(), list[1].incomplete), ("gamma", false));
        assert!(store.replace(9999, &result("x", false), "x").is_err());
        // What `history` reads follows a replaced result: one row, the new one's.
        let mut gamma = result("gamma", false);
        gamma.started_at += chrono::Duration::hours(1);
        store.replace(id2, &gamma, "headline of gamma").unwrap();
        let kept = store.kept(&Filter::default()).unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[&id2], Kept::of(&gamma));
        // --until: the results started up to then.
        let until = Filter {
            until: Some(gamma.started_at - chrono::Duration::minutes(1)),
            ..Filter::default()
        };
        let listed: Vec<i64> = store.list(&until).unwrap().iter().map(|e| e.id).collect();
        assert_eq!(listed, [id1]);
        assert_eq!(
            store.kept(&until).unwrap().keys().collect::<Vec<_>>(),
            [&id1]
        );
    }

    #[test]
    fn a_store_of_an_earlier_layout_read_only_keeps_no_figures_to_read() {
        // `history` opens a store to read only, which migrates nothing: a store of layout 8
        // has no `result_figures`, and its results are read whole.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v8.sqlite");
        let mut store = SqliteStore::open(&path).unwrap();
        store.save(&result("alpha", false), "h").unwrap();
        store
            .conn
            .execute_batch("DROP TABLE result_figures; PRAGMA user_version = 8;")
            .unwrap();
        drop(store);
        let store = SqliteStore::open_read_only(&path).unwrap().unwrap();
        assert!(store.kept(&Filter::default()).unwrap().is_empty());
        assert_eq!(store.list(&Filter::default()).unwrap().len(), 1);
    }

    #[test]
    fn a_repeat_group_is_found_by_its_first_runs_id() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.sqlite")).unwrap();
        let lone = store
            .save(&result("h", false), &format!("headline of {}", "h"))
            .unwrap();
        let mut ids = Vec::new();
        for run in 1..=3 {
            let mut r = result("h", false);
            r.repeat = Some(crate::model::Repeat {
                group: ids.first().copied().unwrap_or(lone + 1),
                run,
                of: 3,
            });
            ids.push(store.save(&r, &format!("run {run}")).unwrap());
        }
        assert_eq!(store.group(ids[0]).unwrap(), ids);
        assert!(store.group(lone).unwrap().is_empty());
        let listed = store.list(&Filter::default()).unwrap();
        assert_eq!(listed[2].headline, "run 2", "{listed:?}");
    }

    #[test]
    fn another_schema_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.sqlite")).unwrap();
        let id = store
            .save(&result("h", false), &format!("headline of {}", "h"))
            .unwrap();
        store
            .conn
            .execute("UPDATE results SET schema_version = 99 WHERE id = ?1", [id])
            .unwrap();
        let err = store.load(id).unwrap_err().to_string();
        assert!(err.contains("schema version 99"), "{err}");
    }

    #[test]
    fn a_directory_is_not_a_database() {
        let dir = tempfile::tempdir().unwrap();
        assert!(SqliteStore::open(dir.path()).is_err());
    }

    #[test]
    fn read_only_open_creates_nothing_and_reads_a_read_only_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        assert!(SqliteStore::open_read_only(&path).unwrap().is_none());
        assert!(!path.exists());
        let id = SqliteStore::open(&path)
            .unwrap()
            .save(&result("h", false), "headline")
            .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let store = SqliteStore::open_read_only(&path).unwrap().unwrap();
        assert_eq!(store.list(&Filter::default()).unwrap().len(), 1);
        assert!(store.load(id).unwrap().is_some());
    }

    #[test]
    fn one_malformed_row_is_flagged_and_the_others_listed() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.sqlite")).unwrap();
        store
            .save(&result("a", false), &format!("headline of {}", "a"))
            .unwrap();
        let bad = store
            .save(&result("b", false), &format!("headline of {}", "b"))
            .unwrap();
        store
            .save(&result("c", false), &format!("headline of {}", "c"))
            .unwrap();
        store
            .conn
            .execute(
                "UPDATE results SET host = X'00ff', started_at = 'yesterday' WHERE id = ?1",
                [bad],
            )
            .unwrap();
        let list = store.list(&Filter::default()).unwrap();
        assert_eq!(list.len(), 3);
        assert!(list[0].problem.is_none() && list[2].problem.is_none());
        let p = list[1].problem.as_ref().unwrap().raw();
        assert!(
            p.contains("host is a blob") && p.contains("yesterday"),
            "{p}"
        );
        store
            .conn
            .execute(
                "UPDATE results SET result_json = X'00' WHERE id = ?1",
                [bad],
            )
            .unwrap();
        let err = store.load(bad).unwrap_err().to_string();
        assert!(err.contains("result_json is not text"), "{err}");
    }

    #[test]
    fn another_programs_database_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE results (id INTEGER PRIMARY KEY, x TEXT);")
            .unwrap();
        drop(conn);
        for err in [
            SqliteStore::open(&path).err().unwrap(),
            SqliteStore::open_read_only(&path).err().unwrap(),
        ] {
            let err = format!("{err:#}");
            assert!(err.contains("not a hostbench result store"), "{err}");
        }
        // Nothing was written to it: not a column, not a mark.
        let conn = Connection::open(&path).unwrap();
        let (app, version): (i32, i64) = (
            conn.pragma_query_value(None, "application_id", |r| r.get(0))
                .unwrap(),
            conn.pragma_query_value(None, "user_version", |r| r.get(0))
                .unwrap(),
        );
        assert_eq!((app, version), (0, 0));
        assert_eq!(column_names(&conn).unwrap(), ["id", "x"]);
        let junk = dir.path().join("junk.sqlite");
        std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
        let err = format!("{:#}", SqliteStore::open(&junk).err().unwrap());
        assert!(err.contains("not an SQLite database"), "{err}");
    }

    #[test]
    fn a_newer_layout_is_refused_and_the_file_kept() {
        // (A file this open created is removed on failure: tests/faults.rs fills a disk.)
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("newer.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        let err = format!("{:#}", SqliteStore::open(&path).err().unwrap());
        assert!(err.contains("newer hostbench"), "{err}");
        assert!(path.exists(), "an existing database is never removed");
    }

    /// The file's bytes, to show that an open changed nothing.
    fn bytes(path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap()
    }

    /// `path` and its `-wal` and `-journal`, as bytes (None for a side file not there).
    fn files(path: &Path) -> [Option<Vec<u8>>; 3] {
        ["", "-wal", "-journal"].map(|suffix| {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            std::fs::read(PathBuf::from(p)).ok()
        })
    }

    /// Copies `from` and its side files to `to`, as a crash would leave them.
    fn copy_as_crashed(from: &Path, to: &Path) {
        for suffix in ["", "-wal", "-journal"] {
            let (mut a, mut b) = (from.as_os_str().to_owned(), to.as_os_str().to_owned());
            a.push(suffix);
            b.push(suffix);
            if Path::new(&a).exists() {
                std::fs::copy(&a, &b).unwrap();
            }
        }
    }

    #[test]
    fn layout_10_puts_every_stored_uuid_in_its_one_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        let uuid = "5f0c2d8e-3a7b-4c1e-9d2f-6b8a1e4c7d01";
        let with = |host: &str, u: &str| {
            let mut r = result(host, false);
            r.uuid = Some(u.to_string());
            r
        };
        let same_run = with("alpha", uuid);
        let mut store = SqliteStore::open(&path).unwrap();
        // As rows of a store before layout 10 were: each spelling its own row.
        let kept = store.save(&same_run, "h").unwrap();
        let mut copy = same_run.clone();
        copy.uuid = Some(uuid.to_uppercase());
        let dropped = store.save(&copy, "h").unwrap();
        let squatter = store
            .save(&with("beta", &format!("{{{uuid}}}")), "h")
            .unwrap();
        let lone = "7a1e2b3c-4d5e-4f60-8a71-92b3c4d5e6f7";
        let renamed = store
            .save(&with("gamma", &lone.replace('-', "").to_uppercase()), "h")
            .unwrap();
        store.conn.pragma_update(None, "user_version", 9).unwrap();
        drop(store);
        let store = SqliteStore::open(&path).unwrap();
        let ids: Vec<i64> = store
            .list(&Filter::default())
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect();
        // The same run twice is one run; another run under a copied UUID keeps its own.
        assert_eq!(ids, [kept, squatter, renamed]);
        assert_eq!(store.find(uuid).unwrap(), Some(kept));
        assert_eq!(store.find(lone).unwrap(), Some(renamed));
        let moved = store.load(squatter).unwrap().unwrap().uuid.unwrap();
        assert_ne!(moved.to_lowercase().replace(['{', '}'], ""), uuid);
        assert_eq!(
            crate::model::canonical_uuid(&moved).as_deref(),
            Some(moved.as_str())
        );
        assert_eq!(store.find(&moved).unwrap(), Some(squatter));
        assert!(store.load(dropped).unwrap().is_none());
    }

    #[test]
    fn another_programs_log_journal_or_views_are_judged_at_rest_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        // A database in write-ahead-log mode whose tables are still only in its log, as a
        // program that crashed leaves it: opened read-write, it would be checkpointed.
        let live = dir.path().join("live-wal.db");
        let conn = Connection::open(&live).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
             CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('theirs');",
        )
        .unwrap();
        let wal = dir.path().join("wal.db");
        copy_as_crashed(&live, &wal);
        drop(conn);
        // A database with a hot journal: a transaction in progress when it was copied.
        let live = dir.path().join("live-journal.db");
        let conn = Connection::open(&live).unwrap();
        conn.execute_batch(
            "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('theirs');
             PRAGMA cache_size = 1; BEGIN; UPDATE notes SET body = 'half-done';",
        )
        .unwrap();
        conn.execute_batch("INSERT INTO notes SELECT hex(randomblob(900)) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200) SELECT x FROM c);").unwrap();
        let journal = dir.path().join("journal.db");
        copy_as_crashed(&live, &journal);
        drop(conn);
        // A database of views only: no table, yet another program's.
        let views = dir.path().join("views.db");
        Connection::open(&views)
            .unwrap()
            .execute_batch("CREATE VIEW answer AS SELECT 42;")
            .unwrap();
        for path in [&wal, &journal, &views] {
            let before = files(path);
            assert!(before[0].is_some());
            let err = format!("{:#}", SqliteStore::open(path).err().unwrap());
            assert!(
                err.contains("not a hostbench result store"),
                "{}: {err}",
                path.display()
            );
            let err = format!("{:#}", SqliteStore::open_read_only(path).err().unwrap());
            assert!(
                err.contains("not a hostbench result store"),
                "{}: {err}",
                path.display()
            );
            assert!(files(path) == before, "{} was changed", path.display());
        }
        assert!(files(&wal)[1].is_some() && files(&journal)[2].is_some());
    }

    #[test]
    fn at_rest_uris_escape_what_sqlite_would_read_as_a_query_or_an_escape() {
        assert_eq!(
            at_rest_uri(Path::new("/a b/r?x#y%z.sqlite")),
            "file:/a%20b/r%3Fx%23y%25z.sqlite?immutable=1"
        );
    }

    #[test]
    fn a_database_with_other_tables_is_refused_byte_for_byte_untouched() {
        let dir = tempfile::tempdir().unwrap();
        for (name, sql) in [
            (
                "app.db",
                "CREATE TABLE results (id INTEGER PRIMARY KEY, score REAL);",
            ),
            (
                "notes.db",
                "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);",
            ),
            ("marked.db", "PRAGMA application_id = 1234;"),
            ("versioned.db", "PRAGMA user_version = 2;"),
        ] {
            let path = dir.path().join(name);
            Connection::open(&path).unwrap().execute_batch(sql).unwrap();
            let before = bytes(&path);
            let err = format!("{:#}", SqliteStore::open(&path).err().unwrap());
            assert!(
                err.contains("not a hostbench result store"),
                "{name}: {err}"
            );
            let err = format!("{:#}", SqliteStore::open_read_only(&path).err().unwrap());
            assert!(
                err.contains("not a hostbench result store"),
                "{name}: {err}"
            );
            assert_eq!(bytes(&path), before, "{name} was changed");
        }
    }

    #[test]
    fn a_new_or_empty_file_becomes_a_marked_store_and_an_old_store_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.sqlite");
        std::fs::write(&empty, b"").unwrap();
        for path in [dir.path().join("new.sqlite"), empty] {
            let store = SqliteStore::open(&path).unwrap();
            let app: i32 = store
                .conn
                .pragma_query_value(None, "application_id", |r| r.get(0))
                .unwrap();
            assert_eq!(app, APPLICATION_ID);
        }
        // A store that an earlier hostbench left unmarked (its tables, layout 8).
        let old = dir.path().join("old.sqlite");
        SqliteStore::open(&old)
            .unwrap()
            .conn
            .execute_batch(
                "DROP TABLE result_figures; DROP TABLE runs; DROP TABLE retired_hosts; PRAGMA user_version = 8; PRAGMA application_id = 0;",
            )
            .unwrap();
        assert!(SqliteStore::open_read_only(&old).unwrap().is_some());
        let store = SqliteStore::open(&old).unwrap();
        let app: i32 = store
            .conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .unwrap();
        assert_eq!(app, APPLICATION_ID);
        let version: i64 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, migrations::latest());
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("store.fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for path in [fifo.as_path(), Path::new("/dev/null")] {
            let err = format!("{:#}", SqliteStore::open(path).err().unwrap());
            assert!(err.contains("not a result store"), "{err}");
            let err = format!("{:#}", SqliteStore::open_read_only(path).err().unwrap());
            assert!(err.contains("not a result store"), "{err}");
        }
    }

    #[test]
    fn a_store_that_cannot_be_written_is_refused_when_opened_for_storing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        SqliteStore::open(&path).unwrap();
        // SAFETY: no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        // Root writes a file whatever its mode: an immutable one it cannot.
        let chattr = |flag: &str| {
            std::process::Command::new("chattr")
                .arg(flag)
                .arg(&path)
                .status()
                .is_ok_and(|s| s.success())
        };
        if root {
            assert!(chattr("+i"), "chattr +i failed");
        } else {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        }
        let refused = SqliteStore::open(&path).err().map(|e| format!("{e:#}"));
        let readable = SqliteStore::open_read_only(&path).map(|s| s.is_some());
        if root {
            chattr("-i");
        }
        let err = refused.expect("an unwritable store was opened for storing");
        assert!(err.contains("read-only"), "{err}");
        assert!(readable.unwrap(), "it can still be read");
    }

    #[test]
    fn a_store_deleted_while_open_is_said_to_be_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        let mut store = SqliteStore::open(&path).unwrap();
        store.save(&result("a", false), "h").unwrap();
        std::fs::remove_file(&path).unwrap();
        let err = format!("{:#}", store.save(&result("b", false), "h").unwrap_err());
        assert!(err.contains("deleted or moved"), "{err}");
    }

    #[test]
    fn the_filters_are_answered_by_indexes_not_a_scan_of_every_result() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("r.sqlite")).unwrap();
        let plan = |filter: &Filter| {
            let (clause, params) = filter.sql(|n| format!("?{n}"));
            let mut stmt = store
                .conn
                .prepare(&format!(
                    "EXPLAIN QUERY PLAN SELECT id FROM results {clause}"
                ))
                .unwrap();
            let rows: Vec<String> = stmt
                .query_map(params_from_iter(params), |r| r.get::<_, String>(3))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            rows.join("; ")
        };
        let host = plan(&Filter {
            host: Some("n1".into()),
            ..Filter::default()
        });
        assert!(
            host.contains("results_host") && host.contains("results_host_label"),
            "{host}"
        );
        let tag = plan(&Filter {
            tags: vec![("kernel".into(), "A".into())],
            ..Filter::default()
        });
        assert!(tag.contains("result_tags_key_value"), "{tag}");
        let since = plan(&Filter {
            since: Some(Utc::now()),
            ..Filter::default()
        });
        assert!(since.contains("results_started_at"), "{since}");
        let until = plan(&Filter {
            until: Some(Utc::now()),
            ..Filter::default()
        });
        assert!(until.contains("results_started_at"), "{until}");
        // A scan of every result (results list, report --fleet) reads the index that holds
        // the columns it needs, never the rows with their JSON; so does one host's selection
        // (the fleet commands read a host at a time), after finding its ids by host.
        let one = Filter {
            host: Some("n1".into()),
            ..Filter::default()
        };
        for (filter, also) in [(&Filter::default(), ""), (&one, "results_host")] {
            let (clause, params) = filter.sql(|n| format!("?{n}"));
            let from = store.selected(&clause).unwrap();
            for sql in [list_sql(&from), format!("SELECT {FIGURE_COLUMNS} {from}")] {
                let mut stmt = store
                    .conn
                    .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .unwrap();
                let plan: Vec<String> = stmt
                    .query_map(params_from_iter(&params), |r| r.get::<_, String>(3))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                let plan = plan.join("; ");
                assert!(
                    plan.contains("COVERING INDEX results_listed") && plan.contains(also),
                    "{sql}: {plan}"
                );
            }
        }
    }
}
