//! The two fixed jobs noise times: p1bench's CPU spin loop and its memory read loop.

use anyhow::{anyhow, Result};

use crate::calibration::burn_loops;

/// p1bench's stride: one read per 64-byte cache line.
pub const CACHE_LINE: usize = 64;

/// A working set for the memory read loop, allocated and every page written before timing, so
/// no run pays for page faults.
pub struct WorkingSet {
    buf: Vec<u8>,
}

impl WorkingSet {
    pub fn new(bytes: usize) -> Result<Self> {
        let mut buf = Vec::new();
        buf.try_reserve_exact(bytes)
            .map_err(|_| anyhow!("cannot allocate a {} MB working set", bytes >> 20))?;
        // Writing every byte faults every page in now rather than in the first timed run.
        buf.resize(bytes, 1u8);
        Ok(WorkingSet { buf })
    }

    /// Reads `count` cache lines, walking the working set at a 64-byte stride and wrapping to its
    /// start, as p1bench's memory loop does. Each read is volatile, so none can be skipped.
    #[inline(never)]
    pub fn read_lines(&self, count: u64) -> u8 {
        let len = self.buf.len();
        let base = self.buf.as_ptr();
        let mut pos = 0usize;
        let mut acc = 0u8;
        for _ in 0..count {
            // SAFETY: pos < len always: it is reset to 0 whenever it reaches len.
            acc = acc.wrapping_add(unsafe { std::ptr::read_volatile(base.add(pos)) });
            pos += CACHE_LINE;
            if pos >= len {
                pos = 0;
            }
        }
        acc
    }
}

/// The job one run performs `iterations` of.
pub enum Workload {
    /// The shared burn loop, p1bench's spin loop.
    Spin,
    /// Cache-line reads over a working set.
    Memory(WorkingSet),
}

impl Workload {
    #[inline]
    pub fn run(&self, iterations: u64) {
        match self {
            Workload::Spin => burn_loops(iterations),
            Workload::Memory(ws) => {
                std::hint::black_box(ws.read_lines(iterations));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrap_around_the_working_set() {
        let ws = WorkingSet::new(4 * CACHE_LINE).unwrap();
        // Every byte is 1, so the sum counts the reads: 10 reads wrap the 4 lines twice.
        assert_eq!(ws.read_lines(10), 10);
        assert_eq!(ws.read_lines(300), 300u64 as u8);
    }

    #[test]
    fn an_impossible_working_set_is_an_error() {
        assert!(WorkingSet::new(usize::MAX / 2).is_err());
    }
}
