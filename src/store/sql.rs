//! The SQL both back ends run alike, written once. Each statement uses SQLite's numbered
//! parameters (`?1`); PostgreSQL reads the same text with its own (`$1`). What only one
//! dialect can say (JSON, the catalog, row-level security) stays in its back end.

/// A statement both back ends run.
#[derive(Debug, Clone, Copy)]
pub struct Shared(&'static str);

impl Shared {
    /// The statement as SQLite takes it.
    pub fn sqlite(self) -> &'static str {
        self.0
    }

    /// The statement as PostgreSQL takes it: `$N` for each `?N`.
    pub fn postgres(self) -> String {
        self.0.replace('?', "$")
    }
}

/// A new result's row; its id comes back.
pub const INSERT_RESULT: Shared = Shared(
    "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json, host_label, machine_id, uuid, repeat_group, figures)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
);

/// A result's row replaced (`?1` its id, then the columns in `INSERT_RESULT`'s order).
pub const UPDATE_RESULT: Shared = Shared(
    "UPDATE results SET started_at = ?2, suites = ?3, host = ?4, headline = ?5,
     incomplete = ?6, schema_version = ?7, result_json = ?8, host_label = ?9,
     machine_id = ?10, uuid = ?11, repeat_group = ?12, figures = ?13 WHERE id = ?1",
);

/// The rows beside a result: its figures and its tags.
pub const DELETE_FIGURES: Shared = Shared("DELETE FROM result_figures WHERE result_id = ?1");
pub const INSERT_FIGURES: Shared =
    Shared("INSERT INTO result_figures (result_id, kept) VALUES (?1, ?2)");
pub const DELETE_TAGS: Shared = Shared("DELETE FROM result_tags WHERE result_id = ?1");
pub const INSERT_TAG: Shared =
    Shared("INSERT INTO result_tags (result_id, key, value) VALUES (?1, ?2, ?3)");
pub const DELETE_RESULT: Shared = Shared("DELETE FROM results WHERE id = ?1");
/// Retires a host, or moves its time (`?1` its name, `?2` the time; layout 14).
pub const RETIRE: Shared = Shared(
    "INSERT INTO retired_hosts (name, retired_at) VALUES (?1, ?2)
     ON CONFLICT (name) DO UPDATE SET retired_at = excluded.retired_at",
);
/// Brings a retired host back.
pub const UNRETIRE: Shared = Shared("DELETE FROM retired_hosts WHERE name = ?1");

/// Another result with this uuid (`?1`) than this id (`?2`).
pub const SAME_UUID: Shared =
    Shared("SELECT started_at, host, machine_id FROM results WHERE uuid = ?1 AND id <> ?2");
/// A result given a uuid (a layout's upgrade).
pub const SET_UUID: Shared = Shared("UPDATE results SET uuid = ?1, result_json = ?2 WHERE id = ?3");
pub const ID_OF_UUID: Shared = Shared("SELECT id FROM results WHERE uuid = ?1");
/// The results of a repeat group, in order.
pub const GROUP_IDS: Shared = Shared("SELECT id FROM results WHERE repeat_group = ?1 ORDER BY id");
/// A stored result's JSON, with the layout it was written in and its uuid.
pub const RESULT_JSON: Shared =
    Shared("SELECT schema_version, result_json, uuid FROM results WHERE id = ?1");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_reads_the_same_statement_with_its_own_parameters() {
        assert_eq!(
            SAME_UUID.postgres(),
            "SELECT started_at, host, machine_id FROM results WHERE uuid = $1 AND id <> $2"
        );
        assert_eq!(SAME_UUID.sqlite(), SAME_UUID.0);
        // No statement has a question mark that is not a parameter.
        for s in [
            INSERT_RESULT,
            UPDATE_RESULT,
            DELETE_FIGURES,
            INSERT_FIGURES,
            DELETE_TAGS,
            INSERT_TAG,
            DELETE_RESULT,
            RETIRE,
            UNRETIRE,
            SAME_UUID,
            SET_UUID,
            ID_OF_UUID,
            GROUP_IDS,
            RESULT_JSON,
        ] {
            let sql = s.sqlite();
            for (i, _) in sql.match_indices('?') {
                assert!(
                    sql[i + 1..].starts_with(|c: char| c.is_ascii_digit()),
                    "{sql}"
                );
            }
        }
    }
}
