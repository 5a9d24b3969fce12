//! What a block device really did: its read and written sector counters
//! (`/sys/dev/block/MAJOR:MINOR/stat`), so a disk load can say how many bytes reached the
//! device rather than how many were handed to `write()` (the page cache can absorb, and a
//! truncate can discard, what was never written out).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The block device that holds a path, and its counters at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCounters {
    /// The device's name ("vda", "nvme0n1p2"), or MAJOR:MINOR.
    pub name: String,
    stat: PathBuf,
    pub sectors_read: u64,
    pub sectors_written: u64,
}

/// The counters' unit: these files count 512-byte sectors whatever the device's own size.
pub const SECTOR: u64 = 512;

impl DeviceCounters {
    /// The device of the file system `path` is on, read now. None where it has no block device
    /// (tmpfs, overlay, a network file system) or the kernel shows none.
    pub fn of(path: &Path) -> Option<DeviceCounters> {
        Self::of_dev(std::fs::metadata(path).ok()?.dev())
    }

    /// As [`of`](Self::of), for the file or directory held open as `fd`.
    pub fn of_fd(fd: std::os::fd::BorrowedFd<'_>) -> Option<DeviceCounters> {
        let st = rustix::fs::fstat(fd).ok()?;
        Self::of_dev(st.st_dev)
    }

    fn of_dev(dev: u64) -> Option<DeviceCounters> {
        let dir = sys_dir(dev)?;
        let name = std::fs::read_to_string(dir.join("uevent"))
            .ok()
            .and_then(|u| {
                u.lines()
                    .find_map(|l| l.strip_prefix("DEVNAME=").map(str::to_string))
            })
            .unwrap_or_else(|| format!("{}:{}", libc::major(dev), libc::minor(dev)));
        let mut c = DeviceCounters {
            name,
            stat: dir.join("stat"),
            sectors_read: 0,
            sectors_written: 0,
        };
        c.refresh()?;
        Some(c)
    }

    /// Reads the counters again; None if they cannot be read.
    pub fn refresh(&mut self) -> Option<()> {
        let text = std::fs::read_to_string(&self.stat).ok()?;
        let fields: Vec<u64> = text
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        // Documentation/block/stat.rst: field 3 is sectors read, field 7 sectors written.
        self.sectors_read = *fields.get(2)?;
        self.sectors_written = *fields.get(6)?;
        Some(())
    }

    /// Bytes read and written since `earlier` (of the same device).
    pub fn bytes_since(&self, earlier: &DeviceCounters) -> (u64, u64) {
        (
            self.sectors_read.saturating_sub(earlier.sectors_read) * SECTOR,
            self.sectors_written.saturating_sub(earlier.sectors_written) * SECTOR,
        )
    }
}

/// Reads now in flight on the block device `dev` (a `st_dev`): the first field of
/// `/sys/dev/block/MAJOR:MINOR/inflight`. None where the kernel shows no such device.
pub fn reads_in_flight(dev: u64) -> Option<u64> {
    let text = std::fs::read_to_string(sys_dir(dev)?.join("inflight")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// `/sys/dev/block/MAJOR:MINOR` of a `st_dev`; None for major 0 (no block device: tmpfs,
/// overlay, a network file system).
fn sys_dir(dev: u64) -> Option<PathBuf> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    (major != 0).then(|| PathBuf::from(format!("/sys/dev/block/{major}:{minor}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_synced_write_shows_on_the_device_of_its_file() {
        let dir = tempfile::tempdir_in(".").unwrap();
        let Some(before) = DeviceCounters::of(dir.path()) else {
            eprintln!("skipped: the build directory has no block device");
            return;
        };
        let data = vec![7u8; 4 << 20];
        let path = dir.path().join("f");
        std::fs::write(&path, &data).unwrap();
        std::fs::File::open(&path).unwrap().sync_all().unwrap();
        let mut after = before.clone();
        after.refresh().unwrap();
        let (_, written) = after.bytes_since(&before);
        assert!(written >= 4 << 20, "{} wrote {written} bytes", after.name);
        assert!(DeviceCounters::of(Path::new("/proc")).is_none());
        // Nothing of ours is reading now; a device without one shows none.
        let dev = std::fs::metadata(dir.path()).unwrap().dev();
        assert!(reads_in_flight(dev).is_some());
        assert_eq!(
            reads_in_flight(std::fs::metadata("/proc").unwrap().dev()),
            None
        );
    }
}
