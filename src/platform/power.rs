//! Power management that changes what a latency measurement sees.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};

/// Asks the kernel to keep every CPU's wake-up latency at 0 µs — out of deep idle states —
/// for as long as the returned file stays open (the PM QoS interface cyclictest uses). Needs
/// write access to /dev/cpu_dma_latency, root's by default.
pub fn hold_cpu_dma_latency() -> io::Result<File> {
    let mut f = OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")?;
    f.write_all(&0i32.to_ne_bytes())?;
    Ok(f)
}
