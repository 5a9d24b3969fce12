use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

use super::config::InteractiveConfig;
use super::worker::{BenchReport, BenchSpec, LoadWorkerSpec};
use super::InteractiveEvent;
use crate::calibration::{
    burn_calibration_deferred, commit_to_cache, interbench_loops, measure_rate, unconfirmed,
    unconfirmed_by, BurnCalibration, BurnLoop, CalibrationSource, RateMeasurement,
    INTERBENCH_BUDGET,
};
use crate::loads::sim::Timekeeping;
use crate::loads::{self, LoadSpec, RunInputs};
use crate::model::account::Account;
use crate::model::interactive::{
    Bench, DriftCheck, InteractiveResult, InteractiveSettings, Load, LoadReport, Measurement,
    SkippedLoad,
};
use crate::model::SuiteResult;
use crate::platform::account::Probe;
use crate::platform::clock::monotonic_ns;
use crate::platform::private_dir::PrivateDir;
use crate::platform::rusage::Usage;
use crate::platform::sched;
use crate::platform::signals::sleep_until_unless;
use crate::suites::event::{Event, Events, EVERY_UNIT};
use crate::suites::reference;
use crate::suites::trace::Recorder;
use crate::suites::{Plan, Unit};
use crate::text::Text;
use crate::workers::{self, killing_on_stop, Worker};

/// The pairs to measure, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairs {
    pub pairs: Vec<(Bench, Load)>,
    pub skipped: Vec<SkippedLoad>,
}

/// Every selected bench against every selected load, except a load that is the bench's own
/// simulation (Video is not measured under Video), as interbench does.
pub fn pairs(config: &InteractiveConfig) -> Pairs {
    let mut pairs = Vec::new();
    for &bench in &config.settings.benches {
        for &load in &config.settings.loads {
            let disabled = load == Load::Memload && config.memload_disabled.is_some();
            if load.same_as() != Some(bench) && !disabled {
                pairs.push((bench, load));
            }
        }
    }
    let skipped = config
        .memload_disabled
        .iter()
        .map(|reason| SkippedLoad {
            load: Load::Memload,
            reason: reason.clone().into(),
        })
        .collect();
    Pairs { pairs, skipped }
}

/// About how long one pair takes: its `-t` seconds after the load has settled, and the
/// workers' start and stop (about 0.4 s here).
pub fn seconds_per_pair(s: &InteractiveSettings) -> f64 {
    s.duration_s as f64 + s.settle_ms as f64 / 1e3 + 0.4
}

/// What a run measures: the burn loop's calibration (and its check at the end), then every
/// pair ([`seconds_per_pair`]).
pub fn plan(config: &InteractiveConfig) -> Plan {
    let each = seconds_per_pair(&config.settings);
    let mut units = vec![Unit::new("calibration", 1, 3.0)];
    units.extend(
        pairs(config)
            .pairs
            .iter()
            .map(|(b, l)| Unit::new(format!("{} under {}", b.name(), l.name()), 1, each)),
    );
    Plan { units }
}

/// A finished (or stopped) run: the result, and why it ended early if it did.
pub struct InteractiveOutcome {
    pub result: InteractiveResult,
    pub failure: Option<String>,
}

/// Sleeps `ms`, or less if `stop` is set; returns whether the whole time passed.
fn sleep_unless_stopped(ms: u64, stop: &AtomicBool) -> bool {
    sleep_until_unless(monotonic_ns() + ms * 1_000_000, stop)
}

