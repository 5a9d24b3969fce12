//! A run's burn-loop calibration: measured, cached or given with -l; checked against the
//! cache and confirmed after the run before it is cached.

use super::*;

/// An iteration count tuned so that the median run of the work took a target time: how the
/// noise suite calibrated before it followed p1bench's rule, kept to read the results stored
/// then.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TargetCalibration {
    pub target_ms: f64,
    pub iterations: u64,
    /// Runs timed at (or near) the target length to tune the count.
    pub timed_runs: usize,
    /// Median absolute deviation of the last pass's timings, as % of their median.
    pub mad_pct: f64,
    /// The median time of the last pass's runs before the final rescale, ms.
    pub last_median_ms: f64,
    pub elapsed_ms: f64,
}

/// Where a `loops_per_ms` figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CalibrationSource {
    /// Measured in this run.
    Measured,
    /// Read from the calibration cache, measured by an earlier run on this host.
    Cached,
    /// Given by the user (`-l`).
    Given,
}

/// The calibrated speed of a burn loop on this host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BurnCalibration {
    pub loops_per_ms: u64,
    /// Which loop. Absent means the chain: results stored before there were two burned with
    /// it, and a result read back must be written back the same.
    #[serde(default, skip_serializing_if = "BurnLoop::is_chain")]
    pub burn_loop: BurnLoop,
    pub source: CalibrationSource,
    /// How the figure was measured (absent when given by the user).
    pub measurement: Option<RateMeasurement>,
    pub measured_at: Option<DateTime<Utc>>,
    /// The cache key: host, CPU model, build profile and loop version.
    pub key: String,
    /// The check of the cached figure at the start of this run, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_check: Option<CacheCheck>,
    /// Why the figure is unsure, when it is: its measurement never passed its check (it is
    /// then never cached, and the run's summary, its stored result and `compare` say so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsure: Option<Text>,
}

/// A cached figure checked against a short measurement at the start of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheCheck {
    /// The figure the cache held.
    pub cached_loops_per_ms: u64,
    /// The loop's speed by the check, loops per ms.
    pub measured_per_ms: f64,
    /// How far the two may differ, %: the check's own noise (see [`check_cached`]).
    pub allowed_pct: f64,
    /// Whether the cached figure was used; else it was measured again.
    pub kept: bool,
}

impl CacheCheck {
    /// The check of `cached_loops_per_ms` by a measurement of `measured_per_ms`: kept when the
    /// measurement `counted` (its thread ran) and lies within `allowed_pct` of the figure.
    pub fn judged(
        cached_loops_per_ms: u64,
        measured_per_ms: f64,
        allowed_pct: f64,
        counted: bool,
    ) -> CacheCheck {
        let mut check = CacheCheck {
            cached_loops_per_ms,
            measured_per_ms,
            allowed_pct,
            kept: false,
        };
        check.kept = counted && check.off_pct().abs() <= allowed_pct;
        check
    }

    /// How far the check's speed lies from the cached figure, % (negative: slower now).
    pub fn off_pct(&self) -> f64 {
        100.0 * (self.measured_per_ms / self.cached_loops_per_ms.max(1) as f64 - 1.0)
    }
}

/// The chain loop's calibration is sure when its timings' median absolute deviation is at
/// most this, %: a steady CPU gives well under 1%; a CPU whose speed moved during the
/// calibration more.
pub const CHAIN_STEADY_MAD_PCT: f64 = 2.0;

/// The short measurement that checks a cached chain figure: 2 ms timings back to back for
/// about 0.15 s.
pub(super) const CHAIN_CHECK_BUDGET: RateBudget = RateBudget {
    chunk_ms: 2.0,
    budget_ms: 150.0,
    min_samples: 15,
    max_samples: 100,
    rest_ms: 0.0,
};

/// interbench's check after a rest accepts a timing within this much of 1 ms, %.
pub(super) const INTERBENCH_CHECK_PCT: f64 = 5.0;

