//! docs/fleet.md's trial server, run as the page writes it (in a temporary directory instead of
//! /srv/hostbench-pg, on a free port of the loopback address instead of every address): a login
//! without a password is refused, over TCP and over the socket, and the owner gets in as the
//! page says. Needs root (the recipe runs the server as postgres) and PostgreSQL.

mod common;

use std::process::Command;

/// The shell lines of the page's first `sh` block after `heading`.
fn recipe(page: &str, heading: &str) -> Vec<String> {
    let section = page
        .split(heading)
        .nth(1)
        .expect("the section is on the page");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section has an sh block");
    // Continued lines joined, as the shell reads them.
    block
        .replace("\\\n", " ")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_trial_server_of_the_fleet_page_refuses_a_login_without_a_password() {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the trial-server recipe runs as root");
        return;
    }
    if common::skip_without("the_trial_server_of_the_fleet_page", &["psql", "runuser"])
        || common::pg::bin_dir().is_none()
    {
        return;
    }
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fleet.md")).unwrap();
    let lines = recipe(&page, "## A trial server, without containers");
    let dir = tempfile::tempdir().unwrap();
    // The postgres user reaches the directory through the temporary one.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o711),
    )
    .unwrap();
    let srv = dir.path().join("srv");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut script = String::from("set -e\n");
    let mut ran = 0;
    for line in &lines {
        let code = line.split('#').next().unwrap_or("").trim();
        if code.is_empty() || code.starts_with("apt-get") {
            continue;
        }
        let adapted = code
            .replace("/srv/hostbench-pg", srv.to_str().unwrap())
            .replace("listen_addresses='*'", "listen_addresses='127.0.0.1'")
            .replace("5433", &port.to_string());
        script.push_str(&adapted);
        script.push('\n');
        ran += 1;
    }
    assert!(ran >= 4, "{script}");
    let stop = || {
        let _ = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "runuser -u postgres -- /usr/lib/postgresql/*/bin/pg_ctl -D {}/data -m immediate stop",
                srv.display()
            ))
            .output();
    };
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    if !out.status.success() {
        stop();
        panic!(
            "the recipe failed:\n{script}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let psql = |args: &[&str], as_postgres: bool| {
        let mut c = if as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", "psql"]);
            c
        } else {
            Command::new("psql")
        };
        c.args(args)
            .args(["-d", "hostbench", "-tAc", "SELECT 1", "-w"])
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", "/nonexistent")
            .output()
            .unwrap()
    };
    let port_s = port.to_string();
    let socket = srv.to_str().unwrap();
    let tcp = psql(&["-h", "127.0.0.1", "-p", &port_s, "-U", "postgres"], false);
    let root_socket = psql(&["-h", socket, "-p", &port_s, "-U", "postgres"], false);
    let owner = psql(&["-h", socket, "-p", &port_s, "-U", "postgres"], true);
    stop();
    let said = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !tcp.status.success(),
        "a TCP login without a password got in"
    );
    assert!(said(&tcp).contains("password"), "{}", said(&tcp));
    assert!(
        !root_socket.status.success(),
        "root got in as postgres over the socket"
    );
    assert!(
        said(&root_socket).contains("Peer authentication failed"),
        "{}",
        said(&root_socket)
    );
    assert!(
        owner.status.success(),
        "the owner, as the page says: {}",
        said(&owner)
    );
}
