//! `hostbench noise` driven as a user would: the real binary, real runs, a real SQLite store.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::{noise, Sandbox};
use serde_json::Value;

#[test]
fn json_result_has_every_run_and_ordered_percentiles() {
    let _alone = alone();
    let sb = Sandbox::new();
    let r = sb.json(&["noise", "20", "10"]);
    assert_eq!(r["schema_version"], 2);
    assert_eq!(r["incomplete"], false);
    assert!(!r["environment"]["kernel_release"]
        .as_str()
        .unwrap()
        .is_empty());
    assert!(r["environment"]["cpus_online"].as_u64().unwrap() >= 1);
    let n = noise(&r);
    assert_eq!(n["settings"]["target_ms"], 20);
    assert_eq!(n["runs"].as_array().unwrap().len(), 10);
    let s = &n["summary"];
    assert_eq!(s["runs"], 10);
    let ps = s["percentiles"].as_array().unwrap();
    let which: Vec<f64> = ps
        .iter()
        .map(|p| p["percentile"].as_f64().unwrap())
        .collect();
    assert_eq!(which, vec![50.0, 90.0, 100.0]);
    let times: Vec<u64> = ps.iter().map(|p| p["time_ns"].as_u64().unwrap()).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "percentiles out of order: {times:?}"
    );
    let fastest = s["fastest_ns"].as_u64().unwrap();
    assert!(fastest <= times[0] && times[2] == s["slowest_ns"].as_u64().unwrap());
    let bins: u64 = s["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(bins, 10);
}

#[test]
fn a_longer_target_gives_longer_runs() {
    let _alone = alone();
    let sb = Sandbox::new();
    let median = |ms: &str| {
        let r = sb.json(&["noise", ms, "7"]);
        noise(&r)["summary"]["median_ns"].as_f64().unwrap() / 1e6
    };
    let short = median("5");
    let long = median("80");
    // Sanity, not precision: the host is shared and noisy. Each command calibrates anew, and
    // this VM's CPU has run one job at 3.3 to 13 ms within a minute (a 20 ms target then ran
    // in 8.8 ms), so the targets are 16 times apart and the bounds four times wide.
    assert!(
        (1.25..20.0).contains(&short),
        "5 ms target: median {short} ms"
    );
    assert!(
        long > 2.0 * short,
        "80 ms target: median {long} ms vs {short} ms"
    );
}

#[test]
fn memory_mode_reads_a_working_set() {
    let _alone = alone();
    let sb = Sandbox::new();
    let r = sb.json(&["noise", "-m", "64", "20", "5"]);
    let n = noise(&r);
    assert_eq!(n["settings"]["mode"]["kind"], "memory");
    assert_eq!(n["settings"]["mode"]["working_set_mb"], 64);
    assert_eq!(n["runs"].as_array().unwrap().len(), 5);
    let cal = &n["calibration"];
    assert_eq!(cal["p1bench"]["runs_ns"].as_array().unwrap().len(), 5);
    assert!(cal["burn"].is_null());
    // 64 MB is a million cache lines: a 20 ms run at any plausible speed wraps at least once.
    assert!(cal["iterations"].as_u64().unwrap() > 100_000);
    let median = n["summary"]["median_ns"].as_f64().unwrap() / 1e6;
    assert!((10.0..60.0).contains(&median), "median {median} ms");
}

