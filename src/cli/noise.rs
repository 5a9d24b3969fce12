use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use super::args::MeasureArgs;
use super::console::{Console, Reporter, Terminal};
use super::measuring::{self, Ending, Measured, MeasuringCommand};
use super::session::{Finished, Session};
use crate::model::noise::{NoiseMode, NoiseSettings};
use crate::model::{Environment, SuiteResult};
use crate::platform::host::memory_available_bytes;
use crate::render;
use crate::suites::event::Event;
use crate::suites::noise::NoiseEvent;
use crate::suites::noise::{self, NoiseConfig};

#[derive(Debug, Clone, Args)]
pub struct NoiseArgs {
    /// Verbose: per-run details (time, user and system CPU, involuntary context switches)
    #[arg(short, long, conflicts_with = "quiet")]
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
    /// Fix the count instead of calibrating it: N iterations of the spin loop a millisecond,
    /// times TIME_MS (CPU job only)
    #[arg(short = 'l', long = "loops-per-ms", value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::calibration::MAX_LOOPS_PER_MS))]
    pub loops_per_ms: Option<u64>,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

pub fn exec(args: &NoiseArgs, argv: Vec<String>) -> Result<i32> {
    let settings = NoiseSettings {
        mode: args
            .memory_mb
            .map_or(NoiseMode::Cpu, |mb| NoiseMode::Memory {
                working_set_mb: mb,
            }),
        target_ms: args.time_ms,
        runs_requested: args.count,
    };
    let config = NoiseConfig::new(settings, args.loops_per_ms, memory_available_bytes())?;
    let mut command = NoiseCommand {
        config,
        verbose: args.verbose,
    };
    measuring::run(&mut command, &args.measure, argv, Environment::collect())
}

struct NoiseCommand {
    config: NoiseConfig,
    verbose: bool,
}

impl MeasuringCommand for NoiseCommand {
    type Reporter = NoiseLines;

    fn reporter(&mut self, _session: &Session) -> Result<NoiseLines> {
        Ok(NoiseLines {
            verbose: self.verbose,
        })
    }

    fn measure(
        &mut self,
        console: &mut Console<'_, NoiseLines>,
        stop: &AtomicBool,
    ) -> Result<Measured> {
        let outcome = noise::measure(&self.config, stop, console)?;
        Ok(Measured {
            suites: vec![SuiteResult::Noise(outcome)],
            cut_short: false,
        })
    }

    fn ending(&self, done: &Finished, _lines: NoiseLines) -> Ending {
        let SuiteResult::Noise(outcome) = &done.result.suites[0] else {
            unreachable!("measured above")
        };
        Ending {
            report: Some(render::noise::report(outcome)),
            ..Ending::default()
        }
    }
}

/// p1bench's lines: its calibration, with `-v` a line per run; else each run on the live line.
struct NoiseLines {
    verbose: bool,
}

impl Reporter for NoiseLines {
    fn on(&mut self, event: &Event<'_>, term: &Terminal) {
        match event {
            Event::Noise(NoiseEvent::Calibrating(settings)) => {
                term.chatter(&render::noise::calibrating_line(settings))
            }
            Event::Noise(NoiseEvent::Calibrated(calibration)) => {
                term.chatter(&format!(
                    "{}\n",
                    render::noise::calibrated_line(calibration)
                ));
                if self.verbose {
                    term.chatter(&format!("{}\n", render::noise::verbose_header()));
                }
            }
            Event::Noise(NoiseEvent::RunDone {
                index,
                run,
                previous,
                ..
            }) if self.verbose => term.chatter(&format!(
                "{}\n",
                render::noise::verbose_line(*index, run, *previous)
            )),
            _ => {}
        }
    }

    fn status(&self, event: &Event<'_>) -> Option<String> {
        match event {
            Event::Noise(NoiseEvent::RunDone {
                index,
                planned,
                run,
                previous,
                fastest_ns,
            }) if !self.verbose => Some(render::noise::progress_line(
                *index,
                *planned,
                run,
                *previous,
                *fastest_ns,
            )),
            _ => None,
        }
    }
}
