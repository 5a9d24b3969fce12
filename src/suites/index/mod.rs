//! `index`: UnixBench. Micro-benchmarks run for constant time in one or more passes of N
//! parallel copies, scored against the baseline machine George into the BYTE index.
//! See docs/index.md.

pub mod event;
mod part;
pub use event::IndexEvent;
pub use part::run_parts;
pub mod native;
mod pass;
pub mod programs;
pub mod registry;

use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, Context, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::event::{Event, Events, EVERY_UNIT};
use super::{reference, Plan, Unit};
use crate::error::UsageError;
use crate::model::account::Account;
use crate::model::index::scoring::{self, CopyReport};
use crate::model::index::Category;
use crate::model::index::{IndexPass, IndexResult, IndexSettings, Order, Skipped, TestResult};
use crate::model::SuiteResult;
use crate::platform::account::{Probe, Task};

use crate::platform::clock::monotonic_ns;
use crate::platform::dir::Dir;
use crate::platform::locale;
use crate::platform::private_dir::PrivateDir;
use crate::platform::sched;
use crate::platform::signals::sleep_until_unless;
use crate::platform::xvfb::Xvfb;
use crate::text::Text;
use crate::workers::{self, killing_on_stop, Channel, Worker};
use pass::{PassRun, Running};
use programs::small;
use registry::TestInfo;

/// Most iterations of one test (`-i`): UnixBench's default is 10.
pub const MAX_ITERATIONS: usize = 1000;
/// Most seconds one run of a test may last (`--seconds`): a day.
pub const MAX_SECONDS: f64 = 86_400.0;
/// The shortest a graphics test can run (glxgears: a 5 s warm-up, then a 5 s report).
pub const GRAPHICS_FLOOR_S: f64 = 10.0;
/// Fewest seconds one run of a test may last: below a hundredth of a second a run counts the
/// start of a copy, not the test (`--seconds 1e-9` ran nothing and scored it).
pub const MIN_SECONDS: f64 = 0.01;
/// Run's sleeps before every iteration, between its two syncs.
const PAUSES_S: [f64; 2] = [1.0, 2.0];
/// Their sum.
const PAUSE_S: f64 = PAUSES_S[0] + PAUSES_S[1];
/// Most passes (`-c` given this many times).
pub const MAX_PASSES: usize = 64;
/// Copies per usable CPU beyond which a pass measures the run queue, not the tests.
pub const COPIES_PER_CPU: usize = 64;
/// Processes one copy may have at once (the shell test's copy runs 16 pipelines of 4).
pub const PROCESSES_PER_COPY: u64 = 80;

/// The most copies a pass may run: 64 per usable CPU, and no more than the process limit
/// leaves room for.
pub fn max_copies(usable_cpus: usize, process_limit: Option<u64>) -> usize {
    let by_cpus = usable_cpus.max(1).saturating_mul(COPIES_PER_CPU);
    match process_limit {
        Some(l) => by_cpus.min((l / PROCESSES_PER_COPY).max(1) as usize),
        None => by_cpus,
    }
}

/// A validated index configuration.
#[derive(Debug, Clone)]
pub struct IndexConfig {
    pub settings: IndexSettings,
    pub tests: Vec<&'static TestInfo>,
    /// Where the tests' files go (a private directory is made there).
    pub workdir: PathBuf,
    /// The user's X display ($DISPLAY), for the graphics tests.
    pub display: Option<String>,
    /// Where the C tests are built and kept (None: the built-in versions run).
    pub cache_dir: Option<PathBuf>,
}

