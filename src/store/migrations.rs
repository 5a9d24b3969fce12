//! The store's layout as one list of versioned migrations, applied by hostbench itself to
//! either back end: each has its SQLite and its PostgreSQL text. A store records the last
//! version applied (SQLite: `PRAGMA user_version`; PostgreSQL: the `hostbench_layout` table);
//! opening one applies the later migrations, and a store of a version this hostbench does not
//! know (a newer hostbench wrote it) is refused.

use crate::model::figures::Kept;
use crate::model::headline::HeadlineFigures;
use crate::model::{RunResult, SCHEMA_VERSION};

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
    Migration {
        version: 4,
        what: "each result's owner, the login that stored it; on PostgreSQL, row-level security \
               lets a login add and change only its own results and their tags (the table's \
               owner, who runs the migrations, is not bound)",
        sqlite: "ALTER TABLE results ADD COLUMN owner TEXT;",
        postgres:
            "ALTER TABLE results ADD COLUMN IF NOT EXISTS owner TEXT NOT NULL DEFAULT current_user;
        ALTER TABLE results ENABLE ROW LEVEL SECURITY;
        ALTER TABLE result_tags ENABLE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS results_read ON results;
        DROP POLICY IF EXISTS results_add ON results;
        DROP POLICY IF EXISTS results_change ON results;
        DROP POLICY IF EXISTS results_remove ON results;
        DROP POLICY IF EXISTS tags_read ON result_tags;
        DROP POLICY IF EXISTS tags_add ON result_tags;
        DROP POLICY IF EXISTS tags_remove ON result_tags;
        CREATE POLICY results_read ON results FOR SELECT USING (true);
        CREATE POLICY results_add ON results FOR INSERT WITH CHECK (owner = current_user);
        CREATE POLICY results_change ON results FOR UPDATE
            USING (owner = current_user) WITH CHECK (owner = current_user);
        CREATE POLICY results_remove ON results FOR DELETE USING (owner = current_user);
        CREATE POLICY tags_read ON result_tags FOR SELECT USING (true);
        CREATE POLICY tags_add ON result_tags FOR INSERT WITH CHECK (EXISTS (
            SELECT 1 FROM results r WHERE r.id = result_id AND r.owner = current_user));
        CREATE POLICY tags_remove ON result_tags FOR DELETE USING (EXISTS (
            SELECT 1 FROM results r WHERE r.id = result_id AND r.owner = current_user));",
    },
    Migration {
        version: 5,
        what: "indexes for what results are selected by: host and host label, start time, a \
               tag's key and value",
        sqlite: "CREATE INDEX IF NOT EXISTS results_host ON results (host);
        CREATE INDEX IF NOT EXISTS results_host_label ON results (host_label);
        CREATE INDEX IF NOT EXISTS results_started_at ON results (started_at);
        CREATE INDEX IF NOT EXISTS result_tags_key_value ON result_tags (key, value);",
        postgres: "CREATE INDEX IF NOT EXISTS results_host ON results (host);
        CREATE INDEX IF NOT EXISTS results_host_label ON results (host_label);
        CREATE INDEX IF NOT EXISTS results_started_at ON results (started_at);
        CREATE INDEX IF NOT EXISTS result_tags_key_value ON result_tags (key, value);",
    },
    Migration {
        version: 6,
        what: "each result's repeat group as a column of its own, indexed: `compare gN` finds \
               a group's runs without reading every result",
        sqlite: "ALTER TABLE results ADD COLUMN repeat_group INTEGER;
        UPDATE results SET repeat_group = json_extract(result_json, '$.repeat.group')
            WHERE json_valid(result_json);
        CREATE INDEX IF NOT EXISTS results_repeat_group ON results (repeat_group);",
        postgres: "ALTER TABLE results ADD COLUMN IF NOT EXISTS repeat_group BIGINT;
        UPDATE results SET repeat_group = (result_json::jsonb -> 'repeat' ->> 'group')::BIGINT
            WHERE result_json LIKE '%\"repeat\"%';
        CREATE INDEX IF NOT EXISTS results_repeat_group ON results (repeat_group);",
    },
    Migration {
        version: 7,
        what: "each result's headline figures and noise floor, as a short JSON beside it, so \
               `report --fleet` draws many hosts without reading every result whole (the rows \
               stored before are filled in by reading each once, see `FIGURES`)",
        sqlite: "ALTER TABLE results ADD COLUMN figures TEXT;",
        postgres: "ALTER TABLE results ADD COLUMN IF NOT EXISTS figures TEXT;",
    },
    Migration {
        version: 8,
        what: "SQLite: an index holding every column `results list` and `report --fleet` read, \
               so a scan of the store never walks a result's JSON (SQLite keeps a row in one \
               piece, and the columns added after `result_json` lie past it); PostgreSQL keeps \
               large JSON apart from its row already and needs nothing",
        sqlite: "CREATE INDEX IF NOT EXISTS results_listed ON results
            (id, started_at, suites, host, host_label, headline, incomplete, owner, figures);",
        postgres: "SELECT 1;",
    },
    Migration {
        version: 9,
        what: "every figure of each result (its value, without samples), its repeat group and \
               noise floor, as a short JSON in a table of its own, so `history` reads a long \
               series without any result's JSON; on PostgreSQL under the same row-level \
               security as the tags (the rows stored before are filled in, see `KEPT`)",
        sqlite: "CREATE TABLE IF NOT EXISTS result_figures (
            result_id INTEGER PRIMARY KEY REFERENCES results (id) ON DELETE CASCADE,
            kept      TEXT    NOT NULL
        );",
        postgres: "CREATE TABLE IF NOT EXISTS result_figures (
            result_id BIGINT PRIMARY KEY REFERENCES results (id) ON DELETE CASCADE,
            kept      TEXT   NOT NULL
        );
        ALTER TABLE result_figures ENABLE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS figures_read ON result_figures;
        DROP POLICY IF EXISTS figures_add ON result_figures;
        DROP POLICY IF EXISTS figures_remove ON result_figures;
        CREATE POLICY figures_read ON result_figures FOR SELECT USING (true);
        CREATE POLICY figures_add ON result_figures FOR INSERT WITH CHECK (EXISTS (
            SELECT 1 FROM results r WHERE r.id = result_id AND r.owner = current_user));
        CREATE POLICY figures_remove ON result_figures FOR DELETE USING (EXISTS (
            SELECT 1 FROM results r WHERE r.id = result_id AND r.owner = current_user));
        DO $$
        BEGIN
            -- The fleet's roles (deploy/postgres/roles.sql), where they exist, may do here
            -- what they may do with the tags.
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_writer') THEN
                GRANT SELECT, INSERT, DELETE ON result_figures TO hostbench_writer;
            END IF;
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_reader') THEN
                GRANT SELECT ON result_figures TO hostbench_reader;
            END IF;
        END
        $$;",
    },
    Migration {
        version: 10,
        what: "checks a fleet's writers cannot get past (PostgreSQL, where many logins write): a \
               result's JSON is an object with a result's keys, its UUID is in the one spelling \
               and names a run, a label and a tag are bounded, a result carries at most 64 tags, \
               the figures are JSON; on both back ends the UUIDs stored before are put in that \
               spelling (see `UUIDS`)",
        sqlite: "SELECT 1;",
        postgres: "
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_json_is_a_result;
        ALTER TABLE results ADD CONSTRAINT results_json_is_a_result CHECK (
            jsonb_typeof(result_json::jsonb) = 'object'
            AND result_json::jsonb ?& ARRAY['schema_version', 'started_at', 'environment', 'suites']
        ) NOT VALID;
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_uuid_names_a_run;
        ALTER TABLE results ADD CONSTRAINT results_uuid_names_a_run CHECK (
            uuid ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
            AND uuid NOT IN ('00000000-0000-0000-0000-000000000000',
                             'ffffffff-ffff-ffff-ffff-ffffffffffff')
        ) NOT VALID;
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_label_bounded;
        ALTER TABLE results ADD CONSTRAINT results_label_bounded CHECK (
            host_label IS NULL OR char_length(host_label) BETWEEN 1 AND 128
        ) NOT VALID;
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_figures_are_json;
        ALTER TABLE results ADD CONSTRAINT results_figures_are_json CHECK (
            figures IS NULL OR jsonb_typeof(figures::jsonb) = 'object'
        ) NOT VALID;
        ALTER TABLE result_tags DROP CONSTRAINT IF EXISTS result_tags_bounded;
        ALTER TABLE result_tags ADD CONSTRAINT result_tags_bounded CHECK (
            char_length(key) BETWEEN 1 AND 64 AND char_length(value) <= 256
        ) NOT VALID;
        ALTER TABLE result_figures DROP CONSTRAINT IF EXISTS result_figures_are_json;
        ALTER TABLE result_figures ADD CONSTRAINT result_figures_are_json CHECK (
            jsonb_typeof(kept::jsonb) = 'object'
        ) NOT VALID;
        CREATE OR REPLACE FUNCTION hostbench_tags_bounded() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF (SELECT count(*) FROM result_tags WHERE result_id = NEW.result_id) >= 64 THEN
                RAISE EXCEPTION 'a result carries at most 64 tags';
            END IF;
            RETURN NEW;
        END
        $$;
        DROP TRIGGER IF EXISTS result_tags_bounded ON result_tags;
        CREATE TRIGGER result_tags_bounded BEFORE INSERT ON result_tags
            FOR EACH ROW EXECUTE FUNCTION hostbench_tags_bounded();",
    },
    Migration {
        version: 11,
        what: "the runs table: each run's state (running, then how it ended, why, and where its \
               result went), also of the runs that stored nothing; on PostgreSQL a login adds \
               and changes only its own runs, and the fleet's writer role may delete its own \
               results (`results delete`)",
        sqlite: "CREATE TABLE IF NOT EXISTS runs (
            uuid       TEXT PRIMARY KEY,
            host       TEXT NOT NULL,
            host_label TEXT,
            command    TEXT NOT NULL,
            started_at TEXT NOT NULL,
            ended_at   TEXT,
            outcome    TEXT NOT NULL,
            why        TEXT,
            stored     TEXT,
            tags       TEXT NOT NULL DEFAULT '{}',
            owner      TEXT
        );
        CREATE INDEX IF NOT EXISTS runs_host_started
            ON runs (coalesce(host_label, host), started_at);",
        postgres: "CREATE TABLE IF NOT EXISTS runs (
            uuid       TEXT PRIMARY KEY,
            host       TEXT NOT NULL,
            host_label TEXT,
            command    TEXT NOT NULL,
            started_at TEXT NOT NULL,
            ended_at   TEXT,
            outcome    TEXT NOT NULL,
            why        TEXT,
            stored     TEXT,
            tags       TEXT NOT NULL DEFAULT '{}',
            owner      TEXT NOT NULL DEFAULT current_user,
            CONSTRAINT runs_bounded CHECK (
                uuid ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                AND char_length(host) <= 256
                AND (host_label IS NULL OR char_length(host_label) BETWEEN 1 AND 128)
                AND char_length(command) <= 1100
                AND char_length(started_at) <= 64 AND char_length(coalesce(ended_at, '')) <= 64
                AND outcome IN ('running', 'finished', 'incomplete', 'failed', 'interrupted')
                AND char_length(coalesce(why, '')) <= 520
                AND char_length(coalesce(stored, '')) <= 520
                AND char_length(tags) <= 24000 AND jsonb_typeof(tags::jsonb) = 'object'
            )
        );
        CREATE INDEX IF NOT EXISTS runs_host_started
            ON runs ((coalesce(host_label, host)), started_at);
        ALTER TABLE runs ENABLE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS runs_read ON runs;
        DROP POLICY IF EXISTS runs_add ON runs;
        DROP POLICY IF EXISTS runs_change ON runs;
        DROP POLICY IF EXISTS runs_remove ON runs;
        CREATE POLICY runs_read ON runs FOR SELECT USING (true);
        CREATE POLICY runs_add ON runs FOR INSERT WITH CHECK (owner = current_user);
        CREATE POLICY runs_change ON runs FOR UPDATE
            USING (owner = current_user) WITH CHECK (owner = current_user);
        CREATE POLICY runs_remove ON runs FOR DELETE USING (owner = current_user);
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_writer') THEN
                GRANT SELECT, INSERT, UPDATE, DELETE ON runs TO hostbench_writer;
                GRANT DELETE ON results TO hostbench_writer;
            END IF;
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_reader') THEN
                GRANT SELECT ON runs TO hostbench_reader;
            END IF;
        END
        $$;",
    },
    Migration {
        version: 12,
        what: "a host is its login (PostgreSQL): the `hostbench_hosts` table binds each host \
               name (its label, else its hostname) to the one login that may write it, and \
               row-level security holds every writer's results and runs to its bound names; a \
               run's UUID is claimed by whoever records it first; times are RFC 3339 UTC and not \
               in the future; a result's JSON is bounded before it is parsed; a repeat group is \
               its own host's (the logins that stored a host's rows before are bound to it)",
        sqlite: "SELECT 1;",
        postgres: HOSTS_BOUND,
    },
    Migration {
        version: 13,
        what: "an index or interactive result's headline kind names what it measured (the \
               index's copies, tests that made it, pinning and the settings that change the \
               figure; the benches, loads and options of interbench's worst pair), so the \
               fleet ranges only like with like: those results stored before get their \
               headline figures again (see `REFIGURES`)",
        sqlite: "SELECT 1;",
        postgres: "SELECT 1;",
    },
    Migration {
        version: 14,
        what: "retired hosts: the `retired_hosts` table names each host an operator retired and \
               when (`results retire`); the fleet's views leave it out until it stores a run or \
               result after that. On PostgreSQL every login reads it and only the store's owner \
               writes it",
        sqlite: "CREATE TABLE IF NOT EXISTS retired_hosts (
            name       TEXT PRIMARY KEY,
            retired_at TEXT NOT NULL
        );",
        postgres: RETIRED_HOSTS,
    },
];

