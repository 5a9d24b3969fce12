//! The life of one measuring command's store, the same for every suite and for `hostbench run`:
//! opened before anything is measured, written as each unit finishes, written whole at the end.
//! Nothing measured is lost: a SIGKILL keeps what had finished, and a failed store keeps the
//! result in a JSON file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::args::{MeasureArgs, Repeating};
use super::output::Output;
use crate::compare::{host_spread, HostSpread};
use crate::error::UsageError;
use crate::model::noise::NoiseCheck;
use crate::model::run_state::{Outcome, RunState};
use crate::model::{Environment, Repeat, RunResult, SuiteResult};
use crate::platform::dir::{Dir, Trust};
use crate::platform::host::StealClock;
use crate::platform::private_dir::{sweep_stale, PrivateDir};
use crate::platform::signals::StopSignal;
use crate::render;
use crate::render::exporters::openmetrics::{HostMetrics, ResultMetrics};
use crate::store::{fallback, ResultStore, StoreLocation, BUSY_TIMEOUT};
use crate::text::Text;

/// How long a checkpoint waits for a store that another process holds: it is taken between two
/// units of measuring, and is skipped rather than delay the next one (the next checkpoint, or
/// the final store with its full timeout, tries again).
const CHECKPOINT_BUSY: Duration = Duration::from_millis(200);

/// A measuring command's store and stop signal. It opens the store before anything is measured
/// (a bad path must not cost a run), installs the stop signal, and notes the start and the
/// steal clock. While measuring it stores what has finished as it goes (after each unit, test,
/// pair or run, marked incomplete); after measuring it stores the whole result over it, or,
/// when the store fails, keeps it in the fallback store (a server's run) or a JSON file, and
/// gives the exit code. `measuring::run`
/// leads a command through it.
pub struct Session {
    pub out: Output,
    pub stop: StopSignal,
    pub environment: Environment,
    store: Box<dyn ResultStore>,
    argv: Vec<String>,
    started_at: DateTime<Utc>,
    steal: StealClock,
    /// The row the run is stored in as it goes, once something was measured.
    row: Option<i64>,
    last_checkpoint: Option<Instant>,
    /// One run of a `--repeat N`: its results carry the group.
    repeating: Option<Repeating>,
    /// `--no-noise-check` not given: the check is made before measuring and after.
    checks_noise: bool,
    noise_check: Option<NoiseCheck>,
    /// The run's state, recorded in the store as it starts and as it ends. Its UUID, label and
    /// tags are the result's: the same in every checkpoint and in the final result.
    state: RunState,
    /// Why the store `--db` names was not used: it could not be reached at the start, and the
    /// run is stored in the fallback store instead (`--fallback-db`).
    fell_back: Option<FellBack>,
    /// Where the result goes if the server `--db` names took the run as it started and fails
    /// it at the end: the fallback store (None for an SQLite store, or a run in the fallback
    /// store already).
    spool: Option<Spool>,
    /// `--textfile-dir`, held: where the run's metrics go for node_exporter.
    textfile: Option<Textfile>,
    /// What went wrong beside the measurement (the metrics directory unusable): said at once,
    /// and kept in the run's state as it ends.
    warnings: Vec<String>,
}

/// The fallback store of a run on a PostgreSQL server, and the server's name for the `results
/// push` that sends a result kept there on.
struct Spool {
    fallback: StoreLocation,
    to: String,
}

/// The store `--db` names could not be opened as the run started: why, and its name (a URL
/// without its password) for the `results push` that sends the result on.
pub struct FellBack {
    why: String,
    to: String,
}

/// Where a finished result went.
pub enum Stored {
    /// In the store, as this id.
    Id(i64),
    /// The store failed (the error); the result is in this JSON file. `partial`: the row that
    /// holds the run up to its last checkpoint, marked incomplete.
    File {
        path: PathBuf,
        error: String,
        partial: Option<i64>,
    },
    /// The store and every fallback place failed.
    Nowhere { error: String },
}

/// A finished command: its result and where it was stored.
pub struct Finished {
    pub result: RunResult,
    pub stored: Stored,
    pub out: Output,
    stop: StopSignal,
    store_location: String,
    store: Box<dyn ResultStore>,
    state: RunState,
    fell_back: Option<FellBack>,
    textfile: Option<Textfile>,
    warnings: Vec<String>,
}

