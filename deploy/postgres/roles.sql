-- The roles a fleet needs on a hostbench store, run once by the database's owner after
-- hostbench, connected as the owner, has stored a first result there (which makes the layout;
-- `hostbench results import --db URL FILE` will do):
--   psql -d hostbench -f deploy/postgres/roles.sql
-- hostbench_writer: what every benchmarked host needs to store results (as they go, so it also
-- updates its own rows and their tags). Which rows are its own the database decides: layout 4
-- (a hostbench migration) gives every row an owner (current_user when it is added) and
-- row-level security policies by which a login adds rows only as itself and changes or
-- deletes only its own rows and their tags (and, from layout 9, their figures; from layout 11,
-- its runs' states, and `hostbench results delete` of its own results); everyone with SELECT
-- reads all. hostbench_reader: what report and compare machines
-- need. Neither may create, alter or drop anything; a new hostbench's migration is run by the
-- owner. Give each host a login role of its own in the writer role, with its password in that
-- host's ~/.pgpass, and bind the host's name (its --host-label, else its hostname) to it in
-- hostbench_hosts (layout 12): a login writes results and runs only for the names bound to it,
-- and a name is bound to one login. E.g.:
--   CREATE ROLE rack12_node3 LOGIN PASSWORD '...' IN ROLE hostbench_writer;
--   INSERT INTO hostbench_hosts (name, login) VALUES ('rack12-node3', 'rack12_node3');
--   CREATE ROLE dashboards LOGIN PASSWORD '...' IN ROLE hostbench_reader;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_writer') THEN
        CREATE ROLE hostbench_writer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hostbench_reader') THEN
        CREATE ROLE hostbench_reader NOLOGIN;
    END IF;
END
$$;

-- PostgreSQL 14 and earlier let every login create objects in the public schema: no login
-- but the owner may (15 and later revoke it already).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO hostbench_writer, hostbench_reader;
GRANT SELECT ON hostbench_layout, hostbench_hosts, results, result_tags, result_figures, runs,
    retired_hosts TO hostbench_writer, hostbench_reader;
GRANT INSERT, UPDATE, DELETE ON results, runs TO hostbench_writer;
GRANT INSERT, DELETE ON result_tags, result_figures TO hostbench_writer;
GRANT USAGE ON SEQUENCE results_id_seq TO hostbench_writer;
