//! Resource usage (`getrusage`): CPU time and context switches of the calling thread alone
//! (`RUSAGE_THREAD`, so a helper thread's activity never leaks into a run's figures) or of the
//! whole process (`RUSAGE_SELF`).

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary_csw: u64,
    pub involuntary_csw: u64,
}

impl Usage {
    /// The calling thread's usage so far.
    pub fn thread() -> Self {
        Usage::of(libc::RUSAGE_THREAD)
    }

    /// The whole process's usage so far (every thread, not its children).
    pub fn process() -> Self {
        Usage::of(libc::RUSAGE_SELF)
    }

    fn of(who: libc::c_int) -> Self {
        // SAFETY: rusage is plain data that getrusage fills in.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut ru) };
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
        Usage {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
            voluntary_csw: ru.ru_nvcsw as u64,
            involuntary_csw: ru.ru_nivcsw as u64,
        }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            voluntary_csw: self.voluntary_csw.saturating_sub(earlier.voluntary_csw),
            involuntary_csw: self.involuntary_csw.saturating_sub(earlier.involuntary_csw),
        }
    }

    /// User plus system CPU time, ns.
    pub fn cpu_ns(&self) -> u64 {
        self.user_ns + self.sys_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_while_burning() {
        let (thread, process) = (Usage::thread(), Usage::process());
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        assert!(Usage::thread().since(&thread).cpu_ns() > 0);
        assert!(
            Usage::process().since(&process).cpu_ns()
                >= Usage::thread().since(&thread).cpu_ns() / 2
        );
    }
}
