//! Background loads. Each runs as threads inside a load worker process, started by [`start`]
//! and stopped by [`LoadHandle::stop`], which joins every thread and reports what the load did.
//! Every load thread sets SCHED_OTHER explicitly and reports the policy it ran with.

mod burn;
mod disk;
mod hack;
mod memload;
pub mod registry;
mod ring;
pub mod sim;

pub use disk::{create_unlinked, drop_file_cache, fill_file, resident_fraction, write_file};

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use crate::calibration::Burner;
use crate::model::interactive::{Bench, CustomSpec, DeviceTraffic, Load, LoadReport};
use crate::platform::blockdev::DeviceCounters;
use crate::platform::sched::{self, Policy};
use sim::{LatencyRecorder, Profile};

/// Everything a load worker needs to run one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSpec {
    pub load: Load,
    /// `-L`: Burn and Ring threads.
    pub threads: u32,
    pub loops_per_ms: u64,
    /// The file Write writes over and over (unlinked as soon as it is open).
    pub write_file: Option<PathBuf>,
    /// The open descriptor of the file Read reads: created beforehand by the coordinator,
    /// unlinked, and inherited by the load worker, so the kernel frees it however the run ends.
    pub read_fd: Option<i32>,
    pub file_bytes: u64,
    /// Memload's size in MB.
    pub memload_mb: u64,
    pub hack_groups: u32,
    pub custom: Option<CustomSpec>,
}

/// Counters the load threads update as they go (relaxed atomics: read once, at the end).
#[derive(Default)]
pub struct LoadCounters {
    pub bytes_written: AtomicU64,
    pub bytes_handed: AtomicU64,
    pub bytes_read: AtomicU64,
    pub read_passes: AtomicU64,
    pub ring_wakeups: AtomicU64,
    pub hack_messages: AtomicU64,
    pub memload_mb_touched: AtomicU64,
    pub burn_loops: AtomicU64,
    policies: Mutex<Vec<Policy>>,
}

impl LoadCounters {
    /// Sets the calling load thread to SCHED_OTHER, names it and records its policy.
    pub fn enter_thread(&self, name: &str) {
        sched::name_current_thread(name);
        let _ = sched::set_current_thread_policy(Policy::Other);
        self.record_policy(sched::current_thread_policy());
    }

    fn record_policy(&self, p: Policy) {
        if let Ok(mut v) = self.policies.lock() {
            v.push(p);
        }
    }
}

/// A running load.
pub struct LoadHandle {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<()>>>,
    counters: Arc<LoadCounters>,
    /// Called after the stop flag is set, to wake threads blocked in the kernel.
    unblock: Vec<Box<dyn FnOnce() + Send>>,
    /// The disk loads' device as the load began.
    device: Option<DeviceCounters>,
}

impl LoadHandle {
    /// Stops every thread, joins them and reports. A thread's error is returned after all have
    /// been joined.
    pub fn stop(self) -> Result<LoadReport> {
        self.stop.store(true, Ordering::SeqCst);
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
                name: after.name,
                bytes_read,
                bytes_written,
            })
        });
        let c = &self.counters;
        Ok(LoadReport {
            threads: n,
            policies: c.policies.lock().map(|v| v.clone()).unwrap_or_default(),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            bytes_handed: c.bytes_handed.load(Ordering::Relaxed),
            bytes_read: c.bytes_read.load(Ordering::Relaxed),
            read_passes: c.read_passes.load(Ordering::Relaxed),
            ring_wakeups: c.ring_wakeups.load(Ordering::Relaxed),
            hack_messages: c.hack_messages.load(Ordering::Relaxed),
            memload_mb_touched: c.memload_mb_touched.load(Ordering::Relaxed),
            burn_loops: c.burn_loops.load(Ordering::Relaxed),
            device,
        })
    }
}

/// Builds a load's threads before any of them starts working.
struct Starter {
    stop: Arc<AtomicBool>,
    counters: Arc<LoadCounters>,
    threads: Vec<JoinHandle<Result<()>>>,
    unblock: Vec<Box<dyn FnOnce() + Send>>,
}

impl Starter {
    fn spawn(
        &mut self,
        name: &str,
        stack: usize,
        f: impl FnOnce(Arc<AtomicBool>, Arc<LoadCounters>) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        let (stop, counters) = (Arc::clone(&self.stop), Arc::clone(&self.counters));
        let thread_name = name.to_string();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .stack_size(stack)
            .spawn(move || {
                counters.enter_thread(&thread_name);
                f(stop, counters)
            })
            .with_context(|| format!("starting load thread {name}"))?;
        self.threads.push(handle);
        Ok(())
    }
}

