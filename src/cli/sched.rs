use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use super::args::{CalibrationArgs, MeasureArgs};
use super::console::{Console, Reporter, Terminal};
use super::measuring::{self, Ending, Measured, MeasuringCommand};
use super::session::{Finished, Session};
use crate::calibration::{burn_calibration, BurnLoop, CalibrationOptions};
use crate::model::sched as sched_model;
use crate::model::sched::confidence::ConfidenceRule;
use crate::model::sched::SchedSettings;
use crate::model::{Environment, SuiteResult};
use crate::render;
use crate::suites::event::Event;
use crate::suites::sched::SchedEvent;
use crate::suites::sched::{self, SchedConfig};

#[derive(Debug, Clone, Args)]
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
    /// blocks: each point's runs in turn, as reflex runs them; rounds: every point's next run
    /// in turn, each point stopping when its rule says (the same runs and rule)
    #[arg(long, value_enum, value_name = "ORDER", default_value = "blocks")]
    pub order: sched_model::Order,
    #[command(flatten)]
    pub calibration: CalibrationArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

pub fn exec(args: &SchedArgs, argv: Vec<String>) -> Result<i32> {
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
        order: args.order,
    };
    let config = SchedConfig::new(settings, args.threads, args.active, &args.sweep)?;
    config.check_limits()?;
    let mut command = SchedCommand {
        calibration: args.calibration.options(&args.measure)?,
        config,
        format: args.output,
    };
    measuring::run(&mut command, &args.measure, argv, Environment::collect())
}

struct SchedCommand {
    config: SchedConfig,
    calibration: CalibrationOptions,
    format: OutputFormat,
}

impl MeasuringCommand for SchedCommand {
    type Reporter = ReflexLines;

    fn reporter(&mut self, _session: &Session) -> Result<ReflexLines> {
        Ok(ReflexLines {
            format: self.format,
            settings: self.config.settings.clone(),
        })
    }

    /// reflex draws no progress line: its run lines are the progress.
    fn live(&self) -> bool {
        false
    }

    fn measure(
        &mut self,
        console: &mut Console<'_, ReflexLines>,
        stop: &AtomicBool,
    ) -> Result<Measured> {
        let calibration = burn_calibration(&self.calibration, BurnLoop::Chain, &mut |_| {});
        if let Some(w) = &calibration.cache_warning {
            console.term.warn(w);
        }
        let s = &self.config.settings;
        if self.format == OutputFormat::People {
            console.term.chatter(&format!(
                "reflex: w={} r={} us t={} s, loops_per_ms {}, placement {}\n",
                s.handoff_weight,
                s.compute_us,
                s.duration_s,
                calibration.calibration.loops_per_ms,
                render::sched::placement(s)
            ));
            for line in render::calibration::lines(&calibration.calibration) {
                console.term.chatter(&format!("{line}\n"));
            }
        }
        let result = sched::measure(&self.config, calibration.calibration, stop, console)?;
        if result.points.len() > 1 && self.format == OutputFormat::People {
            console.term.text(&render::sched::sweep_table(&result));
        }
        Ok(Measured {
            suites: vec![SuiteResult::Sched(result)],
            cut_short: false,
        })
    }

    fn ending(&self, _done: &Finished, _lines: ReflexLines) -> Ending {
        Ending::default()
    }
}

/// reflex's lines in the chosen `-o` format, as each run and point is done.
struct ReflexLines {
    format: OutputFormat,
    settings: SchedSettings,
}

impl Reporter for ReflexLines {
    fn on(&mut self, event: &Event<'_>, term: &Terminal) {
        let line = match (event, self.format) {
            (
                Event::Sched(SchedEvent::RunDone {
                    threads,
                    active_sets,
                    index,
                    run,
                }),
                OutputFormat::Runs,
            ) => render::sched::run_line_o1(*threads, *active_sets, *index, run),
            (
                Event::Sched(SchedEvent::RunDone {
                    threads,
                    active_sets,
                    index,
                    run,
                }),
                OutputFormat::People,
            ) if !term.out.quiet => {
                render::sched::run_line_human(*threads, *active_sets, *index, run)
            }
            (Event::Sched(SchedEvent::PointDone(point)), OutputFormat::Points) => {
                render::sched::point_line_o2(point)
            }
            (Event::Sched(SchedEvent::PointDone(point)), OutputFormat::People) => {
                render::sched::point_human(point, &self.settings)
                    .trim_end()
                    .to_string()
            }
            _ => return,
        };
        term.text(&format!("{line}\n"));
    }
}

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
