//! Clean stopping on SIGINT, SIGTERM and SIGHUP. The first signal only sets a flag that
//! measuring loops poll between units of work, so what was measured is kept, reported and
//! stored; a second signal of any of them ends the process at once, for a user who will not
//! wait, after killing the workers' process groups and removing the private directories
//! ([`cleanup::emergency`]). SIGHUP counts as a stop because it is what an ssh session that
//! drops sends: the run is stored and its files removed, as after Ctrl-C.

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::flag;

use super::cleanup;

/// The signals that stop a run.
pub const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// The installed stop.
///
/// The signal handler itself only counts and, from the second signal on, writes a byte to a
/// pipe (both async-signal-safe); a thread that waits on that pipe does the clean-up, which
/// needs locks and file system calls a handler may not make.
#[derive(Clone)]
pub struct StopSignal {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
    /// The installed stop's announcement (none for an unarmed one).
    announce: Option<&'static Announce>,
}

/// The pipe the installed stop is announced on: one byte, written once, never read.
struct Announce {
    read: PipeReader,
    write: PipeWriter,
    written: AtomicBool,
}

impl Announce {
    /// Writes the byte the first time (async-signal-safe: an atomic and a write; once only,
    /// so the pipe can never fill and block a signal handler).
    fn announce(&self) {
        if !self.written.swap(true, Ordering::SeqCst) {
            let b = 1u8;
            // SAFETY: writes one byte from a local to a pipe this process owns.
            unsafe { libc::write(self.write.as_raw_fd(), (&b as *const u8).cast(), 1) };
        }
    }
}

static ANNOUNCE: OnceLock<Announce> = OnceLock::new();

/// The process's one installed stop (handlers are process-wide; installing twice would count
/// every signal twice).
static INSTALLED: OnceLock<StopSignal> = OnceLock::new();

impl StopSignal {
    /// Installs the handlers (once per process; later calls return the same stop).
    pub fn install() -> Result<Self> {
        if let Some(s) = INSTALLED.get() {
            return Ok(s.clone());
        }
        let (read, write) = std::io::pipe().context("creating the stop pipe")?;
        let announce = ANNOUNCE.get_or_init(|| Announce {
            read,
            write,
            written: AtomicBool::new(false),
        });
        let stop = StopSignal {
            announce: Some(announce),
            ..StopSignal::unarmed()
        };
        let (read_end, write_end) = cleanup_pipe()?;
        let count = Arc::new(AtomicUsize::new(0));
        for sig in STOP_SIGNALS {
            flag::register(sig, Arc::clone(&stop.requested))
                .context("installing signal handler")?;
            flag::register_usize(sig, Arc::clone(&stop.signal), sig as usize)
                .context("installing signal handler")?;
            let count = Arc::clone(&count);
            // SAFETY: the action only touches atomics and writes bytes to pipes, all
            // async-signal-safe. It runs after the flag's own action (signal-hook runs a
            // signal's actions in the order they were registered), so a wait woken by the
            // announcement finds the flag set.
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    announce.announce();
                    if count.fetch_add(1, Ordering::SeqCst) >= 1 {
                        let b = sig as u8;
                        libc::write(write_end, (&b as *const u8).cast(), 1);
                    }
                })
            }
            .context("installing signal handler")?;
        }
        std::thread::Builder::new()
            .name("hb-signals".into())
            .spawn(move || {
                let mut b = 0u8;
                loop {
                    // SAFETY: reads one byte into a local from a pipe this thread owns.
                    let n = unsafe { libc::read(read_end, (&mut b as *mut u8).cast(), 1) };
                    if n == 1 {
                        cleanup::emergency();
                        // SAFETY: ends the process without unwinding other threads' stacks.
                        unsafe { libc::_exit(128 + i32::from(b)) };
                    }
                    if n == 0 {
                        return;
                    }
                }
            })
            .context("starting the signal thread")?;
        Ok(INSTALLED.get_or_init(|| stop).clone())
    }

    /// The process's stop, if the handlers were installed: what a wait deep in a library
    /// (an answer from a database server) checks, so a stop signal is not lost on it.
    pub fn installed() -> Option<StopSignal> {
        INSTALLED.get().cloned()
    }

    /// A stop flag no signal sets (for tests and for library callers with their own handling).
    pub fn unarmed() -> Self {
        StopSignal {
            requested: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicUsize::new(0)),
            announce: None,
        }
    }

    /// The flag measuring code looks at (and [`wait`]s on). Set it only through
    /// [`request`](Self::request), which also wakes the waits.
    pub fn flag(&self) -> &AtomicBool {
        &self.requested
    }

    /// Asks for a stop as a signal would (a worker's failure, a closed terminal).
    pub fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
        if let Some(a) = self.announce {
            a.announce();
        }
    }

    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// The signal that asked for the stop, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// The exit code a stopped run ends with: 128 + the signal, as a shell reports it.
    pub fn exit_code(&self) -> i32 {
        128 + self.signal().unwrap_or(SIGINT)
    }

    /// A run's exit code: the stop's when stopped, else 1 after a failure, else 0.
    pub fn run_exit_code(&self, failed: bool) -> i32 {
        if self.is_requested() {
            self.exit_code()
        } else if failed {
            1
        } else {
            0
        }
    }
}

