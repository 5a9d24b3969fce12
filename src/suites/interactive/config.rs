use std::path::PathBuf;

use super::benches::BENCHES;
use crate::calibration::CalibrationOptions;
use crate::error::UsageError;
use crate::loads::registry::{self, Here, LOADS};
use crate::model::interactive::{Bench, CustomSpec, InteractiveSettings, Load};
use crate::suites::HostLimits;

/// Most seconds a pair may run (`-t`): a day.
pub const MAX_DURATION_S: u64 = 86_400;
/// The most Burn and Ring threads (`-L`) on a host of up to 128 CPUs (twice the CPUs above):
/// interbench's "CPU load" is meant to be the CPU count; in the thousands a 2-CPU host takes
/// seconds to end the load's threads after Ctrl-C, and a mistyped value could run it out of
/// threads.
pub const MIN_MAX_LOAD_THREADS: u32 = 256;
/// Most time a load runs alone before the bench starts (`--settle-ms`): ten minutes.
pub const MAX_SETTLE_MS: u64 = 600_000;
/// Most Hack groups (`--hack-groups`), of 40 threads each.
pub const MAX_HACK_GROUPS: u32 = 1000;
/// Longest Custom interval (`-I`): ten seconds.
pub const MAX_CUSTOM_INTERVAL_US: u64 = 10_000_000;

/// The names given with `-W/-X/-w/-x`, before validation.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub benches: Vec<String>,
    pub exclude_benches: Vec<String>,
    pub loads: Vec<String>,
    pub exclude_loads: Vec<String>,
}

/// A validated interactive configuration.
#[derive(Debug, Clone)]
pub struct InteractiveConfig {
    pub settings: InteractiveSettings,
    pub calibration: CalibrationOptions,
    /// Where the Write and Read files go (a private subdirectory is made there).
    pub workdir: PathBuf,
    /// Why Memload will not run, if it will not.
    pub memload_disabled: Option<String>,
}

impl HostLimits {
    /// The most Burn and Ring threads (`-L`) on this host: twice the CPUs this process may
    /// use, and up to 256 anywhere.
    pub fn max_load_threads(&self) -> u32 {
        let by_cpus = u32::try_from(self.usable_cpus.saturating_mul(2)).unwrap_or(u32::MAX);
        MIN_MAX_LOAD_THREADS.max(by_cpus)
    }
}

fn parse_benches(names: &[String]) -> Result<Vec<Bench>, UsageError> {
    names
        .iter()
        .map(|n| {
            Bench::parse(n).ok_or_else(|| {
                UsageError::new(format!(
                    "unknown bench {n:?}; the benches are: {}",
                    Bench::names()
                ))
            })
        })
        .collect()
}

fn parse_loads(names: &[String]) -> Result<Vec<Load>, UsageError> {
    names
        .iter()
        .map(|n| {
            Load::parse(n).ok_or_else(|| {
                UsageError::new(format!(
                    "unknown load {n:?}; the loads are: {}",
                    Load::names()
                ))
            })
        })
        .collect()
}

/// The Custom bench and load of `-C PERCENT` and `-I US`, which go together.
pub fn custom_spec(
    cpu_pct: Option<u32>,
    interval_us: Option<u64>,
) -> Result<Option<CustomSpec>, UsageError> {
    match (cpu_pct, interval_us) {
        (Some(cpu_pct), Some(interval_us)) => Ok(Some(CustomSpec {
            cpu_pct,
            interval_us,
        })),
        (None, None) => Ok(None),
        (Some(_), None) => Err(UsageError::new(
            "-C needs -I (the custom interval in microseconds)",
        )),
        (None, Some(_)) => Err(UsageError::new("-I needs -C (the custom CPU percentage)")),
    }
}

impl InteractiveConfig {
    /// Applies interbench's selection rules and checks every option. `settings.benches` and
    /// `settings.loads` are filled here from `selection`.
    pub fn new(
        mut settings: InteractiveSettings,
        selection: &Selection,
        calibration: CalibrationOptions,
        workdir: PathBuf,
        host: &HostLimits,
    ) -> Result<Self, UsageError> {
        check_bounds(&mut settings, host)?;
        let (benches, loads) = select(&settings, selection)?;
        let memload_disabled = size_memload(&mut settings, &loads, host);
        settings.benches = benches;
        settings.loads = loads;
        Ok(InteractiveConfig {
            settings,
            calibration,
            workdir,
            memload_disabled,
        })
    }

    /// Bytes the Write and Read files need on disk.
    pub fn disk_bytes_needed(&self) -> u64 {
        let (mut w, mut r) = (false, false);
        for l in &self.settings.loads {
            let (lw, lr) = l.uses_files();
            w |= lw;
            r |= lr;
        }
        self.settings
            .file_bytes
            .saturating_mul(u64::from(w) + u64::from(r))
    }
}

