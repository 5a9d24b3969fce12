use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;

use super::output::Output;
use super::session::{prepare_workdir, Session, EVERY_UNIT, NOISE_EVERY};
use super::{CalibrationArgs, GlobalArgs};
use crate::calibration::BurnCalibration;
use crate::error::UsageError;
use crate::model::index::scoring::Pass;
use crate::model::index::IndexResult;
use crate::model::interactive::InteractiveResult;
use crate::model::interactive::{Bench, Load};
use crate::model::noise::{NoiseResult, NoiseRun};
use crate::model::sched::SchedResult;
use crate::model::sched::SchedRun;
use crate::model::{RunResult, SuiteResult};
use crate::platform::files;
use crate::render;
use crate::standard::{self, HostFacts, PartPlan, Profile, StandardObserver, StandardPlan};
use crate::suites::index::registry::TestInfo;
use crate::suites::index::IndexObserver;
use crate::suites::interactive::InteractiveObserver;
use crate::suites::noise::NoiseObserver;
use crate::suites::sched::SchedObserver;

#[derive(Debug, Args)]
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
    pub calibration: CalibrationArgs,
}

pub fn exec(args: &RunArgs, global: &GlobalArgs, argv: Vec<String>) -> Result<i32> {
    let environment = crate::model::Environment::collect();
    let workdir = args.workdir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !workdir.is_dir() {
        return Err(UsageError::new(format!(
            "--workdir {} is not a directory",
            workdir.display()
        ))
        .into());
    }
    let cpus = environment.usable_cpus();
    let host = HostFacts {
        usable_cpus: cpus,
        memory_total_bytes: environment.memory_total_bytes,
        memory_available_bytes: environment.memory_available_bytes,
        swap_bytes: environment.swap_total_bytes,
        free_disk_bytes: files::free_bytes(&workdir).ok(),
    };
    let plan = StandardPlan::new(
        args.profile,
        &host,
        args.calibration.options(global)?,
        &workdir,
    )?;
    if args.dry_run {
        let out = Output::new(false, false);
        out.out(&render::standard::plan(
            plan.profile.name(),
            cpus,
            &plan.parts(),
            &plan.skipped,
        ));
        return Ok(out.stdout_error().map_or(0, |_| 1));
    }
    let exe = std::env::current_exe().context("finding the hostbench binary for its workers")?;
    let mut session = Session::start(global, argv, environment)?;
    // The workdir is checked before the first part: a bad one must not cost the noise part.
    prepare_workdir(&workdir, &session.out)?;
    session.check_noise();
    let stop = session.stop.clone();
    let parts = plan.parts();
    let mut console = Console {
        out: session.out.clone(),
        session: &mut session,
        done: Vec::new(),
        live: global.shows_progress(),
        parts: parts.clone(),
        part: 0,
        part_started: Instant::now(),
        notes: Vec::new(),
    };
    console.say(&render::standard::plan(
        plan.profile.name(),
        cpus,
        &parts,
        &plan.skipped,
    ));

    let outcome = standard::run(&plan, &exe, stop.flag(), &mut console);
    console.clear();
    let notes = std::mem::take(&mut console.notes);
    let cut_short = outcome.failure.is_some() || outcome.suites.len() < parts.len();
    let done = session.finish(outcome.suites, cut_short);
    let mut skipped = plan.skipped.clone();
    skipped.extend(skipped_in(&done.result));
    skipped.extend(notes);
    if global.json {
        done.print_json();
    } else {
        done.out.out(&render::standard::summary(
            &done.result,
            done.id(),
            done.store_path(),
            &skipped,
            outcome.failure.as_deref(),
        ));
    }
    // The summary says where a stored result went; a failed store is said on its own.
    if done.id().is_none() {
        done.say_where_stored();
    }
    if let Some(f) = &outcome.failure {
        done.out.err(&format!("hostbench: error: {f}\n"));
    }
    let failed_tests = failed_in(&done.result);
    if !failed_tests.is_empty() {
        done.out.err(&format!(
            "hostbench: error: failed: {}; the result is marked incomplete\n",
            failed_tests.join("; ")
        ));
    }
    Ok(done.exit_code(outcome.failure.is_some() || !failed_tests.is_empty()))
}

/// The index tests that failed, with their errors.
fn failed_in(result: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for suite in &result.suites {
        if let SuiteResult::Index(i) = suite {
            for p in &i.passes {
                out.extend(p.failed.iter().map(|s| {
                    format!(
                        "index: {} ({} cop{}): {}",
                        s.name,
                        p.copies,
                        if p.copies == 1 { "y" } else { "ies" },
                        s.reason
                    )
                }));
            }
        }
    }
    out
}

/// What the suites left out on this host, from their results.
fn skipped_in(result: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for suite in &result.suites {
        match suite {
            SuiteResult::Index(i) => {
                if let Some(p) = i.passes.first() {
                    out.extend(
                        p.skipped
                            .iter()
                            .map(|s| format!("index: {} ({})", s.name, s.reason)),
                    );
                }
            }
            SuiteResult::Interactive(i) => out.extend(
                i.skipped
                    .iter()
                    .map(|s| format!("interactive: the {} load ({})", s.load.name(), s.reason)),
            ),
            _ => {}
        }
    }
    out
}