/// Checks a cached figure against a short measurement of the loop now: for interbench's loop,
/// one of interbench's own checks (a rest, then the figure's 1 ms burn, within 5%); for the
/// chain, 0.15 s of timings, within three median absolute deviations of theirs and at least
/// 3%. Outside that, the figure is measured again.
pub fn check_cached(burn_loop: BurnLoop, cached_loops_per_ms: u64) -> CacheCheck {
    let (measured_per_ms, counted, allowed_pct) = match burn_loop {
        BurnLoop::Interbench => {
            let (speed, counted) =
                rested_speed_like_interbench(cached_loops_per_ms, INTERBENCH_RULE.rest_ms);
            (speed, counted, INTERBENCH_CHECK_PCT)
        }
        BurnLoop::Chain => {
            let m = measure_rate(&mut burn_loops, CHAIN_CHECK_BUDGET);
            (m.per_ms, true, chain_allowed_pct(&m))
        }
    };
    CacheCheck::judged(cached_loops_per_ms, measured_per_ms, allowed_pct, counted)
}

/// How far the chain's speed may lie from a figure, %: three median absolute deviations of the
/// measurement `m`, at least 3%.
pub(super) fn chain_allowed_pct(m: &RateMeasurement) -> f64 {
    (3.0 * m.mad_pct).max(3.0)
}

/// Why a fresh measurement is unsure, if it is: interbench's rule ran out of time before a
/// check after a rest passed, or the chain's timings spread more than a steady CPU's.
pub fn unsure(m: &RateMeasurement) -> Option<String> {
    match m.rested_check {
        Some(c) if c.stopped => Some(format!(
            "the calibration was stopped after {:.0} ms, before a check after a rest passed: {}",
            m.elapsed_ms,
            if m.samples == 0 {
                "nothing was timed, so loops_per_ms is no speed of this host"
            } else {
                "loops_per_ms is the median speed of what it had timed"
            }
        )),
        Some(c) if !c.accepted => Some(format!(
            "no check after a {:.0} ms rest passed in {} tries within {:.0} s{}, so loops_per_ms is their median speed (interbench would go on trying)",
            c.rest_ms,
            c.checks,
            m.elapsed_ms / 1e3,
            if c.disturbed > 0 {
                format!(
                    " ({} timings did not count: other tasks had the CPU for over {:.0}% of them)",
                    c.disturbed,
                    100.0 - MIN_RAN_PCT
                )
            } else {
                String::new()
            }
        )),
        Some(_) => None,
        None if m.mad_pct > CHAIN_STEADY_MAD_PCT => Some(format!(
            "its timings varied by ±{:.1}% (median absolute deviation), more than the {CHAIN_STEADY_MAD_PCT}% of a steady CPU",
            m.mad_pct
        )),
        None => None,
    }
}

/// The largest `loops_per_ms` a user may give (`-l`): a hundred times what today's CPUs run
/// (about a million); beyond it a "1 ms" burn would last minutes.
pub const MAX_LOOPS_PER_MS: u64 = 100_000_000;

/// The speeds a cached figure may have to be reused: the dependent multiply-add chain of
/// [`burn_loops`] runs about one step per nanosecond on a current CPU, so a cached value far
/// outside this range was damaged or edited, and using it would make every burn wrong (0) or
/// endless (`u64::MAX`).
pub(super) const PLAUSIBLE_LOOPS_PER_MS: std::ops::RangeInclusive<u64> = 1_000..=MAX_LOOPS_PER_MS;

/// How to obtain `loops_per_ms`: interbench's `-b` (re-measure) and `-l` (use this value).
#[derive(Debug, Clone)]
pub struct CalibrationOptions {
    pub recalibrate: bool,
    pub given_loops_per_ms: Option<u64>,
    pub cache_file: PathBuf,
}

/// The budget of the chain loop's calibration: 2 ms timings back to back for about 0.4 s.
pub const BURN_BUDGET: RateBudget = RateBudget {
    chunk_ms: 2.0,
    budget_ms: 400.0,
    min_samples: 15,
    max_samples: 400,
    rest_ms: 0.0,
};

