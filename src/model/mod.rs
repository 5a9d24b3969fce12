//! The result model: one serde structure that every suite fills, the store saves, and every
//! renderer reads. Raw samples are kept so analysis can be redone later.

pub mod account;
mod environment;
pub mod explain;
pub mod figures;
pub mod headline;
pub mod index;
pub mod interactive;
pub mod label;
pub mod noise;
pub mod order;
pub mod part;
pub mod run_state;
pub mod sched;
pub mod stored;
pub mod wakeup;

pub use environment::{CgroupCpuLimit, Environment, HostLimits};

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::text::Text;
use index::IndexResult;
use interactive::InteractiveResult;
use noise::{NoiseCheck, NoiseResult};
use sched::SchedResult;
use wakeup::WakeupResult;

/// Bumped whenever a stored result's shape changes incompatibly.
/// 2: interactive latency as interbench defines it (missed intervals included), the pure
/// wake-up latency beside it.
pub const SCHEMA_VERSION: u32 = 2;

/// The largest result file hostbench reads (`results import`, `compare`, `report`, `history
/// --series`): far above any real result (a `run --profile full` with every histogram is a few
/// MB), so that a wrong file (`/dev/zero`, a disk image) is refused instead of read until
/// memory runs out. A fleet store takes a result's JSON up to the same size (layout 12).
pub const MAX_RESULT_BYTES: u64 = 16 << 20;

/// One invocation of hostbench: what ran, where, when, and what it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool_version: Text,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// The command line as given (argv, program name first).
    pub command_line: Vec<Text>,
    /// True when the run was stopped (signal, error) before it did everything it planned.
    pub incomplete: bool,
    pub environment: Environment,
    pub suites: Vec<SuiteResult>,
    /// One of the runs of a `--repeat N` command: `compare gGROUP` takes them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
    /// The short noise check before the suites and the drift check after them; None with
    /// `--no-noise-check` (and in results of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_check: Option<NoiseCheck>,
    /// `--host-label`: the name the user gives this host (a fleet's inventory name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_label: Option<Text>,
    /// `--tag KEY=VALUE`: what the user says of this run (`kernel=6.18-rc3`, `fleet=rack12`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<Text, Text>,
    /// The run's own name, the same in every store it is copied to (`results push`, `pull`,
    /// `import`): a result copied twice is stored once. None in results of earlier versions
    /// until a store gives them one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

impl RunResult {
    /// The name its host goes by: its `--host-label`, else its hostname.
    pub fn host_name(&self) -> &Text {
        self.host_label
            .as_ref()
            .unwrap_or(&self.environment.host.hostname)
    }

