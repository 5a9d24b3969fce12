//! schbench's latency histogram (fio's "plat" buckets): values below 512 each in their own
//! bucket, above that 256 buckets per power of two, so a bucket is at most 1/256 of its value
//! wide; 19 groups reach about 2^26 (67 s in µs). A percentile is read the way schbench reads
//! it: the first bucket at which the running count reaches p% of the samples, said as the
//! middle of that bucket. hostbench's `wakeup` suite records in it so that its percentiles
//! are schbench's to the bucket (docs/wakeup.md).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Bits of a value kept exactly in each group.
const BITS: u32 = 8;
/// Buckets per group.
const GROUP: usize = 1 << BITS;
/// Buckets in all.
pub const BUCKETS: usize = 19 * GROUP;

/// The bucket of `value`.
#[inline]
pub fn bucket(value: u32) -> usize {
    let msb = 31u32.saturating_sub(value.leading_zeros());
    if value == 0 || msb <= BITS {
        return value as usize;
    }
    let dropped = msb - BITS;
    let first = ((dropped + 1) as usize) << BITS;
    let within = (value >> dropped) as usize & (GROUP - 1);
    (first + within).min(BUCKETS - 1)
}

/// The value a bucket stands for: itself below 512, else the middle of its range.
pub fn bucket_value(index: usize) -> u32 {
    if index < 2 * GROUP {
        return index as u32;
    }
    let dropped = (index >> BITS) as u32 - 1;
    let low = 1u64 << (dropped + BITS);
    let k = (index % GROUP) as f64;
    (low as f64 + (k + 0.5) * (1u64 << dropped) as f64) as u32
}

/// A histogram that several threads record into at once and another may read or zero (as
/// schbench's workers record while its main thread sums them): each count is an atomic.
pub struct SharedPlat {
    counts: Box<[AtomicU32]>,
    samples: AtomicU64,
    min: AtomicU32,
    max: AtomicU32,
}

impl Default for SharedPlat {
    fn default() -> Self {
        SharedPlat {
            counts: (0..BUCKETS).map(|_| AtomicU32::new(0)).collect(),
            samples: AtomicU64::new(0),
            min: AtomicU32::new(u32::MAX),
            max: AtomicU32::new(0),
        }
    }
}

impl SharedPlat {
    /// Counts one value; allocates nothing.
    #[inline]
    pub fn record(&self, value: u32) {
        self.max.fetch_max(value, Ordering::Relaxed);
        if value > 0 {
            self.min.fetch_min(value, Ordering::Relaxed);
        }
        self.counts[bucket(value)].fetch_add(1, Ordering::Relaxed);
        self.samples.fetch_add(1, Ordering::Relaxed);
    }

    /// Forgets every value (the warm-up's end).
    pub fn zero(&self) {
        for c in self.counts.iter() {
            c.store(0, Ordering::Relaxed);
        }
        self.samples.store(0, Ordering::Relaxed);
        self.min.store(u32::MAX, Ordering::Relaxed);
        self.max.store(0, Ordering::Relaxed);
    }

    /// Adds this histogram's counts into `into`.
    pub fn add_to(&self, into: &mut Plat) {
        for (sum, c) in into.counts.iter_mut().zip(self.counts.iter()) {
            *sum += u64::from(c.load(Ordering::Relaxed));
        }
        into.samples += self.samples.load(Ordering::Relaxed);
        into.min = into.min.min(self.min.load(Ordering::Relaxed));
        into.max = into.max.max(self.max.load(Ordering::Relaxed));
    }
}

/// A histogram read at one moment: the sum of one or more `SharedPlat`s, or recorded into by
/// one thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Plat {
    counts: Vec<u64>,
    pub samples: u64,
    min: u32,
    max: u32,
}

impl Default for Plat {
    fn default() -> Self {
        Plat {
            counts: vec![0; BUCKETS],
            samples: 0,
            min: u32::MAX,
            max: 0,
        }
    }
}

/// One percentile as schbench prints it: the value, and the samples between the percentile
/// before it (or 0) and this one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentile {
    pub pct: f64,
    pub value: u32,
    pub samples: u64,
}

impl Plat {
    pub fn record(&mut self, value: u32) {
        self.max = self.max.max(value);
        if value > 0 {
            self.min = self.min.min(value);
        }
        self.counts[bucket(value)] += 1;
        self.samples += 1;
    }

