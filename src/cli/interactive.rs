use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::Args;

use super::args::{CalibrationArgs, MeasureArgs};
use super::console::{Console, Reporter, Terminal};
use super::measuring::{self, Ending, Measured, MeasuringCommand};
use super::output::Output;
use super::session::{prepare_workdir, Finished, Session};
use crate::error::UsageError;
use crate::loads::registry::{self, Here, LOADS};
use crate::model::interactive::{Bench, InteractiveSettings, Load};
use crate::model::SuiteResult;
use crate::platform::dir::{Dir, Trust};
use crate::render;
use crate::render::interactive::UnitRow;
use crate::suites::event::Event;
use crate::suites::interactive::benches::BENCHES;
use crate::suites::interactive::InteractiveEvent;
use crate::suites::interactive::{self, InteractiveConfig, Selection};
use crate::suites::HostLimits;

/// The loads by name, for clap: help, completions and the error for a wrong one list them
/// (case-insensitive, as interbench matched them).
fn load_names() -> PossibleValuesParser {
    PossibleValuesParser::new(Load::ALL.map(|l| PossibleValue::new(l.name())))
}

/// The benches by name, as [`load_names`].
fn bench_names() -> PossibleValuesParser {
    PossibleValuesParser::new(Bench::ALL.map(|b| PossibleValue::new(b.name())))
}

#[derive(Debug, Clone, Args)]
pub struct InteractiveArgs {
    /// Threads of the Burn and Ring loads (interbench: "cpu load"; set it to the CPU count)
    #[arg(
        short = 'L',
        long = "load-threads",
        value_name = "N",
        default_value_t = 4
    )]
    pub load_threads: u32,
    /// Seconds to run each bench under each load
    #[arg(
        short = 't',
        long = "time",
        value_name = "SECONDS",
        default_value_t = 30
    )]
    pub time_s: u64,
    /// Nice level of the benchmarked task
    #[arg(
        short = 'B',
        long = "bench-nice",
        value_name = "NICE",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub bench_nice: i32,
    /// Nice level of the load
    #[arg(
        short = 'N',
        long = "load-nice",
        value_name = "NICE",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub load_nice: i32,
    /// Console only: write no log file
    #[arg(short = 'c', long = "console-only")]
    pub console_only: bool,
    /// Real-time benchmarks: Audio and Video (and Custom) run SCHED_FIFO; figures in µs
    #[arg(short = 'r', long = "realtime")]
    pub realtime: bool,
    /// Custom bench and load: this percentage of CPU (needs -I)
    #[arg(short = 'C', long = "custom-cpu", value_name = "PERCENT")]
    pub custom_cpu: Option<u32>,
    /// Custom bench and load: at this interval in microseconds (needs -C)
    #[arg(short = 'I', long = "custom-interval", value_name = "US")]
    pub custom_interval: Option<u64>,
    /// A comment line for the log file
    #[arg(short = 'm', long = "comment", value_name = "COMMENT")]
    pub comment: Option<String>,
    /// Run against this load (repeatable; naming any replaces the default list)
    #[arg(short = 'w', long = "load", value_name = "LOAD", ignore_case = true, value_parser = load_names())]
    pub loads: Vec<String>,
    /// Do not run against this load (repeatable)
    #[arg(short = 'x', long = "exclude-load", value_name = "LOAD", ignore_case = true, value_parser = load_names())]
    pub exclude_loads: Vec<String>,
    /// Benchmark this simulated task (repeatable; naming any replaces the default list)
    #[arg(short = 'W', long = "bench", value_name = "BENCH", ignore_case = true, value_parser = bench_names())]
    pub benches: Vec<String>,
    /// Do not benchmark this simulated task (repeatable)
    #[arg(short = 'X', long = "exclude-bench", value_name = "BENCH", ignore_case = true, value_parser = bench_names())]
    pub exclude_benches: Vec<String>,
    /// Emulate a uniprocessor: pin everything to one CPU
    #[arg(short = 'u', long = "uniprocessor")]
    pub uniprocessor: bool,
    /// Size of the Write and Read load files in MB [default: physical RAM, as interbench]
    #[arg(long = "file-size", value_name = "MB")]
    pub file_size_mb: Option<u64>,
    /// Write and Read through the page cache, as interbench v0.31 does with its files of at most
    /// 1 GB: Read keeps its file cached, Write never waits for the device
    #[arg(long = "page-cache")]
    pub page_cache: bool,
    /// Timekeepers sleep as interbench v0.31's: for the time asked, from when the task's request
    /// reaches them, so the latency holds both hand-offs [default: to the absolute deadline]
    #[arg(long = "relative-sleep")]
    pub relative_sleep: bool,
    /// Directory for the Write and Read load files [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// List every bench and load: what it does, whether a default run has it, and whether it
    /// runs here or why not (with --file-size, --workdir and --memload-mb as given); nothing
    /// is measured
    #[arg(long)]
    pub list: bool,
    /// Directory for the log file [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Run Memload at this size in MB, even without swap
    #[arg(long = "memload-mb", value_name = "MB")]
    pub memload_mb: Option<u64>,
    /// Groups of 20 senders and 20 receivers in the Hack load (hackbench's argument)
    #[arg(long = "hack-groups", value_name = "N", default_value_t = crate::model::interactive::DEFAULT_HACK_GROUPS)]
    pub hack_groups: u32,
    /// Milliseconds the load runs alone before the bench starts
    #[arg(long = "settle-ms", value_name = "MS", default_value_t = 1000)]
    pub settle_ms: u64,
    /// Keep -t as given instead of rounding it up to a multiple of 10 s as interbench does
    /// (X then covers only part of its 0-100% ramp, and its row says which)
    #[arg(long = "exact-time")]
    pub exact_time: bool,
    /// Hold /dev/cpu_dma_latency at 0 while measuring, as cyclictest does, so CPUs stay out of
    /// deep idle states (interbench never did; needs root)
    #[arg(long = "idle-hold")]
    pub idle_hold: bool,
    #[command(flatten)]
    pub explain: ExplainArgs,
    #[command(flatten)]
    pub calibration: CalibrationArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// `--explain [N]`, shared by `interactive` and `run`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExplainArgs {
    /// Explain each pair's N worst samples (default 3) from the kernel's scheduling trace: what
    /// held the CPU between the deadline and the task running (IRQs, softirqs, other tasks,
    /// migration). Under `run`, the wakeup part's N worst wakeups too. Needs root and tracefs;
    /// without them, one line says why and the run goes on
    #[arg(long = "explain", value_name = "N", num_args = 0..=1, default_missing_value = "3",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub explain: Option<u32>,
}

