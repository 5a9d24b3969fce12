use std::sync::atomic::Ordering;

use anyhow::Result;

use super::{Starter, STACK};

const MB: usize = 1 << 20;

/// Memload: allocates `mb` one-megabyte blocks, writing every byte, then copies each block over
/// from the one half-way round, frees them all, and starts again (interbench's emulate_memload).
/// Allocation failure shrinks the working set instead of aborting.
pub(super) fn start(s: &mut Starter, mb: u64) -> Result<()> {
    s.spawn("hb-memload", STACK, move |stop, counters| {
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
                counters.memload_mb_touched.fetch_add(1, Ordering::Relaxed);
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
    })
}
