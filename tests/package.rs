//! The Debian package: `scripts/build-deb.sh` builds it with the real cargo-deb from the binary
//! these tests run, and the real dpkg unpacks it into a scratch root, where its hostbench runs
//! and its manual pages, completions, docs and licence are where Debian keeps them.

mod common;

use std::path::Path;
use std::process::Command;

use common::{build_deb, skip_without, Sandbox};

fn dpkg_deb(args: &[&str], deb: &Path) -> String {
    let out = Command::new("dpkg-deb")
        .args(args)
        .arg(deb)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_deb_installs_a_hostbench_that_runs_with_its_pages_completions_and_docs() {
    if skip_without("the Debian package", &["cargo-deb", "dpkg-deb"]) {
        return;
    }
    let sb = Sandbox::new();
    let deb = build_deb(&sb.dir.path().join("debian"));
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        deb.file_name().unwrap().to_str().unwrap(),
        format!("hostbench_{version}-1_amd64.deb")
    );
    // Its control fields: the name, the version, a dependency on the C library found by
    // dpkg-shlibdeps, what the index suite wants recommended.
    let info = dpkg_deb(&["--field"], &deb);
    for field in [
        "Package: hostbench".to_string(),
        format!("Version: {version}-1"),
        "Section: utils".into(),
        "Recommends: gcc | c-compiler, libc6-dev, dc".into(),
    ] {
        assert!(info.contains(&field), "{field} missing:\n{info}");
    }
    assert!(info.contains("Depends: libc6"), "{info}");
    // Unpacked into a scratch root by dpkg itself.
    let root = sb.dir.path().join("root");
    let out = Command::new("dpkg")
        .arg("-x")
        .arg(&deb)
        .arg(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let exe = root.join("usr/bin/hostbench");
    let out = Command::new(&exe).arg("--version").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("hostbench {version}")
    );
    // It measures there too: nothing it needs lies in this checkout.
    let out = Command::new(&exe)
        .args(["noise", "--no-noise-check", "5", "3", "--db"])
        .arg(sb.dir.path().join("deb.sqlite"))
        .args(["--cache-dir"])
        .arg(sb.cache_dir())
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Stored as result 1"));
    // A manual page for hostbench and for each command, compressed as Debian keeps them.
    let man = root.join("usr/share/man/man1");
    for page in [
        "hostbench",
        "hostbench-run",
        "hostbench-noise",
        "hostbench-results",
    ] {
        let path = man.join(format!("{page}.1.gz"));
        let text = Command::new("gzip").arg("-dc").arg(&path).output().unwrap();
        assert!(
            String::from_utf8_lossy(&text.stdout).contains(&format!(".TH {page} 1")),
            "{}",
            path.display()
        );
    }
    // hostbench(1) names no page that is not shipped (clap's help has none), and says its
    // environment, files and examples.
    let main = Command::new("gzip")
        .arg("-dc")
        .arg(man.join("hostbench.1.gz"))
        .output()
        .unwrap();
    let main = String::from_utf8_lossy(&main.stdout).into_owned();
    assert!(!main.contains("hostbench\\-help"), "{main}");
    for section in [
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH EXAMPLES",
        ".SH SEE ALSO",
    ] {
        assert!(main.contains(section), "{section} missing");
    }
    assert!(main.contains("HOSTBENCH_FALLBACK_DB"), "{main}");
    // Completions where bash, zsh and fish look; bash's sources and completes.
    let bash = root.join("usr/share/bash-completion/completions/hostbench");
    for path in [
        bash.clone(),
        root.join("usr/share/zsh/vendor-completions/_hostbench"),
        root.join("usr/share/fish/vendor_completions.d/hostbench.fish"),
    ] {
        assert!(path.metadata().unwrap().len() > 1000, "{}", path.display());
    }
    let probe = format!(
        "source {}; COMP_WORDS=(hostbench sch); COMP_CWORD=1; _hostbench hostbench sch hostbench; echo ${{COMPREPLY[@]}}",
        bash.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "sched");
    // The README, the docs, and the licence as the package's copyright file.
    let doc = root.join("usr/share/doc/hostbench");
    for file in [
        "README.md",
        "CHANGELOG.md",
        "docs/fleet.md",
        "examples/roles.sql",
        "examples/prometheus/hostbench.rules.yml",
        "examples/prometheus/hostbench.rules.test.yml",
        "examples/prometheus/hostbench-dashboard.json",
    ] {
        assert!(doc.join(file).is_file(), "{file} missing");
    }
    let copyright = std::fs::read_to_string(doc.join("copyright")).unwrap();
    assert!(copyright.contains("MIT"), "{copyright}");
    assert!(
        copyright.contains("Permission is hereby granted"),
        "{copyright}"
    );
    // The scheduled run: its units where systemd looks, its settings a conffile, neither
    // enabled by the package.
    scheduled_run_as_systemd_would(&sb, &root, &deb);
    // Nothing else: every file is one of those, owned by root, none writable by others.
    let listing = dpkg_deb(&["--contents"], &deb);
    for line in listing.lines() {
        assert!(line.contains(" 0/0 "), "{line}");
        let mode = line.split_whitespace().next().unwrap();
        assert_eq!(&mode[8..9], "-", "writable by others: {line}");
    }
}

