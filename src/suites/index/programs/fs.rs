//! fstime.c, written in Rust: write, read or copy a file of `maxblocks` KB in `bufsize`-byte
//! blocks for the duration, scored in KB per second. It follows fstime.c's schedule of settling
//! pauses and priming phases, and ends each phase by SIGALRM as fstime's alarm() does, so the loop
//! reads no clock.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::platform::clock::monotonic_ns;

/// sync(2): every file system's dirty data, as fstime.c calls it before each phase.
fn sync_everything() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Write,
    Read,
    Copy,
}

/// The result of a phase: KB per second and the seconds it ran.
#[derive(Debug, Clone, Copy)]
pub struct Rate {
    pub kbps: f64,
    pub seconds: f64,
}

/// UnixBench runs the file tests for 30 s; fstime's pauses are for that length.
const UNIXBENCH_SECONDS: f64 = 30.0;

/// Set by SIGALRM: the phase is over.
static RANG: AtomicBool = AtomicBool::new(false);

extern "C" fn on_alarm(_: libc::c_int) {
    RANG.store(true, Ordering::Relaxed);
}

/// fstime's alarm(): SIGALRM after `seconds` (an interval timer, for fractions of a second)
/// sets a flag the loop reads. A signal, not a timer thread: while a second thread shares the
/// descriptor table, every read and write takes the file's position lock (fdget_pos), which
/// cost fsbuffer's 256-byte copies 14% against a single-threaded C loop.
struct Alarm;

impl Alarm {
    fn set(seconds: f64) -> Result<Alarm> {
        RANG.store(false, Ordering::Relaxed);
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe; the
        // structures are fully initialised before the calls.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(libc::SIGALRM, &sa, std::ptr::null_mut()) != 0 {
                bail!(
                    "installing the SIGALRM handler: {}",
                    std::io::Error::last_os_error()
                );
            }
            // A zero value would disarm the timer: at least a microsecond.
            let us = ((seconds * 1e6) as i64).max(1);
            let it = libc::itimerval {
                it_interval: libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                },
                it_value: libc::timeval {
                    tv_sec: us / 1_000_000,
                    tv_usec: (us % 1_000_000) as libc::suseconds_t,
                },
            };
            if libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) != 0 {
                bail!("setting the timer: {}", std::io::Error::last_os_error());
            }
        }
        Ok(Alarm)
    }

    #[inline]
    fn rang(&self) -> bool {
        RANG.load(Ordering::Relaxed)
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        // SAFETY: disarming the interval timer; a zeroed itimerval is valid.
        unsafe {
            let off: libc::itimerval = std::mem::zeroed();
            libc::setitimer(libc::ITIMER_REAL, &off, std::ptr::null_mut());
        }
    }
}

struct Files {
    f: File,
    g: File,
    bufsize: usize,
    blocks: u64,
    buf: Vec<u8>,
    /// fstime's pauses and priming phases, scaled to the run's length.
    scale: f64,
}

impl Files {
    fn pause(&self, seconds: f64) {
        std::thread::sleep(Duration::from_secs_f64(seconds * self.scale));
    }

    /// sync, sleep, sync, sleep (`second` s the second time), as fstime.c: its `sync()` writes
    /// out every dirty page of the whole system, not only this test's files, so a phase never
    /// starts behind another program's (or the previous test's) write-back.
    fn settle(&self, second: f64) {
        sync_everything();
        self.pause(2.0);
        sync_everything();
        self.pause(second);
    }

    fn write_phase(&mut self, seconds: f64) -> Result<Rate> {
        self.settle(2.0);
        let alarm = Alarm::set(seconds)?;
        let start = monotonic_ns();
        let mut bytes = 0u64;
        'outer: loop {
            for _ in 0..self.blocks {
                self.f.write_all(&self.buf).context("fstime write")?;
                bytes += self.bufsize as u64;
                if alarm.rang() {
                    break 'outer;
                }
            }
            self.f.seek(SeekFrom::Start(0))?;
        }
        Ok(rate(bytes, start))
    }

    fn read_phase(&mut self, seconds: f64) -> Result<Rate> {
        self.settle(2.0);
        self.f.seek(SeekFrom::Start(0))?;
        let alarm = Alarm::set(seconds)?;
        let start = monotonic_ns();
        let mut bytes = 0u64;
        while !alarm.rang() {
            let n = self.f.read(&mut self.buf).context("fstime read")?;
            if n < self.bufsize {
                self.f.seek(SeekFrom::Start(0))?;
            }
            bytes += n as u64;
        }
        Ok(rate(bytes, start))
    }

    fn copy_phase(&mut self, seconds: f64) -> Result<Rate> {
        self.settle(1.0);
        self.f.seek(SeekFrom::Start(0))?;
        let alarm = Alarm::set(seconds)?;
        let start = monotonic_ns();
        let mut bytes = 0u64;
        while !alarm.rang() {
            let n = self.f.read(&mut self.buf).context("fstime copy read")?;
            if n < self.bufsize {
                self.f.seek(SeekFrom::Start(0))?;
                self.g.seek(SeekFrom::Start(0))?;
                continue;
            }
            self.g.write_all(&self.buf).context("fstime copy write")?;
            bytes += n as u64;
        }
        Ok(rate(bytes, start))
    }
}

