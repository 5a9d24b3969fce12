//! docs/fleet.md's operator's path, run as the page prints it, steps 1 to 4 in one shell (in a
//! temporary directory instead of /srv/hostbench-pg, a cluster named for the test and started
//! with pg_ctlcluster where the page enables its systemd unit, on a free port of the loopback
//! address instead of every address, 127.0.0.1 for dbhost, the tested binary for `hostbench`, a
//! checkout's roles.sql, the passwords typed on standard input): a fresh cluster where a login
//! without a password is refused, over TCP and over the socket, and the owner gets in as the
//! page says; the layout and the roles; a writer and a reader login whose passwords are in no
//! history; a host that stores a run with its password from its password file. Needs root (the
//! recipe runs the server as postgres) and PostgreSQL.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

/// The shell lines of the page's first `sh` block after `heading`, continued lines joined as
/// the shell reads them.
fn recipe(page: &str, heading: &str) -> Vec<String> {
    let section = page
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("{heading} is on the page"));
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section has an sh block");
    block
        .replace("\\\n", " ")
        .lines()
        .map(str::to_string)
        .collect()
}

const STEPS: [&str; 4] = [
    "### 1. A server (on dbhost, as root)",
    "### 2. The layout and the roles (on dbhost, as root)",
    "### 3. A login for each host, and one for the readers (on dbhost, as root)",
    "### 4. On each host (as root, where the scheduled run runs)",
];

/// The passwords typed at the page's three prompts: the host's, the readers', the host's again.
/// Quotes in them test the page's SQL escaping; a colon and a backslash its password file's.
const NODE_PW: &str = "n0de'pw \"x:y\\z";
const DASH_PW: &str = "dash-pw'1";