/// A unit file's `KEY=` lines of one key, in order.
fn unit_lines(unit: &str, key: &str) -> Vec<String> {
    unit.lines()
        .filter_map(|l| l.strip_prefix(&format!("{key}=")))
        .map(str::to_string)
        .collect()
}

/// A command line of a unit, expanded as systemd expands it: `${VAR}` stays within its word,
/// `$VAR` is split at spaces; a leading `-` (failure ignored) is dropped.
fn expanded(line: &str, env: &std::collections::BTreeMap<String, String>) -> Vec<String> {
    let line = line.strip_prefix('-').unwrap_or(line);
    let mut words = Vec::new();
    for word in line.split_whitespace() {
        if word.contains("${") {
            // `${VAR}` within a word: replaced in place, the word stays one.
            let mut out = String::new();
            let mut rest = word;
            while let Some(at) = rest.find("${") {
                out.push_str(&rest[..at]);
                let end = rest[at..].find('}').unwrap() + at;
                out.push_str(env.get(&rest[at + 2..end]).map_or("", String::as_str));
                rest = &rest[end + 1..];
            }
            out.push_str(rest);
            words.push(out);
        } else if let Some(var) = word.strip_prefix('$') {
            words.extend(
                env.get(var)
                    .into_iter()
                    .flat_map(|v| v.split_whitespace().map(str::to_string)),
            );
        } else {
            words.push(word.to_string());
        }
    }
    words
}

/// systemd's own check of the units `names` (in `units`) finds nothing wrong but the binary,
/// which is not installed at /usr/bin here, and each service's sandbox scores at most 4.0 in
/// `systemd-analyze security` (the exposure docs/fleet.md promises). Where systemd-analyze runs.
fn verified_and_sandboxed(units: &Path, names: &[&str]) {
    if common::on_path("systemd-analyze").is_none() {
        return;
    }
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .args(names.iter().map(|n| units.join(n)))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    for line in said.lines() {
        assert!(
            line.contains("/usr/bin/hostbench is not executable"),
            "systemd-analyze verify: {said}"
        );
    }
    for name in names.iter().filter(|n| n.ends_with(".service")) {
        let out = Command::new("systemd-analyze")
            .args(["security", "--offline=yes", "--no-pager"])
            .arg(units.join(name))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let level = said
            .lines()
            .find_map(|l| l.split("Overall exposure level for ").nth(1))
            .unwrap_or_else(|| panic!("{name}: no exposure level in {said}"));
        let score: f64 = level
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{level}"));
        assert!(score <= 4.0, "{name}: {said}");
    }
}

