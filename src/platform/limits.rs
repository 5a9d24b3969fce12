//! The kernel's per-user limits a run can reach: open files, processes and threads. Checked
//! before a run starts, so a run too large for them is refused with the limit's name instead of
//! failing half-way.

use std::io;

fn get(resource: libc::__rlimit_resource_t) -> io::Result<libc::rlimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit to fill.
    if unsafe { libc::getrlimit(resource, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(lim)
}

/// The processes (threads included) this user may run (RLIMIT_NPROC, `ulimit -u`), None when
/// unlimited or not enforced (root is exempt).
pub fn process_limit() -> Option<u64> {
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return None;
    }
    match get(libc::RLIMIT_NPROC) {
        Ok(l) if l.rlim_cur != libc::RLIM_INFINITY => Some(l.rlim_cur),
        _ => None,
    }
}

/// The kernel's limit on threads in the whole system (`kernel.threads-max`).
pub fn system_thread_limit() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Makes room for `needed` open files: raises the soft limit up to the hard one if that is
/// enough. Err with the most this process may open otherwise.
pub fn ensure_open_files(needed: u64) -> Result<(), u64> {
    let Ok(lim) = get(libc::RLIMIT_NOFILE) else {
        return Ok(());
    };
    if lim.rlim_cur >= needed {
        return Ok(());
    }
    if lim.rlim_max >= needed {
        let raised = libc::rlimit {
            rlim_cur: needed,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: a valid rlimit; raising the soft limit up to the hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Ok(());
        }
    }
    Err(lim.rlim_max.max(lim.rlim_cur))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modest_number_of_files_is_allowed_and_an_absurd_one_is_not() {
        assert!(ensure_open_files(16).is_ok());
        let most = ensure_open_files(u64::MAX / 2).unwrap_err();
        assert!(most >= 16);
        assert!(system_thread_limit().unwrap_or(1) > 0);
    }
}
