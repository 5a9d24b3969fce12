//! The C versions of the tests UnixBench compiles with the host's compiler (`assets/native.c`):
//! "these tests are all recompiled using your host system's compiler" (UnixBench's usage
//! document), with its Makefile's flags, one program per test. hostbench builds them on first
//! use into its cache directory and again only when the compiler or the sources change; where
//! there is no C compiler, or with `--builtin-cpu-tests`, the built-in Rust versions run, and
//! the report says which.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::registry::{ArithKind, Program};
use crate::model::index::NativeBuild;

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

/// Builds the program with the host's `cc` into `cache_dir` (reusing an earlier build of the
/// same source by the same compiler), or says why it cannot.
pub fn build(cache_dir: &Path) -> Result<NativeBuild, String> {
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
    let dir = cache_dir
        .join("native")
        .join(format!("{:016x}", h.finish()));
    let flags = FLAGS.join(" ");
    let build = |built_now| NativeBuild {
        compiler: cc.display().to_string(),
        version: version.clone(),
        flags: flags.clone(),
        path: dir.clone(),
        built_now,
    };
    if PROGRAMS.iter().all(|(name, _)| dir.join(name).is_file()) {
        return Ok(build(false));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for (name, text) in SOURCES {
        let file = dir.join(name);
        std::fs::write(&file, text).map_err(|e| format!("writing {}: {e}", file.display()))?;
    }
    for (name, rest) in PROGRAMS {
        // Built under a name of its own and renamed: two runs building at once both succeed.
        let tmp = format!("{name}.{}", std::process::id());
        let out = Command::new(&cc)
            .args(FLAGS)
            .arg(format!("-DHB_{name}"))
            .args(["-o", &tmp, "native.c"])
            .args(rest)
            .current_dir(&dir)
            .output()
            .map_err(|e| format!("running {}: {e}", cc.display()))?;
        if !out.status.success() {
            let _ = std::fs::remove_file(dir.join(&tmp));
            let why = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "{} {flags} for {name} failed: {}",
                cc.display(),
                why.lines().next().unwrap_or("").trim()
            ));
        }
        std::fs::rename(dir.join(&tmp), dir.join(name))
            .map_err(|e| format!("storing the build: {e}"))?;
    }
    Ok(build(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_once_and_reuses_the_build() {
        let cache = tempfile::tempdir().unwrap();
        let Ok(first) = build(cache.path()) else {
            eprintln!("skipped: no C compiler here");
            return;
        };
        assert!(first.built_now);
        for program in [Program::Dhrystone, Program::Whetstone, Program::Execl] {
            assert!(program_path(&first.path, program).unwrap().is_file());
        }
        assert_eq!(first.flags, "-O3 -ffast-math -march=native -mtune=native");
        let second = build(cache.path()).unwrap();
        assert!(!second.built_now);
        assert_eq!(second.path, first.path);
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
