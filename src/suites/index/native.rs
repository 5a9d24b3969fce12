//! The C versions of the tests UnixBench compiles with the host's compiler (`assets/native.c`):
//! "these tests are all recompiled using your host system's compiler" (UnixBench's usage
//! document), with its Makefile's flags, one program per test. hostbench builds them on first
//! use into its cache directory and again only when the compiler or the sources change; where
//! there is no C compiler, or with `--builtin-cpu-tests`, the built-in Rust versions run, and
//! the report says which.

use std::collections::hash_map::DefaultHasher;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::registry::{ArithKind, Program};
use crate::model::index::NativeBuild;
use crate::platform::dir::{Dir, Trust};

/// The program's files, written into the build directory: Dhrystone's second file is a
/// translation unit of its own, as UnixBench compiles dhry_2.c apart from dhry_1.c.
const SOURCES: [(&str, &str); 3] = [
    ("native.c", include_str!("assets/native.c")),
    ("dhry_2.c", include_str!("assets/dhry_2.c")),
    ("dhry.h", include_str!("assets/dhry.h")),
];

/// UnixBench's Makefile: `OPTON = -O3 -ffast-math` and, for the host it is built on,
/// `-march=native -mtune=native`.
pub const FLAGS: [&str; 4] = ["-O3", "-ffast-math", "-march=native", "-mtune=native"];

/// The programs, one per test as UnixBench builds them: the name (also `-DHB_NAME`, which
/// selects the program's code in native.c) and what else its command line has. Only Whetstone
/// links the maths library: every library mapped makes spawn's forks and execl's execs dearer.
/// The arithmetic tests are six programs of one source, as UnixBench's Makefile builds arith.c
/// once per type (`-Ddatum=TYPE`, `-Darithoh`): what the compiler leaves of the loop depends on
/// the type it sees when it compiles, so the type cannot be an argument.
const PROGRAMS: [(&str, &[&str]); 11] = [
    ("dhry2reg", &["dhry_2.c"]),
    ("whetstone", &["-lm"]),
    ("arithoh", &["-DHB_arith", "-Darithoh"]),
    ("arith_short", &["-DHB_arith", "-Ddatum=short"]),
    ("arith_int", &["-DHB_arith", "-Ddatum=int"]),
    ("arith_long", &["-DHB_arith", "-Ddatum=long"]),
    ("arith_float", &["-DHB_arith", "-Ddatum=float"]),
    ("arith_double", &["-DHB_arith", "-Ddatum=double"]),
    ("hanoi", &[]),
    ("spawn", &[]),
    ("execl", &[]),
];

/// The program's arguments for one copy of `program` until `deadline_ns` (`seconds` for the
/// self-timing Whetstone); None for a test that has no C version here.
pub fn arguments(
    program: Program,
    seconds: f64,
    start_ns: u64,
    deadline_ns: u64,
) -> Option<Vec<String>> {
    let d = deadline_ns.to_string();
    Some(match program {
        Program::Dhrystone => vec!["dhry2reg".into(), d],
        Program::Whetstone => vec!["whetstone".into(), format!("{seconds}")],
        Program::Arith { kind } => {
            let program = match kind {
                ArithKind::Overhead => "arithoh",
                ArithKind::Short => "arith_short",
                ArithKind::Int => "arith_int",
                ArithKind::Long => "arith_long",
                ArithKind::Float => "arith_float",
                ArithKind::Double => "arith_double",
            };
            vec![program.into(), d]
        }
        Program::Hanoi => vec!["hanoi".into(), d],
        Program::Spawn => vec!["spawn".into(), d],
        Program::Execl => vec!["execl".into(), start_ns.to_string(), d, "0".into()],
        _ => return None,
    })
}

/// The program that runs `program`'s copies in the build directory `dir` (its path, for the
/// tests and the report: copies are run from descriptors, see [`Programs::open`]).
pub fn program_path(dir: &Path, program: Program) -> Option<PathBuf> {
    let args = arguments(program, 1.0, 0, 0)?;
    Some(dir.join(&args[0]))
}

