//! Background loads, each as threads inside a load worker process, started by [`start`] and
//! stopped by [`LoadHandle::stop`], which joins every thread and reports what the load did.
//! Each load is a file of its own that owns its parameters (its variant of [`LoadSpec`]) and its
//! counters (a [`Tally`]), and implements [`BackgroundLoad`]; whether it can run on a host is its
//! line in `registry`.

mod burn;
mod compile;
mod disk;
mod hack;
mod memload;
pub mod registry;
mod ring;
pub mod sim;
mod simulation;

pub use disk::{
    create_unlinked, drop_file_cache, fill_file, resident_fraction, sync_flush, write_file,
    WRITE_FILE,
};

#[cfg(test)]
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use crate::model::interactive::{CustomSpec, DeviceTraffic, Load, LoadReport};
use crate::platform::blockdev::DeviceCounters;
use crate::platform::sched::{self, Policy};
use crate::platform::sem::Semaphore;

/// What the run knows that a load may take its parameters from.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInputs {
    /// `-L`: Burn and Ring threads.
    pub threads: u32,
    pub loops_per_ms: u64,
    /// The run's private directory, where Write makes the file it writes over and over
    /// (unlinked as soon as it is open): a descriptor the load worker inherits.
    pub files_dir_fd: Option<i32>,
    /// The open descriptor of the file Read reads: created beforehand by the coordinator,
    /// unlinked, and inherited by the load worker, so the kernel frees it however the run ends.
    pub read_fd: Option<i32>,
    pub file_bytes: u64,
    /// Write and Read through the page cache, as interbench v0.31's (`--page-cache`).
    pub page_cache: bool,
    /// Memload's size in MB.
    pub memload_mb: u64,
    pub hack_groups: u32,
    pub custom: Option<CustomSpec>,
    /// How a simulation load's timekeeper runs.
    pub timekeeping: sim::Timekeeping,
}

/// One load and its own parameters: what a load worker is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "load")]
pub enum LoadSpec {
    None,
    Burn(burn::Burn),
    Write(disk::WriteLoad),
    Read(disk::ReadLoad),
    Compile(compile::Compile),
    Ring(ring::Ring),
    Memload(memload::Memload),
    Hack(hack::Hack),
    Simulation(simulation::Simulation),
}

impl LoadSpec {
    /// `load`'s spec, its parameters taken from what the run knows.
    pub fn new(load: Load, run: &RunInputs) -> LoadSpec {
        match load {
            Load::None => LoadSpec::None,
            Load::Burn => LoadSpec::Burn(burn::Burn::of(run)),
            Load::Write => LoadSpec::Write(disk::WriteLoad::of(run)),
            Load::Read => LoadSpec::Read(disk::ReadLoad::of(run)),
            Load::Compile => LoadSpec::Compile(compile::Compile::of(run)),
            Load::Ring => LoadSpec::Ring(ring::Ring::of(run)),
            Load::Memload => LoadSpec::Memload(memload::Memload::of(run)),
            Load::Hack => LoadSpec::Hack(hack::Hack::of(run)),
            Load::Video | Load::X | Load::Custom => {
                LoadSpec::Simulation(simulation::Simulation::of(load, run))
            }
        }
    }

    /// The load this runs.
    pub fn load(&self) -> Load {
        match self {
            LoadSpec::None => Load::None,
            LoadSpec::Burn(_) => Load::Burn,
            LoadSpec::Write(_) => Load::Write,
            LoadSpec::Read(_) => Load::Read,
            LoadSpec::Compile(_) => Load::Compile,
            LoadSpec::Ring(_) => Load::Ring,
            LoadSpec::Memload(_) => Load::Memload,
            LoadSpec::Hack(_) => Load::Hack,
            LoadSpec::Simulation(s) => s.load(),
        }
    }

    /// The descriptors the load worker must inherit: the Read file's, and the directory
    /// Write makes its file in.
    pub fn inherited_fds(&self) -> Vec<i32> {
        match self {
            LoadSpec::Read(r) => r.fd.into_iter().collect(),
            LoadSpec::Write(w) => w.dir_fd.into_iter().collect(),
            LoadSpec::Compile(c) => c.read.fd.into_iter().chain(c.write.dir_fd).collect(),
            _ => Vec::new(),
        }
    }