impl IndexConfig {
    /// `process_limit`: the processes this user may run (RLIMIT_NPROC), None if unlimited.
    pub fn new(
        mut settings: IndexSettings,
        usable_cpus: usize,
        process_limit: Option<u64>,
        workdir: PathBuf,
        display: Option<String>,
    ) -> Result<Self, UsageError> {
        if settings.iterations == 0 {
            return Err(UsageError::new("-i must be at least 1 iteration (got 0)"));
        }
        if settings.iterations > MAX_ITERATIONS {
            return Err(UsageError::new(format!(
                "-i must be at most {MAX_ITERATIONS} iterations (got {})",
                settings.iterations
            )));
        }
        if settings.copies.contains(&0) {
            return Err(UsageError::new("-c must be at least 1 copy (got 0)"));
        }
        let max_copies = max_copies(usable_cpus, process_limit);
        if let Some(&c) = settings.copies.iter().find(|&&c| c > max_copies) {
            return Err(UsageError::new(format!(
                "-c {c} is more copies than this host can run sensibly: at most {max_copies} ({} per usable CPU, {usable_cpus} usable{})",
                COPIES_PER_CPU,
                match process_limit {
                    Some(l) => format!(", and room for {PROCESSES_PER_COPY} processes a copy in the limit of {l} (ulimit -u)"),
                    None => String::new(),
                }
            )));
        }
        if settings.copies.len() > MAX_PASSES {
            return Err(UsageError::new(format!(
                "-c may be given at most {MAX_PASSES} times (got {})",
                settings.copies.len()
            )));
        }
        if let Some(s) = settings.seconds {
            if !s.is_finite() || !(MIN_SECONDS..=MAX_SECONDS).contains(&s) {
                return Err(UsageError::new(format!(
                    "--seconds must be at least {MIN_SECONDS} and at most {MAX_SECONDS} (got {s})"
                )));
            }
        }
        if settings.lang.is_empty() || settings.lang.raw().contains(['\0', '=']) {
            return Err(UsageError::new(format!(
                "--lang must be a locale name such as en_US.utf8 (got {:?})",
                settings.lang
            )));
        }
        if let Some(p) = settings.adaptive_pct {
            if !p.is_finite() || p <= 0.0 {
                return Err(UsageError::new("--adaptive must be a percentage above 0"));
            }
        }
        let names: Vec<String> = if settings.requested.is_empty() {
            vec!["index".to_string()]
        } else {
            settings
                .requested
                .iter()
                .map(|n| n.raw().to_string())
                .collect()
        };
        let tests = registry::expand(&names)?;
        if settings.copies.is_empty() {
            // UnixBench: one pass with one copy, and one with N copies on a multi-CPU host.
            settings.copies.push(1);
            if usable_cpus > 1 {
                settings.copies.push(usable_cpus);
            }
        }
        settings.requested = names.into_iter().map(Text::from).collect();
        settings.tests = tests.iter().map(|t| Text::from(t.name)).collect();
        Ok(IndexConfig {
            settings,
            tests,
            workdir,
            display,
            cache_dir: None,
        })
    }

    /// Seconds one run of `t` lasts.
    pub fn duration_s(&self, t: &TestInfo) -> f64 {
        match (self.settings.seconds, self.settings.quick) {
            (Some(s), _) => s,
            (None, true) => (t.duration_s as f64 / 10.0).max(1.0),
            (None, false) => t.duration_s as f64,
        }
    }

    /// What the run measures: every test at every number of copies, its iterations each
    /// about as long as the test, Run's pause before it, fstime's own pauses and priming
    /// phases and the copies' start included.
    pub fn plan(&self) -> Plan {
        let mut units = Vec::new();
        for &copies in &self.settings.copies {
            for &t in &self.tests {
                let d = self.duration_s(t);
                let scale = (d / t.duration_s.max(1) as f64).min(1.0);
                // fstime at UnixBench's 30 s: settle 4 s; read: + 2 s writing and 4 s; copy:
                // + 2 s writing, 2 s reading and their 8 s of settling, then 3 s.
                let fs = match t.program {
                    registry::Program::FileWrite { .. } => 4.0,
                    registry::Program::FileRead { .. } => 10.0,
                    registry::Program::FileCopy { .. } => 15.0,
                    _ => 0.0,
                } * (d / 30.0).min(1.0);
                units.push(Unit::new(
                    format!("{copies} x {}", t.name),
                    self.iterations(t) as u64,
                    PAUSE_S * scale + d + fs + 0.3,
                ));
            }
        }
        Plan { units }
    }

    pub fn iterations(&self, t: &TestInfo) -> usize {
        if self.settings.quick {
            if t.slow {
                1
            } else {
                3
            }
        } else {
            scoring::iterations(self.settings.iterations, t.slow)
        }
    }
}

