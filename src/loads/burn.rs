//! Burn: `-L` threads burning CPU in 1 ms slices until stopped.

use std::sync::atomic::Ordering;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{BackgroundLoad, Count, RunInputs, Starter, Tally, STACK};
use crate::calibration::Burner;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Burn {
    pub threads: u32,
    pub loops_per_ms: u64,
}

impl Burn {
    pub fn of(run: &RunInputs) -> Burn {
        Burn {
            threads: run.threads,
            loops_per_ms: run.loops_per_ms,
        }
    }
}

impl BackgroundLoad for Burn {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        let loops_done = Count::new(|r| &mut r.burn_loops);
        // interbench's loop: its Burn load burns with the loop it calibrated.
        let burner = Burner::interbench(self.loops_per_ms);
        for _ in 0..self.threads {
            let total = loops_done.adder();
            s.spawn("hb-burn", STACK, move |stop, _| {
                let mut loops = 0;
                while !stop.load(Ordering::Relaxed) {
                    burner.burn_ns(1_000_000);
                    loops += burner.loops_per_ms;
                }
                total.fetch_add(loops, Ordering::Relaxed);
                Ok(())
            })?;
        }
        Ok(Box::new(loops_done))
    }
}