/// `--textfile-dir`: the directory node_exporter's textfile collector reads, held open from the
/// start (a path swapped later is not followed). Its two files are each replaced whole (a new
/// file renamed over the old one), so the collector never reads half of one.
pub struct Textfile {
    dir: Dir,
}

impl Textfile {
    /// The run's state, in `hostbench-run.prom`.
    const RUN: &'static str = "hostbench-run.prom";
    /// The latest result's headline figures, in `hostbench.prom`.
    const RESULT: &'static str = "hostbench.prom";

    /// The directory `path` names, reached without following another user's link. One that
    /// cannot be used is a warning, never a refused run: a node_exporter directory removed
    /// must not stop every scheduled run.
    fn open(path: &Path) -> Result<Textfile, String> {
        let dir = Dir::open(path, Trust::Reach).map_err(|e| {
            format!(
                "--textfile-dir {}: {e:#}; no metrics written",
                path.display()
            )
        })?;
        Ok(Textfile { dir })
    }

    /// Writes the run's state; a failure is said, never fatal (the run and its store matter
    /// more than its metrics).
    fn run(&self, state: &RunState, out: &Output) {
        let text = render::exporters::openmetrics::hosts(&[HostMetrics {
            host: state.host_name(),
            result: None,
            run: Some(state),
            retired_at: None,
        }]);
        self.write(Self::RUN, &text, out);
    }

    /// Writes the result's headline figures.
    fn result(&self, result: &RunResult, out: &Output) {
        let figures = crate::model::headline::HeadlineFigures::of(result);
        let text = render::exporters::openmetrics::hosts(&[HostMetrics {
            host: result.host_name(),
            result: Some(ResultMetrics {
                started_at: result.started_at,
                incomplete: result.incomplete,
                figures: (!result.incomplete).then_some(&figures),
                info: Some(render::exporters::openmetrics::ResultInfo::of(result)),
            }),
            run: None,
            retired_at: None,
        }]);
        self.write(Self::RESULT, &text, out);
    }

    fn write(&self, name: &str, text: &str, out: &Output) {
        if let Err(e) = self.dir.write_replacing(name, text.as_bytes(), 0o644) {
            out.err(&format!("hostbench: warning: --textfile-dir: {e:#}\n"));
        }
    }
}

impl Session {
    /// Starts a measuring command once its options are valid: the store opens (a path that
    /// cannot be opened is the user's to fix, exit 2), the stop signal is installed, the clock
    /// starts.
    pub fn start(
        measure: &MeasureArgs,
        argv: Vec<String>,
        environment: Environment,
    ) -> Result<Self> {
        let mut warnings = Vec::new();
        let textfile = match measure.own.textfile_dir.as_deref().map(Textfile::open) {
            Some(Ok(t)) => Some(t),
            Some(Err(why)) => {
                warnings.push(why);
                None
            }
            None => None,
        };
        let (store, fell_back) = open_or_fall_back(measure)?;
        let stop = StopSignal::install()?;
        let started_at = Utc::now();
        let state = RunState {
            uuid: crate::model::new_uuid(),
            host: environment.host.hostname.clone(),
            host_label: measure.own.host_label.clone().map(Text::from),
            command: Text::new(argv.join(" ")).truncated(crate::model::run_state::MAX_COMMAND),
            started_at,
            ended_at: None,
            outcome: Outcome::Running,
            why: None,
            stored: None,
            tags: measure
                .own
                .tags
                .iter()
                .map(|(k, v)| (Text::from(k), Text::from(v)))
                .collect(),
            owner: None,
        };
        let mut session = Session {
            out: measure.print.output(),
            stop,
            environment,
            store,
            argv,
            started_at,
            steal: StealClock::start(),
            row: None,
            last_checkpoint: None,
            repeating: measure.own.repeating.clone(),
            checks_noise: !measure.own.no_noise_check,
            noise_check: None,
            state,
            fell_back,
            spool: None,
            textfile,
            warnings,
        };
        // "running" until it says how it ended: a run killed outright stays so, seen as such.
        session.claim(measure)?;
        session.spool = match (&session.fell_back, measure.store.location()?) {
            (None, to @ StoreLocation::Postgres { .. }) => Some(Spool {
                fallback: measure.fallback.location()?,
                to: to.display(),
            }),
            _ => None,
        };
        for w in &session.warnings {
            session.out.err(&format!("hostbench: warning: {w}\n"));
        }
        if let Some(f) = &session.fell_back {
            let here = session.store.location();
            session.out.err(&format!(
                "hostbench: warning: {}; measuring anyway, into {here}: send the result on later with `hostbench results push --db {here} --to {}`\n",
                f.why, f.to
            ));
        }
        if let Some(t) = &session.textfile {
            t.run(&session.state, &session.out);
        }
        Ok(session)
    }

