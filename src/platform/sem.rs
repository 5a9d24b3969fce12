//! A POSIX unnamed semaphore shared between the threads of one process: the wake-up primitive
//! interbench uses between a simulated task and its timekeeper (a futex underneath, so a post
//! costs one syscall only when someone waits).

use std::cell::UnsafeCell;
use std::io;

pub struct Semaphore {
    inner: Box<UnsafeCell<libc::sem_t>>,
}

// SAFETY: sem_t is designed to be used from several threads at once; it lives in a Box so its
// address never changes after sem_init.
unsafe impl Send for Semaphore {}
unsafe impl Sync for Semaphore {}

impl Semaphore {
    pub fn new(value: u32) -> io::Result<Self> {
        // SAFETY: zeroed sem_t is then initialised by sem_init before any use.
        let inner = Box::new(UnsafeCell::new(unsafe {
            std::mem::zeroed::<libc::sem_t>()
        }));
        if unsafe { libc::sem_init(inner.get(), 0, value) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Semaphore { inner })
    }

    #[inline]
    pub fn post(&self) {
        // SAFETY: initialised in new(); sem_post only fails on overflow of the count.
        unsafe { libc::sem_post(self.inner.get()) };
    }

    /// Waits for a post; a signal does not end the wait.
    #[inline]
    pub fn wait(&self) {
        // SAFETY: initialised in new().
        while unsafe { libc::sem_wait(self.inner.get()) } != 0 {}
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: no thread can be waiting: the owner is being dropped.
        unsafe { libc::sem_destroy(self.inner.get()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn post_wakes_a_waiter() {
        let s = Arc::new(Semaphore::new(0).unwrap());
        let s2 = Arc::clone(&s);
        let t = std::thread::spawn(move || {
            s2.wait();
            7
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        s.post();
        assert_eq!(t.join().unwrap(), 7);
        let counted = Semaphore::new(2).unwrap();
        counted.wait();
        counted.wait();
    }
}
