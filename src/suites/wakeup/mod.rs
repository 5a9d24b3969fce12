//! `wakeup`, after schbench: message threads hand requests to workers, and the figures are the
//! wakeup latency, the request latency and requests a second. The options are schbench's,
//! resolved here by its rules into the settings a result keeps (docs/wakeup.md).

pub mod event;
mod part;
pub use part::run_parts;
mod matrices;
pub mod workload;

pub use event::WakeupEvent;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;

use super::event::{Event, Events};
use super::trace::Recorder;
use super::{reference, Plan, Unit};
use crate::error::UsageError;
use crate::model::account::Account;
use crate::model::wakeup::{self as model, Table, WakeupResult, WakeupSettings};
use crate::model::SuiteResult;
use crate::platform::account::Probe;
use workload::{Outcome, MAX_PIPE_BYTES};

/// Most threads of a run, message threads and workers together.
pub const MAX_THREADS: usize = 16_384;
/// Most seconds of a run (`-r`): a day.
pub const MAX_RUNTIME_S: u64 = 86_400;
/// Most microseconds a request sleeps (`-s`): a second. A sleep is not cut short by the end of
/// the run, so a run overshoots by at most this.
pub const MAX_SLEEP_US: u64 = 1_000_000;
/// Most matrix multiplications a request (`-n`).
pub const MAX_OPERATIONS: u64 = 1_000_000;
/// Most KB of matrices a worker (`-F`): 1 GiB.
pub const MAX_FOOTPRINT_KB: u64 = 1 << 20;
/// Most requests a second (`-R`).
pub const MAX_RPS: u64 = 1_000_000;
/// How often a run's result so far is stored while it runs.
const CHECKPOINT: Duration = Duration::from_secs(5);

/// The options as given (schbench's), before its rules resolve them.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub message_threads: usize,
    /// `-t` (None: the CPUs over the message threads).
    pub workers: Option<usize>,
    pub runtime_s: u64,
    /// `-w` (None: 5 s, or 0 where schbench makes it 0).
    pub warmup_s: Option<u64>,
    pub zero_s: u64,
    pub footprint_kb: u64,
    pub operations: u64,
    /// `--split P`: the footprint's private percent (None: all private).
    pub split_pct: Option<u32>,
    pub sleep_us: u64,
    pub no_locking: bool,
    pub calibrate: bool,
    pub rps: Option<u64>,
    pub auto_rps_pct: Option<u32>,
    pub pipe_bytes: Option<usize>,
    /// `-M` and `-W`: a CPU list or "auto".
    pub message_cpus: Option<String>,
    pub worker_cpus: Option<String>,
    /// `--explain N`.
    pub explain: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            message_threads: model::DEFAULT_MESSAGE_THREADS,
            workers: None,
            runtime_s: model::DEFAULT_RUNTIME_S,
            warmup_s: None,
            zero_s: 0,
            footprint_kb: model::DEFAULT_FOOTPRINT_KB,
            operations: model::DEFAULT_OPERATIONS,
            split_pct: None,
            sleep_us: model::DEFAULT_SLEEP_US,
            no_locking: false,
            calibrate: false,
            rps: None,
            auto_rps_pct: None,
            pipe_bytes: None,
            message_cpus: None,
            worker_cpus: None,
            explain: None,
        }
    }
}

/// A validated wakeup configuration: the settings as they will run, and what schbench's rules
/// changed that the user should hear of.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeupConfig {
    pub settings: WakeupSettings,
    pub notes: Vec<String>,
}

impl WakeupConfig {
    pub fn new(o: &Options) -> Result<WakeupConfig, UsageError> {
        let online = crate::platform::sched::online_cpus()
            .unwrap_or_else(crate::platform::sched::allowed_cpus);
        Self::on(o, &online, crate::platform::host::memory_available_bytes())
    }

