//! hostbench run by root in a world-writable directory, where another user prepared the names
//! it will use: it never runs their script, never writes through their symlink, never writes
//! into their file or directory. The other user is a uid with no other files on this machine;
//! their files are made by root and given to them (ownership is all the kernel checks). Needs
//! root; elsewhere each test says so and returns.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use common::Sandbox;

/// The other user.
const OTHER: u32 = 54_321;

/// One test at a time: the first one predicts process ids.
static SERIAL: Mutex<()> = Mutex::new(());

/// One test at a time, in a sandbox of its own; None (and a message) unless this is root.
fn as_root() -> Option<(MutexGuard<'static, ()>, Sandbox)> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the hostile-user tests need root");
        return None;
    }
    Some((serial, Sandbox::new()))
}

/// A world-writable, sticky directory, as /tmp is.
fn shared_dir(sb: &Sandbox) -> PathBuf {
    let d = sb.dir.path().join("shared");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Gives `path` (a symlink itself, not its target) to the other user.
fn give_to_other(path: &Path) {
    std::os::unix::fs::lchown(path, Some(OTHER), Some(OTHER)).unwrap();
}

/// A file of root's that must stay as it is.
fn victim(sb: &Sandbox) -> PathBuf {
    let v = sb.dir.path().join("victim");
    std::fs::write(&v, "precious").unwrap();
    v
}

fn plant_symlink(at: &Path, to: &Path) {
    std::os::unix::fs::symlink(to, at).unwrap();
    give_to_other(at);
}

#[test]
fn a_script_another_user_planted_where_the_private_directory_would_be_is_never_run() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let marker = sb.dir.path().join("their-script-ran");
    // hostbench 0.1.0 named it `.hostbench-index-PID`: plant it for the next 400 pids.
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    for pid in last + 1..last + 400 {
        let d = shared.join(format!(".hostbench-index-{pid}"));
        std::fs::create_dir(&d).unwrap();
        let script = d.join("multi.sh");
        std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        give_to_other(&script);
        give_to_other(&d);
    }
    let out = sb
        .cmd()
        .args([
            "index",
            "shell1",
            "-c",
            "1",
            "-i",
            "1",
            "--seconds",
            "1",
            "--json",
        ])
        .arg("--workdir")
        .arg(&shared)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!marker.exists(), "root ran the other user's script");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shell1 = &r["suites"][0]["passes"][0]["tests"][0];
    assert_eq!(shell1["name"], "shell1");
    assert!(shell1["score"]["score"].as_f64().unwrap() > 0.0, "{shell1}");
    // Their directories are theirs still, untouched; ours is gone.
    let left: Vec<_> = std::fs::read_dir(&shared).unwrap().flatten().collect();
    assert_eq!(left.len(), 399);
    assert!(left
        .iter()
        .all(|e| e.metadata().unwrap().uid() == OTHER && e.path().join("multi.sh").exists()));
}

#[test]
fn a_symlink_or_a_file_of_another_user_at_the_log_name_is_refused() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let victim = victim(&sb);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let now = chrono::Utc::now();
    let names: Vec<String> = (0..3)
        .map(|m| {
            let t = now + chrono::Duration::minutes(m);
            format!(
                "interbench-{}-{}.log",
                kernel.trim(),
                t.format("%Y%m%d%H%M")
            )
        })
        .collect();
    let run = || {
        sb.cmd()
            .current_dir(&shared)
            .args(["interactive", "-W", "Audio", "-w", "None", "-t", "1"])
            .args(["--settle-ms", "0"])
            .output()
            .unwrap()
    };
    for n in &names {
        plant_symlink(&shared.join(n), &victim);
    }
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    for n in &names {
        let p = shared.join(n);
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, "theirs\n").unwrap();
        // Writable by anyone: only hostbench's own check stands in the way.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        give_to_other(&p);
    }
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("belongs to another user"), "{err}");
    for n in &names {
        assert_eq!(std::fs::read_to_string(shared.join(n)).unwrap(), "theirs\n");
    }
}

