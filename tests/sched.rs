//! `hostbench sched` driven as a user would: real threads, real pipes, a real SQLite store.
//! Runs last one second; bounds are loose, this is a shared 2-CPU machine.

mod common;

use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::Duration;

use common::Sandbox;
use serde_json::Value;

fn sched(r: &Value) -> &Value {
    let suites = r["suites"].as_array().unwrap();
    assert_eq!(suites[0]["suite"], "sched");
    &suites[0]
}

fn runs(r: &Value, point: usize) -> Vec<Value> {
    sched(r)["points"][point]["runs"]
        .as_array()
        .unwrap()
        .clone()
}

const ONE_RUN: [&str; 6] = ["-t", "1", "--min-runs", "1", "--max-runs", "1"];

#[test]
fn token_invariants_with_handoffs_only() {
    let sb = Sandbox::new();
    let mut args = vec!["sched", "-c", "8", "-a", "2", "-w", "100", "-r", "2"];
    args.extend(ONE_RUN);
    let r = sb.json(&args);
    let run = &runs(&r, 0)[0];
    // One holder per set at a time: with the one passing it on, never more than two.
    assert_eq!(run["max_token_holders"], 1);
    assert_eq!(run["yields"], 0);
    let per_thread: Vec<u64> = run["rounds_per_thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(per_thread.len(), 8);
    assert!(
        per_thread.iter().all(|&n| n > 0),
        "a thread took no round: {per_thread:?}"
    );
    assert_eq!(
        run["total_rounds"].as_u64().unwrap(),
        per_thread.iter().sum::<u64>()
    );
    assert_eq!(run["handoffs"], run["total_rounds"]);
}

#[test]
fn weight_zero_only_yields() {
    let sb = Sandbox::new();
    let mut args = vec!["sched", "-c", "4", "-a", "2", "-w", "0"];
    args.extend(ONE_RUN);
    let r = sb.json(&args);
    let run = &runs(&r, 0)[0];
    assert_eq!(run["handoffs"], 0);
    assert!(run["yields"].as_u64().unwrap() > 0);
    assert_eq!(run["yields"], run["total_rounds"]);
}

#[test]
fn more_compute_per_round_costs_more_per_round() {
    let sb = Sandbox::new();
    let us = |r: &str| {
        let mut args = vec!["sched", "-c", "2", "-a", "1", "-w", "100", "-r", r];
        args.extend(ONE_RUN);
        sched(&sb.json(&args))["points"][0]["mean_us_per_round"]
            .as_f64()
            .unwrap()
    };
    let (light, heavy) = (us("0"), us("200"));
    assert!(
        heavy > light * 3.0 && heavy > 100.0,
        "r=0: {light} us/round, r=200: {heavy} us/round"
    );
}

#[test]
fn output_format_2_is_c_a_value_lines() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args([
            "sched", "-q", "-o", "2", "-c", "4", "-a", "2", "--sweep", "2,4",
        ])
        .args(ONE_RUN)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text:?}");
    for (line, (c, a)) in lines.iter().zip([(2, 1), (4, 2)]) {
        let parts: Vec<&str> = line.split(", ").collect();
        assert_eq!(parts.len(), 3, "{line}");
        assert_eq!(
            (parts[0], parts[1]),
            (c.to_string().as_str(), a.to_string().as_str())
        );
        let v: f64 = parts[2].parse().unwrap();
        assert!(
            v > 0.0 && parts[2].split('.').nth(1).map(str::len) == Some(2),
            "{line}"
        );
    }
    let out = sb
        .cmd()
        .args([
            "sched",
            "-o",
            "1",
            "-c",
            "2",
            "-a",
            "1",
            "-t",
            "1",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().filter(|l| l.starts_with("2, 1, ")).count() == 2,
        "{text}"
    );
}