    /// As `new`, on a host with these CPUs online and this much memory available.
    pub fn on(
        o: &Options,
        online: &[usize],
        memory: Option<u64>,
    ) -> Result<WakeupConfig, UsageError> {
        let mut notes = Vec::new();
        if o.message_threads == 0 {
            return Err(UsageError::new("-m must be at least 1 message thread"));
        }
        if o.workers == Some(0) {
            return Err(UsageError::new("-t must be at least 1 worker thread"));
        }
        if o.runtime_s == 0 || o.runtime_s > MAX_RUNTIME_S {
            return Err(UsageError::new(format!(
                "-r must be from 1 to {MAX_RUNTIME_S} seconds (got {})",
                o.runtime_s
            )));
        }
        bounds(o)?;
        check_rates(o)?;
        let pipe_bytes = pipe_bytes(o, &mut notes)?;
        let (workers, threads) = threads(o, online.len().max(1))?;
        check_footprint(o, threads - o.message_threads, memory, &mut notes)?;
        let (message_cpus, worker_cpus) = cpus(o, online)?;
        let settings = WakeupSettings {
            message_threads: o.message_threads,
            workers,
            runtime_s: o.runtime_s,
            warmup_s: warmup_s(o, pipe_bytes, &mut notes),
            zero_s: o.zero_s,
            footprint_kb: o.footprint_kb,
            operations: o.operations,
            split_pct: o.split_pct,
            sleep_us: o.sleep_us,
            // Calibration takes no lock.
            locking: !o.no_locking && !o.calibrate,
            calibrate: o.calibrate,
            // -A starts from 10 requests a second, as schbench.
            rps: o
                .rps
                .unwrap_or(if o.auto_rps_pct.is_some() { 10 } else { 0 }),
            auto_rps_pct: o.auto_rps_pct.unwrap_or(0),
            pipe_bytes,
            message_cpus,
            worker_cpus,
            explain: o.explain,
        };
        Ok(WakeupConfig { settings, notes })
    }
}

/// `-R` and `-A`: one or the other, each within its range.
fn check_rates(o: &Options) -> Result<(), UsageError> {
    if o.rps.is_some() && o.auto_rps_pct.is_some() {
        return Err(UsageError::new(
            "-R and -A cannot be used together: -A finds the rate itself",
        ));
    }
    if let Some(p) = o.auto_rps_pct {
        if p == 0 || p > 100 {
            return Err(UsageError::new(format!(
                "-A must be a CPU utilisation from 1 to 100% (got {p})"
            )));
        }
    }
    if o.rps == Some(0) {
        return Err(UsageError::new("-R must be at least 1 request a second"));
    }
    Ok(())
}

/// `-p`: the pipe test's message size (0: no pipe test), cut to schbench's largest with a note.
fn pipe_bytes(o: &Options, notes: &mut Vec<String>) -> Result<usize, UsageError> {
    let pipe_bytes = o.pipe_bytes.unwrap_or(0);
    if pipe_bytes > 0 && (o.rps.is_some() || o.auto_rps_pct.is_some()) {
        return Err(UsageError::new(
            "-p (the pipe test) cannot be used with -R or -A: it makes no requests",
        ));
    }
    if pipe_bytes > MAX_PIPE_BYTES {
        notes.push(format!(
            "pipe size too big, using {MAX_PIPE_BYTES} bytes (schbench's largest)"
        ));
        return Ok(MAX_PIPE_BYTES);
    }
    Ok(pipe_bytes)
}

/// The workers a message thread (schbench's default: the CPUs shared out), and the threads
/// in all, at most `MAX_THREADS`.
fn threads(o: &Options, ncpus: usize) -> Result<(usize, usize), UsageError> {
    let workers = o
        .workers
        .unwrap_or_else(|| ncpus.div_ceil(o.message_threads));
    let threads = o
        .message_threads
        .checked_mul(workers)
        .and_then(|w| w.checked_add(o.message_threads))
        .filter(|&t| t <= MAX_THREADS)
        .ok_or_else(|| {
            UsageError::new(format!(
                "-m {} with -t {workers} is more than {MAX_THREADS} threads",
                o.message_threads
            ))
        })?;
    Ok((workers, threads))
}

/// `--split` within 0–100%, and the workers' matrices within the memory available. Three
/// matrices a worker fill the footprint; with --split, the worker's private share of it, and
/// the shared share once.
fn check_footprint(
    o: &Options,
    workers: usize,
    memory: Option<u64>,
    notes: &mut Vec<String>,
) -> Result<(), UsageError> {
    if let Some(p) = o.split_pct.filter(|&p| p > 100) {
        return Err(UsageError::new(format!(
            "--split must be a percent from 0 to 100 (got {p})"
        )));
    }
    if o.split_pct == Some(0) {
        notes.push(
            "--split 0: no worker has matrices of its own; all work on the one shared set".into(),
        );
    }
    let (own_kb, shared_kb) = model::split_kb(o.footprint_kb, o.split_pct);
    let need = own_kb
        .saturating_mul(1024)
        .saturating_mul(workers as u64)
        .saturating_add(shared_kb.saturating_mul(1024));
    if let Some(have) = memory.filter(|&have| need > have) {
        return Err(UsageError::new(format!(
            "-F {} KB for each of {workers} workers is {} MiB, more than the {} MiB of memory available",
            o.footprint_kb,
            need >> 20,
            have >> 20
        )));
    }
    Ok(())
}

