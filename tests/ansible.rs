//! deploy/ansible: the real playbook, run by the real `ansible-playbook` against an inventory
//! of two hosts on this machine (connection `local`, each with its own name, label, tags, work
//! and binary directory), storing into a real PostgreSQL server, and fetching back to the
//! control node where no server is given.

mod common;

use std::path::Path;
use std::process::Command;

use common::pg::PgServer;
use common::{skip_without, Sandbox};
use serde_json::Value;

const DEPLOY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/ansible");

/// The two hosts: inventory name, the label it stores under, the kernel tag.
const HOSTS: [(&str, &str, &str); 2] = [("node-a", "node-a", "A"), ("node-b", "rack1-node-b", "B")];

/// An inventory of the two hosts, each with directories of its own under `dir`.
fn inventory(dir: &Path) -> std::path::PathBuf {
    let exe = assert_cmd::cargo::cargo_bin("hostbench");
    let mut text = format!(
        "hostbench:
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    hostbench_become: false
    hostbench_binary_src: {exe}
    hostbench_command: noise --no-noise-check 5 3
    hostbench_extra_packages: [bsdutils]
  hosts:
",
        exe = exe.display()
    );
    for (name, label, kernel) in HOSTS {
        let home = dir.join(name);
        std::fs::create_dir_all(home.join("bin")).unwrap();
        text.push_str(&format!(
            "    {name}:
      hostbench_host_label: {label}
      hostbench_bin_dir: {home}/bin
      hostbench_workdir: {home}/work
      hostbench_tags: {{fleet: ci, kernel: {kernel}}}
",
            home = home.display()
        ));
    }
    let path = dir.join("inventory.yml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `ansible-playbook site.yml` with these extra variables: its output, after checking that it
/// succeeded and that its recap has each host with no failure.
fn playbook(sb: &Sandbox, inventory: &Path, extra: &[String]) -> String {
    playbook_with(sb, inventory, extra, &[])
}

/// `playbook`, with options of ansible-playbook's own (`--tags`).
fn playbook_with(sb: &Sandbox, inventory: &Path, extra: &[String], options: &[&str]) -> String {
    let mut cmd = Command::new("ansible-playbook");
    cmd.arg("-i").arg(inventory).arg("site.yml").args(options);
    for e in extra {
        cmd.arg("-e").arg(e);
    }
    let out = cmd
        .current_dir(DEPLOY)
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_LOCAL_TEMP", sb.dir.path().join("ansible-tmp"))
        .env("HOSTBENCH_CACHE_DIR", sb.cache_dir())
        .output()
        .expect("ansible-playbook runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recap = text.split("PLAY RECAP").last().unwrap_or_default();
    for (name, _, _) in HOSTS {
        let line = recap.lines().find(|l| l.starts_with(name));
        assert!(
            line.is_some_and(|l| l.contains("unreachable=0") && l.contains("failed=0")),
            "{text}"
        );
    }
    text
}

/// What a task said of each host (`changed`, `ok`, `skipping`), in the last play that ran it.
fn task_status(output: &str, task: &str) -> Vec<String> {
    let section = output
        .split("TASK [")
        .filter(|s| s.starts_with(&format!("hostbench : {task}]")))
        .flat_map(|s| s.lines().skip(1).take_while(|l| !l.is_empty()))
        .filter_map(|l| l.split_once(": [").map(|(status, _)| status.to_string()))
        .collect();
    section
}

fn results(sb: &Sandbox, db: &str, filter: &[&str]) -> Vec<Value> {
    let list = sb
        .cmd()
        .args(["results", "list", "--db", db])
        .args(filter)
        .assert()
        .success();
    let ids: Vec<String> = String::from_utf8_lossy(&list.get_output().stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<i64>().is_ok())
        .map(str::to_string)
        .collect();
    ids.iter()
        .map(|id| {
            let out = sb
                .cmd()
                .args(["results", "export", "--db", db, id, "--format", "json"])
                .assert()
                .success();
            serde_json::from_slice(&out.get_output().stdout).unwrap()
        })
        .collect()
}

/// Each host's result is there once, under its label, with its tags.
fn one_result_per_host(found: &[Value]) {
    assert_eq!(found.len(), HOSTS.len(), "{found:?}");
    for (_, label, kernel) in HOSTS {
        let r = found
            .iter()
            .find(|r| r["host_label"] == label)
            .unwrap_or_else(|| panic!("no result of {label}"));
        assert_eq!(r["tags"]["fleet"], "ci");
        assert_eq!(r["tags"]["kernel"], kernel);
        assert_eq!(r["suites"][0]["suite"], "noise");
        assert!(r["uuid"].is_string());
    }
}

#[test]
fn the_playbook_runs_every_host_into_the_shared_store_or_fetches_back() {
    if skip_without("the_playbook_runs_every_host", &["ansible-playbook"]) {
        return;
    }
    let Some(pg) = PgServer::start("the_playbook_runs_every_host") else {
        return;
    };
    let sb = Sandbox::new();
    let inv = inventory(sb.dir.path());
    // Into the shared store, one host at a time, each host given the fleet's CA.
    let ca = sb.dir.path().join("fleet-ca.crt");
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args([
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=fleet CA",
            "-keyout",
            "/dev/null",
            "-out",
        ])
        .arg(&ca)
        .output()
        .expect("openssl runs");
    assert!(made.status.success(), "{made:?}");
    let to_pg = [
        format!("hostbench_db={}", pg.url),
        "hostbench_serial=1".into(),
        format!("hostbench_ca_cert={}", ca.display()),
    ];
    let first = playbook(&sb, &inv, &to_pg);
    for (name, _, _) in HOSTS {
        let copied = sb.dir.path().join(name).join("work/fleet-ca.crt");
        assert_eq!(
            std::fs::read(&copied).unwrap(),
            std::fs::read(&ca).unwrap(),
            "{name}'s copy of the CA"
        );
    }
    assert_eq!(
        task_status(&first, "Copy the hostbench binary"),
        ["changed"; 2]
    );
    assert_eq!(
        task_status(&first, "Install the Debian packages the command needs"),
        ["ok"; 2]
    );
    assert_eq!(
        task_status(&first, "Fetch the result file"),
        ["skipping"; 2]
    );
    one_result_per_host(&results(&sb, &pg.url, &["--tag", "fleet=ci"]));
    for (_, label, kernel) in HOSTS {
        let tagged = results(&sb, &pg.url, &["--tag", &format!("kernel={kernel}")]);
        assert_eq!(tagged.len(), 1);
        assert_eq!(tagged[0]["host_label"], label);
    }
    // Again: the binary is unchanged, so not copied; each host adds a second result.
    let second = playbook(&sb, &inv, &to_pg);
    // The play says where each host's result went, and its headline.
    assert_eq!(
        second.matches("\"Stored as result ").count(),
        HOSTS.len(),
        "{second}"
    );
    assert_eq!(
        second.matches(": 5 ms CPU: ").count(),
        HOSTS.len(),
        "{second}"
    );
    assert_eq!(task_status(&second, "Copy the hostbench binary"), ["ok"; 2]);
    assert_eq!(task_status(&second, "Run hostbench"), ["changed"; 2]);
    assert_eq!(results(&sb, &pg.url, &["--host", "rack1-node-b"]).len(), 2);
    // No shared store: each host's result JSON comes back and is imported here.
    let control = sb.dir.path().join("control.sqlite");
    let fetched = sb.dir.path().join("fetched");
    let third = playbook(
        &sb,
        &inv,
        &[
            format!("hostbench_control_db={}", control.display()),
            format!("hostbench_fetch_dir={}", fetched.display()),
        ],
    );
    assert_eq!(
        task_status(&third, "Import the result on the control node"),
        ["changed"; 2]
    );
    one_result_per_host(&results(&sb, control.to_str().unwrap(), &[]));
    for (name, _, _) in HOSTS {
        let files = std::fs::read_dir(fetched.join(name)).unwrap().count();
        assert_eq!(files, 1, "{name}");
    }
}

/// The store's password reaches the password file escaped as libpq reads it, beside the lines
/// already there, the file the owner's alone, and never in the play's output; with
/// `hostbench_run_now` false nothing is benchmarked; `--tags secrets` runs that task alone.
#[test]
fn the_role_writes_the_password_unseen_and_runs_only_what_is_asked() {
    use std::os::unix::fs::PermissionsExt;
    if skip_without("the_role_writes_the_password_unseen", &["ansible-playbook"]) {
        return;
    }
    let sb = Sandbox::new();
    let inv = inventory(sb.dir.path());
    let pgpass = sb.dir.path().join("pgpass");
    std::fs::write(&pgpass, "other:5432:db:u:keep\n").unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let vars = |password: &str| {
        serde_json::json!({
            "hostbench_run_now": false,
            "hostbench_pgpass_file": pgpass,
            "hostbench_pgpass": [{
                "host": "dbhost", "database": "hostbench", "user": "rack12_node3",
                "password": password,
            }],
        })
        .to_string()
    };
    let out = playbook(&sb, &inv, &[vars("s3cr:et\\x")]);
    assert!(!out.contains("s3cr"), "{out}");
    assert_eq!(task_status(&out, "Run hostbench"), ["skipping"; 2], "{out}");
    let written = std::fs::read_to_string(&pgpass).unwrap();
    assert_eq!(
        written,
        "other:5432:db:u:keep\ndbhost:5432:hostbench:rack12_node3:s3cr\\:et\\\\x\n"
    );
    let mode = std::fs::metadata(&pgpass).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // A new password replaces its line; only the tagged task runs.
    let out = playbook_with(&sb, &inv, &[vars("n3w")], &["--tags", "secrets"]);
    assert!(!out.contains("n3w"), "{out}");
    assert!(task_status(&out, "Run hostbench").is_empty(), "{out}");
    assert!(
        task_status(&out, "Copy the hostbench binary").is_empty(),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(&pgpass).unwrap(),
        "other:5432:db:u:keep\ndbhost:5432:hostbench:rack12_node3:n3w\n"
    );
}

/// A hostile host prints a result whose UUID is a path: the role refuses it before the UUID
/// names any file, and nothing is written outside the fetch directory.
#[test]
fn a_hosts_uuid_never_names_a_file_outside_the_fetch_directory() {
    if skip_without("a_hosts_uuid_never_names_a_file", &["ansible-playbook"]) {
        return;
    }
    let sb = Sandbox::new();
    let inv = inventory(sb.dir.path());
    let hostile = sb.dir.path().join("hostile");
    std::fs::write(
        &hostile,
        "#!/bin/sh\necho '{\"uuid\": \"/../../../escaped/pwned\"}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hostile, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fetched = sb.dir.path().join("fetched");
    let out = Command::new("ansible-playbook")
        .arg("-i")
        .arg(&inv)
        .arg("site.yml")
        .arg("-e")
        .arg(format!("hostbench_exe={}", hostile.display()))
        .arg("-e")
        .arg(format!("hostbench_fetch_dir={}", fetched.display()))
        .arg("-e")
        .arg(format!(
            "hostbench_control_db={}",
            sb.dir.path().join("control.sqlite").display()
        ))
        .current_dir(DEPLOY)
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_LOCAL_TEMP", sb.dir.path().join("ansible-tmp"))
        .output()
        .expect("ansible-playbook runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("carries no UUID of a run"), "{text}");
    assert!(!sb.dir.path().join("escaped").exists(), "{text}");
    assert!(!fetched.exists(), "{text}");
    for (name, _, _) in HOSTS {
        let work = sb.dir.path().join(name).join("work");
        let written: Vec<_> = std::fs::read_dir(&work)
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(
            !written
                .iter()
                .any(|n| n.to_string_lossy().starts_with("result-")),
            "{written:?}"
        );
    }
}

/// The playbook and role pass ansible-lint's strictest profile, where it is installed.
#[test]
fn the_playbook_passes_ansible_lint() {
    if skip_without("the_playbook_passes_ansible_lint", &["ansible-lint"]) {
        return;
    }
    let out = Command::new("ansible-lint")
        .args(["--profile", "production", "--offline"])
        .current_dir(DEPLOY)
        .env("NO_COLOR", "1")
        .output()
        .expect("ansible-lint runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Removes the hostbench package when dropped, whatever the test did before.
struct Purge;

impl Drop for Purge {
    fn drop(&mut self) {
        // What the role's hostbench_timer added beside the package, then the package.
        let _ = Command::new("systemctl")
            .args(["disable", "hostbench.timer"])
            .output();
        let _ = std::fs::remove_dir_all("/etc/systemd/system/hostbench.timer.d");
        let _ = Command::new("dpkg").args(["--purge", "hostbench"]).output();
    }
}

fn package_installed() -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f", "${Status}", "hostbench"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout) == "install ok installed")
}

/// With `hostbench_deb_src`, the play installs the package with dpkg (Ansible's apt module)
/// instead of copying the binary, and the hosts run the packaged /usr/bin/hostbench. A real
/// installation on this machine, so only as root and where no hostbench package is installed
/// already; the test removes it again.
#[test]
fn the_playbook_installs_the_package_when_given_one() {
    if skip_without(
        "the_playbook_installs_the_package",
        &["ansible-playbook", "cargo-deb", "dpkg"],
    ) {
        return;
    }
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the_playbook_installs_the_package: installing a package needs root");
        return;
    }
    if package_installed() {
        eprintln!(
            "skipped: the_playbook_installs_the_package: a hostbench package is installed on \
             this machine already, and the test would remove it"
        );
        return;
    }
    let purge = Purge;
    let sb = Sandbox::new();
    let deb = common::build_deb(&sb.dir.path().join("debian"));
    let inv = inventory(sb.dir.path());
    let control = sb.dir.path().join("control.sqlite");
    let fetched = sb.dir.path().join("fetched");
    let out = playbook(
        &sb,
        &inv,
        &[
            format!("hostbench_deb_src={}", deb.display()),
            "hostbench_serial=1".into(),
            format!("hostbench_control_db={}", control.display()),
            format!("hostbench_fetch_dir={}", fetched.display()),
            r#"{"hostbench_timer": true, "hostbench_on_calendar": "Mon *-*-* 03:15:00"}"#.into(),
        ],
    );
    assert_eq!(
        task_status(&out, "Copy the hostbench binary"),
        ["skipping"; 2]
    );
    // hostbench_timer: the package's timer enabled, with the host's command, label and tags
    // (the hosts share this machine: the last one's), and its schedule.
    let wants = Path::new("/etc/systemd/system/timers.target.wants/hostbench.timer");
    assert!(wants.symlink_metadata().is_ok(), "{out}");
    let settings = std::fs::read_to_string("/etc/hostbench/hostbench.env").unwrap();
    assert!(
        settings.contains(
            "HOSTBENCH_RUN_ARGS=noise --no-noise-check 5 3 --host-label rack1-node-b --tag fleet=ci --tag kernel=B\n"
        ) && settings.contains("HOSTBENCH_FALLBACK_DB=/var/lib/hostbench/results.sqlite"),
        "{settings}"
    );
    let schedule =
        std::fs::read_to_string("/etc/systemd/system/hostbench.timer.d/schedule.conf").unwrap();
    assert!(
        schedule.contains("OnCalendar=\nOnCalendar=Mon *-*-* 03:15:00\n"),
        "{schedule}"
    );
    // Not started here: this machine's init is not systemd.
    assert_eq!(
        task_status(&out, "Start the timer where systemd runs").len(),
        2,
        "{out}"
    );
    // The new schedule notified the handler, which reloads only where systemd runs.
    let handler = out
        .split("RUNNING HANDLER [hostbench : Reload the timer]")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(handler.lines().nth(1), Some("skipping: [node-a]"), "{out}");
    // The hosts share this machine: the first installs it, the second finds it there.
    assert_eq!(
        task_status(&out, "Install the hostbench package with dpkg"),
        ["changed", "ok"],
        "{out}"
    );
    assert!(package_installed());
    let version = Command::new("/usr/bin/hostbench")
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("hostbench {}", env!("CARGO_PKG_VERSION"))
    );
    // The packaged hostbench measured: no host had the binary copied into its bin directory.
    one_result_per_host(&results(&sb, control.to_str().unwrap(), &[]));
    for (name, _, _) in HOSTS {
        assert!(!sb.dir.path().join(name).join("bin/hostbench").exists());
    }
    drop(purge);
    assert!(!package_installed());
    assert!(!Path::new("/usr/bin/hostbench").exists());
    assert!(!Path::new("/etc/hostbench/hostbench.env").exists());
    assert!(wants.symlink_metadata().is_err());
}