    fn unit(&self) -> Option<&dyn BackgroundLoad> {
        Some(match self {
            LoadSpec::None => return None,
            LoadSpec::Burn(l) => l,
            LoadSpec::Write(l) => l,
            LoadSpec::Read(l) => l,
            LoadSpec::Compile(l) => l,
            LoadSpec::Ring(l) => l,
            LoadSpec::Memload(l) => l,
            LoadSpec::Hack(l) => l,
            LoadSpec::Simulation(l) => l,
        })
    }
}

/// A background load.
///
/// Every load thread sets SCHED_OTHER explicitly and reports the policy it ran with.
pub trait BackgroundLoad {
    /// Starts the load's threads on `s`; the tally reads what they counted once they stopped.
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>>;
    /// A descriptor of the load's file or its directory: the traffic of the block device
    /// that holds it is reported.
    fn files_fd(&self) -> Option<i32> {
        None
    }
}

/// What a running load counts, written into its report when it has stopped.
pub trait Tally: Send {
    fn report(&self, report: &mut LoadReport);
}

/// A load that counts nothing but its threads and their policies.
struct Uncounted;

impl Tally for Uncounted {
    fn report(&self, _report: &mut LoadReport) {}
}

/// One count a load's threads add to (relaxed: read once, when they have stopped), and the
/// field of the report it goes in.
struct Count {
    total: Arc<AtomicU64>,
    field: fn(&mut LoadReport) -> &mut u64,
}

impl Count {
    fn new(field: fn(&mut LoadReport) -> &mut u64) -> Count {
        Count {
            total: Arc::default(),
            field,
        }
    }

    /// What a thread adds to.
    fn adder(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.total)
    }
}

impl Tally for Count {
    fn report(&self, report: &mut LoadReport) {
        *(self.field)(report) = self.total.load(Ordering::Relaxed);
    }
}

/// Several tallies: a load with more than one count, or of several parts.
impl Tally for Vec<Box<dyn Tally>> {
    fn report(&self, report: &mut LoadReport) {
        for t in self {
            t.report(report);
        }
    }
}

/// The policies the load's threads ran with, as each reported its own.
#[derive(Default)]
pub struct Policies(Mutex<Vec<Policy>>);

impl Policies {
    /// Sets the calling load thread to SCHED_OTHER, names it and records its policy.
    fn enter_thread(&self, name: &str) {
        sched::name_current_thread(name);
        let _ = sched::set_current_thread_policy(Policy::Other);
        self.record(sched::current_thread_policy());
    }

    pub fn record(&self, p: Policy) {
        if let Ok(mut v) = self.0.lock() {
            v.push(p);
        }
    }
}

/// A running load.
pub struct LoadHandle {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<()>>>,
    policies: Arc<Policies>,
    tally: Box<dyn Tally>,
    /// Called after the stop flag is set, to wake threads blocked in the kernel.
    unblock: Vec<Box<dyn FnOnce() + Send>>,
    /// What the threads wait on before they work, and whether it was opened.
    gate: Arc<Semaphore>,
    opened: bool,
    /// The disk loads' files' descriptor, and their device as the load began.
    files_fd: Option<i32>,
    device: Option<DeviceCounters>,
}

impl LoadHandle {
    /// Lets the load's threads, made and waiting since [`prepare`], start working. The
    /// device's counters are read first.
    pub fn go(&mut self) {
        if self.opened {
            return;
        }
        self.device = self
            .files_fd
            .and_then(|fd| DeviceCounters::of_fd(crate::platform::dir::borrowed(fd)));
        self.open_gate();
    }

    fn open_gate(&mut self) {
        for _ in 0..self.threads.len() {
            self.gate.post();
        }
        self.opened = true;
    }