    /// The run's first write: its "running" state, which claims the run's UUID in the store
    /// before any other login can see it. A server that refuses it (this login may not write
    /// for this host, docs/fleet.md) would refuse the result too: the run measures into the
    /// fallback store, as when the server cannot be reached.
    fn claim(&mut self, measure: &MeasureArgs) -> Result<()> {
        let Err(e) = self.store.record_run(&self.state) else {
            return Ok(());
        };
        let location = measure.store.location()?;
        if self.fell_back.is_some() || !matches!(location, StoreLocation::Postgres { .. }) {
            warn_unrecorded(&*self.store, &self.state, &e, &self.out);
            return Ok(());
        }
        let (store, fell_back) = fall_back(measure, &location, &e)?;
        (self.store, self.fell_back) = (store, Some(fell_back));
        record(&mut *self.store, &self.state, &self.out);
        Ok(())
    }

    /// The command failed before it had a result (its work directory refused, a suite's setup
    /// failed): its run state says so, and why.
    pub fn failed(mut self, e: &anyhow::Error) {
        let why = crate::text::redact(&format!("{e:#}"));
        self.state.ended(Outcome::Failed, Some(&why), None);
        record(&mut *self.store, &self.state, &self.out);
        if let Some(t) = &self.textfile {
            t.run(&self.state, &self.out);
        }
    }

    /// The noise check before the suite starts (unless `--no-noise-check`): called once the
    /// options and the work directory are known good, just before measuring.
    pub fn check_noise(&mut self) {
        if self.checks_noise && self.noise_check.is_none() {
            self.noise_check = NoiseCheck::before(self.stop.flag());
        }
    }

    /// Marks a result with its UUID, the user's host label and tags, and a result of a repeated command
    /// with its group (until the group's first run is stored, its own row, or 0 before it has
    /// one).
    fn tag(&self, result: &mut RunResult) {
        result.host_label.clone_from(&self.state.host_label);
        result.tags.clone_from(&self.state.tags);
        result.uuid = Some(self.state.uuid.clone());
        if let Some(r) = &self.repeating {
            result.repeat = Some(Repeat {
                group: r.group.get().or(self.row).unwrap_or(0),
                run: r.run,
                of: r.of,
            });
        }
    }

    /// Once the first run of a group has a row, the group is named after it.
    fn name_group(&mut self, id: i64, result: &mut RunResult) {
        let Some(r) = &self.repeating else { return };
        if r.group.get().is_some() {
            return;
        }
        r.group.set(Some(id));
        if let Some(rep) = &mut result.repeat {
            if rep.group != id {
                rep.group = id;
                let _ = self
                    .store
                    .replace(id, result, &render::headline::run(result));
            }
        }
    }

    /// Whether a checkpoint `min_interval` after the last one would be stored now.
    fn checkpoint_due(&self, min_interval: Duration) -> bool {
        match self.last_checkpoint {
            Some(t) => t.elapsed() >= min_interval,
            None => true,
        }
    }

    /// Stores what has been measured so far (`build` makes it), marked incomplete, unless the
    /// last checkpoint is more recent than `min_interval`. Called between units of measuring;
    /// a store that is busy or failing skips this one.
    pub fn checkpoint(&mut self, min_interval: Duration, build: impl FnOnce() -> Vec<SuiteResult>) {
        if !self.checkpoint_due(min_interval) {
            return;
        }
        self.last_checkpoint = Some(Instant::now());
        let mut environment = self.environment.clone();
        environment.steal_ms_during_run = self.steal.elapsed_ms();
        let mut partial = RunResult::finished_suites(
            self.started_at,
            self.argv.clone(),
            true,
            environment,
            build(),
        );
        self.tag(&mut partial);
        partial.noise_check = self.noise_check.clone();
        if self.store.set_busy_timeout(CHECKPOINT_BUSY).is_err() {
            return;
        }
        match self.row {
            Some(id) => {
                let _ = self
                    .store
                    .replace(id, &partial, &render::headline::run(&partial));
            }
            None => {
                self.row = self
                    .store
                    .save(&partial, &render::headline::run(&partial))
                    .ok();
                if let Some(id) = self.row {
                    self.name_group(id, &mut partial);
                }
            }
        }
        let _ = self.store.set_busy_timeout(BUSY_TIMEOUT);
    }

