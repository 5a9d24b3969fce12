//! One run of reflex's workload: `c` threads in `a` active sets, one token per set passed round
//! the set through pipes, so one thread per set is runnable (two, briefly, during a hand-off).
//!
//! Thread j of a set reads the token from its own pipe and writes it into its successor's. A
//! round is: compute for about `r` µs (the calibrated burn loop, ±10% per round so threads do
//! not fall into lock-step), then with probability (100 − w)/100 `sched_yield()` and keep the
//! token, otherwise hand the token on and block reading its own pipe until it comes round again.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use anyhow::{anyhow, Context, Result};

use crate::calibration::{BurnLoop, Burner};
use crate::model::account::Account;
use crate::model::sched::SchedRun;
use crate::platform::account::{Probe, Task};
use crate::platform::clock::monotonic_ns;
use crate::platform::rusage::Usage;
use crate::platform::sched;
use crate::platform::signals::sleep_until_unless;
use crate::suites::reference;

/// The workload of one run.
#[derive(Debug, Clone, Copy)]
pub struct RingSpec {
    pub threads: usize,
    pub active_sets: usize,
    /// 0..=100: the chance, in %, that a round hands the token on instead of yielding.
    pub handoff_weight: u32,
    pub compute_us: u64,
    pub duration_ns: u64,
    pub loops_per_ms: u64,
    /// Pin each set's threads to one CPU, sets spread over the allowed CPUs.
    pub pin: bool,
}

struct Member {
    index: usize,
    /// Where the thread writes its thread id, for the run's account.
    tid: Arc<AtomicU32>,
    own: Arc<OwnedFd>,
    successor: Arc<OwnedFd>,
    holders: Arc<AtomicU32>,
    max_holders: Arc<AtomicU32>,
    cpu: Option<usize>,
}

#[derive(Default)]
struct Tally {
    rounds: u64,
    yields: u64,
    handoffs: u64,
}

/// The thread limit and file descriptors a run of `threads` threads needs.
pub fn fds_needed(threads: usize) -> u64 {
    2 * threads as u64 + 64
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array; on success both are new descriptors we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("creating a pipe");
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[inline]
fn read_token(fd: &OwnedFd) -> bool {
    let mut b = 0u8;
    loop {
        // SAFETY: valid descriptor and a one-byte buffer.
        let n = unsafe { libc::read(fd.as_raw_fd(), (&mut b as *mut u8).cast(), 1) };
        if n == 1 {
            return true;
        }
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return false;
    }
}

#[inline]
fn write_token(fd: &OwnedFd) {
    let b = 1u8;
    loop {
        // SAFETY: valid descriptor and a one-byte buffer.
        let n = unsafe { libc::write(fd.as_raw_fd(), (&b as *const u8).cast(), 1) };
        if n == 1 || !(n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR))
        {
            return;
        }
    }
}

/// xorshift64*: a fast per-thread generator for the yield decision and compute jitter.
#[inline]
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Holds every thread until all have started, then lets them go at once. Unlike a barrier it
/// can always be opened, also when starting the threads failed half-way.
struct StartGate {
    gate: RwLock<()>,
    ready: AtomicUsize,
}

fn member_loop(
    m: Member,
    spec: RingSpec,
    burner: Burner,
    stop: Arc<AtomicBool>,
    start: Arc<StartGate>,
) -> Tally {
    sched::name_current_thread("hb-reflex");
    if let Some(cpu) = m.cpu {
        let _ = sched::pin_to_cpu(cpu);
    }
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ ((m.index as u64 + 1) * 0x1000_0000_01b3);
    let base_loops = burner.loops_per_ms.saturating_mul(spec.compute_us) / 1000;
    let slice_loops = burner.loops_per_ms.max(1);
    // The chance of a hand-off, scaled to the generator's range.
    let handoff_below = (u64::MAX / 100) * u64::from(spec.handoff_weight);
    let mut tally = Tally::default();
    m.tid.store(sched::current_tid(), Ordering::SeqCst);
    start.ready.fetch_add(1, Ordering::SeqCst);
    drop(start.gate.read());
    'rounds: while read_token(&m.own) {
        // The bytes written to wake every thread at the stop are not tokens.
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let holders = m.holders.fetch_add(1, Ordering::AcqRel) + 1;
        m.max_holders.fetch_max(holders, Ordering::Relaxed);
        loop {
            if stop.load(Ordering::Relaxed) {
                m.holders.fetch_sub(1, Ordering::AcqRel);
                break 'rounds;
            }
            if base_loops > 0 {
                // ±10% of the compute time, so the threads do not fall into a fixed pattern.
                let jitter = next_random(&mut rng) % (base_loops / 5 + 1);
                let mut left = base_loops - base_loops / 10 + jitter;
                // In slices of a millisecond at most (a round of `-r 1000000` is a second),
                // looking at the stop flag between them.
                while left > 0 {
                    let n = left.min(slice_loops);
                    crate::calibration::burn_loops(n);
                    left -= n;
                    if left > 0 && stop.load(Ordering::Relaxed) {
                        m.holders.fetch_sub(1, Ordering::AcqRel);
                        break 'rounds;
                    }
                }
            }
            tally.rounds += 1;
            let yield_now = match spec.handoff_weight {
                0 => true,
                100 => false,
                _ => next_random(&mut rng) >= handoff_below,
            };
            if yield_now {
                tally.yields += 1;
                // SAFETY: no preconditions.
                unsafe { libc::sched_yield() };
                continue;
            }
            tally.handoffs += 1;
            // Released just before the write: counting after it would also count a writer that
            // the woken successor preempted before it could update the count.
            m.holders.fetch_sub(1, Ordering::AcqRel);
            write_token(&m.successor);
            continue 'rounds;
        }
    }
    tally
}