/// The worker spec of one copy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IndexWorkerSpec {
    pub test: String,
    pub seconds: f64,
    /// The run's private directory, as a descriptor the copy inherits: it works there by
    /// `fchdir`, never by a path another user could swap.
    pub dir_fd: RawFd,
    pub cpu: Option<usize>,
    /// The X display of a graphics test.
    #[serde(default)]
    pub display: Option<String>,
    /// The C tests' program, for a test that has a C version: a descriptor the copy inherits
    /// and executes (`fexecve`).
    #[serde(default)]
    pub program_fd: Option<RawFd>,
}

/// The graphics tests' display: a private Xvfb when asked for, or when there is no display and
/// Xvfb is installed (the server lives as long as the returned value); else $DISPLAY. Without
/// one, the reason the graphics tests are skipped.
fn graphics_display(config: &IndexConfig) -> (Option<Xvfb>, Result<String, String>) {
    if let (false, Some(d)) = (config.settings.xvfb, &config.display) {
        return (None, Ok(d.clone()));
    }
    if programs::looper::missing_program(&["Xvfb"]).is_some() {
        let why = if config.settings.xvfb {
            "--xvfb: Xvfb is not installed (Debian: xvfb)"
        } else {
            "no X display: DISPLAY is unset and Xvfb is not installed (Debian: xvfb)"
        };
        return (None, Err(why.into()));
    }
    match Xvfb::start() {
        Ok(x) => {
            let d = x.display.clone();
            (Some(x), Ok(d))
        }
        Err(e) => (None, Err(format!("{e:#}"))),
    }
}

/// Where to get a host program the tests need.
/// Whether a test can run on this host as far as its programs go: Err names the program
/// missing from PATH and the package that has it. (The graphics tests also need a display or
/// `--xvfb`, which a run checks when it starts.)
pub fn supported(t: &TestInfo) -> Result<(), String> {
    match programs::looper::missing_program(programs::needs(t.program)) {
        Some(p) => Err(format!("the host has no {p:?} on PATH{}", install_hint(&p))),
        None => Ok(()),
    }
}

fn install_hint(program: &str) -> &'static str {
    match program {
        "x11perf" => " (Debian: x11-apps)",
        "glxgears" => " (Debian: mesa-utils)",
        "cc" => " (Debian: gcc)",
        "dc" => " (Debian: dc)",
        _ => "",
    }
}

/// The graphics tests run the host's programs, which cannot be made shorter than they are:
/// x11perf's whole seconds after its own calibration, glxgears' warm-up and 5 s reports.
fn graphics_floor_note(config: &IndexConfig, events: &mut dyn Events) {
    if let Some(s) = config.settings.seconds.filter(|&s| s < GRAPHICS_FLOOR_S) {
        events.event(Event::Note(&format!(
            "--seconds {s} does not shorten the graphics tests: a 2D test runs x11perf four times for at least 1 s each after x11perf's own calibration, and ubgears needs glxgears' {GRAPHICS_FLOOR_S} s (a 5 s warm-up and one 5 s report)"
        )));
    }
}

/// The C tests, built with the host's compiler where it has one; else why the built-in
/// versions run, said as a note.
fn native_tests(
    config: &IndexConfig,
    dir: &Dir,
    events: &mut dyn Events,
) -> (Option<native::Programs>, Option<String>) {
    let (native, native_note) = if !config.tests.iter().any(|t| native::has_native(t.program)) {
        (None, None)
    } else if config.settings.builtin_cpu_tests {
        (None, Some("--builtin-cpu-tests".to_string()))
    } else {
        match config
            .cache_dir
            .as_deref()
            .map(|cache| native::build(cache, dir))
        {
            Some(Ok(b)) => (Some(b), None),
            Some(Err(why)) => (None, Some(why)),
            None => (None, Some("no cache directory to build in".to_string())),
        }
    };
    if let Some(why) = native
        .as_ref()
        .and_then(|p| p.build.untrusted_cache.as_ref())
    {
        events.event(Event::Note(&format!(
            "the compiled tests are built for this run alone, not taken from the cache: {why}"
        )));
    }
    if let Some(why) = &native_note {
        events.event(Event::Note(&format!(
            "the compiled tests run their built-in versions: {why}"
        )));
    }
    (native, native_note)
}