    /// The command line as it may be shown: each argument with any password replaced
    /// (`text::redact_argument`: a result stored by an older hostbench may hold one) and
    /// escaped, joined by spaces.
    pub fn shown_command_line(&self) -> String {
        self.command_line
            .iter()
            .map(|a| Text::from(crate::text::redact_argument(a.raw())).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Why this result's host label or tags cannot be stored (too long, control characters),
    /// as a result file or another store may hold them; None when they can.
    pub fn label_problem(&self) -> Option<String> {
        let tags: Vec<(&str, &str)> = self.tags.iter().map(|(k, v)| (k.raw(), v.raw())).collect();
        label::check_result(self.host_label.as_ref().map(Text::raw), &tags).err()
    }
}

/// Where a run stands in its group of repeated runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repeat {
    /// The group's id: the stored id of its first run.
    pub group: i64,
    /// This run's number, from 1, and how many the command was asked for.
    pub run: u32,
    pub of: u32,
}

/// Every suite's columns of the fleet's table, in the order a stored result keeps its headline
/// figures (layout 7): a new suite's columns go at the end.
pub const COLUMNS: &[&headline::Column] = &[
    &index::INDEX_ONE,
    &index::INDEX_MANY,
    &interactive::WORST_PAIR,
    &sched::PER_ROUND,
    &noise::SPREAD,
    &wakeup::WAKEUP_P99,
];

/// The data of one suite. Tagged by suite name in JSON: `{"suite": "noise", ...}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "suite", rename_all = "lowercase")]
pub enum SuiteResult {
    Noise(NoiseResult),
    Interactive(InteractiveResult),
    Sched(SchedResult),
    Index(IndexResult),
    Wakeup(WakeupResult),
}

/// What each suite's result says of itself, so that code over any result — completeness, the
/// sanity of imported data, the named figures `compare`, `results export` and the fleet read,
/// placement — names no suite: a suite implements it beside its result types.
pub trait SuiteData {
    /// The suite's name, as the JSON's `suite` tag has it.
    fn name(&self) -> &'static str;
    /// Whether the suite did everything its settings planned (a stop or an error leaves it
    /// short).
    fn complete(&self) -> bool;
    /// The first raw figure no real run can produce, described (see `RunResult::implausible`).
    fn implausible(&self) -> Option<String> {
        None
    }
    /// Whether its ping-pongs ran with both ends on one CPU (`--pin`, `-u`).
    fn pinned(&self) -> bool {
        false
    }
    /// The burn loop's calibration its CPU shares were sized by, if it has one.
    fn calibration(&self) -> Option<&crate::calibration::BurnCalibration> {
        None
    }
    /// Its figures, appended to `out` (see `figures`).
    fn figures(&self, out: &mut Vec<figures::Figure>);
    /// Its measured stretches that carry the host's account, by what they measured: an index
    /// test's iterations, a sched point's runs, an interactive pair, the noise runs.
    fn stretches(&self) -> Vec<account::Stretches<'_>> {
        Vec::new()
    }
    /// What its figures depend on beyond its settings, each named ("language settings for the
    /// index tests"): `compare` notes one that differs between its two results.
    fn conditions(&self) -> Vec<(&'static str, &Text)> {
        Vec::new()
    }
    /// The settings that decide what it measured, as JSON: two runs whose suites give equal
    /// settings ran the same plan (`figures::plan_digest`). Free text (a comment) is left out.
    fn settings(&self) -> serde_json::Value;
}

impl SuiteResult {
    /// The suite's result, as what every suite's result says of itself.
    pub fn data(&self) -> &dyn SuiteData {
        match self {
            SuiteResult::Noise(n) => n,
            SuiteResult::Interactive(i) => i,
            SuiteResult::Sched(s) => s,
            SuiteResult::Index(i) => i,
            SuiteResult::Wakeup(w) => w,
        }
    }

    pub fn name(&self) -> &'static str {
        self.data().name()
    }

    pub fn complete(&self) -> bool {
        self.data().complete()
    }
}

/// A count that is 0: left out of a result's JSON where results stored before the count
/// existed have none, so that they read back byte for byte.
pub(crate) fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// A time no real run takes: 0 ns, or over a year.
pub(crate) fn implausible_ns(ns: u64) -> bool {
    const YEAR_NS: u64 = 365 * 86_400 * 1_000_000_000;
    ns == 0 || ns > YEAR_NS
}

/// A time in seconds no real run takes: not a finite number above 0, or over a year.
pub(crate) fn implausible_s(s: f64) -> bool {
    const YEAR_S: f64 = 365.0 * 86_400.0;
    !(s.is_finite() && s > 0.0 && s <= YEAR_S)
}

/// A new result's name: a random (version 4) UUID.
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A result's UUID in the one spelling a store keeps (lowercase, hyphenated), from any spelling
/// the UUID parser takes (capitals, braces, `urn:uuid:`, no hyphens): another spelling of a
/// stored run's UUID is that run, not a new one. None for what is not a UUID, and for the nil
/// and the max UUID, which name no run.
pub fn canonical_uuid(text: &str) -> Option<String> {
    let u = uuid::Uuid::parse_str(text.trim()).ok()?;
    (!u.is_nil() && !u.is_max()).then(|| u.hyphenated().to_string())
}

/// The name of a result of an earlier version, which has none, from its JSON (a version 5
/// UUID): the same file imported twice is stored once.
pub fn derived_uuid(result_json: &str) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, result_json.as_bytes()).to_string()
}

