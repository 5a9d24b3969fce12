//! `hostbench interactive` driven as a user would: real worker processes, real loads, real
//! timers, a real SQLite store. Runs are short (`-t 1` or `-t 2`) and bounds are loose: this is
//! a shared 2-CPU machine.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{workers_with, Sandbox};
use serde_json::Value;

/// One interactive run at a time: a Burn load in one test must not disturb another test's
/// unloaded measurement.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn interactive(result: &Value) -> &Value {
    let suites = result["suites"].as_array().unwrap();
    assert_eq!(suites[0]["suite"], "interactive");
    &suites[0]
}

fn measurement<'a>(r: &'a Value, bench: &str, load: &str) -> &'a Value {
    interactive(r)["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["bench"] == bench && m["load"] == load)
        .unwrap_or_else(|| panic!("no {bench} under {load} in {r}"))
}

/// `interactive -c -t T --exact-time --settle-ms MS`, then `rest`: the short run most tests
/// here make (no log file, the duration as given, a short settling time).
fn short_run<'a>(t: &'a str, settle_ms: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "interactive",
        "-c",
        "-t",
        t,
        "--exact-time",
        "--settle-ms",
        settle_ms,
    ];
    args.extend_from_slice(rest);
    args
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn audio_and_video_alone_get_their_cpu_and_meet_deadlines() {
    let _g = serial();
    let sb = Sandbox::new();
    let r = sb.json(&short_run(
        "2",
        "200",
        &["-W", "Audio", "-W", "Video", "-w", "None"],
    ));
    assert_eq!(r["incomplete"], false);
    let audio = measurement(&r, "Audio", "None");
    let video = measurement(&r, "Video", "None");
    for m in [audio, video] {
        assert!(f(&m["deadlines_met_pct"]) > 80.0, "{m}");
        assert!(f(&m["desired_cpu_pct"]) > 90.0, "{m}");
        assert!(m["latency"]["count"].as_u64().unwrap() > 10);
        assert!(
            f(&m["latency"]["mean_ns"]) < 20e6,
            "mean latency {}",
            m["latency"]["mean_ns"]
        );
        let l = &m["latency"];
        assert!(
            l["p50_ns"].as_u64() <= l["p99_ns"].as_u64()
                && l["p99_ns"].as_u64() <= l["p999_ns"].as_u64()
        );
    }
    // The simulations use what they should: about 5% and 40% of a CPU. The burn is calibrated
    // at the start by interbench's rule, which takes the loop's speed just after a rest; on this
    // shared VM the loop then runs up to twice as fast once busy (docs/calibration.md), and its
    // speed drifts by 5-20% within minutes: CI saw Video at 60.2% and at 24.5%. Bounds of 15%
    // and 70% still fail a burn that ran a third or twice as long as it should.
    let (a, v) = (f(&audio["measured_cpu_pct"]), f(&video["measured_cpu_pct"]));
    assert!((1.5..15.0).contains(&a), "Audio used {a}% CPU");
    assert!((15.0..70.0).contains(&v), "Video used {v}% CPU");
    assert_eq!(f(&audio["asked_cpu_pct"]), 5.0);
    assert!((f(&video["asked_cpu_pct"]) - 40.0).abs() < 0.01);
}

/// `-l N` burns with interbench's loop: at this host's own calibration Video's 40% task uses
/// about 40% of a CPU, at half of it about 20% — an interbench `-l` value copied from its
/// "Using N loops per ms" line means the same burn time here.
#[test]
fn l_gives_the_burn_time_its_value_implies_with_interbenchs_loop() {
    let _g = serial();
    let sb = Sandbox::new();
    let video = |extra: &[&str]| -> Value {
        let mut args = vec![
            "interactive",
            "-c",
            "-t",
            "2",
            "--exact-time",
            "--settle-ms",
            "100",
            "-W",
            "Video",
            "-w",
            "None",
        ];
        args.extend_from_slice(extra);
        sb.json(&args)
    };
    let own = video(&["-b"]);
    let cal = &interactive(&own)["calibration"];
    assert_eq!(cal["burn_loop"], "interbench", "{cal}");
    assert_eq!(cal["source"], "measured");
    let loops = cal["loops_per_ms"].as_u64().unwrap();
    // The CPU a run used over what 40% of the loop's speed in that run implies. The run times
    // the loop before and after its pair; their geometric mean followed the CPU each run used
    // best (sixteen 2 s runs at -l 3.6M and 1.8M: used / expected scattered by 6.6%, sd of the
    // logarithm, against 13.5-13.8% from the start or the end alone, and 9.0% from the
    // fixed-work reference, which does not run interbench's loop).
    let share = |l: u64| {
        let r = video(&["-l", &l.to_string()]);
        let i = interactive(&r);
        let speed =
            (f(&i["calibration_start"]["per_ms"]) * f(&i["calibration_end"]["per_ms"])).sqrt();
        f(&measurement(&r, "Video", "None")["measured_cpu_pct"]) / (40.0 * l as f64 / speed)
    };
    // Three pairs, alternating: this VM's loop runs at half or full speed for minutes at a
    // time, and a run can fall on either side of a change.
    let (mut full, mut half) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        full.push(share(loops));
        half.push(share(loops / 2));
    }
    let (full, half) = (median_of(full), median_of(half));
    assert!(
        (0.6..1.6).contains(&full),
        "at its own -l {loops}: {full:.2} of the CPU its loop's speed implies"
    );
    // Half the loops a ms: about half the CPU, each run at its own loop's speed. A burn of a
    // fifth of each period ran slower a loop than the calibrations around it on this VM, by up
    // to 1.7 times its share at the full -l (seen: 30.6% used where 20.2% was implied); an -l
    // ignored would give 2.0, an -l applied twice 0.5.
    assert!(
        (0.6..1.85).contains(&(half / full)),
        "-l {} used {half:.2} of its implied CPU, -l {loops} {full:.2}",
        loops / 2
    );
}

fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn video_under_burn_is_worse_than_alone() {
    let _g = serial();
    let sb = Sandbox::new();
    // 12 burning threads on this 2-CPU machine leave Video (40% of a CPU) about 2/13 of one,
    // short of what it needs even when its burns run at twice the calibrated speed (this VM's
    // speed moves between two modes) and a waking task gets more than an even share. (With 4,
    // an even share was exactly its 40%, and a run met every deadline.)
    let r = sb.json(&short_run(
        "2",
        "300",
        &["-L", "12", "-W", "Video", "-w", "None", "-w", "Burn"],
    ));
    let none = measurement(&r, "Video", "None");
    let burn = measurement(&r, "Video", "Burn");
    assert!(burn["load_report"]["burn_loops"].as_u64().unwrap() > 0);
    assert!(
        f(&burn["deadlines_met_pct"]) < f(&none["deadlines_met_pct"]),
        "deadlines met: {} under Burn, {} alone",
        burn["deadlines_met_pct"],
        none["deadlines_met_pct"]
    );
    assert!(f(&burn["latency"]["mean_ns"]) > f(&none["latency"]["mean_ns"]));
}

#[test]
fn gaming_has_no_deadlines_and_realtime_runs_fifo() {
    let _g = serial();
    let sb = Sandbox::new();
    let r = sb.json(&short_run("1", "100", &["-W", "Gaming", "-w", "None"]));
    let g = measurement(&r, "Gaming", "None");
    assert!(g["deadlines_met_pct"].is_null());
    assert!(g["timer"].is_null());
    // Its burns achieved against those wanted: a burn is calibrated before the run, and this
    // VM's CPU has run one job four times slower within a minute (a CI run here saw under
    // 50%), so a sanity bar: far from none.
    assert!(f(&g["desired_cpu_pct"]) > 20.0, "{g}");
    assert!(
        f(&g["measured_cpu_pct"]) > 50.0,
        "Gaming burns what it can: {g}"
    );

    let out = sb
        .cmd()
        .args([
            "interactive",
            "-c",
            "-r",
            "-t",
            "1",
            "--exact-time",
            "--settle-ms",
            "100",
            "-W",
            "Audio",
            "-w",
            "None",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "--- Benchmarking simulated cpu of Audio real time in the presence of simulated ---"
        ),
        "{text}"
    );
    assert!(text.contains("Latency +/- SD (us)"));
    let r: Value = sb.json(&["results", "show", "2"]);
    let m = measurement(&r, "Audio", "None");
    assert_eq!(m["task_policy"]["policy"], "fifo");
    assert_eq!(m["task_policy"]["priority"], 95);
}

fn no_swap() -> bool {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("SwapTotal:"))
        .is_some_and(|l| l.split_whitespace().nth(1) == Some("0"))
}

/// The registries' benches and loads as `interactive --list` shows them (kind, name, the rest
/// of the line), with the options given.
fn listed(sb: &Sandbox, options: &[&str]) -> Vec<(String, String, String)> {
    let out = sb
        .cmd()
        .args(["interactive", "--list"])
        .args(options)
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| {
            let mut words = l.split_whitespace();
            let kind = words.next().unwrap().to_string();
            let name = words.next().unwrap().to_string();
            (kind, name, l.to_string())
        })
        .collect()
}