const STACK: usize = 256 * 1024;

/// Starts `spec`'s load. On error, threads already started are stopped and joined.
pub fn start(spec: &LoadSpec) -> Result<LoadHandle> {
    let mut s = Starter {
        stop: Arc::new(AtomicBool::new(false)),
        counters: Arc::new(LoadCounters::default()),
        threads: Vec::new(),
        unblock: Vec::new(),
    };
    // The device under the disk loads' files, read before they start.
    let (writes, reads) = spec.load.uses_files();
    let device = if writes || reads {
        spec.write_file
            .as_deref()
            .and_then(|f| f.parent())
            .and_then(DeviceCounters::of)
    } else {
        None
    };
    let started = start_parts(spec, &mut s);
    let handle = LoadHandle {
        stop: s.stop,
        threads: s.threads,
        counters: s.counters,
        unblock: s.unblock,
        device,
    };
    match started {
        Ok(()) => Ok(handle),
        Err(e) => {
            let _ = handle.stop();
            Err(e)
        }
    }
}

fn start_parts(spec: &LoadSpec, s: &mut Starter) -> Result<()> {
    let burner = Burner {
        loops_per_ms: spec.loops_per_ms,
    };
    match spec.load {
        Load::None => Ok(()),
        Load::Burn => burn::start(s, spec.threads, burner),
        Load::Write => disk::start_write(s, spec),
        Load::Read => disk::start_read(s, spec),
        Load::Compile => {
            burn::start(s, spec.threads, burner)?;
            disk::start_write(s, spec)?;
            disk::start_read(s, spec)
        }
        Load::Ring => ring::start(s, spec.threads),
        Load::Memload => memload::start(s, spec.memload_mb),
        Load::Hack => hack::start(s, spec.hack_groups),
        Load::Video => start_simulation(s, Bench::Video, None, burner),
        Load::X => start_simulation(s, Bench::X, None, burner),
        Load::Custom => start_simulation(s, Bench::Custom, spec.custom, burner),
    }
}

/// A simulation used as a load: the same task and timekeeper, both SCHED_OTHER, unmeasured.
fn start_simulation(
    s: &mut Starter,
    bench: Bench,
    custom: Option<CustomSpec>,
    burner: Burner,
) -> Result<()> {
    let profile =
        Profile::of(bench, custom).ok_or_else(|| anyhow!("{} needs -C and -I", bench.name()))?;
    s.spawn("hb-sim-load", STACK, move |stop, counters| {
        let new = || LatencyRecorder::new(0, 10_000_000_000);
        let (mut latency, mut wake, mut from_deadline) = (new()?, new()?, new()?);
        let recorders = sim::PeriodicRecorders {
            latency: &mut latency,
            wake: &mut wake,
            from_deadline: &mut from_deadline,
        };
        let out = sim::run_periodic(profile, burner, &stop, Policy::Other, recorders)?;
        if let Some(p) = out.timer.policy {
            counters.record_policy(p);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(load: Load) -> LoadSpec {
        LoadSpec {
            load,
            threads: 2,
            loops_per_ms: 100_000,
            write_file: None,
            read_fd: None,
            file_bytes: 4 << 20,
            memload_mb: 8,
            hack_groups: 1,
            custom: Some(CustomSpec {
                cpu_pct: 20,
                interval_us: 5000,
            }),
        }
    }

    fn run(spec: &LoadSpec, ms: u64) -> LoadReport {
        let h = start(spec).unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let r = h.stop().unwrap();
        assert!(
            r.policies.iter().all(|p| *p == Policy::Other),
            "{:?}: {:?}",
            spec.load,
            r.policies
        );
        r
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
    fn disk_loads_write_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let read = dir.path().join("read");
        write_file(&read, 4 << 20, &AtomicBool::new(false)).unwrap();
        let read_file = std::fs::File::open(&read).unwrap();
        let mut s = spec(Load::Compile);
        s.write_file = Some(dir.path().join("write"));
        s.read_fd = Some(std::os::fd::AsRawFd::as_raw_fd(&read_file));
        let r = run(&s, 300);
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

    #[test]
    fn a_load_missing_its_file_is_an_error() {
        assert!(start(&spec(Load::Read)).is_err());
    }
}
