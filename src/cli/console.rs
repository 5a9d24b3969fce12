//! The one observer of every measuring command: what a suite reports while it works becomes
//! the original tool's lines (on the report stream, see `Output`), a live progress line, and a
//! checkpoint of the result so far in the store (`Session::checkpoint`).
//!
//! The live line is an indicatif bar on standard error, drawn only when standard error is a
//! terminal that can rewrite a line (not `TERM=dumb`) and not `-q`. It has no steady tick: no
//! thread wakes while a suite measures; it is redrawn when the suite reports something, and
//! taken off the screen while a line is printed.

use std::fs::File;
use std::io::Write;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::Output;
use super::session::{Session, EVERY_UNIT, NOISE_EVERY};
use crate::calibration::BurnCalibration;
use crate::model::index::scoring::Pass;
use crate::model::index::{IndexResult, Skipped, TestResult};
use crate::model::interactive::{Bench, InteractiveResult, InteractiveSettings, Load, Measurement};
use crate::model::noise::{NoiseCalibration, NoiseResult, NoiseRun, NoiseSettings};
use crate::model::part::PartPlan;
use crate::model::sched::{SchedPoint, SchedResult, SchedRun, SchedSettings};
use crate::model::SuiteResult;
use crate::render;
use crate::standard::{Part, StandardObserver};
use crate::suites::index::registry::TestInfo;
use crate::suites::index::IndexObserver;
use crate::suites::interactive::InteractiveObserver;
use crate::suites::noise::NoiseObserver;
use crate::suites::sched::SchedObserver;

/// reflex's output formats (`sched -o`), named by its digits: how the console prints a sched run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// For people: a line per run and a summary per point
    #[value(name = "0")]
    People,
    /// One line per run
    #[value(name = "1")]
    Runs,
    /// "c, a, us/round" per point
    #[value(name = "2")]
    Points,
}

/// What the command shows of the suites' progress.
pub enum View {
    /// `noise`: p1bench's lines (`-v`: one per run), else the live line.
    Noise { verbose: bool },
    /// `index`: UnixBench's "1 x Dhrystone 2 ...  1 2 3" lines.
    Index { verbose: bool },
    /// `interactive`: interbench's tables as pairs complete, also into its log file.
    Interactive(Box<InteractiveView>),
    /// `sched`: reflex's lines in the chosen format.
    Sched {
        format: OutputFormat,
        settings: SchedSettings,
    },
    /// `hostbench run`: a line as each part starts and ends; the suites' progress on the live
    /// line only.
    Run(RunView),
}

pub struct InteractiveView {
    pub settings: InteractiveSettings,
    pub log: Option<File>,
    pub kernel: String,
    pub datestamp: String,
}

pub struct RunView {
    /// Each part's suite and estimated seconds, for the time left.
    pub parts: Vec<(&'static str, f64)>,
    part: usize,
    part_started: Instant,
    /// The suites' notes (degraded measurements), for the summary.
    pub notes: Vec<String>,
}

impl RunView {
    pub fn new(parts: &[PartPlan]) -> Self {
        RunView {
            parts: parts
                .iter()
                .map(|p| (p.settings.suite(), p.estimate_s))
                .collect(),
            part: 0,
            part_started: Instant::now(),
            notes: Vec::new(),
        }
    }
}

pub struct Console<'s> {
    pub out: Output,
    /// Stores the result as it goes.
    session: &'s mut Session,
    /// Hidden until the first status: a line printed before then (p1bench's "Calibrating..."
    /// ends without a newline) is not wiped by an empty bar.
    bar: ProgressBar,
    live: bool,
    pub view: View,
    /// `hostbench run`: the parts done, stored with the part in progress.
    done: Vec<SuiteResult>,
}

impl<'s> Console<'s> {
    /// `live`: draw the progress line (see `GlobalArgs::shows_progress`).
    pub fn new(session: &'s mut Session, view: View, live: bool) -> Self {
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template("{wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Console {
            out: session.out.clone(),
            session,
            bar,
            live,
            view,
            done: Vec::new(),
        }
    }

    /// Chatter (left out with `-q`), with the live line taken off the screen meanwhile.
    pub fn chatter(&self, text: &str) {
        self.bar.suspend(|| self.out.chatter(text));
    }

    /// Text of the report stream (standard output, or standard error with `--json`).
    pub fn text(&self, text: &str) {
        self.bar.suspend(|| self.out.text(text));
    }

    fn warn(&self, text: &str) {
        self.bar.suspend(|| self.out.warn(text));
    }

    fn err(&self, text: &str) {
        self.bar.suspend(|| self.out.err(text));
    }

