//! A tracefs instance of hostbench's own (`instances/hostbench-PID-START-N`), with its own ring
//! buffer, events, CPU mask and clock, so the global trace and other tracers stay as they were.
//! It is removed on every way out: by `Drop`, by [`cleanup`](super::cleanup) at a second Ctrl-C,
//! and after a SIGKILL by the next instance's [`sweep_stale`].

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::cleanup::{self, Registered};
use super::procfs::process_start_ticks;

/// Where tracefs lives on current kernels, and where hostbench mounts it when it is not mounted.
const TRACEFS: &str = "/sys/kernel/tracing";
const PREFIX: &str = "hostbench-";

/// The kernel's scheduling events an explanation reads: who ran on each CPU, who was woken and
/// where, who moved, and the interrupt and softirq handlers.
pub const EVENTS: [(&str, &str); 8] = [
    ("sched", "sched_switch"),
    ("sched", "sched_waking"),
    ("sched", "sched_wakeup"),
    ("sched", "sched_migrate_task"),
    ("irq", "irq_handler_entry"),
    ("irq", "irq_handler_exit"),
    ("irq", "softirq_entry"),
    ("irq", "softirq_exit"),
];

/// A running trace instance.
///
/// Dropping it stops and removes it, and unmounts tracefs if hostbench mounted it; its name
/// says which process made it, as a private directory's does. Where it cannot be made (no
/// root, no tracefs in the kernel, an event missing) the reason is one line, and the caller
/// goes on without a trace.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    /// The tracefs mount point, when hostbench mounted it (unmounted on drop).
    mounted: Option<PathBuf>,
    /// Its removal if the process ends abruptly.
    registered: Registered,
}

/// How the instance records.
#[derive(Debug, Clone)]
pub struct Setup<'a> {
    /// The CPUs traced (the bench's); empty: every CPU.
    pub cpus: &'a [usize],
    /// The ring buffer of each CPU, in KiB: bounded, so a long pair cannot grow it.
    pub buffer_kb: u32,
}

static SEQUENCE: AtomicU32 = AtomicU32::new(0);

impl Instance {
    /// Makes, configures and starts an instance; Err is the one-line reason it cannot.
    pub fn start(setup: &Setup<'_>) -> Result<Instance, String> {
        // SAFETY: no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("tracing the scheduler needs root".into());
        }
        let (root, mounted) = tracefs_root()?;
        // From here on, an error unmounts what was mounted.
        let unmount_on_error = |e: String| {
            if mounted {
                unmount(&root);
            }
            e
        };
        let instances = root.join("instances");
        if !instances.is_dir() {
            return Err(unmount_on_error(format!(
                "{} has no instances directory (kernel too old for tracefs instances)",
                root.display()
            )));
        }
        sweep_stale(&instances);
        let me = std::process::id();
        let start = process_start_ticks(me).unwrap_or(0);
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let dir = instances.join(format!("{PREFIX}{me}-{start}-{n}"));
        std::fs::create_dir(&dir)
            .map_err(|e| unmount_on_error(format!("creating {}: {e}", dir.display())))?;
        let mounted = mounted.then_some(root);
        let (d, m) = (dir.clone(), mounted.clone());
        // The killed bench worker's marker file closes when it dies: tried for two seconds.
        let undo = move || {
            stop_and_remove(&d, 200);
            if let Some(root) = &m {
                unmount(root);
            }
        };
        let registered = cleanup::register(dir.display().to_string(), Box::new(undo));
        let instance = Instance {
            dir,
            mounted,
            registered,
        };
        // Dropped on an error below: removed, and unmounted if mounted.
        instance.configure(setup)?;
        Ok(instance)
    }

    fn configure(&self, setup: &Setup<'_>) -> Result<(), String> {
        self.put("tracing_on", "0")?;
        self.put("buffer_size_kb", &setup.buffer_kb.to_string())?;
        // CLOCK_MONOTONIC: the trace's times are the same clock as the samples'.
        self.put("trace_clock", "mono")?;
        if !setup.cpus.is_empty() {
            self.put("tracing_cpumask", &cpumask(setup.cpus))?;
        }
        for (system, event) in EVENTS {
            let file = format!("events/{system}/{event}/enable");
            if !self.dir.join(&file).exists() {
                return Err(format!("this kernel has no {system}:{event} trace event"));
            }
            self.put(&file, "1")?;
        }
        self.put("tracing_on", "1")
    }

    fn put(&self, file: &str, value: &str) -> Result<(), String> {
        std::fs::write(self.dir.join(file), value).map_err(|e| {
            format!(
                "writing {value:?} to {}: {}",
                self.dir.join(file).display(),
                busy_or(e)
            )
        })
    }

    /// Stops recording (what the ring holds stays readable).
    pub fn pause(&self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The text stream of the instance's events, consumed as it is read.
    pub fn pipe(&self) -> PathBuf {
        self.dir.join("trace_pipe")
    }

    /// Where a process writes a line of its own into the instance's trace.
    pub fn marker(&self) -> PathBuf {
        self.dir.join("trace_marker")
    }

    /// Events the ring buffer dropped because nobody read them in time, over every CPU
    /// (`per_cpu/cpuN/stats`, "overrun").
    pub fn overruns(&self) -> u64 {
        let Ok(cpus) = std::fs::read_dir(self.dir.join("per_cpu")) else {
            return 0;
        };
        cpus.flatten()
            .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
            .map(|stats| {
                stats
                    .lines()
                    .filter_map(|l| l.strip_prefix("overrun:"))
                    .filter_map(|v| v.trim().parse::<u64>().ok())
                    .sum::<u64>()
            })
            .sum()
    }
}

