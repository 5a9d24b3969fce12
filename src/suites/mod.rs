//! The suites. Each turns a validated config into measurements and returns them in the result
//! model; none prints: what it does goes out as one stream of events (`event`) that the
//! caller's consumers turn into lines, a progress line and checkpoints. Each also says, before
//! it runs, what it will measure and about how long that takes (`plan`), for `hostbench run`'s
//! plan, its estimates of the time left and `--dry-run`.

use std::path::Path;

use crate::model::Environment;
use crate::platform::files;

pub mod event;
pub mod index;
pub mod interactive;
pub mod noise;
pub mod sched;

/// What a suite's configuration needs to know of the host: the CPUs this process may use, the
/// memory, and the room where its files go. Read from the run's `Environment` (the host's
/// facts, as stored with the result), not measured again.
#[derive(Debug, Clone)]
pub struct HostLimits {
    /// CPUs this process may use (its affinity and cgroup quota).
    pub usable_cpus: usize,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
    pub swap_bytes: u64,
    /// Free bytes in the directory the Write and Read files would go to, where it can be read.
    pub free_disk_bytes: Option<u64>,
}

impl HostLimits {
    /// The limits of the host `environment` describes, with its files in `workdir`.
    pub fn of(environment: &Environment, workdir: &Path) -> HostLimits {
        HostLimits {
            usable_cpus: environment.usable_cpus(),
            memory_total_bytes: environment.host.memory_total_bytes,
            memory_available_bytes: environment.host.memory_available_bytes,
            swap_bytes: environment.host.swap_total_bytes,
            free_disk_bytes: files::free_bytes(workdir).ok(),
        }
    }
}

/// What a suite will measure: its units in order, each with about how long it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub units: Vec<Unit>,
}

/// A unit of measuring: a calibration, a test at a number of copies, a bench × load pair, a
/// sched point, the noise runs. `count` of them, about `each_s` seconds each.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub name: String,
    pub count: u64,
    pub each_s: f64,
}

impl Unit {
    pub fn new(name: impl Into<String>, count: u64, each_s: f64) -> Unit {
        Unit {
            name: name.into(),
            count,
            each_s,
        }
    }
}

impl Plan {
    /// About how long the whole suite takes, seconds.
    pub fn estimate_s(&self) -> f64 {
        self.units.iter().map(|u| u.count as f64 * u.each_s).sum()
    }
}
