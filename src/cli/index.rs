use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use clap::Args;

use super::args::MeasureArgs;
use super::console::{Console, Reporter, Terminal};
use super::measuring::{self, Ending, Measured, MeasuringCommand};
use super::output::Output;
use super::session::{prepare_workdir, Finished, Session};
use crate::model::index::scoring::Pass;
use crate::model::index::IndexSettings;
use crate::model::SuiteResult;
use crate::platform::files;
use crate::platform::limits;
use crate::render;
use crate::suites::event::Event;
use crate::suites::index::registry;
use crate::suites::index::{self, IndexConfig, IndexEvent};
use crate::text::Text;

#[derive(Debug, Clone, Args)]
pub struct IndexArgs {
    /// Verbose: every iteration's figure
    #[arg(short = 'v', long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Iterations of each test (slow tests run int((N + 1) / 3), at least 1)
    #[arg(
        short = 'i',
        long = "iterations",
        value_name = "N",
        default_value_t = crate::model::index::DEFAULT_ITERATIONS
    )]
    pub iterations: usize,
    /// Copies run in parallel; repeat for several passes [default: 1, and the usable CPUs]
    #[arg(short = 'c', long = "copies", value_name = "N")]
    pub copies: Vec<usize>,
    /// Quick look: a tenth of each duration (at least 1 s), 3 iterations (1 for slow tests)
    #[arg(long)]
    pub quick: bool,
    /// Stop a test's iterations once the 95% CI of its pass scores is within PCT percent
    #[arg(long, value_name = "PCT", num_args = 0..=1, default_missing_value = "2")]
    pub adaptive: Option<f64>,
    /// Run every test for this many seconds instead of UnixBench's durations (for checks)
    #[arg(long, value_name = "S")]
    pub seconds: Option<f64>,
    /// Pin copy k to the k-th usable CPU
    #[arg(long)]
    pub pin: bool,
    /// blocks: each test's iterations in turn, as UnixBench runs them; rounds: every test's
    /// first iteration, then every test's second, and so on (the same iterations and scores)
    #[arg(long, value_enum, value_name = "ORDER", default_value = "blocks")]
    pub order: crate::model::index::Order,
    /// Graphics tests draw on a private Xvfb server (the default when DISPLAY is unset and Xvfb
    /// is installed)
    #[arg(long)]
    pub xvfb: bool,
    /// LANG for every test process, as UnixBench's $language (change it only to see how the
    /// language setting changes the results)
    #[arg(long, value_name = "LANG", default_value = crate::platform::locale::UNIXBENCH_LANG)]
    pub lang: String,
    /// Run the built-in Rust versions of the CPU tests (and the small program for execl and
    /// spawn) even where the host has a C compiler to build UnixBench's way
    #[arg(long = "builtin-cpu-tests")]
    pub builtin_cpu_tests: bool,
    /// Where the text and HTML reports go
    #[arg(long = "results-dir", value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// Where the tests' temporary files go [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// List every test: its title, whether it is in the BYTE index, and whether it runs here or
    /// why not; nothing is measured
    #[arg(long)]
    pub list: bool,
    /// Tests and aliases to run [default: index]
    #[arg(value_name = "TEST")]
    pub tests: Vec<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
}

pub fn exec(args: &IndexArgs, argv: Vec<String>) -> Result<i32> {
    if args.list {
        // With names, the tests they name (each checked as a run would check it).
        let named = if args.tests.is_empty() {
            registry::TESTS.iter().collect()
        } else {
            registry::expand(&args.tests)?
        };
        let rows: Vec<_> = named
            .into_iter()
            .map(|t| render::index::TestRow {
                name: t.name,
                msg: t.msg,
                in_index: t.in_index,
                here: index::supported(t),
            })
            .collect();
        let json = args.measure.print.json();
        let out = Output::new(json, false);
        if json {
            out.out(&format!("{}\n", serde_json::to_string_pretty(&rows)?));
        } else {
            out.out(&render::index::test_list(&rows));
        }
        return Ok(out.stdout_error().map_or(0, |_| 1));
    }
    let environment = crate::model::Environment::collect();
    let settings = IndexSettings {
        requested: args.tests.iter().map(Text::from).collect(),
        tests: Vec::new(),
        copies: args.copies.clone(),
        iterations: args.iterations,
        seconds: args.seconds,
        quick: args.quick,
        adaptive_pct: args.adaptive,
        pin: args.pin,
        xvfb: args.xvfb,
        builtin_cpu_tests: args.builtin_cpu_tests,
        lang: args.lang.clone().into(),
        order: args.order,
    };
    let workdir = args.workdir.clone().unwrap_or_else(|| PathBuf::from("."));
    let display = std::env::var("DISPLAY").ok().filter(|d| !d.is_empty());
    let mut config = IndexConfig::new(
        settings,
        environment.usable_cpus(),
        limits::process_limit(),
        workdir,
        display,
    )?;
    config.cache_dir = Some(args.measure.cache_dir()?);
    let exe =
        std::env::current_exe().context("finding the hostbench binary for the test copies")?;
    let copies_note = args
        .copies
        .is_empty()
        .then(|| {
            render::index::copies_note(environment.usable_cpus(), environment.host.cpus_online)
        })
        .flatten();
    let mut command = IndexCommand {
        config,
        exe,
        copies_note,
        verbose: args.verbose,
        results_dir: args.results_dir.clone(),
    };
    measuring::run(&mut command, &args.measure, argv, environment)
}