/// Runs the configured passes. `exe` is the binary copies are started from.
pub fn run(
    config: &IndexConfig,
    exe: &Path,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> Result<IndexResult> {
    let language = locale::language(config.settings.lang.raw());
    if !language.installed && config.tests.iter().any(|t| t.program.reads_language()) {
        events.event(Event::Note(&format!(
            "the tests' language: {}",
            language.describe()
        )));
    }
    let dir = PrivateDir::create(&config.workdir, "index")?;
    programs::looper::write_assets(dir.dir())?;
    let cpus = sched::allowed_cpus();
    let wants_graphics = config.tests.iter().any(|t| registry::is_graphics(t));
    let (xvfb, display) = if wants_graphics {
        graphics_floor_note(config, events);
        graphics_display(config)
    } else {
        (None, Err(String::new()))
    };
    let (native, native_note) = native_tests(config, dir.dir(), events);
    let ctx = CopyContext {
        exe,
        lang: config.settings.lang.raw(),
        dir: dir.dir(),
        cpus: &cpus,
        pin: config.settings.pin,
        native: native.as_ref(),
        probe: crate::platform::account::enabled().then(Probe::default),
    };
    // The result without its passes: what checkpoints and the end fill in.
    let base = IndexResult {
        settings: config.settings.clone(),
        language: language.describe().into(),
        graphics_display: display_label(&display, xvfb.is_some()).map(Text::from),
        native: native.as_ref().map(|p| p.build.clone()),
        native_note: native_note.clone().map(Text::from),
        passes: Vec::new(),
    };
    let mut passes = Vec::new();
    let per_pass: u64 = config
        .tests
        .iter()
        .map(|t| config.iterations(t) as u64)
        .sum();
    let units = per_pass * config.settings.copies.len() as u64;
    for (p, &copies) in config.settings.copies.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        events.event(Event::Index(IndexEvent::PassBegins { copies }));
        let mut pass = PassRun::new(config, copies, &display, &ctx);
        let running = Running {
            config,
            ctx: &ctx,
            stop,
            base: &base,
            passes: &passes,
            started_ns: monotonic_ns(),
            units_before: per_pass * p as u64,
            units,
        };
        match config.settings.order {
            Order::Blocks => pass.in_blocks(&running, events),
            Order::Rounds => pass.in_rounds(&running, events),
        }
        // Skipped and failed tests, and the end of the pass.
        events.event(Event::Partial {
            every: EVERY_UNIT,
            build: &|| SuiteResult::Index(pass.so_far(&base, &passes)),
        });
        passes.push(pass.pass());
    }
    drop(xvfb);
    Ok(IndexResult { passes, ..base })
}

/// The Run script's pause before every iteration of a test, `sync; sleep 1; sync; sleep 2`,
/// shortened in proportion when the test runs shorter than UnixBench's duration (`--quick`,
/// `--seconds`). False when a stop came during it.
fn settle(config: &IndexConfig, t: &TestInfo, stop: &AtomicBool) -> bool {
    let scale = (config.duration_s(t) / t.duration_s.max(1) as f64).min(1.0);
    for pause_s in PAUSES_S {
        // SAFETY: no preconditions.
        unsafe { libc::sync() };
        let until = monotonic_ns() + (pause_s * scale * 1e9) as u64;
        if !sleep_until_unless(until, stop) {
            return false;
        }
    }
    true
}

/// What every copy of a run needs: the binary to start, the private directory, the CPUs to pin
/// to, and the C tests' program.
struct CopyContext<'a> {
    exe: &'a Path,
    /// LANG for the copies and everything they start.
    lang: &'a str,
    dir: &'a Dir,
    cpus: &'a [usize],
    pin: bool,
    native: Option<&'a native::Programs>,
    /// Where each iteration's account is read; None with `HOSTBENCH_NO_ACCOUNT`.
    probe: Option<Probe>,
}