    /// The smallest value recorded above 0, or 0 where every value was 0 (schbench's min,
    /// which takes a 0 for "none yet"); None where nothing was recorded.
    pub fn min(&self) -> Option<u32> {
        (self.samples > 0).then_some(if self.min == u32::MAX { 0 } else { self.min })
    }

    pub fn max(&self) -> Option<u32> {
        (self.samples > 0).then_some(self.max)
    }

    /// The buckets that hold anything: each one's value and count, in order.
    pub fn nonzero(&self) -> Vec<(u32, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (bucket_value(i), c))
            .collect()
    }

    /// The values at `pcts` (ascending), by schbench's rule: walking the buckets, the first at
    /// which the running count reaches pct% of the samples. With no samples every percentile
    /// is the first bucket, 0, as schbench prints it.
    pub fn percentiles(&self, pcts: &[f64]) -> Vec<Percentile> {
        let mut out = Vec::with_capacity(pcts.len());
        let (mut running, mut before) = (0u64, 0u64);
        let mut next = pcts.iter().peekable();
        for (i, &c) in self.counts.iter().enumerate() {
            running += c;
            while let Some(&&pct) = next.peek() {
                if (running as f64) < pct / 100.0 * self.samples as f64 {
                    break;
                }
                out.push(Percentile {
                    pct,
                    value: bucket_value(i),
                    samples: running - before,
                });
                before = running;
                next.next();
            }
            if next.peek().is_none() {
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact_and_large_ones_within_a_256th() {
        for v in [0u32, 1, 7, 255, 256, 511] {
            assert_eq!(bucket_value(bucket(v)), v);
        }
        // 512 and 513 share a bucket, said as 513; 1024..=1027 one, said as 1026.
        assert_eq!(bucket(512), bucket(513));
        assert_ne!(bucket(513), bucket(514));
        assert_eq!(bucket_value(bucket(512)), 513);
        assert_eq!(bucket_value(bucket(1027)), 1026);
        for v in [600u32, 10_000, 123_456, 9_999_999, 60_000_000] {
            let back = bucket_value(bucket(v)) as f64;
            assert!(
                (back - v as f64).abs() / v as f64 <= 1.0 / 256.0,
                "{v} -> {back}"
            );
        }
        // Beyond the last group: the last bucket.
        assert_eq!(bucket(u32::MAX), BUCKETS - 1);
        // Buckets only grow with the value.
        let mut last = 0;
        for v in (0..5_000_000u32).step_by(97) {
            let b = bucket(v);
            assert!(b >= last, "{v}");
            last = b;
        }
    }

    #[test]
    fn percentiles_by_the_running_count() {
        let mut p = Plat::default();
        for v in 1..=100u32 {
            p.record(v);
        }
        let got = p.percentiles(&[20.0, 50.0, 90.0, 99.0, 99.9]);
        let values: Vec<u32> = got.iter().map(|p| p.value).collect();
        // 99.9% of 100 is 99.9: the running count reaches it at the 100th value.
        assert_eq!(values, [20, 50, 90, 99, 100]);
        let samples: Vec<u64> = got.iter().map(|p| p.samples).collect();
        assert_eq!(samples, [20, 30, 40, 9, 1]);
        assert_eq!((p.min(), p.max()), (Some(1), Some(100)));
        // A 0 (schbench's first rate sample) is counted but is not the min.
        let mut z = Plat::default();
        z.record(0);
        assert_eq!(z.min(), Some(0));
        z.record(343);
        assert_eq!((z.min(), z.samples), (Some(343), 2));
        // Empty: every percentile at 0, no min or max.
        let e = Plat::default();
        assert!(e.percentiles(&[50.0, 99.0]).iter().all(|p| p.value == 0));
        assert_eq!(e.min(), None);
    }

    #[test]
    fn shared_histograms_sum_and_zero() {
        let (a, b) = (SharedPlat::default(), SharedPlat::default());
        a.record(5);
        a.record(700);
        b.record(3);
        let mut sum = Plat::default();
        a.add_to(&mut sum);
        b.add_to(&mut sum);
        assert_eq!(sum.samples, 3);
        assert_eq!((sum.min(), sum.max()), (Some(3), Some(700)));
        a.zero();
        let mut again = Plat::default();
        a.add_to(&mut again);
        assert_eq!(again.samples, 0);
        assert_eq!(again.max(), None);
    }
}