struct IndexCommand {
    config: IndexConfig,
    /// The binary the test copies are started from.
    exe: PathBuf,
    /// What the default copy counts are, where the host's CPUs make it worth saying.
    copies_note: Option<String>,
    verbose: bool,
    results_dir: PathBuf,
}

impl MeasuringCommand for IndexCommand {
    type Reporter = UnixBenchLines;

    fn prepare(&mut self, session: &Session) -> Result<()> {
        if let Some(note) = &self.copies_note {
            session.out.chatter(note);
        }
        prepare_workdir(&self.config.workdir, &session.out)
    }

    fn reporter(&mut self, _session: &Session) -> Result<UnixBenchLines> {
        Ok(UnixBenchLines {
            rounds: false,
            verbose: self.verbose,
        })
    }

    fn measure(
        &mut self,
        console: &mut Console<'_, UnixBenchLines>,
        stop: &AtomicBool,
    ) -> Result<Measured> {
        let outcome = index::run(&self.config, &self.exe, stop, console)?;
        let cut_short = outcome.failed_tests() > 0;
        Ok(Measured {
            suites: vec![SuiteResult::Index(outcome)],
            cut_short,
        })
    }

    fn ending(&self, done: &Finished, _lines: UnixBenchLines) -> Ending {
        let SuiteResult::Index(r) = &done.result.suites[0] else {
            unreachable!("measured above")
        };
        let text = render::index::report(&done.result, r);
        let files = files::write_report_pair(
            &self.results_dir,
            &done.result.environment.host.hostname.to_string(),
            &text,
            &render::index::html(&done.result, r),
        );
        let mut ending = Ending::default();
        match &files {
            Ok(path) => {
                ending.report = Some(format!(
                    "\n{text}Reports: {} and {}.html\n",
                    path.display(),
                    path.display()
                ))
            }
            Err(e) => {
                ending.report = Some(format!("\n{text}"));
                ending.warnings.push(format!("reports not written: {e:#}"));
            }
        }
        let failed = r.failed_tests();
        if failed > 0 {
            ending.errors.push(format!(
                "{failed} test{} failed (see the report); the result is marked incomplete",
                if failed == 1 { "" } else { "s" }
            ));
            ending.failed = true;
        }
        ending
    }
}

/// UnixBench's lines: "1 x Dhrystone 2 using register variables  1 2 3", a heading per pass,
/// skipped and failed tests; with `-v` each iteration's count and time. In rounds, a line a
/// round: "round 1 of 3: dhry2reg whetstone-double …".
struct UnixBenchLines {
    verbose: bool,
    /// The pass runs in rounds (a round has begun since the pass began).
    rounds: bool,
}

impl UnixBenchLines {
    fn iteration(&self, name: &str, index: usize, pass: &Pass) -> String {
        let label = if self.rounds {
            name.to_string()
        } else {
            (index + 1).to_string()
        };
        if self.verbose {
            format!(" {label}:{:.1}/{:.1}s", pass.count, pass.time_s)
        } else {
            format!(" {label}")
        }
    }
}

impl Reporter for UnixBenchLines {
    fn on(&mut self, event: &Event<'_>, term: &Terminal) {
        match event {
            Event::Index(IndexEvent::PassBegins { copies }) => {
                self.rounds = false;
                term.chatter(&format!(
                    "\n--- {copies} parallel cop{} of each test ---\n",
                    if *copies == 1 { "y" } else { "ies" }
                ))
            }
            Event::Index(IndexEvent::TestBegins { msg, copies, .. }) => {
                term.chatter(&format!("{copies} x {msg} "))
            }
            Event::Index(IndexEvent::RoundBegins { round, rounds }) => {
                self.rounds = true;
                term.chatter(&format!("round {} of {rounds}:", round + 1))
            }
            Event::Index(IndexEvent::RoundDone) => term.chatter("\n"),
            Event::Index(IndexEvent::IterationDone { name, index, pass }) => {
                term.chatter(&self.iteration(name, *index, pass))
            }
            Event::Index(IndexEvent::TestDone(_)) if !self.rounds => term.chatter("\n"),
            Event::Index(IndexEvent::TestSkipped(s)) => {
                term.chatter(&format!("{} skipped: {}\n", s.name, s.reason))
            }
            Event::Index(IndexEvent::TestFailed(s)) => {
                term.chatter("\n");
                term.err(&format!("hostbench: {} failed: {}\n", s.name, s.reason));
            }
            Event::Note(note) => term.warn(note),
            _ => {}
        }
    }
}
