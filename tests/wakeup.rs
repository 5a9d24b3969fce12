//! `hostbench wakeup` (schbench) driven as a user would: real message and worker threads, real
//! futexes, a real SQLite store. Runs last one to three seconds; bounds are loose, this is a
//! shared 2-CPU machine.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Sandbox;
use serde_json::Value;

fn wakeup(r: &Value) -> &Value {
    let suites = r["suites"].as_array().unwrap();
    assert_eq!(suites[0]["suite"], "wakeup");
    &suites[0]
}

fn at(table: &Value, pct: f64) -> u64 {
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pct"].as_f64() == Some(pct))
        .unwrap_or_else(|| panic!("no p{pct} in {table}"))["value"]
        .as_u64()
        .unwrap()
}

/// The HTML page `args` writes with `-o`.
fn page(sb: &Sandbox, args: &[&str]) -> String {
    let file = sb.work_dir().join("page.html");
    let out = sb.cmd().args(args).arg("-o").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&file).unwrap()
}

#[test]
fn a_saturating_run_measures_wakeups_requests_and_the_rate() {
    let sb = Sandbox::new();
    let r = sb.json(&["wakeup", "-r", "2", "-t", "2", "-F", "64", "-n", "1"]);
    let w = wakeup(&r);
    assert_eq!(r["incomplete"], false);
    let requests = w["request"]["samples"].as_u64().unwrap();
    assert!(w["wakeup"]["samples"].as_u64().unwrap() > 100, "{w}");
    assert!(requests > 100, "{w}");
    // A request sleeps 100 us before its math: none is shorter.
    assert!(w["request"]["min"].as_u64().unwrap() >= 100, "{w}");
    // Percentiles only grow; the rate is the requests over the run time.
    let (p50, p99) = (at(&w["wakeup"], 50.0), at(&w["wakeup"], 99.0));
    assert!(p50 <= p99, "{w}");
    let avg = w["average_rps"].as_f64().unwrap();
    assert!(
        (avg * 2.0 - requests as f64).abs() <= requests as f64 * 0.5 + 50.0,
        "{avg} rps, {requests} requests"
    );
    // One rate sample at the start (0, as schbench's) and one a second after.
    assert_eq!(w["rps"]["samples"], 3, "{w}");
    // The text is schbench's tables.
    let out = sb.cmd().args(["results", "show", "1"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "Wakeup Latencies percentiles (usec) runtime 2 (s)",
        "Request Latencies percentiles (usec) runtime 2 (s)",
        "RPS percentiles (requests) runtime 2 (s)",
        "\t* 99.0th: ",
        "average rps: ",
        "sched delay: message ",
    ] {
        assert!(text.contains(line), "{line:?} not in {text}");
    }
    // The report page draws both latencies' CDFs and the rate through the run.
    let html = page(&sb, &["report", "1"]);
    for title in [
        "Wakeup latency, cumulative",
        "Request latency, cumulative",
        "Requests a second",
    ] {
        assert!(html.contains(title), "{title} not on the page");
    }
    // The fleet page has its p99 wakeup latency as a headline column.
    let html = page(&sb, &["report", "--fleet"]);
    assert!(html.contains("wakeup p99 across hosts"), "no wakeup column");
    assert!(
        html.contains("data-key=\"wakeup\"") && html.contains(&format!("data-v=\"{p99}\"")),
        "p99 {p99} not in the table"
    );
}

/// The run's threads are accounted while the statistics are kept (the whole run: one under
/// 30 s has no warm-up), with the host's speed read just before they started and just after
/// they ended.
#[test]
fn a_run_has_the_hosts_account_of_its_threads_and_its_speed() {
    let sb = Sandbox::new();
    let args = [
        "wakeup", "-r", "3", "-w", "1", "-t", "2", "-F", "64", "-n", "1",
    ];
    let r = sb.json(&args);
    let a = &wakeup(&r)["account"];
    // One message thread and its two workers.
    assert_eq!(a["tasks"], 3, "{a}");
    // From the first second every thread had started (its first, or its second) to the end.
    let wall = a["wall_ns"].as_u64().unwrap() as f64;
    assert!((1.9e9..3.6e9).contains(&wall), "{a}");
    // The workers' math kept the CPUs busy and they woke as often as they were posted.
    assert!(a["run_ns"].as_u64().unwrap() as f64 > 0.2 * wall, "{a}");
    assert!(a["voluntary"].as_u64().unwrap() > 100, "{a}");
    // The fixed-work reference: over 100 µs and under a second a reading.
    let reference = a["reference_ns"].as_f64().unwrap();
    assert!((1e5..1e9).contains(&reference), "{a}");
    // Without accounts, neither.
    let bare = sb
        .cmd()
        .env("HOSTBENCH_NO_ACCOUNT", "1")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let bare: Value = serde_json::from_slice(&bare.stdout).unwrap();
    assert!(wakeup(&bare).get("account").is_none(), "{bare}");
}

#[test]
fn more_math_makes_longer_requests() {
    let sb = Sandbox::new();
    let p50 = |n: &str| {
        let r = sb.json(&["wakeup", "-r", "1", "-t", "1", "-L", "-s", "0", "-n", n]);
        at(&wakeup(&r)["request"], 50.0)
    };
    let (one, eight) = (p50("1"), p50("8"));
    assert!(eight > one * 3, "-n 1: {one} us, -n 8: {eight} us");
}

/// `--split 50`: half the footprint each worker's own and half shared, half the operations
/// on each. At -F 2048 -n 2 a request is two products of 295² matrices without it, and one
/// each of 209² with it: about a third of the steps.
#[test]
fn split_shares_the_footprint_and_the_operations_as_schbench() {
    let sb = Sandbox::new();
    let run = |split: &[&str]| {
        let mut args = vec![
            "wakeup", "-r", "1", "-t", "1", "-C", "-F", "2048", "-n", "2",
        ];
        args.extend_from_slice(split);
        sb.json(&args)
    };
    let (whole, halves) = (run(&[]), run(&["--split", "50"]));
    let (whole, halves) = (wakeup(&whole), wakeup(&halves));
    assert_eq!(halves["settings"]["split_pct"], 50, "{halves}");
    assert!(whole["settings"].get("split_pct").is_none(), "{whole}");
    let (a, b) = (at(&whole["request"], 50.0), at(&halves["request"], 50.0));
    assert!(b * 10 < a * 6, "no split: {a} us, --split 50: {b} us");
    // schbench's lines as it starts.
    let out = sb
        .cmd()
        .args([
            "wakeup", "-r", "1", "-t", "1", "-F", "256", "-n", "1", "--split", "25",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("split mode: 25% private (64 KB per thread), 75% shared (192 KB total)"),
        "{text}"
    );
    assert!(
        text.contains("matrix sizes: private=52, shared=90"),
        "{text}"
    );
}

/// schbench's "sched delay" is each thread's run-queue wait a slice, from the kernel: three
/// workers held on one CPU wait far longer for it than one worker alone there.
#[test]
fn workers_crowded_on_one_cpu_show_a_longer_sched_delay() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("one CPU: no second CPU for the message thread");
        return;
    }
    let sb = Sandbox::new();
    let delay = |workers: &str| {
        let r = sb.json(&[
            "wakeup", "-r", "2", "-t", workers, "-W", "0", "-M", "1", "-n", "2",
        ]);
        let d = &wakeup(&r)["sched_delay"];
        assert!(d["message_us"].is_u64(), "{d}");
        d["worker_us"].as_u64().unwrap()
    };
    let (alone, crowded) = (delay("1"), delay("3"));
    assert!(
        crowded > 100 && crowded > 5 * alone.max(1),
        "one worker: {alone} us, three: {crowded} us"
    );
}

