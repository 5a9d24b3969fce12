//! One run of schbench's workload: message threads hand requests to worker threads, which
//! record their wakeup and request latencies (docs/wakeup.md tells the model). Nothing here
//! prints or allocates while measuring: each worker records into histograms of its own
//! (`stats::plat`, schbench's buckets), made before the threads start.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};

use super::matrices::Matrices;
use crate::loads::sim::Marker;
use crate::model::account::Account;
use crate::model::wakeup::WakeupSettings;
use crate::platform::account::{wait_per_slice_ns, Probe, Start, Task};
use crate::platform::clock::monotonic_ns;
use crate::platform::futex::Flag;
use crate::platform::sched;
use crate::platform::signals::sleep_until_unless;
use crate::stats::plat::{Plat, SharedPlat};

/// The most bytes a pipe-mode hand-off writes (schbench's cap: 1 MiB).
pub const MAX_PIPE_BYTES: usize = 1 << 20;

/// Most requests posted to one worker and not yet taken before a fixed-rate message thread
/// skips that worker for 100 µs (schbench's batch of 128).
const MOST_PENDING: u64 = 128;

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// µs from a worker's wake-up to its running, since the warm-up.
    pub wakeup: Plat,
    /// µs of each request (its sleep and its math; with `-C`, the math), since the warm-up.
    pub request: Plat,
    /// Requests a second, one sample a second (schbench's RPS table), since the warm-up.
    pub rps: Plat,
    /// Requests done in the whole run, warm-up included (schbench's average rps divides this
    /// by the run time).
    pub requests: u64,
    /// The workers' run times summed, µs (the pipe test's ops/sec per worker).
    pub worker_runtime_us: u64,
    /// Each second: seconds since the start and the requests a second over that second.
    pub per_second: Vec<(f64, f64)>,
    /// With `-A`: the request rate it ended at.
    pub final_rps_goal: u64,
    /// The run's length, ns.
    pub elapsed_ns: u64,
    /// A stop ended it before its run time.
    pub stopped: bool,
    /// schbench's "sched delay" as the run ended: the average over the message threads, and
    /// over the workers, of each thread's run-queue wait a slice, ns (None: none could be read).
    pub sched_delay_ns: Option<(u64, u64)>,
    /// What the host did while the statistics were kept (from the warm-up's end, or from the
    /// second every thread had started), where a probe was given and could begin it.
    pub account: Option<Account>,
}

/// A spinlock of one CPU, on a cache line of its own.
#[repr(align(64))]
#[derive(Default)]
struct CpuLock(AtomicBool);

/// A page that a worker and its message thread write in turn (the pipe test). The futex
/// hand-off orders the two: one writes, posts, and the other writes only after its wait.
struct Page(UnsafeCell<Vec<u8>>);

// SAFETY: the two writers never run at once (above); the page is never read.
unsafe impl Sync for Page {}

impl Page {
    /// # Safety
    /// Only the thread that the hand-off has made the page's holder may call it.
    #[inline]
    unsafe fn fill(&self, byte: u8) {
        let page = &mut *self.0.get();
        std::ptr::write_bytes(page.as_mut_ptr(), byte, page.len());
    }
}

struct Worker {
    flag: Flag,
    /// When it was woken (ns): set by its message thread, or by itself when it posts.
    woken_ns: AtomicU64,
    /// The next worker on its message thread's list, as index + 1 (0: the end).
    next: AtomicUsize,
    /// Fixed rate: requests posted and not yet taken.
    queued: AtomicU64,
    /// Fixed rate: requests posted since it last looked (the message thread's brake).
    pending: AtomicU64,
    wakeup: SharedPlat,
    request: SharedPlat,
    requests: AtomicU64,
    runtime_us: AtomicU64,
    page: Page,
    /// Its own matrices, which only it multiplies.
    own: Matrices,
    /// Its thread id, once it has started (0 before).
    tid: AtomicU32,
}

struct Message {
    flag: Flag,
    /// The workers waiting to be woken, a stack of index + 1 (0: empty).
    head: AtomicUsize,
    /// Its thread id, once it has started (0 before).
    tid: AtomicU32,
}

struct Shared {
    spec: WakeupSettings,
    stopping: AtomicBool,
    /// Requests a second for each message thread (fixed-rate mode).
    goal: AtomicU64,
    locks: Vec<CpuLock>,
    /// `--split`: the matrices every worker multiplies, as schbench's shared data (none
    /// without). Several workers write the product at once; it is never read, so whatever the
    /// race leaves in it does not matter (schbench races the same way).
    matrices: Matrices,
    workers: Vec<Worker>,
    messages: Vec<Message>,
    /// `--explain`: the trace instance's marker file, where each worker writes each wakeup's
    /// post and running instants.
    marker: Option<std::fs::File>,
}

