//! A one-waiter wake-up flag on a futex word: the hand-off schbench's threads use. A post sets
//! the flag and makes the `FUTEX_WAKE` system call only when the waiter had said it would
//! block; a wait that finds the flag already set takes it without a system call.

use std::sync::atomic::{AtomicU32, Ordering};

const BLOCKED: u32 = 0;
const RUNNING: u32 = 1;

/// A futex word, private to this process, aligned to its own cache line so that two flags
/// never share one.
#[repr(align(64))]
#[derive(Debug)]
pub struct Flag {
    word: AtomicU32,
}

impl Default for Flag {
    fn default() -> Self {
        Flag {
            word: AtomicU32::new(BLOCKED),
        }
    }
}

fn futex(word: &AtomicU32, op: libc::c_int, val: u32) -> libc::c_long {
    // SAFETY: `word` is a live, aligned u32 for the call's duration; no timeout, no second word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            val,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    }
}

impl Flag {
    /// Says the owner is about to wait: a post from now on wakes it.
    #[inline]
    pub fn block(&self) {
        self.word.store(BLOCKED, Ordering::SeqCst);
    }

    /// Says the owner will not wait after all: a post finds it running and makes no call.
    #[inline]
    pub fn run(&self) {
        self.word.store(RUNNING, Ordering::SeqCst);
    }

    /// Wakes the waiter, if it is blocked (a flag already posted stays posted, one wake-up).
    #[inline]
    pub fn post(&self) {
        if self
            .word
            .compare_exchange(BLOCKED, RUNNING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            futex(&self.word, libc::FUTEX_WAKE, 1);
        }
    }

    /// Waits until the flag is posted and takes the post (the flag is blocked again after).
    #[inline]
    pub fn wait(&self) {
        while self
            .word
            .compare_exchange(RUNNING, BLOCKED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // Sleeps only while the word still says blocked; a post in between returns at once
            // (EAGAIN), as does a signal (EINTR): the loop looks again.
            futex(&self.word, libc::FUTEX_WAIT, BLOCKED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    #[test]
    fn a_post_wakes_a_waiter_and_an_early_post_is_kept() {
        let f = Arc::new(Flag::default());
        let g = Arc::clone(&f);
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            g.wait();
            start.elapsed()
        });
        std::thread::sleep(Duration::from_millis(50));
        f.post();
        let waited = t.join().unwrap();
        assert!(waited >= Duration::from_millis(40), "{waited:?}");
        // A post before the wait: the wait returns at once and takes it.
        f.post();
        let start = Instant::now();
        f.wait();
        assert!(start.elapsed() < Duration::from_millis(40));
        // Taken: the flag is blocked again, and a second post counts once.
        f.post();
        f.post();
        f.wait();
        assert_eq!(f.word.load(Ordering::SeqCst), BLOCKED);
    }
}
