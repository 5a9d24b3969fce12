use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use super::args::{CalibrationArgs, MeasureArgs};
use super::console::{Console, Reporter, Terminal};
use super::measuring::{self, Ending, Measured, MeasuringCommand};
use super::output::Output;
use super::session::{prepare_workdir, Finished, Session};
use crate::error::UsageError;
use crate::model::part::PartPlan;
use crate::render;
use crate::standard::{self, Profile, StandardPlan};
use crate::suites::event::Event;
use crate::suites::HostLimits;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// How long the run takes, and how precise it is
    #[arg(long, value_name = "PROFILE", value_enum, default_value = "standard")]
    pub profile: Profile,
    /// Where the index tests' and the interactive loads' files go [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Show the plan (the parts, what each runs, about how long) and stop: nothing is measured
    /// or stored
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub explain: crate::cli::interactive::ExplainArgs,
    #[command(flatten)]
    pub calibration: CalibrationArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

pub fn exec(args: &RunArgs, argv: Vec<String>) -> Result<i32> {
    let environment = crate::model::Environment::collect();
    let workdir = args.workdir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !workdir.is_dir() {
        return Err(UsageError::new(format!(
            "--workdir {} is not a directory",
            workdir.display()
        ))
        .into());
    }
    let host = HostLimits::of(&environment, &workdir);
    let cpus = host.usable_cpus;
    let plan = StandardPlan::new(
        args.profile,
        &host,
        args.calibration.options(&args.measure)?,
        &workdir,
        args.explain.worst(),
    )?;
    if args.dry_run {
        let out = Output::new(false, false);
        let parts = plan.planned();
        out.out(&if args.measure.print.json() {
            render::standard::plan_json(plan.profile.name(), cpus, &parts, &plan.skipped) + "\n"
        } else {
            render::standard::plan(plan.profile.name(), cpus, &parts, &plan.skipped)
        });
        return Ok(out.stdout_error().map_or(0, |_| 1));
    }
    let exe = std::env::current_exe().context("finding the hostbench binary for its workers")?;
    let mut command = RunCommand {
        plan,
        exe,
        workdir,
        cpus,
        failure: None,
    };
    measuring::run(&mut command, &args.measure, argv, environment)
}

struct RunCommand {
    plan: StandardPlan,
    /// The binary the workers are started from.
    exe: PathBuf,
    workdir: PathBuf,
    cpus: usize,
    /// The part that failed, with its message.
    failure: Option<String>,
}

impl MeasuringCommand for RunCommand {
    type Reporter = RunLines;

    /// The workdir is checked before the first part: a bad one must not cost the noise part.
    fn prepare(&mut self, session: &Session) -> Result<()> {
        prepare_workdir(&self.workdir, &session.out)
    }

    fn reporter(&mut self, _session: &Session) -> Result<RunLines> {
        Ok(RunLines::new(&self.plan.planned()))
    }

    fn measure(
        &mut self,
        console: &mut Console<'_, RunLines>,
        stop: &AtomicBool,
    ) -> Result<Measured> {
        let parts = self.plan.planned();
        console.term.chatter(&render::standard::plan(
            self.plan.profile.name(),
            self.cpus,
            &parts,
            &self.plan.skipped,
        ));
        let outcome = standard::run(&self.plan, &self.exe, stop, console);
        let cut_short = outcome.failure.is_some() || outcome.suites.len() < parts.len();
        self.failure = outcome.failure;
        Ok(Measured {
            suites: outcome.suites,
            cut_short,
        })
    }

    fn ending(&self, done: &Finished, lines: RunLines) -> Ending {
        let mut skipped = self.plan.skipped.clone();
        skipped.extend(render::standard::skipped_in(&done.result));
        skipped.extend(lines.notes);
        let mut errors: Vec<String> = self.failure.iter().cloned().collect();
        let failed_tests = render::standard::failed_in(&done.result);
        if !failed_tests.is_empty() {
            errors.push(format!(
                "failed: {}; the result is marked incomplete",
                failed_tests.join("; ")
            ));
        }
        Ending {
            report: Some(render::standard::summary(
                &done.result,
                done.id(),
                done.store_location(),
                &skipped,
                self.failure.as_deref(),
                done.spread().as_ref(),
            )),
            report_says_stored: true,
            failed: !errors.is_empty(),
            errors,
            ..Ending::default()
        }
    }
}

