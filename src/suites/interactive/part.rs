//! The interactive suite's part of `hostbench run`: interbench's four simulated tasks under
//! four loads, `-L` the CPU count as interbench's manual advises; and the tasks under the Ring
//! load again pinned (`-u`: the task and its load on one CPU), since a pipe ping-pong's cost
//! depends on where its two ends run.

use super::{InteractiveConfig, Selection};
use crate::error::UsageError;
use crate::loads;
use crate::model::interactive::{InteractiveSettings, DEFAULT_HACK_GROUPS};
use crate::suites::profile::{Profile, RunSetting, SuiteParts};

/// What a profile sets: the benches, seconds a pair, the load's settling time, the disk loads'
/// file size (at most RAM), and whether only the loads that need neither files nor much time
/// run (smoke).
struct Size {
    benches: &'static [&'static str],
    seconds: u64,
    settle_ms: u64,
    file_mb: u64,
    light_loads: bool,
}

const TASKS: &[&str] = &["Audio", "Video", "X", "Gaming"];

/// The loads the part runs against (those with their data always at hand).
const LOADS: [&str; 4] = ["None", "Burn", "Ring", "Compile"];

fn size(profile: Profile) -> Size {
    let (seconds, settle_ms, file_mb) = match profile {
        Profile::Quick => (3, 500, 128),
        Profile::Standard => (20, 1000, 256),
        Profile::Full => (30, 1000, 1024),
        Profile::Smoke => (1, 100, 8),
    };
    let smoke = profile == Profile::Smoke;
    Size {
        benches: if smoke { &["Audio", "Video"] } else { TASKS },
        seconds,
        settle_ms,
        file_mb,
        light_loads: smoke,
    }
}

/// The free part's loads and the disk loads' file size on this host, with what was left out:
/// without room for Compile's files, a smaller file, or no Compile load.
fn loads_and_file(setting: &RunSetting<'_>, size: &Size) -> (Vec<String>, u64, Vec<String>) {
    let host = setting.host;
    let mut file_bytes = (size.file_mb << 20).min(host.memory_total_bytes.max(1 << 20));
    let mut loads: Vec<String> = LOADS.iter().map(|s| s.to_string()).collect();
    let mut skipped = Vec::new();
    if size.light_loads {
        loads.retain(|l| l == "None" || l == "Burn");
        return (loads, file_bytes, skipped);
    }
    // Compile writes and reads a file of file_bytes; without room for it, leave it out.
    let need = loads::registry::room_needed(file_bytes.saturating_mul(2));
    match host.free_disk_bytes {
        Some(free) if free >= need => {}
        Some(free) if free / 3 >= 16 << 20 => file_bytes = free / 3,
        _ => {
            loads.retain(|l| l != "Compile");
            skipped.push(format!(
                "interactive: the Compile load (no room for its files in {})",
                setting.workdir.display()
            ));
        }
    }
    (loads, file_bytes, skipped)
}

/// The part at a setting: the profile's benches under `loads`, pinned to CPU 0 or free.
fn config(
    setting: &RunSetting<'_>,
    size: &Size,
    file_bytes: u64,
    loads: Vec<String>,
    pinned: bool,
) -> Result<InteractiveConfig, UsageError> {
    InteractiveConfig::new(
        InteractiveSettings {
            duration_s: size.seconds,
            requested_s: None,
            // The quick and smoke profiles' pairs are shorter than X's 10 s ramp, on
            // purpose; each X row says how much of the ramp it covered.
            exact_time: true,
            idle_hold: false,
            burn_threads: setting.cpus() as u32,
            bench_nice: 0,
            load_nice: 0,
            realtime: false,
            pinned_cpu: pinned.then_some(0),
            custom: None,
            benches: Vec::new(),
            loads: Vec::new(),
            file_bytes,
            page_cache: false,
            relative_sleep: false,
            memload_mb: None,
            hack_groups: DEFAULT_HACK_GROUPS,
            settle_ms: size.settle_ms,
            comment: Some(setting.comment().into()),
            explain: setting.explain,
        },
        &Selection {
            benches: size.benches.iter().map(|s| s.to_string()).collect(),
            exclude_benches: Vec::new(),
            loads,
            exclude_loads: Vec::new(),
        },
        setting.calibration.clone(),
        setting.workdir.to_path_buf(),
        setting.host,
    )
}

pub fn run_parts(setting: &RunSetting<'_>) -> Result<SuiteParts, UsageError> {
    let size = size(setting.profile);
    let (loads, file_bytes, skipped) = loads_and_file(setting, &size);
    let free = config(setting, &size, file_bytes, loads, false)?;
    let pinned = config(setting, &size, file_bytes, vec!["Ring".into()], true)?;
    let mut parts = SuiteParts::free(free).with_pinned(pinned);
    parts.skipped = skipped;
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::profile::tests::{calibration, host, setting};

    fn free(profile: Profile, disk: Option<u64>) -> (InteractiveConfig, Vec<String>) {
        let (h, c) = (host(2, disk), calibration());
        let s = setting(profile, &h, &c);
        let size = size(profile);
        let (loads, file_bytes, skipped) = loads_and_file(&s, &size);
        (
            config(&s, &size, file_bytes, loads, false).unwrap(),
            skipped,
        )
    }

    #[test]
    fn four_tasks_under_four_loads_the_calibration_and_every_pair() {
        let (standard, skipped) = free(Profile::Standard, Some(100 << 30));
        assert_eq!(standard.settings.benches.len(), 4);
        assert_eq!(standard.settings.loads.len(), 4);
        assert!(skipped.is_empty());
        let pairs = super::super::pairs(&standard).pairs.len() as u64;
        assert_eq!(pairs, 16);
        let units: u64 = crate::suites::Part::plan(&standard)
            .units
            .iter()
            .map(|u| u.count)
            .sum();
        assert_eq!(units, 1 + pairs);
        let (full, _) = free(Profile::Full, Some(100 << 30));
        assert_eq!(full.settings.duration_s, 30);
    }

    #[test]
    fn no_room_for_compile_files_leaves_that_load_out_and_says_so() {
        let (quick, skipped) = free(Profile::Quick, Some(1 << 20));
        assert_eq!(quick.settings.loads.len(), 3);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].contains("Compile"), "{skipped:?}");
    }

    #[test]
    fn explain_reaches_both_parts() {
        let (h, c) = (host(2, Some(100 << 30)), calibration());
        let mut s = setting(Profile::Quick, &h, &c);
        s.explain = Some(3);
        let size = size(Profile::Quick);
        let pinned = config(&s, &size, 1 << 20, vec!["Ring".into()], true).unwrap();
        assert_eq!(pinned.settings.explain, Some(3));
        assert_eq!(pinned.settings.pinned_cpu, Some(0));
    }
}
