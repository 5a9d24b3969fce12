use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use super::{ResultStore, StoredEntry};
use crate::model::{RunResult, SCHEMA_VERSION};

/// The database layout version, kept in SQLite's `user_version`.
const DB_VERSION: i64 = 1;

/// Results in one SQLite file: a row per run with the columns `results list` shows, and the
/// whole result as JSON so nothing measured is lost.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and its parent directories.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let conn = Connection::open(path)?;
        // Several hostbench processes may share one database (a fleet script, the tests).
        conn.busy_timeout(Duration::from_secs(10))?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version > DB_VERSION {
            bail!("the database was written by a newer hostbench (layout {version}, this one reads {DB_VERSION})");
        }
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS results (
                id             INTEGER PRIMARY KEY AUTOINCREMENT,
                started_at     TEXT    NOT NULL,
                suites         TEXT    NOT NULL,
                host           TEXT    NOT NULL,
                headline       TEXT    NOT NULL,
                incomplete     INTEGER NOT NULL,
                schema_version INTEGER NOT NULL,
                result_json    TEXT    NOT NULL
            );",
        )?;
        conn.pragma_update(None, "user_version", DB_VERSION)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl ResultStore for SqliteStore {
    fn save(&mut self, result: &RunResult) -> Result<i64> {
        let json = serde_json::to_string(result)?;
        self.conn.execute(
            "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                result.started_at.to_rfc3339(),
                result.suite_names(),
                result.environment.hostname,
                result.headline(),
                result.incomplete,
                result.schema_version,
                json
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn list(&self) -> Result<Vec<StoredEntry>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, started_at, suites, host, headline, incomplete FROM results ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, bool>(5)?,
            ))
        })?;
        rows.map(|row| {
            let (id, started, suites, host, headline, incomplete) = row?;
            let started_at = DateTime::parse_from_rfc3339(&started)
                .with_context(|| format!("result {id} has a malformed start time {started:?}"))?
                .with_timezone(&Utc);
            Ok(StoredEntry {
                id,
                started_at,
                suites,
                host,
                headline,
                incomplete,
            })
        })
        .collect()
    }

    fn load(&self, id: i64) -> Result<Option<RunResult>> {
        let row: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT schema_version, result_json FROM results WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((schema, json)) = row else {
            return Ok(None);
        };
        if schema != i64::from(SCHEMA_VERSION) {
            bail!("result {id} has schema version {schema}; this hostbench reads version {SCHEMA_VERSION}");
        }
        let result = serde_json::from_str(&json)
            .with_context(|| format!("result {id} is malformed in the store"))?;
        Ok(Some(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Environment, SuiteResult};
    use crate::suites::noise::{NoiseMode, NoiseResult, NoiseSettings};

    fn result(host: &str, incomplete: bool) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool_version: "test".into(),
            started_at: Utc::now(),
            finished_at: Utc::now(),
            command_line: vec!["hostbench".into(), "noise".into()],
            incomplete,
            environment: Environment {
                hostname: host.into(),
                ..Environment::default()
            },
            suites: vec![SuiteResult::Noise(NoiseResult {
                settings: NoiseSettings {
                    mode: NoiseMode::Cpu,
                    target_ms: 10,
                    runs_requested: 5,
                },
                calibration: None,
                runs: Vec::new(),
                summary: None,
            })],
        }
    }

    #[test]
    fn saves_lists_and_loads_in_a_real_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/results.sqlite");
        let mut store = SqliteStore::open(&path).unwrap();
        let id1 = store.save(&result("alpha", false)).unwrap();
        let id2 = store.save(&result("beta", true)).unwrap();
        assert_ne!(id1, id2);
        drop(store);

        let store = SqliteStore::open(&path).unwrap();
        let list = store.list().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            (list[0].host.as_str(), list[0].incomplete),
            ("alpha", false)
        );
        assert_eq!((list[1].host.as_str(), list[1].incomplete), ("beta", true));
        assert_eq!(list[1].suites, "noise");
        assert!(list[0].headline.contains("10 ms CPU"));
        let back = store.load(id2).unwrap().unwrap();
        assert_eq!(back.environment.hostname, "beta");
        assert!(back.incomplete);
        assert!(store.load(9999).unwrap().is_none());
    }

    #[test]
    fn another_schema_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.sqlite")).unwrap();
        let id = store.save(&result("h", false)).unwrap();
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
}
