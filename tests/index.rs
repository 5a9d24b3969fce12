//! `hostbench index` driven as a user would: real copies in real processes, real files, host
//! programs, a real SQLite store. Tests run for fractions of a second (`--seconds`).

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Sandbox;
use serde_json::Value;

/// `hostbench index ARGS --results-dir DIR --json`, its result and DIR, where UnixBench's report
/// files land (in the sandbox).
/// One test of this file at a time: a copy's account counts every tick of the CPUs it ran
/// on, so another test's copies running beside it would be counted as its own.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn index_json(sb: &Sandbox, args: &[&str]) -> (Value, std::path::PathBuf) {
    let results = sb.dir.path().join("results");
    let mut all = vec!["index"];
    all.extend_from_slice(args);
    all.extend(["--results-dir", results.to_str().unwrap()]);
    (sb.json(&all), results)
}

fn index(r: &Value) -> &Value {
    let suites = r["suites"].as_array().unwrap();
    assert_eq!(suites[0]["suite"], "index");
    &suites[0]
}

fn tests_of(r: &Value, pass: usize) -> Vec<Value> {
    index(r)["passes"][pass]["tests"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn every_test_runs_and_scores_in_its_unit() {
    let _g = serial();
    let sb = Sandbox::new();
    // The smoke test of the registry: every test `index --list` names (so a new one runs
    // without anyone adding it here) but the graphics ones, which have their own tests below.
    let listed = sb.cmd().args(["index", "--list"]).assert().success();
    let listed = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    let names: Vec<&str> = listed
        .lines()
        .filter(|l| !l.contains(" graphics: "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(names.len() >= 30, "{listed}");
    // The same list as JSON: a row a test, in the same order, each saying whether it runs here.
    let json = sb.json(&["index", "--list"]);
    let rows = json.as_array().unwrap();
    let json_names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(json_names.len(), listed.lines().count(), "{json}");
    assert!(json_names.contains(&"dhry2reg"), "{json}");
    assert!(
        rows.iter().all(|r| r["title"].is_string()
            && r["in_index"].is_boolean()
            && (r["why_not_here"].is_null() || r["why_not_here"].is_string())),
        "{json}"
    );
    let mut args = names.clone();
    args.extend([
        "--seconds",
        "0.3",
        "-i",
        "1",
        "-c",
        "1",
        "--workdir",
        sb.dir.path().to_str().unwrap(),
    ]);
    let (r, results) = index_json(&sb, &args);
    let tests = tests_of(&r, 0);
    let skipped = index(&r)["passes"][0]["skipped"].as_array().unwrap().len();
    assert_eq!(
        tests.len() + skipped,
        names.len(),
        "every non-graphics test ran or was skipped with a reason"
    );
    // Where the test dependencies must be there (CI), nothing may be skipped: a skip there
    // would hide a test that cannot run.
    if common::deps_required() {
        assert_eq!(skipped, 0, "{}", index(&r)["passes"][0]["skipped"]);
    }
    let units = [
        ("dhry2reg", "lps"),
        ("whetstone-double", "MWIPS"),
        ("syscall", "lps"),
        ("pipe", "lps"),
        ("context1", "lps"),
        ("spawn", "lps"),
        ("execl", "lps"),
        ("fstime", "KBps"),
        ("fsdisk-r", "KBps"),
        ("fsbuffer-w", "KBps"),
        ("shell1", "lpm"),
        ("shell16", "lpm"),
        ("arithoh", "lps"),
        ("double", "lps"),
        ("hanoi", "lps"),
        ("grep", "lpm"),
        ("sysexec", "lps"),
    ];
    for (name, unit) in units {
        let t = tests
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} did not run"));
        assert_eq!(t["unit"], unit, "{name}");
        assert!(t["score"]["score"].as_f64().unwrap() > 0.0, "{name}: {t}");
    }
    // Each copy reports the timebase its test is scored with (results that predate the stored
    // timebase are read with the copies' one).
    for t in &tests {
        let reported = &t["iterations"][0][0]["timebase"];
        assert_eq!(&t["timebase"], reported, "{}", t["name"]);
    }
    // A full set of index tests gives an index score; no graphics test, no graphics index.
    let pass = &index(&r)["passes"][0];
    assert_eq!(pass["indexed"], 12);
    assert!(pass["system_index"].as_f64().unwrap() > 0.0);
    assert!(pass["index_2d"].is_null() && pass["index_3d"].is_null());
    // UnixBench's reports, text and HTML.
    let files: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2);
    let text = files.iter().find(|p| p.extension().is_none()).unwrap();
    let body = std::fs::read_to_string(text).unwrap();
    assert!(
        body.contains("System Benchmarks Index Score") && body.contains("Language: "),
        "{body}"
    );
    assert!(text.file_name().unwrap().to_string_lossy().ends_with("-01"));
    // What the arithmetic tests time is said beside them (UnixBench's flags empty the loop).
    let int = body
        .lines()
        .find(|l| l.starts_with("Arithmetic Test (int)"))
        .unwrap();
    assert!(
        int.contains("the compiler may drop the arithmetic")
            || int.contains("the built-in version really does the arithmetic"),
        "{int}"
    );
    assert!(std::fs::read_to_string(text.with_extension("html"))
        .unwrap()
        .contains("<table>"));
    // No file of the tests is left behind.
    assert!(!std::fs::read_dir(sb.dir.path()).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(".hostbench-index")));
}

#[test]
fn host_program_tests_run_where_the_program_is_and_say_why_not_elsewhere() {
    let _g = serial();
    let sb = Sandbox::new();
    let (r, results) = index_json(
        &sb,
        &[
            "C",
            "dc",
            "grep",
            "shell1",
            "--seconds",
            "1.5",
            "-i",
            "1",
            "-c",
            "1",
        ],
    );
    let tests = tests_of(&r, 0);
    let skipped = index(&r)["passes"][0]["skipped"]
        .as_array()
        .unwrap()
        .clone();
    for (name, program) in [
        ("C", "cc"),
        ("dc", "dc"),
        ("grep", "grep"),
        ("shell1", "sort"),
    ] {
        let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .any(|d| d.join(program).is_file());
        match tests.iter().find(|t| t["name"] == name) {
            Some(t) => {
                assert!(on_path, "{name} ran without {program}");
                assert_eq!(t["unit"], "lpm");
                // At least one whole loop of the host program completed.
                assert!(
                    t["iterations"][0][0]["count"].as_f64().unwrap() >= 1.0,
                    "{name}: {t}"
                );
            }
            None => {
                assert!(
                    !on_path,
                    "{name} did not run though {program} is there: {skipped:?}"
                );
                let s = skipped.iter().find(|s| s["name"] == name).unwrap();
                assert!(s["reason"].as_str().unwrap().contains(program));
            }
        }
    }
    // Each of these tests' inputs is hostbench's own, not UnixBench's file: the report says
    // so beside the test (dc's input is UnixBench's computation, and not marked).
    let report = newest_report(&results);
    for (name, msg, what) in [
        ("C", "C Compiler Throughput", "cctest.c is hostbench's own"),
        (
            "grep",
            "Grep a large file",
            "large.txt is generated by hostbench: an strace log of UnixBench's 708,495 bytes",
        ),
        (
            "shell1",
            "Shell Scripts (1 concurrent)",
            "sort.src is generated by hostbench: a shell script of UnixBench's 8,546 bytes",
        ),
    ] {
        if tests.iter().any(|t| t["name"] == name) {
            let line = report.lines().find(|l| l.starts_with(msg)).unwrap();
            assert!(
                line.contains(&format!("[not UnixBench's: {what}")),
                "{line}"
            );
        }
    }
    let dc = report.lines().find(|l| l.starts_with("Dc: sqrt(2)"));
    assert!(dc.is_none_or(|l| !l.contains("not UnixBench's")), "{dc:?}");
    // grep has a baseline in UnixBench's index.base: Run's "Non-Index Benchmarks" index, partial
    // without sysexec, every test of the category listed, those without a baseline with "---".
    if tests.iter().any(|t| t["name"] == "grep") {
        let pass = &index(&r)["passes"][0];
        assert_eq!(pass["indexed_misc"], 1, "{pass}");
        assert!(pass["index_misc"].as_f64().unwrap() > 0.0);
        assert!(
            report.contains("Non-Index Benchmarks Partial Index")
                && report.contains("Non-Index Benchmarks Index Score (Partial Only)"),
            "{report}"
        );
        if tests.iter().any(|t| t["name"] == "dc") {
            let row = report
                .lines()
                .rev()
                .find(|l| l.starts_with("Dc: sqrt(2)"))
                .unwrap();
            assert!(row.contains("---"), "{row}");
        }
    }
    // One run, one HTML report: it carries the same marks.
    let html = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .expect("an HTML report");
    assert!(
        !tests.iter().any(|t| t["name"] == "grep")
            || html.contains("[not UnixBench's: large.txt is generated by hostbench"),
        "{html}"
    );
}

#[test]
fn two_copies_add_up_and_aliases_expand() {
    let _g = serial();
    let sb = Sandbox::new();
    let (r, _) = index_json(
        &sb,
        &[
            "dhrystone",
            "pipe",
            "--seconds",
            "0.3",
            "-i",
            "2",
            "-c",
            "2",
        ],
    );
    assert_eq!(
        index(&r)["settings"]["tests"],
        serde_json::json!(["dhry2reg", "pipe"])
    );
    for t in tests_of(&r, 0) {
        assert_eq!(t["copies"], 2);
        let iterations = t["iterations"].as_array().unwrap();
        assert_eq!(iterations.len(), 2);
        for (it, pass) in iterations.iter().zip(t["passes"].as_array().unwrap()) {
            let copies = it.as_array().unwrap();
            assert_eq!(copies.len(), 2);
            let sum: f64 = copies.iter().map(|c| c["count"].as_f64().unwrap()).sum();
            assert!((pass["count"].as_f64().unwrap() - sum).abs() < 1e-6);
        }
    }
}

#[test]
fn a_missing_host_program_skips_its_test() {
    let _g = serial();
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args([
            "index",
            "dc",
            "hanoi",
            "--seconds",
            "0.2",
            "-i",
            "1",
            "-c",
            "1",
            "--json",
            "--results-dir",
        ])
        .arg(sb.dir.path().join("results"))
        .env("PATH", sb.dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pass = &index(&r)["passes"][0];
    assert_eq!(pass["skipped"][0]["name"], "dc");
    assert!(pass["skipped"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("dc"));
    assert_eq!(pass["tests"][0]["name"], "hanoi");
}

#[test]
fn ctrl_c_stops_at_once_and_leaves_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let work = sb.work_dir();
    let mut child = sb
        .std_cmd()
        .args([
            "index",
            "fsdisk",
            "execl",
            "--seconds",
            "30",
            "-i",
            "1",
            "-c",
            "2",
            "--workdir",
            work.to_str().unwrap(),
            "--results-dir",
        ])
        .arg(sb.dir.path().join("results"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let marker = work.to_str().unwrap().to_string();
    let copies = || common::workers_with(&marker).len();
    // fsdisk starts after UnixBench's pause before a file test (sync, sleeps): wait for its
    // copies, then a little longer so that they are writing.
    let waited = Instant::now();
    while copies() < 2 && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(copies(), 2, "two fsdisk copies should be running");
    let signalled = Instant::now();
    // SAFETY: kill(2) to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "the stop waited for the test to end"
    );
    assert_eq!(status.code(), Some(130));
    assert_eq!(copies(), 0, "a copy outlived the run");
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "files left behind"
    );
    let r = sb.json(&["results", "show", "1"]);
    assert_eq!(r["incomplete"], true);
}

#[test]
fn a_full_disk_fails_that_test_the_run_goes_on_and_the_result_says_incomplete() {
    let _g = serial();
    use std::os::unix::process::CommandExt;
    let sb = Sandbox::new();
    let work = sb.work_dir();
    let mut cmd = sb.std_cmd();
    cmd.args([
        "index",
        "fsdisk-w",
        "hanoi",
        "--seconds",
        "0.5",
        "-i",
        "1",
        "-c",
        "1",
        "--json",
        "--workdir",
        work.to_str().unwrap(),
        "--results-dir",
    ])
    .arg(sb.dir.path().join("results"));
    // Files may grow to 4 MB: fsdisk's 8000 KB file cannot be written, as on a full disk.
    // SAFETY: setrlimit between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 4 << 20,
                rlim_max: 4 << 20,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A failed test is a failure, not a skip: exit 1, and the stored result is incomplete.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 test failed"), "{stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["incomplete"], true);
    let pass = &index(&r)["passes"][0];
    assert_eq!(pass["skipped"].as_array().unwrap().len(), 0);
    assert_eq!(pass["failed"][0]["name"], "fsdisk-w");
    let reason = pass["failed"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("File too large"), "{reason}");
    assert_eq!(pass["tests"][0]["name"], "hanoi");
    let stored = sb.json(&["results", "show", "1"]);
    assert_eq!(stored["incomplete"], true);
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "files left behind"
    );
}

/// Xvfb servers running now (the tests' own are private and must be gone after a run).
fn xvfb_count() -> usize {
    common::processes(|c| c.starts_with("Xvfb\0-displayfd")).len()
}

#[test]
fn graphics_tests_draw_on_a_private_xvfb_single_copy() {
    let _g = serial();
    if common::skip_without("graphics tests", &["Xvfb", "x11perf", "glxgears"]) {
        return;
    }
    let sb = Sandbox::new();
    let before = xvfb_count();
    // -c 2 alone: the graphics tests still run one copy; dhry2reg runs two.
    let r = sb.json(&[
        "index",
        "2d-rects",
        "ubgears",
        "dhry2reg",
        "--xvfb",
        "--seconds",
        "1",
        "-i",
        "1",
        "-c",
        "2",
        "--results-dir",
        sb.dir.path().join("results").to_str().unwrap(),
        "--workdir",
        sb.dir.path().to_str().unwrap(),
    ]);
    let ix = index(&r);
    assert!(ix["graphics_display"]
        .as_str()
        .unwrap()
        .starts_with("Xvfb :"));
    let tests = tests_of(&r, 0);
    let by = |name: &str| tests.iter().find(|t| t["name"] == name).unwrap().clone();
    for (name, unit, copies) in [
        ("2d-rects", "score", 1),
        ("ubgears", "fps", 1),
        ("dhry2reg", "lps", 2),
    ] {
        let t = by(name);
        assert_eq!(t["unit"], unit, "{name}");
        assert_eq!(t["copies"], copies, "{name}");
        assert!(t["score"]["score"].as_f64().unwrap() > 0.0, "{name}: {t}");
    }
    // Each graphics test has its baseline: a (partial) 2D index and a (partial) 3D index,
    // kept apart as UnixBench keeps them.
    let pass = &ix["passes"][0];
    assert!(pass["index_2d"].as_f64().unwrap() > 0.0, "{pass}");
    assert_eq!(pass["indexed_2d"], 1);
    assert!(pass["index_3d"].as_f64().unwrap() > 0.0, "{pass}");
    assert_eq!(pass["indexed_3d"], 1);
    assert_eq!(xvfb_count(), before, "the private Xvfb outlived the run");
}

#[test]
fn graphics_tests_without_their_programs_or_a_display_are_skipped_and_the_run_goes_on() {
    let _g = serial();
    let sb = Sandbox::new();
    // A PATH with Xvfb but without x11perf and glxgears.
    let bin = sb.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/usr/bin/Xvfb", bin.join("Xvfb")).unwrap();
    let run = |path: &std::path::Path, extra: &[&str]| -> Value {
        let out = sb
            .cmd()
            .args([
                "index",
                "2d-rects",
                "ubgears",
                "hanoi",
                "--seconds",
                "0.2",
                "-i",
                "1",
                "-c",
                "1",
                "--json",
            ])
            .args(extra)
            .arg("--results-dir")
            .arg(sb.dir.path().join("results"))
            .env("PATH", path)
            .env_remove("DISPLAY")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let reasons = |r: &Value| -> Vec<(String, String)> {
        index(r)["passes"][0]["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().into(),
                    s["reason"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let r = run(&bin, &["--xvfb"]);
    let skipped = reasons(&r);
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped[0].1.contains("x11perf") && skipped[0].1.contains("x11-apps"),
        "{skipped:?}"
    );
    assert!(
        skipped[1].1.contains("glxgears") && skipped[1].1.contains("mesa-utils"),
        "{skipped:?}"
    );
    assert_eq!(tests_of(&r, 0)[0]["name"], "hanoi");
    // No display and no Xvfb: the same two are skipped, saying what to install.
    let empty = sb.dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let skipped = reasons(&run(&empty, &[]));
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped
            .iter()
            .all(|s| s.1.contains("no X display") && s.1.contains("xvfb")),
        "{skipped:?}"
    );
}

/// The newest text report in `dir` (reports are numbered within the day).
fn newest_report(dir: &std::path::Path) -> String {
    let mut texts: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none())
        .collect();
    texts.sort();
    std::fs::read_to_string(texts.last().expect("a text report")).unwrap()
}

#[test]
fn the_cpu_tests_are_compiled_by_the_hosts_cc_once_and_the_builtin_versions_run_on_request() {
    let _g = serial();
    let sb = Sandbox::new();
    let results = sb.dir.path().join("results");
    let run = |extra: &[&str]| -> Value {
        let mut args = vec![
            "dhry2reg",
            "whetstone-double",
            "hanoi",
            "--seconds",
            "0.5",
            "-i",
            "1",
            "-c",
            "1",
        ];
        args.extend_from_slice(extra);
        index_json(&sb, &args).0
    };
    let flags = "-O3 -ffast-math -march=native -mtune=native";

    // First run: built now, into the cache directory, with UnixBench's flags.
    let first = run(&[]);
    let native = index(&first)["native"].clone();
    assert_eq!(native["built_now"], true, "{native}");
    assert_eq!(native["flags"], flags);
    assert!(!native["version"].as_str().unwrap().is_empty());
    let programs = std::path::PathBuf::from(native["path"].as_str().unwrap());
    assert!(
        programs.starts_with(sb.cache_dir()),
        "{} is not in the cache",
        programs.display()
    );
    // One program per test, as UnixBench builds them.
    for name in common::NATIVE_PROGRAMS {
        assert!(programs.join(name).is_file(), "no {name} built");
    }
    let program = programs.join("dhry2reg");
    let built_at = std::fs::metadata(&program).unwrap().modified().unwrap();
    for t in tests_of(&first, 0) {
        assert_eq!(t["native"], true, "{}", t["name"]);
        assert!(t["score"]["score"].as_f64().unwrap() > 0.0, "{t}");
    }
    let report = newest_report(&results);
    let header = report
        .lines()
        .find(|l| l.trim_start().starts_with("Compiler:"))
        .unwrap_or_else(|| panic!("no Compiler line:\n{report}"));
    assert!(header.contains(flags), "{header}");
    assert!(
        header.contains(native["version"].as_str().unwrap()),
        "{header}"
    );
    assert!(!report.contains("built-in version"), "{report}");

    // Second run: the same build, not rebuilt.
    let second = run(&[]);
    let again = &index(&second)["native"];
    assert_eq!(again["built_now"], false, "{again}");
    assert_eq!(again["path"], native["path"]);
    assert_eq!(
        std::fs::metadata(&program).unwrap().modified().unwrap(),
        built_at
    );

    // --builtin-cpu-tests: the Rust versions, and the report says so beside each test.
    let builtin = run(&["--builtin-cpu-tests"]);
    let ix = index(&builtin);
    assert!(ix["native"].is_null(), "{}", ix["native"]);
    assert!(ix["native_note"]
        .as_str()
        .unwrap()
        .contains("--builtin-cpu-tests"));
    for t in tests_of(&builtin, 0) {
        assert_eq!(t["native"], false, "{}", t["name"]);
        assert!(t["score"]["score"].as_f64().unwrap() > 0.0, "{t}");
    }
    let report = newest_report(&results);
    assert!(
        report.contains("Programs: the built-in versions"),
        "{report}"
    );
    assert_eq!(report.matches("built-in version)").count(), 3, "{report}");
}

#[test]
fn without_a_c_compiler_the_builtin_versions_run_and_the_report_says_why() {
    let _g = serial();
    let sb = Sandbox::new();
    let results = sb.dir.path().join("results");
    // A PATH with no cc on it.
    let bin = sb.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let out = sb
        .cmd()
        .env("PATH", &bin)
        .args([
            "index",
            "dhry2reg",
            "--seconds",
            "0.5",
            "-i",
            "1",
            "-c",
            "1",
        ])
        .arg("--results-dir")
        .arg(&results)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("built-in versions"), "{err}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ix = index(&r);
    assert!(ix["native"].is_null());
    assert!(ix["native_note"].as_str().unwrap().contains("cc"), "{ix}");
    assert_eq!(tests_of(&r, 0)[0]["native"], false);
    assert!(!sb.cache_dir().join("native").exists());
    let report = newest_report(&results);
    assert!(report.contains("no C compiler"), "{report}");
}

#[test]
fn every_test_process_runs_with_unixbenchs_language_or_the_one_asked_for() {
    let _g = serial();
    let sb = Sandbox::new();
    let results = sb.dir.path().join("results");
    // Stand-ins for sort (run by the shell test's script) and dc that write down the LANG
    // they see, then run the real program.
    let bin = sb.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = sb.dir.path().join("lang.log");
    let mut wrapped = vec!["sort"];
    if common::on_path("dc").is_some() {
        wrapped.push("dc");
    }
    for name in &wrapped {
        let real = common::on_path(name).unwrap();
        let script = bin.join(name);
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"{name} $LANG\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = std::env::join_paths(
        std::iter::once(bin.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let run = |extra: &[&str]| -> (Value, Vec<String>) {
        let _ = std::fs::remove_file(&log);
        let out = sb
            .cmd()
            .env("PATH", &path)
            .env("LANG", "C.UTF-8")
            .env_remove("LC_ALL")
            .args([
                "index",
                "shell1",
                "dc",
                "--seconds",
                "1",
                "-i",
                "1",
                "-c",
                "1",
            ])
            .args(extra)
            .arg("--results-dir")
            .arg(&results)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        (serde_json::from_slice(&out.stdout).unwrap(), lines)
    };

    // By default: en_US.utf8, whatever the caller's LANG.
    let (r, lines) = run(&[]);
    for name in &wrapped {
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("{name} "))),
            "{name} never ran: {lines:?}"
        );
    }
    assert!(
        lines.iter().all(|l| l.ends_with(" en_US.utf8")),
        "{lines:?}"
    );
    let language = index(&r)["language"].as_str().unwrap().to_string();
    assert!(language.starts_with("en_US.utf8 (charmap="), "{language}");

    // --lang C: every process sees C.
    let (r, lines) = run(&["--lang", "C"]);
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| l.ends_with(" C")), "{lines:?}");
    let other = index(&r)["language"].as_str().unwrap().to_string();
    assert!(other.starts_with("C (charmap="), "{other}");

    // compare notes the difference.
    let c = sb.json(&["compare", "1", "2"]);
    let notes = c["notes"].to_string();
    assert!(notes.contains("different language settings"), "{notes}");
}

