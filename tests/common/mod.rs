//! A private store and calibration cache per test, so tests running in parallel never share
//! files and never touch the user's own results.

#![allow(dead_code)]

pub mod pg;

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

pub struct Sandbox {
    pub dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Sandbox {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.sqlite")
    }

    /// Where a run stores when its PostgreSQL store cannot be reached at its start.
    pub fn fallback_db(&self) -> PathBuf {
        self.dir.path().join("fallback.sqlite")
    }

    /// A directory `work` in the sandbox, created, for a run's `--workdir`.
    pub fn work_dir(&self) -> PathBuf {
        let w = self.dir.path().join("work");
        std::fs::create_dir_all(&w).expect("work directory");
        w
    }

    /// `hostbench run --profile smoke` with `args`, in a work directory anyone may write (mode
    /// 0777, no sticky bit), which a run refuses after its store opened: a run that fails
    /// before measuring (exit 2, checked), its run state recorded as failed.
    pub fn refused_run(&self, args: &[&str]) {
        use std::os::unix::fs::PermissionsExt;
        let open = self.dir.path().join("open");
        std::fs::create_dir_all(&open).expect("open directory");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let out = self
            .cmd()
            .args(["run", "--profile", "smoke", "--workdir"])
            .arg(&open)
            .args(args)
            .output()
            .expect("run hostbench");
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// The hostbench binary, pointed at this sandbox's store and cache, and working in the
    /// sandbox, so that what it writes by default (index reports under `results/`, interbench
    /// logs) never lands in the source tree.
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("hostbench").expect("hostbench binary");
        c.env("HOSTBENCH_DB", self.db())
            .env("HOSTBENCH_FALLBACK_DB", self.fallback_db())
            .env("HOSTBENCH_CACHE_DIR", self.cache_dir())
            .current_dir(self.dir.path());
        c
    }

    /// The same as [`cmd`](Self::cmd), as a std Command: for tests that spawn and signal the
    /// process or set limits before exec.
    pub fn std_cmd(&self) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("hostbench"));
        c.env("HOSTBENCH_DB", self.db())
            .env("HOSTBENCH_FALLBACK_DB", self.fallback_db())
            .env("HOSTBENCH_CACHE_DIR", self.cache_dir())
            .current_dir(self.dir.path());
        c
    }

    /// Runs hostbench with `args` plus `--json`, expects success and returns the parsed result.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self
            .cmd()
            .args(args)
            .arg("--json")
            .output()
            .expect("run hostbench");
        assert!(
            out.status.success(),
            "hostbench {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
    }

    /// `results export ID --format csv --account`: each figure's row, by column name.
    pub fn account_rows(&self, id: &str) -> Vec<std::collections::BTreeMap<String, String>> {
        let out = self
            .cmd()
            .args(["results", "export", id, "--format", "csv", "--account"])
            .output()
            .expect("run hostbench");
        assert!(out.status.success(), "{out:?}");
        let mut rows = csv::Reader::from_reader(&out.stdout[..]);
        let header = rows.headers().unwrap().clone();
        rows.records()
            .map(|r| {
                let r = r.unwrap();
                header
                    .iter()
                    .map(String::from)
                    .zip(r.iter().map(String::from))
                    .collect()
            })
            .collect()
    }
}

/// The single noise suite of a result.
pub fn noise(result: &Value) -> &Value {
    let suites = result["suites"].as_array().expect("suites array");
    assert_eq!(suites.len(), 1);
    assert_eq!(suites[0]["suite"], "noise");
    &suites[0]
}

/// The pids of live processes whose command line (NUL-separated, as in /proc) satisfies `pred`.
pub fn processes(pred: impl Fn(&str) -> bool) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| pred(&String::from_utf8_lossy(&c)))
                .unwrap_or(false)
        })
        .collect()
}

/// hostbench worker processes that work in `marker` (a test's own directory): whose command
/// line names it, or whose current directory or an open descriptor is in it (workers are
/// handed their directory as a descriptor, not a path).
pub fn workers_with(marker: &str) -> Vec<u32> {
    processes(|c| c.contains("__worker"))
        .into_iter()
        .filter(|pid| {
            let named = std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker));
            let in_it = |link: std::path::PathBuf| {
                std::fs::read_link(link).is_ok_and(|to| to.to_string_lossy().contains(marker))
            };
            let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
                .map(|d| d.flatten().any(|e| in_it(e.path())))
                .unwrap_or(false);
            named || fds || in_it(format!("/proc/{pid}/cwd").into())
        })
        .collect()
}