impl CopyContext<'_> {
    /// The CPUs an iteration of `copies` runs on, where the host's speed is read beside it:
    /// the copies' own when pinned, else every CPU the run may use.
    fn reference_cpus(&self, copies: usize) -> Vec<usize> {
        if !self.pin {
            return self.cpus.to_vec();
        }
        let mut cpus: Vec<usize> = (0..copies)
            .map(|k| self.cpus[k % self.cpus.len()])
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }
}

/// Where the graphics tests drew, for the report.
fn display_label(display: &Result<String, String>, private: bool) -> Option<String> {
    display.as_ref().ok().map(|d| {
        if private {
            format!("Xvfb {d} (private, started by hostbench)")
        } else {
            format!("{d} ($DISPLAY)")
        }
    })
}

/// A pass of the tests that ran, with its indexes.
fn finish_pass(
    copies: usize,
    started_at: DateTime<Utc>,
    tests: Vec<TestResult>,
    skipped: Vec<Skipped>,
    failed: Vec<Skipped>,
) -> IndexPass {
    let index_values: Vec<f64> = tests
        .iter()
        .filter(|r| r.in_index)
        .filter_map(|r| r.index)
        .collect();
    let of = |category| -> Vec<f64> {
        tests
            .iter()
            .filter(|r| r.category == category)
            .filter_map(|r| r.index)
            .collect()
    };
    let (v2, v3, misc) = (of(Category::TwoD), of(Category::ThreeD), of(Category::Misc));
    IndexPass {
        copies,
        started_at,
        finished_at: Utc::now(),
        system_index: scoring::overall_index(&index_values),
        indexed: index_values.len(),
        index_tests: registry::index_tests(Category::System),
        index_2d: scoring::overall_index(&v2),
        indexed_2d: v2.len(),
        index_3d: scoring::overall_index(&v3),
        indexed_3d: v3.len(),
        index_misc: scoring::overall_index(&misc),
        indexed_misc: misc.len(),
        index_tests_2d: registry::index_tests(Category::TwoD),
        index_tests_3d: registry::index_tests(Category::ThreeD),
        index_tests_misc: registry::index_tests(Category::Misc),
        tests,
        skipped,
        failed,
    }
}

/// Starts `copies` workers, lets them go together, and collects their reports, with the host's
/// account of the copies' own processes from the start to the last report (read before they
/// are reaped; the processes a copy starts are not among them). None when a stop was
/// requested: a watcher then kills the copies at once rather than waiting out a test that may
/// last a minute.
#[allow(clippy::too_many_arguments)]
fn run_iteration(
    t: &TestInfo,
    copies: usize,
    display: Option<&str>,
    seconds: f64,
    ctx: &CopyContext<'_>,
    stop: &AtomicBool,
) -> Result<Option<(Vec<CopyReport>, Option<Account>)>> {
    let mut workers = Vec::with_capacity(copies);
    // The program, opened once for every copy of the iteration through the held build
    // directory, and closed here when they have all started.
    let program = match ctx.native {
        Some(p) => p.open(t.program).map_err(|why| anyhow!(why))?,
        None => None,
    };
    let dir_fd = ctx.dir.raw_fd();
    let program_fd = program.as_ref().map(|f| f.as_raw_fd());
    let handed: Vec<RawFd> = std::iter::once(dir_fd).chain(program_fd).collect();
    for k in 0..copies {
        let spec = workers::spec_json(
            "index",
            &IndexWorkerSpec {
                test: t.name.into(),
                seconds,
                dir_fd,
                cpu: ctx.pin.then(|| ctx.cpus[k % ctx.cpus.len()]),
                display: display.map(String::from),
                program_fd,
            },
        )?;
        let mut w = Worker::spawn_with(
            ctx.exe,
            &spec,
            &format!("{} copy {}", t.name, k + 1),
            &handed,
            &[("LANG", ctx.lang)],
        )?;
        w.expect("ready")?;
        workers.push(w);
    }
    let tasks: Vec<Task> = workers
        .iter()
        .map(|w| Task {
            pid: w.pid(),
            tid: w.pid(),
        })
        .collect();
    // The host's speed on the copies' CPUs, read while they wait to start and after they end.
    let reference_cpus = ctx.reference_cpus(copies);
    let before = ctx
        .probe
        .as_ref()
        .and_then(|_| reference::read(&reference_cpus));
    let opened = ctx.probe.as_ref().map(|p| p.start(&tasks));
    for w in &mut workers {
        w.send("start")?;
    }
    let pids: Vec<i32> = workers.iter().map(|w| w.pid() as i32).collect();
    let collected = killing_on_stop(&pids, stop, || {
        workers
            .iter_mut()
            .map(|w| w.read_report())
            .collect::<Result<Vec<CopyReport>>>()
    });
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let reports = collected?;
    let account = ctx.probe.as_ref().zip(opened).map(|(p, o)| Account {
        reference_ns: reference::around(before, reference::read(&reference_cpus)),
        ..Account::of(p.end(o, &tasks))
    });
    for w in workers {
        w.finish()?;
    }
    Ok(Some((reports, account)))
}