/// schbench's warm-up: -p and -A start without one unless -w is given; a run shorter than
/// 30 s has none.
fn warmup_s(o: &Options, pipe_bytes: usize, notes: &mut Vec<String>) -> u64 {
    let warmup_s = o
        .warmup_s
        .unwrap_or(if pipe_bytes > 0 || o.auto_rps_pct.is_some() {
            0
        } else {
            model::DEFAULT_WARMUP_S
        });
    if o.runtime_s < 30 && warmup_s > 0 {
        if o.warmup_s.is_some() {
            notes.push(format!(
                "no warm-up: runs shorter than 30 s have none, as in schbench (-w {warmup_s} left out)"
            ));
        }
        return 0;
    }
    warmup_s
}

/// Each number option within the range where it means something: a sleep, a request's math
/// or a rate that would outlast the run (and its stop) is refused, as are statistics that the
/// run would never keep (`-w` or `-z` not shorter than `-r`).
fn bounds(o: &Options) -> Result<(), UsageError> {
    let within = |flag: &str, what: &str, v: u64, min: u64, max: u64| {
        if v < min || v > max {
            return Err(UsageError::new(format!(
                "{flag} must be from {min} to {max} {what} (got {v})"
            )));
        }
        Ok(())
    };
    within("-s", "microseconds", o.sleep_us, 0, MAX_SLEEP_US)?;
    within("-n", "operations", o.operations, 1, MAX_OPERATIONS)?;
    within("-F", "KB", o.footprint_kb, 1, MAX_FOOTPRINT_KB)?;
    if let Some(r) = o.rps {
        within("-R", "requests a second", r, 1, MAX_RPS)?;
    }
    if let Some(w) = o.warmup_s.filter(|&w| w > 0 && o.runtime_s >= 30) {
        within("-w", "seconds (shorter than -r)", w, 0, o.runtime_s - 1)?;
    }
    if o.zero_s > 0 {
        within("-z", "seconds (at most -r)", o.zero_s, 1, o.runtime_s)?;
    }
    Ok(())
}

/// `-M` and `-W`: CPU lists whose CPUs must be online, or "auto" (either one): each message
/// thread on one of the first CPUs, the workers on the rest, as schbench's README says.
/// (schbench's code lets the workers run on every CPU with "auto": docs/wakeup.md.)
type Cpus = Option<Vec<usize>>;
fn cpus(o: &Options, online: &[usize]) -> Result<(Cpus, Cpus), UsageError> {
    let auto = |s: &Option<String>| s.as_deref().map(str::trim) == Some("auto");
    if auto(&o.message_cpus) || auto(&o.worker_cpus) {
        let m = o.message_threads;
        if online.len() <= m {
            return Err(UsageError::new(format!(
                "\"auto\" pinning gives each of {m} message threads a CPU of its own and leaves none of this host's {} for the workers: use fewer message threads or give -M and -W",
                online.len()
            )));
        }
        return Ok((Some(online[..m].to_vec()), Some(online[m..].to_vec())));
    }
    let list = |flag: &str, s: &Option<String>| -> Result<Cpus, UsageError> {
        let Some(text) = s else { return Ok(None) };
        let cpus = crate::platform::sched::parse_cpu_list(text).ok_or_else(|| {
            UsageError::new(format!(
                "{flag} takes a CPU list such as 0-3,8 or \"auto\" (got {text:?})"
            ))
        })?;
        if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
            return Err(UsageError::new(format!(
                "{flag} names CPU {c}, which is not online (online: {})",
                crate::suites::listed(online.iter())
            )));
        }
        Ok(Some(cpus))
    };
    Ok((list("-M", &o.message_cpus)?, list("-W", &o.worker_cpus)?))
}

/// What a run measures: one run of its run time.
pub fn plan(config: &WakeupConfig) -> Plan {
    Plan {
        units: vec![Unit::new(
            model::mode(&config.settings),
            1,
            config.settings.runtime_s as f64 + 0.2,
        )],
    }
}

