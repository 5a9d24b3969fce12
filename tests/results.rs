//! `hostbench results`: what a run stored can be listed and shown again.

mod common;

use common::{noise, Sandbox};

#[test]
fn list_and_show_find_what_was_stored() {
    let sb = Sandbox::new();
    let empty = sb.cmd().args(["results", "list"]).output().unwrap();
    assert!(empty.status.success());
    assert!(String::from_utf8_lossy(&empty.stdout).contains("No stored results"));

    let first = sb.json(&["noise", "10", "3"]);
    sb.json(&["noise", "-m", "16", "10", "3"]);

    let out = sb.cmd().args(["results", "list"]).output().unwrap();
    let list = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(rows[0].trim_start().starts_with("1 ") && rows[0].contains("noise"));
    assert!(rows[0].contains("10 ms CPU"), "{list}");
    assert!(rows[1].contains("mem 16 MB"), "{list}");
    assert!(!list.contains("[incomplete]"));

    let shown = sb.json(&["results", "show", "1"]);
    assert_eq!(noise(&shown)["runs"], noise(&first)["runs"]);
    assert_eq!(shown["started_at"], first["started_at"]);

    let text = sb.cmd().args(["results", "show", "2"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Host: "), "{text}");
    assert!(
        text.contains("memory read loop, 16 Mbyte working set"),
        "{text}"
    );
    assert!(text.contains("Percentiles:"));
}

/// An older store may hold any text in a result's labels (hostbench once took them as given):
/// every reader still works, shows it cut and with its control characters escaped, and the
/// fleet CSV does not hand a spreadsheet a formula.
#[test]
fn labels_an_older_store_holds_cannot_break_a_reader() {
    let sb = Sandbox::new();
    for label in ["n1", "n2"] {
        sb.json(&["noise", "--host-label", label, "-l", "5000", "10", "2"]);
    }
    let hostile = [
        "x".repeat(70_000),
        "\u{1b}]0;owned\u{7}\u{1b}[31mred\r\nsplit".to_string(),
        "=HYPERLINK(\"http://example.invalid\",\"x\")".to_string(),
    ];
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    for (id, label) in [(1, &hostile[0]), (2, &hostile[1])] {
        conn.execute(
            "UPDATE results SET host_label = ?1,
             result_json = json_set(result_json, '$.host_label', ?1) WHERE id = ?2",
            rusqlite::params![label, id],
        )
        .unwrap();
    }
    sb.json(&["noise", "--host-label", "n3", "-l", "5000", "10", "2"]);
    conn.execute(
        "UPDATE results SET host_label = ?1, result_json = json_set(result_json, '$.host_label', ?1) WHERE id = 3",
        [&hostile[2]],
    )
    .unwrap();
    drop(conn);
    let run = |args: &[&str]| {
        let out = sb.cmd().args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r'),
            "{args:?}: {text}"
        );
        text
    };
    let list = run(&["results", "list"]);
    assert_eq!(list.lines().count(), 4, "{list}");
    assert!(
        list.contains("\\e]0;owned\\u{7}\\e[31mred\\r\\nsplit"),
        "{list}"
    );
    assert!(list.lines().all(|l| l.chars().count() < 400), "{list}");
    let text = run(&["report", "--fleet", "--format", "text"]);
    assert!(text.contains("xxx…"), "{text}");
    let csv = run(&["report", "--fleet", "--format", "csv"]);
    assert!(csv.contains("\"'=HYPERLINK("), "{csv}");
    assert!(
        !csv.lines()
            .any(|l| l.starts_with("=") || l.starts_with("\"=")),
        "{csv}"
    );
    let page = sb.dir.path().join("fleet.html");
    run(&["report", "--fleet", "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains('\u{1b}'));
}

/// `results hosts`: a row per host by its latest result, the stale ones first and marked.
#[test]
fn hosts_lists_each_host_by_its_latest_result_and_marks_the_stale() {
    let sb = Sandbox::new();
    for (label, rack) in [("n1", "a"), ("n2", "a"), ("n1", "a"), ("n3", "b")] {
        sb.json(&[
            "noise",
            "--host-label",
            label,
            "--tag",
            &format!("rack={rack}"),
            "-l",
            "5000",
            "10",
            "2",
        ]);
    }
    // n2's only result is three days old.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let old = (chrono::Utc::now() - chrono::Duration::days(3)).to_rfc3339();
    conn.execute("UPDATE results SET started_at = ?1 WHERE id = 2", [&old])
        .unwrap();
    drop(conn);
    let out = sb.cmd().args(["results", "hosts"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = text.lines().skip(1).take(3).collect();
    assert!(
        rows[0].starts_with("n2 ") && rows[0].contains("STALE") && rows[0].contains("3.0 d"),
        "{text}"
    );
    assert!(rows[1..].iter().all(|r| r.contains(" ok ")), "{text}");
    let n1 = rows.iter().find(|r| r.starts_with("n1 ")).unwrap();
    // Two results, the latest of them id 3.
    let cells: Vec<&str> = n1.split_whitespace().collect();
    assert_eq!(&cells[..3], ["n1", "2", "3"], "{text}");
    assert!(
        text.contains(
            "3 hosts: 0 failed, 0 hung (running over 8 h), 1 stale (no result for over 24 h)."
        ),
        "{text}"
    );
    // --tag selects, --json gives the rows.
    let json = sb.json(&["results", "hosts", "--tag", "rack=b"]);
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["host"], "n3");
    assert_eq!(rows[0]["stale"], false);
    let json = sb.json(&["results", "hosts", "--stale-hours", "100"]);
    assert!(json.as_array().unwrap().iter().all(|r| r["stale"] == false));
    // Fractions of an hour: 0.0003 h is about a second, and every result is older.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let json = sb.json(&["results", "hosts", "--stale-hours", "0.0003"]);
    assert!(json.as_array().unwrap().iter().all(|r| r["stale"] == true));
    let zero = sb
        .cmd()
        .args(["results", "hosts", "--stale-hours", "0"])
        .output()
        .unwrap();
    assert_eq!(zero.status.code(), Some(2));
}

/// Every run records its state as it starts and as it ends, and `results hosts` shows each
/// host's last run: one that failed before it had a result (its work directory refused) is a
/// FAILED row with why, also for a host with no result at all; a run killed outright stays
/// "running"; `--tag` selects runs by their tags too.
#[test]
fn hosts_shows_each_hosts_last_run_and_a_failed_one_with_why() {
    let sb = Sandbox::new();
    let ok = |label: &str| {
        sb.cmd()
            .args([
                "noise",
                "--host-label",
                label,
                "--tag",
                "rack=a",
                "-l",
                "5000",
                "10",
                "2",
            ])
            .assert()
            .success();
    };
    ok("good");
    ok("broke");
    // A work directory another user could swap things in: refused after the store opened.
    for label in ["broke", "never"] {
        sb.refused_run(&["--host-label", label, "--tag", "rack=a"]);
    }
    // A run killed outright: its state stays "running".
    let mut killed = sb.std_cmd();
    killed.args([
        "noise",
        "--host-label",
        "killed",
        "--tag",
        "rack=b",
        "-l",
        "5000000",
        "100",
        "100",
    ]);
    let mut child = killed
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();

    let out = sb.cmd().args(["results", "hosts"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{out:?}");
    let row = |host: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{host} ")))
            .unwrap_or_else(|| panic!("no row for {host}: {text}"))
            .to_string()
    };
    assert!(
        row("never").contains("FAILED") && row("never").contains("(no result)"),
        "{text}"
    );
    assert!(
        row("broke").contains("FAILED") && row("broke").contains("failed "),
        "{text}"
    );
    assert!(
        row("good").contains(" ok ") && row("good").contains("finished "),
        "{text}"
    );
    assert!(row("killed").contains("running "), "{text}");
    assert!(
        text.contains("4 hosts: 2 failed, 0 hung (running over 8 h), 0 stale"),
        "{text}"
    );
    // Why, under the table.
    let why = text
        .lines()
        .find(|l| l.trim_start().starts_with("never: failed"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(why.contains("refusing the work directory"), "{text}");
    // The failed hosts head the table.
    let first: Vec<&str> = text.lines().skip(1).take(2).collect();
    assert!(first.iter().all(|l| l.contains("FAILED")), "{text}");

    let json = sb.json(&["results", "hosts", "--tag", "rack=b"]);
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{json}");
    assert_eq!(rows[0]["host"], "killed");
    assert_eq!(rows[0]["last_run"]["outcome"], "running");
    // A killed run older than the threshold is hung.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let old = (chrono::Utc::now() - chrono::Duration::hours(30)).to_rfc3339();
    conn.execute(
        "UPDATE runs SET started_at = ?1 WHERE outcome = 'running'",
        [&old],
    )
    .unwrap();
    drop(conn);
    let json = sb.json(&["results", "hosts", "--tag", "rack=b"]);
    assert_eq!(json[0]["state"], "hung", "{json}");
}

/// A run whose end the store will not take says so: `results hosts` would show it running.
#[test]
fn a_run_state_the_store_refuses_is_said_not_passed_over() {
    let sb = Sandbox::new();
    let noise = ["noise", "--host-label", "h", "-l", "5000", "10", "2"];
    sb.cmd().args(noise).assert().success();
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER no_end BEFORE UPDATE ON runs BEGIN SELECT RAISE(ABORT, 'no end here'); END;",
    )
    .unwrap();
    drop(conn);
    let out = sb.cmd().args(noise).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The result is stored all the same; its state stays what the store kept.
    assert!(out.status.success(), "{out:?}");
    assert!(
        err.contains("the run's state (finished) could not be recorded in")
            && err.contains("no end here"),
        "{err}"
    );
    let json = sb.json(&["results", "hosts"]);
    assert_eq!(json[0]["results"], 2, "{json}");
    assert_eq!(json[0]["last_run"]["outcome"], "running", "{json}");
}

/// Two hosts' `--repeat` groups, each `g1` in its own store, imported together are two groups,
/// each whole, named after its first run here, in any order of the files.
#[test]
fn two_hosts_groups_of_one_number_are_two_groups_when_imported() {
    let sb = Sandbox::new();
    let mut files = Vec::new();
    for host in ["ha", "hb"] {
        let db = sb.dir.path().join(format!("{host}.sqlite"));
        sb.cmd()
            .args([
                "noise",
                "--repeat",
                "2",
                "--host-label",
                host,
                "-l",
                "5000",
                "10",
                "2",
                "--db",
            ])
            .arg(&db)
            .assert()
            .success();
        for id in ["1", "2"] {
            let out = sb
                .cmd()
                .args(["results", "export", id, "--format", "json", "--db"])
                .arg(&db)
                .output()
                .unwrap();
            let file = sb.dir.path().join(format!("{host}-{id}.json"));
            std::fs::write(&file, &out.stdout).unwrap();
            files.push(file);
        }
    }
    // The second runs first: each must wait for its own first run.
    let order = [&files[3], &files[1], &files[0], &files[2]];
    sb.cmd()
        .args(["results", "import"])
        .args(order)
        .assert()
        .success();
    let mut groups = std::collections::BTreeMap::new();
    for id in 1..=4 {
        let v = sb.json(&["results", "show", &id.to_string()]);
        let group = v["repeat"]["group"]
            .as_i64()
            .unwrap_or_else(|| panic!("{id}: {v}"));
        groups
            .entry(v["host_label"].as_str().unwrap().to_string())
            .or_insert_with(Vec::new)
            .push(group);
    }
    assert_eq!(groups.len(), 2, "{groups:?}");
    let (a, b) = (&groups["ha"], &groups["hb"]);
    assert!(a[0] == a[1] && b[0] == b[1] && a[0] != b[0], "{groups:?}");
}

/// `results delete` removes a result with its tags and figures, and refuses an id that is not
/// there (exit 2).
#[test]
fn delete_removes_a_result_whole_and_refuses_what_is_not_there() {
    let sb = Sandbox::new();
    for _ in 0..2 {
        sb.cmd()
            .args(["noise", "--tag", "k=v", "-l", "5000", "10", "2"])
            .assert()
            .success();
    }
    sb.cmd()
        .args(["results", "delete", "1"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Deleted result 1 from "));
    let listed = sb
        .cmd()
        .args(["results", "list", "--tag", "k=v"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(
        !listed.lines().any(|l| l.trim_start().starts_with("1 ")),
        "{listed}"
    );
    assert!(
        listed.lines().any(|l| l.trim_start().starts_with("2 ")),
        "{listed}"
    );
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    for table in ["result_tags", "result_figures"] {
        let left: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE result_id = 1"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0, "{table}");
    }
    let out = sb.cmd().args(["results", "delete", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no stored result with id 1"));
    // Every id is judged before any is deleted: with one that is not there, 2 stays.
    let out = sb
        .cmd()
        .args(["results", "delete", "2", "999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no stored result with id 999"));
    assert!(String::from_utf8_lossy(&out.stdout).is_empty());
    sb.cmd().args(["results", "show", "2"]).assert().success();
}

/// Retention: `--before` and `--keep` remove each host's results and run states alike, the
/// newest N of each host kept whatever their age; `--dry-run` says what would go and removes
/// nothing.
#[test]
fn delete_before_a_date_keeps_each_hosts_newest_and_takes_run_states_too() {
    let sb = Sandbox::new();
    for label in ["n1", "n1", "n1", "n2"] {
        sb.json(&["noise", "--host-label", label, "-l", "5000", "10", "2"]);
    }
    // n1's first two results and their runs are 40 days old.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let old = (chrono::Utc::now() - chrono::Duration::days(40)).to_rfc3339();
    conn.execute("UPDATE results SET started_at = ?1 WHERE id <= 2", [&old])
        .unwrap();
    conn.execute(
        "UPDATE runs SET started_at = ?1 WHERE uuid IN (SELECT uuid FROM results WHERE id <= 2)",
        [&old],
    )
    .unwrap();
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!((count("results"), count("runs")), (4, 4));
    let month_ago = (chrono::Utc::now() - chrono::Duration::days(30))
        .format("%Y-%m-%d")
        .to_string();
    let dry = sb
        .cmd()
        .args([
            "results",
            "delete",
            "--before",
            &month_ago,
            "--keep",
            "1",
            "--dry-run",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        said.starts_with("Would delete 2 results and 2 run states of 1 host from ")
            && said.contains("\n  n1: 2 results, 2 run states\n"),
        "{said}"
    );
    assert_eq!((count("results"), count("runs")), (4, 4));
    // --keep 3 holds all three of n1's, however old.
    sb.cmd()
        .args(["results", "delete", "--before", &month_ago, "--keep", "3"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Deleted 0 results and 0 run states from ",
        ));
    sb.cmd()
        .args(["results", "delete", "--before", &month_ago])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Deleted 2 results and 2 run states from ",
        ));
    assert_eq!((count("results"), count("runs")), (2, 2));
    for table in ["result_tags", "result_figures"] {
        let left: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE result_id <= 2"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0, "{table}");
    }
    // --keep alone: each host's newest one stays.
    sb.json(&["noise", "--host-label", "n2", "-l", "5000", "10", "2"]);
    sb.cmd()
        .args(["results", "delete", "--keep", "1", "--host", "n2"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Deleted 1 result and 1 run state from ",
        ));
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM results ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ids, [3, 5]);
    // Ids and a retention are two ways, not one; a retention names a bound.
    for (args, says) in [
        (
            &["results", "delete", "3", "--keep", "1"][..],
            "cannot be used with",
        ),
        (
            &["results", "delete", "--keep", "0"],
            "0 is not in 1..=1000000",
        ),
        (&["results", "delete", "--before", "yesterday"], "--before"),
    ] {
        let out = sb.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{out:?}"
        );
    }
}

/// A retired host is left out of the fleet's views (and its export says it is retired) until
/// it stores a run again; `--host` still shows it; `--undo` brings it back.
#[test]
fn a_retired_host_leaves_the_fleets_views_until_it_runs_again() {
    let sb = Sandbox::new();
    for label in ["n1", "n2"] {
        sb.json(&["noise", "--host-label", label, "-l", "5000", "10", "2"]);
    }
    sb.cmd()
        .args(["results", "retire", "n2"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Retired n2: "));
    let hosts = sb.cmd().args(["results", "hosts"]).output().unwrap();
    let (table, err) = (
        String::from_utf8_lossy(&hosts.stdout),
        String::from_utf8_lossy(&hosts.stderr),
    );
    assert!(
        table.contains("\nn1 ") && !table.contains("\nn2 "),
        "{table}"
    );
    assert!(
        err.starts_with("1 retired host left out: n2 (since "),
        "{err}"
    );
    let json = sb.json(&["results", "hosts", "--host", "n2"]);
    assert_eq!(json[0]["host"], "n2", "{json}");
    let metrics = sb
        .cmd()
        .args(["results", "export", "--fleet", "--format", "openmetrics"])
        .output()
        .unwrap();
    let metrics = String::from_utf8_lossy(&metrics.stdout);
    assert!(
        metrics.contains("hostbench_host_retired_timestamp_seconds{host=\"n2\"} ")
            && !metrics.contains("hostbench_last_run_outcome{host=\"n2\""),
        "{metrics}"
    );
    let fleet = sb
        .cmd()
        .args(["report", "--fleet", "--format", "csv", "-o", "-"])
        .output()
        .unwrap();
    let fleet = String::from_utf8_lossy(&fleet.stdout);
    assert!(fleet.contains("n1") && !fleet.contains("n2"), "{fleet}");
    let history = sb.json(&["history", "--fleet"]);
    assert_eq!(history["hosts"].as_array().unwrap().len(), 1, "{history}");
    // Not a host the store knows: refused.
    let out = sb.cmd().args(["results", "retire", "n9"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no result or run of a host n9"));
    // It runs again: back by itself.
    sb.json(&["noise", "--host-label", "n2", "-l", "5000", "10", "2"]);
    let json = sb.json(&["results", "hosts"]);
    assert_eq!(json.as_array().unwrap().len(), 2, "{json}");
    // Retired again, then brought back by hand.
    sb.cmd()
        .args(["results", "retire", "n2"])
        .assert()
        .success();
    assert_eq!(sb.json(&["results", "hosts"]).as_array().unwrap().len(), 1);
    sb.cmd()
        .args(["results", "retire", "n2", "--undo"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Brought n2 back"));
    assert_eq!(sb.json(&["results", "hosts"]).as_array().unwrap().len(), 2);
}

/// `report --fleet` of stored results draws on each result's stored figures (layout 7), and
/// reads whole a row stored before them: the same fleet as from the result files themselves.
#[test]
fn a_stored_fleet_is_the_fleet_of_its_results_read_whole() {
    let sb = Sandbox::new();
    for label in ["n1", "n2", "n3"] {
        sb.json(&[
            "noise",
            "--host-label",
            label,
            "--tag",
            "rack=a",
            "-l",
            "5000",
            "10",
            "3",
        ]);
    }
    // Row 2 as an earlier layout left it: no figures.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    conn.execute("UPDATE results SET figures = NULL WHERE id = 2", [])
        .unwrap();
    drop(conn);
    let files: Vec<String> = (1..=3)
        .map(|id| {
            let path = sb.dir.path().join(format!("r{id}.json"));
            sb.cmd()
                .args([
                    "results",
                    "export",
                    &id.to_string(),
                    "--format",
                    "json",
                    "-o",
                ])
                .arg(&path)
                .assert()
                .success();
            path.to_str().unwrap().to_string()
        })
        .collect();
    let stored = sb.json(&["report", "--fleet", "--format", "json"]);
    let mut args = vec!["report", "--fleet", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let read = sb.json(&args);
    let cells = |f: &serde_json::Value| -> Vec<serde_json::Value> {
        f["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                serde_json::json!({
                    "host": r["host"], "hostname": r["hostname"], "tags": r["tags"],
                    "values": r["cells"].as_array().unwrap().iter().map(|c| c["value"].clone()).collect::<Vec<_>>(),
                })
            })
            .collect()
    };
    assert_eq!(cells(&stored), cells(&read));
    assert_eq!(stored["ranges"], read["ranges"]);
    assert_eq!(stored["tags"], read["tags"]);
    assert_eq!(stored["rows"].as_array().unwrap().len(), 3);
}

/// `report` shows its results and a fleet in every format its `--format` offers: no pair of
/// format and subject is refused when run.
#[test]
fn report_shows_results_and_a_fleet_in_every_format_it_offers() {
    let sb = Sandbox::new();
    for host in ["h1", "h2", "h3"] {
        sb.cmd()
            .args(["noise", "--no-noise-check", "--host-label", host, "5", "5"])
            .assert()
            .success();
    }
    let help = sb.cmd().args(["report", "-h"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let offered = help
        .split("[possible values: ")
        .nth(1)
        .and_then(|v| v.split(']').next())
        .expect("--format's values in the help");
    let formats: Vec<&str> = offered.split(',').map(str::trim).collect();
    assert_eq!(formats, ["text", "json", "csv", "markdown", "html"]);
    let run = |args: &[&str]| {
        let out = sb.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for format in formats {
        let report = run(&["report", "1", "2", "--format", format, "-o", "-"]);
        let fleet = run(&["report", "--fleet", "--format", format, "-o", "-"]);
        assert!(report.len() > 100, "{format}: {report}");
        assert!(fleet.contains("h3"), "{format}: {fleet}");
    }
    // The report's CSV: each result's figures, named by the result's label.
    let csv = run(&["report", "1", "2", "--format", "csv"]);
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(
        rows.headers().unwrap().iter().take(3).collect::<Vec<_>>(),
        ["result", "suite", "key"]
    );
    let labels: Vec<String> = rows.records().map(|r| r.unwrap()[0].to_string()).collect();
    assert!(labels.iter().any(|l| l == "result 1"), "{csv}");
    assert!(labels.iter().any(|l| l == "result 2"), "{csv}");
    assert!(!labels.iter().any(|l| l == "result 3"), "{csv}");
    // The fleet's Markdown: a row a host, a column a headline figure.
    let md = run(&["report", "--fleet", "--format", "markdown"]);
    assert!(md.starts_with("## hostbench fleet\n\n3 hosts"), "{md}");
    for host in ["| h1 | 1 |", "| h2 | 1 |", "| h3 | 1 |"] {
        assert!(md.contains(host), "{host}: {md}");
    }
    assert!(md.contains("noise (% spread) |"), "{md}");
}

/// `results push` without `--to` sends to HOSTBENCH_PUSH_TO, else HOSTBENCH_DB, from the
/// environment (so a scheduled run names no server in its argv); with neither it says what it
/// needs (exit 2), and where that is the store pushed from there is nothing to push.
#[test]
fn push_takes_its_target_from_the_environment_not_the_command_line() {
    let sb = Sandbox::new();
    let from = sb.dir.path().join("kept.sqlite");
    sb.cmd()
        .args(["noise", "--no-noise-check", "-l", "5000", "10", "2", "--db"])
        .arg(&from)
        .assert()
        .success();
    let push = |env: &[(&str, &std::path::Path)]| {
        let mut c = sb.cmd();
        c.env_remove("HOSTBENCH_DB")
            .args(["results", "push", "--db"])
            .arg(&from);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let out = push(&[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs --to"),
        "{out:?}"
    );
    let to = sb.dir.path().join("central.sqlite");
    let out = push(&[("HOSTBENCH_DB", &to)]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 added"),
        "{out:?}"
    );
    let other = sb.dir.path().join("other.sqlite");
    let out = push(&[("HOSTBENCH_DB", &to), ("HOSTBENCH_PUSH_TO", &other)]);
    assert!(out.status.success(), "{out:?}");
    assert!(other.exists());
    let out = push(&[("HOSTBENCH_DB", &from)]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Nothing to push"),
        "{out:?}"
    );
}

/// A `--textfile-dir` that cannot be used (node_exporter's directory removed) is a warning:
/// the run is measured and stored, and its state says the metrics were not written.
#[test]
fn an_unusable_textfile_dir_is_a_warning_that_the_run_state_keeps() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["noise", "--no-noise-check", "-l", "5000", "10", "2"])
        .args(["--textfile-dir", "/proc/hostbench-no-such-dir"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: --textfile-dir /proc/hostbench-no-such-dir"),
        "{err}"
    );
    let hosts = sb.json(&["results", "hosts"]);
    assert_eq!(hosts[0]["results"], 1, "{hosts}");
    let run = &hosts[0]["last_run"];
    assert_eq!(run["outcome"], "finished", "{hosts}");
    assert!(
        run["why"]
            .as_str()
            .unwrap_or_default()
            .contains("no metrics written"),
        "{hosts}"
    );
}

/// An index figure is ranged only among results of the same tests, copies and settings: three
/// hosts that ran syscall are ranged together, and a host that ran pipe, or syscall pinned, is
/// neither in their range nor judged by it, on the page and in the OpenMetrics export.
#[test]
fn index_results_of_other_tests_or_settings_are_not_ranged_with_the_rest() {
    let sb = Sandbox::new();
    let runs: [(&str, &[&str]); 5] = [
        ("s1", &["syscall"]),
        ("s2", &["syscall"]),
        ("s3", &["syscall"]),
        ("p1", &["pipe"]),
        ("q1", &["syscall", "--pin"]),
    ];
    for (host, args) in runs {
        let mut all = vec!["index", "--host-label", host, "-c", "1", "-i", "1"];
        all.extend(["--seconds", "0.2"]);
        all.extend(args);
        sb.json(&all);
    }
    let fleet = sb.json(&["report", "--fleet", "--format", "json"]);
    let at = fleet["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == "index_one")
        .expect("the index column");
    let kind_of = |host: &str| -> String {
        let row = fleet["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["host"] == host)
            .unwrap_or_else(|| panic!("{host}: {fleet}"));
        row["cells"][at]["kind"].as_str().unwrap().to_string()
    };
    let syscall = "1 copy, 1 of 12 tests: syscall, 0.2 s a test, -i 1";
    for host in ["s1", "s2", "s3"] {
        assert_eq!(kind_of(host), syscall);
    }
    assert_eq!(
        kind_of("p1"),
        "1 copy, 1 of 12 tests: pipe, 0.2 s a test, -i 1"
    );
    assert_eq!(
        kind_of("q1"),
        "1 copy, 1 of 12 tests: syscall, pinned, 0.2 s a test, -i 1"
    );
    let ranges: Vec<&serde_json::Value> = fleet["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["column"] == "index_one")
        .collect();
    assert_eq!(ranges.len(), 1, "{fleet}");
    assert_eq!(
        (ranges[0]["kind"].as_str(), ranges[0]["hosts"].as_u64()),
        (Some(syscall), Some(3))
    );
    let metrics = sb
        .cmd()
        .args(["results", "export", "--fleet", "--format", "openmetrics"])
        .output()
        .unwrap();
    let metrics = String::from_utf8(metrics.stdout).unwrap();
    let score = |host: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with("hostbench_index_score{") && l.contains(&format!("\"{host}\"")))
            .unwrap_or_else(|| panic!("{host}: {metrics}"))
            .to_string()
    };
    assert!(
        score("s1").contains(&format!("measured=\"{syscall}\"")),
        "{metrics}"
    );
    assert!(score("p1").contains("tests: pipe"), "{metrics}");
}