#[test]
fn the_list_says_of_every_test_whether_it_runs_here_or_why_not() {
    let _g = serial();
    let sb = Sandbox::new();
    let list = |path: &str| {
        let out = sb
            .cmd()
            .env("PATH", path)
            .args(["index", "--list"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let here = list(&std::env::var("PATH").unwrap());
    let line = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"))
            .to_string()
    };
    // Every test of the registry, the index's marked; the CPU tests run anywhere (built in
    // when there is no cc).
    for name in [
        "dhry2reg", "syscall", "context1", "shell8", "fsdisk", "2d-rects", "ubgears",
    ] {
        line(&here, name);
    }
    assert!(here.lines().count() >= 40, "{here}");
    assert!(
        line(&here, "dhry2reg").contains("index") && line(&here, "dhry2reg").ends_with("runs here")
    );
    // With nothing on PATH: the host-program tests say which program is missing and where to
    // get it; the tests that need no program still run.
    let bare = list("/nonexistent");
    assert!(line(&bare, "dc").contains("not here: the host has no \"dc\" on PATH (Debian: dc)"));
    assert!(line(&bare, "2d-rects").contains("x11perf"));
    assert!(line(&bare, "syscall").ends_with("runs here"));
    // Nothing was measured or stored.
    assert!(!sb.db().exists());
    if common::on_path("dc").is_some() {
        assert!(line(&here, "dc").ends_with("runs here"));
    }
}

#[test]
fn a_default_run_on_fewer_cpus_than_are_online_names_both_counts() {
    let _g = serial();
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let sb = Sandbox::new();
    let mut cmd = sb.std_cmd();
    cmd.args(["index", "syscall", "--seconds", "0.2", "-i", "1"])
        .args(["--results-dir", sb.dir.path().join("r").to_str().unwrap()]);
    // The copy count a default run takes: the CPUs this process may use, here one.
    // SAFETY: sched_setaffinity in the child before exec touches only the child.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let note = text.lines().find(|l| l.starts_with("Copies: "));
    if online == 1 {
        assert!(note.is_none(), "{text}");
        return;
    }
    let note = note.unwrap_or_else(|| panic!("no Copies line:\n{text}"));
    assert!(
        note.contains("1 copy, 1 being the CPUs this process may use")
            && note.contains(&format!(
                "1 and {online} copies, {online} being the CPUs online"
            )),
        "{note}"
    );
    // Only one pass ran: the one CPU's.
    assert!(!text.contains("parallel copies of each test"), "{text}");
}

/// Each iteration carries the host's account of its copies: the system call test spends most
/// of its CPU's time in the kernel, Dhrystone almost none, and each copy was on its CPU for
/// about the whole iteration.
#[test]
fn each_iteration_has_the_hosts_account_of_its_copies() {
    let _g = serial();
    let sb = Sandbox::new();
    let (r, _) = index_json(
        &sb,
        &[
            "syscall",
            "dhry2reg",
            "-c",
            "1",
            "-i",
            "3",
            "--seconds",
            "0.3",
        ],
    );
    let tests = tests_of(&r, 0);
    let share = |t: &Value, field: &str| -> f64 {
        let a = t["accounts"].as_array().unwrap();
        assert_eq!(a.len(), t["passes"].as_array().unwrap().len(), "{t}");
        a.iter().map(|x| x[field].as_f64().unwrap()).sum::<f64>() / a.len() as f64
    };
    // The shares are of the ticks of the CPUs a copy ran on: where it moved to a CPU that
    // another test of this file kept busy in the kernel, that CPU's ticks count too. So
    // Dhrystone is judged by its cleanest iteration (another task only adds kernel time).
    let cleanest = |t: &Value, field: &str, pick: fn(f64, f64) -> f64, start: f64| -> f64 {
        t["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x[field].as_f64().unwrap())
            .fold(start, pick)
    };
    let by_name = |n: &str| tests.iter().find(|t| t["name"] == n).unwrap().clone();
    let (syscall, dhry) = (by_name("syscall"), by_name("dhry2reg"));
    assert!(
        share(&syscall, "system_pct") > cleanest(&dhry, "system_pct", f64::min, 100.0) + 30.0,
        "{syscall} {dhry}"
    );
    assert!(cleanest(&dhry, "user_pct", f64::max, 0.0) > 80.0, "{dhry}");
    for t in [&syscall, &dhry] {
        for a in t["accounts"].as_array().unwrap() {
            let on_cpu = a["run_ns"].as_f64().unwrap() / a["wall_ns"].as_f64().unwrap();
            assert!((0.5..=1.05).contains(&on_cpu), "{on_cpu}: {a}");
        }
    }
    // The index score carries the accounts of every iteration its tests' scores keep, so
    // compare can test them beside a score that moved: the export counts them.
    let stretches: Vec<(String, usize)> = sb
        .account_rows("1")
        .iter()
        .map(|r| (r["key"].clone(), r["account_stretches"].parse().unwrap()))
        .collect();
    let of = |end: &str| stretches.iter().find(|s| s.0.ends_with(end)).unwrap().1;
    assert!(of("/syscall") > 0 && of("/dhry2reg") > 0, "{stretches:?}");
    assert_eq!(
        of("/System Benchmarks Index Score"),
        of("/syscall") + of("/dhry2reg"),
        "{stretches:?}"
    );
}

/// A planted cause, found and named first: a thread spinning on the CPU that `index --pin`
/// holds the copy to makes dhry2reg worse, and `compare` says the copy waited on the run queue.
#[test]
fn compare_names_a_busy_loop_on_the_pinned_cpu_as_the_cause() {
    let _g = serial();
    let sb = Sandbox::new();
    let args = [
        "dhry2reg",
        "-c",
        "1",
        "--pin",
        "-i",
        "6",
        "--seconds",
        "0.3",
        "--no-noise-check",
    ];
    index_json(&sb, &args);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&stop);
    let spinner = std::thread::spawn(move || {
        // The copy's CPU: --pin takes the first this process may use, CPU 0 here.
        common::pin_to_cpu0();
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    });
    index_json(&sb, &args);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spinner.join().unwrap();
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
        .find(|r| r["key"].as_str().unwrap().ends_with("/dhry2reg"))
        .unwrap()
        .clone();
    assert_eq!(row["verdict"], "worse", "{row}");
    let changed = row["account"]["changed"].as_array().unwrap();
    assert_eq!(changed[0]["item"], "run-queue wait", "{row}");
    // The result itself says what was not quiet while each test ran: in its text and its page.
    let shown = sb.cmd().args(["results", "show", "2"]).output().unwrap();
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(
        shown.contains("not quiet while each was measured")
            && shown.contains("  dhry2reg, 1 copy, pinned: run-queue wait "),
        "{shown}"
    );
    // The run without the loop waited far less, if enough to be shown at all (the other
    // tests of this file run beside it).
    let wait_in = |text: &str| -> f64 {
        text.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("dhry2reg, 1 copy, pinned: run-queue wait ")
            })
            .and_then(|rest| rest.split(' ').next())
            .map_or(0.0, |v| v.parse().unwrap())
    };
    let quiet = sb.cmd().args(["results", "show", "1"]).output().unwrap();
    let quiet = String::from_utf8(quiet.stdout).unwrap();
    assert!(
        wait_in(&shown) > 5.0 * wait_in(&quiet).max(1.0),
        "{quiet}\n{shown}"
    );
    let page = sb.dir.path().join("r.html");
    sb.cmd()
        .args(["report", "2", "-o", page.to_str().unwrap()])
        .assert()
        .success();
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        page.contains("<td>dhry2reg, 1 copy, pinned</td><td>run-queue wait "),
        "the page's table"
    );
}