    /// Redraws the live line with `status` (nothing when it is not shown).
    fn status(&self, status: String) {
        if !self.live {
            return;
        }
        if self.bar.is_hidden() {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_message(status);
    }

    /// Takes the live line off the screen for good.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// Stores the parts done and the part in progress, marked incomplete.
    fn checkpoint(&mut self, every: std::time::Duration, partial: SuiteResult) {
        let done = &self.done;
        self.session.checkpoint(every, || {
            let mut suites = done.clone();
            suites.push(partial);
            suites
        });
    }

    /// interbench's tables go to the report stream (standard error with `--json`) and to the
    /// log file.
    fn emit_interactive(&mut self, text: &str) {
        self.bar.suspend(|| {
            if self.out.json {
                self.out.chatter(text);
            } else {
                self.out.out(text);
            }
        });
        let View::Interactive(view) = &mut self.view else {
            return;
        };
        if let Some(f) = &mut view.log {
            if let Err(e) = f.write_all(text.as_bytes()) {
                // A full disk ends the log, not the run.
                view.log = None;
                self.warn(&format!("the log file is not written any more: {e}"));
            }
        }
    }

    /// `hostbench run`: the live line says the part's status, and the time left in it and in
    /// the run, from the plan's estimates.
    fn run_status(&self, status: String) {
        let View::Run(run) = &self.view else { return };
        let (suite, estimate) = run.parts[run.part];
        let part_left = (estimate - run.part_started.elapsed().as_secs_f64()).max(0.0);
        let later: f64 = run.parts[run.part + 1..].iter().map(|p| p.1).sum();
        self.status(format!(
            "[{}/{}] {}: {} | part about {} left, run about {} left",
            run.part + 1,
            run.parts.len(),
            suite,
            status,
            render::standard::duration(part_left),
            render::standard::duration(part_left + later)
        ));
    }

    /// interbench's footer, at the end of an `interactive` command.
    pub fn interactive_footer(&mut self, result: &InteractiveResult) {
        self.finish();
        self.emit_interactive(&render::interactive::footer(result));
    }
}

impl StandardObserver for Console<'_> {
    fn part_begins(&mut self, index: usize, part: &Part) {
        let View::Run(run) = &mut self.view else {
            return;
        };
        run.part = index;
        run.part_started = Instant::now();
        let line = render::standard::part_line(index, run.parts.len(), &part.planned());
        self.chatter(&format!("{line}\n"));
        self.run_status("starting".into());
    }

    fn part_done(&mut self, _index: usize, result: &SuiteResult) {
        let View::Run(run) = &self.view else { return };
        let took = render::standard::duration(run.part_started.elapsed().as_secs_f64());
        self.chatter(&format!(
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
        // A noise run's runs last a tenth of a second: the result is built only when due.
        if self.session.checkpoint_due(NOISE_EVERY) {
            Console::checkpoint(self, NOISE_EVERY, SuiteResult::Noise(partial()));
        }
    }

    fn calibrating(&mut self, settings: &NoiseSettings) {
        match &self.view {
            View::Run(_) => self.run_status("calibrating".into()),
            _ => self.chatter(&render::noise::calibrating_line(settings)),
        }
    }

    fn calibrated(&mut self, calibration: &NoiseCalibration) {
        let View::Noise { verbose } = self.view else {
            return;
        };
        self.chatter(&format!(
            "{}\n",
            render::noise::calibrated_line(calibration)
        ));
        if verbose {
            self.chatter(&format!("{}\n", render::noise::verbose_header()));
        }
    }

    fn run_done(
        &mut self,
        index: usize,
        planned: u64,
        run: &NoiseRun,
        previous: Option<&NoiseRun>,
        fastest_ns: u64,
    ) {
        match self.view {
            View::Noise { verbose: true } => self.chatter(&format!(
                "{}\n",
                render::noise::verbose_line(index, run, previous)
            )),
            View::Noise { verbose: false } => self.status(render::noise::progress_line(
                index, planned, run, previous, fastest_ns,
            )),
            View::Run(_) => self.run_status(format!("run {}/{planned}", index + 1)),
            _ => {}
        }
    }
}

impl IndexObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> IndexResult) {
        Console::checkpoint(self, EVERY_UNIT, SuiteResult::Index(partial()));
    }

    fn pass_begins(&mut self, copies: usize) {
        if let View::Index { .. } = self.view {
            self.chatter(&format!(
                "\n--- {copies} parallel cop{} of each test ---\n",
                if copies == 1 { "y" } else { "ies" }
            ));
        }
    }

    fn test_begins(&mut self, t: &TestInfo, copies: usize, iterations: usize) {
        match self.view {
            View::Index { .. } => self.chatter(&format!("{copies} x {} ", t.msg)),
            View::Run(_) => self.run_status(format!("{copies} x {} (0/{iterations})", t.name)),
            _ => {}
        }
    }

    fn iteration_done(&mut self, t: &TestInfo, index: usize, pass: &Pass) {
        match self.view {
            View::Index { verbose: true } => self.chatter(&format!(
                " {}:{:.1}/{:.1}s",
                index + 1,
                pass.count,
                pass.time_s
            )),
            View::Index { verbose: false } => self.chatter(&format!(" {}", index + 1)),
            View::Run(_) => self.run_status(format!("{} iteration {} done", t.name, index + 1)),
            _ => {}
        }
    }

