//! Memload: allocates `mb` one-megabyte blocks, writing every byte, then copies each block over
//! from the one half-way round, frees them all, and starts again (interbench's emulate_memload).
//! Allocation failure shrinks the working set instead of aborting.

use std::sync::atomic::Ordering;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{BackgroundLoad, Count, RunInputs, Starter, Tally, STACK};

const MB: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memload {
    pub mb: u64,
}

impl Memload {
    pub fn of(run: &RunInputs) -> Memload {
        Memload { mb: run.memload_mb }
    }
}

impl BackgroundLoad for Memload {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        let touched = Count::new(|r| &mut r.memload_mb_touched);
        let counter = touched.adder();
        let mb = self.mb;
        s.spawn("hb-memload", STACK, move |stop, _| {
            let mut target = mb as usize;
            let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(target);
            while !stop.load(Ordering::Relaxed) && target > 0 {
                for _ in 0..target {
                    let mut b = Vec::new();
                    if b.try_reserve_exact(MB).is_err() {
                        break;
                    }
                    b.resize(MB, 1u8);
                    blocks.push(b);
                    counter.fetch_add(1, Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                }
                target = blocks.len();
                for i in 0..target {
                    let j = (i + target / 2) % target;
                    if i != j {
                        let (src, dst) = if j < i {
                            let (a, b) = blocks.split_at_mut(i);
                            (&a[j], &mut b[0])
                        } else {
                            let (a, b) = blocks.split_at_mut(j);
                            (&b[0], &mut a[i])
                        };
                        dst.copy_from_slice(src);
                    }
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                }
                blocks.clear();
            }
            Ok(())
        })?;
        Ok(Box::new(touched))
    }
}
