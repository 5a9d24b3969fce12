//! The three matrices a request multiplies, in memory as fresh as schbench's: its two factors
//! are never written, so they read the kernel's zero page, whatever their size. How fast the
//! zero page reads depends on the CPU (docs/evidence/schbench.md), so each set is mapped afresh
//! rather than taken from an allocator that may have cleared it by writing.

use anyhow::{anyhow, Result};

/// Where the matrices start in their mapping: 16 bytes in, as a chunk glibc's malloc maps for
/// itself (schbench's of 128 KiB and more). The offset in the page changed a product's time by
/// under 3% (scripts/matrix-memory.sh).
const OFFSET: usize = 16;

/// 3·side² elements of 8 bytes in a private anonymous mapping of their own, never written
/// but by the product (the last third).
pub struct Matrices {
    map: *mut libc::c_void,
    map_len: usize,
    side: usize,
}

// SAFETY: the mapping is owned and unmapped once, on drop. The shared set's product is written
// by several threads at once through `as_ptr`; no one reads it (schbench races the same way).
unsafe impl Send for Matrices {}
unsafe impl Sync for Matrices {}

impl Matrices {
    /// Maps three `side`² matrices; none (and no mapping) for a side of 0.
    pub fn new(side: usize) -> Result<Matrices> {
        let bytes = side
            .checked_mul(side)
            .and_then(|n| n.checked_mul(3 * 8))
            .filter(|&b| b <= isize::MAX as usize - OFFSET)
            .ok_or_else(|| anyhow!("matrices of side {side} do not fit in memory"))?;
        if bytes == 0 {
            return Ok(Matrices {
                map: std::ptr::null_mut(),
                map_len: 0,
                side,
            });
        }
        let map_len = bytes + OFFSET;
        // SAFETY: a new private anonymous mapping, checked below and unmapped on drop.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(anyhow!(
                "mapping {map_len} bytes of matrices: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Matrices { map, map_len, side })
    }

    pub fn side(&self) -> usize {
        self.side
    }

    /// The first element (null for a side of 0). The memory reads as zeros until written.
    pub fn as_ptr(&self) -> *mut u64 {
        if self.map.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: OFFSET lies inside the mapping, which is at least OFFSET + 24 bytes long.
        unsafe { self.map.cast::<u8>().add(OFFSET).cast() }
    }
}

impl Drop for Matrices {
    fn drop(&mut self) {
        if !self.map.is_null() {
            // SAFETY: the mapping made in `new`, unmapped once.
            unsafe { libc::munmap(self.map, self.map_len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The resident KB of the mapping that starts at `addr`, from /proc/self/smaps (the zero
    /// page is counted in no process's Rss).
    fn rss_kb(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((start, _)) = range.split_once('-') {
                    if let Ok(start) = usize::from_str_radix(start, 16) {
                        inside = start == addr;
                        continue;
                    }
                }
            }
            if inside {
                if let Some(kb) = line.strip_prefix("Rss:") {
                    return kb.trim().trim_end_matches(" kB").trim().parse().unwrap();
                }
            }
        }
        panic!("no mapping at {addr:#x} in /proc/self/smaps");
    }

    #[test]
    fn the_factors_read_the_zero_page_and_only_the_product_is_resident() {
        // 73²: schbench's side for --split 50 of 256 KB, 127,896 bytes, below glibc's mmap
        // threshold (a heap chunk that calloc would have zeroed by writing it).
        let m = Matrices::new(73).unwrap();
        let p = m.as_ptr();
        // SAFETY: the factors are 2·73² readable elements.
        let sum: u64 = (0..2 * 73 * 73).map(|i| unsafe { p.add(i).read() }).sum();
        assert_eq!(sum, 0, "fresh matrices read as zeros");
        // SAFETY: 3·73² elements, the last third writable.
        unsafe { super::super::workload::multiply(p, 73) };
        let product_kb = (73 * 73 * 8) as u64 / 1024;
        let rss = rss_kb(m.map as usize);
        assert!(
            rss <= product_kb + 8,
            "{rss} KB resident: the factors were written (the product alone is {product_kb} KB)"
        );
        assert!(
            rss >= product_kb,
            "{rss} KB resident: the product was not written"
        );
    }

    #[test]
    fn a_side_of_zero_maps_nothing() {
        let m = Matrices::new(0).unwrap();
        assert!(m.as_ptr().is_null());
        assert_eq!(m.side(), 0);
    }

    #[test]
    fn a_side_too_large_is_refused() {
        assert!(Matrices::new(usize::MAX / 2).is_err());
    }
}