    pub fn started_at(&self) -> DateTime<Utc> {
        self.started_at
    }

    /// Finished with the measuring: the result of `suites`, stored. `cut_short`: a failure
    /// ended the run early (a stop is known to the session).
    pub fn finish(mut self, suites: Vec<SuiteResult>, cut_short: bool) -> Finished {
        self.environment.steal_ms_during_run = self.steal.elapsed_ms();
        // The drift check, unless the run was stopped (then it would only delay the exit).
        if let Some(check) = &mut self.noise_check {
            check.finish(self.stop.flag());
        }
        let mut result = RunResult::finished_suites(
            self.started_at,
            std::mem::take(&mut self.argv),
            cut_short || self.stop.is_requested(),
            self.environment.clone(),
            suites,
        );
        self.tag(&mut result);
        result.noise_check = self.noise_check.take();
        if let (Some(r), false) = (&self.repeating, result.incomplete) {
            let heads = crate::model::headline::Column::all().iter();
            r.heads
                .borrow_mut()
                .push(heads.map(|c| (c.of)(&result).map(|f| f.value)).collect());
        }
        let _ = self.store.set_busy_timeout(BUSY_TIMEOUT);
        let headline = render::headline::run(&result);
        let saved = match self.row {
            Some(id) => self.store.replace(id, &result, &headline).map(|_| id),
            None => self.store.save(&result, &headline),
        };
        if let Ok(id) = saved {
            self.name_group(id, &mut result);
        }
        let stored = match saved {
            Ok(id) => Stored::Id(id),
            Err(e) => match self.spool_result(&result, &headline, &e) {
                Some(id) => Stored::Id(id),
                None => self.keep_in_file(&result, &e),
            },
        };
        Finished {
            result,
            stored,
            out: self.out,
            stop: self.stop,
            store_location: self.store.location(),
            store: self.store,
            state: self.state,
            fell_back: self.fell_back,
            textfile: self.textfile,
            warnings: self.warnings,
        }
    }

    /// The result a server took the run of and would not take at the end (it stopped
    /// answering, it refused the write), in the fallback store instead: the run's state is
    /// recorded there as it ends, and the next scheduled run (`results push`) sends both on, so
    /// the server's "running" ends too. None where the run has no fallback store or it fails as
    /// well.
    fn spool_result(
        &mut self,
        result: &RunResult,
        headline: &str,
        e: &anyhow::Error,
    ) -> Option<i64> {
        let spool = self.spool.take()?;
        let mut store = spool.fallback.open().ok()?;
        let id = store.save(result, headline).ok()?;
        self.store = store;
        self.fell_back = Some(FellBack {
            why: format!("{e:#}"),
            to: spool.to,
        });
        Some(id)
    }

    /// The result no store took, in a JSON file of the first place that takes it.
    fn keep_in_file(&self, result: &RunResult, e: &anyhow::Error) -> Stored {
        let error = format!("{e:#}");
        match fallback::save(
            result,
            &fallback::candidate_dirs(self.store.fallback_dir().as_deref()),
        ) {
            Ok(path) => Stored::File {
                path,
                error,
                partial: self.row,
            },
            Err(f) => Stored::Nowhere {
                error: format!("{error}; {f:#}"),
            },
        }
    }
}

/// The store `--db` names, or — when it is a PostgreSQL server that cannot be reached or will
/// not take results now — the fallback store (`--fallback-db`, an SQLite file), with why. A
/// run on a schedule then measures all the same and keeps its result for `results push`. An
/// SQLite path that cannot be opened is the user's to fix before a run (exit 2), as is a
/// fallback that cannot be opened either.
fn open_or_fall_back(measure: &MeasureArgs) -> Result<(Box<dyn ResultStore>, Option<FellBack>)> {
    let location = measure.store.location()?;
    // Checked before it is needed: a bad one is said now, not on the night the server is down.
    let fallback = measure.fallback.location()?;
    let e = match (measure.store.open(), &location) {
        (Ok(store), StoreLocation::Postgres { .. }) => {
            // Opened every night, not only the night the server is down: one that cannot
            // take the run (another user's directory, a file that is no store) is said now.
            fallback.open().map_err(|f| {
                UsageError::new(format!(
                    "the fallback store {f:#} (set another with --fallback-db)"
                ))
            })?;
            return Ok((store, None));
        }
        (Ok(store), StoreLocation::Sqlite(_)) => return Ok((store, None)),
        (Err(e), StoreLocation::Postgres { .. }) => e,
        (Err(e), StoreLocation::Sqlite(_)) => return Err(e),
    };
    let (store, fell_back) = fall_back(measure, &location, &e)?;
    Ok((store, Some(fell_back)))
}