/// Whether `program` has a C version here.
pub fn has_native(program: Program) -> bool {
    arguments(program, 1.0, 0, 0).is_some()
}

/// The built programs, held by their directory's descriptor.
pub struct Programs {
    /// What the result says of the build.
    pub build: NativeBuild,
    dir: Dir,
}

impl Programs {
    /// The program of `program` opened for a copy to execute (`fexecve`): opened through the
    /// held directory without following a link, and only a regular file of this user's or
    /// root's that no one else can write. None for a test that has no C version.
    pub fn open(&self, program: Program) -> Result<Option<File>, String> {
        let Some(args) = arguments(program, 1.0, 0, 0) else {
            return Ok(None);
        };
        open_program(&self.dir, &args[0]).map(Some)
    }
}

/// The program `name` in `dir`, opened; refused unless it is a regular file of this user's or
/// root's that no one else can write.
fn open_program(dir: &Dir, name: &str) -> Result<File, String> {
    let shown = dir.path().join(name);
    let file = dir
        .open_regular(name)
        .map_err(|e| format!("{}: {e}", shown.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", shown.display()))?;
    let me = crate::platform::dir::euid();
    if meta.uid() != me && meta.uid() != 0 {
        return Err(format!(
            "{} belongs to another user (uid {})",
            shown.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is writable by other users (mode {:04o})",
            shown.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(file)
}

/// Builds the programs with the host's `cc` into `cache_dir` (reusing an earlier build of the
/// same source by the same compiler), or says why it cannot. The cache is trusted only where
/// the cache directory, every directory above it, and the build directories under it are this
/// user's or root's and writable by no one else (opened once by [`Trust::Own`]'s walk, then
/// held), and each program is a regular file of this user's: root must never run a program
/// another user planted, or could swap, in a shared cache. Otherwise they are built afresh in
/// `private` (the run's private directory) and the build says why. Either way the programs are
/// then reached only through the held directory.
pub fn build(cache_dir: &Path, private: &Dir) -> Result<Programs, String> {
    let cc = crate::platform::files::on_path("cc")
        .ok_or("no C compiler: cc is not on PATH (Debian: gcc)")?;
    let out = Command::new(&cc)
        .arg("--version")
        .output()
        .map_err(|e| format!("running {} --version: {e}", cc.display()))?;
    let version = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("unknown version")
        .trim()
        .to_string();
    let mut h = DefaultHasher::new();
    (SOURCES, PROGRAMS, &version, cc.as_os_str(), FLAGS).hash(&mut h);
    let hash = format!("{:016x}", h.finish());
    let flags = FLAGS.join(" ");
    let build = |dir: Dir, built_now, untrusted_cache| Programs {
        build: NativeBuild {
            compiler: cc.display().to_string().into(),
            version: version.clone().into(),
            flags: flags.clone().into(),
            path: dir.path().display().to_string().into(),
            built_now,
            untrusted_cache,
        },
        dir,
    };
    let cached = Dir::open_or_create(cache_dir, 0o700, Trust::Own)
        .and_then(|c| c.create_or_open_dir("native", 0o700, Trust::Own))
        .and_then(|n| n.create_or_open_dir(&hash, 0o700, Trust::Own));
    let why = match cached {
        Ok(dir) => {
            let mut untrusted = None;
            let reusable = PROGRAMS
                .iter()
                .all(|(name, _)| match open_program(&dir, name) {
                    Ok(_) => true,
                    Err(why) => {
                        // Missing: built below. Another user's or open to them: never run.
                        if dir.stat_at(name).is_ok() {
                            untrusted.get_or_insert(why);
                        }
                        false
                    }
                });
            match untrusted {
                None if reusable => return Ok(build(dir, false, None)),
                None => {
                    compile(&cc, &dir)?;
                    return Ok(build(dir, true, None));
                }
                Some(why) => why,
            }
        }
        Err(e) => format!("{e:#}"),
    };
    let dir = private
        .create_dir("native", 0o700)
        .map_err(|e| format!("creating {}/native: {e}", private.path().display()))?;
    compile(&cc, &dir)?;
    Ok(build(dir, true, Some(why.into())))
}

/// Compiles every program into the held directory `dir` (this user's, writable by no one
/// else): the compiler runs in it (`fchdir` to its descriptor), the sources are mode 0644 and
/// the programs 0755 whatever the umask.
fn compile(cc: &Path, dir: &Dir) -> Result<(), String> {
    let flags = FLAGS.join(" ");
    for (name, text) in SOURCES {
        dir.write_replacing(name, text.as_bytes(), 0o644)
            .map_err(|e| format!("{e:#}"))?;
    }
    let dir_fd = dir.raw_fd();
    for (name, rest) in PROGRAMS {
        // Built under a name of its own and renamed: two runs building at once both succeed.
        let tmp = format!("{name}.{}", std::process::id());
        let mut command = Command::new(cc);
        command
            .args(FLAGS)
            .arg(format!("-DHB_{name}"))
            .arg("-o")
            .arg(&tmp)
            .arg("native.c")
            .args(rest);
        // SAFETY: fchdir is async-signal-safe; the descriptor is open in the child until exec.
        unsafe {
            command.pre_exec(move || {
                if libc::fchdir(dir_fd) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = command
            .output()
            .map_err(|e| format!("running {}: {e}", cc.display()))?;
        if !out.status.success() {
            let _ = dir.remove_file(&tmp);
            let why = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "{} {flags} for {name} failed: {}",
                cc.display(),
                why.lines().next().unwrap_or("").trim()
            ));
        }
        let stored = dir
            .open_regular(&tmp)
            .and_then(|f| f.set_permissions(std::fs::Permissions::from_mode(0o755)))
            .and_then(|_| dir.rename(&tmp, name));
        if let Err(e) = stored {
            let _ = dir.remove_file(&tmp);
            return Err(format!("storing the build: {e}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_once_and_reuses_the_build() {
        let cache = tempfile::tempdir().unwrap();
        let private = tempfile::tempdir().unwrap();
        let held = Dir::open(private.path(), Trust::Own).unwrap();
        let Ok(first) = build(cache.path(), &held).map(|p| p.build) else {
            eprintln!("skipped: no C compiler here");
            return;
        };
        assert!(first.built_now);
        let first_path = PathBuf::from(first.path.raw());
        for program in [Program::Dhrystone, Program::Whetstone, Program::Execl] {
            assert!(program_path(&first_path, program).unwrap().is_file());
        }
        assert_eq!(first.flags, "-O3 -ffast-math -march=native -mtune=native");
        let second = build(cache.path(), &held).unwrap().build;
        assert!(!second.built_now);
        assert_eq!(second.path, first.path);
        assert_eq!(second.untrusted_cache, None);
        for (name, _) in PROGRAMS {
            let mode = std::fs::metadata(first_path.join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755, "{name}");
        }
        assert_eq!(std::fs::read_dir(private.path()).unwrap().count(), 0);

        // A build directory others can write is not trusted: built afresh in the private one.
        std::fs::set_permissions(&first_path, std::fs::Permissions::from_mode(0o777)).unwrap();
        let third = build(cache.path(), &held).unwrap().build;
        assert!(third.built_now);
        assert_eq!(
            third.path,
            private.path().join("native").display().to_string()
        );
        let why = third.untrusted_cache.unwrap();
        assert!(
            why.raw().contains("writable by other users (mode 0777)"),
            "{why}"
        );
        assert!(
            program_path(Path::new(third.path.raw()), Program::Dhrystone)
                .unwrap()
                .is_file()
        );
    }

    /// One build of the programs for the tests that run them (None without a C compiler),
    /// cached in the target directory as hostbench caches them (a static's temporary directory
    /// would never be removed: statics are not dropped).
    fn built() -> Option<&'static Path> {
        static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
        BUILT
            .get_or_init(|| {
                let private = tempfile::tempdir().unwrap();
                let held = Dir::open(private.path(), Trust::Own).unwrap();
                let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-native-cache");
                Some(PathBuf::from(build(&cache, &held).ok()?.build.path.raw()))
            })
            .as_deref()
    }

    /// Runs a program of the build with `args` and reads its report: (count, time_s).
    fn report_of(mut cmd: std::process::Command) -> (f64, f64) {
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let json = text
            .lines()
            .find_map(|l| l.strip_prefix("report "))
            .unwrap_or_else(|| {
                panic!(
                    "no report: {text:?} {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        (v["count"].as_f64().unwrap(), v["time_s"].as_f64().unwrap())
    }

    fn program(dir: &Path, program: Program, seconds: f64) -> std::process::Command {
        let now = crate::platform::clock::monotonic_ns();
        let args = arguments(program, seconds, now, now + (seconds * 1e9) as u64).unwrap();
        let mut cmd = std::process::Command::new(dir.join(&args[0]));
        cmd.args(args);
        cmd
    }

    #[test]
    fn whetstone_is_timed_by_the_wall_clock_as_unixbenchs_gtoday_build() {
        let Some(dir) = built() else {
            eprintln!("skipped: no C compiler here");
            return;
        };
        let (free, _) = report_of(program(dir, Program::Whetstone, 1.0));
        // The same run, stopped three quarters of the time: the CPU time it uses is the same,
        // the wall-clock time four times as long. Timed by user CPU time (getrusage, whets.c's
        // default), its MWIPS would not move.
        let mut child = program(dir, Program::Whetstone, 1.0)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stalls = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // SAFETY: signals to our own child, which is reaped only after this ends.
                    unsafe { libc::kill(pid, libc::SIGSTOP) };
                    std::thread::sleep(std::time::Duration::from_millis(150));
                    unsafe { libc::kill(pid, libc::SIGCONT) };
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            })
        };
        let mut text = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut text).unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        stalls.join().unwrap();
        child.wait().unwrap();
        let json = text
            .lines()
            .find_map(|l| l.strip_prefix("report "))
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let stalled = v["count"].as_f64().unwrap();
        assert!(
            stalled < 0.6 * free,
            "stopped 3/4 of the time it rated {stalled:.1} MWIPS, free {free:.1}"
        );
    }

    #[test]
    fn dhrystone_arith_and_hanoi_loop_until_their_alarm_rings() {
        let Some(dir) = built() else {
            eprintln!("skipped: no C compiler here");
            return;
        };
        let kinds = [
            ArithKind::Overhead,
            ArithKind::Short,
            ArithKind::Int,
            ArithKind::Long,
            ArithKind::Float,
            ArithKind::Double,
        ];
        for p in kinds
            .map(|kind| Program::Arith { kind })
            .into_iter()
            .chain([Program::Hanoi, Program::Dhrystone])
        {
            // Dhrystone checks its globals when the alarm rings (an `error` line otherwise).
            let (count, time_s) = report_of(program(dir, p, 0.3));
            assert!(count >= 1.0, "{p:?}: {count}");
            // SIGALRM at the deadline ends the loop: the time is the duration asked for.
            assert!((0.25..1.0).contains(&time_s), "{p:?}: {time_s} s");
        }
        // The alarm lands anywhere in an iteration: the check holds wherever it does.
        for i in 0..20 {
            let (count, _) = report_of(program(dir, Program::Dhrystone, 0.01 + i as f64 * 1e-3));
            assert!(count >= 1.0);
        }
    }

    #[test]
    fn only_the_compiled_tests_have_arguments() {
        assert!(has_native(Program::Dhrystone) && has_native(Program::Spawn));
        assert!(!has_native(Program::Pipe) && !has_native(Program::Syscall));
        assert_eq!(
            arguments(Program::Execl, 1.0, 5, 9).unwrap(),
            ["execl", "5", "9", "0"]
        );
    }
}