/// Checks every option's bounds, and makes `-t` a multiple of 10 s as interbench does (unless
/// the time is to be exact).
fn check_bounds(settings: &mut InteractiveSettings, host: &HostLimits) -> Result<(), UsageError> {
    if settings.duration_s == 0 || settings.duration_s > MAX_DURATION_S {
        return Err(UsageError::new(format!(
            "-t must be from 1 to {MAX_DURATION_S} seconds (got {})",
            settings.duration_s
        )));
    }
    // interbench: "Make benchmark a multiple of 10 seconds for proper range of X loads".
    if !settings.exact_time && !settings.duration_s.is_multiple_of(10) {
        settings.requested_s = Some(settings.duration_s);
        settings.duration_s += 10 - settings.duration_s % 10;
    }
    let max_threads = host.max_load_threads();
    if settings.burn_threads == 0 || settings.burn_threads > max_threads {
        return Err(UsageError::new(format!(
            "-L must be from 1 to {max_threads} load threads on this host (got {}): interbench's -L is the number of CPUs to load, usually the CPU count",
            settings.burn_threads
        )));
    }
    if settings.settle_ms > MAX_SETTLE_MS {
        return Err(UsageError::new(format!(
            "--settle-ms must be at most {MAX_SETTLE_MS} (got {})",
            settings.settle_ms
        )));
    }
    if settings.hack_groups == 0 || settings.hack_groups > MAX_HACK_GROUPS {
        return Err(UsageError::new(format!(
            "--hack-groups must be from 1 to {MAX_HACK_GROUPS} (got {})",
            settings.hack_groups
        )));
    }
    if let Some(mb) = settings.memload_mb {
        let most = (host.memory_available_bytes.saturating_add(host.swap_bytes)) >> 20;
        // (MemAvailable unknown: only 0 is refused.)
        if mb == 0 || (most > 0 && mb > most) {
            return Err(UsageError::new(format!(
                "--memload-mb must be from 1 to {most}, the MB of memory and swap available (got {mb})"
            )));
        }
    }
    for (flag, nice) in [("-B", settings.bench_nice), ("-N", settings.load_nice)] {
        if !(-20..=19).contains(&nice) {
            return Err(UsageError::new(format!(
                "{flag} must be a nice level from -20 to 19 (got {nice})"
            )));
        }
    }
    if let Some(c) = settings.custom {
        if c.cpu_pct == 0 || c.cpu_pct > 100 {
            return Err(UsageError::new(format!(
                "-C must be a CPU percentage from 1 to 100 (got {})",
                c.cpu_pct
            )));
        }
        if c.interval_us == 0 || c.interval_us > MAX_CUSTOM_INTERVAL_US {
            return Err(UsageError::new(format!(
                "-I must be from 1 to {MAX_CUSTOM_INTERVAL_US} microseconds (got {})",
                c.interval_us
            )));
        }
    }
    if settings.file_bytes < (1 << 20) {
        return Err(UsageError::new("--file-size must be at least 1 MB"));
    }
    Ok(())
}

/// The benches and loads to run: interbench's selection rules, then `-r`'s and Custom's.
fn select(
    settings: &InteractiveSettings,
    selection: &Selection,
) -> Result<(Vec<Bench>, Vec<Load>), UsageError> {
    // interbench's rule: naming any bench (-W) or load (-w) runs just those; otherwise the
    // defaults run. -X/-x then remove. Custom joins the defaults when -C/-I define it.
    let custom = settings.custom.is_some();
    let mut benches = if selection.benches.is_empty() {
        BENCHES
            .iter()
            .filter(|b| b.default || (custom && b.bench == Bench::Custom))
            .map(|b| b.bench)
            .collect()
    } else {
        parse_benches(&selection.benches)?
    };
    let exclude = parse_benches(&selection.exclude_benches)?;
    benches.retain(|b| !exclude.contains(b));
    let mut loads = if selection.loads.is_empty() {
        LOADS
            .iter()
            .filter(|l| l.default || (custom && l.load == Load::Custom))
            .map(|l| l.load)
            .collect()
    } else {
        parse_loads(&selection.loads)?
    };
    let exclude = parse_loads(&selection.exclude_loads)?;
    loads.retain(|l| !exclude.contains(l));
    benches.sort();
    benches.dedup();
    loads.sort();
    loads.dedup();
    if !custom && (benches.contains(&Bench::Custom) || loads.contains(&Load::Custom)) {
        return Err(UsageError::new(
            "the Custom bench and load need -C PERCENT and -I MICROSECONDS",
        ));
    }
    if settings.realtime {
        let not_rt: Vec<&str> = benches
            .iter()
            .filter(|&&b| !super::benches::info(b).realtime)
            .map(|b| b.name())
            .collect();
        if !selection.benches.is_empty() && !not_rt.is_empty() {
            return Err(UsageError::new(format!(
                "-r benchmarks only Audio, Video and Custom in real time; not {}",
                not_rt.join(", ")
            )));
        }
        benches.retain(|&b| super::benches::info(b).realtime);
    }
    if benches.is_empty() {
        return Err(UsageError::new("no bench left to run"));
    }
    if loads.is_empty() {
        return Err(UsageError::new("no load left to run against"));
    }
    Ok((benches, loads))
}