/// Each second of a run: seconds since the start, the requests a second over that second,
/// and what the run has measured so far (made only when called).
pub type Tick<'a> = dyn FnMut(f64, f64, &dyn Fn() -> Outcome) + 'a;

/// Runs the workload until its run time has passed or `stop` is set; `tick` hears of each
/// second. With a trace `marker`, each wakeup is written to it (`--explain`); with a `probe`,
/// the threads' stretch is accounted.
///
/// In the default, saturating mode a worker puts itself on its message thread's list, wakes
/// it, and sleeps on its own futex; the message thread takes the whole list, reads the clock
/// once and wakes each worker with that time. The worker's wakeup latency is the time from
/// then until it runs. Its request is a sleep (`-s` µs: the network or the disk) and `-n`
/// naive multiplications of three matrices that fill `-F` KB, done under a spinlock of the CPU
/// it runs on, so that a worker preempted in the middle holds up the next one to run there.
/// The request latency is the sleep and the math. With `-R`, the message threads post that
/// many requests a second instead (round robin over their workers); with `-p`, a worker and
/// its message thread only hand a page of that many bytes to each other (the pipe test,
/// wakeup latency alone); with `-C`, the sleep is left out of the request latency and no lock
/// is taken.
pub fn run(
    spec: &WakeupSettings,
    marker: Option<std::fs::File>,
    probe: Option<&Probe>,
    stop: &AtomicBool,
    tick: &mut Tick<'_>,
) -> Result<Outcome> {
    let total = spec.message_threads * spec.workers;
    if total == 0 {
        return Err(anyhow!("no worker threads"));
    }
    // A lock for every CPU the kernel may bring online, not only those online now.
    // SAFETY: sysconf takes a constant name and has no other effect.
    let cpus = usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) })
        .unwrap_or(1)
        .max(1);
    let page_bytes = spec.pipe_bytes.min(MAX_PIPE_BYTES);
    let shared = Arc::new(Shared {
        spec: spec.clone(),
        stopping: AtomicBool::new(false),
        goal: AtomicU64::new(spec.rps / spec.message_threads as u64),
        locks: (0..cpus).map(|_| CpuLock::default()).collect(),
        matrices: Matrices::new(spec.shared_side().unwrap_or(0))?,
        workers: (0..total)
            .map(|_| -> Result<Worker> {
                Ok(Worker {
                    flag: Flag::default(),
                    woken_ns: AtomicU64::new(0),
                    next: AtomicUsize::new(0),
                    queued: AtomicU64::new(0),
                    pending: AtomicU64::new(0),
                    wakeup: SharedPlat::default(),
                    request: SharedPlat::default(),
                    requests: AtomicU64::new(0),
                    runtime_us: AtomicU64::new(0),
                    page: Page(UnsafeCell::new(vec![0; page_bytes])),
                    own: Matrices::new(spec.matrix_side())?,
                    tid: AtomicU32::new(0),
                })
            })
            .collect::<Result<_>>()?,
        messages: (0..spec.message_threads)
            .map(|_| Message {
                flag: Flag::default(),
                head: AtomicUsize::new(0),
                tid: AtomicU32::new(0),
            })
            .collect(),
        marker,
    });
    let mut threads = Vec::with_capacity(spec.message_threads);
    for m in 0..spec.message_threads {
        let s = Arc::clone(&shared);
        let t = std::thread::Builder::new()
            .name("hb-wakeup-msg".into())
            .spawn(move || message_thread(s, m));
        match t {
            Ok(t) => threads.push(t),
            Err(e) => {
                shared.stopping.store(true, Ordering::SeqCst);
                for m in &shared.messages {
                    m.flag.post();
                }
                for t in threads {
                    let _ = t.join();
                }
                return Err(e).context("starting a message thread");
            }
        }
    }
    let outcome = control(&shared, Stretch::new(probe), stop, tick);
    shared.stopping.store(true, Ordering::SeqCst);
    let mut failed = None;
    for (m, t) in threads.into_iter().enumerate() {
        shared.messages[m].flag.post();
        match t.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failed = failed.or(Some(e)),
            Err(_) => failed = failed.or(Some(anyhow!("a message thread panicked"))),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    let mut outcome = outcome;
    gather(&shared, &mut outcome);
    Ok(outcome)
}