/// hostbench.service and hostbench.timer as the package installs them: systemd's own check
/// and sandbox score as [`verified_and_sandboxed`] holds them, the timer
/// is not enabled (no maintainer script enables it), the settings file is a conffile, and the
/// service's commands — expanded from its defaults and a settings file as an operator writes
/// one — run: the push of what a fallback store holds, then the run, stored with its run state.
fn scheduled_run_as_systemd_would(sb: &Sandbox, root: &Path, deb: &Path) {
    let units = root.join("usr/lib/systemd/system");
    let service = std::fs::read_to_string(units.join("hostbench.service")).unwrap();
    let timer = std::fs::read_to_string(units.join("hostbench.timer")).unwrap();
    assert!(timer.contains("OnCalendar=") && timer.contains("WantedBy=timers.target"));
    let control = sb.dir.path().join("control");
    let out = Command::new("dpkg-deb")
        .arg("-e")
        .arg(deb)
        .arg(&control)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let conffiles = std::fs::read_to_string(control.join("conffiles")).unwrap();
    assert_eq!(conffiles.trim(), "/etc/hostbench/hostbench.env");
    // The settings file may name a server: root's alone, as the Ansible role writes it. And no
    // command of the unit has the server's URL expanded into its argv (/proc/PID/cmdline is
    // every local user's to read).
    let listing = Command::new("dpkg-deb")
        .arg("-c")
        .arg(deb)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    let env_line = listing
        .lines()
        .find(|l| l.ends_with("./etc/hostbench/hostbench.env"))
        .unwrap_or_else(|| panic!("{listing}"));
    assert!(env_line.starts_with("-rw------- "), "{env_line}");
    for key in ["ExecStartPre", "ExecStart"] {
        for line in unit_lines(&service, key) {
            assert!(!line.contains("HOSTBENCH_DB}"), "{line}");
        }
    }
    let postinst = std::fs::read_to_string(control.join("postinst")).unwrap();
    assert!(
        !postinst.contains("systemctl enable") && !postinst.contains("deb-systemd-invoke start"),
        "{postinst}"
    );
    verified_and_sandboxed(
        &units,
        &[
            "hostbench.service",
            "hostbench.timer",
            "hostbench-failed@.service",
        ],
    );
    // A failed run says so in the journal, through the failure unit the package installs.
    assert!(service.contains("OnFailure=hostbench-failed@%n.service"));
    // The environment systemd gives the commands: the unit's defaults, then the settings file
    // (here as an operator writes it: a short noise run, a store of its own).
    let mut env = std::collections::BTreeMap::new();
    for line in unit_lines(&service, "Environment") {
        let line = line.trim_matches('"');
        let (k, v) = line.split_once('=').unwrap();
        env.insert(k.to_string(), v.to_string());
    }
    assert_eq!(env["HOSTBENCH_RUN_ARGS"], "run --profile quick");
    let state = sb.dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let settings = std::fs::read_to_string(root.join("etc/hostbench/hostbench.env")).unwrap();
    assert!(
        settings.lines().all(|l| l.is_empty() || l.starts_with('#')),
        "all commented out"
    );
    for (k, v) in [
        (
            "HOSTBENCH_RUN_ARGS",
            "noise --no-noise-check --host-label nightly 5 3".to_string(),
        ),
        (
            "HOSTBENCH_DB",
            state.join("results.sqlite").display().to_string(),
        ),
        (
            "HOSTBENCH_FALLBACK_DB",
            state.join("held.sqlite").display().to_string(),
        ),
        ("HOSTBENCH_CACHE_DIR", sb.cache_dir().display().to_string()),
    ] {
        env.insert(k.to_string(), v);
    }
    let exe = root.join("usr/bin/hostbench");
    let run = |key: &str| {
        for line in unit_lines(&service, key) {
            let words = expanded(&line, &env);
            assert_eq!(words[0], "/usr/bin/hostbench", "{line}");
            let out = Command::new(&exe)
                .args(&words[1..])
                .env_clear()
                .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
                .env("HOME", sb.dir.path())
                .envs(&env)
                .current_dir(&state)
                .output()
                .unwrap();
            assert!(out.status.success(), "{key} {words:?}: {out:?}");
        }
    };
    // A run an earlier night kept in the fallback store (its server was down): the service
    // sends it on before it runs.
    let kept = Command::new(&exe)
        .args([
            "noise",
            "--no-noise-check",
            "--host-label",
            "nightly",
            "5",
            "3",
            "--db",
        ])
        .arg(state.join("held.sqlite"))
        .env("HOSTBENCH_CACHE_DIR", sb.cache_dir())
        .output()
        .unwrap();
    assert!(kept.status.success(), "{kept:?}");
    run("ExecStartPre");
    run("ExecStart");
    let hosts = Command::new(&exe)
        .args(["results", "hosts", "--json", "--db"])
        .arg(state.join("results.sqlite"))
        .output()
        .unwrap();
    let hosts: serde_json::Value = serde_json::from_slice(&hosts.stdout).unwrap();
    assert_eq!(hosts[0]["host"], "nightly", "{hosts}");
    assert_eq!(hosts[0]["results"], 2, "the kept run was sent on: {hosts}");
    assert_eq!(hosts[0]["last_run"]["outcome"], "finished", "{hosts}");
    fleet_gate_as_systemd_would(sb, root, &state);
}