/// Measures one run. A stop ends it at once with what it measured (marked stopped, so the
/// result is incomplete).
pub fn measure(
    config: &WakeupConfig,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> Result<WakeupResult> {
    for n in &config.notes {
        events.event(Event::Note(n));
    }
    let s = &config.settings;
    let (recorder, marker) = match s.explain.map(start_trace) {
        Some(Ok((r, m))) => (Some(r), Some(m)),
        Some(Err(why)) => {
            events.event(Event::Note(&format!(
                "--explain: {why}; the run is measured without explanations"
            )));
            (None, None)
        }
        None => (None, None),
    };
    let probe = crate::platform::account::enabled().then(Probe::default);
    // The host's speed on the threads' CPUs, read just before they start and just after they
    // end: read while they run, it would take a CPU from them.
    let cpus = reference_cpus(s);
    let before = probe.as_ref().and_then(|_| reference::read(&cpus));
    let outcome = workload::run(
        &config.settings,
        marker,
        probe.as_ref(),
        stop,
        &mut |elapsed_s, rate, so_far| {
            events.event(Event::Wakeup(WakeupEvent::Second {
                elapsed_s,
                runtime_s: s.runtime_s,
                rate,
            }));
            let (done, of) = (elapsed_s.round() as u64, s.runtime_s);
            events.event(Event::progress(
                done,
                of,
                &format_args!("{rate:.0} requests/s"),
            ));
            events.event(Event::Wakeup(WakeupEvent::Tables {
                elapsed_s,
                build: &|| result(s, &so_far()),
            }));
            events.event(Event::Partial {
                every: CHECKPOINT,
                build: &|| SuiteResult::Wakeup(result(s, &so_far())),
            });
        },
    )?;
    let after = before.and_then(|_| reference::read(&cpus));
    let mut r = result(s, &outcome);
    r.account = outcome.account.map(|a| {
        Box::new(Account {
            reference_ns: reference::around(before, after),
            ..a
        })
    });
    r.explained = recorder.map(Recorder::finish);
    events.event(Event::Wakeup(WakeupEvent::Done(&r)));
    Ok(r)
}

/// The CPUs the threads may run on: those `--message-cpus` and `--worker-cpus` name, else the
/// process's.
fn reference_cpus(s: &WakeupSettings) -> Vec<usize> {
    let mut named: Vec<usize> = s
        .message_cpus
        .iter()
        .chain(&s.worker_cpus)
        .flatten()
        .copied()
        .collect();
    if s.message_cpus.is_none() || s.worker_cpus.is_none() {
        named.extend(crate::platform::sched::allowed_cpus());
    }
    named.sort_unstable();
    named.dedup();
    named
}

/// `--explain N`: the kernel's scheduling trace of every CPU, read as the run goes to keep the
/// N longest wakeups, and its marker file for the workers; Err is why it cannot be.
fn start_trace(worst: u32) -> Result<(Recorder, std::fs::File), String> {
    let recorder = Recorder::start(&[], worst)?;
    let marker = crate::platform::tracefs::open_marker(&recorder.marker()).map_err(|e| {
        format!(
            "opening the trace marker {}: {e}",
            recorder.marker().display()
        )
    })?;
    Ok((recorder, marker))
}

/// The result of an outcome: schbench's tables and its figures.
fn result(s: &WakeupSettings, o: &Outcome) -> WakeupResult {
    let pipe = s.pipe_bytes > 0;
    let elapsed_s = o.elapsed_ns as f64 / 1e9;
    // schbench divides by its run time; a run stopped early by what it ran.
    let span = if o.stopped {
        elapsed_s
    } else {
        s.runtime_s as f64
    };
    let per_worker =
        |x: f64| (o.worker_runtime_us > 0).then(|| x * 1e6 / o.worker_runtime_us as f64);
    WakeupResult {
        settings: s.clone(),
        wakeup: Table::of(
            &o.wakeup,
            if pipe {
                &model::PIPE_PCTS
            } else {
                &model::LATENCY_PCTS
            },
        ),
        request: (!pipe).then(|| Table::of(&o.request, &model::LATENCY_PCTS)),
        rps: (!pipe).then(|| Table::of(&o.rps, &model::RPS_PCTS)),
        average_rps: (!pipe && s.auto_rps_pct == 0 && span > 0.0).then(|| o.requests as f64 / span),
        final_rps_goal: (s.auto_rps_pct > 0).then_some(o.final_rps_goal),
        pipe_ops_per_s: if pipe {
            per_worker(o.requests as f64)
        } else {
            None
        },
        pipe_bytes_per_s: if pipe {
            per_worker(o.requests as f64 * s.pipe_bytes as f64)
        } else {
            None
        },
        per_second: o.per_second.clone(),
        elapsed_s,
        stopped: o.stopped,
        sched_delay: o.sched_delay_ns.filter(|_| !pipe).map(|(message, worker)| {
            model::SchedDelay {
                message_us: message / 1000,
                worker_us: worker / 1000,
            }
        }),
        explained: None,
        account: None,
    }
}

impl crate::suites::Part for WakeupConfig {
    fn plan(&self) -> Plan {
        plan(self)
    }

    fn suite(&self) -> &'static str {
        "wakeup"
    }

    fn measures(&self) -> String {
        format!(
            "schbench, {}, {} s",
            model::mode(&self.settings),
            self.settings.runtime_s
        )
    }

    fn measure_part(
        &self,
        _with: &crate::suites::PartInputs<'_>,
        stop: &AtomicBool,
        events: &mut dyn Events,
    ) -> Result<(SuiteResult, Option<String>)> {
        Ok((SuiteResult::Wakeup(measure(self, stop, events)?), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: Option<u64> = Some(1 << 30);

    fn config(o: Options) -> Result<WakeupConfig, UsageError> {
        WakeupConfig::on(&o, &[0, 1, 2, 3], GIB)
    }

    #[test]
    fn schbench_defaults_and_its_rules_between_options() {
        let c = config(Options::default()).unwrap();
        let s = &c.settings;
        // A worker a CPU, a 5 s warm-up for a 30 s run, the lock on.
        assert_eq!((s.message_threads, s.workers, s.warmup_s), (1, 4, 5));
        assert!(s.locking && !s.calibrate);
        assert_eq!((s.rps, s.pipe_bytes), (0, 0));
        // Two message threads share the CPUs; a short run has no warm-up.
        let s = config(Options {
            message_threads: 3,
            runtime_s: 10,
            ..Options::default()
        })
        .unwrap()
        .settings;
        assert_eq!((s.workers, s.warmup_s), (2, 0));
        // -C takes no lock; -A starts at 10 requests a second without a warm-up.
        let s = config(Options {
            calibrate: true,
            auto_rps_pct: Some(50),
            ..Options::default()
        })
        .unwrap()
        .settings;
        assert!(!s.locking);
        assert_eq!((s.rps, s.auto_rps_pct, s.warmup_s), (10, 50, 0));
        // The pipe test is capped at 1 MiB, and says so.
        let c = config(Options {
            pipe_bytes: Some(4 << 20),
            ..Options::default()
        })
        .unwrap();
        assert_eq!(c.settings.pipe_bytes, MAX_PIPE_BYTES);
        assert_eq!(c.notes.len(), 1);
        // "auto": message thread 0 on CPU 0, the workers on the rest.
        let s = config(Options {
            message_cpus: Some("auto".into()),
            ..Options::default()
        })
        .unwrap()
        .settings;
        assert_eq!(s.message_cpus, Some(vec![0]));
        assert_eq!(s.worker_cpus, Some(vec![1, 2, 3]));
    }

    #[test]
    fn bad_options_are_refused_with_one_line() {
        let err = |o: Options| config(o).unwrap_err().to_string();
        assert!(err(Options {
            message_threads: 0,
            ..Options::default()
        })
        .contains("-m"));
        assert!(err(Options {
            workers: Some(0),
            ..Options::default()
        })
        .contains("-t"));
        assert!(err(Options {
            rps: Some(100),
            auto_rps_pct: Some(50),
            ..Options::default()
        })
        .contains("-R and -A"));
        assert!(err(Options {
            worker_cpus: Some("2-9".into()),
            ..Options::default()
        })
        .contains("CPU 4, which is not online"));
        assert!(err(Options {
            message_cpus: Some("x".into()),
            ..Options::default()
        })
        .contains("-M takes a CPU list"));
        // 1 GiB a worker, four workers, one GiB available.
        assert!(err(Options {
            footprint_kb: 1 << 20,
            ..Options::default()
        })
        .contains("more than the 1024 MiB"));
        assert!(err(Options {
            message_threads: 4,
            message_cpus: Some("auto".into()),
            ..Options::default()
        })
        .contains("leaves none"));
        for e in [
            err(Options {
                runtime_s: 0,
                ..Options::default()
            }),
            err(Options {
                pipe_bytes: Some(100),
                rps: Some(10),
                ..Options::default()
            }),
        ] {
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
