//! What a burn loop's calibration did, in words: the check of a cached figure, an unsure
//! figure, a check that missed while the calibration goes on trying.

use crate::calibration::{BurnCalibration, BurnLoop, CacheCheck, CheckMissed, MIN_RAN_PCT};

/// The live line while interbench's rule goes on trying.
pub fn check_missed(c: &CheckMissed) -> String {
    let why = if c.ran_pct < MIN_RAN_PCT {
        format!(
            "other tasks had the CPU for {:.0}% of it",
            100.0 - c.ran_pct
        )
    } else {
        format!(
            "burned {:.3} ms for 1 ms (needs 0.95-1.05): the CPU's speed moved",
            c.took_ms
        )
    };
    format!(
        "calibrating: check {} after a 1 s rest: {why}; trying again ({:.0} of at most {:.0} s)",
        c.check,
        c.elapsed_ms / 1e3,
        c.budget_ms / 1e3
    )
}

/// What the check of the cached figure found, when there was one.
pub fn cache_check(c: &CacheCheck, burn_loop: BurnLoop) -> String {
    let how = match burn_loop {
        BurnLoop::Interbench => "one 1 ms burn after a 1 s rest, as interbench's check",
        BurnLoop::Chain => "0.15 s of 2 ms timings",
    };
    let verdict = if c.kept { "kept" } else { "measured again" };
    format!(
        "Cached calibration checked ({how}): the cached loops_per_ms {} against {:.0} now, {:+.1}% (allowed ±{:.1}%): {verdict}.",
        c.cached_loops_per_ms,
        c.measured_per_ms,
        c.off_pct(),
        c.allowed_pct
    )
}

/// What a short summary says of a calibration: only what went wrong (a cached figure that
/// failed its check, an unsure figure).
pub fn concerns(cal: &BurnCalibration) -> Vec<String> {
    let mut out = lines(cal);
    if cal.cache_check.is_some_and(|c| c.kept) {
        out.remove(0);
    }
    out
}

/// The lines a calibration adds to a report: its cache check, and why it is unsure.
pub fn lines(cal: &BurnCalibration) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &cal.cache_check {
        out.push(cache_check(c, cal.burn_loop));
    }
    if let Some(why) = &cal.unsure {
        out.push(format!(
            "Calibration unsure: {why}; not cached, and every CPU share of this run may be off by as much."
        ));
    }
    out
}
