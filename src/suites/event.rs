//! The one stream of events every measuring suite emits while it works (and `hostbench run`
//! around its parts). A suite never prints: it says what happened, in the result model's terms,
//! and the caller's consumers decide what becomes of it — the original tool's lines, the live
//! progress line, a checkpoint of the result in the store.

use std::time::Duration;

use crate::calibration::{BurnCalibration, CheckMissed};
use crate::model::index::scoring::Pass;
use crate::model::index::{Skipped, TestResult};
use crate::model::interactive::{Bench, Load, Measurement};
use crate::model::noise::{NoiseCalibration, NoiseRun, NoiseSettings};
use crate::model::part::PartPlan;
use crate::model::sched::{SchedPoint, SchedRun};
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

    /// noise: the job is being calibrated to its target length.
    NoiseCalibrating(&'a NoiseSettings),
    NoiseCalibrated(&'a NoiseCalibration),
    /// noise: a run is done (`index` 0-based, of `planned`), with the run before it and the
    /// fastest so far.
    NoiseRunDone {
        index: usize,
        planned: u64,
        run: &'a NoiseRun,
        previous: Option<&'a NoiseRun>,
        fastest_ns: u64,
    },

    /// index: a pass at this many copies starts.
    PassBegins {
        copies: usize,
    },
    /// index: a test starts (its name, and UnixBench's words for it).
    TestBegins {
        name: &'a str,
        msg: &'a str,
        copies: usize,
        iterations: usize,
    },
    /// index: an iteration of a test is done (`index` 0-based).
    IterationDone {
        name: &'a str,
        index: usize,
        pass: &'a Pass,
    },
    TestDone(&'a TestResult),
    TestSkipped(&'a Skipped),
    TestFailed(&'a Skipped),

    /// interactive: the burn loop is calibrated (or its cached value read, with a warning when
    /// the cache could not be used).
    BurnCalibrated {
        calibration: &'a BurnCalibration,
        cache_warning: Option<&'a str>,
    },
    /// interactive: a check after a rest of interbench's calibration rule failed; it goes on
    /// trying.
    CalibrationCheckMissed(CheckMissed),
    /// interactive: the Read load's file of this size is being made.
    PreparingFiles {
        bytes: u64,
    },
    BenchBegins(Bench),
    /// interactive: a pair starts (`index` 0-based, of `total`).
    PairBegins {
        bench: Bench,
        load: Load,
        index: usize,
        total: usize,
    },
    /// interactive: a pair is measured.
    Measured(&'a Measurement),

    /// sched: a run of a point is done (`index` 0-based).
    SchedRunDone {
        threads: usize,
        active_sets: usize,
        index: usize,
        run: &'a SchedRun,
    },
    /// sched: a point is done.
    PointDone(&'a SchedPoint),
}

/// Where a suite's events go.
pub trait Events {
    fn event(&mut self, event: Event<'_>);
}