/// Adds the workers' histograms and counts into `outcome`.
fn gather(shared: &Shared, outcome: &mut Outcome) {
    for w in &shared.workers {
        w.wakeup.add_to(&mut outcome.wakeup);
        w.request.add_to(&mut outcome.request);
        outcome.requests += w.requests.load(Ordering::Relaxed);
        outcome.worker_runtime_us += w.runtime_us.load(Ordering::Relaxed);
    }
}

/// The account of the threads' stretch: begun once the statistics are kept and every thread
/// has started, ended while they still run.
struct Stretch<'a> {
    probe: Option<&'a Probe>,
    begun: Option<(Start, Vec<Task>)>,
}

impl<'a> Stretch<'a> {
    fn new(probe: Option<&'a Probe>) -> Stretch<'a> {
        Stretch { probe, begun: None }
    }

    /// Begins it where it has a probe and has not begun, the statistics are kept, and every
    /// thread has its id.
    fn begin_if_ready(&mut self, shared: &Shared, kept: bool) {
        let Some(probe) = self.probe.filter(|_| kept && self.begun.is_none()) else {
            return;
        };
        let pid = std::process::id();
        let tids = shared.messages.iter().map(|m| &m.tid);
        let tasks: Option<Vec<Task>> = tids
            .chain(shared.workers.iter().map(|w| &w.tid))
            .map(|t| match t.load(Ordering::SeqCst) {
                0 => None,
                tid => Some(Task { pid, tid }),
            })
            .collect();
        if let Some(tasks) = tasks {
            self.begun = Some((probe.start(&tasks), tasks));
        }
    }

    fn end(self) -> Option<Account> {
        let (start, tasks) = self.begun?;
        Some(Account::of(self.probe?.end(start, &tasks)))
    }
}

/// schbench's main thread: once a second, the requests a second into the RPS histogram; the
/// warm-up's end and each `-z` zero the statistics; `-A` steers the rate.
fn control(
    shared: &Shared,
    mut stretch: Stretch<'_>,
    stop: &AtomicBool,
    tick: &mut Tick<'_>,
) -> Outcome {
    let spec = &shared.spec;
    let start = monotonic_ns();
    let runtime_ns = spec.runtime_s.saturating_mul(1_000_000_000);
    let warmup_ns = spec.warmup_s.saturating_mul(1_000_000_000);
    let zero_ns = spec.zero_s.saturating_mul(1_000_000_000);
    let mut rps = Plat::default();
    let mut per_second = Vec::with_capacity(spec.runtime_s.min(100_000) as usize + 2);
    let (mut last_ns, mut last_requests, mut zeroed_ns) = (start, 0u64, start);
    // Only the saturating mode zeroes its statistics at the warm-up's end.
    let mut warmed = spec.rps_mode() || spec.pipe_bytes > 0 || warmup_ns == 0;
    let mut steering = Steering::new(spec.auto_rps_pct);
    let mut stopped = false;
    loop {
        let now = monotonic_ns();
        let elapsed = now - start;
        let done = elapsed >= runtime_ns;
        if !warmed && elapsed > warmup_ns {
            warmed = true;
            zeroed_ns = now;
            zero(shared, &mut rps);
        } else if spec.pipe_bytes == 0 {
            let requests: u64 = shared
                .workers
                .iter()
                .map(|w| w.requests.load(Ordering::Relaxed))
                .sum();
            let us = (now - last_ns) as f64 / 1000.0;
            let rate = (requests - last_requests) as f64 * 1e6 / us;
            let rate = if rate.is_finite() { rate } else { 0.0 };
            (last_requests, last_ns) = (requests, now);
            if spec.auto_rps_pct == 0 || steering.hit {
                rps.record(rate as u32);
            }
            per_second.push((elapsed as f64 / 1e9, rate));
            tick(elapsed as f64 / 1e9, rate, &|| {
                // schbench reads the sched delay with every interval's tables.
                let mut o = outcome(shared, rps.clone(), per_second.clone(), elapsed, true);
                gather(shared, &mut o);
                o
            });
        }
        if zero_ns > 0 && now - zeroed_ns > zero_ns {
            zeroed_ns = now;
            zero(shared, &mut rps);
        }
        if steering.step(shared) {
            rps = Plat::default();
        }
        stretch.begin_if_ready(shared, warmed);
        // A message thread that could not start its workers has ended the run.
        if done || shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        if !sleep_until_unless(now + 1_000_000_000, stop) {
            stopped = true;
            break;
        }
    }
    Outcome {
        account: stretch.end(),
        ..outcome(shared, rps, per_second, monotonic_ns() - start, stopped)
    }
}

/// The control thread's part of an outcome (the workers' is gathered apart): the rates, the
/// last goal, the time, and schbench's sched delay read now.
fn outcome(
    shared: &Shared,
    rps: Plat,
    per_second: Vec<(f64, f64)>,
    elapsed_ns: u64,
    stopped: bool,
) -> Outcome {
    Outcome {
        wakeup: Plat::default(),
        request: Plat::default(),
        rps,
        requests: 0,
        worker_runtime_us: 0,
        per_second,
        final_rps_goal: shared.goal.load(Ordering::Relaxed) * shared.spec.message_threads as u64,
        elapsed_ns,
        stopped,
        sched_delay_ns: sched_delay(shared),
        account: None,
    }
}

/// `-A`: the rate steered each second towards the CPU utilisation asked for, from the CPUs'
/// busy share over the second; off where /proc/stat cannot be read.
struct Steering {
    pct: u32,
    on: bool,
    busy: Option<crate::platform::procfs::CpuTimes>,
    /// Whether the target was hit: the rates recorded only from then on.
    hit: bool,
}

impl Steering {
    fn new(pct: u32) -> Steering {
        let on = pct > 0;
        Steering {
            pct,
            on,
            busy: on
                .then(|| crate::platform::procfs::read_cpu_times().ok())
                .flatten(),
            hit: false,
        }
    }

