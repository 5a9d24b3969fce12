//! The index suite's part of `hostbench run`: UnixBench's quick mode (single and N copies),
//! its own full run at the full profile, and context1 again pinned (the test and its child on
//! one CPU), since a pipe ping-pong's cost depends on where its two ends run.

use std::path::Path;

use super::IndexConfig;
use crate::error::UsageError;
use crate::model::index::{IndexSettings, DEFAULT_ITERATIONS};
use crate::model::order::Order;
use crate::suites::profile::{Profile, RunSetting, SuiteParts};

/// The tests (empty: UnixBench's default set), `--quick`, and a fixed duration of every test
/// run (seconds) instead of UnixBench's, at a profile.
fn size(profile: Profile) -> (&'static [&'static str], bool, Option<f64>) {
    match profile {
        Profile::Quick | Profile::Standard => (&[], true, None),
        Profile::Full => (&[], false, None),
        Profile::Smoke => (&["dhry2reg", "syscall", "spawn"], false, Some(0.2)),
    }
}

/// The part at a setting: `requested` tests (empty: the profile's), at `copies` (empty:
/// UnixBench's single and N), pinned or free.
pub fn config(
    setting: &RunSetting<'_>,
    requested: &[&str],
    copies: Vec<usize>,
    pin: bool,
) -> Result<IndexConfig, UsageError> {
    let (tests, quick, seconds) = size(setting.profile);
    let requested = if requested.is_empty() {
        tests
    } else {
        requested
    };
    let mut index = IndexConfig::new(
        IndexSettings {
            requested: requested.iter().map(|&s| s.into()).collect(),
            tests: Vec::new(),
            copies,
            iterations: DEFAULT_ITERATIONS,
            seconds,
            quick,
            adaptive_pct: None,
            pin,
            xvfb: false,
            builtin_cpu_tests: false,
            lang: crate::platform::locale::UNIXBENCH_LANG.into(),
            // UnixBench's order: rounds measured no steadier here and moved fsdisk's
            // level (docs/evidence/index-order.md).
            order: Order::Blocks,
        },
        setting.cpus(),
        None,
        setting.workdir.to_path_buf(),
        None,
    )?;
    // The C tests are built beside the calibration cache.
    index.cache_dir = setting
        .calibration
        .cache_file
        .parent()
        .map(Path::to_path_buf);
    Ok(index)
}

pub fn run_parts(setting: &RunSetting<'_>) -> Result<SuiteParts, UsageError> {
    let free = config(setting, &[], Vec::new(), false)?;
    let pinned = config(setting, &["context1"], vec![1], true)?;
    Ok(SuiteParts::free(free).with_pinned(pinned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::profile::tests::{calibration, host, setting};

    #[test]
    fn quick_runs_single_and_n_copies_and_full_is_unixbenchs_own() {
        let (h, c) = (host(2, None), calibration());
        let quick = config(&setting(Profile::Quick, &h, &c), &[], Vec::new(), false).unwrap();
        // Per pass, each test's iterations (quick: 3, slow tests 1), each after its pause.
        let per_pass: u64 = quick.tests.iter().map(|t| quick.iterations(t) as u64).sum();
        let units: u64 = quick.plan().units.iter().map(|u| u.count).sum();
        assert_eq!(units, 2 * per_pass);
        assert_eq!(quick.settings.copies, vec![1, 2]);
        assert!(quick.settings.quick);
        let full = config(&setting(Profile::Full, &h, &c), &[], Vec::new(), false).unwrap();
        assert!(!full.settings.quick);
        // Every profile runs the originals' order: rounds measured no steadier on this
        // project's VM and moved fsdisk's level (docs/evidence/index-order.md).
        assert_eq!(full.settings.order, Order::Blocks);
    }

    #[test]
    fn the_pinned_part_is_context1_at_one_copy() {
        let (h, c) = (host(2, None), calibration());
        let parts = run_parts(&setting(Profile::Standard, &h, &c)).unwrap();
        let pinned = parts.pinned.unwrap();
        assert!(
            pinned.measures().starts_with("pinned: "),
            "{}",
            pinned.measures()
        );
        assert!(
            pinned
                .measures()
                .contains("1 test in the quick mode, 1 pass (1 copy)"),
            "{}",
            pinned.measures()
        );
    }
}
