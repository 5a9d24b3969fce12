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
    ] {
        assert!(doc.join(file).is_file(), "{file} missing");
    }
    let copyright = std::fs::read_to_string(doc.join("copyright")).unwrap();
    assert!(copyright.contains("MIT"), "{copyright}");
    assert!(
        copyright.contains("Permission is hereby granted"),
        "{copyright}"
    );
    // Nothing else: every file is one of those, owned by root, none writable by others.
    let listing = dpkg_deb(&["--contents"], &deb);
    for line in listing.lines() {
        assert!(line.contains(" 0/0 "), "{line}");
        let mode = line.split_whitespace().next().unwrap();
        assert_eq!(&mode[8..9], "-", "writable by others: {line}");
    }
}