/// `--log-dir` through another user's symlink (their `logs` pointing at a directory of
/// root's alone): the directory is reached without following it, so root's log is not
/// created there.
#[test]
fn a_log_directory_reached_through_another_users_link_is_refused() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let roots = sb.dir.path().join("roots-only");
    std::fs::create_dir(&roots).unwrap();
    std::fs::set_permissions(&roots, std::fs::Permissions::from_mode(0o700)).unwrap();
    plant_symlink(&shared.join("logs"), &roots);
    let out = sb
        .cmd()
        .args(["interactive", "-W", "Audio", "-w", "None", "-t", "1"])
        .args(["--settle-ms", "0", "--log-dir"])
        .arg(shared.join("logs"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot write the log file") && err.contains("link"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&roots).unwrap().count(), 0, "{err}");
}

#[test]
fn the_report_replaces_a_planted_symlink_instead_of_writing_through_it() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let victim = victim(&sb);
    sb.json(&["noise", "-l", "5000", "10", "2"]);
    let page = shared.join("hostbench-report.html");
    plant_symlink(&page, &victim);
    let out = sb
        .cmd()
        .current_dir(&shared)
        .args(["report", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(&page).unwrap();
    assert!(meta.file_type().is_file() && meta.uid() == 0);
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
}

#[test]
fn index_reports_are_not_written_into_another_users_directory_or_through_their_link() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let results = shared.join("results");
    let run = || {
        sb.cmd()
            .current_dir(&shared)
            .args(["index", "syscall", "-c", "1", "-i", "1", "--seconds", "0.2"])
            .output()
            .unwrap()
    };
    // Their directory, open to all.
    std::fs::create_dir(&results).unwrap();
    std::fs::set_permissions(&results, std::fs::Permissions::from_mode(0o777)).unwrap();
    give_to_other(&results);
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("reports not written") && err.contains("belongs to another user"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&results).unwrap().count(), 0);

    // Their symlink to a directory of root's.
    std::fs::remove_dir(&results).unwrap();
    let roots = sb.dir.path().join("roots");
    std::fs::create_dir(&roots).unwrap();
    plant_symlink(&results, &roots);
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("symbolic link of another user's"), "{err}");
    assert_eq!(std::fs::read_dir(&roots).unwrap().count(), 0);
    // Both runs were stored all the same.
    let list = sb.cmd().args(["results", "list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 3);
}

/// A short index run of one compiled test: it builds (or reuses) the C programs.
const BRIEF_INDEX: [&str; 8] = [
    "index",
    "dhry2reg",
    "-c",
    "1",
    "-i",
    "1",
    "--seconds",
    "0.2",
];

/// The directory of the C programs a run with `cache` builds, as its result names it.
fn native_dir(sb: &Sandbox, cache: &Path) -> (serde_json::Value, PathBuf) {
    let out = sb
        .cmd()
        .args(BRIEF_INDEX)
        .arg("--json")
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let native = r["suites"][0]["native"].clone();
    let path = PathBuf::from(native["path"].as_str().unwrap_or_else(|| panic!("{r}")));
    (native, path)
}

#[test]
fn a_program_another_user_planted_in_a_shared_cache_is_never_run() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    // Where an honest build of this compiler and these sources goes (its hash).
    let (_, honest) = native_dir(&sb, &sb.dir.path().join("own-cache"));
    let hash = honest.file_name().unwrap();
    let marker = sb.dir.path().join("their-program-ran");
    let cache = shared.join("cache");
    let planted = cache.join("native").join(hash);
    std::fs::create_dir_all(&planted).unwrap();
    for name in common::NATIVE_PROGRAMS {
        let p = planted.join(name);
        std::fs::write(&p, format!("#!/bin/sh\nid -u > {}\n", marker.display())).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        give_to_other(&p);
    }
    for d in [&planted, &planted.parent().unwrap().to_path_buf(), &cache] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        give_to_other(d);
    }
    let (native, used) = native_dir(&sb, &cache);
    assert!(!marker.exists(), "root ran the other user's program");
    assert_ne!(used, planted);
    let why = native["untrusted_cache"]
        .as_str()
        .unwrap_or_else(|| panic!("{native}"));
    assert!(why.contains("belongs to another user (uid 54321)"), "{why}");
    assert_eq!(native["built_now"], true);
    // Their files are as they were.
    assert!(std::fs::read_dir(&planted)
        .unwrap()
        .flatten()
        .all(|e| e.metadata().unwrap().uid() == OTHER));

    // Root's own cache, made writable by all (as an old hostbench under umask 000 left it),
    // is not trusted either: anyone could have replaced a program since.
    let open = sb.dir.path().join("open-cache");
    let (_, first) = native_dir(&sb, &open);
    std::fs::set_permissions(&first, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (native, used) = native_dir(&sb, &open);
    assert_ne!(used, first);
    let why = native["untrusted_cache"]
        .as_str()
        .unwrap_or_else(|| panic!("{native}"));
    assert!(why.contains("writable by other users (mode 0777)"), "{why}");
}