/// Runs the workload once for `spec.duration_ns`, or until `stop` is set (then None). With
/// `probe`, the run carries the host's account of its threads from the start to the stop.
pub fn run_once(
    spec: RingSpec,
    stop: &AtomicBool,
    probe: Option<&Probe>,
) -> Result<Option<SchedRun>> {
    let c = spec.threads;
    let a = spec.active_sets;
    if c == 0 || a == 0 || !c.is_multiple_of(a) {
        return Err(anyhow!("{c} threads cannot form {a} equal active sets"));
    }
    let per_set = c / a;
    let (reads, writes) = pipes(c)?;
    let cpus = sched::allowed_cpus();
    let run_stop = Arc::new(AtomicBool::new(false));
    let start_gate = Arc::new(StartGate {
        gate: RwLock::new(()),
        ready: AtomicUsize::new(0),
    });
    let closed = start_gate
        .gate
        .write()
        .map_err(|_| anyhow!("start gate poisoned"))?;
    let max_holders = Arc::new(AtomicU32::new(0));
    let mut handles = Vec::with_capacity(c);
    let tids: Vec<Arc<AtomicU32>> = (0..c).map(|_| Arc::new(AtomicU32::new(0))).collect();
    for set in 0..a {
        let holders = Arc::new(AtomicU32::new(0));
        for j in 0..per_set {
            let i = set * per_set + j;
            let succ = set * per_set + (j + 1) % per_set;
            let member = Member {
                index: i,
                tid: Arc::clone(&tids[i]),
                own: Arc::clone(&reads[i]),
                successor: Arc::clone(&writes[succ]),
                holders: Arc::clone(&holders),
                max_holders: Arc::clone(&max_holders),
                cpu: spec.pin.then(|| cpus[set % cpus.len()]),
            };
            match spawn(member, spec, &run_stop, &start_gate) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // Let the threads already started go, wake them on their pipes, and join them.
                    run_stop.store(true, Ordering::SeqCst);
                    drop(closed);
                    let _ = stop_all(&writes, handles);
                    return Err(anyhow!(
                        "starting thread {} of {c}: {e} (is the thread limit too low?)",
                        i + 1
                    ));
                }
            }
        }
        // The set's first member holds the token at the start.
        write_token(&writes[set * per_set]);
    }
    while start_gate.ready.load(Ordering::SeqCst) < c {
        std::thread::yield_now();
    }
    // Every thread has written its id and waits at the gate: read their counters now.
    let pid = std::process::id();
    let tasks: Vec<Task> = tids
        .iter()
        .map(|t| Task {
            pid,
            tid: t.load(Ordering::SeqCst),
        })
        .collect();
    // The host's speed on the run's CPUs, read while the threads wait at the gate and after
    // they have ended.
    let reference_cpus = reference_cpus(&spec, &cpus);
    let before = probe.and_then(|_| reference::read(&reference_cpus));
    let opened = probe.map(|p| p.start(&tasks));
    let usage = Usage::process();
    drop(closed);
    let start = monotonic_ns();
    let interrupted = !sleep_until_unless(start + spec.duration_ns, stop);
    run_stop.store(true, Ordering::SeqCst);
    let wall_ns = monotonic_ns() - start;
    let used = Usage::process().since(&usage);
    let account = probe
        .zip(opened)
        .map(|(p, o)| Account::of(p.end(o, &tasks)));
    let tallies = stop_all(&writes, handles)?;
    if interrupted {
        return Ok(None);
    }
    let account = account.map(|a| Account {
        reference_ns: reference::around(before, reference::read(&reference_cpus)),
        ..a
    });
    Ok(Some(sched_run(
        wall_ns,
        &tallies,
        &used,
        max_holders.load(Ordering::SeqCst),
        account,
    )))
}

