use anyhow::Result;
use clap::Args;

use super::console::{Console, View};
use super::session::Session;
use super::GlobalArgs;
use crate::model::noise::{NoiseMode, NoiseSettings};
use crate::model::SuiteResult;
use crate::platform::host::memory_available_bytes;
use crate::render;
use crate::suites::noise::{self, NoiseConfig};

#[derive(Debug, Args)]
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
    let config = NoiseConfig::new(settings, args.loops_per_ms, memory_available_bytes())?;
    let mut session = Session::start(global, argv, crate::model::Environment::collect())?;
    session.check_noise();
    let stop = session.stop.clone();
    let view = View::Noise {
        verbose: args.verbose,
    };
    let mut console = Console::new(&mut session, view, global.shows_progress());
    let outcome = noise::measure(&config, stop.flag(), &mut console)?;
    console.finish();

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