#[test]
fn under_umask_000_nothing_hostbench_creates_is_writable_by_others() {
    use std::os::unix::process::CommandExt;
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let top = sb.dir.path().join("u");
    let cache = top.join("cache/deep");
    let db = top.join("data/deep/results.sqlite");
    let mut cmd = sb.std_cmd();
    cmd.current_dir(sb.work_dir())
        .args(BRIEF_INDEX)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--db")
        .arg(&db);
    // SAFETY: umask is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut seen = 0;
    let mut walk = vec![top.clone(), sb.work_dir()];
    while let Some(p) = walk.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        assert_eq!(
            meta.mode() & 0o022,
            0,
            "{} is mode {:o}",
            p.display(),
            meta.mode()
        );
        if meta.is_file() && meta.mode() & 0o111 != 0 {
            assert_eq!(meta.mode() & 0o777, 0o755, "{}", p.display());
        }
        if meta.is_dir() {
            walk.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
        seen += 1;
    }
    // The cache and data directories, the build's directory and programs, the store, the
    // results directory and its report: all looked at.
    assert!(seen > 15, "{seen}");
    for d in [
        top.join("cache"),
        cache.clone(),
        top.join("data"),
        db.parent().unwrap().into(),
    ] {
        let mode = std::fs::metadata(&d).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", d.display());
    }
}