/// Shows the plan, each part's start, and on a terminal one live line of progress.
struct Console<'s> {
    out: Output,
    /// Stores the run as it goes.
    session: &'s mut Session,
    /// The parts done, for those checkpoints.
    done: Vec<SuiteResult>,
    live: bool,
    parts: Vec<PartPlan>,
    part: usize,
    part_started: Instant,
    /// The suites' notes (degraded measurements), for the summary.
    notes: Vec<String>,
}

impl Console<'_> {
    fn say(&mut self, text: &str) {
        self.clear();
        self.out.chatter(text);
    }

    fn clear(&mut self) {
        if self.live {
            self.out.err("\r\x1b[K");
        }
    }

    /// Rewrites the live line: the part's status, and the time left in it and in the run.
    fn progress(&mut self, status: String) {
        if !self.live {
            return;
        }
        let estimate = self.parts[self.part].estimate_s;
        let part_left = (estimate - self.part_started.elapsed().as_secs_f64()).max(0.0);
        let later: f64 = self.parts[self.part + 1..]
            .iter()
            .map(|p| p.estimate_s)
            .sum();
        self.out.err(&format!(
            "\r\x1b[K[{}/{}] {}: {} | part about {} left, run about {} left",
            self.part + 1,
            self.parts.len(),
            self.parts[self.part].suite,
            status,
            render::standard::duration(part_left),
            render::standard::duration(part_left + later)
        ));
    }
}

impl Console<'_> {
    /// Stores the parts done and the part in progress.
    fn checkpoint(&mut self, every: Duration, partial: SuiteResult) {
        let done = &self.done;
        self.session.checkpoint(every, || {
            let mut suites = done.clone();
            suites.push(partial);
            suites
        });
    }
}

impl StandardObserver for Console<'_> {
    fn part_begins(&mut self, index: usize, part: &PartPlan) {
        self.part = index;
        self.part_started = Instant::now();
        let line = render::standard::part_line(index, self.parts.len(), part);
        self.say(&format!("{line}\n"));
        self.progress("starting".into());
    }

    fn part_done(&mut self, _index: usize, result: &SuiteResult) {
        let took = render::standard::duration(self.part_started.elapsed().as_secs_f64());
        self.say(&format!(
            "      done in {took}: {}\n",
            render::headline::suite(result)
        ));
        self.done.push(result.clone());
        let done = &self.done;
        self.session.checkpoint(EVERY_UNIT, || done.clone());
    }
}

impl NoiseObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> NoiseResult) {
        if self.session.checkpoint_due(NOISE_EVERY) {
            Console::checkpoint(self, NOISE_EVERY, SuiteResult::Noise(partial()));
        }
    }

    fn calibrating(&mut self, _settings: &crate::model::noise::NoiseSettings) {
        self.progress("calibrating".into());
    }

    fn run_done(
        &mut self,
        index: usize,
        planned: u64,
        _run: &NoiseRun,
        _previous: Option<&NoiseRun>,
        _fastest_ns: u64,
    ) {
        self.progress(format!("run {}/{planned}", index + 1));
    }
}

impl IndexObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> IndexResult) {
        Console::checkpoint(self, EVERY_UNIT, SuiteResult::Index(partial()));
    }

    fn test_begins(&mut self, t: &TestInfo, copies: usize, iterations: usize) {
        self.progress(format!("{copies} x {} (0/{iterations})", t.name));
    }

    fn iteration_done(&mut self, t: &TestInfo, index: usize, _pass: &Pass) {
        self.progress(format!("{} iteration {} done", t.name, index + 1));
    }
}

impl InteractiveObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> InteractiveResult) {
        Console::checkpoint(self, EVERY_UNIT, SuiteResult::Interactive(partial()));
    }

    fn calibrated(&mut self, _calibration: &BurnCalibration, cache_warning: Option<&str>) {
        if let Some(w) = cache_warning {
            self.notes.push(format!("calibration cache: {w}"));
        }
    }

    fn note(&mut self, note: &str) {
        self.notes.push(format!("interactive: {note}"));
    }

    fn pair_begins(&mut self, bench: Bench, load: Load, index: usize, total: usize) {
        self.progress(format!(
            "{} under {} ({}/{total})",
            bench.name(),
            load.name(),
            index + 1
        ));
    }
}

impl SchedObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> SchedResult) {
        Console::checkpoint(self, EVERY_UNIT, SuiteResult::Sched(partial()));
    }

    fn run_done(&mut self, threads: usize, active_sets: usize, index: usize, run: &SchedRun) {
        self.progress(format!(
            "{threads} threads, {active_sets} active sets, run {}: {:.2} us/round",
            index + 1,
            run.us_per_round
        ));
    }
}
