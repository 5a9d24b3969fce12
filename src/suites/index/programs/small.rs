//! execl.c and spawn.c. What they measure is the cost of starting (execl) and forking (spawn) a
//! small process, so they run in the small program of `assets/small.rs`, which build.rs compiles
//! without Rust's standard library into a program that needs only libc, as UnixBench's C
//! programs do: measured in this large binary with Rust's runtime, the harness and not the
//! kernel would set the score. The program is embedded here and written into the suite's
//! private directory; a copy of either test replaces itself with it.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStringExt;

use anyhow::{anyhow, Context, Result};

use crate::platform::dir::Dir;

use crate::suites::index::registry::Program;

const SMALL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/small"));

/// The program's file name in the suite's private directory.
const SMALL_NAME: &str = "small";

/// Writes the small program into the held directory `dir`, created new, mode 0755.
pub fn write_program(dir: &Dir) -> Result<()> {
    dir.create_new(SMALL_NAME, 0o755)
        .and_then(|mut f| f.write_all(SMALL))
        .with_context(|| format!("writing {}", dir.path().join(SMALL_NAME).display()))
}

/// Whether `program` runs in the small program: execl and spawn, and the looper tests.
pub fn runs_small(program: Program) -> bool {
    matches!(program, Program::Execl | Program::Spawn | Program::SysExec)
        || super::job(program).is_some()
}

/// The small program's arguments for `program`, timed from `start_ns` to `deadline_ns`
/// (CLOCK_MONOTONIC).
fn arguments(program: Program, start_ns: u64, deadline_ns: u64) -> Vec<String> {
    match program {
        Program::Execl => vec![
            "execl".into(),
            start_ns.to_string(),
            deadline_ns.to_string(),
            "0".into(),
        ],
        Program::Spawn => vec!["spawn".into(), deadline_ns.to_string()],
        Program::SysExec => vec!["sysexec".into(), deadline_ns.to_string()],
        other => {
            let job = super::job(other).expect("a looper test");
            let mut args = vec!["looper".into(), deadline_ns.to_string()];
            args.extend(job.argv(std::process::id()));
            args
        }
    }
}

/// Replaces this process with the small program running `program` (execl or spawn) until
/// `deadline_ns`; it prints its report line on standard output. The program is opened in the
/// current directory (the run's private directory, entered by its descriptor) without
/// following a link, and executed from that descriptor. Returns only on failure.
pub fn exec(program: Program, start_ns: u64, deadline_ns: u64) -> anyhow::Error {
    let dir = match Dir::current() {
        Ok(d) => d,
        Err(e) => return e.into(),
    };
    let file = match dir.open_regular(SMALL_NAME) {
        Ok(f) => f,
        Err(e) => return anyhow!("opening {SMALL_NAME}: {e}"),
    };
    exec_fd(
        file.as_raw_fd(),
        SMALL_NAME,
        arguments(program, start_ns, deadline_ns),
    )
}

/// Replaces this process with the program open as `fd` (`fexecve`: no name is looked up),
/// with `argv0` and `arguments`; it prints the copy's report line. Returns only on failure.
pub fn exec_fd(fd: RawFd, argv0: &str, arguments: Vec<String>) -> anyhow::Error {
    let args: Result<Vec<CString>, _> = std::iter::once(argv0.to_string())
        .chain(arguments)
        .map(CString::new)
        .collect();
    let env: Result<Vec<CString>, _> = std::env::vars_os()
        .map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend(v.into_vec());
            CString::new(kv)
        })
        .collect();
    let (args, env) = match (args, env) {
        (Ok(a), Ok(e)) => (a, e),
        (Err(e), _) | (_, Err(e)) => return e.into(),
    };
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());
    // SAFETY: a descriptor this process holds, a NULL-terminated argv and envp of live C
    // strings. Close-on-exec: the program does not keep it (an ELF file runs from it anyway).
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fexecve(fd, argv.as_ptr(), envp.as_ptr());
    }
    anyhow!(
        "running {argv0}: {} (is the directory on a noexec file system? choose another with --workdir)",
        std::io::Error::last_os_error()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::index::scoring::CopyReport;
    use crate::platform::clock::monotonic_ns;
    use crate::platform::private_dir::PrivateDir;
    use std::path::Path;

    /// Runs the small program in a child, as a copy would after its exec, and reads its report.
    fn run_small(dir: &Path, args: &[String]) -> std::process::Output {
        std::process::Command::new(dir.join(SMALL_NAME))
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap()
    }

    fn report_of(out: std::process::Output) -> CopyReport {
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let json = text.trim().strip_prefix("report ").expect(&text);
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn execl_and_spawn_count_until_their_deadline() {
        let dir = PrivateDir::create(&std::env::temp_dir(), "small-test").unwrap();
        write_program(dir.dir()).unwrap();
        for program in [Program::Execl, Program::Spawn, Program::SysExec] {
            let now = monotonic_ns();
            let args = arguments(program, now, now + 200_000_000);
            let r = report_of(run_small(dir.path(), &args));
            assert!(r.count >= 2.0, "{program:?}: {r:?}");
            // spawn times itself from its own start, after the exec.
            assert!(r.time_s >= 0.1 && r.time_s < 5.0, "{program:?}: {r:?}");
        }
        // The looper: a command over and over, counted per minute, its output appended to
        // looper.log in the test directory as Run appends it to its log; a failing command is
        // an error.
        let now = monotonic_ns();
        let looped = run_small(
            dir.path(),
            &[
                "looper".into(),
                (now + 200_000_000).to_string(),
                "echo".into(),
                "ran".into(),
            ],
        );
        let r = report_of(looped);
        assert!(r.count >= 2.0 && r.timebase == 60.0, "{r:?}");
        let log = std::fs::read_to_string(dir.path().join("looper.log")).unwrap();
        // Every counted run wrote its line (a run past the deadline is not counted).
        let lines = log.lines().filter(|l| *l == "ran").count() as f64;
        assert!(
            lines >= r.count && lines <= r.count + 1.0,
            "{lines} lines, {r:?}"
        );
        let now = monotonic_ns();
        let failing = run_small(
            dir.path(),
            &[
                "looper".into(),
                (now + 200_000_000).to_string(),
                "false".into(),
            ],
        );
        let said = String::from_utf8_lossy(&failing.stdout);
        assert!(said.starts_with("error false failed"), "{said}");
        // Bad arguments: a clear message and exit 2, no loop.
        let bad = run_small(
            dir.path(),
            &["execl".into(), "x".into(), "1".into(), "2".into()],
        );
        assert_eq!(bad.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&bad.stderr).contains("numbers"));
        let bad = run_small(dir.path(), &["fork".into()]);
        assert_eq!(bad.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&bad.stderr).contains("usage"));
    }
}
