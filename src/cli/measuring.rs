//! The one life of a measuring command (`noise`, `index`, `interactive`, `sched`, `wakeup`,
//! `run`): open the store, prepare, check the noise, measure, store, report, exit. A command says
//! only what is its own ([`MeasuringCommand`]); the order and the failures are kept here once.

use std::sync::atomic::AtomicBool;

use anyhow::Result;

use super::args::MeasureArgs;
use super::console::{Console, Reporter};
use super::session::{Finished, Session};
use crate::model::{Environment, SuiteResult};

/// What a command measured.
pub struct Measured {
    pub suites: Vec<SuiteResult>,
    /// A failure ended the run early (a stop is known to the session): marked incomplete.
    pub cut_short: bool,
}

/// What a command prints once its result is stored.
#[derive(Default)]
pub struct Ending {
    /// The report, on standard output (not with `--json`).
    pub report: Option<String>,
    /// The report says where the result was stored (`hostbench run`'s summary): the "Stored
    /// as" line is left out; a failed store is still said.
    pub report_says_stored: bool,
    /// Warnings about the report (not with `--json`).
    pub warnings: Vec<String>,
    /// Lines after the "Stored as" line, on standard output (not with `--json` or `-q`).
    pub after: Vec<String>,
    /// Errors, each a "hostbench: error: …" line on standard error, last.
    pub errors: Vec<String>,
    /// The run failed: the exit code is 1 (or the signal's after a stop).
    pub failed: bool,
}

/// What is a measuring command's own; `run` does the rest.
pub trait MeasuringCommand {
    type Reporter: Reporter;
    /// With the store open, before the noise check: check the work directory, say notes.
    fn prepare(&mut self, _session: &Session) -> Result<()> {
        Ok(())
    }
    /// Its reporter, once prepared.
    fn reporter(&mut self, session: &Session) -> Result<Self::Reporter>;
    /// Whether it draws the live line (where `-q` and the terminal allow it).
    fn live(&self) -> bool {
        true
    }
    /// Measures, telling `console` as it goes; `stop` is set by a signal.
    fn measure(
        &mut self,
        console: &mut Console<'_, Self::Reporter>,
        stop: &AtomicBool,
    ) -> Result<Measured>;
    /// What it prints once the result is stored.
    fn ending(&self, done: &Finished, reporter: Self::Reporter) -> Ending;
}

/// Runs `command` from the store's opening to its exit code.
///
/// In order: the store opens (`Session::start`: a bad path costs no run; a server that
/// cannot be reached, the fallback store) and the run's state is recorded as running; the
/// command prepares (its work directory checked, its notes said); the noise check; the suite
/// measures, its events going to the [`Console`] (the original tool's lines, the live line,
/// checkpoints); the result is stored (or kept in a file) and the run's state ends (failed,
/// with why, where anything after the start fails); then the report or, with `--json`, the
/// result; where it was stored (left out with `-q`, a failed store always said); the
/// command's lines after it; its errors; the exit code.
pub fn run(
    command: &mut impl MeasuringCommand,
    measure: &MeasureArgs,
    argv: Vec<String>,
    environment: Environment,
) -> Result<i32> {
    let mut session = Session::start(measure, argv, environment)?;
    let print = &measure.print;
    // A command that fails before it has a result still ends its run state, saying why.
    let prepared = command.prepare(&session).and_then(|()| {
        session.check_noise();
        command.reporter(&session)
    });
    let reporter = match prepared {
        Ok(r) => r,
        Err(e) => {
            session.failed(&e);
            return Err(e);
        }
    };
    let stop = session.stop.clone();
    let live = command.live() && print.shows_progress();
    let mut console = Console::new(&mut session, reporter, live);
    let measured = command.measure(&mut console, stop.flag());
    console.term.finish();
    let reporter = console.reporter;
    let measured = match measured {
        Ok(m) => m,
        Err(e) => {
            session.failed(&e);
            return Err(e);
        }
    };
    let mut done = session.finish(measured.suites, measured.cut_short);
    let ending = command.ending(&done, reporter);
    done.record_outcome(ending.failed, &ending.errors);
    if print.json() {
        done.print_json();
    } else {
        if let Some(report) = &ending.report {
            done.out.out(report);
        }
        for w in &ending.warnings {
            done.out.warn(w);
        }
    }
    // A stored result's line is left out where the report says it, and with -q; a failed
    // store is always said.
    let stored = done.id().is_some();
    let said_by_report = ending.report_says_stored && !print.json();
    if !(stored && (said_by_report || print.quiet())) {
        done.say_where_stored();
    }
    if !print.json() && !print.quiet() {
        for line in &ending.after {
            done.out.out(line);
        }
    }
    for e in &ending.errors {
        done.out.err(&format!("hostbench: error: {e}\n"));
    }
    Ok(done.exit_code(ending.failed))
}