impl ExplainArgs {
    pub fn worst(&self) -> Option<u32> {
        self.explain
    }
}

pub fn exec(args: &InteractiveArgs, argv: Vec<String>) -> Result<i32> {
    let custom = interactive::custom_spec(args.custom_cpu, args.custom_interval)?;
    let environment = crate::model::Environment::collect();
    let file_bytes = match args.file_size_mb {
        Some(mb) => mb.saturating_mul(1 << 20),
        // interbench's rule: a file the size of physical RAM, so no cache can hold it.
        None => environment.host.memory_total_bytes.max(1 << 20),
    };
    let workdir = args.workdir.clone().unwrap_or_else(|| PathBuf::from("."));
    let host = HostLimits::of(&environment, &workdir);
    if args.list {
        let here = Here {
            host: &host,
            file_bytes,
            memload_mb: args.memload_mb,
        };
        let json = args.measure.print.json();
        let out = Output::new(json, false);
        let rows = units(&here);
        if json {
            out.out(&format!("{}\n", serde_json::to_string_pretty(&rows)?));
        } else {
            out.out(&render::interactive::unit_list(&rows));
        }
        return Ok(out.stdout_error().map_or(0, |_| 1));
    }
    let settings = InteractiveSettings {
        duration_s: args.time_s,
        requested_s: None,
        exact_time: args.exact_time,
        idle_hold: args.idle_hold,
        burn_threads: args.load_threads,
        bench_nice: args.bench_nice,
        load_nice: args.load_nice,
        realtime: args.realtime,
        pinned_cpu: args.uniprocessor.then_some(0),
        custom,
        benches: Vec::new(),
        loads: Vec::new(),
        file_bytes,
        page_cache: args.page_cache,
        relative_sleep: args.relative_sleep,
        memload_mb: args.memload_mb,
        hack_groups: args.hack_groups,
        settle_ms: args.settle_ms,
        comment: args.comment.clone().map(Into::into),
        explain: args.explain.worst(),
    };
    let selection = Selection {
        benches: args.benches.clone(),
        exclude_benches: args.exclude_benches.clone(),
        loads: args.loads.clone(),
        exclude_loads: args.exclude_loads.clone(),
    };
    let config = InteractiveConfig::new(
        settings,
        &selection,
        args.calibration.options(&args.measure)?,
        workdir,
        &host,
    )?;
    config.check_host()?;
    let exe = std::env::current_exe().context("finding the hostbench binary for its workers")?;
    let log_dir =
        (!args.console_only).then(|| args.log_dir.clone().unwrap_or_else(|| PathBuf::from(".")));
    let mut command = InteractiveCommand {
        config,
        exe,
        log_dir,
        log: None,
        failure: None,
    };
    measuring::run(&mut command, &args.measure, argv, environment)
}

struct InteractiveCommand {
    config: InteractiveConfig,
    /// The binary the workers are started from.
    exe: PathBuf,
    /// Where interbench's log file goes (none with `-c`).
    log_dir: Option<PathBuf>,
    /// The log file, once opened.
    log: Option<(PathBuf, File)>,
    /// What ended the run early, if something did.
    failure: Option<String>,
}

impl MeasuringCommand for InteractiveCommand {
    type Reporter = InterbenchLines;