/// Runs every planned pair until done, stopped, or a worker fails. `exe` is the hostbench
/// binary that workers are started from.
pub fn run(
    config: &InteractiveConfig,
    exe: &Path,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> Result<InteractiveOutcome> {
    let started = monotonic_ns();
    let mut settings = config.settings.clone();
    // -u: pin the coordinator, for this suite only; the workers inherit the mask, and their
    // timekeepers put themselves back on the whole of it, as interbench's do.
    let whole_mask = sched::allowed_cpus();
    let _pinned = match settings.pinned_cpu {
        Some(_) => {
            let cpu = sched::first_allowed_cpu().unwrap_or(0);
            settings.pinned_cpu = Some(cpu);
            Some(sched::pin_until_dropped(cpu).context("pinning to one CPU (-u)")?)
        }
        None => None,
    };
    let (calibration, calibration_start) = calibrate(config, stop, events);
    // cyclictest's idle-state hold, for as long as the pairs run.
    let _idle_hold = if settings.idle_hold {
        Some(crate::platform::power::hold_cpu_dma_latency().context("--idle-hold")?)
    } else {
        None
    };
    let plan = pairs(config);
    let mut so_far = SoFar::new(settings, calibration, calibration_start, &plan, started);
    for n in &so_far.notes {
        events.event(Event::Note(n));
    }
    for s in &plan.skipped {
        events.event(Event::Note(&format!(
            "{} skipped: {}",
            s.load.name(),
            s.reason
        )));
    }
    let workdir = PrivateDir::create(&config.workdir, "interactive")?;
    let (read_file, mut failure) = match read_file(&plan, &so_far.settings, &workdir, stop, events)
    {
        Ok(f) => (f, None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    let pairing = Pairing {
        exe,
        settings: &so_far.settings,
        loops_per_ms: so_far.calibration.loops_per_ms,
        timekeeping: Timekeeping {
            fifo: so_far.timekeeper_realtime,
            cpus: so_far.settings.pinned_cpu.map(|_| whole_mask.clone()),
            relative: so_far.settings.relative_sleep,
        },
        whole_mask: &whole_mask,
        // Where each pair's account is read; none with HOSTBENCH_NO_ACCOUNT.
        probe: crate::platform::account::enabled().then(Probe::default),
        workdir: &workdir,
        read_fd: read_file.as_ref().map(|f| f.as_raw_fd()),
        stop,
    };
    // --explain: switched off for the rest of the run (with a note) if tracing cannot start.
    let mut explain = so_far.settings.explain;
    let mut measurements = Vec::new();
    let mut notes = Vec::new();
    for (index, &(bench, load)) in plan.pairs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) || failure.is_some() {
            break;
        }
        pair_begins(&plan, index, events);
        let recorder = pairing.recorder(bench, &mut explain, &mut notes, events);
        match pairing.measure(bench, load, recorder) {
            Ok(Some(m)) => {
                events.event(Event::Interactive(InteractiveEvent::Measured(&m)));
                measurements.push(m);
                events.event(Event::Partial {
                    every: EVERY_UNIT,
                    build: &|| SuiteResult::Interactive(so_far.result(&measurements, &notes)),
                });
            }
            Ok(None) => break,
            Err(e) => failure = Some(format!("{e:#}")),
        }
    }
    drop(pairing);
    drop(workdir);
    so_far.notes.extend(notes);
    let result = so_far.finish(config, measurements, stop);
    Ok(InteractiveOutcome { result, failure })
}

/// interbench's own loop's calibration, so that -l means what it means to interbench, and the
/// loop's speed now, to confirm a fresh figure and to compare with its speed after the last
/// pair. A fresh figure is cached only once the two agree with it ([`SoFar::finish`]).
fn calibrate(
    config: &InteractiveConfig,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> (BurnCalibration, RateMeasurement) {
    let outcome = burn_calibration_deferred(
        &config.calibration,
        BurnLoop::Interbench,
        &mut |c| events.event(Event::CalibrationCheckMissed(c)),
        stop,
    );
    let mut calibration = outcome.calibration;
    let start = measure_rate(&mut interbench_loops, INTERBENCH_BUDGET);
    if let Some(why) = unconfirmed(&calibration, &start) {
        calibration.unsure = Some(why.into());
    }
    events.event(Event::BurnCalibrated {
        calibration: &calibration,
        cache_warning: outcome.cache_warning.as_deref(),
    });
    (calibration, start)
}

/// The Read load's file, where a pair needs it: written once, unlinked from the start, and
/// handed to each load worker as an open descriptor; with --page-cache left in the cache, as
/// interbench's is, so the first Read pass reads memory, not the disk.
fn read_file(
    plan: &Pairs,
    settings: &InteractiveSettings,
    workdir: &PrivateDir,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> Result<Option<std::fs::File>> {
    if !plan.pairs.iter().any(|(_, l)| l.uses_files().1) {
        return Ok(None);
    }
    events.event(Event::Interactive(InteractiveEvent::PreparingFiles {
        bytes: settings.file_bytes,
    }));
    let mut f = loads::create_unlinked(workdir.dir().fd(), "read.dat")?;
    loads::fill_file(&mut f, settings.file_bytes, stop, settings.page_cache)?;
    Ok(Some(f))
}

/// The events of a pair's start: its bench's first pair, the pair, and the part's progress.
fn pair_begins(plan: &Pairs, index: usize, events: &mut dyn Events) {
    let (bench, load) = plan.pairs[index];
    if index == 0 || plan.pairs[index - 1].0 != bench {
        events.event(Event::Interactive(InteractiveEvent::BenchBegins(bench)));
    }
    events.event(Event::Interactive(InteractiveEvent::PairBegins {
        bench,
        load,
        index,
        total: plan.pairs.len(),
    }));
    // Units as the plan counts them: the calibration, then each pair.
    let pair = format_args!("{} under {}", bench.name(), load.name());
    events.event(Event::progress(
        1 + index as u64,
        1 + plan.pairs.len() as u64,
        &pair,
    ));
}

/// What every pair of a run shares: the hostbench binary, the run's settings, its burn loop's
/// speed, how the timekeepers keep time, and where the loads' files are.
struct Pairing<'a> {
    exe: &'a Path,
    settings: &'a InteractiveSettings,
    loops_per_ms: u64,
    timekeeping: Timekeeping,
    /// The CPUs the run may use (the tracer of `--explain` watches them all).
    whole_mask: &'a [usize],
    probe: Option<Probe>,
    workdir: &'a PrivateDir,
    read_fd: Option<i32>,
    stop: &'a AtomicBool,
}

impl Pairing<'_> {
    /// `--explain`'s tracer for a pair of `bench`; where it cannot start, a note, and no
    /// explanations for the rest of the run. Gaming has no deadlines and never sleeps:
    /// nothing to explain.
    fn recorder(
        &self,
        bench: Bench,
        explain: &mut Option<u32>,
        notes: &mut Vec<String>,
        events: &mut dyn Events,
    ) -> Option<Recorder> {
        let worst = explain.filter(|_| bench != Bench::Gaming)?;
        match Recorder::start(self.whole_mask, worst) {
            Ok(r) => Some(r),
            Err(why) => {
                let note = format!("--explain: {why}; the pairs are measured without explanations");
                events.event(Event::Note(&note));
                notes.push(note);
                *explain = None;
                None
            }
        }
    }

    /// One pair, with its explanations where `recorder` traced it. None on a stop.
    fn measure(
        &self,
        bench: Bench,
        load: Load,
        recorder: Option<Recorder>,
    ) -> Result<Option<Measurement>> {
        let s = self.settings;
        // As interbench's main process before every pair: whatever earlier pairs (or anything
        // else) left dirty is written out now, not while this pair is measured.
        loads::sync_flush();
        let load_spec = LoadSpec::new(
            load,
            &RunInputs {
                threads: s.burn_threads,
                loops_per_ms: self.loops_per_ms,
                files_dir_fd: Some(self.workdir.dir().raw_fd()),
                read_fd: self.read_fd,
                file_bytes: s.file_bytes,
                page_cache: s.page_cache,
                memload_mb: s.memload_mb.unwrap_or(0),
                hack_groups: s.hack_groups,
                custom: s.custom,
                timekeeping: self.timekeeping.clone(),
            },
        );
        let bench_spec = BenchSpec {
            bench,
            custom: s.custom,
            loops_per_ms: self.loops_per_ms,
            realtime: s.realtime,
            timekeeping: self.timekeeping.clone(),
            nice: s.bench_nice,
            duration_ns: s.duration_s * 1_000_000_000,
            trace_marker: recorder.as_ref().map(Recorder::marker),
        };
        let measured = run_pair(
            self.exe,
            s,
            bench_spec,
            load_spec,
            self.probe.as_ref(),
            self.stop,
        );
        // The Write load's file is made again by the next pair that needs it (its worker
        // unlinks it as soon as it is open; this is for one that died before).
        let _ = self.workdir.dir().remove_file(loads::WRITE_FILE);
        Ok(measured?.map(|mut m| {
            m.explained = recorder.map(Recorder::finish);
            m
        }))
    }
}

/// The run as it stands: what its result holds beside the pairs measured.
struct SoFar {
    settings: InteractiveSettings,
    calibration: BurnCalibration,
    calibration_start: RateMeasurement,
    timekeeper_realtime: bool,
    notes: Vec<String>,
    skipped: Vec<SkippedLoad>,
    planned_pairs: usize,
    started: u64,
    /// The coordinator's own cost is counted over the pairs alone, not the calibrations.
    usage: Usage,
}

impl SoFar {
    fn new(
        settings: InteractiveSettings,
        calibration: BurnCalibration,
        calibration_start: RateMeasurement,
        plan: &Pairs,
        started: u64,
    ) -> SoFar {
        let timekeeper_realtime = sched::can_use_fifo();
        let mut notes = Vec::new();
        if !timekeeper_realtime {
            notes.push(
                "SCHED_FIFO is not permitted here: timekeepers run SCHED_OTHER, so their own scheduling delay goes into the timer's lateness (the timer late column) and the latency, counted from when the timekeeper woke, is understated by as much (run as root or with an RT rlimit for real-time timekeeping)"
                    .to_string(),
            );
        }
        SoFar {
            settings,
            calibration,
            calibration_start,
            timekeeper_realtime,
            notes,
            skipped: plan.skipped.clone(),
            planned_pairs: plan.pairs.len(),
            started,
            usage: Usage::process(),
        }
    }

    /// The result so far, for a checkpoint: these pairs, and notes made since the start.
    fn result(&self, measurements: &[Measurement], notes: &[String]) -> InteractiveResult {
        InteractiveResult {
            settings: self.settings.clone(),
            calibration: self.calibration.clone(),
            calibration_end: None,
            calibration_start: Some(self.calibration_start),
            drift: None,
            timekeeper_realtime: self.timekeeper_realtime,
            notes: self.notes.iter().chain(notes).map(Text::from).collect(),
            skipped: self.skipped.clone(),
            planned_pairs: self.planned_pairs,
            measurements: measurements.to_vec(),
            coordinator_cpu_ns: Usage::process().since(&self.usage).cpu_ns(),
            wall_ns: monotonic_ns() - self.started,
        }
    }

    /// The result at the end: did the loop's speed drift while the pairs ran (skipped when
    /// stopping: the user is waiting), and a fresh figure cached where the loop still runs at
    /// it.
    fn finish(
        mut self,
        config: &InteractiveConfig,
        measurements: Vec<Measurement>,
        stop: &AtomicBool,
    ) -> InteractiveResult {
        let coordinator_cpu_ns = Usage::process().since(&self.usage).cpu_ns();
        let calibration_end = (!stop.load(Ordering::Relaxed) && !measurements.is_empty())
            .then(|| measure_rate(&mut interbench_loops, INTERBENCH_BUDGET));
        let drift = calibration_end.map(|end| DriftCheck::of(&self.calibration_start, &end));
        // A fresh figure the loop no longer runs at after the last pair is unsure too: which
        // of the two speeds it stands for cannot be told.
        if let Some(why) = calibration_end
            .as_ref()
            .and_then(|end| unconfirmed_by(&self.calibration, end, "after the last pair"))
        {
            self.calibration.unsure = Some(why.into());
        }
        if self.calibration.source == CalibrationSource::Measured
            && self.calibration.unsure.is_none()
        {
            let note = match drift {
                Some(d) if !d.drifted => commit_to_cache(&config.calibration, &self.calibration),
                Some(_) => Some("loops_per_ms not cached: the loop's speed moved between the first pair and the last (the drift check)".to_string()),
                None => Some("loops_per_ms not cached: the run ended before the drift check could confirm it".to_string()),
            };
            self.notes.extend(note);
        }
        InteractiveResult {
            calibration_end,
            drift,
            measurements,
            coordinator_cpu_ns,
            wall_ns: monotonic_ns() - self.started,
            ..self.result(&[], &[])
        }
    }
}

/// Starts the load worker and waits until it has made its load's threads (`ready`). None
/// when a stop was requested meanwhile (the worker killed).
fn ready_load_worker(
    exe: &Path,
    load_json: &str,
    label: &str,
    inherited: &[i32],
    stop: &AtomicBool,
) -> Result<Option<Worker>> {
    let mut w = Worker::spawn_with(exe, load_json, label, inherited, &[])?;
    let ready = killing_on_stop(&[w.pid() as i32], stop, || w.expect("ready"));
    match ready {
        Ok(_) => Ok(Some(w)),
        Err(_) if stop.load(Ordering::Relaxed) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One pair: start the load and let it settle, start the bench, measure for `-t` seconds, stop
/// both and collect. None when a stop was requested before the pair completed.
///
/// The bench worker is started once the load's has made its threads, as interbench forks its
/// benched process once its load process is ready: the kernel places each process's threads
/// beside what the other left.
fn run_pair(
    exe: &Path,
    settings: &crate::model::interactive::InteractiveSettings,
    bench_spec: BenchSpec,
    load_spec: LoadSpec,
    probe: Option<&Probe>,
    stop: &AtomicBool,
) -> Result<Option<Measurement>> {
    let (bench, load) = (bench_spec.bench, load_spec.load());
    let inherited = load_spec.inherited_fds();
    let load_json = workers::spec_json(
        "load",
        &LoadWorkerSpec {
            load: load_spec,
            nice: settings.load_nice,
        },
    )?;
    let bench_json = workers::spec_json("bench", &bench_spec)?;

    let label = format!("{} load", load.name());
    let Some(mut load_worker) = ready_load_worker(exe, &load_json, &label, &inherited, stop)?
    else {
        return Ok(None);
    };
    let mut bench_worker = Worker::spawn(exe, &bench_json, &format!("{} bench", bench.name()))?;
    let pgids = [load_worker.pid() as i32, bench_worker.pid() as i32];
    // On a stop the workers are killed (dropped unreaped) rather than stopped in order: the
    // pair is not kept, and a load of thousands of threads takes long to join.
    // The host's speed on the pair's CPUs, read before the load starts and after both end.
    let reference_cpus = match settings.pinned_cpu {
        Some(cpu) => vec![cpu],
        None => sched::allowed_cpus(),
    };
    let mut reference_before = None;
    let measured = killing_on_stop(&pgids, stop, || -> Result<_> {
        bench_worker.expect("ready")?;
        reference_before = probe.and_then(|_| reference::read(&reference_cpus));
        load_worker.send("start")?;
        load_worker.expect("started")?;
        if !sleep_unless_stopped(settings.settle_ms, stop) {
            return Ok(None);
        }
        bench_worker.send("start")?;
        bench_worker.expect("started")?;
        // The pair's account: the bench worker's threads (the simulated task, its timekeeper)
        // and their CPUs, from its start to its stop.
        let tasks = probe
            .map(|p| p.threads(bench_worker.pid()))
            .unwrap_or_default();
        let opened = probe.map(|p| p.start(&tasks));
        if !sleep_unless_stopped(settings.duration_s * 1000, stop) {
            return Ok(None);
        }
        let account = probe
            .zip(opened)
            .map(|(p, o)| Account::of(p.end(o, &tasks)));
        bench_worker.send("stop")?;
        load_worker.send("stop")?;
        let report: BenchReport = bench_worker.read_report()?;
        let load_report: LoadReport = load_worker.read_report()?;
        Ok(Some((report, load_report, account)))
    });
    let (report, load_report, account) = match measured {
        Ok(Some(m)) => m,
        Ok(None) => return Ok(None),
        Err(_) if stop.load(Ordering::Relaxed) => return Ok(None),
        Err(e) => return Err(e),
    };
    bench_worker.finish()?;
    load_worker.finish()?;
    let account = account.map(|a| Account {
        reference_ns: reference::around(reference_before, reference::read(&reference_cpus)),
        ..a
    });
    Ok(Some(Measurement {
        bench,
        load,
        wall_ns: report.wall_ns,
        latency: report.latency,
        samples_ns: report.samples_ns,
        samples_truncated: report.samples_truncated,
        wake: report.wake,
        wake_samples_ns: report.wake_samples_ns,
        from_deadline: report.from_deadline,
        counts: report.counts,
        desired_cpu_pct: report.counts.desired_cpu_pct(),
        deadlines_met_pct: (bench != Bench::Gaming).then(|| report.counts.deadlines_met_pct()),
        measured_cpu_pct: crate::loads::sim::cpu_pct(report.cpu_ns, report.wall_ns),
        asked_cpu_pct: report.asked_cpu_pct,
        task_policy: report.task_policy,
        timer: report.timer,
        memory_locked: report.memory_locked,
        load_report,
        account: account.map(Box::new),
        explained: None,
    }))
}

impl crate::suites::Part for InteractiveConfig {
    fn plan(&self) -> Plan {
        plan(self)
    }

    fn suite(&self) -> &'static str {
        "interactive"
    }

    fn measures(&self) -> String {
        let i = &self.settings;
        format!(
            "{}{} under {}, {} s each",
            crate::suites::placement(i.pinned_cpu.is_some()),
            crate::suites::listed(i.benches.iter().map(|b| b.name())),
            crate::suites::listed(i.loads.iter().map(|l| l.name())),
            i.duration_s
        )
    }

    fn measure_part(
        &self,
        with: &crate::suites::PartInputs<'_>,
        stop: &AtomicBool,
        events: &mut dyn Events,
    ) -> Result<(SuiteResult, Option<String>)> {
        let outcome = run(self, with.exe, stop, events)?;
        Ok((SuiteResult::Interactive(outcome.result), outcome.failure))
    }
}