/// The budget of the interactive suite's drift checks of interbench's loop, before the first
/// pair and after the last: 1 ms timings, each after a 10 ms sleep (a Video period's rest), for
/// about 0.6 s. (Its calibration follows interbench's own rule: [`measure_like_interbench`].)
pub const INTERBENCH_BUDGET: RateBudget = RateBudget {
    chunk_ms: 1.0,
    budget_ms: 600.0,
    min_samples: 15,
    max_samples: 200,
    rest_ms: 10.0,
};

/// The outcome of [`burn_calibration`]: the figure, and a warning when the cache could not be
/// written (the figure is still good; the next run will measure again).
pub struct BurnCalibrationOutcome {
    pub calibration: BurnCalibration,
    pub cache_warning: Option<String>,
}

/// `loops_per_ms` of `burn_loop`: the user's value, else the cached one for this host, CPU and
/// loop if a short measurement now agrees with it ([`check_cached`]), else a fresh measurement,
/// cached only when it passed its own check ([`unsure`]) and is not well below the figure the
/// cache holds ([`slower_than_cached`]): the cache keeps the host's unslowed speed. `missed`
/// hears of each failed check of interbench's rule while it goes on trying.
pub fn burn_calibration(
    opts: &CalibrationOptions,
    burn_loop: BurnLoop,
    missed: &mut dyn FnMut(CheckMissed),
) -> BurnCalibrationOutcome {
    // The chain's calibration takes under a second: it is not worth stopping.
    measured_calibration(opts, burn_loop, missed, &AtomicBool::new(false), true)
}

/// [`burn_calibration`], but a fresh figure is not cached yet: the caller confirms it first
/// (the interactive suite, by the loop's speed after the calibration and at the end of the
/// run) and then caches it with [`commit_to_cache`]. A cached figure the loop now runs faster
/// than is dropped from the cache at once. Interbench's rule stops early once `stop` is set.
pub fn burn_calibration_deferred(
    opts: &CalibrationOptions,
    burn_loop: BurnLoop,
    missed: &mut dyn FnMut(CheckMissed),
    stop: &AtomicBool,
) -> BurnCalibrationOutcome {
    measured_calibration(opts, burn_loop, missed, stop, false)
}

/// The loop's own measurement and cache check, through [`burn_calibration_with`].
pub(super) fn measured_calibration(
    opts: &CalibrationOptions,
    burn_loop: BurnLoop,
    missed: &mut dyn FnMut(CheckMissed),
    stop: &AtomicBool,
    cache_now: bool,
) -> BurnCalibrationOutcome {
    burn_calibration_with(
        opts,
        burn_loop,
        &mut || match burn_loop {
            BurnLoop::Chain => measure_rate(&mut burn_loops, BURN_BUDGET),
            BurnLoop::Interbench => calibrate_like_interbench(INTERBENCH_RULE, missed, stop),
        },
        &mut |cached| check_cached(burn_loop, cached),
        cache_now,
    )
}

/// Why a fresh measurement is unsure because the loop ran slower in it than the figure this
/// host's cache holds (`cached`, measured `at`), if it did by more than a check allows (5% for
/// interbench's loop; three median absolute deviations, at least 3%, for the chain). Nothing
/// but another task on the CPU or its core (a busy neighbour, another tenant of a virtual
/// machine) makes the loop slower on the same host, CPU and build, so the figure is the speed
/// of a slowed CPU: right for this run's burns, but not this host's speed, and never cached.
pub(super) fn slower_than_cached(
    burn_loop: BurnLoop,
    m: &RateMeasurement,
    cached: u64,
    at: Option<DateTime<Utc>>,
) -> Option<String> {
    let off = 100.0 * (m.per_ms / cached as f64 - 1.0);
    let allowed = match burn_loop {
        BurnLoop::Interbench => INTERBENCH_CHECK_PCT,
        BurnLoop::Chain => chain_allowed_pct(m),
    };
    (off < -allowed).then(|| {
        format!(
            "the loop ran at {:.0} loops/ms, {off:+.1}% from the {cached} this host's cache holds{} (allowed -{allowed:.1}%): the CPU ran slow while it calibrated (a busy neighbour or another tenant), so the figure is this run's speed only; if this CPU is slower for good, delete calibration.json in the cache directory (--cache-dir)",
            m.per_ms,
            at.map(|t| format!(" (measured {})", t.format("%Y-%m-%d %H:%M UTC")))
                .unwrap_or_default(),
        )
    })
}