/// The fallback store, opened because the server `location` names would not take the run
/// (`e`, why), with what the run says of it.
fn fall_back(
    measure: &MeasureArgs,
    location: &StoreLocation,
    e: &anyhow::Error,
) -> Result<(Box<dyn ResultStore>, FellBack)> {
    let why = format!("{e:#}");
    let store = measure.fallback.location()?.open().map_err(|f| {
        UsageError::new(format!(
            "{why}; and the fallback store {f:#} (set another with --fallback-db)"
        ))
    })?;
    let to = location.display();
    Ok((store, FellBack { why, to }))
}

/// Records the run's state in its store. One that cannot be recorded is said, not passed
/// over: `results hosts` would show that run as still running, or not at all.
fn record(store: &mut dyn ResultStore, state: &RunState, out: &Output) {
    if let Err(e) = store.record_run(state) {
        warn_unrecorded(store, state, &e, out);
    }
}

fn warn_unrecorded(store: &dyn ResultStore, state: &RunState, e: &anyhow::Error, out: &Output) {
    out.err(&format!(
        "hostbench: warning: the run's state ({}) could not be recorded in {}: {}\n",
        state.outcome.name(),
        store.location(),
        crate::model::label::printable(&crate::text::redact(&format!("{e:#}")), 300)
    ));
}

impl Finished {
    /// Records how the run ended (its state in the store it was stored in): interrupted by a
    /// signal; failed (`failed`, with `errors`), or not stored where it was asked to be;
    /// incomplete; or finished.
    pub fn record_outcome(&mut self, failed: bool, errors: &[String]) {
        let stored = match &self.stored {
            Stored::Id(id) => Some(format!("result {id} in {}", self.store_location)),
            Stored::File { path, .. } => Some(format!("file {}", path.display())),
            Stored::Nowhere { .. } => None,
        };
        let store_error = match &self.stored {
            Stored::Id(_) => self.fell_back.as_ref().map(|f| f.why.clone()),
            Stored::File { error, .. } | Stored::Nowhere { error } => Some(error.clone()),
        };
        let (outcome, why) = if let Some(signal) = self.stop.signal() {
            (
                Outcome::Interrupted,
                Some(format!("stopped by signal {signal}")),
            )
        } else if failed || store_error.is_some() {
            let mut why: Vec<String> = errors.to_vec();
            why.extend(store_error.map(|e| format!("not stored where asked: {e}")));
            (Outcome::Failed, Some(why.join("; ")))
        } else if self.result.incomplete {
            (Outcome::Incomplete, None)
        } else {
            (Outcome::Finished, None)
        };
        let why = why
            .into_iter()
            .chain(self.warnings.iter().cloned())
            .reduce(|a, b| format!("{a}; {b}"))
            .map(|w| crate::text::redact(&w));
        self.state.ended(outcome, why.as_deref(), stored.as_deref());
        let _ = self.store.set_busy_timeout(BUSY_TIMEOUT);
        record(&mut *self.store, &self.state, &self.out);
        if let Some(t) = &self.textfile {
            // The figures of a result that was kept somewhere (the store, a fallback, a file).
            if !matches!(self.stored, Stored::Nowhere { .. }) {
                t.result(&self.result, &self.out);
            }
            t.run(&self.state, &self.out);
        }
    }

    /// `--json`: the whole result on standard output.
    pub fn print_json(&self) {
        match render::exporters::json::to_json(&self.result) {
            Ok(json) => self.out.out(&json),
            Err(e) => self.out.err(&format!("hostbench: error: {e:#}\n")),
        }
    }