/// The smoke test of the registries: every bench and every load `--list` names (so a new one
/// is run without anyone adding it here) runs and is measured.
#[test]
fn every_bench_and_every_load_runs() {
    let _g = serial();
    let sb = Sandbox::new();
    let work = sb.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let work_arg = ["--workdir", work.to_str().unwrap()];
    let common = [
        "interactive",
        "-c",
        "-t",
        "1",
        "--exact-time",
        "--settle-ms",
        "100",
        "-C",
        "20",
        "-I",
        "10000",
        "--file-size",
        "16",
        "--memload-mb",
        "32",
        "--hack-groups",
        "1",
        "-L",
        "2",
    ];
    // With these options every unit runs here: --list says so of each.
    let list_options: Vec<&str> = ["--file-size", "16", "--memload-mb", "32"]
        .into_iter()
        .chain(work_arg)
        .collect();
    let units = listed(&sb, &list_options);
    for (_, name, line) in &units {
        assert!(line.ends_with("runs here"), "{name}: {line}");
    }
    let of = |kind: &str| -> Vec<&str> {
        units
            .iter()
            .filter(|u| u.0 == kind)
            .map(|u| u.1.as_str())
            .collect()
    };
    let (benches, loads) = (of("bench"), of("load"));
    assert!(benches.len() >= 5 && loads.len() >= 11, "{units:?}");
    // Every bench alone.
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["-w", "None"]);
    args.extend(work_arg);
    for b in &benches {
        args.extend(["-W", b]);
    }
    let r = sb.json(&args);
    let ms = interactive(&r)["measurements"].as_array().unwrap();
    let measured: Vec<&str> = ms.iter().map(|m| m["bench"].as_str().unwrap()).collect();
    assert_eq!(measured, benches);
    // Audio under every load.
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["-W", "Audio"]);
    args.extend(work_arg);
    for l in &loads {
        args.extend(["-w", l]);
    }
    let r = sb.json(&args);
    let ms = interactive(&r)["measurements"].as_array().unwrap();
    let measured: Vec<&str> = ms.iter().map(|m| m["load"].as_str().unwrap()).collect();
    assert_eq!(measured, loads);
    let report = |load: &str| &measurement(&r, "Audio", load)["load_report"];
    assert!(report("Write")["bytes_written"].as_u64().unwrap() > 0);
    assert!(report("Read")["bytes_read"].as_u64().unwrap() > 0);
    assert!(report("Ring")["ring_wakeups"].as_u64().unwrap() > 0);
    assert!(report("Memload")["memload_mb_touched"].as_u64().unwrap() > 0);
    assert!(report("Hack")["hack_messages"].as_u64().unwrap() > 0);
    assert_eq!(report("Compile")["threads"], 4);
    for m in ms {
        assert!(m["latency"]["count"].as_u64().unwrap() > 0, "{m}");
    }
    // The disk loads' files went with their run.
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
    // Without swap and without --memload-mb, Memload says why it does not run here; a work
    // directory too small for the files, why the disk loads do not.
    let units = listed(&sb, &["--file-size", "100000000"]);
    for (_, name, line) in &units {
        match name.as_str() {
            "Write" | "Read" | "Compile" => {
                assert!(line.contains("not here: no room for its files"), "{line}")
            }
            "Memload" if no_swap() => {
                assert!(line.contains("not here: no swap on this host"), "{line}")
            }
            _ => {}
        }
    }
    // The same list as JSON: each unit's kind and name, and why it does not run here.
    let json = sb.json(&["interactive", "--list", "--file-size", "100000000"]);
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), units.len(), "{json}");
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap();
    assert_eq!(row("Audio")["kind"], "bench");
    assert!(row("Audio")["why_not_here"].is_null(), "{json}");
    let write = row("Write");
    assert_eq!(write["kind"], "load");
    assert!(
        write["why_not_here"]
            .as_str()
            .is_some_and(|w| w.contains("no room for its files")),
        "{json}"
    );
}

#[test]
fn log_file_is_named_after_the_kernel_and_console_only_writes_none() {
    let _g = serial();
    let sb = Sandbox::new();
    let logs = sb.dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let release =
        String::from_utf8(StdCommand::new("uname").arg("-r").output().unwrap().stdout).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "interactive",
            "-t",
            "1",
            "--exact-time",
            "--settle-ms",
            "100",
            "-W",
            "Audio",
            "-w",
            "None",
            "--log-dir",
        ];
        args.push(logs.to_str().unwrap());
        args.extend(extra);
        let out = sb.cmd().args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["-c"]);
    assert_eq!(
        std::fs::read_dir(&logs).unwrap().count(),
        0,
        "-c wrote a log file"
    );
    let said = run(&["-m", "first light"]);
    let files: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    assert!(
        said.contains(&format!("Log: {}\n", files[0].display())),
        "{said}"
    );
    let name = files[0].file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.contains(release.trim()) && name.ends_with(".log"),
        "{name}"
    );
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains(&format!("Benchmarking kernel {}", release.trim())));
    assert!(text.contains("Comment: first light"));
    assert!(
        text.contains("--- Benchmarking simulated cpu of Audio in the presence of simulated ---")
    );
    assert!(text.contains("\nNone\t"));
    // -q: the report alone; the log is still written, its line left out.
    let quiet = run(&["-q", "-m", "second"]);
    assert!(!quiet.contains("Log:"), "{quiet}");
    assert!(
        quiet.contains("--- Benchmarking simulated cpu of Audio"),
        "{quiet}"
    );
    // Appended to the same file, or a new one when the minute (in its name) has changed.
    let logged = std::fs::read_dir(&logs).unwrap().any(|e| {
        std::fs::read_to_string(e.unwrap().path())
            .unwrap()
            .contains("Comment: second")
    });
    assert!(logged, "the -q run wrote no log");
}

/// Children of `pid`, from /proc/*/stat.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
            after.split_whitespace().nth(1) == Some(&pid.to_string())
        })
        .collect()
}