/// Layout 14 on PostgreSQL (see its `what`). Row-level security on, with a reading policy
/// alone: no writer may add, change or remove a row; the owner, whom it does not bind, may.
const RETIRED_HOSTS: &str = "
        CREATE TABLE IF NOT EXISTS retired_hosts (
            name       TEXT PRIMARY KEY,
            retired_at TEXT NOT NULL,
            retired_by TEXT NOT NULL DEFAULT current_user,
            CONSTRAINT retired_hosts_bounded CHECK (
                char_length(name) BETWEEN 1 AND 256 AND char_length(retired_by) BETWEEN 1 AND 63
                AND hostbench_time(retired_at) IS NOT NULL
            )
        );
        ALTER TABLE retired_hosts ENABLE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS retired_read ON retired_hosts;
        CREATE POLICY retired_read ON retired_hosts FOR SELECT USING (true);
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_writer') THEN
                GRANT SELECT ON retired_hosts TO hostbench_writer;
            END IF;
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_reader') THEN
                GRANT SELECT ON retired_hosts TO hostbench_reader;
            END IF;
        END
        $$;";

/// Layout 12 on PostgreSQL (see its `what`).
const HOSTS_BOUND: &str = "
        CREATE TABLE IF NOT EXISTS hostbench_hosts (
            name       TEXT PRIMARY KEY,
            login      TEXT NOT NULL,
            machine_id TEXT,
            CONSTRAINT hostbench_hosts_bounded CHECK (
                char_length(name) BETWEEN 1 AND 256 AND char_length(login) BETWEEN 1 AND 63
                AND (machine_id IS NULL OR char_length(machine_id) BETWEEN 1 AND 64)
            )
        );
        CREATE INDEX IF NOT EXISTS hostbench_hosts_login ON hostbench_hosts (login);
        -- What each login stored before is its own: a name goes to the login that stored it
        -- last (the store's owner, bound by nothing, is left out).
        INSERT INTO hostbench_hosts (name, login)
            SELECT DISTINCT ON (name) name, owner FROM (
                SELECT coalesce(host_label, host) AS name, owner, id AS n FROM results
                UNION ALL
                SELECT coalesce(host_label, host), owner, NULL FROM runs
            ) stored
            WHERE owner <> (SELECT tableowner FROM pg_tables
                            WHERE tablename = 'results' AND schemaname = current_schema())
              AND char_length(name) BETWEEN 1 AND 256 AND char_length(owner) BETWEEN 1 AND 63
            ORDER BY name, n DESC NULLS LAST
        ON CONFLICT (name) DO NOTHING;
        -- A time as hostbench writes it (RFC 3339, UTC, `+00:00`), else NULL: never an error,
        -- so a check or an ORDER BY over a row another program wrote cannot fail.
        CREATE OR REPLACE FUNCTION hostbench_time(t TEXT) RETURNS timestamptz
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            IF t IS NULL OR char_length(t) > 40 OR t !~
                '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,9})?[+]00:00$'
            THEN
                RETURN NULL;
            END IF;
            RETURN t::timestamptz;
        EXCEPTION WHEN others THEN
            RETURN NULL;
        END
        $$;
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_started_at_is_a_time;
        ALTER TABLE results ADD CONSTRAINT results_started_at_is_a_time CHECK (
            coalesce(hostbench_time(started_at) <= now() + interval '1 day', false)
        ) NOT VALID;
        ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_times_are_times;
        ALTER TABLE runs ADD CONSTRAINT runs_times_are_times CHECK (
            coalesce(hostbench_time(started_at) <= now() + interval '1 day', false)
            AND (ended_at IS NULL
                 OR coalesce(hostbench_time(ended_at) >= hostbench_time(started_at), false))
        ) NOT VALID;
        -- The cheapest check first: a JSON over the bound is refused before it is parsed.
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_json_is_a_result;
        ALTER TABLE results ADD CONSTRAINT results_json_is_a_result CHECK (
            CASE WHEN octet_length(result_json) > 16777216 THEN false
                 ELSE jsonb_typeof(result_json::jsonb) = 'object'
                      AND result_json::jsonb ?& ARRAY['schema_version', 'started_at',
                                                      'environment', 'suites']
            END
        ) NOT VALID;
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_figures_are_json;
        ALTER TABLE results ADD CONSTRAINT results_figures_are_json CHECK (
            figures IS NULL OR CASE WHEN octet_length(figures) > 65536 THEN false
                                    ELSE jsonb_typeof(figures::jsonb) = 'object' END
        ) NOT VALID;
        ALTER TABLE result_figures DROP CONSTRAINT IF EXISTS result_figures_are_json;
        ALTER TABLE result_figures ADD CONSTRAINT result_figures_are_json CHECK (
            CASE WHEN octet_length(kept) > 4194304 THEN false
                 ELSE jsonb_typeof(kept::jsonb) = 'object' END
        ) NOT VALID;
        -- The fleet page's rule for a headline figure (`fleet::possible`): at least 0,
        -- below 1e9 (JSON holds no NaN or infinity).
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_figures_possible;
        ALTER TABLE results ADD CONSTRAINT results_figures_possible CHECK (
            figures IS NULL OR CASE WHEN octet_length(figures) > 65536 THEN false
                ELSE NOT jsonb_path_exists(figures::jsonb,
                                           '$.values[*].value ? (@ < 0 || @ >= 1000000000)')
            END
        ) NOT VALID;
        ALTER TABLE results DROP CONSTRAINT IF EXISTS results_bounded;
        ALTER TABLE results ADD CONSTRAINT results_bounded CHECK (
            char_length(host) <= 256 AND char_length(suites) <= 1024
            AND char_length(headline) <= 4096
            AND (machine_id IS NULL OR char_length(machine_id) <= 64)
        ) NOT VALID;
        -- A repeat group is named after its first run, which is the same host's.
        CREATE OR REPLACE FUNCTION hostbench_group_is_own() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.repeat_group IS NOT NULL AND NEW.repeat_group NOT IN (0, NEW.id) AND NOT EXISTS (
                SELECT 1 FROM results g WHERE g.id = NEW.repeat_group AND g.owner = NEW.owner
                    AND coalesce(g.host_label, g.host) = coalesce(NEW.host_label, NEW.host))
            THEN
                RAISE EXCEPTION 'repeat group % is not a group of this host''s runs',
                    NEW.repeat_group;
            END IF;
            RETURN NEW;
        END
        $$;
        DROP TRIGGER IF EXISTS results_group_is_own ON results;
        CREATE TRIGGER results_group_is_own BEFORE INSERT OR UPDATE OF repeat_group ON results
            FOR EACH ROW EXECUTE FUNCTION hostbench_group_is_own();
        -- A function's tables are looked up when it runs, by the session's search_path, where
        -- a writer's own temporary table would come first: each trigger reads this schema's
        -- tables alone. (The policies below name their tables inline: those are bound when
        -- the policy is made.)
        DO $$
        BEGIN
            EXECUTE format('ALTER FUNCTION hostbench_group_is_own() SET search_path = %I, pg_temp',
                           current_schema());
            EXECUTE format('ALTER FUNCTION hostbench_tags_bounded() SET search_path = %I, pg_temp',
                           current_schema());
        END
        $$;
        ALTER TABLE hostbench_hosts ENABLE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS hosts_read ON hostbench_hosts;
        CREATE POLICY hosts_read ON hostbench_hosts FOR SELECT USING (true);
        DROP POLICY IF EXISTS results_add ON results;
        DROP POLICY IF EXISTS results_change ON results;
        CREATE POLICY results_add ON results FOR INSERT WITH CHECK (
            owner = current_user
            AND EXISTS (SELECT 1 FROM hostbench_hosts h
                        WHERE h.name = coalesce(results.host_label, results.host)
                          AND h.login = current_user
                          AND (h.machine_id IS NULL OR h.machine_id = results.machine_id))
            AND NOT EXISTS (SELECT 1 FROM runs c
                            WHERE c.uuid = results.uuid AND c.owner <> current_user));
        CREATE POLICY results_change ON results FOR UPDATE USING (owner = current_user)
            WITH CHECK (
            owner = current_user
            AND EXISTS (SELECT 1 FROM hostbench_hosts h
                        WHERE h.name = coalesce(results.host_label, results.host)
                          AND h.login = current_user
                          AND (h.machine_id IS NULL OR h.machine_id = results.machine_id))
            AND NOT EXISTS (SELECT 1 FROM runs c
                            WHERE c.uuid = results.uuid AND c.owner <> current_user));
        DROP POLICY IF EXISTS runs_add ON runs;
        DROP POLICY IF EXISTS runs_change ON runs;
        CREATE POLICY runs_add ON runs FOR INSERT WITH CHECK (
            owner = current_user
            AND EXISTS (SELECT 1 FROM hostbench_hosts h
                        WHERE h.name = coalesce(runs.host_label, runs.host)
                          AND h.login = current_user)
            AND NOT EXISTS (SELECT 1 FROM results c
                            WHERE c.uuid = runs.uuid AND c.owner <> current_user));
        CREATE POLICY runs_change ON runs FOR UPDATE USING (owner = current_user)
            WITH CHECK (
            owner = current_user
            AND EXISTS (SELECT 1 FROM hostbench_hosts h
                        WHERE h.name = coalesce(runs.host_label, runs.host)
                          AND h.login = current_user));
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_writer') THEN
                GRANT SELECT ON hostbench_hosts TO hostbench_writer;
            END IF;
            IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_reader') THEN
                GRANT SELECT ON hostbench_hosts TO hostbench_reader;
            END IF;
        END
        $$;";

/// The migration that adds the `figures` column. SQL cannot compute a result's headline
/// figures, so after applying it a back end fills them in for the rows already stored
/// ([`figures_of_stored`]), in the same transaction: an upgraded store is then as quick for
/// `report --fleet` as one made at this layout.
pub const FIGURES: i64 = 7;

/// A stored result's headline figures as layout [`FIGURES`] keeps them, from its stored
/// columns; None for a row that does not read back as a result of this schema (it keeps no
/// figures and is read whole when needed, as before).
pub fn figures_of_stored(schema_version: i64, result_json: &str) -> Option<String> {
    let result = stored_result(schema_version, result_json)?;
    serde_json::to_string(&HeadlineFigures::of(&result)).ok()
}

fn stored_result(schema_version: i64, result_json: &str) -> Option<RunResult> {
    if schema_version != i64::from(SCHEMA_VERSION) {
        return None;
    }
    serde_json::from_str(result_json).ok()
}

/// The migration that adds SQLite's `results_listed` index (every list column, and the
/// headline figures): a narrowed selection reads its rows from it (`SqliteStore::selected`).
pub const LISTED: i64 = 8;

/// The migration that adds the `result_figures` table: as with [`FIGURES`], a back end fills
/// it in for the rows already stored ([`kept_of_stored`]).
pub const KEPT: i64 = 9;

/// What layout [`KEPT`] keeps of a stored result, from its stored columns; None as in
/// [`figures_of_stored`].
pub fn kept_of_stored(schema_version: i64, result_json: &str) -> Option<String> {
    let result = stored_result(schema_version, result_json)?;
    serde_json::to_string(&Kept::of(&result)).ok()
}

/// The migration after which every stored UUID is in its one spelling: a back end puts the
/// rows stored before in it ([`respelled`]), in the same transaction, run by the store's owner.
pub const UUIDS: i64 = 10;

/// What becomes of a stored row whose UUID is not in its one spelling.
#[derive(Debug, PartialEq)]
pub enum Respelling {
    /// Stored under this UUID, with this JSON (the result's own UUID the same).
    Rename { uuid: String, json: String },
    /// Another spelling of a run stored under the one spelling already: the same run twice.
    Drop,
}

/// The row `result_json` stored under `uuid`, which is not in its one spelling: renamed to
/// that spelling; where another row holds it already (`holder`: whether that row is the same
/// run, by its start, host and machine), dropped as the same run stored twice, or — another
/// run under a copied UUID — renamed to the UUID its JSON gives it, so it claims no other run's
/// name. A UUID that is no UUID of a run is replaced by the one its JSON gives it too.
pub fn respelled(uuid: &str, result_json: &str, holder: Option<bool>) -> Respelling {
    let canonical = crate::model::canonical_uuid(uuid);
    let new = match (canonical, holder) {
        (Some(_), Some(true)) => return Respelling::Drop,
        (Some(c), None) => c,
        _ => crate::model::derived_uuid(result_json),
    };
    let json = match serde_json::from_str::<serde_json::Value>(result_json) {
        Ok(mut v) if v.is_object() => {
            v["uuid"] = new.clone().into();
            v.to_string()
        }
        _ => result_json.to_string(),
    };
    Respelling::Rename { uuid: new, json }
}

/// What a migration fills in for the rows stored before it: the condition that picks a row
/// still without it, and the statement that writes it (`$1` the row's id, `$2` the value).
pub struct Fill {
    pub missing: &'static str,
    pub write: &'static str,
}

/// Layout [`FIGURES`]: the headline figures.
pub const FILL_FIGURES: Fill = Fill {
    missing: "figures IS NULL",
    write: "UPDATE results SET figures = $2 WHERE id = $1",
};

/// Layout [`KEPT`]: the `result_figures` row.
pub const FILL_KEPT: Fill = Fill {
    missing: "id NOT IN (SELECT result_id FROM result_figures)",
    write: "INSERT INTO result_figures (result_id, kept) VALUES ($1, $2)",
};

/// The migration after which an index result's headline kind says what it measured
/// (`model::index::measured`): a back end computes the figures of the index results stored
/// before again ([`FILL_REFIGURES`]), in the migration's transaction, so a store is never
/// half upgraded.
pub const REFIGURES: i64 = 13;

/// Layout [`REFIGURES`]: the headline figures of every stored index and interactive result,
/// again.
pub const FILL_REFIGURES: Fill = Fill {
    missing: "suites LIKE '%index%' OR suites LIKE '%interactive%'",
    write: "UPDATE results SET figures = $2 WHERE id = $1",
};

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