#[test]
fn output_to_a_device_or_a_fifo_is_written_into_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    sb.json(&["noise", "-l", "5000", "10", "2"]);
    sb.json(&["noise", "-l", "5000", "10", "2"]);
    let null = Path::new("/dev/null");
    let before = std::fs::symlink_metadata(null).unwrap();
    for args in [
        &["report", "--fleet", "-o", "/dev/null"][..],
        &["report", "1", "-o", "/dev/null"],
        &[
            "results",
            "export",
            "1",
            "--format",
            "json",
            "-o",
            "/dev/null",
        ],
        &["compare", "1", "2", "-o", "/dev/null"],
    ] {
        let out = sb.cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        let after = std::fs::symlink_metadata(null).unwrap();
        assert!(
            after.file_type().is_char_device(),
            "{args:?} replaced /dev/null"
        );
        assert_eq!((before.ino(), before.rdev()), (after.ino(), after.rdev()));
    }
    // A FIFO a reader holds gets the page; the FIFO stays.
    let fifo = sb.dir.path().join("page.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Held open for reading and writing (Linux allows it on a FIFO): there is a reader before
    // hostbench opens it, and reads wait for its page instead of seeing an end at once.
    let end = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut end = end;
        let mut page = Vec::new();
        let mut buf = [0u8; 65536];
        while !String::from_utf8_lossy(&page).contains("</html>") {
            let n = end.read(&mut buf).unwrap();
            page.extend_from_slice(&buf[..n]);
        }
        page
    });
    let out = sb
        .cmd()
        .args(["report", "1", "-o"])
        .arg(&fifo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = reader.join().unwrap();
    assert!(String::from_utf8_lossy(&page).contains("<html"));
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_store_another_user_planted_in_a_shared_directory_is_refused_untouched() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let victim = victim(&sb);
    let store = shared.join("store.sqlite");
    plant_symlink(&store, &victim);
    let noise = |db: &Path| {
        sb.cmd()
            .args(["noise", "-l", "5000", "10", "2", "--db"])
            .arg(db)
            .output()
            .unwrap()
    };
    // Storing: a directory anyone can write is no place for a store (a journal planted
    // beside it would be rolled back into it); reading: their link is not followed.
    let out = noise(&store);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("shared is writable by other users (mode 1777)")
            && err.contains("could plant its journal"),
        "{err}"
    );
    let out = sb
        .cmd()
        .args(["results", "list", "--db"])
        .arg(&store)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("symbolic link of another user's (uid 54321)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    // Their database file, there before root's first run.
    std::fs::remove_file(&store).unwrap();
    rusqlite::Connection::open(&store).unwrap();
    give_to_other(&store);
    let before = std::fs::read(&store).unwrap();
    for (args, why) in [
        (&["noise", "-l", "5000", "10", "2"][..], "mode 1777"),
        (&["results", "list"], "belongs to another user (uid 54321)"),
    ] {
        let out = sb
            .cmd()
            .args(args)
            .arg("--db")
            .arg(&store)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{err}");
    }
    assert_eq!(std::fs::read(&store).unwrap(), before);

    // A directory they made first where root's store would go: never stored into.
    let theirs = their_dir(&shared, "hostbench");
    let out = noise(&theirs.join("results.sqlite"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("belongs to another user (uid 54321)"), "{err}");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);

    // Root's own link to root's own store is followed.
    let own = sb.dir.path().join("own.sqlite");
    let link = sb.dir.path().join("link.sqlite");
    std::os::unix::fs::symlink(&own, &link).unwrap();
    assert!(noise(&link).status.success());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::metadata(&own).unwrap().len() > 0);
}

#[test]
fn a_store_the_user_cannot_reach_is_an_error_not_an_empty_store() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let closed = shared.join("closed");
    std::fs::create_dir(&closed).unwrap();
    let db = closed.join("r.sqlite");
    sb.cmd()
        .args(["noise", "-l", "5000", "10", "2", "--db"])
        .arg(&db)
        .assert()
        .success();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The sandbox above is root's alone: let the other user through to the shared directory.
    std::fs::set_permissions(sb.dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    // A copy of the binary the other user can reach wherever the checkout is.
    let exe = shared.join("hostbench");
    let built = assert_cmd::cargo::cargo_bin("hostbench");
    if std::fs::hard_link(&built, &exe).is_err() {
        std::fs::copy(&built, &exe).unwrap();
    }
    let mut cmd = std::process::Command::new(&exe);
    cmd.current_dir(&shared)
        .env_clear()
        .env("HOME", &shared)
        .args(["results", "list", "--db"])
        .arg(&db);
    common::as_user(&mut cmd, OTHER);
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Permission denied"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("No stored results"));
}

/// Another local user racing hostbench: a child process running as [`OTHER`] that exchanges
/// each pair of names (`renameat2(RENAME_EXCHANGE)`) over and over, as fast as it can
/// (yielding the CPU between rounds), until it is dropped or `limit` passes. The kernel checks its rights as the other user's: it can
/// swap what is in a directory of theirs or one open to all, never what is root's in a sticky
/// one.
struct Swapper {
    pid: libc::pid_t,
}

