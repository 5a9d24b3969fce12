//! The life of one measuring command, the same for every suite and for `hostbench run`: open
//! the store before anything is measured (a bad path must not cost a run), install the stop
//! signal, note the start and the steal clock; while measuring, store what has finished as it
//! goes (after each unit — test, pair, run — marked incomplete), so that even a SIGKILL keeps
//! it; after measuring, store the whole result over it — or, when the store fails, keep it in a
//! JSON file instead of losing it — and give the exit code. `measuring::run` leads a command
//! through it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::args::{MeasureArgs, Repeating};
use super::output::Output;
use crate::compare::{host_spread, HostSpread};
use crate::error::UsageError;
use crate::model::noise::NoiseCheck;
use crate::model::{Environment, Repeat, RunResult, SuiteResult};
use crate::platform::dir::{Dir, Trust};
use crate::platform::host::StealClock;
use crate::platform::private_dir::{sweep_stale, PrivateDir};
use crate::platform::signals::StopSignal;
use crate::render;
use crate::store::{fallback, ResultStore, BUSY_TIMEOUT};
use crate::text::Text;

/// How long a checkpoint waits for a store that another process holds: it is taken between two
/// units of measuring, and is skipped rather than delay the next one (the next checkpoint, or
/// the final store with its full timeout, tries again).
const CHECKPOINT_BUSY: Duration = Duration::from_millis(200);

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
    /// `--host-label` and `--tag`, stored with the result.
    host_label: Option<Text>,
    tags: std::collections::BTreeMap<Text, Text>,
    noise_check: Option<NoiseCheck>,
    /// The run's UUID, the same in every checkpoint and in the final result.
    uuid: String,
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
        let store = measure.store.open()?;
        let stop = StopSignal::install()?;
        Ok(Session {
            out: measure.print.output(),
            stop,
            environment,
            store,
            argv,
            started_at: Utc::now(),
            steal: StealClock::start(),
            row: None,
            last_checkpoint: None,
            repeating: measure.own.repeating.clone(),
            checks_noise: !measure.own.no_noise_check,
            host_label: measure.own.host_label.clone().map(Text::from),
            tags: measure
                .own
                .tags
                .iter()
                .map(|(k, v)| (Text::from(k), Text::from(v)))
                .collect(),
            noise_check: None,
            uuid: crate::model::new_uuid(),
        })
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
        result.host_label.clone_from(&self.host_label);
        result.tags.clone_from(&self.tags);
        result.uuid = Some(self.uuid.clone());
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
            Err(e) => {
                let error = format!("{e:#}");
                match fallback::save(
                    &result,
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
        };
        Finished {
            result,
            stored,
            out: self.out,
            stop: self.stop,
            store_location: self.store.location(),
            store: self.store,
        }
    }
}

impl Finished {
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
        let stored = matches!(self.stored, Stored::Id(_));
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