/// Writes a fresh, sure figure to the cache (after [`burn_calibration_deferred`]); a warning
/// when the cache cannot be written.
pub fn commit_to_cache(opts: &CalibrationOptions, calibration: &BurnCalibration) -> Option<String> {
    if calibration.source != CalibrationSource::Measured || calibration.unsure.is_some() {
        return None;
    }
    let mut cache = CalibrationCache::load(&opts.cache_file);
    let mut entry = calibration.clone();
    entry.cache_check = None;
    cache.entries.insert(calibration.key.clone(), entry);
    cache
        .save(&opts.cache_file)
        .err()
        .map(|e| format!("calibration not cached: {e:#}"))
}

/// Why a figure interbench's rule accepted is unsure after all, if it is: the loop ran faster
/// right after it (`after`: 1 ms burns after 10 ms rests, the median of their CPU-time rates)
/// than the figure, by more than the larger of 5% and three times that measurement's noise.
/// The rule can accept a figure while a busy neighbour (another tenant on the same physical
/// core, another of this host's CPUs sharing it) halves the loop's speed for a while, and a
/// figure taken then is the speed of that moment only: the loop runs faster once the
/// neighbour rests. A loop that runs *slower* than the figure afterwards casts no doubt on it
/// (nothing but a neighbour makes the loop slower, and one may be busy during those burns);
/// the drift check reports the speed the loop lost.
pub fn unconfirmed(calibration: &BurnCalibration, after: &RateMeasurement) -> Option<String> {
    unconfirmed_by(calibration, after, "right after the calibration")
}

/// [`unconfirmed`] by a measurement taken `when`.
pub fn unconfirmed_by(
    calibration: &BurnCalibration,
    after: &RateMeasurement,
    when: &str,
) -> Option<String> {
    if calibration.source != CalibrationSource::Measured || calibration.unsure.is_some() {
        return None;
    }
    let off = 100.0 * (after.per_ms / calibration.loops_per_ms.max(1) as f64 - 1.0);
    let allowed = (3.0 * after.mad_pct).max(INTERBENCH_CHECK_PCT);
    (off > allowed).then(|| {
        format!(
            "the loop ran at {:.0} loops/ms in the 1 ms burns {when}, {:+.1}% from its figure (allowed +{allowed:.1}%): it was calibrated while something slowed the CPU",
            after.per_ms, off
        )
    })
}