/// Memload's size, where it runs and none was given; why it cannot run, where it cannot.
fn size_memload(
    settings: &mut InteractiveSettings,
    loads: &[Load],
    host: &HostLimits,
) -> Option<String> {
    // Memload needs swap (the registry's rule); an explicit size runs it anyway.
    if !loads.contains(&Load::Memload) || settings.memload_mb.is_some() {
        return None;
    }
    let here = Here {
        host,
        file_bytes: settings.file_bytes,
        memload_mb: None,
    };
    if let Err(why) = registry::supported(Load::Memload, &here) {
        return Some(why);
    }
    let want = host.memory_available_bytes / 10 * 11;
    let cap = (host.memory_available_bytes + host.swap_bytes).saturating_sub(64 << 20);
    settings.memload_mb = Some(want.min(cap) >> 20);
    None
}

impl InteractiveConfig {
    /// Refuses, before anything runs, what this host would not let the run do as asked: -r
    /// without SCHED_FIFO or with the real-time throttle off, --idle-hold without
    /// /dev/cpu_dma_latency, a negative nice level without the privilege, and disk loads
    /// without the room for their files.
    pub fn check_host(&self) -> Result<(), UsageError> {
        self.check_privileges()?;
        self.check_disk_space()
    }

    /// The privileges -r, --idle-hold and a negative nice level need.
    fn check_privileges(&self) -> Result<(), UsageError> {
        let s = &self.settings;
        if s.realtime {
            if !crate::platform::sched::can_use_fifo() {
                return Err(UsageError::new(
                    "-r needs SCHED_FIFO, which this process may not use: run as root or raise the RT priority rlimit (ulimit -r)",
                ));
            }
            if crate::platform::sched::rt_throttle().is_none() {
                return Err(UsageError::new(
                    "-r refused: the kernel's real-time throttle is off (sched_rt_runtime_us = -1), so a real-time task that overran could take a CPU for good",
                ));
            }
        }
        if s.idle_hold {
            crate::platform::power::hold_cpu_dma_latency().map_err(|e| {
                UsageError::new(format!(
                    "--idle-hold needs to write /dev/cpu_dma_latency (root): {e}"
                ))
            })?;
        }
        if s.bench_nice < 0 || s.load_nice < 0 {
            let allowed = std::thread::spawn(|| crate::platform::sched::set_nice(-1).is_ok())
                .join()
                .unwrap_or(false);
            if !allowed {
                return Err(UsageError::new(
                    "a negative nice level (-B or -N) needs root or CAP_SYS_NICE",
                ));
            }
        }
        Ok(())
    }