impl Swapper {
    fn start(pairs: &[(PathBuf, PathBuf)], limit: std::time::Duration) -> Swapper {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        let pairs: Vec<_> = pairs.iter().map(|(a, b)| (c(a), c(b))).collect();
        let ends = std::time::Instant::now() + limit;
        // SAFETY: the child makes only system calls (no allocation, no lock) and _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            unsafe {
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                let ok = libc::setgroups(0, std::ptr::null()) == 0
                    && libc::setresgid(OTHER, OTHER, OTHER) == 0
                    && libc::setresuid(OTHER, OTHER, OTHER) == 0;
                if !ok {
                    libc::_exit(2);
                }
                while std::time::Instant::now() < ends {
                    for (a, b) in &pairs {
                        libc::syscall(
                            libc::SYS_renameat2,
                            libc::AT_FDCWD,
                            a.as_ptr(),
                            libc::AT_FDCWD,
                            b.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        );
                    }
                    libc::sched_yield();
                }
                libc::_exit(0);
            }
        }
        Swapper { pid }
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        // SAFETY: our own child, killed and reaped once.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// A directory of the other user's, mode 0755, in the sticky `shared` one: theirs to rename
/// anything in.
fn their_dir(shared: &Path, name: &str) -> PathBuf {
    let d = shared.join(name);
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    give_to_other(&d);
    d
}

/// Their programs at the names of the C tests, in `dir`, each writing the uid it ran as
/// into `marker`.
fn plant_programs(dir: &Path, marker: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for name in common::NATIVE_PROGRAMS {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\nid -u > {}\n", marker.display())).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        give_to_other(&p);
    }
}

#[test]
fn a_cache_another_user_can_swap_while_hostbench_runs_is_never_used() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let (_, honest) = native_dir(&sb, &sb.dir.path().join("own-cache"));
    let hash = honest.file_name().unwrap().to_owned();
    let marker = sb.dir.path().join("their-program-ran");
    // The ways the cache's own place could be another user's: a directory of theirs above
    // it, a directory above it open to all without the sticky bit, their symlink to it.
    let theirs = their_dir(&shared, "theirs");
    let open = sb.dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let link = shared.join("link");
    plant_symlink(&link, &sb.dir.path().join("own-cache"));
    for (parent, cache, why) in [
        (
            &theirs,
            theirs.join("cache"),
            "belongs to another user (uid 54321)",
        ),
        (
            &open,
            open.join("cache"),
            "writable by other users (mode 0777)",
        ),
        (
            &shared,
            link.clone(),
            "symbolic link of another user's (uid 54321); not followed",
        ),
    ] {
        // Root's honest build at the cache's name, and theirs beside it, swapped in and out.
        if cache != link {
            let built = cache.join("native").join(&hash);
            std::fs::create_dir_all(&built).unwrap();
            for name in common::NATIVE_PROGRAMS {
                std::fs::copy(honest.join(name), built.join(name)).unwrap();
            }
        }
        let evil = parent.join("evil");
        plant_programs(&evil.join("native").join(&hash), &marker);
        give_to_other(&evil);
        // Their link is refused for what it is; swapped, their directory at its name would be
        // refused as theirs instead.
        let _swapper = (cache != link).then(|| {
            Swapper::start(
                &[(cache.clone(), evil.clone())],
                std::time::Duration::from_secs(60),
            )
        });
        for _ in 0..3 {
            let (native, _) = native_dir(&sb, &cache);
            assert!(!marker.exists(), "root ran the other user's program");
            let said = native["untrusted_cache"]
                .as_str()
                .unwrap_or_else(|| panic!("{native}"));
            assert!(said.contains(why), "{said}");
        }
    }
}

