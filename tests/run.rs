//! `hostbench run`: the standard run stores one result holding all five suites.

mod common;

use common::Sandbox;

#[test]
fn the_smoke_profile_runs_every_suite_into_one_result() {
    let sb = Sandbox::new();
    let work = sb.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // --explain 1: the interactive parts (free and pinned) explain each pair's worst sample.
    let out = sb
        .cmd()
        .args(["run", "--profile", "smoke", "--explain", "1", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The plan with each part's time comes first, the summary last.
    let plan = stdout.find("profile smoke: 8 parts").expect(&stdout);
    let summary = stdout.find("Summary of result 1").expect(&stdout);
    assert!(plan < summary);
    for part in [
        "[1/8] noise",
        "[2/8] index",
        "[3/8] interactive",
        "[4/8] sched",
        "[5/8] wakeup: schbench, 100 rps, m=1 t=2",
        "[6/8] index: pinned: 1 test",
        "[7/8] interactive: pinned: Audio, Video under Ring",
        "[8/8] sched: pinned: 2 threads",
    ] {
        let at = stdout.find(part).expect(part);
        assert!(at > plan && at < summary, "{part} out of place:\n{stdout}");
        assert!(stdout[at..].lines().next().unwrap().contains("about "));
    }
    for line in [
        "Noise: ",
        "Index: ",
        "Worst interactive case: ",
        "Scheduler, us/round: 2 threads",
        "wakeup (schbench, 100 rps, m=1 t=2): wakeup p99 ",
        "Index, pinned: ",
        "Worst interactive case, pinned: ",
        "Scheduler, pinned, us/round: 2 threads",
        "Noise check: a 10 ms CPU job timed 20 times",
        "Repeats: ",
        "hostbench report 1 -o",
        "hostbench compare OTHER_ID 1",
    ] {
        assert!(
            stdout[summary..].contains(line),
            "{line} missing:\n{stdout}"
        );
    }
    // The repeats compare needs for a 5% change: a number of runs, or the noise floor's verdict.
    let advice = &stdout[stdout.find("Repeats: ").unwrap()..];
    assert!(
        advice.contains("--repeat ") || advice.contains("within this host's noise"),
        "{advice}"
    );
    // Not a terminal: no progress line rewriting.
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\r'));
    // Nothing left in the working directory.
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);

    // One stored result with the five suites, then the ping-pongs pinned, complete.
    let shown = sb.json(&["results", "show", "1"]);
    let suites: Vec<&str> = shown["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["suite"].as_str().unwrap())
        .collect();
    assert_eq!(
        suites,
        [
            "noise",
            "index",
            "interactive",
            "sched",
            "wakeup",
            "index",
            "interactive",
            "sched"
        ]
    );
    // The pinned figures have keys of their own: compare pairs like with like.
    let figures = sb
        .cmd()
        .args(["results", "export", "1", "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(figures.stdout).unwrap();
    for key in [
        "index/1 copy pinned/context1",
        "interactive/Audio/Ring pinned/latency mean",
        "sched/2 threads 1 sets pinned/us per round",
        "sched/2 threads 1 sets/us per round",
        "wakeup/100 rps, m=1 t=2 F=256 n=5 s=100/wakeup latency p99",
    ] {
        assert!(csv.contains(key), "{key} missing:\n{csv}");
    }
    assert_eq!(shown["incomplete"], false);
    let index = &shown["suites"][1];
    assert_eq!(index["passes"].as_array().unwrap().len(), 2);
    assert!(
        index["passes"][0]["tests"][0]["score"]["score"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let interactive = &shown["suites"][2];
    assert_eq!(interactive["measurements"].as_array().unwrap().len(), 4);
    // run --explain reached both interactive parts: every pair with deadlines is explained,
    // and the summary gives a line for each.
    for part in [2, 6] {
        let settings = &shown["suites"][part]["settings"];
        assert_eq!(settings["explain"], 1, "{settings}");
        for m in shown["suites"][part]["measurements"].as_array().unwrap() {
            if m["bench"] == "Gaming" {
                assert!(m.get("explained").is_none());
                continue;
            }
            let samples = m["explained"]["samples"].as_array().unwrap();
            assert_eq!(samples.len(), 1, "{m}");
            let pair = format!(
                "{} under {}: worst ",
                m["bench"].as_str().unwrap(),
                m["load"].as_str().unwrap()
            );
            assert!(
                stdout[summary..].contains(&pair),
                "{pair} missing:\n{stdout}"
            );
        }
    }
    let sched = &shown["suites"][3];
    assert_eq!(sched["points"].as_array().unwrap().len(), 2);
    // wakeup: schbench's workload at 50 requests a second a CPU, woken and served.
    let wakeup = &shown["suites"][4];
    assert_eq!(wakeup["settings"]["rps"], 100);
    assert!(
        wakeup["wakeup"]["samples"].as_u64().unwrap() > 0,
        "{wakeup}"
    );
    assert!(
        wakeup["request"]["samples"].as_u64().unwrap() > 0,
        "{wakeup}"
    );
    // No earlier run of this plan on this host: nothing to say of how figures move.
    assert!(!stdout.contains("Between runs on this host"), "{stdout}");

    // Three more runs of the same plan stored (copies of the first, earlier): the next run's
    // summary says how much its figures move between runs here, from the four.
    let start = chrono::DateTime::parse_from_rfc3339(shown["started_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc);
    for i in 1..=3 {
        let mut copy = shown.clone();
        copy["uuid"] = format!("00000000-0000-4000-8000-{i:012}").into();
        copy["started_at"] = (start - chrono::Duration::minutes(i)).to_rfc3339().into();
        let file = sb.dir.path().join(format!("copy{i}.json"));
        std::fs::write(&file, copy.to_string()).unwrap();
        sb.cmd()
            .args(["results", "import"])
            .arg(&file)
            .assert()
            .success();
    }
    // The same plan: --explain too (its tracing is part of what was measured).
    let again = sb
        .cmd()
        .args(["run", "--profile", "smoke", "--explain", "1", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    let again = String::from_utf8_lossy(&again.stdout);
    let line = again
        .lines()
        .find(|l| l.contains("Between runs on this host"))
        .unwrap_or_else(|| panic!("no spread line:\n{again}"));
    assert!(
        line.contains("from 4 earlier runs like this one")
            && line.contains("System Benchmarks Index Score, 1 copy, free ±")
            && line.contains("the most: "),
        "{line}"
    );
}

#[test]
fn sigterm_stores_what_ran_marked_incomplete_and_leaves_nothing() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let sb = Sandbox::new();
    let work = sb.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut child = sb
        .std_cmd()
        .args(["run", "--profile", "quick", "--workdir"])
        .arg(&work)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Stop the run inside the index part: once it is announced and its copies run.
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("] index: ") {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "ended early:\n{seen}"
        );
        seen.push_str(&line);
    }
    let marker = work.to_str().unwrap().to_string();
    let workers = || common::processes(|c| c.contains(&marker)).len();
    let deadline = Instant::now() + Duration::from_secs(30);
    while workers() == 0 {
        assert!(Instant::now() < deadline, "no index copy started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let signalled = Instant::now();
    // SAFETY: kill(2) to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    reader.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert!(signalled.elapsed() < Duration::from_secs(10));
    assert_eq!(status.code(), Some(143));
    assert_eq!(workers(), 0, "a worker outlived the run");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "files left");
    let stdout = seen;
    assert!(stdout.contains("Summary of result 1 ("), "{stdout}");
    assert!(stdout.contains(", incomplete)"), "{stdout}");
    let r = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
    let suites: Vec<&str> = r["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["suite"].as_str().unwrap())
        .collect();
    assert_eq!(suites, ["noise", "index"]);
}

#[test]
fn a_dry_run_shows_the_plan_and_measures_and_stores_nothing() {
    let sb = Sandbox::new();
    let work = sb.work_dir();
    let started = std::time::Instant::now();
    let out = sb
        .cmd()
        .args(["run", "--profile", "quick", "--dry-run", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("profile quick: 8 parts"), "{stdout}");
    assert!(
        stdout.contains("8. sched        pinned: 2 threads"),
        "{stdout}"
    );
    assert!(!stdout.contains("Summary"), "{stdout}");
    // No store was even created, and the quick run's minutes were not spent.
    assert!(!sb.db().exists());
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // The plan's checks still apply: a workdir that is not a directory is refused.
    let out = sb
        .cmd()
        .args([
            "run",
            "--dry-run",
            "--workdir",
            "/nonexistent-hostbench-dir",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