    /// "Stored as result N in PATH." on the command's text stream, or, when the store failed,
    /// where the result went instead (on standard error, always).
    pub fn say_where_stored(&self) {
        match &self.stored {
            Stored::Id(id) => {
                if let Some(f) = &self.fell_back {
                    let here = &self.store_location;
                    self.out.err(&format!(
                        "hostbench: error: the result is not in the store asked for ({}); it is kept in {here} as result {id}: send it on with `hostbench results push --db {here} --to {} {id}`\n",
                        f.why, f.to
                    ));
                }
                if !self.out.json {
                    if let Some(line) = render::noise::check_line(&self.result) {
                        self.out.out(&line);
                    }
                    // With its headline, so a log of many runs (a playbook's) says what each was.
                    self.out.out(&format!(
                        "Stored as result {id} in {}: {}.\n",
                        self.store_location,
                        crate::model::label::printable(&render::headline::run(&self.result), 200)
                    ));
                }
            }
            Stored::File {
                path,
                error,
                partial,
            } => self.out.err(&format!(
                "hostbench: error: the result could not be stored ({error}); it is saved in {} instead: store it later with `hostbench results import {}`{}\n",
                path.display(),
                path.display(),
                match partial {
                    Some(id) => format!(
                        " (result {id} holds the run as far as it was stored while running, marked incomplete)"
                    ),
                    None => String::new(),
                }
            )),
            Stored::Nowhere { error } => {
                self.out.err(&format!(
                    "hostbench: error: the result could not be stored or saved anywhere ({error})\n"
                ));
                if !self.out.json {
                    self.out.err("The result, as JSON:\n");
                    if let Ok(json) = render::exporters::json::to_json(&self.result) {
                        self.out.err(&json);
                    }
                }
            }
        }
    }

    pub fn id(&self) -> Option<i64> {
        match self.stored {
            Stored::Id(id) => Some(id),
            _ => None,
        }
    }

    pub fn store_location(&self) -> &str {
        &self.store_location
    }

    /// How much each figure moves between runs on this host: its spread over the host's
    /// earlier stored runs with the same figures (None when the result is not stored, or the
    /// store cannot say).
    pub fn spread(&self) -> Option<HostSpread> {
        let id = self.id()?;
        host_spread(&*self.store, &self.result, self.result.started_at, &[id]).ok()
    }

    /// The exit code: 128 + the signal after a stop; 1 after a failure of the run, of the
    /// store, or of writing the report; else 0. Says what failed on standard output's account.
    pub fn exit_code(&self, failed: bool) -> i32 {
        // Kept in the fallback store is kept, not stored where asked: the run failed.
        let stored = matches!(self.stored, Stored::Id(_)) && self.fell_back.is_none();
        let write_error = self.out.stdout_error();
        if let Some(e) = &write_error {
            self.out.err(&format!(
                "hostbench: error: writing to standard output: {e}{}\n",
                match self.id() {
                    Some(id) => format!(" (the result is stored as result {id})"),
                    None => String::new(),
                }
            ));
        }
        self.stop
            .run_exit_code(failed || !stored || write_error.is_some())
    }
}

/// Checks, before anything is measured, that `dir` can hold a run's temporary files: it and
/// every directory above it are this user's or root's and no one else can write them (except
/// under the sticky bit, as in /tmp) — else another user could swap the run's private
/// directory for one of theirs — and a private directory can be made there (and is removed).
/// Removes the private directories that runs killed earlier left there, saying so.
pub fn prepare_workdir(dir: &Path, out: &Output) -> Result<()> {
    let held = Dir::open(dir, Trust::OwnOrSticky).map_err(|e| {
        // A directory that is not there, or cannot be entered, is said as before; one that
        // another user could change is refused with the reason.
        match e.root_cause().downcast_ref::<std::io::Error>() {
            Some(io) => UsageError::new(format!(
                "cannot use {} for temporary files: {io}",
                dir.display()
            )),
            None => UsageError::new(format!(
                "refusing the work directory {}: {e:#}; choose another with --workdir",
                dir.display()
            )),
        }
    })?;
    for stale in sweep_stale(&held) {
        out.err(&format!(
            "hostbench: removed {} ({}) left by process {}, which is gone\n",
            stale.path.display(),
            crate::units::bytes(stale.bytes),
            stale.pid
        ));
    }
    PrivateDir::create_in(held, "check").map_err(|e| {
        UsageError::new(format!(
            "cannot use {} for temporary files: {e}",
            dir.display()
        ))
    })?;
    Ok(())
}