#[test]
fn a_work_directory_another_user_controls_is_refused_before_anything_is_made() {
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let theirs = their_dir(&shared, "theirs");
    let open = sb.dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    for (work, why) in [
        (&theirs, "belongs to another user (uid 54321)"),
        (&open, "writable by other users (mode 0777)"),
    ] {
        for args in [
            &["index", "execl", "-c", "1", "-i", "1", "--seconds", "0.2"][..],
            &["interactive", "-t", "1", "-W", "Audio", "-w", "None"],
        ] {
            let out = sb
                .cmd()
                .args(args)
                .arg("--workdir")
                .arg(work)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains("refusing the work directory") && err.contains(why),
                "{err}"
            );
            assert_eq!(std::fs::read_dir(work).unwrap().count(), 0, "{args:?}");
        }
    }
    // The sticky shared directory, as /tmp, stays a place to work in.
    let out = sb
        .cmd()
        .args(["index", "execl", "-c", "1", "-i", "1", "--seconds", "0.2"])
        .arg("--workdir")
        .arg(&shared)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_output_fifo_swapped_for_a_symlink_is_never_written_through() {
    use std::os::unix::fs::FileTypeExt;
    let Some((_serial, sb)) = as_root() else {
        return;
    };
    let shared = shared_dir(&sb);
    let victim = victim(&sb);
    sb.json(&["noise", "-l", "5000", "10", "2"]);
    // Sixty names, each their FIFO, exchanged again and again with their link to root's file.
    let tries = 60;
    let mut pairs = Vec::new();
    for i in 0..tries {
        let fifo = shared.join(format!("out-{i}.html"));
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        give_to_other(&fifo);
        let link = shared.join(format!("alt-{i}"));
        plant_symlink(&link, &victim);
        pairs.push((fifo, link));
    }
    let mut replaced = 0;
    for (out_name, link) in &pairs {
        // One swapper a try, on that try's names alone: they flip every few microseconds.
        let swapper = Swapper::start(
            &[(out_name.clone(), link.clone())],
            std::time::Duration::from_secs(30),
        );
        let out = sb
            .cmd()
            .args(["report", "1", "-o"])
            .arg(out_name)
            .output()
            .unwrap();
        drop(swapper);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // Either their FIFO had no reader (refused) or their link was replaced by root's page.
        let now = std::fs::symlink_metadata(out_name).unwrap();
        if out.status.success() {
            // Root's page replaced their link; being root's, in a sticky directory, it stays.
            replaced += 1;
            assert!(now.file_type().is_file() && now.uid() == 0, "{now:?}");
            assert!(std::fs::read_to_string(out_name).unwrap().contains("<html"));
        } else {
            // Their FIFO had no reader, or the name never held still: refused either way.
            assert!(
                err.contains("no process reads") || err.contains("kept changing"),
                "{err}"
            );
            assert!(now.file_type().is_fifo() || now.file_type().is_symlink());
        }
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    eprintln!("{replaced} of {tries} outputs replaced their link; none written through");
}

/// What a forged result or another host's row may hold in any text field: an escape sequence
/// that retitles the window or clears the screen, a carriage return and a newline that split a
/// line, a right-to-left override, a zero-width space, and a formula a spreadsheet would run.
const FORGED: &str =
    "=HYPERLINK(\"http://x\")\u{1b}]0;owned\u{7}\u{1b}[2J\r\nfake row\u{202e}exe.txt\u{200b}";

/// Whether `out` holds a character no terminal or table should receive from stored text
/// (newlines and tabs of hostbench's own layout aside).
fn hidden_in(out: &str) -> Option<char> {
    out.chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
            || c == '\u{200b}'
            || c == '\u{2028}'
    })
}