/// (thread name, policy, rt priority) of every thread of `pid`, from /proc/PID/task/TID/stat.
fn thread_policies(pid: u32) -> Vec<(String, u32, u32)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| {
            let stat = std::fs::read_to_string(t.ok()?.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_string();
            // Fields after the name start at field 3; rt_priority is field 40, policy 41.
            let fields: Vec<&str> = rest.split_whitespace().collect();
            Some((
                name,
                fields.get(38)?.parse().ok()?,
                fields.get(37)?.parse().ok()?,
            ))
        })
        .collect()
}

fn spawn_interactive(sb: &Sandbox, args: &[&str]) -> std::process::Child {
    sb.std_cmd()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn every_timekeeper_is_real_time_as_interbenchs_and_every_task_is_not() {
    let _g = serial();
    let sb = Sandbox::new();
    // A 6 s pair: CI once ended a 3 s one before this test's poller (a plain thread, on two
    // CPUs busy with the X load and the other tests) had seen both workers at once.
    let mut child = spawn_interactive(
        &sb,
        &short_run("6", "200", &["-W", "Audio", "-w", "X", "--json"]),
    );
    let pid = child.id();
    // Wait until both workers are up and the bench's timekeeper exists, or the run has ended.
    // The deadline is only a guard: alone the run takes about 20 s, and under CI's other tests
    // its calibration and noise check took longer than a 20 s deadline once.
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut bench_threads, mut load_threads) = (Vec::new(), Vec::new());
    while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(100));
        let kids = children(pid);
        let threads: Vec<_> = kids.iter().map(|&k| thread_policies(k)).collect();
        let bench = threads
            .iter()
            .position(|t| t.iter().any(|(n, _, _)| n == "hb-bench"));
        let load = threads
            .iter()
            .position(|t| t.iter().any(|(n, _, _)| n == "hb-sim-load"));
        if let (Some(b), Some(l)) = (bench, load) {
            if threads[b]
                .iter()
                .filter(|(n, _, _)| n == "hb-timekeeper")
                .count()
                == 1
                && threads[l]
                    .iter()
                    .filter(|(n, _, _)| n == "hb-timekeeper")
                    .count()
                    == 1
            {
                bench_threads = threads[b].clone();
                load_threads = threads[l].clone();
                break;
            }
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(!bench_threads.is_empty(), "never saw the workers' threads");
    // SCHED_FIFO is policy 1, SCHED_OTHER 0.
    for (name, policy, prio) in &bench_threads {
        match name.as_str() {
            "hb-timekeeper" => assert_eq!((*policy, *prio), (1, 96), "bench timekeeper"),
            _ => assert_eq!(*policy, 0, "bench thread {name}"),
        }
    }
    // The X load's timekeeper too, as interbench v0.31 runs a load's; its task does not.
    for (name, policy, prio) in &load_threads {
        match name.as_str() {
            "hb-timekeeper" => assert_eq!((*policy, *prio), (1, 96), "load timekeeper"),
            _ => assert_eq!(*policy, 0, "load thread {name} is not SCHED_OTHER"),
        }
    }
    // The report says what the kernel showed, as the workers reported it themselves.
    let shown = sb.cmd().args(["results", "show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("Timekeepers: SCHED_FIFO 96; tasks: SCHED_OTHER (each as the bench worker's own sched_getscheduler reported it); load threads: SCHED_OTHER and SCHED_FIFO 96 (a Video, X or Custom load's timekeeper among them)"),
        "{text}"
    );
}

#[test]
fn a_burn_that_cannot_fit_its_interval_misses_whole_intervals_as_interbench_counts_them() {
    let _g = serial();
    let sb = Sandbox::new();
    // Custom: 10 ms of CPU every 20 ms, everything on one CPU (-u) with six Burn threads:
    // the task gets about a seventh of that CPU, so its burn takes about 70 ms and ends past
    // its deadline, every period (even if the CPU ran twice as fast as calibrated: one CI run
    // with three Burn threads met 59% of its deadlines, its burns taking half the CPU time the
    // calibration implied, and waking tasks getting more than their even share).
    let r = sb.json(&[
        "interactive",
        "-c",
        "-u",
        "-L",
        "6",
        "-C",
        "50",
        "-I",
        "20000",
        "-W",
        "Custom",
        "-w",
        "None",
        "-w",
        "Burn",
        "-t",
        "3",
        "--exact-time",
        "--settle-ms",
        "200",
    ]);
    let interval_ns = 20e6;
    let alone = measurement(&r, "Custom", "None");
    let loaded = measurement(&r, "Custom", "Burn");
    assert!(f(&alone["deadlines_met_pct"]) > 90.0, "{alone}");
    assert!(f(&loaded["deadlines_met_pct"]) < 50.0, "{loaded}");
    for m in [alone, loaded] {
        // interbench's latency: each period's wake-up delay plus one interval per deadline it
        // missed. So the samples add up to whole intervals for the missed deadlines and a
        // remainder of wake-up delays, each under an interval.
        assert_eq!(m["samples_truncated"], false);
        let samples: Vec<f64> = m["samples_ns"].as_array().unwrap().iter().map(f).collect();
        let c = &m["counts"];
        assert_eq!(samples.len() as f64, f(&c["periods"]));
        let wake_parts = samples.iter().sum::<f64>() - interval_ns * f(&c["deadlines_missed"]);
        assert!(
            wake_parts >= 0.0 && wake_parts < interval_ns * samples.len() as f64,
            "{wake_parts} ns of wake-up delay over {} periods: {m}",
            samples.len()
        );
    }
    // Under the Burn, the latency is dominated by the missed intervals, not by the wake-ups.
    let lat = f(&loaded["latency"]["mean_ns"]);
    assert!(lat > interval_ns / 2.0, "{loaded}");
    assert!(f(&loaded["wake"]["mean_ns"]) < lat, "{loaded}");
}

#[test]
fn t_is_rounded_up_to_ten_seconds_unless_exact_time_and_x_says_how_far_it_ramped() {
    let _g = serial();
    let sb = Sandbox::new();
    // -t 3: interbench runs 10 s a pair. Stopped once the header says so.
    let mut child = spawn_interactive(
        &sb,
        &["interactive", "-c", "-t", "3", "-W", "Audio", "-w", "None"],
    );
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let header = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.starts_with("Using"))
        .unwrap();
    assert!(
        header.ends_with("running every load for 10 seconds"),
        "{header}"
    );
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap();
    let stored = sb.json(&["results", "show", "1"]);
    let settings = &interactive(&stored)["settings"];
    assert_eq!(
        (
            settings["duration_s"].as_u64(),
            settings["requested_s"].as_u64()
        ),
        (Some(10), Some(3))
    );
    let shown = sb.cmd().args(["results", "show", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout)
        .contains("-t 3 was rounded up to 10 s, as interbench does"));

    // --exact-time keeps 3 s: X goes through the first 30-odd steps of its 101-step ramp.
    let r = sb.json(&short_run("3", "0", &["-W", "X", "-w", "None"]));
    let x = measurement(&r, "X", "None");
    let steps = x["counts"]["periods"].as_u64().unwrap();
    assert!((20..=32).contains(&steps), "{steps} steps in 3 s");
    // What X asked for is the mean of the steps it went through, 0 to steps - 1 %.
    let asked = f(&x["asked_cpu_pct"]);
    assert!(
        (asked - (steps - 1) as f64 / 2.0).abs() < 1.0,
        "{asked} for {steps} steps"
    );
    let shown = sb.cmd().args(["results", "show", "2"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    let row = text.lines().find(|l| l.starts_with("None\t")).unwrap();
    assert!(
        row.ends_with(&format!("(X ramp 0-{}% only)", steps - 1)),
        "{row}"
    );
}

/// Audio under Write and under Read, files of `file_mb` in the sandbox's work directory, each
/// pair `seconds` long, with `extra` options: the result.
fn audio_under_write_and_read(sb: &Sandbox, file_mb: u32, seconds: u32, extra: &[&str]) -> Value {
    let work = sb.work_dir();
    let (file_mb, seconds) = (file_mb.to_string(), seconds.to_string());
    let mut args = vec![
        "interactive",
        "-c",
        "-W",
        "Audio",
        "-w",
        "Write",
        "-w",
        "Read",
        "--file-size",
        &file_mb,
        "-t",
        &seconds,
        "--exact-time",
        "--settle-ms",
        "200",
        "--workdir",
        work.to_str().unwrap(),
    ];
    args.extend(extra);
    sb.json(&args)
}

#[test]
fn page_cache_reads_and_writes_as_interbench_v031_and_the_report_says_so() {
    let _g = serial();
    let sb = Sandbox::new();
    let r = audio_under_write_and_read(&sb, 16, 1, &["--page-cache"]);
    assert_eq!(interactive(&r)["settings"]["page_cache"], true, "{r}");
    // Written through the cache: nothing waited for on the device; whole passes over the
    // 16 MiB file, each opened anew and closed, as v0.31's fopen("w")/fclose, and the file
    // removed when the load stopped.
    let write = &measurement(&r, "Audio", "Write")["load_report"];
    let passes = write["write_passes"].as_u64().unwrap();
    assert!(passes >= 1, "{write}");
    assert!(
        write["bytes_handed"].as_u64().unwrap() >= passes * (16 << 20),
        "{write}"
    );
    assert_eq!(write["bytes_written"], 0, "{write}");
    let left: Vec<_> = std::fs::read_dir(sb.work_dir()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    // Read from the cache: many passes over a 16 MiB file in a second.
    let read = &measurement(&r, "Audio", "Read")["load_report"];
    assert!(read["read_passes"].as_u64().unwrap() >= 2, "{read}");
    // The file was in the cache from the start, as interbench's (written, synced, left there):
    // not even its first pass came from the device (under 8 of its 16 MiB; the device's
    // counter holds other processes' reads too).
    if let Some(from_device) = read["device"]["bytes_read"].as_u64() {
        assert!(from_device < 8 << 20, "{read}");
    }
    let shown = sb.cmd().args(["results", "show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("the file kept in the page cache (--page-cache, as interbench v0.31)")
            && text.contains("through the page cache, never waited for"),
        "{text}"
    );
}

#[test]
fn relative_sleep_is_stored_and_the_report_says_which_sleep_the_timekeepers_made() {
    let _g = serial();
    let sb = Sandbox::new();
    for (id, flag, said) in [
        ("1", None, "Timekeepers' sleep: to the absolute deadline"),
        (
            "2",
            Some("--relative-sleep"),
            "Timekeepers' sleep: relative, from when the task's request reached them (--relative-sleep, as interbench v0.31)",
        ),
    ] {
        let mut args = vec![
            "interactive", "-c", "-W", "Audio", "-w", "None", "-t", "1", "--exact-time",
            "--settle-ms", "100",
        ];
        args.extend(flag);
        let r = sb.json(&args);
        let settings = &interactive(&r)["settings"];
        assert_eq!(settings.get("relative_sleep").is_some(), flag.is_some(), "{settings}");
        let m = measurement(&r, "Audio", "None");
        assert!(m["latency"]["count"].as_u64().unwrap() >= 10, "{m}");
        let shown = sb.cmd().args(["results", "show", id]).output().unwrap();
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(text.contains(said), "{text}");
    }
}

#[test]
fn the_disk_loads_reach_the_device_and_say_how_much() {
    let _g = serial();
    let sb = Sandbox::new();
    let r = audio_under_write_and_read(&sb, 32, 2, &[]);
    let load = &measurement(&r, "Audio", "Write")["load_report"];
    let handed = load["bytes_handed"].as_u64().unwrap();
    let written = load["bytes_written"].as_u64().unwrap();
    // At least one whole pass of the 32 MiB file went out and was waited for.
    assert!(written >= 32 << 20, "{load}");
    assert!(handed >= written, "{load}");
    let device = &load["device"];
    if device.is_null() {
        eprintln!("skipped the device check: the work directory has no block device");
        return;
    }
    // The device's own counter rose by at least what the load says reached it.
    let on_device = device["bytes_written"].as_u64().unwrap();
    assert!(on_device >= written, "{load}");
    // The Read load reads from the device, not from the page cache: it drops the file after
    // every pass and before and after each pair.
    let load = &measurement(&r, "Audio", "Read")["load_report"];
    let read = load["bytes_read"].as_u64().unwrap();
    assert!(read >= 32 << 20, "{load}");
    let from_device = load["device"]["bytes_read"].as_u64().unwrap();
    assert!(from_device as f64 >= 0.9 * read as f64, "{load}");
}

/// Starts Audio under None and then under `second_load`, its files in `work`, and returns once
/// the None row is printed: the second pair is then running.
fn start_second_pair(
    sb: &Sandbox,
    work: &Path,
    second_load: &str,
) -> (
    std::process::Child,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
) {
    let mut child = spawn_interactive(
        sb,
        &short_run(
            "3",
            "200",
            &[
                "-W",
                "Audio",
                "-w",
                "None",
                "-w",
                second_load,
                "--file-size",
                "32",
                "--workdir",
                work.to_str().unwrap(),
            ],
        ),
    );
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().starts_with("None\t") {
            break;
        }
    }
    (child, lines)
}

#[test]
fn ctrl_c_leaves_no_worker_and_no_file() {
    let _g = serial();
    let sb = Sandbox::new();
    let work = sb.dir.path().join("work-ctrl-c");
    std::fs::create_dir(&work).unwrap();
    let (mut child, lines) = start_second_pair(&sb, &work, "Compile");
    let pid = child.id() as i32;
    std::thread::sleep(Duration::from_millis(1500));
    let marker = work.to_str().unwrap().to_string();
    assert!(
        !workers_with(&marker).is_empty(),
        "the Compile worker should be running"
    );
    assert!(
        std::fs::read_dir(&work).unwrap().count() > 0,
        "the Compile files should exist"
    );
    // SAFETY: kill(2) to our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let _rest: Vec<_> = lines.collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        workers_with(&marker).is_empty(),
        "a worker outlived the coordinator"
    );
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "files left behind"
    );
    let r: Value = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
    assert_eq!(interactive(&r)["measurements"].as_array().unwrap().len(), 1);
}

#[test]
fn a_killed_worker_stops_the_run_and_keeps_what_was_measured() {
    let _g = serial();
    let sb = Sandbox::new();
    let work = sb.dir.path().join("work-kill");
    std::fs::create_dir(&work).unwrap();
    let (child, lines) = start_second_pair(&sb, &work, "Write");
    std::thread::sleep(Duration::from_millis(1000));
    let marker = work.to_str().unwrap().to_string();
    let load = workers_with(&marker);
    assert_eq!(load.len(), 1, "one Write load worker: {load:?}");
    // SAFETY: kill(2) to our grandchild.
    assert_eq!(unsafe { libc::kill(load[0] as i32, libc::SIGKILL) }, 0);
    let _rest: Vec<_> = lines.collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Write load worker") && err.contains("killed by signal 9"),
        "{err}"
    );
    assert!(workers_with(&marker).is_empty());
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "files left behind"
    );
    let r: Value = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
    assert_eq!(interactive(&r)["measurements"].as_array().unwrap().len(), 1);
}