/// Starts a member's thread (named, with a small stack), burning with the chain loop.
fn spawn(
    member: Member,
    spec: RingSpec,
    stop: &Arc<AtomicBool>,
    gate: &Arc<StartGate>,
) -> std::io::Result<std::thread::JoinHandle<Tally>> {
    let burner = Burner {
        loops_per_ms: spec.loops_per_ms,
        burn_loop: BurnLoop::Chain,
    };
    let (stop, gate) = (Arc::clone(stop), Arc::clone(gate));
    std::thread::Builder::new()
        .name("hb-reflex".into())
        .stack_size(64 * 1024)
        .spawn(move || member_loop(member, spec, burner, stop, gate))
}

/// Wakes every thread blocked on its pipe so it sees the stop, and joins them: their tallies.
fn stop_all(writes: &Ends, handles: Vec<std::thread::JoinHandle<Tally>>) -> Result<Vec<Tally>> {
    for w in writes {
        write_token(w);
    }
    // Every thread joined before a panic is said.
    let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
    joined
        .into_iter()
        .map(|j| j.map_err(|_| anyhow!("a reflex thread panicked")))
        .collect()
}

/// A pipe a thread: the read ends and the write ends, each shared with the thread that uses it.
type Ends = Vec<Arc<OwnedFd>>;

fn pipes(c: usize) -> Result<(Ends, Ends)> {
    let mut reads = Vec::with_capacity(c);
    let mut writes = Vec::with_capacity(c);
    for _ in 0..c {
        let (r, w) = pipe()?;
        reads.push(Arc::new(r));
        writes.push(Arc::new(w));
    }
    Ok((reads, writes))
}

/// The CPUs whose speed is read around the run: those the sets were pinned to, or all.
fn reference_cpus(spec: &RingSpec, cpus: &[usize]) -> Vec<usize> {
    if !spec.pin {
        return cpus.to_vec();
    }
    let mut used: Vec<usize> = (0..spec.active_sets)
        .map(|set| cpus[set % cpus.len()])
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// The run from its threads' tallies: the cost of a round over the wall time.
fn sched_run(
    wall_ns: u64,
    tallies: &[Tally],
    used: &Usage,
    max_token_holders: u32,
    account: Option<Account>,
) -> SchedRun {
    let rounds_per_thread: Vec<u64> = tallies.iter().map(|t| t.rounds).collect();
    let total_rounds: u64 = rounds_per_thread.iter().sum();
    SchedRun {
        wall_ns,
        total_rounds,
        us_per_round: if total_rounds == 0 {
            f64::INFINITY
        } else {
            wall_ns as f64 / 1e3 / total_rounds as f64
        },
        rounds_per_thread,
        yields: tallies.iter().map(|t| t.yields).sum(),
        handoffs: tallies.iter().map(|t| t.handoffs).sum(),
        voluntary_csw: used.voluntary_csw,
        involuntary_csw: used.involuntary_csw,
        max_token_holders,
        account: account.map(Box::new),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(c: usize, a: usize, w: u32) -> RingSpec {
        RingSpec {
            threads: c,
            active_sets: a,
            handoff_weight: w,
            compute_us: 5,
            duration_ns: 150_000_000,
            loops_per_ms: 100_000,
            pin: false,
        }
    }

    #[test]
    fn handoffs_only_keep_at_most_two_holders_per_set() {
        let r = run_once(spec(8, 2, 100), &AtomicBool::new(false), None)
            .unwrap()
            .unwrap();
        assert_eq!(r.yields, 0);
        assert!(r.handoffs > 0);
        // One holder at a time means at most two holding or passing (during a hand-off).
        assert_eq!(r.max_token_holders, 1);
        assert!(
            r.rounds_per_thread.iter().all(|&n| n > 0),
            "{:?}",
            r.rounds_per_thread
        );
        assert_eq!(r.total_rounds, r.rounds_per_thread.iter().sum::<u64>());
        assert!(r.us_per_round > 0.0);
    }

    #[test]
    fn yields_only_never_hand_off() {
        let r = run_once(spec(4, 2, 0), &AtomicBool::new(false), None)
            .unwrap()
            .unwrap();
        assert_eq!(r.handoffs, 0);
        assert!(r.yields > 0);
        // Only the first member of each set ever held a token.
        let holders: Vec<bool> = r.rounds_per_thread.iter().map(|&n| n > 0).collect();
        assert_eq!(holders, vec![true, false, true, false]);
    }

    #[test]
    fn a_stop_abandons_the_run() {
        assert!(run_once(spec(2, 1, 100), &AtomicBool::new(true), None)
            .unwrap()
            .is_none());
    }

    #[test]
    fn uneven_sets_are_refused() {
        assert!(run_once(spec(6, 4, 50), &AtomicBool::new(false), None).is_err());
    }
}
