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

/// p1bench's CPU spin loop as its README builds it (`gcc -O0`): `for (i = 0; i < count; i++)
/// {;}` with the counter and the count in memory, so each step loads the counter, compares it
/// with the count in memory, and adds one to the counter in memory: a chain through the store
/// buffer, several cycles a step. On x86-64 these are -O0's own instructions (`addq $1, MEM`,
/// `movq MEM, %rax`, `cmpq MEM, %rax`, `jb`); elsewhere the same loads and stores, volatile.
#[inline(never)]
pub fn p1bench_spin(count: u64) {
    // The counter and the count, where -O0 keeps them: in the function's stack frame.
    let mut frame = [0u64, count];
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads and writes the two words of `frame`, which outlives the loop.
    unsafe {
        std::arch::asm!(
            "jmp 3f",
            "2:",
            "add qword ptr [{f}], 1",
            "3:",
            "mov {t}, qword ptr [{f}]",
            "cmp {t}, qword ptr [{f} + 8]",
            "jb 2b",
            f = in(reg) frame.as_mut_ptr(),
            t = out(reg) _,
            options(nostack),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let p = frame.as_mut_ptr();
        // SAFETY: both words are in `frame`; volatile keeps every load and store, as -O0 does.
        unsafe {
            while std::ptr::read_volatile(p) < std::ptr::read_volatile(p.add(1)) {
                std::ptr::write_volatile(p, std::ptr::read_volatile(p) + 1);
            }
        }
    }
    std::hint::black_box(&frame);
}

/// The job one run performs `iterations` of.
pub enum Workload {
    /// p1bench's spin loop ([`p1bench_spin`]): the noise suite's CPU job.
    Spin,
    /// hostbench's burn loop: the short noise check every measuring command makes.
    Burn,
    /// Cache-line reads over a working set.
    Memory(WorkingSet),
}

impl Workload {
    #[inline]
    pub fn run(&self, iterations: u64) {
        match self {
            Workload::Spin => p1bench_spin(iterations),
            Workload::Burn => burn_loops(iterations),
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
    fn the_p1bench_spin_loop_takes_time_in_proportion_to_its_count() {
        p1bench_spin(0);
        // This thread's CPU time, not the wall clock's: the other tests run beside this one,
        // and a 4x count once took 27x the wall time here between their slices.
        let cpu = || crate::calibration::thread_cpu_ns() as f64 / 1e9;
        let time = |n: u64| {
            let t = cpu();
            p1bench_spin(n);
            cpu() - t
        };
        // The fastest of nine of each, as p1bench calibrates, taken in turns so that a stretch
        // in which this shared machine's CPU runs slower slows both. The short count runs four
        // times back to back, so that both spans last as long: another test busy beside this
        // one on a sibling CPU slowed every long run but missed some short ones (4x the count
        // once took 7.57x the time, even on this thread's own clock).
        let (mut short, mut long) = (f64::MAX, f64::MAX);
        for _ in 0..9 {
            let t = cpu();
            for _ in 0..4 {
                p1bench_spin(2_000_000);
            }
            short = short.min(cpu() - t);
            long = long.min(time(8_000_000));
        }
        let ratio = long / short;
        // Folded to a constant it would be about 0.25x; a count that grew work faster, 4x.
        assert!(
            (0.6..1.65).contains(&ratio),
            "4x the count once took {ratio:.2}x the time of the count four times"
        );
        // A step goes through memory: it cannot be folded to nothing.
        assert!(short > 8e-4, "4 x 2 million steps in {short} s");
    }

    #[test]
    fn an_impossible_working_set_is_an_error() {
        assert!(WorkingSet::new(usize::MAX / 2).is_err());
    }
}
