//! The result store on both back ends — an SQLite file and a real PostgreSQL server started
//! for the test (tests/common/pg.rs) — through the real binary: one list of checks, run on each.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::pg::PgServer;
use common::Sandbox;
use serde_json::Value;

const A: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/smoke-a.json");
const B: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/smoke-b.json");

fn stdout(sb: &Sandbox, db: &str, args: &[&str]) -> String {
    let out = sb.cmd().args(args).arg("--db").arg(db).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// A file holding one more run of the 5 ms noise job, stored only in the sandbox's own store:
/// a run to compare a group with (one run is never compared with itself).
fn another_noise_run(sb: &Sandbox) -> String {
    let v = sb.json(&["noise", "--no-noise-check", "5", "3"]);
    let path = sb
        .dir
        .path()
        .join(format!("other-{}.json", common::fresh_uuid()));
    std::fs::write(&path, v.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

fn fixture(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The checks every back end passes: it starts empty, takes results whole, lists them, gives
/// them back as they were, and serves compare, report and a measuring command.
fn contract(sb: &Sandbox, db: &str) {
    assert!(stdout(sb, db, &["results", "list"]).starts_with("No stored results in "));
    assert_eq!(stdout(sb, db, &["results", "list", "--json"]).trim(), "[]");
    let imported = stdout(sb, db, &["results", "import", A, B]);
    assert!(
        imported.contains("as result 1 in") && imported.contains("as result 2 in"),
        "{imported}"
    );
    // A result is stored once, by its UUID, however often it is imported.
    let again = stdout(sb, db, &["results", "import", A]);
    assert!(
        again.starts_with("Already stored:") && again.contains("as result 1 in"),
        "{again}"
    );
    // Another run under result 1's UUID (a copied UUID, a later finish) is refused; a later
    // copy of the same run replaces it (results_push_and_pull_… below).
    let mut forged = fixture(A);
    forged["started_at"] = "2020-01-01T00:00:00Z".into();
    forged["finished_at"] = "2099-01-01T00:00:00Z".into();
    let forged_file = sb.dir.path().join("forged.json");
    std::fs::write(&forged_file, forged.to_string()).unwrap();
    let out = sb
        .cmd()
        .args(["results", "import", "--db", db])
        .arg(&forged_file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is that of stored result 1, another run"),
        "{err}"
    );
    // The list as JSON: the same two rows, each with its id, suites and host.
    let listed: Value =
        serde_json::from_str(&stdout(sb, db, &["results", "list", "--json"])).unwrap();
    let rows = listed.as_array().unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2],
        "{listed}"
    );
    assert!(
        rows.iter()
            .all(|r| r["suites"] == "noise+index+interactive+sched"
                && r["host"].is_string()
                && r["incomplete"].is_boolean()),
        "{listed}"
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
        &["noise", "--repeat", "2", "--no-noise-check", "5", "3"],
    );
    let list = stdout(sb, db, &["results", "list"]);
    assert_eq!(
        list.lines().filter(|l| l.contains("5 ms CPU")).count(),
        2,
        "{list}"
    );
    let other = another_noise_run(sb);
    let group = stdout(sb, db, &["compare", "g3", &other, "--format", "json"]);
    assert!(group.contains("\"basis\""), "{group}");
    // Where a result came from: a host label and tags, stored and selected by.
    stdout(
        sb,
        db,
        &[
            "noise",
            "--host-label",
            "rack12-node3",
            "--tag",
            "kernel=6.18-rc3",
            "--tag",
            "fleet=rack12",
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
    // report takes the same filters: the stored results of a tag, or of a host.
    let page = stdout(sb, db, &["report", "--tag", "kernel=6.18-rc3", "-o", "-"]);
    assert!(
        page.contains("hostbench report: result 5</title>"),
        "{page}"
    );
    let fleet = stdout(
        sb,
        db,
        &[
            "report",
            "--fleet",
            "--host",
            "rack12-node3",
            "--format",
            "csv",
        ],
    );
    assert_eq!(fleet.lines().count(), 2, "{fleet}");
    assert!(
        fleet
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("rack12-node3,noise,"),
        "{fleet}"
    );
    for wrong in [&["report"][..], &["report", "1", "--host", "x"]] {
        sb.cmd().args(wrong).args(["--db", db]).assert().code(2);
    }
    assert_eq!(ids(&["--since", "2000-01-01"]).len(), 5);
    assert!(ids(&["--since", "2100-01-01"]).is_empty());
    // compare picks a side by tag or by host: all the results of kernel A against those of B.
    stdout(
        sb,
        db,
        &[
            "noise",
            "--tag",
            "kernel=6.18-rc4",
            "--repeat",
            "2",
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
        .args(["compare", "--db", db, "tag:kernel=none", "1"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&none.get_output().stderr).into_owned();
    assert!(err.contains("no stored result of tag:kernel=none"), "{err}");
    // Filters narrow both tag sides: since long ago keeps them, another tag empties B.
    let c: Value = serde_json::from_str(&stdout(
        sb,
        db,
        &[
            "compare",
            "tag:kernel=6.18-rc3",
            "tag:kernel=6.18-rc4",
            "--since",
            "2000-01-01",
            "--format",
            "json",
        ],
    ))
    .unwrap();
    assert_eq!(
        (c["a"]["runs"].as_u64(), c["b"]["runs"].as_u64()),
        (Some(1), Some(2))
    );
    let narrowed = sb
        .cmd()
        .args(["compare", "--db", db, "--tag", "fleet=rack12"])
        .args(["tag:kernel=6.18-rc3", "tag:kernel=6.18-rc4"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&narrowed.get_output().stderr).into_owned();
    assert!(
        err.contains("no stored result of tag:kernel=6.18-rc4, tag:fleet=rack12"),
        "{err}"
    );
    sb.cmd()
        .args(["compare", "--db", db, "1", "2", "--since", "2000-01-01"])
        .assert()
        .code(2);
    // The fleet commands read one host at a time: every host once, with all its results, in
    // `results hosts`, the fleet table and the metrics (each its latest result's figures).
    let hosts: Value =
        serde_json::from_str(&stdout(sb, db, &["results", "hosts", "--json"])).unwrap();
    let hosts = hosts.as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert!(
        names.len() >= 2 && names.contains(&"rack12-node3"),
        "{names:?}"
    );
    let counted: u64 = hosts.iter().map(|h| h["results"].as_u64().unwrap()).sum();
    assert_eq!(counted as usize, ids(&[]).len(), "{hosts:?}");
    let table = stdout(sb, db, &["report", "--fleet", "--format", "csv"]);
    let mut in_table: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next())
        .collect();
    in_table.dedup();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    in_table.sort_unstable();
    assert_eq!(in_table, sorted, "{table}");
    let metrics = stdout(
        sb,
        db,
        &["results", "export", "--fleet", "--format", "openmetrics"],
    );
    for (name, h) in names.iter().zip(hosts) {
        let started = chrono::DateTime::parse_from_rfc3339(h["last_started_at"].as_str().unwrap())
            .unwrap()
            .timestamp();
        let line = metrics
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "hostbench_result_timestamp_seconds{{host=\"{name}\"}}"
                ))
            })
            .unwrap_or_else(|| panic!("{name}: {metrics}"));
        let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert_eq!(value as i64, started, "{line}");
    }
    assert!(
        metrics.contains("hostbench_noise_spread_ratio{host=\"rack12-node3\""),
        "{metrics}"
    );
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
        .args(["results", "list", "--db", &pg.url])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        err.contains("written by a newer hostbench (layout 99"),
        "{err}"
    );
}

/// A server that cannot be reached as a run starts costs no run: it measures into the
/// fallback store (`--fallback-db`), says so at once and at the end, exits 1, and records its
/// run as failed with why. The next `results push` sends the result and the run's state on, and
/// the fleet store shows that night's failure. A fallback that is a URL is refused (exit 2).
#[test]
fn a_server_down_at_the_start_costs_no_run_and_the_next_push_sends_it() {
    let sb = Sandbox::new();
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!(
            "postgresql://hostbench@127.0.0.1:{}/postgres",
            l.local_addr().unwrap().port()
        )
    };
    let out = sb
        .cmd()
        .args([
            "noise",
            "--db",
            &down,
            "--host-label",
            "nightly",
            "--no-noise-check",
            "5",
            "3",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    let fallback = sb.fallback_db().display().to_string();
    assert!(
        err.contains("cannot connect") && err.contains("measuring anyway, into"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "hostbench results push --db {fallback} --to {down} 1"
        )),
        "{err}"
    );
    let hosts = sb.json(&["results", "hosts", "--db", &fallback]);
    assert_eq!(hosts[0]["host"], "nightly", "{hosts}");
    assert_eq!(hosts[0]["last_id"], 1, "{hosts}");
    assert_eq!(hosts[0]["state"], "failed", "{hosts}");
    let why = hosts[0]["last_run"]["why"].as_str().unwrap();
    assert!(
        why.contains("not stored where asked") && why.contains("cannot connect"),
        "{why}"
    );
    // The store asked for was never created or written: a fallback is said, not silent.
    assert!(!sb.db().exists());

    let refused = sb
        .cmd()
        .args([
            "noise",
            "--fallback-db",
            &down,
            "--no-noise-check",
            "5",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--fallback-db names an SQLite file"));

    let Some(pg) =
        PgServer::start("a_server_down_at_the_start_costs_no_run_and_the_next_push_sends_it")
    else {
        return;
    };
    let pushed = sb
        .cmd()
        .args(["results", "push", "--db", &fallback, "--to", &pg.url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&pushed.stdout).into_owned();
    assert!(pushed.status.success(), "{pushed:?}");
    assert!(
        text.contains("1 added") && text.contains("Run states: 1 sent, 0 ended there already."),
        "{text}"
    );
    let fleet = sb.json(&["results", "hosts", "--db", &pg.url]);
    assert_eq!(fleet[0]["host"], "nightly", "{fleet}");
    assert_eq!(fleet[0]["results"], 1, "{fleet}");
    assert_eq!(fleet[0]["state"], "failed", "{fleet}");
    // Pushed again: nothing changes (the ended run is not rewritten, the result is there).
    let again = stdout(&sb, &pg.url, &["results", "pull", "--from", &fallback]);
    assert!(again.contains("1 already there"), "{again}");
    let again = sb
        .cmd()
        .args(["results", "push", "--db", &fallback, "--to", &pg.url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(
        text.contains("Run states: 0 sent, 1 ended there already."),
        "{text}"
    );
    // A run that reaches the server stores there and ends "finished".
    stdout(
        &sb,
        &pg.url,
        &[
            "noise",
            "--host-label",
            "nightly",
            "--no-noise-check",
            "5",
            "3",
        ],
    );
    let fleet = sb.json(&["results", "hosts", "--db", &pg.url]);
    assert_eq!(fleet[0]["state"], "ok", "{fleet}");
    assert_eq!(fleet[0]["last_run"]["outcome"], "finished", "{fleet}");
}

/// [`contract`], and the refusal of an id that is not there.
fn contract_checked(sb: &Sandbox, db: &str) {
    contract(sb, db);
    let missing = sb
        .cmd()
        .args(["results", "show", "--db", db, "999"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&missing.get_output().stderr).into_owned();
    assert!(err.contains("no stored result with id 999"), "{err}");
}

/// A copy of fixture `file` named `uuid` (another run, as far as a store can tell), written
/// into the sandbox.
fn renamed(sb: &Sandbox, file: &str, uuid: &str) -> (String, Value) {
    let mut v = fixture(file);
    v["uuid"] = Value::from(uuid);
    let path = sb.dir.path().join(format!("{uuid}.json"));
    std::fs::write(&path, v.to_string()).unwrap();
    (path.to_str().unwrap().to_string(), v)
}

/// Eight processes storing at once, three results each: every one arrives whole. Then eight
/// storing the same result at once: it is stored once.
fn eight_writers(sb: &Sandbox, db: &str) {
    let exe = assert_cmd::cargo::cargo_bin("hostbench");
    let files: Vec<Vec<(String, Value)>> = (0..8)
        .map(|w| {
            (0..3)
                .map(|k| {
                    let uuid = format!("00000000-0000-4000-8000-{:012}", w * 3 + k);
                    renamed(sb, if k == 1 { B } else { A }, &uuid)
                })
                .collect()
        })
        .collect();
    let spawn = |args: Vec<&str>| {
        Command::new(&exe)
            .args(["results", "import", "--db", db])
            .args(args)
            .env("HOSTBENCH_CACHE_DIR", sb.cache_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let wait = |writers: Vec<std::process::Child>| {
        for w in writers {
            let out = w.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    wait(
        files
            .iter()
            .map(|fs| spawn(fs.iter().map(|(p, _)| p.as_str()).collect()))
            .collect(),
    );
    let list = stdout(sb, db, &["results", "list"]);
    let rows: Vec<&str> = list.lines().filter(|l| l.contains("noise+index")).collect();
    assert_eq!(rows.len(), 24, "{list}");
    let mut expected: Vec<&Value> = files.iter().flatten().map(|(_, v)| v).collect();
    for id in 1..=24 {
        let back: Value = serde_json::from_str(&stdout(
            sb,
            db,
            &["results", "export", &id.to_string(), "--format", "json"],
        ))
        .unwrap();
        let at = expected.iter().position(|v| **v == back);
        assert!(at.is_some(), "result {id} changed or stored twice");
        expected.remove(at.unwrap());
    }
    wait((0..8).map(|_| spawn(vec![A])).collect());
    let list = stdout(sb, db, &["results", "list"]);
    assert_eq!(
        list.lines().filter(|l| l.contains("noise+index")).count(),
        25,
        "{list}"
    );
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
    use std::os::unix::fs::PermissionsExt;
    let mode = |m: u32| std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(m));
    let run = |with_file: bool| {
        let mut c = sb.cmd();
        c.args(["results", "list", "--db", "postgresql://"])
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
    // A file others may read is ignored, as libpq ignores it, and the refusal says why.
    mode(0o644).unwrap();
    let ignored = run(true).code(2);
    let err = String::from_utf8_lossy(&ignored.get_output().stderr).into_owned();
    assert!(err.contains("mode 0644"), "{err}");
    mode(0o600).unwrap();
    let ok = run(true).success();
    assert!(String::from_utf8_lossy(&ok.get_output().stdout)
        .starts_with("No stored results in postgresql://"));
    let refused = run(false).code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(err.contains("cannot connect"), "{err}");
    assert!(
        err.contains("wants a password for user hostbench and none was found")
            && err.contains(&format!(
                "the password file {}/.pgpass (not there",
                home.display()
            )),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
    // A wrong password: the server's own reason is said, not just "db error".
    let wrong = sb
        .cmd()
        .args(["results", "list", "--db", "postgresql://"])
        .env("PGHOST", pg.socket_dir())
        .env("PGUSER", "hostbench")
        .env("PGDATABASE", "postgres")
        .env("PGPASSWORD", "wrong")
        .env_remove("PGPASSFILE")
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&wrong.get_output().stderr).into_owned();
    assert!(
        err.contains("password authentication failed for user \"hostbench\""),
        "{err}"
    );
}

/// The owner's client, after deploy/postgres/roles.sql and then `then` (the logins a test
/// needs, and what else the owner does) have run.
fn with_roles(pg: &PgServer, then: &str) -> postgres::Client {
    let mut owner = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    owner
        .batch_execute(include_str!("../deploy/postgres/roles.sql"))
        .unwrap();
    owner.batch_execute(then).unwrap();
    owner
}

/// A fleet store for test `test`: a PostgreSQL server whose owner has stored result A (so the
/// layout exists), with the roles of deploy/postgres/roles.sql, then `logins` run by the owner
/// (the test's logins); the owner's connection is returned. None where the test is skipped.
fn fleet_store(test: &str, logins: &str) -> Option<(PgServer, Sandbox, postgres::Client)> {
    let pg = PgServer::start(test)?;
    let sb = Sandbox::new();
    stdout(&sb, &pg.url, &["results", "import", A]);
    let owner = with_roles(&pg, logins);
    Some((pg, sb, owner))
}

/// The owner's statement that binds this machine's hostname (what a run without
/// `--host-label` is stored as) and the fixtures' host `vm` to `login` (layout 12).
fn bind_this_host(login: &str) -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let name = name.trim();
    format!(
        "INSERT INTO hostbench_hosts (name, login) VALUES ('{name}', '{login}')
             ON CONFLICT (name) DO UPDATE SET login = excluded.login;
         INSERT INTO hostbench_hosts (name, login) VALUES ('vm', '{login}')
             ON CONFLICT (name) DO UPDATE SET login = excluded.login;"
    )
}

/// The server's URL, logged in as `user`.
fn as_login(pg: &PgServer, user: &str) -> String {
    pg.url.replacen("hostbench@", &format!("{user}@"), 1)
}

/// deploy/postgres/roles.sql: a host in the writer role stores (as it goes: rows updated, tags
/// replaced), a reader lists and compares but cannot store, and neither can migrate.
#[test]
fn the_fleet_roles_let_hosts_store_and_readers_only_read() {
    // The owner's first stored result makes the layout; then the roles and a login of each
    // kind.
    let Some((pg, sb, _)) = fleet_store(
        "the_fleet_roles_let_hosts_store_and_readers_only_read",
        &format!(
            "CREATE ROLE host1 LOGIN IN ROLE hostbench_writer;
             CREATE ROLE viewer LOGIN IN ROLE hostbench_reader;
             {}",
            bind_this_host("host1")
        ),
    ) else {
        return;
    };
    let (host1, viewer) = (as_login(&pg, "host1"), as_login(&pg, "viewer"));
    // The host stores results, a measuring run's checkpoints included, with its tags.
    stdout(&sb, &host1, &["results", "import", B]);
    stdout(
        &sb,
        &host1,
        &[
            "index",
            "--tag",
            "fleet=rack12",
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
    let (new_run, _) = renamed(&sb, A, "99999999-2222-4333-8444-555555555555");
    let refused = sb
        .cmd()
        .args(["results", "import", "--db", &viewer, &new_run])
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

/// Layout 11 on a fleet store: a host's login records and changes only its own runs' states,
/// deletes only its own results (another's is refused, naming its login; a reader deletes
/// nothing), and the database's owner deletes any.
#[test]
fn a_login_deletes_and_records_only_its_own_and_the_owner_deletes_any() {
    let Some((pg, sb, mut owner)) = fleet_store(
        "a_login_deletes_and_records_only_its_own_and_the_owner_deletes_any",
        "CREATE ROLE node1 LOGIN IN ROLE hostbench_writer;
         CREATE ROLE node2 LOGIN IN ROLE hostbench_writer;
         INSERT INTO hostbench_hosts (name, login) VALUES ('n1', 'node1'), ('n2', 'node2');
         CREATE ROLE viewer LOGIN IN ROLE hostbench_reader;",
    ) else {
        return;
    };
    let (node1, node2, viewer) = (
        as_login(&pg, "node1"),
        as_login(&pg, "node2"),
        as_login(&pg, "viewer"),
    );
    for (url, label) in [(&node1, "n1"), (&node2, "n2")] {
        stdout(
            &sb,
            url,
            &[
                "noise",
                "--host-label",
                label,
                "--tag",
                "k=v",
                "--no-noise-check",
                "5",
                "3",
            ],
        );
    }
    let mut id_of = |label: &str| -> i64 {
        owner
            .query_one("SELECT id FROM results WHERE host_label = $1", &[&label])
            .unwrap()
            .get(0)
    };
    let (n1, n2) = (id_of("n1"), id_of("n2"));
    // node2 may not delete node1's result; a reader may delete none.
    let out = sb
        .cmd()
        .args(["results", "delete", "--db", &node2, &n1.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("belongs to the login node1"),
        "{out:?}"
    );
    let out = sb
        .cmd()
        .args(["results", "delete", "--db", &viewer, &n2.to_string()])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    // Nor change node1's run state, or record one in node1's name, in SQL.
    let mut as_node2 = postgres::Client::connect(&node2, postgres::NoTls).unwrap();
    let changed = as_node2
        .execute(
            "UPDATE runs SET outcome = 'failed' WHERE host_label = 'n1'",
            &[],
        )
        .unwrap();
    assert_eq!(changed, 0);
    assert!(as_node2
        .execute(
            "INSERT INTO runs (uuid, host, command, started_at, outcome, owner)
             VALUES ('11111111-2222-4333-8444-555555555555', 'h', 'c', '2026-01-01T00:00:00+00:00', 'failed', 'node1')",
            &[],
        )
        .is_err());
    // node1 deletes its own, with its tags and figures.
    stdout(&sb, &node1, &["results", "delete", &n1.to_string()]);
    for table in [
        "results WHERE id",
        "result_tags WHERE result_id",
        "result_figures WHERE result_id",
    ] {
        let left: i64 = owner
            .query_one(&format!("SELECT count(*) FROM {table} = $1"), &[&n1])
            .unwrap()
            .get(0);
        assert_eq!(left, 0, "{table}");
    }
    // The owner deletes node2's.
    stdout(&sb, &pg.url, &["results", "delete", &n2.to_string()]);
    assert_eq!(listed(&sb, &viewer, &["--tag", "k=v"]), Vec::<i64>::new());
    // The runs' states are left: both finished, read by the reader.
    let hosts = sb.json(&["results", "hosts", "--db", &viewer, "--tag", "k=v"]);
    let outcomes: Vec<(&str, &str)> = hosts
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap(),
                h["last_run"]["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(outcomes.len(), 2, "{hosts}");
    assert!(outcomes.iter().all(|(_, o)| *o == "finished"), "{hosts}");
}

/// Retention and retirement on a fleet store hold to its rules: a host's login removes only
/// its own results and run states (and hears what stayed), cannot retire a host, and cannot
/// write the retired hosts' table in SQL; the owner retires one, and its readers' views leave
/// it out.
#[test]
fn retention_and_retirement_on_a_fleet_store_stay_within_its_rules() {
    let Some((pg, sb, mut owner)) = fleet_store(
        "retention_and_retirement_on_a_fleet_store_stay_within_its_rules",
        "CREATE ROLE node1 LOGIN IN ROLE hostbench_writer;
         CREATE ROLE node2 LOGIN IN ROLE hostbench_writer;
         INSERT INTO hostbench_hosts (name, login) VALUES ('n1', 'node1'), ('n2', 'node2');
         CREATE ROLE viewer LOGIN IN ROLE hostbench_reader;",
    ) else {
        return;
    };
    let (node1, node2, viewer) = (
        as_login(&pg, "node1"),
        as_login(&pg, "node2"),
        as_login(&pg, "viewer"),
    );
    for (url, label) in [
        (&node1, "n1"),
        (&node2, "n2"),
        (&node1, "n1"),
        (&node2, "n2"),
    ] {
        stdout(
            &sb,
            url,
            &[
                "noise",
                "--host-label",
                label,
                "--tag",
                "k=v",
                "--no-noise-check",
                "5",
                "3",
            ],
        );
    }
    let count = |owner: &mut postgres::Client, table: &str, label: &str| -> i64 {
        owner
            .query_one(
                &format!("SELECT count(*) FROM {table} WHERE host_label = $1"),
                &[&label],
            )
            .unwrap()
            .get(0)
    };
    // node1 keeps each host's newest: its own older result and run go, node2's stay, said.
    let out = sb
        .cmd()
        .args([
            "results", "delete", "--db", &node1, "--keep", "1", "--tag", "k=v",
        ])
        .output()
        .unwrap();
    let (said, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    assert!(
        said.starts_with("Deleted 1 result and 1 run state from "),
        "{said}"
    );
    assert!(
        err.contains("1 result and 1 run state stay: another login stored them"),
        "{err}"
    );
    assert_eq!(
        (
            count(&mut owner, "results", "n1"),
            count(&mut owner, "runs", "n1")
        ),
        (1, 1)
    );
    assert_eq!(
        (
            count(&mut owner, "results", "n2"),
            count(&mut owner, "runs", "n2")
        ),
        (2, 2)
    );
    // A host's login cannot retire a host, by hostbench or in SQL.
    let out = sb
        .cmd()
        .args(["results", "retire", "--db", &node1, "n2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("only the store's owner retires a host or brings one back"),
        "{out:?}"
    );
    let mut as_node2 = postgres::Client::connect(&node2, postgres::NoTls).unwrap();
    assert!(as_node2
        .execute(
            "INSERT INTO retired_hosts (name, retired_at) VALUES ('n1', '2026-01-01T00:00:00+00:00')",
            &[],
        )
        .is_err());
    // Nor may the owner store a row the table's check refuses.
    assert!(owner
        .execute(
            "INSERT INTO retired_hosts (name, retired_at) VALUES ('n1', 'yesterday')",
            &[],
        )
        .is_err());
    // The owner retires n2: the reader's fleet is n1 alone, and the export says n2 retired.
    stdout(&sb, &pg.url, &["results", "retire", "n2"]);
    let hosts = sb.json(&["results", "hosts", "--db", &viewer]);
    let names: Vec<&str> = hosts
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"n1") && !names.contains(&"n2"), "{hosts}");
    let metrics = stdout(
        &sb,
        &viewer,
        &["results", "export", "--fleet", "--format", "openmetrics"],
    );
    assert!(
        metrics.contains("hostbench_host_retired_timestamp_seconds{host=\"n2\"} "),
        "{metrics}"
    );
    // The owner's retention removes any login's.
    stdout(
        &sb,
        &pg.url,
        &["results", "delete", "--keep", "1", "--tag", "k=v"],
    );
    assert_eq!(
        (
            count(&mut owner, "results", "n2"),
            count(&mut owner, "runs", "n2")
        ),
        (1, 1)
    );
}

/// The `results list` ids of a store, and what a filter selects.
fn listed(sb: &Sandbox, db: &str, args: &[&str]) -> Vec<i64> {
    let mut all = vec!["results", "list"];
    all.extend(args);
    stdout(sb, db, &all)
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

fn exported(sb: &Sandbox, db: &str, id: i64) -> Value {
    serde_json::from_str(&stdout(
        sb,
        db,
        &["results", "export", &id.to_string(), "--format", "json"],
    ))
    .unwrap()
}

/// A host without the network keeps its results in SQLite and pushes them later: each is
/// stored once however often it is pushed, a repeat group stays a group under the ids the
/// server gives, a filter pushes only what it selects, and a pull brings them back whole.
#[test]
fn results_push_and_pull_between_sqlite_and_postgresql_store_each_once() {
    let Some(pg) = PgServer::start("results_push_and_pull_between_sqlite_and_postgresql") else {
        return;
    };
    let sb = Sandbox::new();
    let local = sb.dir.path().join("local.sqlite");
    let local = local.to_str().unwrap();
    stdout(&sb, local, &["results", "import", A, B]);
    stdout(
        &sb,
        local,
        &[
            "noise",
            "--tag",
            "kernel=patched",
            "--repeat",
            "2",
            "--no-noise-check",
            "5",
            "3",
        ],
    );
    assert_eq!(listed(&sb, local, &[]), [1, 2, 3, 4]);
    // The server already has B and another run, so the ids there differ from the ids here.
    let (other, _) = renamed(&sb, A, "11111111-2222-4333-8444-555555555555");
    stdout(&sb, &pg.url, &["results", "import", B, &other]);
    // A filter pushes only what it selects.
    let pushed = stdout(
        &sb,
        local,
        &[
            "results",
            "push",
            "--tag",
            "kernel=patched",
            "--to",
            &pg.url,
        ],
    );
    assert!(
        pushed.contains("Copied 2 results")
            && pushed.contains("2 added, 0 updated, 0 already there"),
        "{pushed}"
    );
    let pushed = stdout(&sb, local, &["results", "push", "--to", &pg.url]);
    assert!(
        pushed.contains("Copied 4 results")
            && pushed.contains("1 added, 0 updated, 3 already there"),
        "{pushed}"
    );
    let again = stdout(&sb, local, &["results", "push", "--to", &pg.url, "1", "2"]);
    assert!(
        again.contains("0 added, 0 updated, 2 already there"),
        "{again}"
    );
    assert_eq!(listed(&sb, &pg.url, &[]), [1, 2, 3, 4, 5]);
    // The group: local results 3 and 4 are the server's 3 and 4, named after its 3.
    assert_eq!(listed(&sb, &pg.url, &["--tag", "kernel=patched"]), [3, 4]);
    for id in [3, 4] {
        assert_eq!(
            exported(&sb, &pg.url, id)["repeat"]["group"],
            3,
            "result {id}"
        );
    }
    let group: Value = serde_json::from_str(&stdout(
        &sb,
        &pg.url,
        &["compare", "g3", &another_noise_run(&sb), "--format", "json"],
    ))
    .unwrap();
    assert_eq!(group["a"]["runs"], 2, "{group}");
    // Every result arrived whole; the server's A is the local 1.
    assert_eq!(exported(&sb, &pg.url, 5), exported(&sb, local, 1));
    assert_eq!(exported(&sb, &pg.url, 1), exported(&sb, local, 2));
    let mut local3 = exported(&sb, local, 3);
    local3["repeat"]["group"] = Value::from(3);
    assert_eq!(exported(&sb, &pg.url, 3), local3);
    // A pull into an empty store brings all five back, each once; pulling again adds nothing.
    let copy = sb.dir.path().join("copy.sqlite");
    let copy = copy.to_str().unwrap();
    let pulled = stdout(&sb, copy, &["results", "pull", "--from", &pg.url]);
    assert!(pulled.contains("5 added"), "{pulled}");
    let pulled = stdout(&sb, copy, &["results", "pull", "--from", &pg.url]);
    assert!(
        pulled.contains("0 added, 0 updated, 5 already there"),
        "{pulled}"
    );
    for id in 1..=5 {
        assert_eq!(
            exported(&sb, copy, id),
            exported(&sb, &pg.url, id),
            "result {id}"
        );
    }
    // A copy that finished later (pushed while its run was still going) takes the place of
    // the one there.
    let mut later = fixture(A);
    later["finished_at"] = Value::from("2026-11-23T21:00:00Z");
    let later_file = sb.dir.path().join("later.json");
    std::fs::write(&later_file, later.to_string()).unwrap();
    let updated = stdout(
        &sb,
        &pg.url,
        &["results", "import", later_file.to_str().unwrap()],
    );
    assert!(
        updated.contains("in place of an earlier copy") && updated.contains("as result 5"),
        "{updated}"
    );
    assert_eq!(exported(&sb, &pg.url, 5), later);
    // Ids and filters together are refused.
    sb.cmd()
        .args([
            "results", "push", "--db", local, "--to", &pg.url, "1", "--host", "x",
        ])
        .assert()
        .code(2);
}

/// A result of an earlier version has no UUID: it is named after its JSON, so importing the
/// same file twice still stores it once.
#[test]
fn a_result_without_a_uuid_is_stored_once() {
    let sb = Sandbox::new();
    let mut old = fixture(A);
    old.as_object_mut().unwrap().remove("uuid");
    let file = sb.dir.path().join("old.json");
    std::fs::write(&file, old.to_string()).unwrap();
    let db = sb.dir.path().join("s.sqlite");
    let db = db.to_str().unwrap();
    let f = file.to_str().unwrap();
    stdout(&sb, db, &["results", "import", f]);
    let again = stdout(&sb, db, &["results", "import", f]);
    assert!(again.starts_with("Already stored:"), "{again}");
    let back = exported(&sb, db, 1);
    assert!(
        back["uuid"].as_str().is_some_and(|u| u.len() == 36),
        "{back}"
    );
    assert_eq!(listed(&sb, db, &[]), [1]);
}

/// The fallback files a run left in `dir`.
fn fallback_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("hostbench-result-") && name.ends_with(".json")
        })
        .collect()
}

/// A server that took the run as it started and stops answering: the run's last store waits the
/// bound once, then the result and the run's state go to the fallback store, and the next push
/// sends both on (the server's "running" ends: no false hung run).
#[test]
fn a_server_that_stops_answering_mid_run_costs_a_bounded_wait_and_the_result_is_spooled() {
    let Some(pg) = PgServer::start("a_server_that_stops_answering_mid_run") else {
        return;
    };
    let sb = Sandbox::new();
    let run = |timeout: &str| {
        sb.std_cmd()
            .args(["noise", "10", "300"])
            .args(["--db", &pg.url, "--db-timeout", timeout, "--no-noise-check"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Frozen a second in: the run goes on; its last store waits 1 + 5 s, then the file.
    let child = run("1");
    std::thread::sleep(std::time::Duration::from_secs(1));
    pg.freeze();
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let waited = started.elapsed();
    pg.resume();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("did not answer within 6 s"), "{err}");
    assert!(waited < std::time::Duration::from_secs(25), "{waited:?}");
    assert!(err.contains("it is kept in "), "{err}");
    assert!(fallback_files(sb.dir.path()).is_empty(), "{err}");
    let spool = sb.fallback_db();
    let spool = spool.to_str().unwrap();
    assert_eq!(listed(&sb, spool, &[]), [1], "{err}");
    // Sent on with its state, in place of the checkpoint the run made before the freeze, if it
    // made one: the server's run is no longer "running".
    let pushed = stdout(&sb, spool, &["results", "push", "--to", &pg.url]);
    assert!(pushed.contains("Run states: 1 sent"), "{pushed}");
    let hosts = sb.json(&["results", "hosts", "--db", &pg.url]);
    assert_eq!(hosts[0]["results"], 1, "{hosts}");
    assert_eq!(hosts[0]["last_run"]["outcome"], "failed", "{hosts}");

    // A stop signal while it waits on a frozen server (30 s + 5 s) is not lost on the wait.
    let child = run("30");
    std::thread::sleep(std::time::Duration::from_secs(1));
    pg.freeze();
    std::thread::sleep(std::time::Duration::from_secs(4));
    let signalled = std::time::Instant::now();
    // SAFETY: a signal to our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let waited = signalled.elapsed();
    pg.resume();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(
        waited < std::time::Duration::from_secs(10),
        "{waited:?}: {err}"
    );
    assert_eq!(listed(&sb, spool, &[]), [1, 2], "{err}");
    assert!(fallback_files(sb.dir.path()).is_empty(), "{err}");
}

#[test]
fn a_listener_that_never_answers_is_given_up_on_at_the_connect_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts every connection and holds it open without a word.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().take(8) {
            held.push(s);
        }
        std::thread::sleep(std::time::Duration::from_secs(60));
    });
    let sb = Sandbox::new();
    let url = format!("postgresql://bench@127.0.0.1:{port}/hb?connect_timeout=2");
    // A reading command fails (exit 2, one line); a measuring one measures into the fallback
    // store (exit 1, said at once and at the end).
    for (args, code, lines) in [
        (&["results", "list"][..], 2, 1),
        (&["noise", "-l", "5000", "10", "2"], 1, 2),
    ] {
        let started = std::time::Instant::now();
        let out = sb.cmd().args(args).args(["--db", &url]).output().unwrap();
        let took = started.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains("did not answer within 2 s"), "{err}");
        assert!(took < std::time::Duration::from_secs(15), "{took:?}");
        assert_eq!(err.lines().count(), lines, "{err}");
    }
}

/// A password written into `--db` is kept nowhere and shown nowhere: not in the stored command
/// line, not in any format, not in a message — also one holding `/`, `?` and `#` (which end a
/// URL's user part elsewhere, not for the client), and one given as a query parameter whose
/// key is spelled with a percent escape (`pass%77ord=`, which the client decodes).
#[test]
fn a_password_in_the_url_is_never_stored_or_shown() {
    let password = "s3cret/?#x";
    let Some(pg) = PgServer::start_with(
        "a_password_in_the_url_is_never_stored_or_shown",
        Some(password),
    ) else {
        return;
    };
    let socket = pg.socket_dir().display().to_string();
    for (id, (url, kept)) in [
        (
            format!("postgresql://hostbench:{password}@localhost/postgres?host={socket}"),
            "--db=postgresql://hostbench:***@localhost".to_string(),
        ),
        (
            format!(
                "postgresql://hostbench@localhost/postgres?host={socket}&pass%77ord=s3cret%2F%3F%23x"
            ),
            format!("--db=postgresql://hostbench@localhost/postgres?host={socket}&pass%77ord=***"),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let id = (id + 1).to_string();
        let id = id.as_str();
        let sb = Sandbox::new();
        let run = |args: &[&str]| {
            let out = sb
                .cmd()
                .args(args)
                .arg(format!("--db={url}"))
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.status.success(), "{args:?}: {text}");
            text
        };
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let mut seen = run(&["noise", "-l", "5000", "10", "2"]);
        for args in [
            &["results", "list"][..],
            &["results", "show", id],
            &["results", "export", id, "--format", "json"],
            &["results", "export", id, "--format", "csv"],
            &["results", "export", id, "--format", "markdown"],
            &["results", "export", id, "--format", "html"],
            &["report", id, "-o", "-"],
            &["report", "--fleet", "--format", "json"],
        ] {
            seen.push_str(&run(args));
        }
        let out = sb
            .cmd()
            .args(["results", "show", "99"])
            .arg(format!("--db={url}"))
            .output()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&out.stderr));
        assert!(seen.contains(&kept), "the command line is kept, redacted: {seen}");
        assert!(!seen.contains("s3cret"), "a password was shown: {seen}");
        // Nor is it in the store itself.
        let row = client
            .query_one(
                "SELECT string_agg(result_json || headline || host, '') FROM results",
                &[],
            )
            .unwrap();
        let stored: String = row.get(0);
        assert!(stored.contains("***"), "{stored}");
        assert!(!stored.contains("s3cret"), "{stored}");
    }
}

/// Each way a connection fails is said in one line that names what to fix.
#[test]
fn a_failed_connection_says_what_is_wrong() {
    let Some(pg) = PgServer::start("a_failed_connection_says_what_is_wrong") else {
        return;
    };
    let sb = Sandbox::new();
    let socket = pg.socket_dir().display().to_string();
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for (db, says) in [
        (
            format!("postgresql://hostbench@localhost/nosuchdb?host={socket}"),
            "database \"nosuchdb\" does not exist".to_string(),
        ),
        (
            format!("postgresql://nobody@localhost/postgres?host={socket}"),
            "role \"nobody\" does not exist".to_string(),
        ),
        (
            format!("postgresql://hostbench@127.0.0.1:{port}/postgres"),
            format!("no server answers at 127.0.0.1:{port} (Connection refused"),
        ),
        (
            "postgresql://hostbench@localhost/postgres?host=/nonexistent".to_string(),
            "the socket /nonexistent/.s.PGSQL.5432 (No such file or directory".to_string(),
        ),
    ] {
        let out = sb
            .cmd()
            .args(["results", "list", "--db", &db])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{db}: {err}");
        assert!(err.contains(&says), "{db}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // A role that may not read the results table: the server's reason.
    let mut owner = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    sb.cmd()
        .args(["noise", "--db", &pg.url, "-l", "5000", "10", "2"])
        .assert()
        .success();
    owner
        .batch_execute("CREATE ROLE outsider LOGIN; GRANT SELECT ON hostbench_layout TO outsider;")
        .unwrap();
    let url = format!("postgresql://outsider@localhost/postgres?host={socket}");
    let out = sb
        .cmd()
        .args(["results", "list", "--db", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("permission denied for table results"), "{err}");
}

/// Row-level security (migration 4): a host's login adds and changes only its own results.
/// node2 cannot replace node1's result through `results import` or `results push`, even with a
/// copy of the same run that finished later and carries a forged tag, nor strip its tags or
/// change it in SQL; node2's own measuring run is stored as usual.
#[test]
fn a_host_login_cannot_rewrite_another_hosts_results() {
    let Some((pg, sb, mut owner)) = fleet_store(
        "a_host_login_cannot_rewrite_another_hosts_results",
        "CREATE ROLE node1 LOGIN IN ROLE hostbench_writer;
         CREATE ROLE node2 LOGIN IN ROLE hostbench_writer;
         INSERT INTO hostbench_hosts (name, login) VALUES ('node1', 'node1'), ('node2', 'node2');",
    ) else {
        return;
    };
    let (node1, node2) = (as_login(&pg, "node1"), as_login(&pg, "node2"));
    stdout(
        &sb,
        &node1,
        &[
            "noise",
            "--host-label",
            "node1",
            "--tag",
            "kernel=A",
            "-l",
            "5000",
            "10",
            "3",
        ],
    );
    let id = *listed(&sb, &node1, &["--host", "node1"]).last().unwrap();
    let before = exported(&sb, &node1, id);
    // The same run, "finished later", its figures and tag changed: what a forger would send.
    let mut forged = before.clone();
    forged["finished_at"] = "2099-01-01T00:00:00Z".into();
    forged["tags"]["kernel"] = "FORGED".into();
    forged["suites"][0]["runs"][0]["time_ns"] = 14_890_000u64.into();
    let file = sb.dir.path().join("forged.json");
    std::fs::write(&file, forged.to_string()).unwrap();
    let out = sb
        .cmd()
        .args(["results", "import", "--db", &node2])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "result {id}, stored by the login node1: not yours"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Through push from node2's own SQLite store: refused the same way.
    let local = sb.dir.path().join("node2.sqlite");
    let local = local.to_str().unwrap();
    stdout(&sb, local, &["results", "import", file.to_str().unwrap()]);
    let out = sb
        .cmd()
        .args(["results", "push", "--db", local, "--to", &node2])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("stored by the login node1: not yours"),
        "{err}"
    );
    // Nor in SQL: node2's UPDATE and DELETE see no row of node1's.
    let mut as_node2 = postgres::Client::connect(&node2, postgres::NoTls).unwrap();
    let changed = as_node2
        .execute(
            "UPDATE results SET headline = 'x', host_label = 'node2' WHERE id = $1",
            &[&id],
        )
        .unwrap();
    let stripped = as_node2
        .execute("DELETE FROM result_tags WHERE result_id = $1", &[&id])
        .unwrap();
    // Nor the figures kept beside it (layout 9), which `history` reads instead of the JSON.
    let unkept = as_node2
        .execute("DELETE FROM result_figures WHERE result_id = $1", &[&id])
        .unwrap();
    assert_eq!((changed, stripped, unkept), (0, 0, 0));
    assert!(
        as_node2
            .execute(
                "INSERT INTO result_figures (result_id, kept) VALUES ($1, '{}')",
                &[&(id + 1000)],
            )
            .is_err(),
        "node2 kept figures for a result that is not its own"
    );
    assert!(as_node2
        .execute(
            "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json, owner)
             VALUES ('', '', '', '', TRUE, 2, '{}', 'node1')",
            &[],
        )
        .is_err(), "node2 stored a row as node1's");
    assert_eq!(exported(&sb, &node1, id), before, "node1's result changed");
    assert_eq!(listed(&sb, &node1, &["--tag", "kernel=A"]), [id]);
    // node2's own run is stored, and node1 cannot change it either.
    stdout(
        &sb,
        &node2,
        &["noise", "--host-label", "node2", "-l", "5000", "10", "3"],
    );
    let mine = *listed(&sb, &node2, &["--host", "node2"]).last().unwrap();
    let mut as_node1 = postgres::Client::connect(&node1, postgres::NoTls).unwrap();
    let changed = as_node1
        .execute("UPDATE results SET headline = 'x' WHERE id = $1", &[&mine])
        .unwrap();
    assert_eq!(changed, 0);
    let owners: Vec<String> = owner
        .query("SELECT owner FROM results ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(owners, ["hostbench", "node1", "node2"]);
    // A host is its login (layout 12): node2 cannot store a run labelled node1, by a
    // measuring run (which measures into its fallback store instead, exit 1) or in SQL.
    let out = sb
        .cmd()
        .args(["noise", "--db", &node2, "--host-label", "node1"])
        .args(["-l", "5000", "10", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("hostbench_hosts") && err.contains("measuring anyway, into"),
        "{err}"
    );
    assert_eq!(listed(&sb, &node1, &["--host", "node1"]), [id]);
    assert!(as_node2
        .execute(
            "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json, host_label, uuid)
             SELECT started_at, suites, host, headline, incomplete, schema_version, result_json, host_label,
                    '99999999-2222-4333-8444-555555555555'
             FROM results WHERE id = $1",
            &[&id],
        )
        .is_err(), "node2 stored a row labelled node1");
    // A host moved to a new login by the owner: its new login stores it, and `results hosts`
    // names a label that several logins stored.
    owner
        .batch_execute("UPDATE hostbench_hosts SET login = 'node2' WHERE name = 'node1'")
        .unwrap();
    stdout(
        &sb,
        &node2,
        &["noise", "--host-label", "node1", "-l", "5000", "10", "3"],
    );
    let moved = *listed(&sb, &node1, &["--host", "node1"]).last().unwrap();
    let list = stdout(&sb, &node1, &["results", "list", "--host", "node1"]);
    let by = |id: i64| {
        list.lines()
            .find(|l| l.split_whitespace().next() == Some(&id.to_string()))
            .unwrap_or_else(|| panic!("no row {id}: {list}"))
            .to_string()
    };
    assert!(list.lines().next().unwrap().contains("STORED BY"), "{list}");
    assert!(by(id).contains(" node1  node1  "), "{list}");
    assert!(by(moved).contains(" node1  node2  "), "{list}");
    let hosts = stdout(&sb, &node1, &["results", "hosts"]);
    assert!(
        hosts.contains("Stored by more than one login")
            && hosts.contains("node1 (by node1, node2)"),
        "{hosts}"
    );
    assert!(!hosts.contains("node2 (by"), "{hosts}");
    let json: Value =
        serde_json::from_str(&stdout(&sb, &node1, &["results", "hosts", "--json"])).unwrap();
    let node1_row = json
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["host"] == "node1")
        .unwrap();
    assert_eq!(node1_row["owners"], serde_json::json!(["node1", "node2"]));
}

/// docs/fleet.md's set-up: an empty push makes the layout (no result needed), and a host's
/// login against a layout older than its hostbench is refused, saying the owner must migrate.
#[test]
fn an_empty_push_makes_the_layout_and_a_host_login_does_not_migrate() {
    let Some(pg) = PgServer::start("an_empty_push_makes_the_layout") else {
        return;
    };
    let sb = Sandbox::new();
    let nothing = sb.dir.path().join("never-made.sqlite");
    let out = sb
        .cmd()
        .args(["results", "push", "--to", &pg.url, "--db"])
        .arg(&nothing)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("Copied 0 results"), "{said}");
    assert!(
        said.contains("Made hostbench's layout (layout 14) in "),
        "{said}"
    );
    assert!(!nothing.exists());
    let mut owner = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    let version: i64 = owner
        .query_one("SELECT max(version)::BIGINT FROM hostbench_layout", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 14);
    // A result the owner stored, and what layouts 7 and 9 keep of it beside it.
    stdout(&sb, &pg.url, &["results", "import", A]);
    let figures = |owner: &mut postgres::Client| -> (Option<String>, Option<String>) {
        let headline = owner
            .query_one("SELECT figures FROM results WHERE id = 1", &[])
            .unwrap()
            .get(0);
        let all = owner
            .query_opt("SELECT kept FROM result_figures WHERE result_id = 1", &[])
            .ok()
            .flatten()
            .map(|r| r.get(0));
        (headline, all)
    };
    let kept = figures(&mut owner);
    assert!(
        kept.0.is_some()
            && kept
                .1
                .as_deref()
                .is_some_and(|k| k.contains("\"k\":\"noise/")),
        "a result stored at layout 9 has its figures: {kept:?}"
    );
    // The store as layout 6 left it: the row without figures, no table of them.
    with_roles(
        &pg,
        &format!(
            "CREATE ROLE node1 LOGIN IN ROLE hostbench_writer;
             {}
             DELETE FROM hostbench_layout WHERE version >= 7;
             UPDATE results SET figures = NULL;
             DROP TABLE result_figures;",
            bind_this_host("node1")
        ),
    );
    let node1 = as_login(&pg, "node1");
    let out = sb
        .cmd()
        .args(["noise", "--db", &node1, "-l", "5000", "10", "2"])
        .output()
        .unwrap();
    // The host's run is not lost: it is kept in the fallback store, and the run says why (exit 1).
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the store is at layout 6, this hostbench writes layout 14: the database's owner applies the migrations first")
            && err.contains("permission denied")
            && err.contains("it is kept in "),
        "{err}"
    );
    assert_eq!(
        listed(&sb, sb.fallback_db().to_str().unwrap(), &[]),
        [1],
        "the run is in the fallback store"
    );
    // The owner's next store migrates, and fills in the figures of the row stored before.
    assert_eq!(figures(&mut owner), (None, None));
    stdout(
        &sb,
        nothing.to_str().unwrap(),
        &["results", "push", "--to", &pg.url],
    );
    assert_eq!(figures(&mut owner), kept);
    // The migration gave the writer role its rights on the new table: a host stores.
    stdout(&sb, &node1, &["noise", "-l", "5000", "10", "2"]);
    let stored: i64 = owner
        .query_one(
            "SELECT count(*) FROM result_figures f JOIN results r ON r.id = f.result_id
             WHERE r.owner = 'node1'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 1);
}

/// A host's measuring run whose store the database refuses part way (its writer role loses
/// the right to update while it measures): one line says so, the run's result is in the
/// fallback store whole, and nothing it measured is lost.
#[test]
fn a_write_the_database_refuses_mid_run_leaves_the_result_in_the_fallback_store() {
    let Some((pg, sb, mut owner)) = fleet_store(
        "a_write_the_database_refuses_mid_run",
        &format!(
            "CREATE ROLE node1 LOGIN IN ROLE hostbench_writer; {}",
            bind_this_host("node1")
        ),
    ) else {
        return;
    };
    let node1 = as_login(&pg, "node1");
    let child = sb
        .std_cmd()
        .args(["noise", "--db", &node1, "--no-noise-check", "10", "300"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run has stored its first checkpoint (its row is node1's) when the right goes.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    owner
        .batch_execute("REVOKE INSERT, UPDATE ON results, result_tags FROM hostbench_writer")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("permission denied for table results") && err.contains("it is kept in "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(fallback_files(sb.dir.path()).is_empty(), "{err}");
    let saved = exported(&sb, sb.fallback_db().to_str().unwrap(), 1);
    assert_eq!(
        saved["suites"][0]["runs"].as_array().unwrap().len(),
        300,
        "{saved}"
    );
}

/// A fleet store is written by many hosts: a writer login can neither take another login's
/// result by its UUID (in any spelling), nor, with a row of its own that SQL made unreadable,
/// break `report --fleet`, `history --fleet`, `compare host:…` or `results pull` for anyone.
#[test]
fn a_fleet_writer_can_neither_squat_nor_break_its_readers() {
    let Some((pg, sb, mut owner)) = fleet_store(
        "a_fleet_writer_can_neither_squat_nor_break_its_readers",
        &format!(
            "CREATE ROLE host1 LOGIN IN ROLE hostbench_writer;
             CREATE ROLE host2 LOGIN IN ROLE hostbench_writer;
             CREATE ROLE viewer LOGIN IN ROLE hostbench_reader;
             {}",
            bind_this_host("host1")
        ),
    ) else {
        return;
    };
    let (host1, host2, viewer) = (
        as_login(&pg, "host1"),
        as_login(&pg, "host2"),
        as_login(&pg, "viewer"),
    );
    stdout(&sb, &host1, &["results", "import", B]);
    // The host `vm` moves to host2's login: host2 may write it, but not take host1's runs.
    owner.batch_execute(&bind_this_host("host2")).unwrap();
    // host2 stores host1's run under its UUID, as it is and respelled: never its own.
    let uuid = fixture(B)["uuid"].as_str().unwrap().to_string();
    for spelling in [
        uuid.clone(),
        uuid.to_uppercase(),
        format!("{{{uuid}}}"),
        format!("urn:uuid:{uuid}"),
        uuid.replace('-', ""),
    ] {
        let (file, _) = renamed(&sb, B, &spelling);
        let out = sb
            .cmd()
            .args(["results", "import", "--db", &host2, &file])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spelling}: {err}");
        assert!(
            err.contains("stored by the login host1: not yours"),
            "{spelling}: {err}"
        );
    }
    assert_eq!(listed(&sb, &pg.url, &[]), [1, 2]);
    // The nil and max UUIDs name no run.
    for spelling in [
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ] {
        let (file, _) = renamed(&sb, B, spelling);
        let out = sb
            .cmd()
            .args(["results", "import", "--db", &host2, &file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{spelling}");
    }
    // host2's own rows by raw SQL, which row-level security lets it write: the store's checks
    // refuse '{}' for a result, an unspelled UUID, 65 tags, a tag of 100 KB ...
    let mut as_host2 = postgres::Client::connect(&host2, postgres::NoTls).unwrap();
    let row = |json: &str, uuid: &str| {
        format!(
            "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json, uuid)
             VALUES ('2026-01-01T00:00:00+00:00', 'noise', 'vm', 'forged', FALSE, 2, '{json}', '{uuid}')"
        )
    };
    for (sql, check) in [
        (
            row("{}", "00000000-0000-4000-8000-00000000beef"),
            "results_json_is_a_result",
        ),
        (
            row("not json", "00000000-0000-4000-8000-00000000beef"),
            "json",
        ),
        (
            row(
                r#"{"schema_version":2,"started_at":"x","environment":{},"suites":[]}"#,
                &uuid.to_uppercase(),
            ),
            "results_uuid_names_a_run",
        ),
    ] {
        let e = as_host2.batch_execute(&sql).unwrap_err();
        let said = format!("{e:?}");
        assert!(said.contains(check), "{said}");
    }
    // ... but a row that passes them and is still no result is left out by every reader.
    as_host2
        .batch_execute(&row(
            r#"{"schema_version":2,"started_at":"x","environment":{},"suites":[]}"#,
            "00000000-0000-4000-8000-00000000beef",
        ))
        .unwrap();
    let bad: i64 = as_host2
        .query_one("SELECT max(id) FROM results", &[])
        .unwrap()
        .get(0);
    let tag = |k: &str, v: &str| {
        format!("INSERT INTO result_tags (result_id, key, value) VALUES ({bad}, '{k}', '{v}')")
    };
    for i in 0..64 {
        as_host2.batch_execute(&tag(&format!("k{i}"), "v")).unwrap();
    }
    let e = as_host2.batch_execute(&tag("k64", "v")).unwrap_err();
    assert!(format!("{e:?}").contains("at most 64 tags"), "{e:?}");
    as_host2
        .batch_execute(&format!("DELETE FROM result_tags WHERE result_id = {bad}"))
        .unwrap();
    let e = as_host2
        .batch_execute(&tag("big", &"x".repeat(100_000)))
        .unwrap_err();
    assert!(format!("{e:?}").contains("result_tags_bounded"), "{e:?}");
    let said = |args: &[&str]| {
        let out = sb
            .cmd()
            .args(args)
            .arg("--db")
            .arg(&viewer)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {err}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    let (page, _) = said(&["report", "--fleet", "--format", "json"]);
    assert!(page.contains(&format!("result {bad} left out")), "{page}");
    let (_, err) = said(&["history", "--fleet", "noise/"]);
    assert!(err.contains(&format!("result {bad} left out")), "{err}");
    let (other, _) = renamed(&sb, B, "99999999-2222-4333-8444-555555555555");
    let (_, err) = said(&["compare", "host:vm", &other]);
    assert!(err.contains(&format!("result {bad} left out")), "{err}");
    let copy = sb.dir.path().join("pulled.sqlite");
    let out = sb
        .cmd()
        .args(["results", "pull", "--from", &viewer, "--db"])
        .arg(&copy)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("result {bad} of")) && err.contains("left out"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Copied 2 results"));
}

/// `results import` of runs of a `--repeat` group: a run keeps its group only where the
/// group's first run is stored there (the group in a file names a run of the store it came
/// from); and a UUID in another spelling is the same run, stored once.
#[test]
fn an_imported_run_joins_only_its_own_group_and_a_respelled_uuid_is_the_same_run() {
    let sb = Sandbox::new();
    let from = sb.dir.path().join("from.sqlite");
    let from = from.to_str().unwrap();
    stdout(
        &sb,
        from,
        &["noise", "--repeat", "2", "--no-noise-check", "5", "3"],
    );
    let export = |id: &str| {
        let v: Value = serde_json::from_str(&stdout(
            &sb,
            from,
            &["results", "export", id, "--format", "json"],
        ))
        .unwrap();
        let path = sb.dir.path().join(format!("run{id}.json"));
        std::fs::write(&path, v.to_string()).unwrap();
        (path.to_str().unwrap().to_string(), v)
    };
    let ((first, v1), (second, v2)) = (export("1"), export("2"));
    assert_eq!(
        (
            v1["repeat"]["group"].as_i64(),
            v2["repeat"]["group"].as_i64()
        ),
        (Some(1), Some(1))
    );
    let show = |db: &str, id: &str| -> Value {
        serde_json::from_str(&stdout(
            &sb,
            db,
            &["results", "export", id, "--format", "json"],
        ))
        .unwrap()
    };
    // Alone, after an unrelated result that is id 1 there: it joins no group.
    let alone = sb.dir.path().join("alone.sqlite");
    let alone = alone.to_str().unwrap();
    stdout(&sb, alone, &["results", "import", A, &second]);
    assert!(
        show(alone, "2").get("repeat").is_none(),
        "{}",
        show(alone, "2")
    );
    // With its first run (given after it): the group is named after the first run's id there.
    let both = sb.dir.path().join("both.sqlite");
    let both = both.to_str().unwrap();
    stdout(&sb, both, &["results", "import", A, &second, &first]);
    let (f, s) = (show(both, "2"), show(both, "3"));
    assert_eq!(f["uuid"], v1["uuid"], "the first run is stored first");
    assert_eq!(
        (f["repeat"]["group"].as_i64(), s["repeat"]["group"].as_i64()),
        (Some(2), Some(2))
    );
    // Another spelling of a stored run's UUID is that run.
    let upper = v1["uuid"].as_str().unwrap().to_uppercase();
    let (respelled, _) = renamed_file(&sb, &v1, &format!("{{{upper}}}"));
    let said = stdout(&sb, both, &["results", "import", &respelled]);
    assert!(
        said.contains("Already stored") && said.contains("as result 2"),
        "{said}"
    );
    assert_eq!(listed(&sb, both, &[]), [1, 2, 3]);
}

/// `v` with its UUID set to `uuid`, in a file of the sandbox.
fn renamed_file(sb: &Sandbox, v: &Value, uuid: &str) -> (String, Value) {
    let mut v = v.clone();
    v["uuid"] = Value::from(uuid);
    let path = sb
        .dir
        .path()
        .join(format!("respelled-{}.json", common::fresh_uuid()));
    std::fs::write(&path, v.to_string()).unwrap();
    (path.to_str().unwrap().to_string(), v)
}

/// Layout 10 on a real server: the owner's first open puts every stored UUID in its one
/// spelling (the same run stored twice is one; another run under a copied UUID keeps its own),
/// then the checks hold new rows to it.
#[test]
fn layout_10_respells_a_servers_uuids_and_then_checks_them() {
    let Some(pg) = PgServer::start("layout_10_respells_a_servers_uuids_and_then_checks_them")
    else {
        return;
    };
    let sb = Sandbox::new();
    stdout(&sb, &pg.url, &["results", "import", A]);
    let mut owner = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    // Back to layout 9, with rows as a store of that layout could hold them.
    owner
        .batch_execute(
            "DELETE FROM hostbench_layout WHERE version >= 10;
             DROP TABLE runs CASCADE;
             ALTER TABLE results DROP CONSTRAINT results_json_is_a_result;
             ALTER TABLE results DROP CONSTRAINT results_uuid_names_a_run;
             ALTER TABLE results DROP CONSTRAINT results_label_bounded;
             ALTER TABLE results DROP CONSTRAINT results_figures_are_json;
             ALTER TABLE result_tags DROP CONSTRAINT result_tags_bounded;
             ALTER TABLE result_figures DROP CONSTRAINT result_figures_are_json;
             DROP TRIGGER result_tags_bounded ON result_tags;",
        )
        .unwrap();
    let a = fixture(A)["uuid"].as_str().unwrap().to_string();
    let insert = |owner: &mut postgres::Client, uuid: &str, host: &str| {
        owner
            .execute(
                "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json, uuid, machine_id)
                 SELECT started_at, suites, $2, headline, incomplete, schema_version, result_json, $1, machine_id
                 FROM results WHERE id = 1",
                &[&uuid, &host],
            )
            .unwrap();
    };
    insert(&mut owner, &a.to_uppercase(), "vm");
    insert(&mut owner, &format!("{{{a}}}"), "elsewhere");
    let lone = "7a1e2b3c-4d5e-4f60-8a71-92b3c4d5e6f7";
    insert(&mut owner, &lone.replace('-', ""), "vm");
    assert_eq!(listed(&sb, &pg.url, &[]), [1, 2, 3, 4]);
    // The owner opens it to store: the migration runs.
    stdout(&sb, &pg.url, &["results", "import", B]);
    let uuids: Vec<(i64, String)> = owner
        .query("SELECT id, uuid FROM results ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(uuids.len(), 4, "{uuids:?}");
    assert_eq!(uuids[0], (1, a.clone()));
    assert!(
        uuids.iter().all(|(id, _)| *id != 2),
        "the same run twice: {uuids:?}"
    );
    assert!(uuids.contains(&(4, lone.to_string())), "{uuids:?}");
    let (_, moved) = uuids.iter().find(|(id, _)| *id == 3).unwrap();
    assert!(
        moved != &a && moved.len() == 36 && moved == &moved.to_lowercase(),
        "{uuids:?}"
    );
    // And the checks are there.
    let e = owner
        .batch_execute("UPDATE results SET uuid = upper(uuid) WHERE id = 1")
        .unwrap_err();
    assert!(
        format!("{e:?}").contains("results_uuid_names_a_run"),
        "{e:?}"
    );
}

/// Layout 12, tried as a second writer would (issue: "a host is its login"): node2 watches
/// `runs` and stores a result under node1's running run's UUID, by raw SQL and by
/// `results import`, and fails; node1's run is stored as usual. node2 cannot record a run in
/// node1's name (dated 2099), nor hide node1's runs with a time that is no time, nor join its
/// result to node1's repeat group; a result's JSON over the bound is refused before it is
/// parsed; a host bound to a machine id takes results of that machine alone.
#[test]
fn a_host_is_its_login_and_the_database_holds_every_fleet_rule() {
    let Some((pg, sb, mut owner)) = fleet_store(
        "a_host_is_its_login_and_the_database_holds_every_fleet_rule",
        &format!(
            "CREATE ROLE node1 LOGIN IN ROLE hostbench_writer;
             CREATE ROLE node2 LOGIN IN ROLE hostbench_writer;
             INSERT INTO hostbench_hosts (name, login) VALUES ('n1', 'node1'), ('n2', 'node2');
             {}",
            bind_this_host("node2")
        ),
    ) else {
        return;
    };
    let (node1, node2) = (as_login(&pg, "node1"), as_login(&pg, "node2"));
    let run = sb
        .std_cmd()
        .args([
            "noise",
            "--db",
            &node1,
            "--host-label",
            "n1",
            "--repeat",
            "2",
        ])
        .args(["--no-noise-check", "10", "150"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The watcher: node2 polls `runs` for node1's running run and races to claim its UUID.
    let mut as_node2 = postgres::Client::connect(&node2, postgres::NoTls).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let uuid: String = loop {
        let row = as_node2
            .query_opt(
                "SELECT uuid FROM runs WHERE host_label = 'n1' AND outcome = 'running'",
                &[],
            )
            .unwrap();
        if let Some(r) = row {
            break r.get(0);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "node1's run never showed"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let raw = as_node2.execute(
        "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json, host_label, uuid)
         SELECT started_at, suites, host, headline, incomplete, schema_version, result_json, 'n2', $1
         FROM results WHERE id = 1",
        &[&uuid],
    );
    let e = raw.expect_err("node2 claimed node1's run by SQL");
    assert!(format!("{e:?}").contains("row-level security"), "{e:?}");
    let (file, _) = renamed(&sb, B, &uuid);
    let out = sb
        .cmd()
        .args(["results", "import", "--db", &node2, &file])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // Refused by the server's claim, or (once node1's first checkpoint is stored) by name.
    assert!(
        err.contains("hostbench_hosts") || err.contains("stored by the login node1: not yours"),
        "{err}"
    );
    let out = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "node1's run: {err}");
    let stored: Vec<(String, String)> = owner
        .query(
            "SELECT owner, coalesce(host_label, host) FROM results WHERE uuid = $1",
            &[&uuid],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(stored, [("node1".to_string(), "n1".to_string())]);
    // A run recorded in node1's name, dated far ahead: refused (the name is node1's login's).
    let forged_run = |host_label: &str, started: &str| {
        format!(
            "INSERT INTO runs (uuid, host, host_label, command, started_at, outcome)
             VALUES ('{}', 'h', '{host_label}', 'c', '{started}', 'finished')",
            common::fresh_uuid()
        )
    };
    let e = as_node2
        .batch_execute(&forged_run("n1", "2099-01-01T00:00:00+00:00"))
        .unwrap_err();
    assert!(format!("{e:?}").contains("row-level security"), "{e:?}");
    // Under its own name neither a time ahead nor one that is no time is taken.
    for started in [
        "2099-01-01T00:00:00+00:00",
        "zzzz",
        "2026-13-01T00:00:00+00:00",
    ] {
        let e = as_node2
            .batch_execute(&forged_run("n2", started))
            .unwrap_err();
        assert!(
            format!("{e:?}").contains("runs_times_are_times"),
            "{started}: {e:?}"
        );
    }
    // node2's own result may not join node1's repeat group.
    let group: i64 = owner
        .query_one("SELECT repeat_group FROM results WHERE uuid = $1", &[&uuid])
        .unwrap()
        .get(0);
    stdout(
        &sb,
        &node2,
        &["noise", "--host-label", "n2", "--no-noise-check", "5", "3"],
    );
    let e = as_node2
        .execute(
            "UPDATE results SET repeat_group = $1 WHERE host_label = 'n2'",
            &[&group],
        )
        .unwrap_err();
    assert!(
        format!("{e:?}").contains("not a group of this host"),
        "{e:?}"
    );
    // Tables of its own that shadow the store's (a temporary table comes first in a session's
    // search_path) fool neither the trigger nor the policies.
    as_node2
        .batch_execute(&format!(
            "CREATE TEMP TABLE results (id BIGINT, owner TEXT, host TEXT, host_label TEXT);
             INSERT INTO pg_temp.results VALUES ({group}, 'node2', 'h', 'n2');
             CREATE TEMP TABLE hostbench_hosts (name TEXT, login TEXT, machine_id TEXT);
             INSERT INTO pg_temp.hostbench_hosts VALUES ('n1', 'node2', NULL);"
        ))
        .unwrap();
    let e = as_node2
        .execute(
            "UPDATE public.results SET repeat_group = $1 WHERE host_label = 'n2'",
            &[&group],
        )
        .unwrap_err();
    assert!(
        format!("{e:?}").contains("not a group of this host"),
        "{e:?}"
    );
    let e = as_node2
        .batch_execute(
            &forged_run("n1", "2026-01-01T00:00:00+00:00").replace("INTO runs", "INTO public.runs"),
        )
        .unwrap_err();
    assert!(format!("{e:?}").contains("row-level security"), "{e:?}");
    as_node2
        .batch_execute("DROP TABLE pg_temp.results; DROP TABLE pg_temp.hostbench_hosts;")
        .unwrap();
    // Nor give its own result a figure no run can produce (the fleet page's rule).
    let e = as_node2
        .execute(
            "UPDATE results SET figures = '{\"noise_floor_pct\":null,\"values\":[{\"value\":-5,\"kind\":\"k\",\"note\":\"\"}]}'
             WHERE host_label = 'n2'",
            &[],
        )
        .unwrap_err();
    assert!(
        format!("{e:?}").contains("results_figures_possible"),
        "{e:?}"
    );
    // A result's JSON over 16 MiB: refused by its length, before any parse.
    let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(17 << 20));
    let e = as_node2
        .execute(
            "INSERT INTO results (started_at, suites, host, headline, incomplete, schema_version, result_json, host_label, uuid)
             VALUES ('2026-01-01T00:00:00+00:00', 'noise', 'h', 'x', FALSE, 2, $1, 'n2', $2)",
            &[&huge, &common::fresh_uuid()],
        )
        .unwrap_err();
    assert!(
        format!("{e:?}").contains("results_json_is_a_result"),
        "{e:?}"
    );
    // A name bound to a machine id takes that machine's results alone.
    owner
        .batch_execute(
            "UPDATE hostbench_hosts SET machine_id = 'another-machine' WHERE name = 'vm'",
        )
        .unwrap();
    let out = sb
        .cmd()
        .args(["results", "import", "--db", &node2])
        .arg(renamed(&sb, B, &common::fresh_uuid()).0)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("hostbench_hosts"), "{err}");
    // A push whose run states the server refuses (one in node1's name, kept in node2's own
    // SQLite store) says so and fails, after sending the rest.
    let local = sb.dir.path().join("node2-own.sqlite");
    let local = local.to_str().unwrap();
    stdout(
        &sb,
        local,
        &["noise", "--host-label", "n2", "--no-noise-check", "5", "3"],
    );
    rusqlite::Connection::open(local)
        .unwrap()
        .execute(
            "INSERT INTO runs (uuid, host, host_label, command, started_at, outcome)
             VALUES (?1, 'h', 'n1', 'c', '2026-01-01T00:00:00+00:00', 'failed')",
            [common::fresh_uuid()],
        )
        .unwrap();
    let out = sb
        .cmd()
        .args(["results", "push", "--db", local, "--to", &node2])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("(failed) refused by") && err.contains("1 run state was refused"),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 added"),
        "{out:?}"
    );
    // The latest run of each host is the latest in time: node1's is its own, finished.
    let hosts = sb.json(&["results", "hosts", "--db", &node1, "--host", "n1"]);
    assert_eq!(hosts[0]["last_run"]["outcome"], "finished", "{hosts}");
    // A pulled copy keeps who recorded each run.
    let copy = sb.dir.path().join("pulled.sqlite");
    sb.cmd()
        .args(["results", "pull", "--from", &node1, "--host", "n1", "--db"])
        .arg(&copy)
        .assert()
        .success();
    let owners: Vec<Option<String>> = rusqlite::Connection::open(&copy)
        .unwrap()
        .prepare("SELECT DISTINCT owner FROM runs")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(owners, [Some("node1".to_string())]);
}

/// The fallback store is opened at every start, not only on the night the server is down: one
/// in a directory another user controls refuses the run (exit 2) while the server is up, and
/// nothing is measured.
#[test]
fn a_fallback_store_that_could_not_take_the_run_is_said_while_the_server_is_up() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to make another user's directory");
        return;
    }
    let Some(pg) = PgServer::start("a_fallback_store_that_could_not_take_the_run") else {
        return;
    };
    let sb = Sandbox::new();
    let theirs = sb.dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(54_321), Some(54_321)).unwrap();
    let out = sb
        .cmd()
        .args([
            "noise",
            "--no-noise-check",
            "-l",
            "5000",
            "10",
            "2",
            "--db",
            &pg.url,
        ])
        .arg("--fallback-db")
        .arg(theirs.join("held.sqlite"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the fallback store"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!theirs.join("held.sqlite").exists());
    assert!(listed(&sb, &pg.url, &[]).is_empty());
}

/// Layout 13 on a real server: an index result stored before it, whose figures said "1 copy,
/// 12 tests" whatever ran, says what it measured once the owner's next open migrates.
#[test]
fn layout_13_gives_a_servers_index_results_the_kind_of_what_they_measured() {
    let Some(pg) =
        PgServer::start("layout_13_gives_a_servers_index_results_the_kind_of_what_they_measured")
    else {
        return;
    };
    let sb = Sandbox::new();
    stdout(&sb, &pg.url, &["results", "import", A]);
    let mut owner = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    let measured = "1 copy, 3 of 12 tests: dhry2reg syscall spawn, 0.2 s a test";
    // Back to layout 12, with the figures a store of that layout held.
    owner
        .batch_execute(&format!(
            "DELETE FROM hostbench_layout WHERE version >= 13;
             UPDATE results SET figures = replace(figures, '{measured}', '1 copy, 12 tests');"
        ))
        .unwrap();
    let figures = |owner: &mut postgres::Client| -> String {
        owner
            .query_one("SELECT figures FROM results WHERE id = 1", &[])
            .unwrap()
            .get(0)
    };
    assert!(!figures(&mut owner).contains(measured));
    // The owner opens it to store: the migration runs.
    stdout(&sb, &pg.url, &["results", "import", B]);
    assert!(
        figures(&mut owner).contains(measured),
        "{}",
        figures(&mut owner)
    );
    let layout: i64 = owner
        .query_one("SELECT max(version)::BIGINT FROM hostbench_layout", &[])
        .unwrap()
        .get(0);
    assert_eq!(layout, 14);
}

/// TLS as libpq's `sslmode` asks, against a server with `ssl=on` and a CA of its own that
/// rejects every TCP connection without TLS: `verify-full` stores and reads; `verify-ca` takes
/// the certificate under another name, `verify-full` does not; another CA is refused; `require`
/// encrypts without checking; `disable` is turned away by the server; a mode libpq does not
/// have is one line and exit 2.
#[test]
fn tls_modes_check_what_libpq_checks_and_a_plain_connection_never_gets_through() {
    let Some((_pg, port, ca)) = PgServer::start_tls(
        "tls_modes_check_what_libpq_checks_and_a_plain_connection_never_gets_through",
    ) else {
        return;
    };
    let sb = Sandbox::new();
    let other = ca.with_file_name("other-ca.crt");
    let url = |host: &str, mode: &str, root: &Path| {
        format!(
            "postgresql://hostbench@{host}:{port}/postgres?sslmode={mode}&sslrootcert={}",
            root.display()
        )
    };
    let full = url("localhost", "verify-full", &ca);
    stdout(&sb, &full, &["results", "import", A]);
    assert_eq!(listed(&sb, &full, &[]), [1]);
    assert_eq!(listed(&sb, &url("127.0.0.1", "verify-ca", &ca), &[]), [1]);
    let plain = format!("postgresql://hostbench@localhost:{port}/postgres?sslmode=require");
    assert_eq!(listed(&sb, &plain, &[]), [1]);
    let refused = |db: &str, why: &str| {
        let out = sb
            .cmd()
            .args(["results", "list", "--db", db])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{db}: {out:?}");
        assert!(err.contains(why), "{db}: {err}");
    };
    refused(
        &url("127.0.0.1", "verify-full", &ca),
        "certificate verify failed",
    );
    refused(
        &url("localhost", "verify-full", &other),
        "certificate verify failed",
    );
    refused(
        &format!("postgresql://hostbench@localhost:{port}/postgres?sslmode=disable"),
        "no encryption",
    );
    let bad = sb
        .cmd()
        .args(["results", "list", "--db"])
        .arg(url("localhost", "verify", &ca))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("sslmode \"verify\" is none of"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
