//! fstime.c, written in Rust: write, read or copy a file of `maxblocks` KB in `bufsize`-byte
//! blocks, rewinding at its end, for the duration; the score is KB per second. As fstime does,
//! each phase first fsyncs and lets the disk settle, and the read and copy tests first write (and
//! read) the file for a short priming phase.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::platform::clock::monotonic_ns;

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

struct Files {
    f: File,
    g: File,
    bufsize: usize,
    blocks: u64,
    buf: Vec<u8>,
    settle_ms: u64,
}

impl Files {
    fn settle(&mut self) -> Result<()> {
        self.f.sync_all()?;
        self.g.sync_all()?;
        std::thread::sleep(std::time::Duration::from_millis(self.settle_ms));
        Ok(())
    }

    fn write_phase(&mut self, seconds: f64) -> Result<Rate> {
        self.settle()?;
        let start = monotonic_ns();
        let end = start + (seconds * 1e9) as u64;
        let mut bytes = 0u64;
        'outer: loop {
            for _ in 0..self.blocks {
                self.f.write_all(&self.buf).context("fstime write")?;
                bytes += self.bufsize as u64;
                if monotonic_ns() >= end {
                    break 'outer;
                }
            }
            self.f.seek(SeekFrom::Start(0))?;
        }
        Ok(rate(bytes, start))
    }

    fn read_phase(&mut self, seconds: f64) -> Result<Rate> {
        self.settle()?;
        self.f.seek(SeekFrom::Start(0))?;
        let start = monotonic_ns();
        let end = start + (seconds * 1e9) as u64;
        let mut bytes = 0u64;
        while monotonic_ns() < end {
            let n = self.f.read(&mut self.buf).context("fstime read")?;
            if n < self.bufsize {
                self.f.seek(SeekFrom::Start(0))?;
            }
            bytes += n as u64;
        }
        Ok(rate(bytes, start))
    }

    fn copy_phase(&mut self, seconds: f64) -> Result<Rate> {
        self.settle()?;
        self.f.seek(SeekFrom::Start(0))?;
        let start = monotonic_ns();
        let end = start + (seconds * 1e9) as u64;
        let mut bytes = 0u64;
        while monotonic_ns() < end {
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

/// Runs one fstime test in `dir` (its two files are unlinked from the start).
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
        // fstime slept 2 s twice; short test runs scale it down.
        settle_ms: ((seconds * 1000.0 / 15.0) as u64).min(2000),
    };
    // Priming phases as fstime's: 2 s each, shortened for short runs.
    let prime = (seconds / 15.0).min(2.0);
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
}