    fn test_done(&mut self, _r: &TestResult) {
        if let View::Index { .. } = self.view {
            self.chatter("\n");
        }
    }

    fn skipped(&mut self, s: &Skipped) {
        if let View::Index { .. } = self.view {
            self.chatter(&format!("{} skipped: {}\n", s.name, s.reason));
        }
    }

    fn note(&mut self, note: &str) {
        match &mut self.view {
            View::Run(run) => run.notes.push(format!("index: {note}")),
            _ => self.warn(note),
        }
    }

    fn failed(&mut self, s: &Skipped) {
        if let View::Index { .. } = self.view {
            self.chatter("\n");
            self.err(&format!("hostbench: {} failed: {}\n", s.name, s.reason));
        }
    }
}

impl InteractiveObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> InteractiveResult) {
        Console::checkpoint(self, EVERY_UNIT, SuiteResult::Interactive(partial()));
    }

    fn calibrated(&mut self, calibration: &BurnCalibration, cache_warning: Option<&str>) {
        match &mut self.view {
            View::Run(run) => {
                if let Some(w) = cache_warning {
                    run.notes.push(format!("calibration cache: {w}"));
                }
            }
            View::Interactive(view) => {
                let header = render::interactive::run_header(
                    &view.settings,
                    calibration.loops_per_ms,
                    &view.kernel,
                    &view.datestamp,
                );
                if let Some(w) = cache_warning {
                    self.warn(w);
                }
                self.emit_interactive(&format!("\n{header}"));
            }
            _ => {}
        }
    }

    fn note(&mut self, note: &str) {
        match &mut self.view {
            View::Run(run) => run.notes.push(format!("interactive: {note}")),
            _ => self.warn(note),
        }
    }

    fn preparing_files(&mut self, bytes: u64) {
        if let View::Interactive(_) = self.view {
            self.chatter_err(&format!(
                "Creating a {} file for the Read load...\n",
                crate::units::bytes(bytes)
            ));
        }
    }

    fn bench_begins(&mut self, bench: Bench) {
        if let View::Interactive(view) = &self.view {
            let header = render::interactive::bench_header(bench, &view.settings);
            self.emit_interactive(&header);
        }
    }

    fn pair_begins(&mut self, bench: Bench, load: Load, index: usize, total: usize) {
        match &self.view {
            View::Interactive(view) => {
                let s = &view.settings;
                let per_pair = s.duration_s as f64 + s.settle_ms as f64 / 1e3 + 0.3;
                let left = (total - index) as f64 * per_pair;
                self.status(format!(
                    "[{}/{total}] {} under {}: {} s, about {} left",
                    index + 1,
                    bench.name(),
                    load.name(),
                    s.duration_s,
                    render::standard::duration(left)
                ));
            }
            View::Run(_) => self.run_status(format!(
                "{} under {} ({}/{total})",
                bench.name(),
                load.name(),
                index + 1
            )),
            _ => {}
        }
    }

    fn measured(&mut self, m: &Measurement) {
        if let View::Interactive(view) = &self.view {
            let row = render::interactive::row(m, view.settings.realtime);
            self.emit_interactive(&format!("{row}\n"));
        }
    }
}

impl SchedObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> SchedResult) {
        Console::checkpoint(self, EVERY_UNIT, SuiteResult::Sched(partial()));
    }

    fn run_done(&mut self, threads: usize, active_sets: usize, index: usize, run: &SchedRun) {
        let line = match &self.view {
            View::Sched {
                format: OutputFormat::Runs,
                ..
            } => render::sched::run_line_o1(threads, active_sets, index, run),
            View::Sched {
                format: OutputFormat::People,
                ..
            } if !self.out.quiet => render::sched::run_line_human(threads, active_sets, index, run),
            View::Run(_) => {
                return self.run_status(format!(
                    "{threads} threads, {active_sets} active sets, run {}: {:.2} us/round",
                    index + 1,
                    run.us_per_round
                ))
            }
            _ => return,
        };
        self.text(&format!("{line}\n"));
    }

    fn point_done(&mut self, point: &SchedPoint) {
        let line = match &self.view {
            View::Sched {
                format: OutputFormat::Points,
                ..
            } => render::sched::point_line_o2(point),
            View::Sched {
                format: OutputFormat::People,
                settings,
            } => render::sched::point_human(point, settings)
                .trim_end()
                .to_string(),
            _ => return,
        };
        self.text(&format!("{line}\n"));
    }
}

impl Console<'_> {
    /// Chatter that always goes to standard error (interbench's file-making note).
    fn chatter_err(&self, text: &str) {
        if !self.out.quiet {
            self.err(text);
        }
    }
}
