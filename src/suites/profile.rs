//! `hostbench run`'s profiles, and what a suite plans its part of a run from. Each suite
//! declares its own parts of each profile in its folder (`run_parts`); `run`'s plan is the list
//! of suites in `suites::RUN_ORDER` and the parts each gives back.

use std::path::Path;

use super::{HostLimits, Part};
use crate::calibration::CalibrationOptions;
use crate::error::UsageError;

/// How much time the run trades for precision (the `--profile` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// About 3 minutes on a 2-CPU host
    Quick,
    /// About 10 minutes on a 2-CPU host
    Standard,
    /// The originals' own defaults (over an hour)
    Full,
    /// Seconds: every part at a token size, for the tests of the tool itself
    #[value(hide = true)]
    Smoke,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Standard => "standard",
            Profile::Full => "full",
            Profile::Smoke => "smoke",
        }
    }
}

/// What every suite plans its parts of a run from.
#[derive(Debug, Clone, Copy)]
pub struct RunSetting<'a> {
    pub profile: Profile,
    pub host: &'a HostLimits,
    /// The run's -b and -l (interbench's), for the parts with a burn loop.
    pub calibration: &'a CalibrationOptions,
    /// Where the index tests' and the interactive loads' files go.
    pub workdir: &'a Path,
    /// `run --explain N`: the parts that can explain their N worst samples do.
    pub explain: Option<u32>,
}

impl RunSetting<'_> {
    /// The CPUs the run may use, at least one.
    pub fn cpus(&self) -> usize {
        self.host.usable_cpus.max(1)
    }

    /// "hostbench run --profile NAME", as a part's comment.
    pub fn comment(&self) -> String {
        format!("hostbench run --profile {}", self.profile.name())
    }
}

/// A suite's parts of a run: one measured free, in the suites' order, and one measured pinned
/// after every free part, where the suite has a pipe ping-pong whose cost depends on where its
/// two ends run.
pub struct SuiteParts {
    pub free: Box<dyn Part>,
    pub pinned: Option<Box<dyn Part>>,
    /// What the suite left out on this host, and why.
    pub skipped: Vec<String>,
}

impl SuiteParts {
    pub fn free(part: impl Part + 'static) -> SuiteParts {
        SuiteParts {
            free: Box::new(part),
            pinned: None,
            skipped: Vec::new(),
        }
    }

    pub fn with_pinned(mut self, part: impl Part + 'static) -> SuiteParts {
        self.pinned = Some(Box::new(part));
        self
    }
}

/// A suite's planner: its parts of a run at a setting.
pub type RunParts = fn(&RunSetting<'_>) -> Result<SuiteParts, UsageError>;

/// A run's parts, in the order they measure.
pub type Parts = Vec<Box<dyn Part>>;

/// Every suite's parts at a setting: the free parts in the suites' order, then the pinned ones,
/// with what each suite left out.
pub fn parts(setting: &RunSetting<'_>) -> Result<(Parts, Vec<String>), UsageError> {
    let mut free = Vec::new();
    let mut pinned = Vec::new();
    let mut skipped = Vec::new();
    for plan in super::RUN_ORDER {
        let p = plan(setting)?;
        free.push(p.free);
        pinned.extend(p.pinned);
        skipped.extend(p.skipped);
    }
    free.extend(pinned);
    Ok((free, skipped))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    pub fn host(cpus: usize, free: Option<u64>) -> HostLimits {
        HostLimits {
            usable_cpus: cpus,
            memory_total_bytes: 24 << 30,
            memory_available_bytes: 20 << 30,
            swap_bytes: 0,
            free_disk_bytes: free,
        }
    }

    pub fn calibration() -> CalibrationOptions {
        CalibrationOptions {
            recalibrate: false,
            given_loops_per_ms: Some(1000),
            cache_file: PathBuf::from("/nonexistent/calibration.json"),
        }
    }

    /// A setting on a host of `cpus` CPUs with plenty of disk.
    pub fn setting<'a>(
        profile: Profile,
        host: &'a HostLimits,
        calibration: &'a CalibrationOptions,
    ) -> RunSetting<'a> {
        RunSetting {
            profile,
            host,
            calibration,
            workdir: Path::new("."),
            explain: None,
        }
    }

    #[test]
    fn free_parts_come_in_the_suites_order_and_pinned_ones_after() {
        let (h, c) = (host(2, Some(100 << 30)), calibration());
        let (parts, skipped) = parts(&setting(Profile::Quick, &h, &c)).unwrap();
        let suites: Vec<&str> = parts.iter().map(|p| p.suite()).collect();
        assert_eq!(
            suites,
            [
                "noise",
                "index",
                "interactive",
                "sched",
                "wakeup",
                "index",
                "interactive",
                "sched"
            ]
        );
        assert!(parts[5..]
            .iter()
            .all(|p| p.measures().starts_with("pinned")));
        assert!(skipped.is_empty());
    }
}