    /// Stops every thread, joins them and reports. A thread's error is returned after all have
    /// been joined.
    pub fn stop(mut self) -> Result<LoadReport> {
        self.stop.store(true, Ordering::SeqCst);
        if !self.opened {
            // Threads still at the gate see the stop flag as they pass it.
            self.open_gate();
        }
        for f in self.unblock {
            f();
        }
        let n = self.threads.len();
        let mut first_err = None;
        for t in self.threads {
            match t.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => first_err = first_err.or(Some(e)),
                Err(_) => first_err = first_err.or(Some(anyhow!("a load thread panicked"))),
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        let device = self.device.and_then(|before| {
            let mut after = before.clone();
            after.refresh()?;
            let (bytes_read, bytes_written) = after.bytes_since(&before);
            Some(DeviceTraffic {
                name: after.name.into(),
                bytes_read,
                bytes_written,
            })
        });
        let mut report = LoadReport {
            threads: n,
            policies: self
                .policies
                .0
                .lock()
                .map(|v| v.clone())
                .unwrap_or_default(),
            device,
            ..LoadReport::default()
        };
        self.tally.report(&mut report);
        Ok(report)
    }
}

/// Builds a load's threads before any of them starts working.
pub struct Starter {
    stop: Arc<AtomicBool>,
    policies: Arc<Policies>,
    threads: Vec<JoinHandle<Result<()>>>,
    unblock: Vec<Box<dyn FnOnce() + Send>>,
    gate: Arc<Semaphore>,
}

impl Starter {
    /// Makes a load thread: SCHED_OTHER, named, its policy recorded, then waiting at the gate
    /// ([`LoadHandle::go`]); past it, `f` gets the stop flag and the policies.
    fn spawn(
        &mut self,
        name: &str,
        stack: usize,
        f: impl FnOnce(Arc<AtomicBool>, &Policies) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        self.spawn_gated(name, stack, move |stop, policies, gate| {
            gate();
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            f(stop, policies)
        })
    }

    /// Makes a load thread that waits at the gate itself, where `f` calls it: a simulation
    /// makes its timekeeper first, as interbench's load thread does before it says ready. `f`
    /// gets the stop flag (set, perhaps, while it waited), the policies (a simulation records
    /// its timekeeper's too) and the gate.
    fn spawn_gated(
        &mut self,
        name: &str,
        stack: usize,
        f: impl FnOnce(Arc<AtomicBool>, &Policies, &dyn Fn()) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        let (stop, policies) = (Arc::clone(&self.stop), Arc::clone(&self.policies));
        let gate = Arc::clone(&self.gate);
        let thread_name = name.to_string();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .stack_size(stack)
            .spawn(move || {
                policies.enter_thread(&thread_name);
                f(stop, &policies, &|| gate.wait())
            })
            .with_context(|| format!("starting load thread {name}"))?;
        self.threads.push(handle);
        Ok(())
    }

