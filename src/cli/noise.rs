use anyhow::Result;
use clap::Args;

use super::output::Output;
use super::session::{Session, NOISE_EVERY};
use super::{CalibrationArgs, GlobalArgs};
use crate::model::noise::{NoiseCalibration, NoiseMode, NoiseResult, NoiseRun, NoiseSettings};
use crate::model::SuiteResult;
use crate::platform::host::memory_available_bytes;
use crate::render;
use crate::suites::noise::{self, NoiseConfig, NoiseObserver};

#[derive(Debug, Args)]
pub struct NoiseArgs {
    /// Verbose: per-run details (time, user and system CPU, involuntary context switches)
    #[arg(short, long)]
    pub verbose: bool,
    /// Memory test: a read loop over a working set of MB megabytes instead of the CPU spin loop
    #[arg(short = 'm', long = "memory", value_name = "MB")]
    pub memory_mb: Option<u64>,
    /// Target duration of one run, in milliseconds
    #[arg(value_name = "TIME_MS", default_value_t = 100)]
    pub time_ms: u64,
    /// Number of runs
    #[arg(value_name = "COUNT", default_value_t = 100)]
    pub count: u64,
    #[command(flatten)]
    pub calibration: CalibrationArgs,
}

pub fn exec(args: &NoiseArgs, global: &GlobalArgs, argv: Vec<String>) -> Result<i32> {
    let settings = NoiseSettings {
        mode: args
            .memory_mb
            .map_or(NoiseMode::Cpu, |mb| NoiseMode::Memory {
                working_set_mb: mb,
            }),
        target_ms: args.time_ms,
        runs_requested: args.count,
    };
    let config = NoiseConfig::new(
        settings,
        args.calibration.options(global)?,
        memory_available_bytes(),
    )?;
    let mut session = Session::start(global, argv, crate::model::Environment::collect())?;
    session.check_noise();
    let stop = session.stop.clone();
    let mut observer = Console {
        out: session.out.clone(),
        session: &mut session,
        verbose: args.verbose,
        live: global.shows_progress() && !args.verbose,
    };
    let outcome = noise::measure(&config, stop.flag(), &mut observer)?;
    observer.finish_progress();

    let report = render::noise::report(&outcome);
    let done = session.finish(vec![SuiteResult::Noise(outcome)], false);
    if global.json {
        done.print_json();
    } else {
        done.out.out(&report);
    }
    done.say_where_stored();
    Ok(done.exit_code(false))
}

/// Shows a noise run's progress: p1bench's lines on standard output, or on standard error when
/// standard output carries JSON.
struct Console<'s> {
    out: Output,
    /// Stores the runs as they go.
    session: &'s mut Session,
    verbose: bool,
    /// Rewrite one status line in place (a terminal only).
    live: bool,
}

impl Console<'_> {
    fn finish_progress(&self) {
        if self.live {
            self.out.err("\n");
        }
    }
}

impl NoiseObserver for Console<'_> {
    fn checkpoint(&mut self, partial: &dyn Fn() -> NoiseResult) {
        self.session
            .checkpoint(NOISE_EVERY, || vec![SuiteResult::Noise(partial())]);
    }

    fn calibrating(&mut self, settings: &NoiseSettings) {
        self.out.chatter(&render::noise::calibrating_line(settings));
    }

    fn calibrated(&mut self, calibration: &NoiseCalibration, cache_warning: Option<&str>) {
        self.out.chatter(&format!(
            "{}\n",
            render::noise::calibrated_line(calibration)
        ));
        if let Some(w) = cache_warning {
            self.out.warn(w);
        }
        if self.verbose {
            self.out
                .chatter(&format!("{}\n", render::noise::verbose_header()));
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
        if self.verbose {
            self.out.chatter(&format!(
                "{}\n",
                render::noise::verbose_line(index, run, previous)
            ));
        } else if self.live {
            self.out.err(&format!(
                "\r{}  ",
                render::noise::progress_line(index, planned, run, previous, fastest_ns)
            ));
        }
    }
}