/// What ended a [`wait`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woke {
    /// The stop flag is set.
    Stop,
    /// The deadline passed.
    Deadline,
    /// The descriptor became readable (or its other end was closed).
    Ready,
}

/// Looking at a flag that no announcement wakes a wait for: every 20 ms, as before there was
/// one.
const UNANNOUNCED_STEP_NS: u64 = 20_000_000;

/// Waits until `stop` is set, `deadline_ns` (`CLOCK_MONOTONIC`) passes, or `ready` becomes
/// readable, whichever is first (a set flag wins a tie). When `stop` is the installed stop's
/// flag the wait sleeps in the kernel until one of them happens, waking for nothing else; any
/// other flag (a test's, or a suite's own) is looked at every 20 ms.
///
/// It sleeps in the kernel until the stop is asked for, not in
/// steps of a few milliseconds: the first stop (a signal, or [`StopSignal::request`]) also
/// writes one byte to a second pipe, which is never read, so from then on it stays readable.
/// A coordinator that looked at the flag every 20 ms while a test ran woke its host 50 times a
/// second — enough to move the scheduler's placement of the test's own processes: UnixBench's
/// context1 ran 1.5 times as fast beside a process that only slept 20 ms at a time.
pub fn wait(stop: &AtomicBool, deadline_ns: Option<u64>, ready: Option<RawFd>) -> Woke {
    let announced = INSTALLED
        .get()
        .filter(|s| std::ptr::eq(s.flag(), stop))
        .and_then(|s| s.announce);
    wait_on(stop, announced, deadline_ns, ready)
}

/// Sleeps until `deadline_ns` on `CLOCK_MONOTONIC` unless `stop` is set first; returns whether
/// the deadline was reached (false: stopped). On the installed stop's flag nothing else wakes
/// the sleep ([`wait`]).
pub fn sleep_until_unless(deadline_ns: u64, stop: &AtomicBool) -> bool {
    wait(stop, Some(deadline_ns), None) == Woke::Deadline
}

/// [`wait`], with the announcement that wakes it for `stop` (none: look every 20 ms).
fn wait_on(
    stop: &AtomicBool,
    announced: Option<&Announce>,
    deadline_ns: Option<u64>,
    ready: Option<RawFd>,
) -> Woke {
    let mut announced = announced.map(|a| a.read.as_raw_fd());
    loop {
        if stop.load(Ordering::SeqCst) {
            return Woke::Stop;
        }
        let now = super::clock::monotonic_ns();
        if deadline_ns.is_some_and(|d| now >= d) {
            return Woke::Deadline;
        }
        let mut left = deadline_ns.map(|d| d - now);
        if announced.is_none() {
            left = Some(left.map_or(UNANNOUNCED_STEP_NS, |l| l.min(UNANNOUNCED_STEP_NS)));
        }
        let mut fds = [
            libc::pollfd {
                fd: ready.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: announced.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let timeout = left.map(|l| libc::timespec {
            tv_sec: (l / 1_000_000_000) as libc::time_t,
            tv_nsec: (l % 1_000_000_000) as libc::c_long,
        });
        // SAFETY: two valid pollfds (a negative fd is ignored by the kernel), a valid timespec
        // or null for no limit, and no signal mask.
        let n = unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                2,
                timeout
                    .as_ref()
                    .map_or(std::ptr::null(), |t| t as *const libc::timespec),
                std::ptr::null(),
            )
        };
        if n > 0 && fds[0].revents != 0 {
            if stop.load(Ordering::SeqCst) {
                return Woke::Stop;
            }
            return Woke::Ready;
        }
        if n > 0 && fds[1].revents != 0 && !stop.load(Ordering::SeqCst) {
            // Announced and yet not set: only a flag stored by hand could do that; look at it
            // in steps from now on rather than spin on the readable pipe.
            announced = None;
        }
    }
}

