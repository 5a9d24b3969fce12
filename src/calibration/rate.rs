//! Measuring a loop's speed: the median of many short timings under a time budget, with
//! the median absolute deviation as its stability.

use super::*;

/// Iterations per millisecond of some work, from many timings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateMeasurement {
    /// The work's speed: the median rate per millisecond of the thread's own CPU time.
    pub per_ms: f64,
    /// The median rate per millisecond of wall-clock time: below `per_ms` by the share of the
    /// time this thread was not running (other processes, the hypervisor).
    pub wall_per_ms: f64,
    /// Timings taken.
    pub samples: usize,
    /// Median absolute deviation of the per-timing CPU-time rates, as % of their median.
    pub mad_pct: f64,
    /// Wall time the measurement took, ms.
    pub elapsed_ms: f64,
    /// Set when the figure was found by interbench's rule ([`measure_like_interbench`]): how
    /// its checks after a rest went. Absent for a median of timings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rested_check: Option<RestedCheck>,
}

/// The median absolute deviation of `rates`, as % of `per_ms` (0 when that is 0).
pub(super) fn mad_pct(rates: &[f64], per_ms: f64) -> f64 {
    let mad = median_absolute_deviation(rates).unwrap_or(0.0);
    if per_ms > 0.0 {
        100.0 * mad / per_ms
    } else {
        0.0
    }
}

/// Limits of a rate measurement.
#[derive(Debug, Clone, Copy)]
pub struct RateBudget {
    /// Length of one timing; long enough that clock overhead is negligible.
    pub chunk_ms: f64,
    /// Sampling stops after this much wall time, once `min_samples` are in.
    pub budget_ms: f64,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Sleep this long before each timing (0: back to back), so that each times the work on a
    /// CPU that has just woken, as a periodic task finds it.
    pub rest_ms: f64,
}

/// Measures how many iterations of `work` run per millisecond. First doubles the iteration
/// count until one timing lasts `chunk_ms`, then times chunks of that size until the budget is
/// spent. Each chunk is timed in the thread's own CPU time, so time-sharing with other
/// processes does not count (on a shared 2-vCPU VM it moved the wall-clock median by 17% in one
/// window), while what really slows the work — a busy sibling hyperthread, a lower clock — does;
/// the figure is the median, the typical speed. (Taking the fastest timings instead picked the
/// rare fast mode of a loop whose speed was bimodal on one Xeon host.) A wall-clock cap of three
/// budgets bounds the whole thing even on a host that is preempting this process most of the
/// time.
pub fn measure_rate(work: &mut dyn FnMut(u64), budget: RateBudget) -> RateMeasurement {
    let start = monotonic_ns();
    let chunk_ns = (budget.chunk_ms * 1e6) as u64;
    let budget_ns = (budget.budget_ms * 1e6) as u64;
    let hard_cap_ns = budget_ns * 3;

    // Warm the code and caches, then grow to the chunk size.
    work(1);
    let mut n = 1024u64;
    loop {
        let t = time_ns(work, n);
        if t >= chunk_ns || monotonic_ns() - start > budget_ns {
            break;
        }
        // Jump close to the chunk size once a timing is long enough to be trusted.
        n = if t > chunk_ns / 16 {
            (n as f64 * chunk_ns as f64 / t as f64 * 1.05).ceil() as u64
        } else {
            n * 2
        };
    }

    let mut rates = Vec::with_capacity(budget.max_samples);
    let mut wall_rates = Vec::with_capacity(budget.max_samples);
    loop {
        let elapsed = monotonic_ns() - start;
        let enough = rates.len() >= budget.min_samples && elapsed > budget_ns;
        if !rates.is_empty()
            && (enough || elapsed > hard_cap_ns || rates.len() >= budget.max_samples)
        {
            break;
        }
        if budget.rest_ms > 0.0 {
            std::thread::sleep(std::time::Duration::from_secs_f64(budget.rest_ms / 1e3));
        }
        let (cpu0, wall0) = (thread_cpu_ns(), monotonic_ns());
        work(n);
        let (cpu, wall) = (
            (thread_cpu_ns() - cpu0).max(1),
            (monotonic_ns() - wall0).max(1),
        );
        rates.push(n as f64 * 1e6 / cpu as f64);
        wall_rates.push(n as f64 * 1e6 / wall as f64);
    }
    let per_ms = median(&rates).unwrap_or(0.0);
    RateMeasurement {
        per_ms,
        wall_per_ms: median(&wall_rates).unwrap_or(0.0),
        samples: rates.len(),
        mad_pct: mad_pct(&rates, per_ms),
        elapsed_ms: (monotonic_ns() - start) as f64 / 1e6,
        rested_check: None,
    }
}
