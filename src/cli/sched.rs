use anyhow::Result;
use clap::Args;

use super::console::{Console, OutputFormat, View};
use super::session::{Session, Stored};
use super::{CalibrationArgs, GlobalArgs};
use crate::calibration::{burn_calibration, BurnLoop};
use crate::model::sched as sched_model;
use crate::model::sched::confidence::ConfidenceRule;
use crate::model::sched::SchedSettings;
use crate::model::SuiteResult;
use crate::render;
use crate::suites::sched::{self, SchedConfig};

#[derive(Debug, Args)]
pub struct SchedArgs {
    /// % chance that a round hands the token on and blocks, instead of yielding (0-100)
    #[arg(short = 'w', long = "weight", value_name = "W", default_value_t = sched_model::DEFAULT_WEIGHT)]
    pub weight: u32,
    /// Microseconds of computing in each round
    #[arg(
        short = 'r',
        long = "compute-us",
        value_name = "US",
        default_value_t = sched_model::DEFAULT_COMPUTE_US
    )]
    pub compute_us: u64,
    /// Threads (even)
    #[arg(short = 'c', long = "threads", value_name = "C", default_value_t = sched_model::DEFAULT_THREADS)]
    pub threads: usize,
    /// Active sets: threads runnable at once (must divide -c)
    #[arg(short = 'a', long = "active", value_name = "A", default_value_t = sched_model::DEFAULT_ACTIVE)]
    pub active: usize,
    /// Seconds per run
    #[arg(
        short = 't',
        long = "time",
        value_name = "SECONDS",
        default_value_t = 20
    )]
    pub time_s: u64,
    /// Output, as reflex's -o
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FORMAT",
        value_enum,
        default_value = "0"
    )]
    pub output: OutputFormat,
    /// Runs repeat until the 95% confidence interval of us/round is within this % of the mean
    #[arg(long = "ci", value_name = "PCT", default_value_t = sched_model::DEFAULT_CI_PCT)]
    pub ci_pct: f64,
    /// Fewest runs per point
    #[arg(long = "min-runs", value_name = "N", default_value_t = 3)]
    pub min_runs: usize,
    /// Most runs per point
    #[arg(long = "max-runs", value_name = "N", default_value_t = 10)]
    pub max_runs: usize,
    /// Run these thread counts (comma-separated), each with -a/-c's share of active sets
    #[arg(long = "sweep", value_name = "C,C,...", value_delimiter = ',')]
    pub sweep: Vec<usize>,
    /// Pin each active set's threads to one CPU (sets spread over the allowed CPUs)
    #[arg(long)]
    pub pin: bool,
    #[command(flatten)]
    pub calibration: CalibrationArgs,
}

pub fn exec(args: &SchedArgs, global: &GlobalArgs, argv: Vec<String>) -> Result<i32> {
    let settings = SchedSettings {
        handoff_weight: args.weight,
        compute_us: args.compute_us,
        duration_s: args.time_s,
        rule: ConfidenceRule {
            target_pct: args.ci_pct,
            min_runs: args.min_runs,
            max_runs: args.max_runs,
        },
        pin: args.pin,
        points: Vec::new(),
    };
    let config = SchedConfig::new(settings, args.threads, args.active, &args.sweep)?;
    config.check_limits()?;
    let calibration_options = args.calibration.options(global)?;
    let mut session = Session::start(global, argv, crate::model::Environment::collect())?;
    session.check_noise();
    let stop = session.stop.clone();
    let calibration = burn_calibration(&calibration_options, BurnLoop::Chain);
    if let Some(w) = &calibration.cache_warning {
        session.out.warn(w);
    }
    let view = View::Sched {
        format: args.output,
        settings: config.settings.clone(),
    };
    let mut console = Console::new(&mut session, view, false);
    if args.output == OutputFormat::People {
        console.chatter(&format!(
            "reflex: w={} r={} us t={} s, loops_per_ms {}, placement {}\n",
            args.weight,
            args.compute_us,
            args.time_s,
            calibration.calibration.loops_per_ms,
            render::sched::placement(&config.settings)
        ));
    }
    let result = sched::measure(&config, calibration.calibration, stop.flag(), &mut console)?;
    if result.points.len() > 1 && args.output == OutputFormat::People {
        console.text(&render::sched::sweep_table(&result));
    }
    let done = session.finish(vec![SuiteResult::Sched(result)], false);
    if global.json {
        done.print_json();
    }
    if !global.quiet || !matches!(done.stored, Stored::Id(_)) {
        done.say_where_stored();
    }
    Ok(done.exit_code(false))
}