/// The `Cpus_allowed_list` of a /proc status file.
fn cpus_allowed(status: &str) -> Option<String> {
    let status = std::fs::read_to_string(status).ok()?;
    let line = status
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

#[test]
fn uniprocessor_pins_every_worker_to_one_cpu_but_the_timekeepers() {
    let _g = serial();
    let sb = Sandbox::new();
    let child = spawn_interactive(
        &sb,
        &[
            "interactive",
            "-c",
            "-u",
            "-t",
            "2",
            "--exact-time",
            "--settle-ms",
            "300",
            "-W",
            "Audio",
            "-w",
            "Burn",
            "-L",
            "2",
            "--json",
        ],
    );
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut masks = Vec::new();
    let mut timekeeper_mask = None;
    while Instant::now() < deadline && (masks.len() < 2 || timekeeper_mask.is_none()) {
        std::thread::sleep(Duration::from_millis(100));
        let kids = children(pid);
        masks = kids
            .iter()
            .filter_map(|k| cpus_allowed(&format!("/proc/{k}/status")))
            .collect();
        timekeeper_mask = kids.iter().find_map(|k| {
            std::fs::read_dir(format!("/proc/{k}/task"))
                .ok()?
                .filter_map(|t| t.ok())
                .find(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "hb-timekeeper")
                })
                .and_then(|t| cpus_allowed(&t.path().join("status").to_string_lossy()))
        });
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(masks.len(), 2, "never saw both workers");
    for m in &masks {
        assert!(
            m.parse::<u32>().is_ok(),
            "a worker may run on {m:?}, not one CPU"
        );
    }
    assert_eq!(masks[0], masks[1]);
    // The bench's timekeeper put itself back on every CPU this run had, as interbench's do.
    let whole = cpus_allowed("/proc/self/status").unwrap();
    assert_eq!(timekeeper_mask.as_deref(), Some(whole.as_str()));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        interactive(&r)["settings"]["pinned_cpu"]
            .as_u64()
            .map(|c| c.to_string()),
        Some(masks[0].clone())
    );
}

