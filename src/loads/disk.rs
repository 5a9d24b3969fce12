//! Write and Read: streaming I/O on a large file. Read drops the file from the page cache after
//! every pass (`posix_fadvise(POSIX_FADV_DONTNEED)`), so each pass reads from the disk: on a
//! host with more RAM than the file, interbench's Read load only ever read memory.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, Context, Result};

use super::{LoadSpec, Starter, STACK};

const CHUNK: usize = 1 << 20;

/// Writes `bytes` to `path` (created or truncated), flushes it to disk and drops it from the
/// cache. Stops early, returning false, when `stop` is set.
pub fn write_file(path: &Path, bytes: u64, stop: &AtomicBool) -> Result<bool> {
    let mut f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let buf = pattern();
    let mut left = bytes;
    while left > 0 {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let n = left.min(CHUNK as u64) as usize;
        f.write_all(&buf[..n])
            .with_context(|| format!("writing {}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all()
        .with_context(|| format!("flushing {}", path.display()))?;
    drop_file_cache(&f)?;
    Ok(true)
}

/// Asks the kernel to drop a file's pages from the page cache (clean pages only: write and
/// sync first).
pub fn drop_file_cache(f: &File) -> Result<()> {
    // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(anyhow!(
            "posix_fadvise(DONTNEED): {}",
            std::io::Error::from_raw_os_error(rc)
        ))
    }
}

/// The fraction of a file's pages now in the page cache (from `mincore`).
pub fn resident_fraction(path: &Path) -> Result<f64> {
    let f = File::open(path)?;
    let len = f.metadata()?.len() as usize;
    if len == 0 {
        return Ok(0.0);
    }
    // SAFETY: a read-only shared mapping of a file we keep open; unmapped before returning.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error().into());
        }
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let pages = len.div_ceil(page);
        let mut vec = vec![0u8; pages];
        let rc = libc::mincore(addr, len, vec.as_mut_ptr());
        libc::munmap(addr, len);
        if rc != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok(vec.iter().filter(|&&b| b & 1 == 1).count() as f64 / pages as f64)
    }
}

fn pattern() -> Vec<u8> {
    (0..CHUNK).map(|i| (i % 251) as u8).collect()
}

fn file_of(p: &Option<PathBuf>, what: &str) -> Result<PathBuf> {
    p.clone()
        .ok_or_else(|| anyhow!("the {what} load has no file"))
}

/// Write: streams `file_bytes` into the write file, truncates it, and starts over.
pub(super) fn start_write(s: &mut Starter, spec: &LoadSpec) -> Result<()> {
    let path = file_of(&spec.write_file, "Write")?;
    let size = spec.file_bytes.max(CHUNK as u64);
    s.spawn("hb-write", STACK, move |stop, counters| {
        let buf = pattern();
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        while !stop.load(Ordering::Relaxed) {
            let mut written = 0u64;
            while written < size {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                f.write_all(&buf)
                    .with_context(|| format!("writing {}", path.display()))?;
                written += CHUNK as u64;
                counters
                    .bytes_written
                    .fetch_add(CHUNK as u64, Ordering::Relaxed);
            }
            f.set_len(0)?;
            f.seek(SeekFrom::Start(0))?;
        }
        Ok(())
    })
}

/// Read: reads the read file whole, drops it from the cache, and starts over.
pub(super) fn start_read(s: &mut Starter, spec: &LoadSpec) -> Result<()> {
    let path = file_of(&spec.read_file, "Read")?;
    s.spawn("hb-read", STACK, move |stop, counters| {
        let mut buf = vec![0u8; CHUNK];
        let mut f = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        while !stop.load(Ordering::Relaxed) {
            loop {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let n = f
                    .read(&mut buf)
                    .with_context(|| format!("reading {}", path.display()))?;
                if n == 0 {
                    break;
                }
                counters.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
            }
            drop_file_cache(&f)?;
            counters.read_passes.fetch_add(1, Ordering::Relaxed);
            f.seek(SeekFrom::Start(0))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_is_not_left_in_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        assert!(write_file(&path, 8 * CHUNK as u64, &AtomicBool::new(false)).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8 * CHUNK as u64);
        // Read it all: cached. Then drop it: (almost) nothing left.
        let mut data = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut data).unwrap();
        assert!(resident_fraction(&path).unwrap() > 0.9);
        drop_file_cache(&File::open(&path).unwrap()).unwrap();
        assert!(resident_fraction(&path).unwrap() < 0.1);
    }

    #[test]
    fn writing_stops_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!write_file(
            &dir.path().join("f"),
            8 * CHUNK as u64,
            &AtomicBool::new(true)
        )
        .unwrap());
    }
}