    /// The Write and Read loads need their files' room on disk; refuse early rather than fill it.
    fn check_disk_space(&self) -> Result<(), UsageError> {
        let need = self.disk_bytes_needed();
        if need == 0 {
            return Ok(());
        }
        let dir = &self.workdir;
        let free = crate::platform::files::free_bytes(dir).map_err(|e| {
            UsageError::new(format!(
                "cannot use {} for the disk loads: {e}",
                dir.display()
            ))
        })?;
        let need = registry::room_needed(need);
        if free < need {
            return Err(UsageError::new(format!(
                "the Write and Read loads need {} free in {}, and {} is; use --file-size MB, --workdir DIR or -x Write -x Read -x Compile",
                crate::units::bytes(need),
                dir.display(),
                crate::units::bytes(free)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> InteractiveSettings {
        InteractiveSettings {
            duration_s: 1,
            exact_time: true,
            ..InteractiveSettings::example()
        }
    }

    fn config(
        s: InteractiveSettings,
        sel: Selection,
        swap: u64,
    ) -> Result<InteractiveConfig, UsageError> {
        let cal = CalibrationOptions {
            recalibrate: false,
            given_loops_per_ms: None,
            cache_file: PathBuf::from("/nonexistent"),
        };
        InteractiveConfig::new(
            s,
            &sel,
            cal,
            PathBuf::from("."),
            &HostLimits {
                usable_cpus: 2,
                memory_total_bytes: 1 << 34,
                memory_available_bytes: 1 << 33,
                swap_bytes: swap,
                free_disk_bytes: None,
            },
        )
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn defaults_are_interbenchs() {
        let c = config(settings(), Selection::default(), 0).unwrap();
        assert_eq!(
            c.settings.benches,
            vec![Bench::Audio, Bench::Video, Bench::X, Bench::Gaming]
        );
        // Every load but Hack and Custom, in interbench's order.
        assert_eq!(
            c.settings.loads,
            Load::ALL
                .into_iter()
                .filter(|l| ![Load::Hack, Load::Custom].contains(l))
                .collect::<Vec<_>>()
        );
        assert!(c.memload_disabled.is_some());
        let with_swap = config(settings(), Selection::default(), 1 << 32).unwrap();
        assert!(with_swap.memload_disabled.is_none());
        assert!(with_swap.settings.memload_mb.unwrap() > 8000);
        assert_eq!(c.disk_bytes_needed(), 2 << 30);
    }

    #[test]
    fn naming_selects_and_excluding_removes() {
        let sel = Selection {
            benches: names(&["audio"]),
            exclude_loads: names(&[
                "Video", "X", "Burn", "Write", "Read", "Ring", "Compile", "Memload",
            ]),
            ..Selection::default()
        };
        let c = config(settings(), sel, 0).unwrap();
        assert_eq!(c.settings.benches, vec![Bench::Audio]);
        assert_eq!(c.settings.loads, vec![Load::None]);
        assert_eq!(c.disk_bytes_needed(), 0);
        let sel = Selection {
            loads: names(&["hack", "None"]),
            ..Selection::default()
        };
        assert_eq!(
            config(settings(), sel, 0).unwrap().settings.loads,
            vec![Load::None, Load::Hack]
        );
    }

    #[test]
    fn t_is_rounded_up_to_ten_seconds_unless_exact_time() {
        let mut s = settings();
        s.exact_time = false;
        for (given, run) in [(3, 10), (10, 10), (11, 20), (30, 30)] {
            s.duration_s = given;
            let c = config(s.clone(), Selection::default(), 0).unwrap();
            assert_eq!(c.settings.duration_s, run, "-t {given}");
            assert_eq!(
                c.settings.requested_s,
                (given != run).then_some(given),
                "-t {given}"
            );
        }
        s.duration_s = 3;
        s.exact_time = true;
        let c = config(s, Selection::default(), 0).unwrap();
        assert_eq!((c.settings.duration_s, c.settings.requested_s), (3, None));
    }

    #[test]
    fn custom_joins_the_defaults() {
        let mut s = settings();
        s.custom = Some(CustomSpec {
            cpu_pct: 30,
            interval_us: 20_000,
        });
        let c = config(s, Selection::default(), 0).unwrap();
        assert!(c.settings.benches.contains(&Bench::Custom));
        assert!(c.settings.loads.contains(&Load::Custom));
    }

    #[test]
    fn realtime_keeps_rt_benches() {
        let mut s = settings();
        s.realtime = true;
        let c = config(s.clone(), Selection::default(), 0).unwrap();
        assert_eq!(c.settings.benches, vec![Bench::Audio, Bench::Video]);
        let sel = Selection {
            benches: names(&["X"]),
            ..Selection::default()
        };
        assert!(config(s, sel, 0).is_err());
    }

    #[test]
    fn bad_values_are_refused() {
        let bad = |f: &dyn Fn(&mut InteractiveSettings)| {
            let mut s = settings();
            f(&mut s);
            config(s, Selection::default(), 0).unwrap_err().to_string()
        };
        assert!(bad(&|s| s.duration_s = 0).contains("-t"));
        assert!(bad(&|s| s.burn_threads = 0).contains("-L"));
        assert!(bad(&|s| s.custom = Some(CustomSpec {
            cpu_pct: 0,
            interval_us: 10
        }))
        .contains("-C"));
        assert!(bad(&|s| s.custom = Some(CustomSpec {
            cpu_pct: 101,
            interval_us: 10
        }))
        .contains("-C"));
        assert!(bad(&|s| s.bench_nice = 25).contains("-B"));
        let unknown = config(
            settings(),
            Selection {
                benches: names(&["Doom"]),
                ..Selection::default()
            },
            0,
        );
        let msg = unknown.unwrap_err().to_string();
        assert!(
            msg.contains("Doom") && msg.contains("Audio, Video, X, Gaming, Custom"),
            "{msg}"
        );
        let unknown = config(
            settings(),
            Selection {
                exclude_loads: names(&["Disco"]),
                ..Selection::default()
            },
            0,
        );
        assert!(unknown
            .unwrap_err()
            .to_string()
            .contains("None, Video, X, Burn"));
        let custom = config(
            settings(),
            Selection {
                benches: names(&["Custom"]),
                ..Selection::default()
            },
            0,
        );
        assert!(custom.unwrap_err().to_string().contains("-C"));
    }
}