#[test]
fn the_confidence_loop_stops_early_or_at_the_maximum() {
    let sb = Sandbox::new();
    let base = ["sched", "-c", "4", "-a", "2", "-t", "1"];
    // A loose target is met as soon as there are enough runs. With three positive samples the
    // 95% half-width is at most t(2) * sqrt(3) = 4.30 / sqrt(3) SDs, and SD / mean is at most sqrt(3): about 430% of the mean, so 500% is
    // met whatever this shared machine does to the runs.
    let mut loose = base.to_vec();
    loose.extend(["--ci", "500", "--min-runs", "3", "--max-runs", "8"]);
    let r = sb.json(&loose);
    let p = &sched(&r)["points"][0];
    assert_eq!(p["verdict"], "target_met");
    assert_eq!(p["runs"].as_array().unwrap().len(), 3);
    // An impossible one runs to the maximum and says so.
    let mut tight = base.to_vec();
    tight.extend(["--ci", "0.000001", "--min-runs", "2", "--max-runs", "4"]);
    let r = sb.json(&tight);
    let p = &sched(&r)["points"][0];
    assert_eq!(p["verdict"], "max_runs");
    assert_eq!(p["runs"].as_array().unwrap().len(), 4);
    let out = sb
        .cmd()
        .args([
            "sched",
            "-c",
            "4",
            "-a",
            "2",
            "-t",
            "1",
            "--ci",
            "0.000001",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("over 2 runs; target ±0.000001% NOT met"));
}

#[test]
fn a_sweep_stores_every_point_in_one_result() {
    let sb = Sandbox::new();
    let mut args = vec!["sched", "-c", "2", "-a", "1", "--sweep", "2,4,8,16"];
    args.extend(ONE_RUN);
    let r = sb.json(&args);
    let points: Vec<(u64, u64)> = sched(&r)["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["threads"].as_u64().unwrap(),
                p["active_sets"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(points, vec![(2, 1), (4, 2), (8, 4), (16, 8)]);
    let text = String::from_utf8(
        sb.cmd()
            .args(["results", "show", "1"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(text.contains("threads  active   us/round"), "{text}");
}

#[test]
fn a_thousand_threads_run() {
    let sb = Sandbox::new();
    let mut args = vec!["sched", "-c", "1024", "-a", "512"];
    args.extend(ONE_RUN);
    let run = &runs(&sb.json(&args), 0)[0];
    assert_eq!(run["rounds_per_thread"].as_array().unwrap().len(), 1024);
    assert!(run["total_rounds"].as_u64().unwrap() > 0);
}

#[test]
fn a_low_descriptor_limit_is_reported_up_front() {
    let sb = Sandbox::new();
    let mut cmd = sb.std_cmd();
    cmd.args(["sched", "-c", "1024", "-a", "512", "-t", "1"]);
    // SAFETY: setrlimit between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 256,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("file descriptors") && err.contains("ulimit -n"),
        "{err}"
    );
}

#[test]
fn ctrl_c_keeps_the_completed_runs() {
    let sb = Sandbox::new();
    let child = sb
        .std_cmd()
        .args([
            "sched",
            "-c",
            "4",
            "-a",
            "2",
            "-t",
            "1",
            "--ci",
            "0.000001",
            "--max-runs",
            "30",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    // SAFETY: kill(2) to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
    let p = &sched(&r)["points"][0];
    assert!(p["verdict"].is_null());
    let n = p["runs"].as_array().unwrap().len();
    assert!((1..30).contains(&n), "{n} runs kept");
}

/// Each sched run carries the host's account of its threads from the start to the stop: their
/// CPU time is about the run's length times the CPUs they kept busy, they switched as often as
/// tokens were handed on, and the CPUs they ran on are named.
#[test]
fn each_run_has_the_hosts_account_of_its_threads() {
    let sb = Sandbox::new();
    let mut args = vec!["sched", "-c", "4", "-a", "2", "-w", "100", "-r", "20"];
    args.extend(ONE_RUN);
    let r = sb.json(&args);
    let run = &runs(&r, 0)[0];
    let a = &run["account"];
    let wall = a["wall_ns"].as_u64().unwrap() as f64;
    assert!((0.9e9..1.5e9).contains(&wall), "{a}");
    // Two active sets: two threads on a CPU at any time, on this host's CPUs.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let busy = a["run_ns"].as_u64().unwrap() as f64 / wall;
    assert!(busy > 0.5 && busy <= 2.0 * 1.05, "{busy} CPUs busy: {a}");
    assert!(
        !a["cpus"].as_array().unwrap().is_empty() && cpus >= 1,
        "{a}"
    );
    // A hand-off wakes the successor, and the giver then waits for the token: switches, of
    // either kind, come with the hand-offs (here 0.7 a hand-off), and make the timeslices.
    let switches = (a["voluntary"].as_u64().unwrap() + a["involuntary"].as_u64().unwrap()) as f64;
    let handoffs = run["handoffs"].as_u64().unwrap() as f64;
    assert!(
        switches > 0.3 * handoffs && switches < 2.0 * handoffs,
        "{switches} switches, {handoffs} hand-offs: {a}"
    );
    assert!(
        a["slices"].as_u64().unwrap() as f64 >= 0.5 * switches,
        "{a}"
    );
    // Without accounts, none.
    let bare = sb
        .cmd()
        .env("HOSTBENCH_NO_ACCOUNT", "1")
        .args(&args)
        .arg("--json")
        .output()
        .unwrap();
    let bare: Value = serde_json::from_slice(&bare.stdout).unwrap();
    assert!(runs(&bare, 0)[0].get("account").is_none());
}

/// `--order rounds`: every point's first run, then every point's second; each point still
/// stops by its own rule, and the runs and figures are reflex's. An interrupted sweep in
/// rounds keeps every point's completed runs, none with a verdict.
#[test]
fn rounds_interleave_the_points_runs_and_a_stop_keeps_every_points_runs() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args([
            "sched", "-q", "-o", "1", "-c", "4", "-a", "2", "--sweep", "2,4",
        ])
        .args([
            "-t",
            "1",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--order",
            "rounds",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let order: Vec<(&str, &str, &str)> = text
        .lines()
        .map(|l| {
            let p: Vec<&str> = l.split(", ").collect();
            (p[0], p[1], p[2])
        })
        .collect();
    assert_eq!(
        order,
        [
            ("2", "1", "1"),
            ("4", "2", "1"),
            ("2", "1", "2"),
            ("4", "2", "2")
        ],
        "{text}"
    );
    let r = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], false);
    assert_eq!(sched(&r)["settings"]["order"], "rounds");
    for k in 0..2 {
        assert_eq!(runs(&r, k).len(), 2);
        assert!(!sched(&r)["points"][k]["verdict"].is_null());
    }

    let child = sb
        .std_cmd()
        .args(["sched", "-c", "4", "-a", "2", "--sweep", "2,4", "-t", "1"])
        .args(["--ci", "0.000001", "--max-runs", "30", "--order", "rounds"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(5000));
    // SAFETY: kill(2) to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r = sb.json(&["results", "show", "2"]);
    assert_eq!(r["incomplete"], true);
    let points = sched(&r)["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{points:?}");
    for p in points {
        assert!(p["verdict"].is_null(), "{p}");
        assert!(!p["runs"].as_array().unwrap().is_empty(), "{p}");
    }
}