/// Each test's iteration starts (seconds from its pass's start), by test name.
fn starts(r: &Value) -> Vec<(String, Vec<f64>)> {
    tests_of(r, 0)
        .iter()
        .map(|t| {
            let s = t["started_s"].as_array().expect("started_s");
            let s: Vec<f64> = s.iter().map(|x| x.as_f64().unwrap()).collect();
            (t["name"].as_str().unwrap().to_string(), s)
        })
        .collect()
}

#[test]
fn rounds_run_every_tests_next_iteration_in_turn_and_blocks_each_tests_iterations_together() {
    let _g = serial();
    let sb = Sandbox::new();
    let run = |order: &str| {
        let out = sb
            .cmd()
            .args(["index", "dhry2reg", "syscall", "spawn", "--seconds", "0.2"])
            .args(["-i", "3", "-c", "1", "--order", order, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        (r, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (rounds, said) = run("rounds");
    assert_eq!(index(&rounds)["settings"]["order"], "rounds");
    assert!(
        said.contains("round 1 of 3: dhry2reg syscall spawn\n"),
        "{said}"
    );
    assert!(said.contains("round 3 of 3: dhry2reg syscall\n"), "{said}");
    let s = starts(&rounds);
    // The same iterations as blocks: 3 of the fast tests, int((3 + 1) / 3) = 1 of spawn.
    let counts: Vec<usize> = s.iter().map(|(_, v)| v.len()).collect();
    assert_eq!(counts, [3, 3, 1], "{s:?}");
    let (dhry, syscall, spawn) = (&s[0].1, &s[1].1, &s[2].1);
    for i in 0..3 {
        assert!(dhry[i] < syscall[i], "{s:?}");
        if i + 1 < 3 {
            // Round i is over before round i + 1 begins.
            assert!(syscall[i] < dhry[i + 1], "{s:?}");
        }
    }
    assert!(spawn[0] < dhry[1], "{s:?}");
    // Every score is still UnixBench's: the geometric mean of the kept iterations.
    for t in tests_of(&rounds, 0) {
        assert!(t["index"].as_f64().unwrap() > 0.0, "{t}");
    }

    let (blocks, said) = run("blocks");
    assert!(index(&blocks)["settings"].get("order").is_none());
    assert!(!said.contains("round"), "{said}");
    let s = starts(&blocks);
    for w in s.windows(2) {
        assert!(w[0].1.last() < w[1].1.first(), "{s:?}");
    }
    // Run's pause comes before every iteration, not only before each test: an iteration
    // starts at least the test's 0.2 s and the pause (3 s scaled by 0.2 / 10) after the last.
    for (name, v) in &s[..2] {
        for w in v.windows(2) {
            assert!(w[1] - w[0] >= 0.2 + 0.06 * 0.99, "{name}: {v:?}");
        }
    }
}
