use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use super::args::MeasureArgs;
use super::console::{Console, Reporter, Terminal};
use super::measuring::{self, Ending, Measured, MeasuringCommand};
use super::session::{Finished, Session};
use crate::error::UsageError;
use crate::model::wakeup as model;
use crate::model::{Environment, SuiteResult};
use crate::platform::{files, host};
use crate::render;
use crate::suites::event::Event;
use crate::suites::wakeup::{self, Options, WakeupConfig, WakeupEvent};
use crate::text::Text;

/// schbench's options, with its letters and defaults.
#[derive(Debug, Clone, Args)]
pub struct WakeupArgs {
    /// Message threads
    #[arg(short = 'm', long = "message-threads", value_name = "N", default_value_t = model::DEFAULT_MESSAGE_THREADS)]
    pub message_threads: usize,
    /// Worker threads of each message thread [default: the CPUs over the message threads]
    #[arg(short = 't', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// Seconds to run
    #[arg(short = 'r', long = "runtime", value_name = "SECONDS", default_value_t = model::DEFAULT_RUNTIME_S)]
    pub runtime_s: u64,
    /// Seconds of warm-up, after which the statistics are zeroed (none in runs under 30 s, nor
    /// with -p or -A unless given) [default: 5]
    #[arg(short = 'w', long = "warmuptime", value_name = "SECONDS")]
    pub warmup_s: Option<u64>,
    /// Zero the statistics every so many seconds
    #[arg(
        short = 'z',
        long = "zerotime",
        value_name = "SECONDS",
        default_value_t = 0
    )]
    pub zero_s: u64,
    /// Cache footprint of each worker's matrices, KB
    #[arg(short = 'F', long = "cache-footprint", value_name = "KB", default_value_t = model::DEFAULT_FOOTPRINT_KB)]
    pub footprint_kb: u64,
    /// Matrix multiplications a request
    #[arg(short = 'n', long = "operations", value_name = "N", default_value_t = model::DEFAULT_OPERATIONS)]
    pub operations: u64,
    /// Percent of the cache footprint that is each worker's own; the rest is one set of
    /// matrices all workers share, and the same percent of a request's operations use the
    /// worker's own [default: all its own]
    #[arg(long = "split", value_name = "PERCENT")]
    pub split: Option<u32>,
    /// Microseconds a request sleeps
    #[arg(short = 's', long = "sleep-usec", value_name = "US", default_value_t = model::DEFAULT_SLEEP_US)]
    pub sleep_us: u64,
    /// No per-CPU spinlock around the math
    #[arg(short = 'L', long = "no-locking")]
    pub no_locking: bool,
    /// Calibration: the request latency is the math alone, and no lock is taken
    #[arg(short = 'C', long = "calibrate")]
    pub calibrate: bool,
    /// Requests a second, over all message threads, instead of saturating the CPUs
    #[arg(short = 'R', long = "rps", value_name = "COUNT")]
    pub rps: Option<u64>,
    /// Grow or shrink the request rate each second until the CPUs are this busy, %
    #[arg(short = 'A', long = "auto-rps", value_name = "PCT")]
    pub auto_rps: Option<u32>,
    /// The pipe test: hand a page of this many bytes back and forth (wakeup latency only)
    #[arg(short = 'p', long = "pipe", value_name = "BYTES")]
    pub pipe: Option<usize>,
    /// CPUs of the message threads, one each in turn ("0-3,8"), or "auto"
    #[arg(short = 'M', long = "message-cpus", value_name = "LIST")]
    pub message_cpus: Option<String>,
    /// CPUs of the worker threads ("0-3,8"), or "auto"
    #[arg(short = 'W', long = "worker-cpus", value_name = "LIST")]
    pub worker_cpus: Option<String>,
    /// Explain the N worst wakeups (default 3) from the kernel's scheduling trace: what held
    /// the message thread and the worker's CPU between the post and the worker running.
    /// Needs root and tracefs; without them, one line says why and the run goes on
    #[arg(long = "explain", value_name = "N", num_args = 0..=1, default_missing_value = "3",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub explain: Option<u32>,
    /// Print the tables every this many seconds while running (schbench's -i), on standard
    /// error; not with -q or the pipe test
    #[arg(short = 'i', long = "intervaltime", value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub interval_s: u64,
    /// Also write schbench's JSON file (its -j): its percentiles, min and max of each table,
    /// the kernel, host and command line; "-" is standard output
    #[arg(short = 'j', long = "schbench-json", value_name = "FILE")]
    pub schbench_json: Option<PathBuf>,
    /// A job name in the -j file (schbench's -J), at most 256 characters
    #[arg(short = 'J', long = "jobname", value_name = "NAME", requires = "schbench_json",
          value_parser = jobname)]
    pub jobname: Option<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// The most characters a job name may have.
const MAX_JOBNAME: usize = 256;

fn jobname(s: &str) -> Result<String, String> {
    if s.chars().count() > MAX_JOBNAME {
        return Err(format!("at most {MAX_JOBNAME} characters"));
    }
    Ok(s.to_string())
}

