//! The one stream of events every measuring suite emits while it works (and `hostbench run`
//! around its parts). A suite never prints: it says what happened, in the result model's terms,
//! and the caller's consumers decide what becomes of it — the original tool's lines, the live
//! progress line, a checkpoint of the result in the store.

use std::time::Duration;

use super::index::event::IndexEvent;
use super::interactive::event::InteractiveEvent;
use super::noise::event::NoiseEvent;
use super::sched::event::SchedEvent;
use super::wakeup::event::WakeupEvent;
use crate::calibration::{BurnCalibration, CheckMissed};
use crate::model::part::PartPlan;
use crate::model::SuiteResult;

/// Checkpoint after every unit of measuring (a test's iteration, a pair, a sched run: seconds
/// each).
pub const EVERY_UNIT: Duration = Duration::ZERO;

/// Something a suite did, or measured.
pub enum Event<'a> {
    /// Something about how the run measures, said once (a degraded measurement, a load left
    /// out).
    Note(&'a str),
    /// The result so far, to store as it goes, marked incomplete: `build` makes it, and is
    /// called only when a checkpoint is due (at most one every `every`).
    Partial {
        every: Duration,
        build: &'a dyn Fn() -> SuiteResult,
    },

    /// `hostbench run`: a part starts.
    PartBegins {
        index: usize,
        plan: &'a PartPlan,
    },
    /// `hostbench run`: a part is done, with its result.
    PartDone {
        index: usize,
        result: &'a SuiteResult,
    },

    /// The burn loop of a part (interactive, sched) is calibrated (or its cached value read, with a warning when
    /// the cache could not be used).
    BurnCalibrated {
        calibration: &'a BurnCalibration,
        cache_warning: Option<&'a str>,
    },
    /// A check after a rest of interbench's calibration rule failed; it goes on
    /// trying.
    CalibrationCheckMissed(CheckMissed),
    /// How far the part has come (`hostbench run`'s live line).
    Progress(Progress<'a>),
    /// What a suite says of its own measuring, in its own terms: the original tool's lines
    /// are made from these by the suite's reporter.
    Noise(NoiseEvent<'a>),
    Index(IndexEvent<'a>),
    Interactive(InteractiveEvent<'a>),
    Sched(SchedEvent<'a>),
    Wakeup(WakeupEvent<'a>),
}

/// How far a part has come: `done` of its `of` units (runs, iterations, pairs, points,
/// seconds: the suite's own), and what it is at now, in a few words. Every suite says it as
/// it goes, so one live line serves them all.
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    pub done: u64,
    pub of: u64,
    pub now: &'a dyn std::fmt::Display,
}

impl<'a> Event<'a> {
    /// `done` of `of` units, at `now`.
    pub fn progress(done: u64, of: u64, now: &'a dyn std::fmt::Display) -> Event<'a> {
        Event::Progress(Progress { done, of, now })
    }
}

/// Where a suite's events go.
pub trait Events {
    fn event(&mut self, event: Event<'_>);
}