#[test]
fn a_fixed_rate_is_kept() {
    let sb = Sandbox::new();
    let r = sb.json(&[
        "wakeup", "-r", "3", "-t", "2", "-R", "200", "-F", "64", "-n", "1",
    ]);
    let w = wakeup(&r);
    let seconds = w["per_second"].as_array().unwrap();
    assert!(seconds.len() >= 3, "{w}");
    for s in &seconds[1..] {
        let rate = s[1].as_f64().unwrap();
        assert!((100.0..300.0).contains(&rate), "{seconds:?}");
    }
    // Three seconds' requests, no fourth batch posted at the run's end (these requests are
    // far shorter than the 128 a worker may have waiting, so none is passed over).
    assert_eq!(w["average_rps"].as_f64(), Some(200.0), "{w}");
    // The wake-up that ends the run is not a wakeup latency (it counted from the worker's
    // sleep: 545 ms in a -R 377 -r 4 run before it was left out).
    assert!(w["wakeup"]["max"].as_u64().unwrap() < 100_000, "{w}");
}

#[test]
fn the_pipe_test_measures_wakeups_alone() {
    let sb = Sandbox::new();
    let r = sb.json(&["wakeup", "-r", "1", "-t", "1", "-p", "65536"]);
    let w = wakeup(&r);
    assert!(w["wakeup"]["samples"].as_u64().unwrap() > 1000, "{w}");
    assert!(w.get("request").is_none() && w.get("rps").is_none(), "{w}");
    // schbench prints no sched delay for the pipe test.
    assert!(w.get("sched_delay").is_none(), "{w}");
    let ops = w["pipe_ops_per_s"].as_f64().unwrap();
    let bytes = w["pipe_bytes_per_s"].as_f64().unwrap();
    assert!(ops > 1000.0 && (bytes / ops - 65536.0).abs() < 1.0, "{w}");
    // The pipe table has the 20th percentile too.
    at(&w["wakeup"], 20.0);
}