fn rate(bytes: u64, start_ns: u64) -> Rate {
    let seconds = (monotonic_ns() - start_ns) as f64 / 1e9;
    Rate {
        kbps: bytes as f64 / 1024.0 / seconds.max(1e-9),
        seconds,
    }
}

/// Runs one fstime test in `dir` (its two files are unlinked from the start), rewinding the
/// file at its end. Each phase first settles (sync, sleep 2 s, sync, sleep 2 s; the copy
/// phase 2 s and 1 s), the read test first writes the file for 2 s, and the copy test writes
/// and reads it for 2 s each. SIGALRM ends the phase, so the loop reads no clock (a clock read
/// per 256-byte write cost fsbuffer 9%) and the process stays single-threaded. Runs shorter
/// than UnixBench's 30 s scale the pauses and priming phases with them.
pub fn fstime(
    mode: Mode,
    bufsize: usize,
    maxblocks: usize,
    seconds: f64,
    dir: &Path,
) -> Result<Rate> {
    if bufsize == 0 || maxblocks == 0 {
        bail!("fstime needs a buffer and blocks");
    }
    let pid = std::process::id();
    let (p0, p1) = (
        dir.join(format!("dummy0.{pid}")),
        dir.join(format!("dummy1.{pid}")),
    );
    // Unlinked as soon as they are open: the kernel frees them however the copy ends (a kill
    // included), and fstime's phases only ever use the descriptors.
    let open = |p: &Path| -> Result<File> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(p)
            .with_context(|| format!("creating {}", p.display()))?;
        std::fs::remove_file(p).with_context(|| format!("unlinking {}", p.display()))?;
        Ok(f)
    };
    let mut files = Files {
        f: open(&p0)?,
        g: open(&p1)?,
        bufsize,
        blocks: (maxblocks * 1024 / bufsize) as u64,
        buf: (0..bufsize).map(|i| (i & 0xff) as u8).collect(),
        scale: (seconds / UNIXBENCH_SECONDS).min(1.0),
    };
    // Priming phases as fstime's: 2 s each at UnixBench's length.
    let prime = 2.0 * files.scale;
    match mode {
        Mode::Write => files.write_phase(seconds),
        Mode::Read => {
            files.write_phase(prime)?;
            files.read_phase(seconds)
        }
        Mode::Copy => {
            files.write_phase(prime)?;
            files.read_phase(prime)?;
            files.copy_phase(seconds)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_and_copy_move_data_and_clean_up() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [Mode::Write, Mode::Read, Mode::Copy] {
            let r = fstime(mode, 1024, 200, 0.3, dir.path()).unwrap();
            assert!(
                r.kbps > 0.0 && r.seconds >= 0.29,
                "{mode:?}: {} KBps in {} s",
                r.kbps,
                r.seconds
            );
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_phase_starts_after_every_file_systems_dirty_data_is_written_out() {
        use crate::platform::blockdev::DeviceCounters;
        // Another program's file, written into the page cache and never synced: fstime.c's
        // sync() writes it out before the phase; an fsync of the test's own files would not.
        let other = tempfile::tempdir().unwrap();
        let path = other.path().join("dirty");
        let mut f = File::create(&path).unwrap();
        let block = vec![7u8; 1 << 20];
        for _ in 0..64 {
            f.write_all(&block).unwrap();
        }
        drop(f);
        let Some(before) = DeviceCounters::of(other.path()) else {
            eprintln!("skipped: the temporary directory has no block device (tmpfs?)");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        fstime(Mode::Write, 1024, 200, 0.3, dir.path()).unwrap();
        let mut after = before.clone();
        after.refresh().unwrap();
        let (_, written) = after.bytes_since(&before);
        assert!(
            written >= 64 << 20,
            "the device {} wrote {written} bytes during the test: the other file's 64 MiB were left dirty",
            before.name
        );
    }
}