/// [`burn_calibration`] with the loop's measurement and the check of a cached figure given;
/// a fresh sure figure is cached when `cache_now`.
pub(super) fn burn_calibration_with(
    opts: &CalibrationOptions,
    burn_loop: BurnLoop,
    measure: &mut dyn FnMut() -> RateMeasurement,
    check_cached: &mut dyn FnMut(u64) -> CacheCheck,
    cache_now: bool,
) -> BurnCalibrationOutcome {
    let key = cache_key(burn_loop);
    if let Some(given) = opts.given_loops_per_ms {
        let calibration = BurnCalibration {
            loops_per_ms: given,
            burn_loop,
            source: CalibrationSource::Given,
            measurement: None,
            measured_at: None,
            key,
            cache_check: None,
            unsure: None,
        };
        return BurnCalibrationOutcome {
            calibration,
            cache_warning: None,
        };
    }
    let mut cache = CalibrationCache::load(&opts.cache_file);
    // The figure this host's cache holds, even when asked to measure again (-b): a fresh one
    // well below it was taken while the CPU ran slow.
    let known = cache
        .entries
        .get(&key)
        .filter(|c| PLAUSIBLE_LOOPS_PER_MS.contains(&c.loops_per_ms))
        .map(|c| (c.loops_per_ms, c.measured_at));
    let mut cache_warning = None;
    let mut cache_check = None;
    if !opts.recalibrate {
        if let Some(mut cached) = cache.entries.get(&key).cloned() {
            if PLAUSIBLE_LOOPS_PER_MS.contains(&cached.loops_per_ms) {
                let check = check_cached(cached.loops_per_ms);
                if check.kept {
                    cached.source = CalibrationSource::Cached;
                    cached.cache_check = Some(check);
                    cached.unsure = None;
                    return BurnCalibrationOutcome {
                        calibration: cached,
                        cache_warning: None,
                    };
                }
                cache_check = Some(check);
            } else {
                cache_warning = Some(format!(
                    "the cached loops_per_ms {} in {} is not a speed this loop can have; measured again",
                    cached.loops_per_ms,
                    opts.cache_file.display()
                ));
            }
        }
    }
    let measurement = measure();
    let unsure = unsure(&measurement).or_else(|| {
        known.and_then(|(cached, at)| slower_than_cached(burn_loop, &measurement, cached, at))
    });
    let calibration = BurnCalibration {
        loops_per_ms: measurement.per_ms.round().max(1.0) as u64,
        burn_loop,
        source: CalibrationSource::Measured,
        measurement: Some(measurement),
        measured_at: Some(Utc::now()),
        key: key.clone(),
        cache_check,
        unsure: unsure.map(Text::from),
    };
    // A sure figure replaces the cached one (now, or when the caller has confirmed it); an
    // unsure one is never written. A cached figure the loop now runs faster than is dropped
    // either way: it was taken while the CPU ran slow. One the loop runs slower than stays:
    // a busy neighbour only ever slows the loop, and the next quiet run will pass its check.
    let cached_too_slow = calibration
        .cache_check
        .is_some_and(|c| c.off_pct() > c.allowed_pct);
    let changed = if calibration.unsure.is_none() && cache_now {
        let mut entry = calibration.clone();
        entry.cache_check = None;
        cache.entries.insert(key, entry);
        true
    } else {
        cached_too_slow && cache.entries.remove(&key).is_some()
    };
    if changed {
        if let Err(e) = cache.save(&opts.cache_file) {
            cache_warning = Some(format!("calibration not cached: {e:#}"));
        }
    }
    BurnCalibrationOutcome {
        calibration,
        cache_warning,
    }
}

pub(super) fn cache_key(burn_loop: BurnLoop) -> String {
    format!(
        "{}|{}|{}|{}",
        host::hostname(),
        host::cpu_model(),
        env!("HOSTBENCH_BUILD_PROFILE"),
        burn_loop.cache_name()
    )
}

/// The calibration cache file: one entry per host/CPU/build key.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct CalibrationCache {
    pub(super) entries: BTreeMap<String, BurnCalibration>,
}

impl CalibrationCache {
    /// A missing or unreadable cache is an empty one: calibration then measures afresh. So is
    /// one that another user could have written: its figures would set how long every
    /// simulated task burns. The cache's directory is opened once by a walk that checks it and
    /// every directory above it (`Trust::Own`: this user's or root's, writable by no one
    /// else), and the file is opened through it without following a link and judged by what
    /// was opened (a regular file of this user's or root's that no one else can write).
    pub(super) fn load(path: &Path) -> Self {
        Self::read_trusted(path).unwrap_or_default()
    }

    pub(super) fn read_trusted(path: &Path) -> Option<Self> {
        use std::io::Read;
        let (dir, name) = split_file(path).ok()?;
        let dir = Dir::open(&dir, Trust::Own).ok()?;
        let mut file = dir.open_regular(&name).ok()?;
        let meta = file.metadata().ok()?;
        let me = crate::platform::dir::euid();
        if (meta.uid() != me && meta.uid() != 0) || meta.mode() & 0o022 != 0 {
            return None;
        }
        let mut text = String::new();
        file.read_to_string(&mut text).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes through a new file and a rename in the held directory, so a concurrent reader
    /// never sees half a file; nothing is left behind if the write fails. A directory another
    /// user could change is not written to.
    pub(super) fn save(&self, path: &Path) -> Result<()> {
        let (dir, name) = split_file(path)?;
        let dir = Dir::open_or_create(&dir, 0o700, Trust::Own)?;
        let text = serde_json::to_string_pretty(self)?;
        dir.write_replacing(&name, text.as_bytes(), 0o644)
    }
}
