//! UnixBench's looper: run a host command over and over for the duration and count the runs
//! that completed (loops per minute). The shell, C, dc and grep tests use it, with the script
//! and data files hostbench writes into the run's directory ([`write_assets`]).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::platform::clock::monotonic_ns;

const MULTI_SH: &str = include_str!("../assets/multi.sh");
const CCTEST_C: &str = include_str!("../assets/cctest.c");
/// dc: 99 digits of precision, the square root of 2, print; end of input ends dc (GNU dc exits
/// with status 1 on `q`).
const DC_DAT: &str = "99k\n2v\np\n";

/// Writes the shell script and the data files the looper tests read into `dir`.
pub fn write_assets(dir: &Path) -> Result<()> {
    let put = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).with_context(|| format!("writing {name}"))
    };
    put("multi.sh", MULTI_SH)?;
    put("cctest.c", CCTEST_C)?;
    put("dc.dat", DC_DAT)?;
    put("sort.src", &sort_source())?;
    put("large.txt", &large_text())?;
    super::small::write_program(dir)?;
    Ok(())
}

const WORDS: &[&str] = &[
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "kernel",
    "scheduler",
    "latency",
    "pipe",
    "process",
    "thread",
    "memory",
    "cache",
    "disk",
    "benchmark",
    "index",
    "baseline",
    "gimp",
    "shell",
    "script",
    "compile",
    "signal",
    "buffer",
];

/// A deterministic pseudo-random text: `lines` lines of 6 to 13 words.
fn text(lines: usize, seed: u64) -> String {
    let mut state = seed;
    let mut out = String::new();
    for _ in 0..lines {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let words = 6 + (state >> 60) as usize % 8;
        for w in 0..words {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if w > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[(state >> 33) as usize % WORDS.len()]);
        }
        out.push('\n');
    }
    out
}

/// The file the shell pipeline sorts (a few hundred lines, like UnixBench's sort.src).
pub fn sort_source() -> String {
    text(500, 1)
}

/// The file grep searches: about 2 MB.
pub fn large_text() -> String {
    text(30_000, 2)
}

/// What each looper test runs, in the test directory.
pub enum Job {
    Shell(usize),
    Compile,
    Dc,
    Grep,
}

impl Job {
    fn command(&self, dir: &Path) -> Command {
        let mut c = match self {
            Job::Shell(n) => {
                let mut c = Command::new("sh");
                c.arg("multi.sh").arg(n.to_string());
                c
            }
            Job::Compile => {
                let mut c = Command::new("cc");
                c.arg("cctest.c")
                    .arg("-o")
                    .arg(format!("cctest.{}", std::process::id()));
                c
            }
            Job::Dc => {
                let mut c = Command::new("dc");
                c.arg("dc.dat");
                c
            }
            Job::Grep => {
                let mut c = Command::new("grep");
                c.arg("-c").arg("gimp").arg("large.txt");
                c
            }
        };
        c.current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    /// The host programs the job needs.
    pub fn programs(&self) -> &'static [&'static str] {
        match self {
            Job::Shell(_) => &["sh", "sort", "od", "grep", "tee", "wc"],
            Job::Compile => &["cc"],
            Job::Dc => &["dc"],
            Job::Grep => &["grep"],
        }
    }
}

/// Runs `job` until `deadline_ns`; counts the runs completed before it.
pub fn looper(job: &Job, dir: &Path, deadline_ns: u64) -> Result<u64> {
    let mut n = 0;
    while monotonic_ns() < deadline_ns {
        let out = job
            .command(dir)
            .output()
            .with_context(|| format!("running {:?}", job.programs()[0]))?;
        if !out.status.success() {
            bail!(
                "{} failed: {}",
                job.programs()[0],
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        if monotonic_ns() <= deadline_ns {
            n += 1;
        }
    }
    if let Job::Compile = job {
        let _ = std::fs::remove_file(dir.join(format!("cctest.{}", std::process::id())));
    }
    Ok(n)
}

/// The first of `programs` not found on PATH.
pub fn missing_program(programs: &[&str]) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    programs
        .iter()
        .find(|p| !std::env::split_paths(&path).any(|d| d.join(p).is_file()))
        .map(|p| p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_and_a_shell_loop() {
        let dir = tempfile::tempdir().unwrap();
        write_assets(dir.path()).unwrap();
        assert!(large_text().len() > 1_000_000);
        assert!(large_text().contains("gimp") && sort_source().contains("the"));
        let n = looper(&Job::Shell(2), dir.path(), monotonic_ns() + 300_000_000).unwrap();
        assert!(n > 0);
        // The script cleaned up after itself: the five assets and the small program remain.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 6);
        assert_eq!(
            missing_program(&["sh", "no-such-program-hb"]),
            Some("no-such-program-hb".into())
        );
    }
}