/// hostbench-gate.service and its timer as the package installs them: systemd's check and
/// sandbox score as [`verified_and_sandboxed`] holds them, and its command, expanded from its defaults with the store and textfile directory an
/// operator sets, writes the gate's metrics whole.
fn fleet_gate_as_systemd_would(sb: &Sandbox, root: &Path, state: &Path) {
    let units = root.join("usr/lib/systemd/system");
    let service = std::fs::read_to_string(units.join("hostbench-gate.service")).unwrap();
    let timer = std::fs::read_to_string(units.join("hostbench-gate.timer")).unwrap();
    assert!(timer.contains("OnCalendar=") && timer.contains("Persistent=true"));
    verified_and_sandboxed(&units, &["hostbench-gate.service", "hostbench-gate.timer"]);
    assert!(service.contains("OnFailure=hostbench-failed@%n.service"));
    let mut env = std::collections::BTreeMap::new();
    for line in unit_lines(&service, "Environment") {
        let (k, v) = line.trim_matches('"').split_once('=').unwrap();
        env.insert(k.to_string(), v.to_string());
    }
    assert_eq!(env["HOSTBENCH_GATE_ARGS"], "--fail-on worse");
    let textfiles = sb.dir.path().join("gate-textfiles");
    std::fs::create_dir(&textfiles).unwrap();
    env.insert(
        "HOSTBENCH_DB".into(),
        state.join("results.sqlite").display().to_string(),
    );
    env.insert(
        "HOSTBENCH_TEXTFILE_DIR".into(),
        textfiles.display().to_string(),
    );
    // What systemd sets for StateDirectory=hostbench-gate.
    assert!(service.contains("StateDirectory=hostbench-gate"));
    let gate_state = sb.dir.path().join("gate-state");
    std::fs::create_dir(&gate_state).unwrap();
    env.insert("STATE_DIRECTORY".into(), gate_state.display().to_string());
    let [line] = unit_lines(&service, "ExecStart").try_into().unwrap();
    let words = expanded(&line, &env);
    assert_eq!(words[0], "/usr/bin/hostbench", "{line}");
    let out = Command::new(root.join("usr/bin/hostbench"))
        .args(&words[1..])
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", sb.dir.path())
        .envs(&env)
        .output()
        .unwrap();
    // 0, or 3 where a figure fails tonight: both are SuccessExitStatus of the unit.
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{words:?}: {out:?}"
    );
    assert!(service.contains("SuccessExitStatus=3"));
    assert!(
        gate_state.join("history.state").is_file(),
        "the gate keeps its searches: {words:?}"
    );
    let metrics = std::fs::read_to_string(textfiles.join("hostbench-gate.prom")).unwrap();
    assert!(
        metrics.contains("hostbench_gate_worse_figures{host=\"nightly\"} ")
            && metrics.ends_with("# EOF\n"),
        "{metrics}"
    );
}
