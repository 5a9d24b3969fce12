use anyhow::{Context, Result};
use hdrhistogram::Histogram;

/// A fixed-memory histogram of nanosecond values (latencies, run times) with 3 significant
/// digits, from which any percentile can be read. Allocated once before measuring; recording
/// into it never allocates.
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl LatencyHistogram {
    /// Tracks values from 0 up to `max_ns`; larger values are clamped to `max_ns`.
    pub fn new(max_ns: u64) -> Result<Self> {
        let inner =
            Histogram::new_with_bounds(1, max_ns.max(2), 3).context("creating HDR histogram")?;
        Ok(LatencyHistogram { inner })
    }

    #[inline]
    pub fn record(&mut self, value_ns: u64) {
        self.inner.saturating_record(value_ns);
    }

    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    /// The value at percentile `p` (0..=100), within the histogram's precision; None if empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        (self.count() > 0).then(|| self.inner.value_at_percentile(p))
    }

    pub fn max(&self) -> Option<u64> {
        (self.count() > 0).then(|| self.inner.max())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_uniform_ramp() {
        let mut h = LatencyHistogram::new(10_000_000).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.count(), 1000);
        let within = |got: u64, want: u64| (got as f64 - want as f64).abs() / (want as f64) < 0.002;
        assert!(within(h.percentile(50.0).unwrap(), 500_000));
        assert!(within(h.percentile(99.0).unwrap(), 990_000));
        assert!(within(h.percentile(99.9).unwrap(), 999_000));
        assert!(within(h.max().unwrap(), 1_000_000));
    }

    #[test]
    fn empty_clamped_and_zero() {
        let mut a = LatencyHistogram::new(1_000_000).unwrap();
        assert_eq!(a.percentile(50.0), None);
        a.record(100);
        a.record(5_000_000); // clamped to the top
        assert_eq!(a.count(), 2);
        // A zero (a frame with no overrun) stays zero.
        let mut z = LatencyHistogram::new(1_000_000).unwrap();
        z.record(0);
        z.record(0);
        z.record(500);
        assert_eq!(z.percentile(50.0), Some(0));
        assert!(a.max().unwrap() <= 1_001_000);
    }
}