/// Opens an instance's marker file (`Instance::marker`) for writing, never through a symlink:
/// the worker that marks its samples is handed the path, in this process or another.
pub fn open_marker(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

impl Drop for Instance {
    /// Removes the instance (and unmounts what was mounted), and only then takes the emergency
    /// removal back: removal may wait up to a second for a reader's pipe to close, and a second
    /// Ctrl-C that ends the process in that second must still find it registered. Taken back
    /// first, the instance was left behind (seen once in CI, `tests/explain.rs`).
    fn drop(&mut self) {
        stop_and_remove(&self.dir, 100);
        if let Some(root) = &self.mounted {
            unmount(root);
        }
        cleanup::unregister(&self.registered);
    }
}

/// Stops an instance and removes its directory. The kernel refuses (EBUSY) while a file of it
/// is open, as a reader's pipe or a dying worker's marker may be for a moment: tried again
/// every 10 ms, `tries` times.
pub fn stop_and_remove(dir: &Path, tries: u32) {
    let _ = std::fs::write(dir.join("tracing_on"), "0");
    for _ in 0..tries {
        match std::fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            _ => return,
        }
    }
}

/// A clearer word for the error a busy tracefs file gives.
fn busy_or(e: io::Error) -> String {
    if e.raw_os_error() == Some(libc::EBUSY) {
        "busy (another tracer holds it)".into()
    } else {
        e.to_string()
    }
}

/// The tracefs mount point, and whether hostbench mounted it just now.
fn tracefs_root() -> Result<(PathBuf, bool), String> {
    if let Some(mount) = tracefs_mount() {
        return Ok((mount, false));
    }
    let target = Path::new(TRACEFS);
    if !target.is_dir() {
        return Err(format!(
            "tracefs is not mounted and {TRACEFS} does not exist to mount it on"
        ));
    }
    let fstype = CString::new("tracefs").expect("no NUL");
    let path = CString::new(TRACEFS).expect("no NUL");
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc = unsafe {
        libc::mount(
            fstype.as_ptr(),
            path.as_ptr(),
            fstype.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(format!(
            "tracefs is not mounted, and mounting it on {TRACEFS} failed: {}",
            io::Error::last_os_error()
        ));
    }
    Ok((target.to_path_buf(), true))
}

/// The first tracefs mount in this process's mount namespace (`/proc/self/mountinfo`),
/// `/sys/kernel/tracing` preferred.
fn tracefs_mount() -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mounts: Vec<PathBuf> = info.lines().filter_map(parse_tracefs_mount).collect();
    mounts
        .iter()
        .find(|m| m.as_path() == Path::new(TRACEFS))
        .or_else(|| mounts.first())
        .cloned()
}

