//! The test programs, written in Rust for hostbench (the shell, C, dc and grep tests run host
//! programs on files hostbench writes). Each copy of a test runs in its own worker process.

mod arith;
mod dhrystone;
mod fs;
pub mod graphics;
pub mod inputs;
pub mod looper;
mod os;
pub mod small;
mod whetstone;

use std::path::Path;

use anyhow::{bail, Result};

use super::registry::{Program, TestInfo};
use crate::model::index::scoring::CopyReport;
use crate::platform::clock::monotonic_ns;

/// The host programs a test needs (empty for the tests written in Rust).
pub fn needs(program: Program) -> &'static [&'static str] {
    match job(program) {
        Some(j) => j.programs(),
        None if program == Program::SysExec => &["true"],
        None if program == Program::X11perf => &["x11perf"],
        None if program == Program::Gears => &["glxgears"],
        None => &[],
    }
}

pub(crate) fn job(program: Program) -> Option<looper::Job> {
    Some(match program {
        Program::Shell { concurrent } => looper::Job::Shell(concurrent),
        Program::Compile => looper::Job::Compile,
        Program::Dc => looper::Job::Dc,
        Program::Grep => looper::Job::Grep,
        _ => return None,
    })
}

/// Runs one copy of `program` for `seconds` in `dir`. Execl and spawn are not run here: the
/// copy replaces itself with the small program (see [`small`]).
/// Graphics tests draw on `display`.
pub fn run(test: &TestInfo, seconds: f64, dir: &Path, display: Option<&str>) -> Result<CopyReport> {
    let program = test.program;
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
        Program::Pipe => counted(os::pipe_throughput(deadline)?, 1.0),
        Program::Context1 => counted(os::context1(deadline)?, 1.0),
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
        Program::Shell { .. }
        | Program::Compile
        | Program::Dc
        | Program::Grep
        | Program::Execl
        | Program::Spawn
        | Program::SysExec => bail!("{program:?} runs in the small program"),
        Program::X11perf | Program::Gears => {
            let Some(display) = display else {
                bail!("no display for a graphics test");
            };
            if program == Program::Gears {
                graphics::run_gears(seconds, display)?
            } else {
                graphics::run_x11perf(test.name, seconds, display)?
            }
        }
    })
}

fn fs_report(r: fs::Rate) -> CopyReport {
    CopyReport {
        count: r.kbps,
        timebase: 0.0,
        time_s: r.seconds,
    }
}
