use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Result;

use super::{Starter, STACK};
use crate::platform::sem::Semaphore;

/// Ring: `threads` threads in a circle, each waking the next as soon as it is woken — a load
/// of pure wake-ups and context switches (interbench's emulate_ring).
pub(super) fn start(s: &mut Starter, threads: u32) -> Result<()> {
    let n = threads.max(2) as usize;
    let sems: Arc<Vec<Semaphore>> = Arc::new(
        (0..n)
            .map(|_| Semaphore::new(0))
            .collect::<Result<_, _>>()?,
    );
    // Registered first, so a ring that only partly started still stops: every thread waiting
    // on its semaphore is woken and sees the stop flag.
    let all = Arc::clone(&sems);
    s.unblock
        .push(Box::new(move || all.iter().for_each(Semaphore::post)));
    for i in 0..n {
        let sems = Arc::clone(&sems);
        s.spawn("hb-ring", STACK, move |stop, counters| {
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
            counters.ring_wakeups.fetch_add(wakeups, Ordering::Relaxed);
            Ok(())
        })?;
    }
    sems[0].post();
    Ok(())
}
