//! The store's layout as one list of versioned migrations, applied by hostbench itself to
//! either back end: each has its SQLite and its PostgreSQL text. A store records the last
//! version applied (SQLite: `PRAGMA user_version`; PostgreSQL: the `hostbench_layout` table);
//! opening one applies the later migrations, and a store of a version this hostbench does not
//! know (a newer hostbench wrote it) is refused.

pub struct Migration {
    pub version: i64,
    /// What it adds, for the refusal and the docs.
    pub what: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        what: "the results table: a row per run, its list columns and the whole result as JSON",
        sqlite: "CREATE TABLE IF NOT EXISTS results (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at     TEXT    NOT NULL,
        suites         TEXT    NOT NULL,
        host           TEXT    NOT NULL,
        headline       TEXT    NOT NULL,
        incomplete     INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        result_json    TEXT    NOT NULL
    );",
        postgres: "CREATE TABLE IF NOT EXISTS results (
        id             BIGSERIAL PRIMARY KEY,
        started_at     TEXT    NOT NULL,
        suites         TEXT    NOT NULL,
        host           TEXT    NOT NULL,
        headline       TEXT    NOT NULL,
        incomplete     BOOLEAN NOT NULL,
        schema_version INTEGER NOT NULL,
        result_json    TEXT    NOT NULL
    );",
    },
    Migration {
        version: 2,
        what: "where a result came from: the host's label and machine id, and its tags",
        sqlite: "ALTER TABLE results ADD COLUMN host_label TEXT;
        ALTER TABLE results ADD COLUMN machine_id TEXT;
        CREATE TABLE IF NOT EXISTS result_tags (
            result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
            key       TEXT    NOT NULL,
            value     TEXT    NOT NULL,
            PRIMARY KEY (result_id, key)
        );",
        postgres: "ALTER TABLE results ADD COLUMN IF NOT EXISTS host_label TEXT;
        ALTER TABLE results ADD COLUMN IF NOT EXISTS machine_id TEXT;
        CREATE TABLE IF NOT EXISTS result_tags (
            result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
            key       TEXT   NOT NULL,
            value     TEXT   NOT NULL,
            PRIMARY KEY (result_id, key)
        );",
    },
    Migration {
        version: 3,
        what: "each result's UUID, the same in every store it is copied to; results stored before \
               get a random one",
        sqlite: "ALTER TABLE results ADD COLUMN uuid TEXT;
        UPDATE results SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4'
            || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + abs(random() % 4), 1)
            || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))
            WHERE uuid IS NULL;
        CREATE UNIQUE INDEX IF NOT EXISTS results_uuid ON results (uuid);",
        postgres: "ALTER TABLE results ADD COLUMN IF NOT EXISTS uuid TEXT;
        UPDATE results SET uuid = gen_random_uuid()::TEXT WHERE uuid IS NULL;
        CREATE UNIQUE INDEX IF NOT EXISTS results_uuid ON results (uuid);",
    },
];

/// The layout version this hostbench writes and reads.
pub fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// The migrations after `version`, in order.
pub fn after(version: i64) -> impl Iterator<Item = &'static Migration> {
    MIGRATIONS.iter().filter(move |m| m.version > version)
}

/// The refusal of a store a newer hostbench wrote.
pub fn too_new(version: i64) -> String {
    format!(
        "the store was written by a newer hostbench (layout {version}, this one reads up to {})",
        latest()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_rise_one_by_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "{}", m.what);
        }
        assert_eq!(after(0).count(), MIGRATIONS.len());
        assert_eq!(after(latest()).count(), 0);
    }
}