/// The worker side of one copy (the role `index`): waits for `start`, runs the test, reports.
pub fn run_copy(spec: IndexWorkerSpec) -> Result<()> {
    let mut ch = Channel::stdio();
    if let Some(cpu) = spec.cpu {
        sched::pin_to_cpu(cpu).context("pinning the copy (--pin)")?;
    }
    let test = registry::find(&spec.test).ok_or_else(|| anyhow!("unknown test {}", spec.test))?;
    ch.say("ready")?;
    if !ch.wait_for("start") {
        return Ok(());
    }
    // The programs a copy runs work in the run's private directory (their files, the
    // looper's commands), as UnixBench's run in its tmp directory: entered through the
    // inherited descriptor, so every relative name below is in that very directory.
    rustix::process::fchdir(crate::platform::dir::borrowed(spec.dir_fd))
        .context("entering the run's private directory")?;
    // SAFETY: the descriptor was handed to this process and is not used after this.
    unsafe { libc::close(spec.dir_fd) };
    let here = Path::new(".");
    if let Some(fd) = spec.program_fd {
        let now = crate::platform::clock::monotonic_ns();
        let deadline = now + (spec.seconds * 1e9) as u64;
        if let Some(args) = native::arguments(test.program, spec.seconds, now, deadline) {
            drop(ch);
            // argv[0] names the running program for execl's chain, which executes itself
            // again: through /proc, the very file executed here, not a name to look up.
            let e = small::exec_fd(fd, "/proc/self/exe", args);
            return Channel::stdio().say(&format!("error {e:#}"));
        }
    }
    if small::runs_small(test.program) {
        let now = crate::platform::clock::monotonic_ns();
        drop(ch);
        let e = small::exec(test.program, now, now + (spec.seconds * 1e9) as u64);
        return Channel::stdio().say(&format!("error {e:#}"));
    }
    // A write past the file-size limit then fails with EFBIG, like a full disk, instead of
    // killing the copy.
    // SAFETY: changing a signal's disposition to ignore.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    match programs::run(test, spec.seconds, here, spec.display.as_deref()) {
        Ok(report) => ch.report(&report),
        // The coordinator reports the failure; the test's own files are already removed.
        Err(e) => ch.say(&format!("error {e:#}")),
    }
}

impl crate::suites::Part for IndexConfig {
    fn plan(&self) -> Plan {
        IndexConfig::plan(self)
    }

    fn suite(&self) -> &'static str {
        "index"
    }

    fn measures(&self) -> String {
        let s = &self.settings;
        let tests = self.tests.len();
        format!(
            "{}{} test{}{}{}, {} pass{} ({} cop{})",
            crate::suites::placement(s.pin),
            tests,
            if tests == 1 { "" } else { "s" },
            if s.quick { " in the quick mode" } else { "" },
            match s.order {
                Order::Blocks => "",
                Order::Rounds => " in rounds",
            },
            s.copies.len(),
            if s.copies.len() == 1 { "" } else { "es" },
            crate::suites::listed(s.copies.iter()),
            if s.copies == [1] { "y" } else { "ies" }
        )
    }

    fn measure_part(
        &self,
        with: &crate::suites::PartInputs<'_>,
        stop: &AtomicBool,
        events: &mut dyn Events,
    ) -> Result<(crate::model::SuiteResult, Option<String>)> {
        Ok((
            crate::model::SuiteResult::Index(run(self, with.exe, stop, events)?),
            None,
        ))
    }
}