#[test]
fn dash_i_prints_the_tables_so_far_every_n_seconds() {
    let sb = Sandbox::new();
    let stderr = |args: &[&str]| {
        let out = sb.cmd().arg("wakeup").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // Every second of three: the tables with the seconds so far, the sched delay and the rate.
    let err = stderr(&["-r", "3", "-t", "1", "-i", "1"]);
    for line in [
        "Wakeup Latencies percentiles (usec) runtime 1 (s)",
        "Request Latencies percentiles (usec) runtime 2 (s)",
        "RPS percentiles (requests) runtime 1 (s)",
        "current rps: ",
        "sched delay: message ",
    ] {
        assert!(err.contains(line), "{line:?} not in {err}");
    }
    // schbench's default is every 10 s: none in a 2 s run; none with -q, none in the pipe test.
    for args in [
        &["-r", "2", "-t", "1"][..],
        &["-r", "2", "-t", "1", "-i", "1", "-q"],
        &["-r", "2", "-t", "1", "-i", "1", "-p", "4096"],
    ] {
        let err = stderr(args);
        assert!(!err.contains("Latencies percentiles"), "{args:?}: {err}");
    }
}

#[test]
fn dash_j_writes_schbenchs_json_beside_the_result() {
    let sb = Sandbox::new();
    let file = sb.work_dir().join("schbench.json");
    let out = sb
        .cmd()
        .args([
            "wakeup",
            "-r",
            "1",
            "-t",
            "1",
            "-J",
            "nightly \"a\"",
            "-q",
            "-j",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let j: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(j["normal"]["jobname"], "nightly \"a\"", "{j}");
    assert!(
        j["normal"]["cmdline"]
            .as_str()
            .unwrap()
            .contains("wakeup -r 1"),
        "{j}"
    );
    assert!(!j["normal"]["version"].as_str().unwrap().is_empty(), "{j}");
    let int = &j["int"];
    assert_eq!(int["runtime"], 1, "{j}");
    // The stored result's tables, as schbench's keys: the same p50 and p99, min and max.
    let r = sb.json(&["results", "show", "1"]);
    let w = wakeup(&r);
    assert_eq!(int["wakeup_latency_pct50.0"], at(&w["wakeup"], 50.0), "{j}");
    assert_eq!(
        int["request_latency_pct99.0"],
        at(&w["request"], 99.0),
        "{j}"
    );
    assert_eq!(int["wakeup_latency_max"], w["wakeup"]["max"], "{j}");
    let p20 = int["rps_pct20.0"].as_u64().unwrap();
    assert!(p20 <= int["rps_pct90.0"].as_u64().unwrap(), "{j}");
    // "-" is standard output: the JSON after the tables.
    let out = sb
        .cmd()
        .args([
            "wakeup", "-r", "1", "-t", "1", "-p", "4096", "-q", "-j", "-",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("{\"normal\""))
        .expect(&stdout);
    let j: Value = serde_json::from_str(line).unwrap();
    assert!(j["int"].get("request_latency_pct50.0").is_none(), "{j}");
    assert!(j["int"]["wakeup_latency_pct99.9"].as_u64().is_some(), "{j}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let sb = Sandbox::new();
    for (args, says) in [
        (vec!["-m", "0"], "-m must be at least 1"),
        (vec!["-t", "0"], "-t must be at least 1"),
        (
            vec!["-R", "100", "-A", "50"],
            "-R and -A cannot be used together",
        ),
        (vec!["-W", "0-1023"], "which is not online"),
        (vec!["-M", "one"], "-M takes a CPU list"),
        (vec!["-F", "1048576", "-t", "1000"], "more than the"),
        (vec!["-t", "-1"], "-1"),
        (
            vec!["--split", "101"],
            "--split must be a percent from 0 to 100",
        ),
        (
            vec!["-r", "1", "-s", "20000000"],
            "-s must be from 0 to 1000000",
        ),
        (vec!["-n", "1000000000000"], "-n must be from 1 to 1000000"),
        (vec!["-n", "0"], "-n must be from 1 to 1000000"),
        (vec!["-F", "0"], "-F must be from 1 to 1048576"),
        (vec!["-R", "100000000"], "-R must be from 1 to 1000000"),
        (vec!["-r", "10", "-z", "11"], "-z must be from 1 to 10"),
        (vec!["-r", "30", "-w", "30"], "-w must be from 0 to 29"),
        (vec!["-J", "job"], "--schbench-json"),
        (vec!["-i", "0"], "0"),
        (vec!["-j", "-", "--json"], "-j - and --json both print"),
    ] {
        let out = sb.cmd().arg("wakeup").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        if says != "-1" {
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        }
    }
}

/// A 60 s saturating run sent `signal` after `after`: how it ended, how long after the signal,
/// and its pid.
fn signalled_run(
    sb: &Sandbox,
    signal: i32,
    after: Duration,
) -> (std::process::ExitStatus, Duration, u32) {
    let child = sb
        .std_cmd()
        .args(["wakeup", "-r", "60", "-t", "2", "-F", "64", "-n", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    std::thread::sleep(after);
    let sent = Instant::now();
    // SAFETY: kill(2) to our own child.
    unsafe { libc::kill(pid as i32, signal) };
    let out = child.wait_with_output().unwrap();
    (out.status, sent.elapsed(), pid)
}

#[test]
fn sigterm_ends_a_run_at_once_and_keeps_what_it_measured() {
    let sb = Sandbox::new();
    let (status, took, pid) = signalled_run(&sb, libc::SIGTERM, Duration::from_millis(3000));
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(status.code(), Some(143));
    let r = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
    let w = wakeup(&r);
    assert_eq!(w["stopped"], true);
    assert!(w["request"]["samples"].as_u64().unwrap() > 0, "{w}");
    // Its threads went with it.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

/// A request of a million matrix products (minutes of math) still stops at a signal: the
/// math looks at the stop between two products, and the run says it was interrupted.
#[test]
fn sigterm_stops_a_request_in_the_middle_of_its_math() {
    let sb = Sandbox::new();
    let child = sb
        .std_cmd()
        .args([
            "wakeup", "-r", "60", "-m", "1", "-t", "1", "-F", "1024", "-n", "1000000",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let sent = Instant::now();
    // SAFETY: kill(2) to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(143));
    let hosts = sb.json(&["results", "hosts"]);
    assert_eq!(hosts[0]["last_run"]["outcome"], "interrupted", "{hosts}");
}

/// schbench's workload is threads of one process: SIGKILL ends them all at once, and the store
/// keeps what the run had checkpointed (every 5 s), marked incomplete.
#[test]
fn a_killed_wakeup_run_keeps_its_last_checkpoint_and_no_thread() {
    let sb = Sandbox::new();
    // Past the first checkpoint (5 s), short of the second.
    let (status, _, pid) = signalled_run(&sb, libc::SIGKILL, Duration::from_millis(7_000));
    assert_eq!(status.code(), None, "killed by a signal");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    let r = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
    let w = wakeup(&r);
    // About five seconds of requests, hundreds a second.
    let requests = w["request"]["samples"].as_u64().unwrap();
    assert!(requests > 100, "{w}");
    assert!(w["elapsed_s"].as_f64().unwrap() < 7.0, "{w}");
    // One result only: nothing stored after the kill.
    let list = sb.cmd().args(["results", "list"]).output().unwrap();
    let rows = String::from_utf8_lossy(&list.stdout)
        .lines()
        .skip(1)
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, 1);
}
