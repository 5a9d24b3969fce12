//! The host commands of UnixBench's looper tests (shell, C, dc, grep) and the files they read,
//! which hostbench writes into the run's directory ([`write_assets`]). The loop itself — run
//! the command over and over for the duration, count the runs that completed, per minute — is
//! the small program's `looper` mode, as UnixBench's is its small looper.c.

use std::io::Write;

use anyhow::{Context, Result};

use crate::platform::dir::Dir;

const MULTI_SH: &str = include_str!("../assets/multi.sh");
const TST_SH: &str = include_str!("../assets/tst.sh");
const CCTEST_C: &str = include_str!("../assets/cctest.c");
/// dc: 99 digits of precision, the square root of 2, print; end of input ends dc (GNU dc exits
/// with status 1 on `q`).
const DC_DAT: &str = "99k\n2v\np\n";

/// Writes the shell script and the data files the looper tests read into the held directory
/// `dir` (created new, mode 0644: nothing already there is written through).
pub fn write_assets(dir: &Dir) -> Result<()> {
    let put = |name: &str, text: &str| {
        dir.create_new(name, 0o644)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .with_context(|| format!("writing {name}"))
    };
    put("multi.sh", MULTI_SH)?;
    put("tst.sh", TST_SH)?;
    put("cctest.c", CCTEST_C)?;
    put("dc.dat", DC_DAT)?;
    put("sort.src", &super::inputs::sort_src())?;
    put("large.txt", &super::inputs::large_txt())?;
    super::small::write_program(dir)?;
    Ok(())
}

/// What each looper test runs, in the test directory.
pub enum Job {
    Shell(usize),
    Compile,
    Dc,
    Grep,
}

impl Job {
    /// The command line the small program's looper runs in the test directory, for the copy
    /// with process id `pid` (which names the C test's output file).
    pub fn argv(&self, pid: u32) -> Vec<String> {
        match self {
            // UnixBench's "looper 60 multi.sh N": N copies of tst.sh on sort.src, at once.
            Job::Shell(n) => vec!["sh".into(), "multi.sh".into(), n.to_string()],
            Job::Compile => vec![
                "cc".into(),
                "cctest.c".into(),
                "-o".into(),
                format!("cctest.{pid}"),
            ],
            Job::Dc => vec!["dc".into(), "dc.dat".into()],
            Job::Grep => vec![
                "grep".into(),
                "-c".into(),
                "gimp".into(),
                "large.txt".into(),
            ],
        }
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

/// The first of `programs` not found on PATH.
pub fn missing_program(programs: &[&str]) -> Option<String> {
    programs
        .iter()
        .find(|p| crate::platform::files::on_path(p).is_none())
        .map(|p| p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_are_unixbenchs_size_and_the_per_copy_script_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let held = Dir::open(dir.path(), crate::platform::dir::Trust::Own).unwrap();
        write_assets(&held).unwrap();
        for (name, shape) in [
            ("sort.src", super::super::inputs::SORT_SRC),
            ("large.txt", super::super::inputs::LARGE_TXT),
        ] {
            let len = std::fs::metadata(dir.path().join(name)).unwrap().len();
            assert_eq!(len, shape.bytes as u64, "{name}");
        }
        // An `rm` on PATH that notes what it removes, then removes it.
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let rm = bin.join("rm");
        std::fs::write(
            &rm,
            "#!/bin/sh\necho \"$@\" >> removed.log\nexec /bin/rm \"$@\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rm, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let status = std::process::Command::new("sh")
            .args(["multi.sh", "2"])
            .current_dir(dir.path())
            .env("PATH", path)
            .status()
            .unwrap();
        assert!(status.success());
        // Two copies, each made and removed sort.PID, grep.PID, od.PID and wc.PID.
        let log = std::fs::read_to_string(dir.path().join("removed.log")).unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 2, "{log}");
        for line in lines {
            let names: Vec<&str> = line.split_whitespace().collect();
            let pid = names[0].strip_prefix("sort.").unwrap();
            assert_eq!(
                names,
                [
                    format!("sort.{pid}"),
                    format!("grep.{pid}"),
                    format!("od.{pid}"),
                    format!("wc.{pid}")
                ]
            );
            for n in names {
                assert!(!dir.path().join(n).exists(), "{n} was left");
            }
        }
        assert_eq!(
            missing_program(&["sh", "no-such-program-hb"]),
            Some("no-such-program-hb".into())
        );
    }
}