#[test]
fn the_operators_path_of_the_fleet_page_works_as_printed() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the fleet page's recipe runs as root");
        return;
    }
    if common::skip_without(
        "the_operators_path_of_the_fleet_page",
        &["psql", "runuser", "pg_createcluster", "pg_conftool"],
    ) || common::pg::bin_dir().is_none()
    {
        return;
    }
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fleet.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The postgres user reaches the server's directory and the binary through this one.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let srv = dir.path().join("srv");
    let bin = dir.path().join("hostbench");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hostbench"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    // A password file the host had already: step 4 adds to it, never empties it.
    let kept_line = "otherdb:5432:*:someone:secret\n";
    std::fs::write(home.join(".pgpass"), kept_line).unwrap();
    std::fs::set_permissions(home.join(".pgpass"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // A cluster of the test's own (Debian's tools keep its settings under /etc/postgresql),
    // dropped at the end.
    let cluster = format!("hbdoc{port}");
    let mut script = String::from("set -e\n");
    let mut ran = Vec::new();
    for step in STEPS {
        let mut lines = 0;
        for line in recipe(&page, step) {
            let code = line.trim();
            if code.is_empty() || code.starts_with('#') || code.starts_with("apt-get") {
                continue;
            }
            // The host's copy of the CA is a copy on the same machine here, and the server's
            // certificate names 127.0.0.1 (an address) for dbhost.
            let adapted = code
                .replace("scp dbhost:", "cp ")
                .replace("DNS:dbhost", "IP:127.0.0.1")
                .replace("/srv/hostbench-pg", srv.to_str().unwrap())
                // The loopback (pg_conftool writes an address unquoted, which the server cannot read).
                .replace("listen_addresses '*'", "listen_addresses localhost")
                .replace("hostbench-fleet", &cluster)
                .replace("5433", &port.to_string())
                .replace("dbhost", "127.0.0.1")
                .replace("-- hostbench ", &format!("-- {} ", bin.display()));
            // This machine's init is not systemd: the cluster's unit does what pg_ctlcluster
            // does, so the test asks pg_ctlcluster.
            let unit = format!("\"postgresql@$ver-{cluster}\"");
            let adapted = match adapted.split_once(&unit) {
                Some((verb, _)) if verb.starts_with("systemctl enable --now") => {
                    format!("pg_ctlcluster \"$ver\" {cluster} start")
                }
                Some((verb, _)) if verb.starts_with("systemctl reload") => {
                    format!("pg_ctlcluster \"$ver\" {cluster} reload")
                }
                _ => adapted,
            };
            let adapted = match adapted.strip_prefix("hostbench ") {
                Some(rest) => format!("{} {rest}", bin.display()),
                None => adapted,
            };
            script.push_str(&adapted);
            script.push('\n');
            lines += 1;
        }
        ran.push(lines);
    }
    assert!(ran.iter().all(|&n| n >= 3), "{ran:?}\n{script}");
    let version = "$(ls /usr/lib/postgresql | sort -V | tail -n 1)";
    let log_path = || -> String {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "echo /var/log/postgresql/postgresql-{version}-{cluster}.log"
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let stop = || {
        let _ = Command::new("bash")
            .arg("-c")
            .arg(format!("pg_dropcluster --stop {version} {cluster}"))
            .output();
    };
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HOME", &home)
        .env("HOSTBENCH_CACHE_DIR", dir.path().join("cache"))
        // Every statement of the owner's sessions logged, unless the page's own commands say
        // otherwise: a password in a statement would land in the server's log.
        .env("PGOPTIONS", "-c log_statement=all")
        .env_remove("HOSTBENCH_DB")
        .env_remove("PGPASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{NODE_PW}\n{DASH_PW}\n{NODE_PW}").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        stop();
        panic!("the recipe failed:\n{script}\n{said}");
    }
    let psql = |args: &[&str], as_postgres: bool, password: Option<&str>, sql: &str| {
        let mut c = if as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", "psql"]);
            c
        } else {
            Command::new("psql")
        };
        // In the server's directory, which the postgres user can enter (a checkout under a
        // home of mode 0700 is not): psql warns on standard error where it cannot.
        c.args(args)
            .args(["-d", "hostbench", "-tAc", sql, "-w"])
            .current_dir(&srv)
            .env("PGPASSFILE", "/nonexistent");
        match password {
            Some(p) => c.env("PGPASSWORD", p),
            None => c.env_remove("PGPASSWORD"),
        };
        c.output().unwrap()
    };
    let port_s = port.to_string();
    let socket = srv.to_str().unwrap();
    let tcp = ["-h", "127.0.0.1", "-p", port_s.as_str()];
    let no_password = psql(
        &[&tcp[..], &["-U", "postgres"]].concat(),
        false,
        None,
        "SELECT 1",
    );
    let root_socket = psql(
        &["-h", socket, "-p", &port_s, "-U", "postgres"],
        false,
        None,
        "SELECT 1",
    );
    let owner = |sql: &str| {
        psql(
            &["-h", socket, "-p", &port_s, "-U", "postgres"],
            true,
            None,
            sql,
        )
    };
    let stored = owner("SELECT owner || ' ' || host_label FROM results");
    let run = owner("SELECT outcome FROM runs");
    let bound = owner("SELECT name || ' ' || login FROM hostbench_hosts");
    let reader_reads = psql(
        &[&tcp[..], &["-U", "dashboards"]].concat(),
        false,
        Some(DASH_PW),
        "SELECT count(*) FROM results",
    );
    let reader_writes = psql(
        &[&tcp[..], &["-U", "dashboards"]].concat(),
        false,
        Some(DASH_PW),
        "DELETE FROM results",
    );
    let log = std::fs::read_to_string(log_path()).unwrap_or_default();
    stop();
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    // Step 1: no way in without a password, but the owner's own.
    assert!(
        !no_password.status.success(),
        "a TCP login without a password got in"
    );
    assert!(
        text(&no_password).contains("password"),
        "{}",
        text(&no_password)
    );
    assert!(
        text(&root_socket).contains("Peer authentication failed"),
        "root got in as postgres over the socket: {}",
        text(&root_socket)
    );
    // Steps 2 and 4: the host's run is stored under its own login, with its label, and its run
    // state says it finished; `results hosts` shows it.
    assert_eq!(
        text(&stored).trim(),
        "rack12_node3 rack12-node3",
        "{}",
        text(&stored)
    );
    assert_eq!(text(&run).trim(), "finished", "{}", text(&run));
    // Step 3 bound the host's label to its login, which is what let it store.
    assert_eq!(
        text(&bound).trim(),
        "rack12-node3 rack12_node3",
        "{}",
        text(&bound)
    );
    let hosts_line = said
        .lines()
        .find(|l| l.starts_with("rack12-node3 "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        hosts_line.contains(" ok ") && hosts_line.contains("finished"),
        "{said}"
    );
    // Step 3: the reader reads and cannot write; no password in what was said or kept.
    assert_eq!(text(&reader_reads).trim(), "1", "{}", text(&reader_reads));
    assert!(
        text(&reader_writes).contains("permission denied"),
        "{}",
        text(&reader_writes)
    );
    for pw in [NODE_PW, DASH_PW] {
        assert!(!said.contains(pw), "a password was shown: {said}");
        for history in ["/var/lib/postgresql/.psql_history", "/root/.psql_history"] {
            let kept = std::fs::read_to_string(history).unwrap_or_default();
            assert!(!kept.contains(pw), "{history} keeps a password");
        }
    }
    assert!(log.contains("statement:"), "statements are logged: {log}");
    for pw in [NODE_PW, DASH_PW] {
        assert!(
            !log.contains(&pw.replace('\'', "''")),
            "the server's log keeps a password"
        );
    }
    let pgpass = home.join(".pgpass");
    assert!(
        std::fs::read_to_string(&pgpass)
            .unwrap()
            .starts_with(kept_line),
        "the password file's earlier line was kept"
    );
    assert_eq!(
        std::fs::metadata(&pgpass).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // The package's roles.sql is where the page says it is (tests/package.rs checks the file).
    assert!(page.contains("roles=/usr/share/doc/hostbench/examples/roles.sql"));
}
