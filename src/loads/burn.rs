use std::sync::atomic::Ordering;

use anyhow::Result;

use super::{Starter, STACK};
use crate::calibration::Burner;

/// Burn: `threads` threads burning CPU in 1 ms slices until stopped.
pub(super) fn start(s: &mut Starter, threads: u32, burner: Burner) -> Result<()> {
    for _ in 0..threads {
        s.spawn("hb-burn", STACK, move |stop, counters| {
            let mut loops = 0;
            while !stop.load(Ordering::Relaxed) {
                burner.burn_ns(1_000_000);
                loops += burner.loops_per_ms;
            }
            counters.burn_loops.fetch_add(loops, Ordering::Relaxed);
            Ok(())
        })?;
    }
    Ok(())
}
