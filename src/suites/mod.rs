//! The suites. Each turns a validated config into measurements and returns them in the result
//! model; none prints: what it does goes out as one stream of events (`event`) that the
//! caller's consumers turn into lines, a progress line and checkpoints. Each also says, before
//! it runs, what it will measure and about how long that takes (`plan`), for `hostbench run`'s
//! plan, its estimates of the time left and `--dry-run`.

pub mod event;
pub mod index;
pub mod interactive;
pub mod noise;
pub mod profile;
pub mod reference;
pub mod sched;
pub mod trace;
pub mod wakeup;

pub use crate::model::HostLimits;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::Result;

use crate::calibration::CalibrationOptions;
use crate::model::SuiteResult;
use event::Events;

/// The suites of `hostbench run`, in the order they measure: each one's planner of its parts.
pub const RUN_ORDER: [profile::RunParts; 5] = [
    noise::run_parts,
    index::run_parts,
    interactive::run_parts,
    sched::run_parts,
    wakeup::run_parts,
];

/// A suite's validated configuration as a part of `hostbench run`: what it will measure, its
/// settings as the run's plan shows them, and its measuring into a result. `hostbench run`
/// goes through its parts by this trait alone.
pub trait Part: std::fmt::Debug + Sync {
    /// Its units and about how long each takes.
    fn plan(&self) -> Plan;
    /// Its suite's name.
    fn suite(&self) -> &'static str;
    /// What it measures, in a few words, as the run's plan shows it.
    fn measures(&self) -> String;
    /// Measures it: its result, and a failure that ended it early (the result is kept).
    fn measure_part(
        &self,
        with: &PartInputs<'_>,
        stop: &AtomicBool,
        events: &mut dyn Events,
    ) -> Result<(SuiteResult, Option<String>)>;
}

/// "pinned: " before what a pinned part measures.
pub fn placement(pinned: bool) -> &'static str {
    if pinned {
        "pinned: "
    } else {
        ""
    }
}

/// Items joined by ", ".
pub fn listed<T: std::fmt::Display>(items: impl Iterator<Item = T>) -> String {
    items.map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}

/// What the run gives every part: its calibration options (a part with a burn loop of its own
/// calibrates it) and hostbench's own executable (for worker processes).
pub struct PartInputs<'a> {
    pub calibration: &'a CalibrationOptions,
    pub exe: &'a Path,
}

/// What a suite will measure: its units in order, each with about how long it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub units: Vec<Unit>,
}

/// A unit of measuring: a calibration, a test at a number of copies, a bench × load pair, a
/// sched point, the noise runs. `count` of them, about `each_s` seconds each.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub name: String,
    pub count: u64,
    pub each_s: f64,
}

impl Unit {
    pub fn new(name: impl Into<String>, count: u64, each_s: f64) -> Unit {
        Unit {
            name: name.into(),
            count,
            each_s,
        }
    }
}

impl Plan {
    /// About how long the whole suite takes, seconds.
    pub fn estimate_s(&self) -> f64 {
        self.units.iter().map(|u| u.count as f64 * u.each_s).sum()
    }
}
