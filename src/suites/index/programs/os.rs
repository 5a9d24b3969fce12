//! UnixBench's system-call tests, written in Rust: each runs for its duration and counts loops.

use std::hint::black_box;

use anyhow::{bail, Context, Result};

use crate::platform::clock::monotonic_ns;

/// Calls `body` in batches of `batch` until `deadline_ns`; returns the loops done.
#[inline]
fn until(deadline_ns: u64, batch: u64, mut body: impl FnMut() -> Result<()>) -> Result<u64> {
    let mut n = 0;
    while monotonic_ns() < deadline_ns {
        for _ in 0..batch {
            body()?;
        }
        n += batch;
    }
    Ok(n)
}

/// syscall.c's "mix": close(dup(0)), getpid(), getuid(), umask(022).
pub fn syscall_mix(deadline_ns: u64) -> Result<u64> {
    until(deadline_ns, 1000, || {
        // SAFETY: plain system calls on this process's own descriptors and ids.
        unsafe {
            libc::close(libc::dup(0));
            black_box(libc::getpid());
            black_box(libc::getuid());
            libc::umask(0o022);
        }
        Ok(())
    })
}

/// Waits for a child and checks it exited with 0.
fn reap(pid: libc::pid_t) -> Result<()> {
    let mut status = 0;
    // SAFETY: waiting for our own child.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        bail!("waitpid: {}", std::io::Error::last_os_error());
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        bail!("a child ended with status {status}");
    }
    Ok(())
}

fn pipe_pair() -> Result<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: a two-element array for pipe to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        bail!("pipe: {}", std::io::Error::last_os_error());
    }
    Ok(fds)
}

/// pipe.c: write 512 bytes into a pipe and read them back, in one process.
pub fn pipe_throughput(deadline_ns: u64) -> Result<u64> {
    let fds = pipe_pair()?;
    let mut buf = [0u8; 512];
    let n = until(deadline_ns, 100, || {
        // SAFETY: valid descriptors and a 512-byte buffer.
        unsafe {
            if libc::write(fds[1], buf.as_ptr().cast(), 512) != 512
                || libc::read(fds[0], buf.as_mut_ptr().cast(), 512) != 512
            {
                bail!("pipe i/o: {}", std::io::Error::last_os_error());
            }
        }
        Ok(())
    });
    // SAFETY: closing our own descriptors.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    n
}

/// context1.c: a parent and a child pass a counter back and forth through two pipes, each
/// checking it got the value it expected; a loop is one round trip.
pub fn context1(deadline_ns: u64) -> Result<u64> {
    let (p1, p2) = (pipe_pair()?, pipe_pair()?);
    // SAFETY: the child uses only read, write and _exit on inherited descriptors.
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        bail!("fork: {}", std::io::Error::last_os_error());
    }
    if pid == 0 {
        unsafe {
            libc::close(p1[1]);
            libc::close(p2[0]);
            let mut expect: u64 = 0;
            let mut got: u64 = 0;
            loop {
                if libc::read(p1[0], (&mut got as *mut u64).cast(), 8) != 8 {
                    libc::_exit(0);
                }
                if got != expect {
                    libc::_exit(2);
                }
                if libc::write(p2[1], (&expect as *const u64).cast(), 8) != 8 {
                    libc::_exit(0);
                }
                expect += 1;
            }
        }
    }
    // SAFETY: our own descriptors.
    unsafe {
        libc::close(p1[0]);
        libc::close(p2[1]);
    }
    let mut iter: u64 = 0;
    let result = (|| -> Result<u64> {
        while monotonic_ns() < deadline_ns {
            for _ in 0..100 {
                let mut check: u64 = 0;
                // SAFETY: valid descriptors and 8-byte values.
                unsafe {
                    if libc::write(p1[1], (&iter as *const u64).cast(), 8) != 8
                        || libc::read(p2[0], (&mut check as *mut u64).cast(), 8) != 8
                    {
                        bail!("context1 pipe i/o: {}", std::io::Error::last_os_error());
                    }
                }
                if check != iter {
                    bail!("context1 sync error: expected {iter}, got {check}");
                }
                iter += 1;
            }
        }
        Ok(iter)
    })();
    // SAFETY: closing our ends ends the child's loop; then reap it.
    unsafe {
        libc::close(p1[1]);
        libc::close(p2[0]);
    }
    reap(pid).context("the context1 child")?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soon(ms: u64) -> u64 {
        monotonic_ns() + ms * 1_000_000
    }

    #[test]
    fn each_counts_loops() {
        assert!(syscall_mix(soon(20)).unwrap() > 0);
        assert!(pipe_throughput(soon(20)).unwrap() > 0);
        assert!(context1(soon(50)).unwrap() > 0);
    }
}
