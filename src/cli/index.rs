use std::ffi::CStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::Utc;
use clap::Args;

use super::GlobalArgs;
use crate::model::{Environment, RunResult, SuiteResult};
use crate::platform::host::{collect_environment, StealClock};
use crate::platform::signals::StopSignal;
use crate::render;
use crate::store::ResultStore;
use crate::suites::index::registry::TestInfo;
use crate::suites::index::scoring::Pass;
use crate::suites::index::{self, IndexConfig, IndexObserver, IndexSettings, Skipped, TestResult};

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Verbose: every iteration's figure
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Iterations of each test (slow tests run int((N + 1) / 3), at least 1)
    #[arg(
        short = 'i',
        long = "iterations",
        value_name = "N",
        default_value_t = 10
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
    /// Graphics tests draw on a private Xvfb server (the default when DISPLAY is unset and Xvfb
    /// is installed)
    #[arg(long)]
    pub xvfb: bool,
    /// Where the text and HTML reports go
    #[arg(long = "results-dir", value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// Where the tests' temporary files go [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Tests and aliases to run [default: index]
    #[arg(value_name = "TEST")]
    pub tests: Vec<String>,
}

pub fn exec(args: &IndexArgs, global: &GlobalArgs, argv: Vec<String>) -> Result<i32> {
    let environment = collect_environment();
    let settings = IndexSettings {
        requested: args.tests.clone(),
        tests: Vec::new(),
        copies: args.copies.clone(),
        iterations: args.iterations,
        seconds: args.seconds,
        quick: args.quick,
        adaptive_pct: args.adaptive,
        pin: args.pin,
        xvfb: args.xvfb,
    };
    let workdir = args.workdir.clone().unwrap_or_else(|| PathBuf::from("."));
    let display = std::env::var("DISPLAY").ok().filter(|d| !d.is_empty());
    let config = IndexConfig::new(settings, usable_cpus(&environment), workdir, display)?;
    let mut store = global.open_store()?;
    let stop = StopSignal::install()?;
    let exe =
        std::env::current_exe().context("finding the hostbench binary for the test copies")?;

    let started_at = Utc::now();
    let steal = StealClock::start();
    let mut console = Console {
        quiet: global.quiet,
        json: global.json,
        verbose: args.verbose,
    };
    let outcome = index::run(&config, &exe, language(), stop.flag(), &mut console)?;
    let mut environment = environment;
    environment.steal_ms_during_run = steal.elapsed_ms();
    let result = RunResult::finished(
        started_at,
        argv,
        stop.is_requested(),
        environment,
        SuiteResult::Index(outcome),
    );
    let id = store.save(&result)?;
    let SuiteResult::Index(r) = &result.suites[0] else {
        unreachable!("built above")
    };
    let text = render::index::report(&result, r);
    let files = write_reports(
        &args.results_dir,
        &result.environment.hostname,
        &text,
        &render::index::html(&result, r),
    );
    if global.json {
        println!("{}", render::json::to_json(&result)?);
    } else {
        println!("\n{text}");
        match &files {
            Ok(path) => println!("Reports: {} and {}.html", path.display(), path.display()),
            Err(e) => eprintln!("warning: reports not written: {e:#}"),
        }
        println!("Stored as result {id} in {}.", store.path().display());
    }
    Ok(if stop.is_requested() {
        stop.exit_code()
    } else {
        0
    })
}

/// The CPUs this process may really use: its affinity mask, and the cgroup quota rounded up,
/// whichever is smaller. Never capped at a fixed count (UnixBench stopped at 16).
pub(super) fn usable_cpus(env: &Environment) -> usize {
    let quota = env
        .cgroup_cpu_limit
        .as_ref()
        .map_or(usize::MAX, |l| l.cpus().ceil().max(1.0) as usize);
    env.cpus_allowed.min(quota).max(1)
}

/// LANG, and the character map and collation the C library uses under it.
pub(super) fn language() -> String {
    let lang = std::env::var("LANG").unwrap_or_else(|_| "unset".into());
    // SAFETY: setlocale and nl_langinfo return pointers to static strings (or null).
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
        let read = |p: *const libc::c_char| {
            if p.is_null() {
                "?".to_string()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        let charmap = read(libc::nl_langinfo(libc::CODESET));
        let collate = read(libc::setlocale(libc::LC_COLLATE, std::ptr::null()));
        format!("{lang} (charmap=\"{charmap}\", collate=\"{collate}\")")
    }
}

/// Writes `results/HOST-YYYY-MM-DD-NN` and its `.html`, NN the first number not yet used.
fn write_reports(dir: &Path, host: &str, text: &str, html: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let day = chrono::Local::now().format("%Y-%m-%d");
    for n in 1..1000 {
        let path = dir.join(format!("{host}-{day}-{n:02}"));
        let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        else {
            continue;
        };
        f.write_all(text.as_bytes())?;
        std::fs::write(path.with_extension("html"), html)?;
        return Ok(path);
    }
    anyhow::bail!("no free report name in {}", dir.display())
}

/// UnixBench's progress: "1 x Dhrystone 2 using register variables  1 2 3 ...".
struct Console {
    quiet: bool,
    json: bool,
    verbose: bool,
}

impl Console {
    fn out(&self, text: &str) {
        if self.quiet {
            return;
        }
        if self.json {
            eprint!("{text}");
        } else {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
    }
}

impl IndexObserver for Console {
    fn pass_begins(&mut self, copies: usize) {
        self.out(&format!(
            "\n--- {copies} parallel cop{} of each test ---\n",
            if copies == 1 { "y" } else { "ies" }
        ));
    }

    fn test_begins(&mut self, t: &TestInfo, copies: usize, _iterations: usize) {
        self.out(&format!("{copies} x {} ", t.msg));
    }

    fn iteration_done(&mut self, _t: &TestInfo, index: usize, pass: &Pass) {
        if self.verbose {
            self.out(&format!(
                " {}:{:.1}/{:.1}s",
                index + 1,
                pass.count,
                pass.time_s
            ));
        } else {
            self.out(&format!(" {}", index + 1));
        }
    }

    fn test_done(&mut self, _r: &TestResult) {
        self.out("\n");
    }

    fn skipped(&mut self, s: &Skipped) {
        self.out(&format!("{} skipped: {}\n", s.name, s.reason));
    }
}