    /// Called, once the stop flag is set, to wake the load's threads blocked in the kernel.
    fn on_stop(&mut self, unblock: impl FnOnce() + Send + 'static) {
        self.unblock.push(Box::new(unblock));
    }
}

const STACK: usize = 256 * 1024;

/// Starts `spec`'s load. On error, threads already started are stopped and joined.
pub fn start(spec: &LoadSpec) -> Result<LoadHandle> {
    let mut h = prepare(spec)?;
    h.go();
    Ok(h)
}

/// Makes `spec`'s load's threads, each waiting to start until [`LoadHandle::go`]: as
/// interbench's load process makes its load's thread before the benched process exists, so the
/// kernel places both as it places interbench's. On error, threads already made are stopped
/// and joined.
pub fn prepare(spec: &LoadSpec) -> Result<LoadHandle> {
    let mut s = Starter {
        stop: Arc::new(AtomicBool::new(false)),
        policies: Arc::default(),
        threads: Vec::new(),
        unblock: Vec::new(),
        gate: Arc::new(Semaphore::new(0).context("the load's start gate")?),
    };
    let unit = spec.unit();
    let started = match unit {
        Some(u) => u.start(&mut s),
        None => Ok(Box::new(Uncounted) as Box<dyn Tally>),
    };
    let (tally, error) = match started {
        Ok(t) => (t, None),
        Err(e) => (Box::new(Uncounted) as Box<dyn Tally>, Some(e)),
    };
    let handle = LoadHandle {
        stop: s.stop,
        threads: s.threads,
        policies: s.policies,
        tally,
        unblock: s.unblock,
        gate: s.gate,
        opened: false,
        files_fd: unit.and_then(|u| u.files_fd()),
        device: None,
    };
    match error {
        None => Ok(handle),
        Some(e) => {
            let _ = handle.stop();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn inputs() -> RunInputs {
        RunInputs {
            threads: 2,
            loops_per_ms: 100_000,
            files_dir_fd: None,
            read_fd: None,
            file_bytes: 4 << 20,
            page_cache: false,
            memload_mb: 8,
            hack_groups: 1,
            custom: Some(CustomSpec {
                cpu_pct: 20,
                interval_us: 5000,
            }),
            timekeeping: sim::Timekeeping::default(),
        }
    }

    fn spec(load: Load) -> LoadSpec {
        LoadSpec::new(load, &inputs())
    }

    fn run(spec: &LoadSpec, ms: u64) -> LoadReport {
        let h = start(spec).unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let r = h.stop().unwrap();
        assert!(
            r.policies.iter().all(|p| *p == Policy::Other),
            "{:?}: {:?}",
            spec.load(),
            r.policies
        );
        r
    }

    /// The names of this process's threads.
    fn thread_names() -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .map(|c| c.trim().to_string())
            .collect()
    }

    /// How many of this process's threads are named `name` now.
    fn threads_named(name: &str) -> usize {
        thread_names().iter().filter(|n| *n == name).count()
    }

    /// A prepared load's threads exist and wait: they do their work only once let go, and a
    /// load stopped at the gate did none.
    #[test]
    fn a_prepared_loads_threads_wait_for_go() {
        let already = threads_named("hb-burn");
        let h = prepare(&spec(Load::Burn)).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(threads_named("hb-burn") >= already + 2);
        let r = h.stop().unwrap();
        assert_eq!((r.threads, r.burn_loops), (2, 0), "{r:?}");
        let mut h = prepare(&spec(Load::Burn)).unwrap();
        h.go();
        std::thread::sleep(Duration::from_millis(50));
        assert!(h.stop().unwrap().burn_loops > 0);
    }

    #[test]
    fn a_prepared_simulation_has_its_timekeeper_before_go() {
        // interbench's load thread makes its timekeeper before it says ready, so the kernel
        // places both before the benched process exists.
        let already = threads_named("hb-timekeeper");
        let h = prepare(&spec(Load::Video)).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            threads_named("hb-timekeeper") > already,
            "no timekeeper before go"
        );
        // Stopped at the gate: it leaves at once, having run no period.
        let r = h.stop().unwrap();
        assert_eq!(r.threads, 1, "{r:?}");
    }

    #[test]
    fn cpu_loads_do_their_work() {
        let r = run(&spec(Load::Burn), 50);
        assert_eq!(r.threads, 2);
        assert!(r.burn_loops > 0);
        let r = run(&spec(Load::Ring), 50);
        assert!(r.ring_wakeups > 10, "{r:?}");
        let r = run(&spec(Load::Memload), 100);
        assert!(r.memload_mb_touched > 0);
        let r = run(&spec(Load::Hack), 100);
        assert_eq!(r.threads, 40);
        assert!(r.hack_messages > 0);
        assert!(run(&spec(Load::None), 1).threads == 0);
        // A simulation as a load: its task thread and its timekeeper, both SCHED_OTHER.
        let r = run(&spec(Load::Custom), 60);
        assert_eq!(r.policies.len(), 2, "{r:?}");
    }

    #[test]
    fn a_simulation_loads_timekeeper_runs_real_time_as_interbenchs_where_permitted() {
        let inputs = RunInputs {
            timekeeping: sim::Timekeeping {
                fifo: true,
                cpus: None,
                relative: false,
            },
            ..inputs()
        };
        let h = start(&LoadSpec::new(Load::Custom, &inputs)).unwrap();
        std::thread::sleep(Duration::from_millis(60));
        let r = h.stop().unwrap();
        let fifo = Policy::Fifo {
            priority: crate::platform::sched::TIMEKEEPER_PRIORITY,
        };
        // The task thread stays SCHED_OTHER; the timekeeper is real-time when this may be.
        assert!(r.policies.contains(&Policy::Other), "{r:?}");
        assert_eq!(
            r.policies.contains(&fifo),
            crate::platform::sched::can_use_fifo(),
            "{r:?}"
        );
    }

    /// A 4 MiB read file in `dir` (its path and the open file the inputs hand over) and the
    /// inputs of a disk load with its files there, `page_cache` as given.
    fn disk_files(dir: &Path, page_cache: bool) -> (PathBuf, std::fs::File, RunInputs) {
        let read = dir.join("read");
        write_file(&read, 4 << 20, &AtomicBool::new(false)).unwrap();
        let read_file = std::fs::File::open(&read).unwrap();
        // The directory's descriptor stays open for the test process's life, as the
        // coordinator's does for a run's.
        let held =
            crate::platform::dir::Dir::open(dir, crate::platform::dir::Trust::Reach).unwrap();
        let dir_fd = held.raw_fd();
        std::mem::forget(held);
        let inputs = RunInputs {
            files_dir_fd: Some(dir_fd),
            read_fd: Some(std::os::fd::AsRawFd::as_raw_fd(&read_file)),
            page_cache,
            ..inputs()
        };
        (read, read_file, inputs)
    }

    #[test]
    fn disk_loads_write_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let (read, _read_file, with_files) = disk_files(dir.path(), false);
        let r = run(&LoadSpec::new(Load::Compile, &with_files), 300);
        assert_eq!(r.threads, 4);
        assert!(r.bytes_written > 0 && r.bytes_read > 0, "{r:?}");
        assert!(r.bytes_handed >= r.bytes_written, "{r:?}");
        // After a pass the file was dropped from the cache.
        assert!(r.read_passes > 0, "{r:?}");
        // And when the load stopped mid-pass: the next load reads from the disk again.
        let left = resident_fraction(&read).unwrap();
        assert!(left < 0.1, "{left} {r:?}");
        // The Write load's file was unlinked once open: only the read file is left.
        std::fs::remove_file(&read).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Bytes a call of each of this process's threads named `comm`, from the kernel's count of
    /// its I/O (/proc/self/task/TID/io: `bytes` over `calls`). Other tests running beside may
    /// have threads of the same name.
    fn bytes_a_call(comm: &str, bytes: &str, calls: &str) -> Vec<f64> {
        let mut found = Vec::new();
        for task in std::fs::read_dir("/proc/self/task").unwrap() {
            let task = task.unwrap().path();
            if std::fs::read_to_string(task.join("comm"))
                .unwrap_or_default()
                .trim()
                != comm
            {
                continue;
            }
            let Ok(io) = std::fs::read_to_string(task.join("io")) else {
                continue;
            };
            let field = |name: &str| -> f64 {
                io.lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            found.push(field(bytes) / field(calls));
        }
        found
    }

    #[test]
    fn page_cache_disk_loads_keep_the_file_cached_and_never_wait_for_the_device() {
        let dir = tempfile::tempdir().unwrap();
        let (read, read_file, as_interbench) = disk_files(dir.path(), true);
        let h = start(&LoadSpec::new(Load::Compile, &as_interbench)).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        // One st_blksize block a call, as v0.31's fwrite and read: the bytes per call of the
        // load's own threads, from the kernel's count of each thread's I/O.
        let blksize =
            std::os::unix::fs::MetadataExt::blksize(&read_file.metadata().unwrap()) as f64;
        for (thread, bytes, calls) in [
            ("hb-write", "wchar", "syscw"),
            ("hb-read", "rchar", "syscr"),
        ] {
            let per_call = bytes_a_call(thread, bytes, calls);
            assert!(
                per_call
                    .iter()
                    .any(|&b| b > blksize * 0.9 && b < blksize * 1.1),
                "{thread}: {per_call:?} bytes a call, st_blksize {blksize}"
            );
        }
        let r = h.stop().unwrap();
        // Written through the cache: handed to write(), none of it waited for on the device.
        assert!(r.bytes_handed > 0 && r.bytes_written == 0, "{r:?}");
        // Read whole passes, and the file stays in the cache for the next pass and pair.
        assert!(r.read_passes > 0, "{r:?}");
        let left = resident_fraction(&read).unwrap();
        assert!(left > 0.9, "{left} {r:?}");
    }

    #[test]
    fn every_load_has_a_spec_of_its_own_that_names_it() {
        for load in Load::ALL {
            let spec = spec(load);
            assert_eq!(spec.load(), load);
            // What the load worker is sent reads back as the same load.
            let json = serde_json::to_string(&spec).unwrap();
            let back: LoadSpec = serde_json::from_str(&json).unwrap();
            assert_eq!(back, spec, "{json}");
        }
    }

    #[test]
    fn a_load_missing_its_file_is_an_error() {
        assert!(start(&spec(Load::Read)).is_err());
    }
}