impl RunResult {
    /// A result of this build of hostbench, finished now. `cut_short`: a stop or an error
    /// ended the run; it is also incomplete when a suite did less than it planned.
    pub fn finished(
        started_at: DateTime<Utc>,
        command_line: Vec<String>,
        cut_short: bool,
        environment: Environment,
        suite: SuiteResult,
    ) -> Self {
        Self::finished_suites(
            started_at,
            command_line,
            cut_short,
            environment,
            vec![suite],
        )
    }

    /// A result of several suites (`hostbench run`), finished now.
    pub fn finished_suites(
        started_at: DateTime<Utc>,
        command_line: Vec<String>,
        cut_short: bool,
        environment: Environment,
        suites: Vec<SuiteResult>,
    ) -> Self {
        let incomplete = cut_short || !suites.iter().all(SuiteResult::complete);
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            started_at,
            finished_at: Utc::now(),
            command_line: command_line.into_iter().map(Text::from).collect(),
            incomplete,
            environment,
            suites,
            repeat: None,
            noise_check: None,
            host_label: None,
            tags: BTreeMap::new(),
            uuid: None,
        }
    }

    /// The result's own noise: the p-spread of its noise part ("differences within ±X% are
    /// noise"), else of the noise check made before its suites; None when it has neither.
    pub fn noise_spread_pct(&self) -> Option<f64> {
        self.suites
            .iter()
            .find_map(|s| match s {
                SuiteResult::Noise(n) => n.summary.as_ref().map(|s| s.verdict.spread_pct),
                _ => None,
            })
            .or_else(|| self.noise_check.as_ref().map(|c| c.spread_pct()))
    }

    /// The result's noise floor, percent: its spread raised to the drift its check found (a
    /// run whose host changed speed by 6% while it ran can be 6% off by that alone); None when
    /// it measured no noise.
    pub fn noise_floor_pct(&self) -> Option<f64> {
        let drift = self
            .noise_check
            .as_ref()
            .and_then(|c| c.drifted_pct())
            .map_or(0.0, f64::abs);
        Some(self.noise_spread_pct()?.max(drift))
    }

    /// Suite names joined with '+', as `results list` shows them.
    pub fn suite_names(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for n in self.suites.iter().map(SuiteResult::name) {
            // `hostbench run` measures some suites twice (free and pinned): named once.
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names.join("+")
    }

    /// The first raw figure no real run can produce — a run of 0 ns or of over a year, a time
    /// or rate that is not a finite number — described; None when every figure is possible.
    /// Such a result was edited or damaged, and comparing it would give nonsense changes.
    pub fn implausible(&self) -> Option<String> {
        if let Some(why) = self.suites.iter().find_map(|s| s.data().implausible()) {
            return Some(why);
        }
        figures::figures(self)
            .into_iter()
            .find(|f| !f.value.is_finite() || f.samples.iter().any(|s| !s.is_finite()))
            .map(|f| format!("{} is not a finite number", f.name))
    }
}

#[cfg(test)]
impl RunResult {
    /// A stored noise result with no runs, of host `host`: what the store's tests keep.
    pub fn example(host: &str, incomplete: bool) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool_version: "test".into(),
            started_at: Utc::now(),
            finished_at: Utc::now(),
            command_line: vec!["hostbench".into(), "noise".into()],
            incomplete,
            environment: Environment {
                host: crate::platform::host::HostFacts {
                    hostname: host.into(),
                    ..Default::default()
                },
                ..Environment::default()
            },
            suites: vec![SuiteResult::Noise(NoiseResult {
                settings: noise::NoiseSettings {
                    mode: noise::NoiseMode::Cpu,
                    target_ms: 10,
                    runs_requested: 5,
                },
                calibration: None,
                runs: Vec::new(),
                summary: None,
            })],
            repeat: None,
            noise_check: None,
            host_label: None,
            tags: BTreeMap::new(),
            uuid: None,
        }
    }
}
