//! Ring: `-L` threads in a circle, each waking the next as soon as it is woken — a load of pure
//! wake-ups and context switches (interbench's emulate_ring).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{BackgroundLoad, Count, RunInputs, Starter, Tally, STACK};
use crate::platform::sem::Semaphore;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ring {
    pub threads: u32,
}

impl Ring {
    pub fn of(run: &RunInputs) -> Ring {
        Ring {
            threads: run.threads,
        }
    }
}

impl BackgroundLoad for Ring {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        let n = self.threads.max(2) as usize;
        let wakeups_done = Count::new(|r| &mut r.ring_wakeups);
        let sems: Arc<Vec<Semaphore>> = Arc::new(
            (0..n)
                .map(|_| Semaphore::new(0))
                .collect::<Result<_, _>>()?,
        );
        // Registered first, so a ring that only partly started still stops: every thread
        // waiting on its semaphore is woken and sees the stop flag.
        let all = Arc::clone(&sems);
        s.on_stop(move || all.iter().for_each(Semaphore::post));
        for i in 0..n {
            let (sems, total) = (Arc::clone(&sems), wakeups_done.adder());
            s.spawn("hb-ring", STACK, move |stop, _| {
                let next = (i + 1) % n;
                let mut wakeups = 0;
                loop {
                    sems[i].wait();
                    if stop.load(Ordering::Relaxed) {
                        // Pass the stop on so every thread in the ring wakes and leaves.
                        sems[next].post();
                        break;
                    }
                    wakeups += 1;
                    sems[next].post();
                }
                total.fetch_add(wakeups, Ordering::Relaxed);
                Ok(())
            })?;
        }
        sems[0].post();
        Ok(Box::new(wakeups_done))
    }
}