#[test]
fn calibration_follows_p1bench_and_l_fixes_the_count() {
    let _alone = alone();
    let sb = Sandbox::new();
    // p1bench's find_count: the count of a 100 ms test run, timed five times, scaled so that
    // the fastest of the five takes the target.
    let r = sb.json(&["noise", "20", "5"]);
    let cal = &noise(&r)["calibration"];
    let p1 = &cal["p1bench"];
    assert_eq!(p1["test_ms"], 100.0);
    let runs: Vec<u64> = p1["runs_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(runs.len(), 5);
    let fastest = *runs.iter().min().unwrap();
    let test_count = p1["test_count"].as_u64().unwrap();
    let want = test_count as u128 * 20_000_000 / fastest as u128;
    assert_eq!(u128::from(cal["iterations"].as_u64().unwrap()), want);
    assert!(cal["burn"].is_null() && cal["target"].is_null());
    // The test run lasted about 100 ms of the spin loop, and a run of its count about as long
    // (within four times: this VM's CPU has changed speed that much within a minute, and a
    // count made for 100 ms once ran in 46.7 ms).
    assert!(
        (25_000_000..400_000_000).contains(&fastest),
        "{test_count} iterations took {fastest} ns"
    );

    // -l: that many iterations a millisecond, not calibrated.
    let r = sb.json(&["noise", "-l", "5000", "10", "2"]);
    let cal = &noise(&r)["calibration"];
    assert_eq!(cal["iterations"], 5000 * 10);
    assert!(cal["p1bench"].is_null() && cal["target"].is_null());
    // p1bench has no -b: nothing is cached for the noise suite.
    sb.cmd().args(["noise", "-b", "10", "2"]).assert().code(2);
    assert!(!sb.cache_dir().join("calibration.json").exists());
}

#[test]
fn text_report_is_p1bench_shaped() {
    let _alone = alone();
    let sb = Sandbox::new();
    let out = sb.cmd().args(["noise", "10", "12"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("Calibrating for 10 ms... (target iteration count: "),
        "{text}"
    );
    assert!(text.contains("Perturbation percent by count for 10 ms runs:"));
    assert!(text.contains("  Slower%   Count  Count% Histogram"));
    assert!(text.contains("     0.0%:"));
    assert!(text.contains("Percentiles: 50th: "));
    assert!(text.contains("Fastest rate: "));
    assert!(text.contains("Verdict: "));
    assert!(text.contains("Stored as result 1 in"));

    let quiet = sb.cmd().args(["noise", "-q", "10", "3"]).output().unwrap();
    let text = String::from_utf8(quiet.stdout).unwrap();
    assert!(!text.contains("Calibrating"), "{text}");
    assert!(text.contains("Percentiles:"));
    // -q is one rule for every measuring command (sched's data lines need it): the report
    // alone, without the noise check's and the store's lines.
    assert!(
        !text.contains("Stored as") && !text.contains("Noise check"),
        "{text}"
    );
}

#[test]
fn verbose_prints_a_line_per_run() {
    let _alone = alone();
    let sb = Sandbox::new();
    let out = sb.cmd().args(["noise", "-v", "10", "4"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("run time(ms) usr_time(ms) sys_time(ms) involuntary_csw diff%"));
    let run_lines = text
        .lines()
        .filter(|l| {
            l.split(' ').count() == 6 && l.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .count();
    assert_eq!(run_lines, 4, "{text}");
}

/// Starts a long noise run, waits until it is in its runs, sends `signal`, and checks that it
/// stops, reports and stores what it measured, marked incomplete.
fn stop_mid_run(signal: i32, expected_code: i32) {
    let _alone = alone();
    let sb = Sandbox::new();
    let mut child = sb
        .std_cmd()
        .args(["noise", "-v", "50", "400"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Wait for the second run's line: the runs have started.
    for line in lines.by_ref() {
        if line.unwrap().starts_with("2 ") {
            break;
        }
    }
    // SAFETY: plain kill(2) to our own child.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(expected_code));
    let text = rest.join("\n");
    assert!(text.contains("Stopped after "), "{text}");
    assert!(text.contains("Percentiles:"));
    // The process is gone (reaped) and nothing else was started.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());

    let list = sb.cmd().args(["results", "list"]).output().unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    assert!(list.contains("[incomplete]"), "{list}");
    let r: Value = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
    let runs = noise(&r)["runs"].as_array().unwrap().len();
    assert!((2..400).contains(&runs), "{runs} runs stored");
}

#[test]
fn sigint_stores_an_incomplete_result() {
    stop_mid_run(libc::SIGINT, 130);
}

#[test]
fn sigterm_stores_an_incomplete_result() {
    stop_mid_run(libc::SIGTERM, 143);
}

/// Held by every test of this file while it runs: the tests that plant a load on CPU 0 (a
/// real-time thread, spinners, a packet flood) would slow another test's runs there, and two
/// tests measuring at once would perturb each other's quiet runs.
fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A thread on CPU 0 that, until stopped, spins `busy` then sleeps `idle`: it hits some of the
/// noise runs held there and misses others, as a perturbed host does.
struct Jitter {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Jitter {
    /// A thread of the normal class: a run it hits shares CPU 0 with it while it spins.
    fn start(busy: std::time::Duration, idle: std::time::Duration) -> Jitter {
        Jitter::spawn(busy, idle, false)
    }

    /// A real-time (SCHED_FIFO) thread, as an interrupt storm or a real-time task would be: a
    /// run it hits stops for the whole of `busy`. A run's delay is then `busy` on every host,
    /// however fast its CPU is at the time (this VM's ran one job at 3.3 to 13 ms within a
    /// minute, more than a shared slice's delay).
    fn preempting(busy: std::time::Duration, idle: std::time::Duration) -> Jitter {
        Jitter::spawn(busy, idle, true)
    }

    fn spawn(busy: std::time::Duration, idle: std::time::Duration, fifo: bool) -> Jitter {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        // The thread says when it is on CPU 0 and in its class: a run started before then
        // would meet it late or not at all.
        let (ready, on_cpu0) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            common::pin_to_cpu0();
            if fifo {
                let param = libc::sched_param { sched_priority: 1 };
                // SAFETY: sets this thread's own policy from a valid sched_param.
                let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
                assert_eq!(rc, 0, "SCHED_FIFO (run the tests as root)");
            }
            let _ = ready.send(());
            while !flag.load(Ordering::Relaxed) {
                let start = std::time::Instant::now();
                while start.elapsed() < busy && !flag.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
                std::thread::sleep(idle);
            }
        });
        let _ = on_cpu0.recv();
        Jitter {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Jitter {
    /// A failed assertion leaves no thread spinning on CPU 0 under the other tests.
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `repeat` runs of `jobs` fixed jobs of `ms` on CPU 0 (a million spin loops a millisecond),
/// stored as one group.
fn noise_group(sb: &Sandbox, repeat: &str, ms: &str, jobs: &str) {
    let mut cmd = sb.std_cmd();
    cmd.args([
        "noise",
        "-l",
        common::loops_per_ms(),
        "--no-noise-check",
        "-q",
    ]);
    cmd.args(["--repeat", repeat, ms, jobs]);
    common::on_cpu0(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// p1bench's output is its percentiles: a host that perturbs some runs and not others is found
/// by `compare` on them (worse), not only on the mean run time.
#[test]
fn a_perturbed_host_is_found_worse_by_its_percentiles() {
    let _alone = alone();
    let sb = Sandbox::new();
    noise_group(&sb, "5", "5", "30");
    // CPU 0 taken for 60 ms of every 80: about one run in four stops for the 60 ms, so the
    // 90th percentile is a run that took 60 ms more than the fastest (13 times a 5 ms job).
    // This VM's own noise has left the 90th percentile 17-283% slower; a thread of the normal
    // class, sharing the CPU in 10 ms slices, made it 225-245% slower, within that.
    let jitter = Jitter::preempting(
        std::time::Duration::from_millis(60),
        std::time::Duration::from_millis(20),
    );
    noise_group(&sb, "5", "5", "30");
    jitter.stop();
    let out = sb
        .cmd()
        .args(["compare", "g1", "g6", "--format", "json"])
        .output()
        .unwrap();
    let list = sb.cmd().args(["results", "list"]).output().unwrap();
    assert!(
        out.status.success(),
        "{out:?}\n{}",
        String::from_utf8_lossy(&list.stdout)
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |suffix: &str| {
        c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"].as_str().unwrap().ends_with(suffix))
            .unwrap_or_else(|| panic!("no {suffix} row: {c}"))
            .clone()
    };
    // The 90th percentile is called worse; the maximum, one run of thirty, moves more from run
    // to run (the other tests of this file share the CPUs): it is at least not called better.
    let max = row("/max slower");
    assert!(
        max["verdict"] != "better" && max["b"].as_f64() > max["a"].as_f64(),
        "{max}"
    );
    let p90 = row("/p90 slower");
    assert_eq!(p90["verdict"], "worse", "{p90}");
    assert_eq!(
        (p90["unit"].as_str(), p90["samples_a"].as_u64()),
        (Some("%"), Some(5))
    );
}

/// Each noise run carries the host's account (its CPU, the run's waits, switches and faults),
/// and the report names what set the slowest runs apart: here a real-time thread that takes
/// CPU 0 for 30 ms of every 55 makes the runs it hits wait on the run queue.
#[test]
fn each_run_has_the_hosts_account_and_the_slowest_runs_are_explained() {
    let _alone = alone();
    let sb = Sandbox::new();
    let run = |jitter: bool, account: bool| {
        let mut cmd = sb.std_cmd();
        cmd.args([
            "noise",
            "-l",
            common::loops_per_ms(),
            "--no-noise-check",
            "5",
            "40",
        ]);
        cmd.arg("--json");
        if !account {
            cmd.env("HOSTBENCH_NO_ACCOUNT", "1");
        }
        common::on_cpu0(&mut cmd);
        // The run under way when it starts waits the 30 ms; the runs in its 25 ms pauses do
        // not wait: on this VM, where one 5 ms job took 3.3-13 ms within a minute, one run in
        // eight to one in three is hit. (Beside a thread of the normal class a run shares the
        // CPU instead, and then every run had a few milliseconds' wait.)
        let j = jitter.then(|| {
            Jitter::preempting(
                std::time::Duration::from_millis(30),
                std::time::Duration::from_millis(25),
            )
        });
        let out = cmd.output().unwrap();
        if let Some(j) = j {
            j.stop();
        }
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let r = run(true, true);
    let runs = noise(&r)["runs"].as_array().unwrap().clone();
    for a in runs.iter().map(|r| &r["account"]) {
        // Held to CPU 0: that CPU's time is the one counted.
        assert_eq!(a["cpus"], serde_json::json!([0]), "{a}");
        assert!(a["wall_ns"].as_u64().unwrap() > 0, "{a}");
    }
    // The kernel brings a running task's CPU time up to date at its ticks: over the 40 runs
    // it is most of their time.
    let total = |field: &str| -> u64 {
        runs.iter()
            .map(|r| r["account"][field].as_u64().unwrap())
            .sum()
    };
    assert!(total("run_ns") > total("wall_ns") / 3, "{runs:?}");
    // The slowest runs waited on the run queue; the fastest hardly did. (Medians: a reading
    // preempted in its few microseconds between the counters and the clock brings a wait into
    // a run that did not have one. The slowest tenth, as the report's: it is all hit runs.)
    let mut by_time = runs.clone();
    by_time.sort_by_key(|r| r["time_ns"].as_u64().unwrap());
    let median_wait = |rs: &[Value]| {
        let mut w: Vec<u64> = rs
            .iter()
            .map(|r| r["account"]["wait_ns"].as_u64().unwrap())
            .collect();
        w.sort_unstable();
        w[w.len() / 2]
    };
    let (fastest, slowest) = (median_wait(&by_time[..20]), median_wait(&by_time[36..]));
    assert!(
        slowest > 1_000_000 && slowest > 3 * fastest,
        "slowest tenth's wait {slowest} ns, fastest half's {fastest} ns: {runs:?}"
    );
    let id = r["id"].as_i64().map_or("1".to_string(), |i| i.to_string());
    let shown = sb.cmd().args(["results", "show", &id]).output().unwrap();
    let shown = String::from_utf8(shown.stdout).unwrap();
    let line = shown
        .lines()
        .find(|l| l.contains("slowest runs, by the host's account: "))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(line.contains("run-queue wait "), "{line}");
    // The hardware counters: counted where the host has a CPU PMU, else one line says so.
    let pmu = ["cpu", "cpu_core"].iter().any(|p| {
        std::path::Path::new(&format!("/sys/bus/event_source/devices/{p}/type")).is_file()
    });
    let first = &runs[0]["account"];
    let no_pmu_line = shown.contains("No CPU PMU on this host");
    if pmu {
        assert!(first["hardware"]["cycles"].as_u64().unwrap() > 0, "{first}");
        assert!(!no_pmu_line, "{shown}");
    } else {
        assert_eq!(first["no_pmu"], true, "{first}");
        assert!(
            first.get("hardware").is_none() && no_pmu_line,
            "{first} {shown}"
        );
    }
    // The CSV export carries the account's medians when asked: the run time's wait is there.
    let rows = sb.account_rows(&id);
    let run_time = rows
        .iter()
        .find(|r| r["key"].ends_with("/run time"))
        .unwrap();
    // A number (the median run waited little: most runs were not hit), over all 40 runs.
    let wait = &run_time["account_run_queue_wait_ms_per_s"];
    assert!(wait.parse::<f64>().is_ok(), "{run_time:?}");
    assert_eq!(run_time["account_stretches"], "40", "{run_time:?}");
    assert_eq!(
        run_time["account_ipc"].parse::<f64>().is_ok(),
        pmu,
        "{run_time:?}"
    );
    // Without accounts (HOSTBENCH_NO_ACCOUNT), the runs hold none and the report says nothing.
    let bare = run(false, false);
    assert!(noise(&bare)["runs"][0].get("account").is_none(), "{bare}");
}

/// `compare` names the cause beside a figure that changed: a run with six threads spinning on
/// CPU 0 (every run takes about seven times as long, alike: more than the noise floor, which
/// the noise suite takes from its own spread, and this VM's has reached 283%) is worse than
/// one without, and the host's account says the runs waited on the run queue.
#[test]
fn compare_names_what_changed_with_a_worse_run_time() {
    let _alone = alone();
    let sb = Sandbox::new();
    let run = |spinners: bool| {
        let mut cmd = sb.std_cmd();
        // Jobs of about 20 ms (this VM's CPU speed swings by up to 2x): several of the
        // scheduler's slices each, so that every run shares the CPU alike (a job shorter than
        // a slice is slowed by a slice or not at all).
        cmd.args([
            "noise",
            "-l",
            common::loops_per_ms(),
            "--no-noise-check",
            "-q",
            "20",
            "10",
        ]);
        common::on_cpu0(&mut cmd);
        let spin = || {
            Jitter::start(
                std::time::Duration::from_secs(3600),
                std::time::Duration::ZERO,
            )
        };
        let j: Vec<Jitter> = if spinners {
            (0..6).map(|_| spin()).collect()
        } else {
            Vec::new()
        };
        // Every run shares CPU 0 with all six from its start: a run that met them late
        // would be as fast as the quiet ones, and its result's own spread (the floor the
        // comparison judges against) as large as the change (seen: 18 → 74 ms, +314%,
        // "within the host's noise").
        std::thread::sleep(std::time::Duration::from_millis(50));
        let out = cmd.output().unwrap();
        for j in j {
            j.stop();
        }
        assert!(out.status.success(), "{out:?}");
    };
    run(false);
    run(true);
    let out = sb
        .cmd()
        .args(["compare", "1", "2", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"].as_str().unwrap().ends_with("/run time"))
        .unwrap()
        .clone();
    assert_eq!(row["verdict"], "worse", "{row}");
    let changed = row["account"]["changed"].as_array().unwrap();
    assert_eq!(changed[0]["item"], "run-queue wait", "{row}");
    assert!(
        changed[0]["b"].as_f64().unwrap() > 10.0 * changed[0]["a"].as_f64().unwrap().max(1.0),
        "{row}"
    );
    // The text says it under the verdict's line.
    let text = sb.cmd().args(["compare", "1", "2"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    // The table's row, not the headline above the table that names the same figure.
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with("noise: run time"));
    assert!(lines.next().is_some(), "{text}");
    let under = lines.next().unwrap();
    assert!(
        under
            .trim_start()
            .starts_with("by the host's account: run-queue wait "),
        "{text}"
    );
}

/// The loopback device's receive steering, put back when dropped (even by a failed assertion).
struct Steered {
    path: &'static str,
    was: String,
}

impl Steered {
    /// Steers the loopback device's received packets to CPU 0.
    fn to_cpu0() -> Steered {
        let path = "/sys/class/net/lo/queues/rx-0/rps_cpus";
        let was = std::fs::read_to_string(path).expect("RPS (run the tests as root)");
        std::fs::write(path, "1").expect("RPS is writable (run the tests as root)");
        Steered { path, was }
    }
}

impl Drop for Steered {
    fn drop(&mut self) {
        let _ = std::fs::write(self.path, self.was.trim());
    }
}

/// Issue #45's softirq cause: a loopback UDP flood from CPU 1 whose receiving half Receive
/// Packet Steering sends to CPU 0, where the noise runs are held and no other task runs. The
/// runs are slower, and the host's account names softirq first (scripts/account-softirq.sh
/// does the same with three runs a side).
#[test]
fn compare_names_a_softirq_load_steered_to_the_measured_cpu() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("one CPU: no other CPU to flood from");
        return;
    }
    let _alone = alone();
    // Three runs a side, alone and flooded in turn, so that a minute in which this VM's CPU
    // is slower falls on both sides. One flooded run's spread alone can be wider than its
    // change (the noise floor: here the flooded runs' 90th percentile reached 747% while their
    // run time rose 300%), and its run time is then "within the host's noise"; across runs the
    // change is tested on each figure, the percentiles too. Even so the VM's own noise hid the
    // change in one try of six, and in a noisy hour (the unflooded runs' p90 at 100%, the
    // flooded ones' floor at 200%) in three tries running, so up to five tries are made; a
    // try that finds a figure worse must name softirq beside it.
    let mut tries = Vec::new();
    let c = loop {
        let c = softirq_pairs(3);
        let found = c["rows"].as_array().unwrap().iter().any(|r| {
            let key = r["key"].as_str().unwrap();
            r["verdict"] == "worse" && (key.ends_with("/run time") || key.ends_with("/p90 slower"))
        });
        if found {
            break c;
        }
        tries.push(c);
        assert!(tries.len() < 5, "no figure worse in five tries: {tries:?}");
    };
    let rows = c["rows"].as_array().unwrap();
    let worse: Vec<&Value> = rows.iter().filter(|r| r["verdict"] == "worse").collect();
    // Beside every figure called worse, softirq first.
    for row in worse {
        let changed = row["account"]["changed"].as_array().unwrap();
        assert_eq!(changed[0]["item"], "softirq", "{row}");
        assert!(changed[0]["b"].as_f64().unwrap() >= 10.0, "{row}");
    }
}

/// `pairs` noise runs (30 jobs of 20 ms on CPU 0) alone and `pairs` during a loopback UDP flood
/// from CPU 1 steered to CPU 0, in turn, in a store of their own; `compare` of the ones alone
/// against the flooded ones, as JSON.
fn softirq_pairs(pairs: usize) -> Value {
    let sb = Sandbox::new();
    for _ in 0..pairs {
        noise_group(&sb, "1", "20", "30");
        let _steered = Steered::to_cpu0();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let flood = std::thread::spawn(move || {
            common::pin_to(1);
            let r = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let to = r.local_addr().unwrap();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                for _ in 0..100 {
                    let _ = s.send_to(&[0u8; 64], to);
                }
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        noise_group(&sb, "1", "20", "30");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        flood.join().unwrap();
    }
    let ids = |first: usize| {
        (0..pairs)
            .map(|i| (first + 2 * i).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let out = sb
        .cmd()
        .args(["compare", &ids(1), &ids(2), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}