    /// A second's step: the next goal stored; true when the target was first hit.
    fn step(&mut self, shared: &Shared) -> bool {
        if !self.on {
            return false;
        }
        let Ok(times) = crate::platform::procfs::read_cpu_times() else {
            self.on = false;
            return false;
        };
        let mut first_hit = false;
        if let Some(before) = self.busy {
            let goal = shared.goal.load(Ordering::Relaxed);
            let (next, hit) = steer_rate(goal, self.pct, before.busy_pct_until(&times));
            first_hit = hit && !self.hit;
            self.hit |= hit;
            shared.goal.store(next, Ordering::Relaxed);
        }
        self.busy = Some(times);
        first_hit
    }
}

/// schbench's "sched delay", read while every thread still runs: the mean over the message
/// threads, and over the workers, of each one's run-queue wait a slice, ns. schbench reads it
/// after its threads have ended, when the files are gone, and so prints 0 at the end of a run.
fn sched_delay(shared: &Shared) -> Option<(u64, u64)> {
    let mean = |tids: &mut dyn Iterator<Item = u32>| -> Option<u64> {
        let waits: Vec<u64> = tids
            .filter(|&t| t != 0)
            .filter_map(wait_per_slice_ns)
            .collect();
        (!waits.is_empty()).then(|| waits.iter().sum::<u64>() / waits.len() as u64)
    };
    let message = mean(&mut shared.messages.iter().map(|m| m.tid.load(Ordering::SeqCst)));
    let worker = mean(&mut shared.workers.iter().map(|w| w.tid.load(Ordering::SeqCst)));
    Some((message?, worker?))
}

fn zero(shared: &Shared, rps: &mut Plat) {
    *rps = Plat::default();
    for w in &shared.workers {
        w.wakeup.zero();
        w.request.zero();
    }
}

/// schbench's `-A` step: the next requests a second from this second's, the target and how
/// busy the CPUs were (%); and whether the rate is now near enough the target to start
/// counting (within 5%). Far below, the rate at most triples; far above, it falls to no less
/// than 0.3 of itself; near, it moves by an eighth or a quarter of the way.
pub fn steer_rate(goal: u64, target_pct: u32, busy_pct: f64) -> (u64, bool) {
    let target = f64::from(target_pct);
    let goal_f = goal as f64;
    if busy_pct < target {
        let mut d = if busy_pct > 0.0 {
            target / busy_pct
        } else {
            3.0
        };
        let mut hit = false;
        if d > 3.0 {
            d = 3.0;
        } else if d < 1.2 {
            d = 1.0 + (d - 1.0) / 8.0;
            hit = d < 1.05;
        } else if d < 1.5 {
            d = 1.0 + (d - 1.0) / 4.0;
        }
        let next = (goal_f * d).ceil();
        (
            if next >= 2f64.powi(31) {
                goal
            } else {
                next as u64
            },
            hit,
        )
    } else if busy_pct > target {
        let mut d = target / busy_pct;
        let mut hit = false;
        if d < 0.3 {
            d = 0.3;
        } else if d > 0.9 {
            d += (1.0 - d) / 8.0;
            hit = d > 0.95;
        } else if d > 0.8 {
            d += (1.0 - d) / 4.0;
        }
        ((goal_f * d).floor().max(0.0) as u64, hit)
    } else {
        (goal, true)
    }
}

fn message_thread(shared: Arc<Shared>, m: usize) -> Result<()> {
    let spec = &shared.spec;
    shared.messages[m]
        .tid
        .store(sched::current_tid(), Ordering::SeqCst);
    // The workers inherit the worker CPUs; then this thread takes its own.
    if let Some(cpus) = &spec.worker_cpus {
        sched::set_current_thread_cpus(cpus).context("pinning the worker threads")?;
    }
    let mine = m * spec.workers..(m + 1) * spec.workers;
    let mut workers = Vec::with_capacity(spec.workers);
    let mut started = Ok(());
    for w in mine.clone() {
        let s = Arc::clone(&shared);
        match std::thread::Builder::new()
            .name("hb-wakeup-worker".into())
            .spawn(move || worker_thread(&s, m, w))
        {
            Ok(t) => workers.push(t),
            Err(e) => {
                started = Err(anyhow!(e).context("starting a worker thread"));
                break;
            }
        }
    }
    if started.is_ok() {
        if let Some(cpus) = &spec.message_cpus {
            let cpu = cpus[m % cpus.len()];
            if let Err(e) = sched::pin_to_cpu(cpu) {
                started =
                    Err(anyhow!(e).context(format!("pinning message thread {m} to CPU {cpu}")));
            }
        }
    }
    if started.is_ok() {
        if spec.rps_mode() {
            post_at_rate(&shared, mine.clone());
        } else {
            answer(&shared, m);
        }
    }
    shared.stopping.store(true, Ordering::SeqCst);
    for (i, t) in mine.zip(workers) {
        shared.workers[i].flag.post();
        let _ = t.join();
    }
    started
}

/// The saturating and pipe modes: wake whoever has asked, until the run stops.
fn answer(shared: &Shared, m: usize) {
    let me = &shared.messages[m];
    loop {
        me.flag.block();
        wake_all(shared, m);
        if shared.stopping.load(Ordering::SeqCst) {
            wake_all(shared, m);
            break;
        }
        me.flag.wait();
    }
}

/// Takes the message thread's whole list and wakes each worker on it. The clock is read once
/// for the list (a waker that the scheduler preempts while it wakes shows in every latency
/// after), except in the pipe test, where each worker's page is written first and the clock
/// read after it.
fn wake_all(shared: &Shared, m: usize) {
    let pipe = shared.spec.pipe_bytes > 0;
    let mut next = shared.messages[m].head.swap(0, Ordering::SeqCst);
    let now = monotonic_ns();
    while next != 0 {
        let w = &shared.workers[next - 1];
        next = w.next.load(Ordering::SeqCst);
        if pipe {
            // SAFETY: the worker is on the list, so it has written its page and posted: this
            // thread holds the page until it posts back.
            unsafe { w.page.fill(1) };
            w.woken_ns.store(monotonic_ns(), Ordering::SeqCst);
        } else {
            w.woken_ns.store(now, Ordering::SeqCst);
        }
        w.flag.post();
    }
}

/// Fixed rate (`-R`): each second, the second's requests posted round robin, then a sleep to
/// the second's end. A worker with more than 128 posted and not taken is passed over for
/// 100 µs instead (that request is not made). A run of `-r` seconds posts `-r` seconds'
/// requests: schbench's message thread starts after the clock of the run has, so its last
/// batch would fall after the run's end, where this thread's exact seconds could still make
/// it (and one second's requests more than asked, 198 a second for `-R 165 -r 5`).
fn post_at_rate(shared: &Shared, mine: std::ops::Range<usize>) {
    let mut turn = 0usize;
    let stopping = &shared.stopping;
    for _ in 0..shared.spec.runtime_s {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        let start = monotonic_ns();
        let goal = shared.goal.load(Ordering::Relaxed);
        for _ in 0..goal {
            if stopping.load(Ordering::Relaxed) {
                break;
            }
            let now = monotonic_ns();
            let w = &shared.workers[mine.start + turn % mine.len()];
            turn = turn.wrapping_add(1);
            if w.pending.load(Ordering::SeqCst) > MOST_PENDING {
                std::thread::sleep(std::time::Duration::from_micros(100));
                continue;
            }
            w.pending.fetch_add(1, Ordering::SeqCst);
            w.queued.fetch_add(1, Ordering::SeqCst);
            w.woken_ns.store(now, Ordering::SeqCst);
            w.flag.post();
        }
        sleep_until_unless(start + 1_000_000_000, stopping);
    }
    // The run's seconds are posted: wait for its end.
    while !stopping.load(Ordering::SeqCst) {
        sleep_until_unless(monotonic_ns() + 1_000_000_000, stopping);
    }
    for w in &shared.workers[mine] {
        w.flag.post();
    }
}

fn worker_thread(shared: &Shared, m: usize, index: usize) {
    let spec = &shared.spec;
    let me = &shared.workers[index];
    me.tid.store(sched::current_tid(), Ordering::SeqCst);
    let message = &shared.messages[m];
    let pipe = spec.pipe_bytes > 0;
    let lock = spec.locking && !spec.calibrate;
    let start = monotonic_ns();
    let stopping = &shared.stopping;
    let mut wakeups = 0u64;
    while !stopping.load(Ordering::SeqCst) {
        // Ask: write the page, say when, get on the list (or take what was posted), post.
        if pipe {
            // SAFETY: this worker holds its page until it is on the list.
            unsafe { me.page.fill(2) };
        }
        me.flag.block();
        me.woken_ns.store(monotonic_ns(), Ordering::SeqCst);
        let mut take = 1;
        if spec.rps_mode() {
            me.pending.store(0, Ordering::SeqCst);
            take = me.queued.swap(0, Ordering::SeqCst);
            if take > 0 {
                // Work to do: a post meanwhile need not wake anyone.
                me.flag.run();
            }
        } else {
            join_list(message, me, index);
        }
        if take == 0 || !spec.rps_mode() {
            message.flag.post();
            if !stopping.load(Ordering::SeqCst) {
                me.flag.wait();
            }
            // At a fixed rate the wake-up that ends the run is no request's post: its time
            // counts from when the worker went to sleep, up to a second before.
            if spec.rps_mode() && stopping.load(Ordering::SeqCst) {
                break;
            }
            let now = monotonic_ns();
            let posted = me.woken_ns.load(Ordering::SeqCst);
            let us = whole_us_between(posted, now);
            // schbench keeps only latencies of at least 1 µs.
            if us > 0 {
                me.wakeup.record(u32::try_from(us).unwrap_or(u32::MAX));
            }
            if let Some(file) = &shared.marker {
                wakeups += 1;
                mark(
                    file,
                    wakeups,
                    posted,
                    now,
                    message.tid.load(Ordering::Relaxed),
                );
            }
            if spec.rps_mode() {
                continue;
            }
        }
        for _ in 0..take {
            let work_start = if pipe {
                monotonic_ns()
            } else {
                do_work(shared, me, lock)
            };
            let now = monotonic_ns();
            me.runtime_us.store((now - start) / 1000, Ordering::Relaxed);
            me.requests.fetch_add(1, Ordering::Relaxed);
            let us = whole_us_between(work_start, now);
            if us > 0 {
                me.request.record(u32::try_from(us).unwrap_or(u32::MAX));
            }
        }
    }
    me.runtime_us
        .store((monotonic_ns() - start) / 1000, Ordering::Relaxed);
}

/// Puts the worker on its message thread's list (schbench's `xlist_add`): it links itself
/// before the head it saw and swaps itself in, again until no other did meanwhile.
fn join_list(message: &Message, me: &Worker, index: usize) {
    let mut head = message.head.load(Ordering::SeqCst);
    loop {
        me.next.store(head, Ordering::SeqCst);
        match message
            .head
            .compare_exchange(head, index + 1, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => return,
            Err(now) => head = now,
        }
    }
}

/// One request's work (schbench's `do_work`): the nap (`-s`; before the clock starts when
/// calibrating), then under this CPU's lock where asked, the shared matrices' operations
/// first and the worker's own after. The end of the run (or a signal) stops a long request
/// between two operations: one relaxed load beside a whole matrix product. Returns when the
/// request's time started.
fn do_work(shared: &Shared, me: &Worker, lock: bool) -> u64 {
    let spec = &shared.spec;
    let (own_ops, shared_ops) = spec.operations_split();
    let stopping = &shared.stopping;
    let work_start = if spec.calibrate {
        nap(spec.sleep_us);
        monotonic_ns()
    } else {
        let t = monotonic_ns();
        nap(spec.sleep_us);
        t
    };
    let held = lock.then(|| lock_this_cpu(&shared.locks));
    for _ in 0..shared_ops {
        if stopping.load(Ordering::Relaxed) {
            break;
        }
        // SAFETY: 3·side² elements; the product may race (Shared::matrices).
        unsafe { multiply(shared.matrices.as_ptr(), shared.matrices.side()) };
    }
    for _ in 0..own_ops {
        if stopping.load(Ordering::Relaxed) {
            break;
        }
        // SAFETY: 3·side² elements, this worker's alone.
        unsafe { multiply(me.own.as_ptr(), me.own.side()) };
    }
    if let Some(l) = held {
        l.0.store(false, Ordering::Release);
    }
    work_start
}

/// `--explain`: one wakeup's marker, as the interactive tasks mark a sample: the post is the
/// "deadline" and the "timer" both (nothing runs between them), the message thread the waker.
fn mark(file: &std::fs::File, seq: u64, posted_ns: u64, ran_ns: u64, waker: u32) {
    Marker {
        seq,
        deadline_ns: posted_ns,
        fired_ns: posted_ns,
        ran_ns,
        timekeeper: i32::try_from(waker).unwrap_or(0),
    }
    .write_to(file);
}

/// Microseconds from `from_ns` to `to_ns` as schbench counts them: the difference of two clock
/// readings each cut to whole µs (gettimeofday's), not the time between them cut. A wakeup of
/// 0.4 µs is 1 µs four times in ten, as a µs boundary falls within it, and 0 (not kept)
/// otherwise; cutting the difference dropped them all, about 8% of a saturating run's
/// wakeups on this project's VM.
fn whole_us_between(from_ns: u64, to_ns: u64) -> u64 {
    (to_ns / 1000).saturating_sub(from_ns / 1000)
}

fn nap(us: u64) {
    if us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// Takes the spinlock of the CPU this thread runs on, spinning until it is free; if the thread
/// moved to another CPU meanwhile, lets go and takes that one's instead.
fn lock_this_cpu(locks: &[CpuLock]) -> &CpuLock {
    loop {
        let cpu = current_cpu() % locks.len();
        let lock = &locks[cpu];
        while lock
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        if current_cpu() % locks.len() == cpu {
            return lock;
        }
        lock.0.store(false, Ordering::Release);
    }
}

fn current_cpu() -> usize {
    // SAFETY: no arguments; returns -1 only where the call is unsupported.
    usize::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(0)
}

/// One naive multiplication of the first two `side`² matrices of `data` into the third: for
/// each element, the dot product of a row and a column, the running sum stored at every step.
/// That is how gcc -O2 compiles schbench's loop (its three matrices are one buffer, so the sum
/// cannot stay out of memory), and how long a step takes sets the request latency. On x86-64
/// the whole function is written out in assembly, the instructions gcc emits for it and where
/// gcc puts them: Rust's compiler unrolls the same loop and ran it about 1.4 times as fast as
/// schbench's, the same inner loop elsewhere in memory about 1.3 times, and the same inner
/// loop at the same place, entered from Rust's outer loops, 1.06 times (docs/wakeup.md).
///
/// # Safety
/// `data` points to 3·`side`² elements, all readable and the last third writable. Only the
/// last third is written (`--split`'s shared matrices: by several threads at once).
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub(super) unsafe fn multiply(data: *mut u64, side: usize) {
    std::arch::asm!(
        "jmp 2f",
        // The function starts 0x850 bytes into a 4 KiB page, its row loop at 0x890, its column
        // loop at 0x8a0 and the dot product's at 0x8b0, where gcc -O2 puts schbench's in a
        // build from its Makefile (docs/wakeup.md). The padding is never run.
        ".p2align 12",
        ".skip 0x850, 0xcc",
        "2:",
        "push r15",
        "push r14",
        "mov r14, rsi",
        "imul r14, rsi",
        "push r13",
        "push r12",
        "push rbp",
        "mov r15, r14",
        "push rbx",
        // r15: the third matrix's offset in bytes (2·side²·8).
        "shl r15, 4",
        "test rsi, rsi",
        "je 7f",
        "mov rbx, r14",
        // r11: row i of the first matrix; r13: side; r12: i; r8: a row's bytes.
        "mov r11, rdi",
        "mov r13, rsi",
        "xor r12d, r12d",
        "lea r8, [8*rsi]",
        "neg rbx",
        // rbp: where the column counter r10 (side² + j) ends; r9: the end of row i.
        "lea rbp, [r14 + rsi]",
        "lea r9, [rdi + r8]",
        // rbx: from the product's element (i, j) back to column j of the second matrix.
        "shl rbx, 3",
        ".p2align 4",
        "3:",
        "lea rdi, [r15 + r11]",
        "mov r10, r14",
        ".p2align 4",
        "4:",
        "mov qword ptr [rdi], 0",
        "lea rsi, [rdi + rbx]",
        "mov rax, r11",
        "xor ecx, ecx",
        "5:",
        "mov rdx, qword ptr [rax]",
        "imul rdx, qword ptr [rsi]",
        "add rax, 8",
        "add rsi, r8",
        "add rcx, rdx",
        "mov qword ptr [rdi], rcx",
        "cmp rax, r9",
        "jne 5b",
        "add r10, 1",
        "add rdi, 8",
        "cmp r10, rbp",
        "jne 4b",
        "add r12, 1",
        "add r11, r8",
        "add r9, r8",
        "sub rbx, r8",
        "cmp r13, r12",
        "jne 3b",
        "7:",
        "pop rbx",
        "pop rbp",
        "pop r12",
        "pop r13",
        "pop r14",
        "pop r15",
        inout("rdi") data => _,
        inout("rsi") side => _,
        out("rax") _,
        out("rcx") _,
        out("rdx") _,
        out("r8") _,
        out("r9") _,
        out("r10") _,
        out("r11") _,
    );
}

/// The same in Rust elsewhere (its speed against schbench's not measured there): the sum
/// stored at every step, as gcc does.
///
/// # Safety
/// As the x86-64 version's.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn multiply(data: *mut u64, side: usize) {
    let n = side * side;
    let (a, b, c) = (data.cast_const(), data.add(n).cast_const(), data.add(2 * n));
    for i in 0..side {
        for j in 0..side {
            let out = c.add(i * side + j);
            let (mut x, mut y) = (a.add(i * side), b.add(j));
            let mut sum = 0u64;
            std::ptr::write_volatile(out, 0);
            for _ in 0..side {
                sum = sum.wrapping_add((*x).wrapping_mul(*y));
                std::ptr::write_volatile(out, sum);
                x = x.add(1);
                y = y.add(side);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WakeupSettings {
        WakeupSettings {
            message_threads: 1,
            workers: 2,
            runtime_s: 2,
            warmup_s: 0,
            zero_s: 0,
            footprint_kb: 64,
            operations: 1,
            split_pct: None,
            sleep_us: 100,
            locking: true,
            calibrate: false,
            rps: 0,
            auto_rps_pct: 0,
            pipe_bytes: 0,
            message_cpus: None,
            worker_cpus: None,
            explain: None,
        }
    }

    #[test]
    fn the_math_is_a_matrix_product() {
        // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: A·B = [[19, 22], [43, 50]].
        let mut d = vec![1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0];
        // SAFETY: 3·2² elements.
        unsafe { multiply(d.as_mut_ptr(), 2) };
        assert_eq!(&d[8..], &[19, 22, 43, 50]);
    }

    #[test]
    fn a_latency_is_the_difference_of_whole_microsecond_readings() {
        // 2 ns across a µs boundary is 1 µs; 998 ns within one is none; 1.9 µs is 2 µs.
        assert_eq!(whole_us_between(1_999, 2_001), 1);
        assert_eq!(whole_us_between(2_001, 2_999), 0);
        assert_eq!(whole_us_between(1_500, 3_400), 2);
        assert_eq!(whole_us_between(5_000, 4_000), 0);
    }

    #[test]
    fn the_matrix_side_fills_the_footprint() {
        // 256 KB: three 104 x 104 matrices of 8 bytes (259,584 bytes), as schbench's.
        let s = WakeupSettings {
            footprint_kb: 256,
            ..spec()
        };
        assert_eq!(s.matrix_side(), 104);
    }

    #[test]
    fn the_rate_steers_towards_the_target() {
        // Half as busy as asked: the rate doubles; far over: it drops to 0.3 of itself; near:
        // it moves a little and counts from then on.
        assert_eq!(steer_rate(100, 50, 25.0), (200, false));
        assert_eq!(steer_rate(100, 50, 500.0), (30, false));
        assert_eq!(steer_rate(100, 50, 49.0), (101, true));
        assert_eq!(steer_rate(100, 50, 50.0), (100, true));
    }
}
