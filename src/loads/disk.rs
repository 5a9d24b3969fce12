//! Write and Read: streaming I/O on a large file. Read drops the file from the page cache after
//! every pass (`posix_fadvise(POSIX_FADV_DONTNEED)`), so each pass reads from the disk: on a
//! host with more RAM than the file, interbench's Read load only ever read memory.

use std::fs::File;
#[cfg(test)]
use std::io::Read;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use super::{BackgroundLoad, Count, RunInputs, Starter, Tally, STACK};
use crate::platform::blockdev::reads_in_flight;

const CHUNK: usize = 1 << 20;

/// Writes `bytes` to `path` (created or truncated), flushes it to disk and drops it from the
/// cache. Stops early, returning false, when `stop` is set.
pub fn write_file(path: &Path, bytes: u64, stop: &AtomicBool) -> Result<bool> {
    let mut f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    fill_file(&mut f, bytes, stop, false).with_context(|| format!("writing {}", path.display()))
}

/// The Write load's file's name in the run's private directory.
pub const WRITE_FILE: &str = "write.dat";

/// A new file `name` in the directory held as `dir` (never an existing one, never through a
/// link), read-write, unlinked at once through the same descriptor: it lives as long as a
/// descriptor of it is open, so no way out of the run can leave it behind.
pub fn create_unlinked(dir: BorrowedFd<'_>, name: &str) -> Result<File> {
    use rustix::fs::{self as rfs, AtFlags, OFlags};
    let f = open_in(dir, name, OFlags::RDWR | OFlags::EXCL)
        .with_context(|| format!("creating {name} in the run's directory"))?;
    rfs::unlinkat(dir, name, AtFlags::empty())
        .map_err(std::io::Error::from)
        .with_context(|| format!("unlinking {name}"))?;
    Ok(f)
}