/// A mountinfo line's mount point if the line is a tracefs mount: fields are separated by
/// spaces, the mount point is the fifth, and the file system type follows the " - " separator.
fn parse_tracefs_mount(line: &str) -> Option<PathBuf> {
    let (before, after) = line.split_once(" - ")?;
    if after.split(' ').next()? != "tracefs" {
        return None;
    }
    let point = before.split(' ').nth(4)?;
    // mountinfo escapes space, tab, newline and backslash as \ooo.
    Some(PathBuf::from(unescape_octal(point)))
}

fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn unmount(root: &Path) {
    let Ok(path) = CString::new(root.as_os_str().as_encoded_bytes()) else {
        return;
    };
    // SAFETY: a valid NUL-terminated path. MNT_DETACH: a file still open below it (another
    // tool's, opened after we mounted) does not keep it mounted for good.
    unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
}

/// tracing_cpumask's format: the mask in hex, in 32-bit groups separated by commas, the
/// highest group first.
fn cpumask(cpus: &[usize]) -> String {
    let top = cpus.iter().copied().max().unwrap_or(0);
    let mut groups = vec![0u32; top / 32 + 1];
    for &c in cpus {
        groups[c / 32] |= 1 << (c % 32);
    }
    let mut text: Vec<String> = groups.iter().rev().map(|g| format!("{g:08x}")).collect();
    // The highest group without its leading zeros, as the kernel prints it.
    text[0] = format!("{:x}", groups[groups.len() - 1]);
    text.join(",")
}

/// Whether the process that made an instance of this name is gone (no process with its pid,
/// or one that started at another time).
fn owner_gone(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let mut parts = rest.split('-');
    let (Some(pid), Some(start), Some(_n), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    match process_start_ticks(pid) {
        None => true,
        Some(now) => start != 0 && now != start,
    }
}

/// Removes the instances of hostbench processes that are gone (killed with SIGKILL while
/// tracing); returns their names. Only `hostbench-PID-START-N` directories are touched.
pub fn sweep_stale(instances: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(instances) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if owner_gone(name) {
            let dir = entry.path();
            stop_and_remove(&dir, 10);
            if !dir.exists() {
                removed.push(name.to_string());
            }
        }
    }
    removed
}

/// The instances directory of the mounted tracefs, if tracefs is mounted (for tests and the
/// sweep at start-up).
pub fn instances_dir() -> Option<PathBuf> {
    tracefs_mount().map(|m| m.join("instances"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_mask_is_hex_in_32_bit_groups() {
        assert_eq!(cpumask(&[0, 1]), "3");
        assert_eq!(cpumask(&[4]), "10");
        assert_eq!(cpumask(&[0, 33]), "2,00000001");
        assert_eq!(cpumask(&[63, 64]), "1,80000000,00000000");
    }

    #[test]
    fn a_tracefs_mount_is_found_in_mountinfo() {
        let line = "38 25 0:12 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:16 - tracefs tracefs rw";
        assert_eq!(
            parse_tracefs_mount(line),
            Some(PathBuf::from("/sys/kernel/tracing"))
        );
        let spaced = "38 25 0:12 / /mnt/my\\040trace rw - tracefs nodev rw";
        assert_eq!(
            parse_tracefs_mount(spaced),
            Some(PathBuf::from("/mnt/my trace"))
        );
        let other = "22 1 0:21 / /sys rw shared:7 - sysfs sysfs rw";
        assert_eq!(parse_tracefs_mount(other), None);
    }

    #[test]
    fn only_a_gone_hostbench_owner_is_stale() {
        let me = std::process::id();
        let start = process_start_ticks(me).unwrap();
        assert!(!owner_gone(&format!("hostbench-{me}-{start}-0")));
        // The same pid, another start: a later process reused the pid.
        assert!(owner_gone(&format!("hostbench-{me}-{}-0", start + 1)));
        // No such process (pid_max is at most 2^22).
        assert!(owner_gone("hostbench-99999999-5-0"));
        // Not ours, or not of our form: never touched.
        assert!(!owner_gone("rtla-timerlat-99999999"));
        assert!(!owner_gone("hostbench-99999999"));
        assert!(!owner_gone("hostbench-x-1-0"));
    }
}