/// `hostbench run`'s lines: one as each part starts and ends; the suites' progress, and the
/// time left, on the live line only; the suites' notes kept for the summary.
struct RunLines {
    /// Each part's suite and estimated seconds, for the time left.
    parts: Vec<(&'static str, f64)>,
    part: usize,
    part_started: Instant,
    /// The part's units done and planned, from its last progress event.
    units: (u64, u64),
    /// The suites' notes (degraded measurements), for the summary.
    notes: Vec<String>,
}

impl RunLines {
    fn new(parts: &[PartPlan]) -> Self {
        RunLines {
            parts: parts.iter().map(|p| (p.suite, p.estimate_s)).collect(),
            part: 0,
            part_started: Instant::now(),
            units: (0, 0),
            notes: Vec::new(),
        }
    }

    /// Seconds a unit of the part took so far, once one is done.
    fn unit_s(&self) -> Option<f64> {
        let (done, _) = self.units;
        (done > 0).then(|| self.part_started.elapsed().as_secs_f64() / done as f64)
    }

    /// Seconds left in the part: its units left at the pace of those done, or before the
    /// first, the plan's estimate less the time spent.
    fn part_left_s(&self) -> f64 {
        let (done, of) = self.units;
        match self.unit_s() {
            Some(each) => of.saturating_sub(done) as f64 * each,
            None => (self.parts[self.part].1 - self.part_started.elapsed().as_secs_f64()).max(0.0),
        }
    }

    /// The live line: the part's status, the time a unit takes, and the time left in the part
    /// and in the run.
    fn with_time_left(&self, status: String) -> String {
        let part_left = self.part_left_s();
        let later: f64 = self.parts[self.part + 1..].iter().map(|p| p.1).sum();
        let pace = self
            .unit_s()
            .map(|s| match s {
                s if s < 10.0 => format!(" | {s:.1} s a unit"),
                s => format!(" | {} a unit", render::standard::duration(s)),
            })
            .unwrap_or_default();
        format!(
            "[{}/{}] {}: {}{pace} | part about {} left, run about {} left",
            self.part + 1,
            self.parts.len(),
            self.parts[self.part].0,
            status,
            render::standard::duration(part_left),
            render::standard::duration(part_left + later)
        )
    }
}

impl Reporter for RunLines {
    fn on(&mut self, event: &Event<'_>, term: &Terminal) {
        match event {
            Event::PartBegins { index, plan } => {
                self.part = *index;
                self.part_started = Instant::now();
                self.units = (0, 0);
                let line = render::standard::part_line(*index, self.parts.len(), plan);
                term.chatter(&format!("{line}\n"));
            }
            Event::PartDone { result, .. } => {
                let took = render::standard::duration(self.part_started.elapsed().as_secs_f64());
                term.chatter(&format!(
                    "      done in {took}: {}\n",
                    render::headline::suite(result)
                ));
            }
            Event::Note(note) => {
                let suite = self.parts[self.part].0;
                self.notes.push(format!("{suite}: {note}"));
            }
            Event::BurnCalibrated {
                calibration,
                cache_warning,
            } => {
                let suite = self.parts[self.part].0;
                if let Some(w) = cache_warning {
                    self.notes.push(format!("calibration cache: {w}"));
                }
                for line in render::calibration::concerns(calibration) {
                    self.notes.push(format!("{suite}: {line}"));
                }
            }
            Event::Progress(p) => self.units = (p.done, p.of),
            _ => {}
        }
    }

    fn status(&self, event: &Event<'_>) -> Option<String> {
        let status = match event {
            Event::PartBegins { .. } => "starting".into(),
            Event::CalibrationCheckMissed(c) => render::calibration::check_missed(c),
            Event::Progress(p) => super::console::progress_words(p),
            _ => return None,
        };
        Some(self.with_time_left(status))
    }
}
