use std::io::Write;

use anyhow::Result;
use chrono::Utc;
use clap::Args;

use super::{CalibrationArgs, GlobalArgs};
use crate::model::{RunResult, SuiteResult};
use crate::platform::host::{collect_environment, memory_available_bytes, StealClock};
use crate::platform::signals::StopSignal;
use crate::render;
use crate::store::ResultStore;
use crate::suites::noise::{
    self, NoiseCalibration, NoiseConfig, NoiseMode, NoiseObserver, NoiseRun, NoiseSettings,
};

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
    // Open the store before measuring: a bad path must not cost a whole run.
    let mut store = global.open_store()?;
    let stop = StopSignal::install()?;

    let started_at = Utc::now();
    let mut environment = collect_environment();
    let steal = StealClock::start();
    let mut observer = Console {
        chatter: !global.quiet,
        json: global.json,
        verbose: args.verbose,
        live: global.shows_progress() && !args.verbose,
    };
    let outcome = noise::measure(&config, stop.flag(), &mut observer)?;
    observer.finish_progress();
    environment.steal_ms_during_run = steal.elapsed_ms();

    let report = render::noise::report(&outcome);
    let result = RunResult::finished(
        started_at,
        argv,
        stop.is_requested(),
        environment,
        SuiteResult::Noise(outcome),
    );
    let id = store.save(&result)?;

    if global.json {
        println!("{}", render::json::to_json(&result)?);
    } else {
        print!("{report}");
        println!("Stored as result {id} in {}.", store.path().display());
    }
    Ok(if stop.is_requested() {
        stop.exit_code()
    } else {
        0
    })
}

/// Shows a noise run's progress: p1bench's lines on standard output, or on standard error when
/// standard output carries JSON.
struct Console {
    chatter: bool,
    json: bool,
    verbose: bool,
    /// Rewrite one status line in place (a terminal only).
    live: bool,
}

impl Console {
    fn out(&self) -> Box<dyn Write> {
        if self.json {
            Box::new(std::io::stderr())
        } else {
            Box::new(std::io::stdout())
        }
    }

    fn finish_progress(&self) {
        if self.live {
            eprintln!();
        }
    }
}

impl NoiseObserver for Console {
    fn calibrating(&mut self, settings: &NoiseSettings) {
        if self.chatter {
            let mut out = self.out();
            let _ = write!(out, "{}", render::noise::calibrating_line(settings));
            let _ = out.flush();
        }
    }

    fn calibrated(&mut self, calibration: &NoiseCalibration, cache_warning: Option<&str>) {
        if self.chatter {
            let _ = writeln!(
                self.out(),
                "{}",
                render::noise::calibrated_line(calibration)
            );
        }
        if let Some(w) = cache_warning {
            eprintln!("warning: {w}");
        }
        if self.chatter && self.verbose {
            let _ = writeln!(self.out(), "{}", render::noise::verbose_header());
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
        if self.chatter && self.verbose {
            let _ = writeln!(
                self.out(),
                "{}",
                render::noise::verbose_line(index, run, previous)
            );
        } else if self.live {
            eprint!(
                "\r{}  ",
                render::noise::progress_line(index, planned, run, previous, fastest_ns)
            );
        }
    }
}
