//! Per-thread resource usage (`getrusage(RUSAGE_THREAD)`): CPU time and context switches of the
//! measuring thread alone, so a helper thread's activity never leaks into a run's figures.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary_csw: u64,
    pub involuntary_csw: u64,
}

impl ThreadUsage {
    pub fn now() -> Self {
        // SAFETY: rusage is plain data that getrusage fills in.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
        ThreadUsage {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
            voluntary_csw: ru.ru_nvcsw as u64,
            involuntary_csw: ru.ru_nivcsw as u64,
        }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(&self, earlier: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            voluntary_csw: self.voluntary_csw.saturating_sub(earlier.voluntary_csw),
            involuntary_csw: self.involuntary_csw.saturating_sub(earlier.involuntary_csw),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_while_burning() {
        let before = ThreadUsage::now();
        crate::calibration::burn_loops(50_000_000);
        let used = ThreadUsage::now().since(&before);
        assert!(used.user_ns + used.sys_ns > 0);
    }
}