#[test]
fn forged_text_in_a_result_reaches_no_terminal_and_no_spreadsheet_formula() {
    let sb = Sandbox::new();
    let real = sb.json(&["index", "syscall", "-c", "1", "-i", "1", "--seconds", "0.2"]);
    let mut forged = real.clone();
    forged["uuid"] = common::fresh_uuid().into();
    for field in [
        "cpu_model",
        "kernel_release",
        "kernel_version",
        "clocksource",
        "lang",
    ] {
        forged["environment"][field] = FORGED.into();
    }
    forged["tool_version"] = FORGED.into();
    forged["command_line"] = serde_json::json!(["hostbench", FORGED]);
    let ix = &mut forged["suites"][0];
    ix["language"] = FORGED.into();
    ix["native_note"] = FORGED.into();
    ix["settings"]["lang"] = FORGED.into();
    ix["passes"][0]["tests"][0]["msg"] = FORGED.into();
    ix["passes"][0]["tests"][0]["unit"] = FORGED.into();
    let file = sb.dir.path().join("forged.json");
    std::fs::write(&file, forged.to_string()).unwrap();
    let imported = sb
        .cmd()
        .args(["results", "import"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    let text = |args: &[&str]| {
        let out = sb.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for args in [
        &["results", "list"][..],
        &["results", "show", "2"],
        &["compare", "1", "2"],
        &["compare", "1", "2", "--format", "markdown"],
        &["results", "export", "2", "--format", "markdown"],
        &["report", "1", "2", "-o", "-"],
    ] {
        let out = text(args);
        assert_eq!(hidden_in(&out), None, "{args:?}: {out}");
        assert!(!out.contains("\nfake row"), "{args:?} split a line: {out}");
    }
    let shown = text(&["results", "show", "2"]);
    assert!(
        shown.contains("\\e]0;owned\\u{7}\\e[2J\\r\\nfake row\\u{202e}"),
        "{shown}"
    );
    // Every CSV: a cell that begins like a formula is made text.
    for args in [
        &["results", "export", "2", "--format", "csv"][..],
        // A comparison's rows are named after side A's figures: the forged one.
        &["compare", "2", "1", "--format", "csv"],
    ] {
        let out = text(args);
        let mut rows = csv::Reader::from_reader(out.as_bytes());
        let cells: Vec<String> = rows
            .records()
            .flat_map(|r| r.unwrap().iter().map(String::from).collect::<Vec<_>>())
            .collect();
        assert!(cells.iter().any(|c| c.contains("HYPERLINK")), "{out}");
        for c in &cells {
            let formula = c.starts_with(['=', '+', '@', '\t', '\r'])
                || (c.starts_with('-') && c.parse::<f64>().is_err());
            assert!(!formula, "{args:?}: a formula cell {c:?}");
        }
    }
}

/// A fleet drawn from stored headline figures (what another host wrote into the shared store)
/// shows their words only escaped: in text, Markdown and CSV alike.
#[test]
fn forged_words_in_a_stored_fleet_figure_reach_no_terminal() {
    let sb = Sandbox::new();
    // Three hosts: a range is drawn, and its line names what its figure measured.
    for host in ["h1", "h2", "h3"] {
        sb.json(&[
            "index",
            "syscall",
            "-c",
            "1",
            "-i",
            "1",
            "--seconds",
            "0.2",
            "--host-label",
            host,
        ]);
    }
    let figures = serde_json::json!({
        "noise_floor_pct": null,
        "values": [{"value": 100.0, "kind": FORGED, "note": FORGED}, null, null, null, null],
    });
    let db = rusqlite::Connection::open(sb.db()).unwrap();
    db.execute("UPDATE results SET figures = ?1", [figures.to_string()])
        .unwrap();
    drop(db);
    for format in ["text", "markdown", "csv"] {
        let out = sb
            .cmd()
            .args(["report", "--fleet", "--format", format, "-o", "-"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{format}: {out:?}");
        let out = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.contains("fake row"),
            "{format}: the figure is shown: {out}"
        );
        assert_eq!(hidden_in(&out), None, "{format}: {out}");
        assert!(!out.contains("\nfake row"), "{format} split a line: {out}");
    }
}

#[test]
fn labels_that_are_empty_blank_hidden_or_lookalike_are_refused_or_made_plain() {
    let sb = Sandbox::new();
    for label in [
        "",
        "   ",
        "node1\u{200b}",
        "\u{202e}1edon",
        "a\u{2028}b",
        "x\u{1b}[2J",
    ] {
        let out = sb
            .cmd()
            .args(["noise", "--host-label", label, "-l", "5000", "10", "2"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{label:?}: {err}");
        assert_eq!(hidden_in(&err), None, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // Full-width letters are the same label as the plain ones: kept in NFKC form.
    let r = sb.json(&[
        "noise",
        "--host-label",
        "ｎｏｄｅ１",
        "-l",
        "5000",
        "10",
        "2",
    ]);
    assert_eq!(r["host_label"], "node1");
    // A forged file with a label no command line could give is refused on import.
    let mut forged = r.clone();
    forged["uuid"] = common::fresh_uuid().into();
    forged["host_label"] = "node1\u{200b}".into();
    let file = sb.dir.path().join("f.json");
    std::fs::write(&file, forged.to_string()).unwrap();
    let out = sb
        .cmd()
        .args(["results", "import"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("U+200B"),
        "{out:?}"
    );
}