    /// The work directory, and interbench's log file, named after the kernel and the start.
    fn prepare(&mut self, session: &Session) -> Result<()> {
        prepare_workdir(&self.config.workdir, &session.out)?;
        if let Some(dir) = &self.log_dir {
            let name = format!(
                "interbench-{}-{}.log",
                session.environment.host.kernel_release,
                session.started_at().format("%Y%m%d%H%M")
            );
            let path = dir.join(&name);
            // Through the held directory, reached without another user's link: no name on
            // the way is looked up again.
            let file = Dir::open(dir, Trust::Reach)
                .and_then(|held| {
                    held.open_append(&name)
                        .with_context(|| format!("opening {}", path.display()))
                })
                .map_err(|e| UsageError::new(format!("cannot write the log file: {e:#}")))?;
            self.log = Some((path, file));
        }
        Ok(())
    }

    fn reporter(&mut self, session: &Session) -> Result<InterbenchLines> {
        Ok(InterbenchLines {
            settings: self.config.settings.clone(),
            log: self.log.as_ref().map(|(_, f)| f.try_clone()).transpose()?,
            kernel: session.environment.host.kernel_release.to_string(),
            datestamp: session.started_at().format("%Y%m%d%H%M").to_string(),
        })
    }

    fn measure(
        &mut self,
        console: &mut Console<'_, InterbenchLines>,
        stop: &AtomicBool,
    ) -> Result<Measured> {
        let outcome = interactive::run(&self.config, &self.exe, stop, console)?;
        console.term.finish();
        console
            .reporter
            .emit(&render::interactive::footer(&outcome.result), &console.term);
        self.failure = outcome.failure;
        Ok(Measured {
            suites: vec![SuiteResult::Interactive(outcome.result)],
            cut_short: self.failure.is_some(),
        })
    }

    fn ending(&self, _done: &Finished, _lines: InterbenchLines) -> Ending {
        Ending {
            after: self
                .log
                .iter()
                .map(|(path, _)| format!("Log: {}\n", path.display()))
                .collect(),
            errors: self.failure.iter().cloned().collect(),
            failed: self.failure.is_some(),
            ..Ending::default()
        }
    }
}

/// interbench's tables, as pairs complete: on the report stream (standard error with
/// `--json`) and in its log file.
struct InterbenchLines {
    settings: InteractiveSettings,
    log: Option<File>,
    kernel: String,
    datestamp: String,
}

impl InterbenchLines {
    fn emit(&mut self, text: &str, term: &Terminal) {
        if term.out.json {
            term.chatter(text);
        } else {
            term.out(text);
        }
        if let Some(f) = &mut self.log {
            if let Err(e) = f.write_all(text.as_bytes()) {
                // A full disk ends the log, not the run.
                self.log = None;
                term.warn(&format!("the log file is not written any more: {e}"));
            }
        }
    }
}

impl Reporter for InterbenchLines {
    fn on(&mut self, event: &Event<'_>, term: &Terminal) {
        match event {
            Event::BurnCalibrated {
                calibration,
                cache_warning,
            } => {
                let header = render::interactive::run_header(
                    &self.settings,
                    calibration.loops_per_ms,
                    &self.kernel,
                    &self.datestamp,
                );
                if let Some(w) = cache_warning {
                    term.warn(w);
                }
                self.emit(&format!("\n{header}"), term);
            }
            Event::Note(note) => term.warn(note),
            Event::Interactive(InteractiveEvent::PreparingFiles { bytes }) => {
                term.chatter_err(&format!(
                    "Creating a {} file for the Read load...\n",
                    crate::units::bytes(*bytes)
                ))
            }
            Event::Interactive(InteractiveEvent::BenchBegins(bench)) => {
                let header = render::interactive::bench_header(*bench, &self.settings);
                self.emit(&header, term);
            }
            Event::Interactive(InteractiveEvent::Measured(m)) => {
                let row = render::interactive::row(m, self.settings.realtime);
                self.emit(&format!("{row}\n"), term);
            }
            _ => {}
        }
    }

    fn status(&self, event: &Event<'_>) -> Option<String> {
        if let Event::CalibrationCheckMissed(c) = event {
            return Some(render::calibration::check_missed(c));
        }
        let Event::Interactive(InteractiveEvent::PairBegins {
            bench,
            load,
            index,
            total,
        }) = event
        else {
            return None;
        };
        let s = &self.settings;
        let left = (total - index) as f64 * interactive::seconds_per_pair(s);
        Some(format!(
            "[{}/{total}] {} under {}: {} s, about {} left",
            index + 1,
            bench.name(),
            load.name(),
            s.duration_s,
            render::standard::duration(left)
        ))
    }
}

/// Every bench and load of the registries, and whether it runs here.
fn units(here: &Here) -> Vec<UnitRow> {
    let benches = BENCHES.iter().map(|b| UnitRow {
        kind: "bench",
        name: b.bench.name(),
        about: b.about,
        default: b.default,
        here: Ok(()),
    });
    let loads = LOADS.iter().map(|l| UnitRow {
        kind: "load",
        name: l.load.name(),
        about: l.about,
        default: l.default,
        here: registry::supported(l.load, here),
    });
    benches.chain(loads).collect()
}