#[test]
fn a_pinned_run_leaves_the_next_run_of_the_process_free() {
    let _g = serial();
    let sb = Sandbox::new();
    // Two runs of -u in one process (--repeat): the second starts with the first's pin gone.
    let out = sb
        .cmd()
        .args([
            "interactive",
            "--repeat",
            "2",
            "--json",
            "--no-noise-check",
            "-u",
            "-c",
            "-t",
            "1",
            "--exact-time",
            "--settle-ms",
            "50",
            "-W",
            "Audio",
            "-w",
            "None",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let allowed: Vec<u64> = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Value>()
        .map(|r| r.unwrap()["environment"]["cpus_allowed"].as_u64().unwrap())
        .collect();
    let here = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(allowed, [here, here], "the pin of -u outlived its run");
}

/// A short run that calibrates (no `-l`): Audio under None for 1 s.
const CALIBRATED_AUDIO: [&str; 11] = [
    "interactive",
    "-c",
    "-W",
    "Audio",
    "-w",
    "None",
    "-t",
    "1",
    "--exact-time",
    "--settle-ms",
    "100",
];

/// Writes a calibration cache holding `cal` at `loops_per_ms`, as a sure measured figure; its
/// path and the entry's key.
fn plant_calibration(sb: &Sandbox, cal: &Value, loops_per_ms: u64) -> (PathBuf, String) {
    let mut planted = cal.clone();
    planted["loops_per_ms"] = loops_per_ms.into();
    planted["source"] = "measured".into();
    let obj = planted.as_object_mut().unwrap();
    obj.remove("cache_check");
    obj.remove("unsure");
    let key = cal["key"].as_str().unwrap().to_string();
    std::fs::create_dir_all(sb.cache_dir()).unwrap();
    let cache = sb.cache_dir().join("calibration.json");
    let mut entries = serde_json::Map::new();
    entries.insert(key.clone(), planted);
    std::fs::write(
        &cache,
        serde_json::json!({ "entries": entries }).to_string(),
    )
    .unwrap();
    (cache, key)
}

#[test]
fn a_cached_figure_far_above_the_loops_speed_stays_and_the_run_is_flagged() {
    let _g = serial();
    let sb = Sandbox::new();
    let args = CALIBRATED_AUDIO;
    let first = sb.json(&args);
    let cal = interactive(&first)["calibration"].clone();
    // Five times the speed found, as if cached on a quiet host and this CPU were now slowed
    // to a fifth by a busy neighbour: the check fails, the loop is measured again, and that
    // figure (this run's speed) is used, flagged, while the cache keeps the faster one. (Five,
    // not three: on this shared VM a first calibration once ran at half speed, so three times
    // its figure was only 1.5 times the loop's real speed.)
    let planted = cal["loops_per_ms"].as_u64().unwrap() * 5;
    let (cache, key) = plant_calibration(&sb, &cal, planted);
    let second = sb.json(&args);
    let cal = &interactive(&second)["calibration"];
    assert_eq!(cal["cache_check"]["kept"], false, "{cal}");
    assert_eq!(cal["source"], "measured", "{cal}");
    assert!(cal["loops_per_ms"].as_u64().unwrap() < planted / 2, "{cal}");
    // Flagged: by this rule, or (on a host too busy for interbench's rule) by that one first.
    let why = cal["unsure"].as_str().expect("flagged unsure");
    assert!(
        why.contains(&format!("from the {planted} this host's cache holds"))
            || why.contains("no check after a 1000 ms rest passed"),
        "{cal}"
    );
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert_eq!(now["entries"][&key]["loops_per_ms"], planted, "{now}");
    // The summary says so.
    let shown = sb.cmd().args(["results", "show", "2"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("Calibration unsure"), "{text}");
}

#[test]
fn a_cached_calibration_is_checked_and_a_wrong_one_measured_again() {
    let _g = serial();
    let sb = Sandbox::new();
    let args = CALIBRATED_AUDIO;
    let first = sb.json(&args);
    let cal = interactive(&first)["calibration"].clone();
    // Plant a third of the speed found: the check's 1 ms burn after a rest takes a third of
    // a millisecond, far outside interbench's 5%.
    let third = cal["loops_per_ms"].as_u64().unwrap() / 3;
    let (cache, key) = plant_calibration(&sb, &cal, third);

    let second = sb.json(&args);
    let cal = &interactive(&second)["calibration"];
    let check = &cal["cache_check"];
    assert_eq!(check["cached_loops_per_ms"], third, "{cal}");
    assert_eq!(check["kept"], false, "{cal}");
    assert_eq!(cal["source"], "measured", "{cal}");
    assert!(
        cal["loops_per_ms"].as_u64().unwrap() > third * 3 / 2,
        "{cal}"
    );
    // The planted figure is gone from the cache: replaced by a sure one, or dropped.
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert_ne!(now["entries"][&key]["loops_per_ms"], third, "{now}");
    let shown = sb.cmd().args(["results", "show", "2"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains(&format!("Cached calibration checked (one 1 ms burn after a 1 s rest, as interbench's check): the cached loops_per_ms {third}"))
            && text.contains("measured again."),
        "{text}"
    );
}

/// Each pair carries the host's account of the bench worker's threads from the task's start to
/// its stop: Audio wakes 20 times a second (voluntary switches), and under Burn, which keeps
/// every CPU busy, it waits on the run queue more than alone.
#[test]
fn each_pair_has_the_hosts_account_of_the_simulated_task() {
    let _g = serial();
    let sb = Sandbox::new();
    let r = sb.json(&short_run(
        "2",
        "200",
        &["-W", "Audio", "-w", "None", "-w", "Burn"],
    ));
    let ms = r["suites"][0]["measurements"].as_array().unwrap().clone();
    let account = |load: &str| {
        ms.iter()
            .find(|m| m["load"] == load)
            .unwrap_or_else(|| panic!("no {load} pair: {r}"))["account"]
            .clone()
    };
    let (alone, burn) = (account("None"), account("Burn"));
    for a in [&alone, &burn] {
        let seconds = f(&a["wall_ns"]) / 1e9;
        assert!((1.5..4.0).contains(&seconds), "{a}");
        // interbench's Audio: a frame every 50 ms, each after a voluntary sleep.
        let per_s = f(&a["voluntary"]) / seconds;
        assert!((15.0..100.0).contains(&per_s), "{per_s}/s: {a}");
    }
    let wait = |a: &Value| f(&a["wait_ns"]) / f(&a["wall_ns"]);
    assert!(wait(&burn) > wait(&alone), "alone {alone}, burn {burn}");
}

/// The bench worker makes the simulated task's thread and its timekeeper before it says
/// `ready`, as interbench's benched process makes both before main starts it: where the kernel
/// first puts them decides which CPU they share with the load's threads. Both exist at `ready`;
/// the task works only after `start`.
#[test]
fn the_bench_worker_makes_its_task_and_timekeeper_before_ready() {
    let _g = serial();
    let spec = serde_json::json!({
        "role": "bench", "bench": "Audio", "custom": null,
        "loops_per_ms": common::loops_per_ms().parse::<u64>().unwrap(),
        "realtime": false, "timekeeping": {"fifo": false, "cpus": null},
        "nice": 0, "duration_ns": 1_000_000_000u64,
    });
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("hostbench"))
        .args(["__worker", &spec.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let names: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", child.id()))
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|c| c.trim().to_string())
        .collect();
    assert!(
        names.iter().any(|n| n == "hb-bench") && names.iter().any(|n| n == "hb-timekeeper"),
        "{names:?}"
    );
    use std::io::Write;
    writeln!(stdin, "start").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "started");
    std::thread::sleep(Duration::from_millis(300));
    writeln!(stdin, "stop").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    let report: Value = serde_json::from_str(line.strip_prefix("report ").unwrap()).unwrap();
    // Audio's 50 ms periods over 300 ms: a handful of samples, all after `start`.
    let n = report["latency"]["count"].as_u64().unwrap();
    assert!((2..=10).contains(&n), "{report}");
    assert!(child.wait().unwrap().success());
}
