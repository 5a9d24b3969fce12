//! The result store on both back ends — an SQLite file and a real PostgreSQL server started
//! for the test (tests/common/pg.rs) — through the real binary: one list of checks, run on each.

mod common;

use std::process::{Command, Stdio};

use common::pg::PgServer;
use common::Sandbox;
use serde_json::Value;

const A: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/smoke-a.json");
const B: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/smoke-b.json");

fn stdout(sb: &Sandbox, db: &str, args: &[&str]) -> String {
    let out = sb.cmd().arg("--db").arg(db).args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn fixture(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The checks every back end passes: it starts empty, takes results whole, lists them, gives
/// them back as they were, and serves compare, report and a measuring command.
fn contract(sb: &Sandbox, db: &str) {
    assert!(stdout(sb, db, &["results", "list"]).starts_with("No stored results in "));
    let imported = stdout(sb, db, &["results", "import", A, B]);
    assert!(
        imported.contains("as result 1 in") && imported.contains("as result 2 in"),
        "{imported}"
    );
    let list = stdout(sb, db, &["results", "list"]);
    assert_eq!(
        list.lines()
            .filter(|l| l.contains("noise+index+interactive+sched"))
            .count(),
        2,
        "{list}"
    );
    // Whole, byte for byte.
    for (id, file) in [("1", A), ("2", B)] {
        let back: Value = serde_json::from_str(&stdout(
            sb,
            db,
            &["results", "export", id, "--format", "json"],
        ))
        .unwrap();
        assert_eq!(back, fixture(file), "result {id}");
    }
    let compared = stdout(sb, db, &["compare", "1", "2", "--format", "csv"]);
    assert!(compared.lines().count() > 10, "{compared}");
    let page = stdout(sb, db, &["report", "1", "2", "-o", "-"]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    // A measuring command stores its own result there, and a repeat group is found by id.
    stdout(
        sb,
        db,
        &["--repeat", "2", "noise", "--no-noise-check", "5", "3"],
    );
    let list = stdout(sb, db, &["results", "list"]);
    assert_eq!(
        list.lines().filter(|l| l.contains("5 ms CPU")).count(),
        2,
        "{list}"
    );
    let group = stdout(sb, db, &["compare", "g3", "g3", "--format", "json"]);
    assert!(group.contains("\"basis\""), "{group}");
    // Where a result came from: a host label and tags, stored and selected by.
    stdout(
        sb,
        db,
        &[
            "--host-label",
            "rack12-node3",
            "--tag",
            "kernel=6.18-rc3",
            "--tag",
            "fleet=rack12",
            "noise",
            "--no-noise-check",
            "5",
            "3",
        ],
    );
    let stored: Value = serde_json::from_str(&stdout(
        sb,
        db,
        &["results", "export", "5", "--format", "json"],
    ))
    .unwrap();
    assert_eq!(stored["host_label"], "rack12-node3");
    assert_eq!(stored["tags"]["kernel"], "6.18-rc3");
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["results", "list"];
        all.extend(args);
        stdout(sb, db, &all)
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|w| w.parse::<i64>().is_ok())
            .collect()
    };
    assert_eq!(ids(&["--tag", "kernel=6.18-rc3"]), ["5"]);
    assert_eq!(
        ids(&["--tag", "kernel=6.18-rc3", "--tag", "fleet=rack12"]),
        ["5"]
    );
    assert!(ids(&["--tag", "kernel=6.17"]).is_empty());
    assert_eq!(ids(&["--host", "rack12-node3"]), ["5"]);
    assert_eq!(ids(&["--since", "2000-01-01"]).len(), 5);
    assert!(ids(&["--since", "2100-01-01"]).is_empty());
    // compare picks a side by tag or by host: all the results of kernel A against those of B.
    stdout(
        sb,
        db,
        &[
            "--tag",
            "kernel=6.18-rc4",
            "--repeat",
            "2",
            "noise",
            "--no-noise-check",
            "5",
            "3",
        ],
    );
    let c: Value = serde_json::from_str(&stdout(
        sb,
        db,
        &[
            "compare",
            "tag:kernel=6.18-rc3",
            "tag:kernel=6.18-rc4",
            "--format",
            "json",
        ],
    ))
    .unwrap();
    assert_eq!(c["a"]["runs"], 1, "{c}");
    assert_eq!(c["b"]["runs"], 2, "{c}");
    stdout(
        sb,
        db,
        &["compare", "host:rack12-node3", "g3", "--format", "csv"],
    );
    let none = sb
        .cmd()
        .args(["--db", db, "compare", "tag:kernel=none", "1"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&none.get_output().stderr).into_owned();
    assert!(err.contains("no stored result of tag:kernel=none"), "{err}");
}

#[test]
fn both_back_ends_keep_and_give_back_the_same_results() {
    let sb = Sandbox::new();
    let sqlite = sb.dir.path().join("store.sqlite");
    contract_checked(&sb, sqlite.to_str().unwrap());
    let Some(pg) = PgServer::start("both_back_ends_keep_and_give_back_the_same_results") else {
        return;
    };
    contract_checked(&sb, &pg.url);
    // A store a newer hostbench migrated further is refused, naming what it is.
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    client
        .execute("INSERT INTO hostbench_layout (version) VALUES (99)", &[])
        .unwrap();
    let refused = sb
        .cmd()
        .args(["--db", &pg.url, "results", "list"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        err.contains("written by a newer hostbench (layout 99"),
        "{err}"
    );
}

#[test]
fn a_server_that_cannot_be_reached_is_refused_before_measuring() {
    let sb = Sandbox::new();
    let url = "postgresql://nobody@localhost/none?host=/nonexistent";
    let out = sb
        .cmd()
        .args(["--db", url, "noise", "--no-noise-check", "5", "3"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("cannot open the result store") && err.contains("cannot connect"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// [`contract`], and the refusal of an id that is not there.
fn contract_checked(sb: &Sandbox, db: &str) {
    contract(sb, db);
    let missing = sb
        .cmd()
        .args(["--db", db, "results", "show", "999"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&missing.get_output().stderr).into_owned();
    assert!(err.contains("no stored result with id 999"), "{err}");
}

/// Eight processes storing at once, three results each: every one arrives whole.
fn eight_writers(sb: &Sandbox, db: &str) {
    let exe = assert_cmd::cargo::cargo_bin("hostbench");
    let writers: Vec<_> = (0..8)
        .map(|_| {
            Command::new(&exe)
                .args(["--db", db, "results", "import", A, B, A])
                .env("HOSTBENCH_CACHE_DIR", sb.cache_dir())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let list = stdout(sb, db, &["results", "list"]);
    let rows: Vec<&str> = list.lines().filter(|l| l.contains("noise+index")).collect();
    assert_eq!(rows.len(), 24, "{list}");
    for id in 1..=24 {
        let back: Value = serde_json::from_str(&stdout(
            sb,
            db,
            &["results", "export", &id.to_string(), "--format", "json"],
        ))
        .unwrap();
        assert!(
            back == fixture(A) || back == fixture(B),
            "result {id} changed"
        );
    }
}

#[test]
fn eight_concurrent_writers_lose_nothing_on_either_back_end() {
    let sb = Sandbox::new();
    eight_writers(&sb, sb.dir.path().join("w.sqlite").to_str().unwrap());
    let Some(pg) = PgServer::start("eight_concurrent_writers_lose_nothing_on_either_back_end")
    else {
        return;
    };
    eight_writers(&sb, &pg.url);
}

/// A server that wants a password: the URL says nothing of it, the PG* variables and the
/// password file say the rest, as for psql.
#[test]
fn the_password_comes_from_the_password_file_never_the_command_line() {
    let Some(pg) = PgServer::start_with(
        "the_password_comes_from_the_password_file_never_the_command_line",
        Some("s3cret"),
    ) else {
        return;
    };
    let sb = Sandbox::new();
    let home = sb.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let passfile = sb.dir.path().join("pgpass");
    std::fs::write(&passfile, "localhost:*:*:hostbench:s3cret\n").unwrap();
    let run = |with_file: bool| {
        let mut c = sb.cmd();
        c.args(["--db", "postgresql://", "results", "list"])
            .env("PGHOST", pg.socket_dir())
            .env("PGUSER", "hostbench")
            .env("PGDATABASE", "postgres")
            .env("HOME", &home)
            .env_remove("PGPASSWORD");
        if with_file {
            c.env("PGPASSFILE", &passfile);
        } else {
            c.env_remove("PGPASSFILE");
        }
        c.assert()
    };
    let ok = run(true).success();
    assert!(String::from_utf8_lossy(&ok.get_output().stdout)
        .starts_with("No stored results in postgresql://"));
    let refused = run(false).code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(err.contains("cannot connect"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
}

/// deploy/postgres/roles.sql: a host in the writer role stores (as it goes: rows updated, tags
/// replaced), a reader lists and compares but cannot store, and neither can migrate.
#[test]
fn the_fleet_roles_let_hosts_store_and_readers_only_read() {
    let Some(pg) = PgServer::start("the_fleet_roles_let_hosts_store_and_readers_only_read") else {
        return;
    };
    let sb = Sandbox::new();
    // The owner's first stored result makes the layout; then the roles and a login of each
    // kind.
    stdout(&sb, &pg.url, &["results", "import", A]);
    let mut owner = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    owner
        .batch_execute(include_str!("../deploy/postgres/roles.sql"))
        .unwrap();
    owner
        .batch_execute(
            "CREATE ROLE host1 LOGIN IN ROLE hostbench_writer;
             CREATE ROLE viewer LOGIN IN ROLE hostbench_reader;",
        )
        .unwrap();
    let as_user = |user: &str| pg.url.replacen("hostbench@", &format!("{user}@"), 1);
    let (host1, viewer) = (as_user("host1"), as_user("viewer"));
    // The host stores results, a measuring run's checkpoints included, with its tags.
    stdout(&sb, &host1, &["results", "import", B]);
    stdout(
        &sb,
        &host1,
        &[
            "--tag",
            "fleet=rack12",
            "index",
            "--no-noise-check",
            "dhry2reg",
            "--seconds",
            "0.2",
            "-i",
            "2",
        ],
    );
    let listed = stdout(&sb, &viewer, &["results", "list", "--tag", "fleet=rack12"]);
    assert_eq!(
        listed.lines().filter(|l| l.contains("index")).count(),
        1,
        "{listed}"
    );
    stdout(&sb, &viewer, &["compare", "1", "2", "--format", "csv"]);
    // The reader cannot store.
    let refused = sb
        .cmd()
        .args(["--db", &viewer, "results", "import", A])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(err.contains("permission denied"), "{err}");
    // Nor can a host change the layout (a new migration is the owner's to run).
    let mut as_host = postgres::Client::connect(&host1, postgres::NoTls).unwrap();
    assert!(as_host
        .batch_execute("ALTER TABLE results ADD COLUMN x TEXT")
        .is_err());
}
