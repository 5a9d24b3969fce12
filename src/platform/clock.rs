//! The one clock every measurement uses: `CLOCK_MONOTONIC`, in nanoseconds, and a sleep to an
//! absolute deadline on that clock (so periodic wake-ups do not drift by the sleep's overhead).
//! A sleep that a stop may end is `signals::sleep_until_unless`.

/// Nanoseconds on `CLOCK_MONOTONIC` since an arbitrary point (boot).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `deadline_ns` (absolute), with `clock_nanosleep` and
/// `TIMER_ABSTIME`. A signal that interrupts the sleep does not shorten it: the sleep resumes
/// towards the same deadline. A deadline already past returns at once.
pub fn sleep_until_ns(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; the remainder pointer may be null with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_never_goes_back() {
        let mut last = monotonic_ns();
        for _ in 0..10_000 {
            let now = monotonic_ns();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn sleep_until_does_not_wake_before_the_deadline() {
        let start = monotonic_ns();
        let deadline = start + 20_000_000;
        sleep_until_ns(deadline);
        let woke = monotonic_ns();
        assert!(woke >= deadline, "woke {} ns early", deadline - woke);
        // Loose upper bound: a noisy 2-core VM can oversleep, but not by a second.
        assert!(woke - deadline < 1_000_000_000);
    }

    #[test]
    fn sleep_until_a_past_deadline_returns_at_once() {
        let start = monotonic_ns();
        sleep_until_ns(start.saturating_sub(1_000_000_000));
        assert!(monotonic_ns() - start < 100_000_000);
    }
}