/// How a bounded run of a command ended.
pub struct Bounded {
    /// None when it was killed for running past its limit.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Bounded {
    pub fn hung(&self) -> bool {
        self.code.is_none() && self.signal == Some(libc::SIGKILL)
    }

    pub fn panicked(&self) -> bool {
        self.code == Some(101) || self.stderr.contains("panicked")
    }
}

/// Runs `cmd` with its output in files (no pipe can fill up), killing its process group if it
/// runs past `limit`.
pub fn run_bounded(mut cmd: std::process::Command, limit: std::time::Duration) -> Bounded {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let dir = tempfile::tempdir().expect("temporary directory");
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    cmd.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .stdin(std::process::Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().expect("start the command");
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            // SAFETY: kill(2) of the child's own process group.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            break child.wait().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Bounded {
        code: status.code(),
        signal: status.signal(),
        stdout: String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err_path).unwrap()).into_owned(),
    }
}

/// Where `program` is on this process's PATH.
pub fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Whether a test that needs `programs` (which scripts/install-test-deps.sh installs) must be
/// skipped: true, with a message, when one is missing — unless HOSTBENCH_REQUIRE_TEST_DEPS=1
/// (set by .ci/run), where a missing program fails the test instead of skipping it.
pub fn skip_without(test: &str, programs: &[&str]) -> bool {
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| on_path(p).is_none())
        .collect();
    if missing.is_empty() {
        return false;
    }
    let why = format!(
        "{test}: needs {} (scripts/install-test-deps.sh installs it)",
        missing.join(", ")
    );
    assert!(
        !deps_required(),
        "{why}; HOSTBENCH_REQUIRE_TEST_DEPS=1 makes that a failure"
    );
    eprintln!("skipped: {why}");
    true
}

/// Whether every test dependency must be present (HOSTBENCH_REQUIRE_TEST_DEPS=1, as in CI).
pub fn deps_required() -> bool {
    std::env::var_os("HOSTBENCH_REQUIRE_TEST_DEPS").is_some_and(|v| v == "1")
}

/// `scripts/build-deb.sh` of the binary under test, into `out`: the .deb's path.
pub fn build_deb(out: &std::path::Path) -> PathBuf {
    let exe = assert_cmd::cargo::cargo_bin("hostbench");
    let run = std::process::Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/build-deb.sh"))
        .arg(&exe)
        .arg(out)
        .output()
        .expect("bash runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let path = PathBuf::from(String::from_utf8(run.stdout).unwrap().trim());
    assert!(path.is_file(), "{}", path.display());
    path
}

/// The programs `index` builds from its C sources, one per test as UnixBench's Makefile builds
/// them (src/suites/index/native.rs).
pub const NATIVE_PROGRAMS: [&str; 11] = [
    "dhry2reg",
    "whetstone",
    "arithoh",
    "arith_short",
    "arith_int",
    "arith_long",
    "arith_float",
    "arith_double",
    "hanoi",
    "spawn",
    "execl",
];

/// Makes `cmd` run as user and group `uid` (set between fork and exec; the caller is root).
pub fn as_user(cmd: &mut std::process::Command, uid: u32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setgid and setuid are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setgid(uid) != 0 || libc::setuid(uid) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Holds the calling thread to CPU 0.
pub fn pin_to_cpu0() {
    pin_to(0);
}

/// Holds the calling thread to CPU `cpu`.
pub fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET on it is in bounds for cpu < 1024.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Makes `cmd` run held to CPU 0 (as `taskset -c 0`).
pub fn on_cpu0(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only sched_setaffinity between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            pin_to_cpu0();
            Ok(())
        });
    }
}

/// A UUID no other result in a test has: each run a test makes by editing a copy of another
/// is a run of its own (a copy keeps the UUID, and one run is never compared with itself).
pub fn fresh_uuid() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:08x}-0000-4000-8000-{:012x}", std::process::id(), n)
}

/// The spin loop's count for one millisecond on CPU 0 of this host, from one calibrated run
/// (p1bench's rule), measured once for the test binary: the tests fix the count with `-l` so that
/// every run of a comparison does the same work, and the jobs' lengths in their comments
/// (5 ms, 20 ms) then hold on a fast CPU as on a slow one.
pub fn loops_per_ms() -> &'static str {
    static LOOPS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LOOPS.get_or_init(|| {
        let sb = Sandbox::new();
        let mut cmd = sb.std_cmd();
        cmd.args(["noise", "--no-noise-check", "-q", "--json", "20", "1"]);
        on_cpu0(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let iterations = r["suites"][0]["calibration"]["iterations"]
            .as_u64()
            .unwrap();
        (iterations / 20).max(1).to_string()
    })
}