pub fn exec(args: &WakeupArgs, argv: Vec<String>) -> Result<i32> {
    let config = WakeupConfig::new(&Options {
        message_threads: args.message_threads,
        workers: args.threads,
        runtime_s: args.runtime_s,
        warmup_s: args.warmup_s,
        zero_s: args.zero_s,
        footprint_kb: args.footprint_kb,
        operations: args.operations,
        split_pct: args.split,
        sleep_us: args.sleep_us,
        no_locking: args.no_locking,
        calibrate: args.calibrate,
        rps: args.rps,
        auto_rps_pct: args.auto_rps,
        pipe_bytes: args.pipe,
        message_cpus: args.message_cpus.clone(),
        worker_cpus: args.worker_cpus.clone(),
        explain: args.explain,
    })?;
    let schbench_json = match &args.schbench_json {
        Some(path) if path == Path::new("-") && args.measure.print.json.on => {
            return Err(UsageError::new(
                "-j - and --json both print on standard output: give -j a file",
            )
            .into());
        }
        Some(path) => Some(SchbenchJson {
            path: path.clone(),
            jobname: args.jobname.clone().map(Text::new),
            sched_ext: Text::new(host::sched_ext()),
        }),
        None => None,
    };
    let mut command = WakeupCommand {
        config,
        interval_s: args.interval_s,
        schbench_json,
    };
    measuring::run(&mut command, &args.measure, argv, Environment::collect())
}

struct WakeupCommand {
    config: WakeupConfig,
    interval_s: u64,
    schbench_json: Option<SchbenchJson>,
}

/// Where `-j` writes schbench's JSON, and what it says that the result does not hold.
struct SchbenchJson {
    path: PathBuf,
    jobname: Option<Text>,
    sched_ext: Text,
}

impl SchbenchJson {
    /// Writes the file of `done`'s run; an error line where it cannot.
    fn write(&self, done: &Finished, r: &model::WakeupResult) -> Result<(), String> {
        let host = &done.result.environment.host;
        let header = render::wakeup_json::Header {
            kernel: &host.kernel_release,
            jobname: self.jobname.as_ref(),
            hostname: &host.hostname,
            sched_ext: &self.sched_ext,
            command_line: &done.result.command_line,
            time: done.result.finished_at.timestamp(),
        };
        let text = render::wakeup_json::render(&header, r);
        if self.path == Path::new("-") {
            // Its own line, before the tables (schbench's file has no newline: kept so).
            done.out.out(&format!("{text}\n"));
            return Ok(());
        }
        files::write_output(&self.path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e:#}", self.path.display()))
    }
}

impl MeasuringCommand for WakeupCommand {
    type Reporter = SchbenchLines;

    fn reporter(&mut self, _session: &Session) -> Result<SchbenchLines> {
        Ok(SchbenchLines {
            interval_s: self.interval_s as f64,
            last_s: 0.0,
        })
    }

    fn measure(
        &mut self,
        console: &mut Console<'_, SchbenchLines>,
        stop: &AtomicBool,
    ) -> Result<Measured> {
        let result = wakeup::measure(&self.config, stop, console)?;
        Ok(Measured {
            suites: vec![SuiteResult::Wakeup(result)],
            cut_short: false,
        })
    }

    fn ending(&self, done: &Finished, _lines: SchbenchLines) -> Ending {
        let SuiteResult::Wakeup(r) = &done.result.suites[0] else {
            unreachable!("measured above")
        };
        let mut ending = Ending {
            report: Some(render::wakeup::report(r)),
            ..Ending::default()
        };
        if let Some(json) = &self.schbench_json {
            if let Err(e) = json.write(done, r) {
                ending.errors.push(e);
                ending.failed = true;
            }
        }
        ending
    }
}

/// schbench's lines: its tables at the end (the `Ending`); while it runs, the rate each second
/// on the live line, the tables so far every `-i` seconds on standard error, as schbench
/// prints them (the first once that many seconds have passed), and a note where the run could
/// not do what was asked.
struct SchbenchLines {
    interval_s: f64,
    /// When the tables were last printed: seconds since the start.
    last_s: f64,
}

impl Reporter for SchbenchLines {
    fn on(&mut self, event: &Event<'_>, term: &Terminal) {
        // What the run could not do as asked (--explain without tracefs), said once.
        if let Event::Note(note) = event {
            term.warn(note);
            return;
        }
        let Event::Wakeup(WakeupEvent::Tables { elapsed_s, build }) = event else {
            return;
        };
        if elapsed_s - self.last_s < self.interval_s {
            return;
        }
        self.last_s = *elapsed_s;
        term.chatter_err(&render::wakeup::interval(&build(), *elapsed_s as u64));
    }

    fn status(&self, event: &Event<'_>) -> Option<String> {
        match event {
            Event::Progress(p) => Some(super::console::progress_words(p)),
            _ => None,
        }
    }
}
