//! The test programs, written in Rust for hostbench (the shell, C, dc and grep tests run host
//! programs on files hostbench writes). Each copy of a test runs in its own worker process.

mod arith;
mod dhrystone;
mod fs;
pub mod looper;
mod os;
mod whetstone;

use std::path::Path;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::registry::Program;
use super::scoring::CopyReport;
use crate::platform::clock::monotonic_ns;

/// The host programs a test needs (empty for the tests written in Rust).
pub fn needs(program: Program) -> &'static [&'static str] {
    match job(program) {
        Some(j) => j.programs(),
        None if program == Program::SysExec => &["true"],
        None => &[],
    }
}

fn job(program: Program) -> Option<looper::Job> {
    Some(match program {
        Program::Shell { concurrent } => looper::Job::Shell(concurrent),
        Program::Compile => looper::Job::Compile,
        Program::Dc => looper::Job::Dc,
        Program::Grep => looper::Job::Grep,
        _ => return None,
    })
}

/// Runs one copy of `program` for `seconds` in `dir`. Execl is not run here: it replaces the
/// process (see [`ExeclStep`]).
pub fn run(program: Program, seconds: f64, dir: &Path) -> Result<CopyReport> {
    let start = monotonic_ns();
    let deadline = start + (seconds * 1e9) as u64;
    let elapsed = || (monotonic_ns() - start) as f64 / 1e9;
    let counted = |count: u64, timebase: f64| CopyReport {
        count: count as f64,
        timebase,
        time_s: elapsed(),
    };
    Ok(match program {
        Program::Dhrystone => {
            let mut d = dhrystone::Dhrystone::new();
            let mut loops = 0;
            while monotonic_ns() < deadline {
                d.run(10_000);
                loops += 10_000;
            }
            d.check().map_err(anyhow::Error::msg)?;
            counted(loops, 1.0)
        }
        Program::Whetstone => {
            let w = whetstone::run(seconds);
            if w.check == 0.0 || !w.check.is_finite() {
                bail!("Whetstone: wrong answer (check value {})", w.check);
            }
            CopyReport {
                count: w.mwips,
                timebase: 0.0,
                time_s: w.seconds,
            }
        }
        Program::Syscall => counted(os::syscall_mix(deadline)?, 1.0),
        Program::SysExec => counted(os::sysexec(deadline)?, 1.0),
        Program::Pipe => counted(os::pipe_throughput(deadline)?, 1.0),
        Program::Context1 => counted(os::context1(deadline)?, 1.0),
        Program::Spawn => counted(os::spawn(deadline)?, 1.0),
        Program::FileWrite { bufsize, maxblocks } => fs_report(fs::fstime(
            fs::Mode::Write,
            bufsize,
            maxblocks,
            seconds,
            dir,
        )?),
        Program::FileRead { bufsize, maxblocks } => fs_report(fs::fstime(
            fs::Mode::Read,
            bufsize,
            maxblocks,
            seconds,
            dir,
        )?),
        Program::FileCopy { bufsize, maxblocks } => fs_report(fs::fstime(
            fs::Mode::Copy,
            bufsize,
            maxblocks,
            seconds,
            dir,
        )?),
        Program::Arith { kind } => {
            let mut result = 0;
            let mut loops = 0;
            while monotonic_ns() < deadline {
                result = arith::arith(kind, 10_000, result);
                loops += 10_000;
            }
            std::hint::black_box(result);
            counted(loops, 1.0)
        }
        Program::Hanoi => {
            let mut loops = 0;
            while monotonic_ns() < deadline {
                if arith::hanoi(10) != 1023 {
                    bail!("Tower of Hanoi: wrong number of moves");
                }
                loops += 1;
            }
            counted(loops, 1.0)
        }
        Program::Shell { .. } | Program::Compile | Program::Dc | Program::Grep => {
            let j = job(program).expect("a looper test");
            counted(looper::looper(&j, dir, deadline)?, 60.0)
        }
        Program::Execl => bail!("execl runs as an exec chain, not in place"),
        Program::Graphics => bail!("the graphics tests are not available yet"),
    })
}

fn fs_report(r: fs::Rate) -> CopyReport {
    CopyReport {
        count: r.kbps,
        timebase: 0.0,
        time_s: r.seconds,
    }
}

/// One link of execl's chain: the process execs hostbench again with the count raised, until
/// the deadline, and the last link reports (UnixBench's execl.c does the same with its own
/// binary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExeclStep {
    pub start_ns: u64,
    pub deadline_ns: u64,
    pub count: u64,
}

/// The argument that marks a link of the execl chain. The chain bypasses the command-line
/// parser and JSON: each link's start-up is what the test measures, so it is kept to reading
/// three numbers.
pub const EXECL_ARG: &str = "__execl";

impl ExeclStep {
    /// The link's arguments: `__execl START_NS DEADLINE_NS COUNT`.
    pub fn to_args(&self) -> [String; 4] {
        [
            EXECL_ARG.into(),
            self.start_ns.to_string(),
            self.deadline_ns.to_string(),
            self.count.to_string(),
        ]
    }

    /// Parses what [`to_args`](Self::to_args) wrote (after the program name).
    pub fn from_args(args: &[String]) -> Option<ExeclStep> {
        match args {
            [tag, start, deadline, count] if tag == EXECL_ARG => Some(ExeclStep {
                start_ns: start.parse().ok()?,
                deadline_ns: deadline.parse().ok()?,
                count: count.parse().ok()?,
            }),
            _ => None,
        }
    }

    /// The report when the chain has run out of time, or None to go on.
    pub fn report(&self) -> Option<CopyReport> {
        let now = monotonic_ns();
        (now >= self.deadline_ns).then(|| CopyReport {
            count: self.count as f64,
            timebase: 1.0,
            time_s: (now - self.start_ns) as f64 / 1e9,
        })
    }

    pub fn next(&self) -> ExeclStep {
        ExeclStep {
            count: self.count + 1,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execl_links_round_trip_through_argv() {
        let step = ExeclStep {
            start_ns: 5,
            deadline_ns: 9,
            count: 3,
        };
        let args = step.to_args();
        assert_eq!(ExeclStep::from_args(&args), Some(step.clone()));
        assert_eq!(step.next().count, 4);
        assert!(
            ExeclStep::from_args(&["__execl".to_string(), "x".into(), "1".into(), "2".into()])
                .is_none()
        );
        // A chain whose deadline has passed reports.
        assert!(step.report().is_some());
    }
}