/// The pipe from the handler to the clean-up thread (close-on-exec: no worker inherits it).
fn cleanup_pipe() -> Result<(i32, i32)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("creating the signal pipe");
    }
    Ok((fds[0], fds[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::platform::clock::monotonic_ns;
    use crate::platform::rusage::Usage;

    /// A stop with an announcement of its own (the installed one's is the process's).
    fn announced() -> StopSignal {
        let (read, write) = std::io::pipe().unwrap();
        StopSignal {
            announce: Some(Box::leak(Box::new(Announce {
                read,
                write,
                written: AtomicBool::new(false),
            }))),
            ..StopSignal::unarmed()
        }
    }

    /// Times the waiting thread went to sleep during `wait`, and what ended it.
    fn sleeps_in(wait: impl FnOnce() -> Woke + Send) -> (u64, Woke) {
        std::thread::scope(|s| {
            s.spawn(|| {
                let before = Usage::thread();
                let woke = wait();
                (Usage::thread().since(&before).voluntary_csw, woke)
            })
            .join()
            .unwrap()
        })
    }

    #[test]
    fn an_announced_stop_is_waited_for_without_waking() {
        let stop = announced();
        let flag = AtomicBool::new(false);
        let deadline = || Some(monotonic_ns() + 300_000_000);
        let (quiet, woke) = sleeps_in(|| wait_on(stop.flag(), stop.announce, deadline(), None));
        assert_eq!(woke, Woke::Deadline);
        let (stepped, woke) = sleeps_in(|| wait_on(&flag, None, deadline(), None));
        assert_eq!(woke, Woke::Deadline);
        // 300 ms in 20 ms steps is 15 sleeps; the announced wait sleeps once.
        assert!(quiet <= 3, "the announced wait slept {quiet} times");
        assert!(stepped >= 10, "the stepped wait slept {stepped} times");
    }

    #[test]
    fn a_stop_ends_the_sleep() {
        let start = monotonic_ns();
        assert!(!sleep_until_unless(
            start + 10_000_000_000,
            &AtomicBool::new(true)
        ));
        assert!(sleep_until_unless(
            start + 5_000_000,
            &AtomicBool::new(false)
        ));
        assert!(monotonic_ns() - start < 1_000_000_000);
    }

    #[test]
    fn a_request_ends_the_wait_at_once() {
        let stop = announced();
        let start = monotonic_ns();
        let (sleeps, woke) = std::thread::scope(|s| {
            let waiter = s.spawn(|| sleeps_in(|| wait_on(stop.flag(), stop.announce, None, None)));
            std::thread::sleep(std::time::Duration::from_millis(100));
            stop.request();
            waiter.join().unwrap()
        });
        assert_eq!(woke, Woke::Stop);
        assert!(sleeps <= 3, "slept {sleeps} times");
        assert!(monotonic_ns() - start < 2_000_000_000);
        // Announced once for good: a later wait ends at once.
        let (_, woke) = sleeps_in(|| wait_on(stop.flag(), stop.announce, None, None));
        assert_eq!(woke, Woke::Stop);
    }

    #[test]
    fn a_readable_descriptor_ends_the_wait() {
        let (read, mut write) = std::io::pipe().unwrap();
        let flag = AtomicBool::new(false);
        let (_, woke) = std::thread::scope(|s| {
            s.spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                std::io::Write::write_all(&mut write, b"x").unwrap();
            });
            sleeps_in(|| wait(&flag, None, Some(read.as_raw_fd())))
        });
        assert_eq!(woke, Woke::Ready);
        flag.store(true, Ordering::SeqCst);
        assert_eq!(wait(&flag, None, Some(read.as_raw_fd())), Woke::Stop);
    }

    #[test]
    fn a_request_sets_the_flag() {
        let s = StopSignal::unarmed();
        assert!(!s.is_requested());
        s.request();
        assert!(s.is_requested());
        assert!(s.flag().load(Ordering::Relaxed));
        assert_eq!(s.exit_code(), 130);
        assert_eq!(s.run_exit_code(true), 130);
        let s = StopSignal::unarmed();
        assert_eq!(s.run_exit_code(true), 1);
        assert_eq!(s.run_exit_code(false), 0);
    }
}