/// `name` in the directory held as `dir`, created (mode 0600) if missing, with `flags`
/// besides; never through a link.
fn open_in(dir: BorrowedFd<'_>, name: &str, flags: rustix::fs::OFlags) -> std::io::Result<File> {
    use rustix::fs::{self as rfs, Mode, OFlags};
    let fd = rfs::openat(
        dir,
        name,
        flags | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    Ok(File::from(fd))
}

/// Writes `bytes` into `f` from its start, flushes them to disk and, unless `keep_cached`,
/// drops them from the cache (interbench v0.31 writes its read file, syncs and leaves it in
/// the page cache: `--page-cache`). Stops early, returning false, when `stop` is set.
pub fn fill_file(f: &mut File, bytes: u64, stop: &AtomicBool, keep_cached: bool) -> Result<bool> {
    let buf = pattern();
    let mut left = bytes;
    f.seek(SeekFrom::Start(0))?;
    while left > 0 {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let n = left.min(CHUNK as u64) as usize;
        f.write_all(&buf[..n])?;
        left -= n as u64;
    }
    f.sync_all().context("flushing the file")?;
    if !keep_cached {
        drop_file_cache(f)?;
    }
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

/// Drops a file that a reader may have left mid-read from the page cache. Pages whose
/// readahead is still in flight are locked, and `POSIX_FADV_DONTNEED` passes them by; they
/// land in the cache once their read completes (a whole readahead window: up to
/// `read_ahead_kb`, 8 MiB on some virtual disks). So: drop, wait until the file's device has
/// no read in flight (at most ~200 ms on a device others keep busy), and drop again.
pub fn drop_file_cache_settled(f: &File) -> Result<()> {
    drop_file_cache(f)?;
    let dev = f.metadata()?.dev();
    for _ in 0..200 {
        match reads_in_flight(dev) {
            Some(0) | None => break,
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
    // A request is counted done just before its pages are unlocked.
    std::thread::sleep(std::time::Duration::from_millis(1));
    drop_file_cache(f)
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

/// The block `--page-cache` writes and reads a call, as interbench v0.31: the file's
/// `st_blksize` (4 KiB on most file systems), at least 1 KiB as v0.31 makes it, and at most a
/// chunk (the buffer hostbench has).
fn interbench_block(f: &File) -> Result<usize> {
    let blksize = f
        .metadata()
        .context("the load file's block size")?
        .blksize();
    Ok((blksize as usize).clamp(1024, CHUNK))
}

/// A load's buffer of `block` bytes, allocated as v0.31's (`malloc` / `calloc(1, st_blksize)`): a
/// small block comes from the thread's heap, 16-byte aligned. A block cut from a 1 MiB
/// buffer lies 16 bytes into a page of its own mapping, and the kernel's copy into it ran
/// slower there: 3.4-4.2 GB/s against 4.3-6.5 at offsets 0, 32, 64 and 2048 (4 KiB
/// `pread`s of a cached file, one CPU of a 2-vCPU AMD EPYC guest, four runs each), and the
/// Read load so read 15-25% less than interbench's.
fn block_buffer(block: usize) -> Vec<u8> {
    vec![0u8; block]
}

fn pattern() -> Vec<u8> {
    (0..CHUNK).map(|i| (i % 251) as u8).collect()
}

/// How much the Write load writes before it makes the kernel write it out: a few MB, so the
/// device is always busy and the page cache holds little of the file.
const WRITE_OUT_EVERY: u64 = 8 << 20;

/// Write: streams `file_bytes` (the size of physical RAM, as interbench's Write) into the write
/// file, makes it reach the device as it goes, truncates the file and starts over. The file is
/// unlinked as soon as it is open: the kernel frees it when the load ends, however it ends.
///
/// interbench wrote through the page cache and truncated the file each pass; on a host with
/// more memory than the file, most of it was discarded before write-back began. Here, after
/// every 8 MiB, write-back of that range starts (`sync_file_range(SYNC_FILE_RANGE_WRITE)`), the
/// previous range is waited for (`WAIT_BEFORE | WRITE | WAIT_AFTER`) and dropped from the cache
/// (`posix_fadvise(DONTNEED)`): a streaming writer that keeps the disk busy without filling
/// memory with dirty pages. `bytes_written` counts what was waited for — on the device — and
/// `bytes_handed` what went to `write()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteLoad {
    /// The run's private directory, a descriptor the load worker inherits: the file is made
    /// there new through it ([`WRITE_FILE`]) and unlinked as soon as it is open.
    pub dir_fd: Option<i32>,
    pub file_bytes: u64,
    /// Write as interbench v0.31 does: through the page cache, never waiting for the device,
    /// a `st_blksize` block a call, the file reopened with `O_TRUNC` and closed every pass.
    #[serde(default)]
    pub page_cache: bool,
}

impl WriteLoad {
    pub fn of(run: &RunInputs) -> WriteLoad {
        WriteLoad {
            dir_fd: run.files_dir_fd,
            file_bytes: run.file_bytes,
            page_cache: run.page_cache,
        }
    }
}

impl BackgroundLoad for WriteLoad {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        // Bytes known to be on the device, and bytes handed to `write()`.
        let on_device = Count::new(|r| &mut r.bytes_written);
        let handed = Count::new(|r| &mut r.bytes_handed);
        let passes = Count::new(|r| &mut r.write_passes);
        let dir_fd = self
            .dir_fd
            .ok_or_else(|| anyhow!("the Write load has no directory"))?;
        start_write(
            s,
            dir_fd,
            self.file_bytes,
            self.page_cache,
            on_device.adder(),
            handed.adder(),
            passes.adder(),
        )?;
        Ok(Box::new(vec![
            Box::new(on_device) as Box<dyn Tally>,
            Box::new(handed),
            Box::new(passes),
        ]))
    }

    fn files_fd(&self) -> Option<i32> {
        self.dir_fd
    }
}

fn start_write(
    s: &mut Starter,
    dir_fd: i32,
    file_bytes: u64,
    page_cache: bool,
    on_device: Arc<AtomicU64>,
    handed: Arc<AtomicU64>,
    passes: Arc<AtomicU64>,
) -> Result<()> {
    if page_cache {
        return start_write_as_interbench(s, dir_fd, file_bytes, handed, passes);
    }
    let size = file_bytes.max(WRITE_OUT_EVERY);
    s.spawn("hb-write", STACK, move |stop, _| {
        let buf = pattern();
        let mut f = create_unlinked(crate::platform::dir::borrowed(dir_fd), WRITE_FILE)?;
        while !stop.load(Ordering::Relaxed) {
            // Bytes of this pass written, and of those known to be on the device.
            let (mut offset, mut confirmed) = (0u64, 0u64);
            let mut in_flight: Option<u64> = None;
            while offset < size {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                f.write_all(&buf).context("writing the Write load's file")?;
                offset += CHUNK as u64;
                handed.fetch_add(CHUNK as u64, Ordering::Relaxed);
                if offset % WRITE_OUT_EVERY == 0 {
                    let range = offset - WRITE_OUT_EVERY;
                    write_out(&f, range, WRITE_OUT_EVERY, false)?;
                    if let Some(prev) = in_flight.replace(range) {
                        write_out(&f, prev, WRITE_OUT_EVERY, true)?;
                        confirmed += WRITE_OUT_EVERY;
                        on_device.fetch_add(WRITE_OUT_EVERY, Ordering::Relaxed);
                    }
                }
            }
            f.sync_data().context("flushing the Write load's file")?;
            on_device.fetch_add(offset - confirmed, Ordering::Relaxed);
            drop_file_cache(&f)?;
            f.set_len(0)?;
            f.seek(SeekFrom::Start(0))?;
        }
        Ok(())
    })
}

/// `--page-cache`: the Write load as interbench v0.31's `emulate_write`. Each pass opens the
/// file by its name with `O_TRUNC` (its `fopen(name, "w")`), writes one `st_blksize` block a
/// call (stdio hands a block that size straight to `write(2)`), looks at the stop flag after
/// each block, and closes the file. Closing matters: ext4 (`auto_da_alloc`, on by default)
/// starts write-back of a file that was truncated to nothing and written again when it is
/// closed, so every pass sends the file towards the disk; a file kept open and truncated
/// with `ftruncate` never is. At the stop the file is closed, removed, and everything is
/// synced three times, as v0.31's load does before it reports that it has stopped. The file
/// lives in the run's private directory (this user's alone, entered by its descriptor); the
/// coordinator removes it after every pair too, for a worker that died.
fn start_write_as_interbench(
    s: &mut Starter,
    dir_fd: i32,
    file_bytes: u64,
    handed: Arc<AtomicU64>,
    passes: Arc<AtomicU64>,
) -> Result<()> {
    s.spawn("hb-write", STACK, move |stop, _| {
        let dir = crate::platform::dir::borrowed(dir_fd);
        // v0.31's buffer: one block (`block_buffer`), made once the file's block is known.
        let mut buf = Vec::new();
        let mut block = 0;
        let outcome = (|| -> Result<()> {
            while !stop.load(Ordering::Relaxed) {
                let mut f = open_truncated(dir)?;
                if block == 0 {
                    block = interbench_block(&f)?;
                    buf = block_buffer(block);
                }
                // v0.31: file size in KB / (block / 1024) blocks.
                let blocks = (file_bytes / 1024) / (block as u64 / 1024);
                for _ in 0..blocks {
                    f.write_all(&buf[..block])
                        .context("writing the Write load's file")?;
                    handed.fetch_add(block as u64, Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                }
                drop(f);
                passes.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })();
        let removed = rustix::fs::unlinkat(dir, WRITE_FILE, rustix::fs::AtFlags::empty());
        sync_flush();
        outcome?;
        removed
            .map_err(std::io::Error::from)
            .context("removing the Write load's file")
    })
}

/// The Write load's file in the private directory `dir`, created or truncated, never through
/// a link.
fn open_truncated(dir: BorrowedFd<'_>) -> Result<File> {
    use rustix::fs::OFlags;
    open_in(dir, WRITE_FILE, OFlags::WRONLY | OFlags::TRUNC)
        .context("opening the Write load's file")
}

/// interbench v0.31's `sync_flush`: `sync()` three times. Its main process does this before
/// every pair and its Write load when it stops.
pub fn sync_flush() {
    for _ in 0..3 {
        // SAFETY: sync takes no arguments and cannot fail.
        unsafe { libc::sync() };
    }
}

/// Starts write-back of a range of `f` or, with `wait`, waits until that range is on the
/// device and drops it from the page cache.
fn write_out(f: &File, offset: u64, len: u64, wait: bool) -> Result<()> {
    let flags = if wait {
        libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER
    } else {
        libc::SYNC_FILE_RANGE_WRITE
    };
    // SAFETY: a valid descriptor; the range is within the file or past it (then nothing).
    let rc = unsafe { libc::sync_file_range(f.as_raw_fd(), offset as i64, len as i64, flags) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("sync_file_range");
    }
    if wait {
        // SAFETY: as above; advice only.
        unsafe {
            libc::posix_fadvise(
                f.as_raw_fd(),
                offset as i64,
                len as i64,
                libc::POSIX_FADV_DONTNEED,
            )
        };
    }
    Ok(())
}

/// Read: reads the read file whole, drops it from the cache, and starts over. The file comes
/// as an inherited descriptor of an unlinked file; it is read at offsets of its own (`pread`),
/// since the descriptor's file position is shared with the coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadLoad {
    /// The inherited descriptor of the unlinked file to read.
    pub fd: Option<i32>,
    /// Read as interbench v0.31 does: the file is never dropped from the page cache, a
    /// `st_blksize` block a call.
    #[serde(default)]
    pub page_cache: bool,
}

impl ReadLoad {
    pub fn of(run: &RunInputs) -> ReadLoad {
        ReadLoad {
            fd: run.read_fd,
            page_cache: run.page_cache,
        }
    }
}

impl BackgroundLoad for ReadLoad {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        // Bytes read, and whole passes over the file.
        let bytes = Count::new(|r| &mut r.bytes_read);
        let passes = Count::new(|r| &mut r.read_passes);
        let fd = self
            .fd
            .ok_or_else(|| anyhow!("the Read load has no file"))?;
        start_read(s, fd, self.page_cache, bytes.adder(), passes.adder())?;
        Ok(Box::new(vec![
            Box::new(bytes) as Box<dyn Tally>,
            Box::new(passes),
        ]))
    }

    fn files_fd(&self) -> Option<i32> {
        self.fd
    }
}

fn start_read(
    s: &mut Starter,
    fd: i32,
    page_cache: bool,
    bytes: Arc<AtomicU64>,
    passes: Arc<AtomicU64>,
) -> Result<()> {
    // SAFETY: dup of a descriptor the spec says is open; the new one is ours to own.
    let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if own < 0 {
        return Err(std::io::Error::last_os_error()).context("the Read load's file descriptor");
    }
    // SAFETY: `own` is a new descriptor nothing else owns.
    let f = unsafe { File::from_raw_fd(own) };
    s.spawn("hb-read", STACK, move |stop, _| {
        // v0.31 reads one st_blksize block a call, into a buffer of that size.
        let block = if page_cache {
            interbench_block(&f)?
        } else {
            CHUNK
        };
        let mut buf = block_buffer(block);
        let buf = &mut buf[..];
        // A pass cut short by the end of a pair leaves what it read in the cache, and the next
        // pair's load would read that from memory: drop it at the start and at the end (unless
        // reading from the cache is the point: --page-cache).
        let drop_cache = |f: &File| {
            if page_cache {
                Ok(())
            } else {
                drop_file_cache(f)
            }
        };
        drop_cache(&f)?;
        while !stop.load(Ordering::Relaxed) {
            let mut offset = 0u64;
            loop {
                if stop.load(Ordering::Relaxed) {
                    return if page_cache {
                        Ok(())
                    } else {
                        drop_file_cache_settled(&f)
                    };
                }
                let n = f
                    .read_at(buf, offset)
                    .context("reading the Read load's file")?;
                if n == 0 {
                    break;
                }
                offset += n as u64;
                bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            drop_cache(&f)?;
            passes.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_file_is_left_in_the_cache_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        for keep in [false, true] {
            let path = dir.path().join(format!("f{keep}"));
            let mut f = File::create(&path).unwrap();
            assert!(fill_file(&mut f, 8 * CHUNK as u64, &AtomicBool::new(false), keep).unwrap());
            let resident = resident_fraction(&path).unwrap();
            assert_eq!(resident > 0.9, keep, "kept {keep}: {resident}");
            assert_eq!(resident < 0.1, !keep, "kept {keep}: {resident}");
        }
    }

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
