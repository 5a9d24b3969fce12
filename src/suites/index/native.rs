//! The C versions of the tests UnixBench compiles with the host's compiler (`assets/native.c`):
//! "these tests are all recompiled using your host system's compiler" (UnixBench's usage
//! document), with its Makefile's flags, one program per test. hostbench builds them on first
//! use into its cache directory and again only when the compiler or the sources change; where
//! there is no C compiler, or with `--builtin-cpu-tests`, the built-in Rust versions run, and
//! the report says which.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::registry::{ArithKind, Program};
use crate::model::index::NativeBuild;
use crate::platform::files;

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
const PROGRAMS: [(&str, &[&str]); 6] = [
    ("dhry2reg", &["dhry_2.c"]),
    ("whetstone", &["-lm"]),
    ("arith", &[]),
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
            let k = match kind {
                ArithKind::Overhead => "overhead",
                ArithKind::Short => "short",
                ArithKind::Int => "int",
                ArithKind::Long => "long",
                ArithKind::Float => "float",
                ArithKind::Double => "double",
            };
            vec!["arith".into(), k.into(), d]
        }
        Program::Hanoi => vec!["hanoi".into(), d],
        Program::Spawn => vec!["spawn".into(), d],
        Program::Execl => vec!["execl".into(), start_ns.to_string(), d, "0".into()],
        _ => return None,
    })
}

/// The program that runs `program`'s copies in the build directory `dir`.
pub fn program_path(dir: &Path, program: Program) -> Option<PathBuf> {
    let args = arguments(program, 1.0, 0, 0)?;
    Some(dir.join(&args[0]))
}

/// Whether `program` has a C version here.
pub fn has_native(program: Program) -> bool {
    arguments(program, 1.0, 0, 0).is_some()
}

/// Builds the programs with the host's `cc` into `cache_dir` (reusing an earlier build of the
/// same source by the same compiler), or says why it cannot. The cache is trusted only where
/// the programs and every directory from them up to `cache_dir` are this user's and writable by
/// no one else (`platform::files::untrusted`): root must never run a program another user
/// planted in a shared cache. Otherwise they are built afresh in `private` (the run's private
/// directory) and the build says why.
pub fn build(cache_dir: &Path, private: &Path) -> Result<NativeBuild, String> {
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
    let cached = cache_dir
        .join("native")
        .join(format!("{:016x}", h.finish()));
    let flags = FLAGS.join(" ");
    let build = |path: &Path, built_now, untrusted_cache| NativeBuild {
        compiler: cc.display().to_string(),
        version: version.clone(),
        flags: flags.clone(),
        path: path.to_path_buf(),
        built_now,
        untrusted_cache,
    };
    let trusted = |p: &Path| files::untrusted(cache_dir, p);
    let refused = match files::create_dirs(&cached, 0o700) {
        Err(e) => Some(format!("{e:#}")),
        Ok(()) => trusted(&cached),
    };
    // The programs are run by the path that was checked, with no link on the way that
    // someone could turn elsewhere after the check.
    let cached = std::fs::canonicalize(&cached).unwrap_or(cached);
    let Some(why) = refused else {
        let reusable = PROGRAMS.iter().all(|(name, _)| {
            let p = cached.join(name);
            std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) && trusted(&p).is_none()
        });
        if reusable {
            return Ok(build(&cached, false, None));
        }
        compile(&cc, &cached)?;
        return Ok(build(&cached, true, None));
    };
    let dir = private.join("native");
    files::create_dirs(&dir, 0o700).map_err(|e| format!("{e:#}"))?;
    compile(&cc, &dir)?;
    Ok(build(&dir, true, Some(why)))
}

/// Compiles every program into `dir` (a directory of this user's that no one else can write):
/// the sources mode 0644 and the programs 0755 whatever the umask.
fn compile(cc: &Path, dir: &Path) -> Result<(), String> {
    let flags = FLAGS.join(" ");
    for (name, text) in SOURCES {
        files::write_replacing(&dir.join(name), text.as_bytes()).map_err(|e| format!("{e:#}"))?;
    }
    for (name, rest) in PROGRAMS {
        // Built under a name of its own and renamed: two runs building at once both succeed.
        let tmp = dir.join(format!("{name}.{}", std::process::id()));
        let out = Command::new(cc)
            .args(FLAGS)
            .arg(format!("-DHB_{name}"))
            .arg("-o")
            .arg(&tmp)
            .arg("native.c")
            .args(rest)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("running {}: {e}", cc.display()))?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&tmp);
            let why = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "{} {flags} for {name} failed: {}",
                cc.display(),
                why.lines().next().unwrap_or("").trim()
            ));
        }
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
            .and_then(|_| std::fs::rename(&tmp, dir.join(name)))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("storing the build: {e}")
            })?;
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
        let Ok(first) = build(cache.path(), private.path()) else {
            eprintln!("skipped: no C compiler here");
            return;
        };
        assert!(first.built_now);
        for program in [Program::Dhrystone, Program::Whetstone, Program::Execl] {
            assert!(program_path(&first.path, program).unwrap().is_file());
        }
        assert_eq!(first.flags, "-O3 -ffast-math -march=native -mtune=native");
        let second = build(cache.path(), private.path()).unwrap();
        assert!(!second.built_now);
        assert_eq!(second.path, first.path);
        assert_eq!(second.untrusted_cache, None);
        for (name, _) in PROGRAMS {
            let mode = std::fs::metadata(first.path.join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755, "{name}");
        }
        assert_eq!(std::fs::read_dir(private.path()).unwrap().count(), 0);

        // A build directory others can write is not trusted: built afresh in the private one.
        std::fs::set_permissions(&first.path, std::fs::Permissions::from_mode(0o777)).unwrap();
        let third = build(cache.path(), private.path()).unwrap();
        assert!(third.built_now);
        assert_eq!(third.path, private.path().join("native"));
        let why = third.untrusted_cache.unwrap();
        assert!(why.contains("writable by other users (mode 0777)"), "{why}");
        assert!(program_path(&third.path, Program::Dhrystone)
            .unwrap()
            .is_file());
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
