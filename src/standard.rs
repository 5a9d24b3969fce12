//! `hostbench run`: the standard run. Its plan is the list of suites and the parts each
//! declares for the profile (`suites::profile`), free parts first and the pinned pipe
//! ping-pongs after; `run` measures them in order for one stored result.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::calibration::CalibrationOptions;
use crate::error::UsageError;
use crate::model::part::PartPlan;
use crate::model::SuiteResult;
use crate::suites::event::{Event, Events};
pub use crate::suites::profile::Profile;
use crate::suites::profile::{self, RunSetting};
use crate::suites::{self, HostLimits};

/// The parts, validated: every suite's free part in the suites' order, then the pinned ones.
#[derive(Debug)]
pub struct StandardPlan {
    pub profile: Profile,
    pub parts: profile::Parts,
    /// What the plan left out on this host, and why.
    pub skipped: Vec<String>,
    /// The run's -b and -l (interbench's), for the parts with a burn loop.
    pub calibration: CalibrationOptions,
}

impl StandardPlan {
    /// Every suite's parts of `profile` on this host; `explain`: `run --explain N`.
    pub fn new(
        profile: Profile,
        host: &HostLimits,
        calibration: CalibrationOptions,
        workdir: &Path,
        explain: Option<u32>,
    ) -> Result<StandardPlan, UsageError> {
        let (parts, skipped) = profile::parts(&RunSetting {
            profile,
            host,
            calibration: &calibration,
            workdir,
            explain,
        })?;
        Ok(StandardPlan {
            profile,
            parts,
            skipped,
            calibration,
        })
    }

    /// The parts in order, as the run's plan shows them.
    pub fn planned(&self) -> Vec<PartPlan> {
        self.parts.iter().map(|p| planned(p.as_ref())).collect()
    }

    /// About how long the whole run takes, seconds: its parts' plans.
    pub fn estimate_s(&self) -> f64 {
        self.parts.iter().map(|p| p.plan().estimate_s()).sum()
    }
}

/// One part of the run: an ordinary suite configuration, seen through `suites::Part`.
pub type Part<'a> = &'a dyn suites::Part;

/// The part as the plan shows it: its settings and about how long it takes.
pub fn planned(part: Part<'_>) -> PartPlan {
    PartPlan {
        suite: part.suite(),
        measures: part.measures(),
        estimate_s: part.plan().estimate_s(),
    }
}

/// What the run measured: every part that ran, in order.
pub struct StandardOutcome {
    pub suites: Vec<SuiteResult>,
    /// A part that failed, with its message; the parts after it did not run.
    pub failure: Option<String>,
}

/// Runs the plan's parts in order until done or `stop` is set.
pub fn run(
    plan: &StandardPlan,
    exe: &Path,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> StandardOutcome {
    let mut suites = Vec::new();
    let mut failure = None;
    for (i, part) in plan.parts.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        events.event(Event::PartBegins {
            index: i,
            plan: &planned(part.as_ref()),
        });
        let with = suites::PartInputs {
            calibration: &plan.calibration,
            exe,
        };
        match part.measure_part(&with, stop, events) {
            Ok((r, part_failure)) => {
                events.event(Event::PartDone {
                    index: i,
                    result: &r,
                });
                suites.push(r);
                if let Some(f) = part_failure {
                    failure = Some(format!("{}: {f}", part.suite()));
                    break;
                }
            }
            Err(e) => {
                failure = Some(format!("{}: {e:#}", part.suite()));
                break;
            }
        }
    }
    StandardOutcome { suites, failure }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::profile::tests::{calibration, host};

    fn plan(profile: Profile) -> StandardPlan {
        StandardPlan::new(
            profile,
            &host(2, Some(100 << 30)),
            calibration(),
            Path::new("."),
            None,
        )
        .unwrap()
    }

    #[test]
    fn profiles_trade_time_for_precision() {
        let total = |p: &StandardPlan| p.estimate_s();
        let (quick, standard, full) = (
            plan(Profile::Quick),
            plan(Profile::Standard),
            plan(Profile::Full),
        );
        // About 3 and 10 minutes on two CPUs; full is far longer.
        assert!((120.0..300.0).contains(&total(&quick)), "{}", total(&quick));
        assert!(
            (420.0..780.0).contains(&total(&standard)),
            "{}",
            total(&standard)
        );
        assert!(total(&full) > 3.0 * total(&standard));
        assert!(standard.skipped.is_empty());
        // The estimates are the plans' own.
        let sum: f64 = standard.planned().iter().map(|p| p.estimate_s).sum();
        assert_eq!(standard.estimate_s(), sum);
    }
}
