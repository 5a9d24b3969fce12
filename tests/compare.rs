//! `hostbench compare` and `results export` on results built from known samples.

mod common;

use std::path::{Path, PathBuf};

use common::Sandbox;
use serde_json::Value;

/// A real noise result whose run times are replaced by `times_ms`.
fn noise_with(base: &Value, times_ms: &[f64]) -> Value {
    let mut r = base.clone();
    r["uuid"] = common::fresh_uuid().into();
    let runs = r["suites"][0]["runs"].as_array().unwrap()[0].clone();
    r["suites"][0]["runs"] = times_ms
        .iter()
        .map(|t| {
            let mut run = runs.clone();
            run["time_ns"] = ((t * 1e6) as u64).into();
            run
        })
        .collect();
    r["suites"][0]["summary"]["mean_ns"] =
        (times_ms.iter().sum::<f64>() / times_ms.len() as f64 * 1e6).into();
    // The host's run-to-run spread, which `compare` uses as its noise floor: 1%; the real
    // run's noise check goes, so that a drift it happened to find cannot move the floor.
    r["suites"][0]["summary"]["verdict"]["spread_pct"] = 1.0.into();
    r.as_object_mut().unwrap().remove("noise_check");
    r
}

/// Deterministic samples around `mean` with a spread of about 1%.
fn around(mean: f64, n: usize, phase: usize) -> Vec<f64> {
    (0..n)
        .map(|i| mean * (1.0 + 0.01 * (((i * 7 + phase * 3) % 11) as f64 - 5.0) / 5.0))
        .collect()
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    p
}

/// Another run with the same figures as the result in `file`: a copy under a UUID of its
/// own, beside it (one run is never compared with itself).
fn twin(file: &Path) -> PathBuf {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["uuid"] = common::fresh_uuid().into();
    let name = format!("twin-{}", file.file_name().unwrap().to_str().unwrap());
    write(file.parent().unwrap(), &name, &v)
}

fn compare_json(sb: &Sandbox, a: &Path, b: &Path) -> Value {
    sb.json(&["compare", a.to_str().unwrap(), b.to_str().unwrap()])
}

/// The noise job's run-time row of a comparison.
fn row(c: &Value) -> Value {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"].as_str().unwrap().contains("run time"))
        .unwrap()
        .clone()
}

fn verdict_of(c: &Value, key_part: &str) -> String {
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"].as_str().unwrap().contains(key_part))
        .unwrap_or_else(|| panic!("no row {key_part}: {c}"));
    row["verdict"].as_str().unwrap().to_string()
}

#[test]
fn real_differences_are_significant_in_the_right_direction_and_noise_is_not() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let base = sb.json(&["noise", "5", "3"]);
    let a = write(dir, "a.json", &noise_with(&base, &around(10.0, 30, 0)));
    let same = write(dir, "same.json", &noise_with(&base, &around(10.0, 30, 1)));
    let slower = write(dir, "slower.json", &noise_with(&base, &around(12.0, 30, 2)));
    let faster = write(dir, "faster.json", &noise_with(&base, &around(8.0, 30, 3)));

    // Run time: lower is better.
    assert_eq!(
        verdict_of(&compare_json(&sb, &a, &slower), "run time"),
        "worse"
    );
    assert_eq!(
        verdict_of(&compare_json(&sb, &a, &faster), "run time"),
        "better"
    );
    let c = compare_json(&sb, &a, &same);
    assert_eq!(verdict_of(&c, "run time"), "no_significant_difference");
    assert!(c["test"].as_str().unwrap().contains("Welch"));
    // One run a side: the samples within the runs, and the verdict says run-to-run variation
    // is unknown and doubles the floor (1% → 2%).
    assert_eq!(c["basis"], "within_run");
    assert_eq!(c["noise_floor_pct"], 2.0);
    assert!(
        c["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("run-to-run variation is unknown")),
        "{c}"
    );
    // On a host whose runs spread by 15%, a real 20% change is within its doubled noise.
    let mut wide = noise_with(&base, &around(12.0, 30, 2));
    wide["suites"][0]["summary"]["verdict"]["spread_pct"] = 15.0.into();
    let wide = write(dir, "wide.json", &wide);
    let c = compare_json(&sb, &a, &wide);
    assert_eq!(c["noise_floor_pct"], 30.0);
    assert_eq!(verdict_of(&c, "run time"), "within_noise");

    // An index score: higher is better. Scale one copy's counts up by 30%.
    let idx = sb.json(&[
        "index",
        "dhry2reg",
        "--seconds",
        "0.1",
        "-i",
        "4",
        "-c",
        "1",
    ]);
    // Known iterations: the first one's count and time, spread by 1%, and the same x1.3.
    let with_counts = |scale: f64| {
        let mut r = idx.clone();
        r["uuid"] = common::fresh_uuid().into();
        // No noise check: the test is of the direction, not of this busy host's noise floor.
        r.as_object_mut().unwrap().remove("noise_check");
        let test = &mut r["suites"][0]["passes"][0]["tests"][0];
        let passes = test["passes"].as_array_mut().unwrap();
        let (c0, t0) = (passes[0]["count"].clone(), passes[0]["time_s"].clone());
        for (p, f) in passes.iter_mut().zip([1.0, 1.01, 0.99, 1.0]) {
            p["count"] = (c0.as_f64().unwrap() * f * scale).into();
            p["time_s"] = t0.clone();
        }
        let score = &mut test["score"]["score"];
        *score = (score.as_f64().unwrap() * scale).into();
        r
    };
    let (idx, up) = (with_counts(1.0), with_counts(1.3));
    let ia = write(dir, "ia.json", &idx);
    let ib = write(dir, "ib.json", &up);
    let c = compare_json(&sb, &ia, &ib);
    assert_eq!(verdict_of(&c, "index/1 copy/dhry2reg"), "better");
    let c = compare_json(&sb, &ib, &ia);
    assert_eq!(verdict_of(&c, "index/1 copy/dhry2reg"), "worse");

    // The text table names the test and counts the verdicts; Markdown is a table.
    let out = sb
        .cmd()
        .args(["compare", a.to_str().unwrap(), slower.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Welch's t-test on the samples within each run"),
        "{text}"
    );
    assert!(text.contains("1 worse"), "{text}");
    // The headline first: what changed, which way, the largest.
    let headline = text.lines().next().unwrap();
    assert!(
        headline.contains("figures changed beyond the host's noise: 1 worse")
            && headline.contains("the largest, noise: run time"),
        "{text}"
    );
    // Grouped by verdict: the slower run time under "changed beyond the host's noise".
    let changed = text
        .find("Changed beyond the host's noise")
        .expect("a section of changes");
    let row = text[changed..]
        .find("noise: run time")
        .expect("the run time row");
    assert!(row > 0, "{text}");
    // Only the derived percentiles (no samples, no history here) are not testable.
    if let Some(at) = text.find("Not testable") {
        let untested: Vec<&str> = text[at..]
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(
            untested
                .iter()
                .all(|l| l.contains("% slower than the fastest") && l.contains("derived")),
            "{text}"
        );
    }
    let out = sb
        .cmd()
        .args(["compare", "--format", "markdown"])
        .args([&a, &slower])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("| measurement | unit | A | B |"), "{md}");
    assert!(md.contains("| worse |"), "{md}");
    assert!(md.contains("### Changed beyond the host's noise"), "{md}");

    // --fail-on-regression: a 20% regression fails at 10%, not at 30%; an improvement never.
    let code = |args: &[&str], b: &Path| {
        sb.cmd()
            .arg("compare")
            .args(args)
            .args([&a, b])
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(code(&["--fail-on-regression", "10"], &slower), Some(3));
    assert_eq!(code(&["--fail-on-regression", "30"], &slower), Some(0));
    assert_eq!(code(&["--fail-on-regression", "0"], &faster), Some(0));
}

#[test]
fn several_runs_a_side_are_judged_on_their_per_run_figures() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let base = sb.json(&["noise", "5", "3"]);
    // Three runs a side whose means differ by 2% from run to run (the runs' own samples spread
    // by only 1%), and a side 20% slower.
    let side = |name: &str, means: &[f64]| -> String {
        means
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let v = noise_with(&base, &around(*m, 30, i));
                write(dir, &format!("{name}{i}.json"), &v)
                    .to_str()
                    .unwrap()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let a = side("a", &[10.0, 10.2, 9.8]);
    let same = side("same", &[9.9, 10.1, 10.0]);
    let slower = side("slow", &[12.0, 12.2, 11.8]);
    let c = sb.json(&["compare", &a, &slower]);
    assert_eq!(c["basis"], "runs");
    assert!(c["test"].as_str().unwrap().contains("per-run"), "{c}");
    assert_eq!(
        (c["a"]["runs"].as_u64(), c["b"]["runs"].as_u64()),
        (Some(3), Some(3))
    );
    let r = row(&c);
    assert_eq!(
        (r["samples_a"].as_u64(), r["samples_b"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(r["verdict"], "worse");
    // The interval is the ratio's, around +20%.
    let ci = r["ci_pct"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(lo > 10.0 && lo < 20.0 && hi > 20.0 && hi < 30.0, "{r}");
    // Runs that differ by 2% from each other are no change, though each run's 30 samples would
    // have called 10.2 against 9.8 significant.
    let c = sb.json(&["compare", &a, &same]);
    assert_eq!(row(&c)["verdict"], "no_significant_difference", "{c}");
    let one_each = sb.json(&[
        "compare",
        a.split(',').nth(1).unwrap(),
        a.split(',').nth(2).unwrap(),
    ]);
    assert_eq!(one_each["basis"], "within_run");
    assert_ne!(row(&one_each)["verdict"], "no_significant_difference");
    // One run against three: that run is tested against the three's spread.
    let first_slow = slower.split(',').next().unwrap();
    let c = sb.json(&["compare", &a, first_slow]);
    assert_eq!(c["basis"], "runs");
    assert_eq!(row(&c)["samples_b"], 1);
    assert_eq!(row(&c)["verdict"], "worse");
    // A list with a hole is the user's mistake.
    let out = sb.cmd().args(["compare", "1,,2", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty name"));
}

#[test]
fn results_from_different_hosts_are_noted() {
    let sb = Sandbox::new();
    let base = sb.json(&["noise", "5", "3"]);
    let mut other = base.clone();
    other["uuid"] = common::fresh_uuid().into();
    other["environment"]["hostname"] = "elsewhere".into();
    other["environment"]["kernel_release"] = "0.0.1".into();
    let b = write(sb.dir.path(), "b.json", &other);
    let c = sb.json(&["compare", "1", b.to_str().unwrap()]);
    let notes: Vec<&str> = c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("different hosts")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("different kernels")),
        "{notes:?}"
    );
}

#[test]
fn exports_parse_back() {
    let sb = Sandbox::new();
    let stored = sb.json(&[
        "sched",
        "-c",
        "4",
        "-a",
        "2",
        "-t",
        "1",
        "--max-runs",
        "2",
        "--min-runs",
        "2",
        "--sweep",
        "2,4",
    ]);
    // JSON: the stored result, whole.
    let json = sb.json(&["results", "export", "1", "--format", "json"]);
    assert_eq!(json, stored);
    // CSV: a row per measurement (here: two sweep points), the stable columns.
    let out = sb
        .cmd()
        .args(["results", "export", "1", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        headers,
        [
            "result_id",
            "suite",
            "key",
            "name",
            "unit",
            "better",
            "value",
            "samples",
            "sample_mean",
            "sample_sd",
            "sample_min",
            "sample_max",
            "sample_kind"
        ]
    );
    // The two points, and the host's speed beside them.
    let (host, rows): (Vec<csv::StringRecord>, Vec<csv::StringRecord>) = reader
        .records()
        .map(|r| r.unwrap())
        .partition(|r| &r[1] == "host");
    assert_eq!(rows.len(), 2);
    assert_eq!(host.len(), 1);
    assert_eq!(&host[0][2], "host/reference/fixed-work job");
    for (row, point) in rows
        .iter()
        .zip(stored["suites"][0]["points"].as_array().unwrap())
    {
        assert_eq!(&row[1], "sched");
        assert_eq!(&row[5], "lower");
        let value: f64 = row[6].parse().unwrap();
        assert!((value - point["mean_us_per_round"].as_f64().unwrap()).abs() < 1e-9);
        assert_eq!(&row[7], "2");
    }
    // Markdown: a table with the same rows.
    let out = sb
        .cmd()
        .args(["results", "export", "1", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| sched |")).count(),
        2,
        "{md}"
    );
}

#[test]
fn a_repeated_command_stores_one_group_and_compare_takes_groups_whole() {
    let sb = Sandbox::new();
    let run = |n: &str| {
        let out = sb
            .cmd()
            .args(["noise", "--repeat", n, "10", "5"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let first = run("2");
    assert!(first.contains("The 2 runs are group g1"), "{first}");
    let second = run("3");
    assert!(second.contains("The 3 runs are group g3"), "{second}");
    // Each run is a result of its own, marked with its group.
    let stored: Vec<Value> = (1..=5)
        .map(|id| sb.json(&["results", "export", &id.to_string(), "--format", "json"]))
        .collect();
    let groups: Vec<(i64, i64, i64)> = stored
        .iter()
        .map(|r| {
            let rep = &r["repeat"];
            (
                rep["group"].as_i64().unwrap(),
                rep["run"].as_i64().unwrap(),
                rep["of"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [(1, 1, 2), (1, 2, 2), (3, 1, 3), (3, 2, 3), (3, 3, 3)]
    );
    // compare of two groups: the per-run figures, two and three of them.
    let c = sb.json(&["compare", "g1", "g3"]);
    assert_eq!(c["basis"], "runs", "{c}");
    assert_eq!(
        (c["a"]["runs"].as_u64(), c["b"]["runs"].as_u64()),
        (Some(2), Some(3))
    );
    let row = &c["rows"][0];
    assert_eq!(
        (row["samples_a"].as_u64(), row["samples_b"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(c["a"]["source"], "group g1");
    // A group that is not there, and --repeat where nothing is measured: exit 2, one line.
    let out = sb.cmd().args(["compare", "g2", "g3"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no group g2"));
    let out = sb
        .cmd()
        .args(["compare", "--repeat", "2", "g1", "g3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--repeat'"));
}

/// `--precision`: runs of one group until each headline figure is within the goal, or the
/// most runs are done; the closing lines say which and give each figure's interval.
#[test]
fn precision_runs_one_group_and_says_whether_each_headline_figure_is_within() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["noise", "--precision", "0.1", "--repeat", "3", "10", "5"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // A spread of 5 runs of a 10 ms job is not within ±0.1% in three runs.
    assert!(
        text.contains("Precision ±0.1%: not met in 3 runs, the most asked for"),
        "{text}"
    );
    assert!(
        text.contains("  noise: ±") && text.contains("over 3 runs (wider)"),
        "{text}"
    );
    assert!(text.contains("The runs are group g1"), "{text}");
    let groups: Vec<(i64, i64)> = (1..=3)
        .map(|id| sb.json(&["results", "export", &id.to_string(), "--format", "json"]))
        .map(|r| {
            let rep = &r["repeat"];
            (rep["group"].as_i64().unwrap(), rep["run"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(groups, [(1, 1), (1, 2), (1, 3)]);
    // Out of range, and a budget without a goal: one line, exit 2.
    for (args, says) in [
        (
            &["noise", "--precision", "0", "10", "5"][..],
            "not a percentage from 0.1 to 50",
        ),
        (
            &["noise", "--budget", "5", "10", "5"][..],
            "--budget is the time for --precision",
        ),
    ] {
        let out = sb.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn every_result_carries_its_noise_check_and_compare_weighs_it() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let sched = ["sched", "-c", "2", "-a", "1", "-t", "1", "--max-runs", "3"];
    let checked = sb.json(&sched);
    // Twenty runs of the check job before the suite, twenty after, and the drift between them.
    let check = &checked["noise_check"];
    assert_eq!(check["before"]["times_ns"].as_array().unwrap().len(), 20);
    assert_eq!(check["after"]["times_ns"].as_array().unwrap().len(), 20);
    assert!(check["drift"]["change_pct"].is_f64(), "{check}");
    assert!(check["drift"]["drifted"].is_boolean(), "{check}");
    let spread = check["before"]["spread_pct"].as_f64().unwrap();
    let unchecked = sb.json(&[&sched[..], &["--no-noise-check"][..]].concat());
    assert!(unchecked.get("noise_check").is_none(), "{unchecked}");

    // Both checked: the floor is the checks' spread (doubled, one run a side), or a drift.
    let a = write(dir, "a.json", &checked);
    let c = compare_json(&sb, &a, &twin(&a));
    let floor = c["noise_floor_pct"].as_f64().unwrap();
    assert!(floor >= 2.0 * spread - 1e-9, "{floor} {spread}");
    // One side without a check: compared all the same, with a note and no floor.
    let b = write(dir, "b.json", &unchecked);
    let c = compare_json(&sb, &a, &b);
    assert!(c["noise_floor_pct"].is_null(), "{c}");
    let notes = c["notes"].to_string();
    assert!(notes.contains("B has no noise check"), "{notes}");
    // The job, and the host's speed beside it.
    assert_eq!(c["rows"].as_array().unwrap().len(), 2);
    // A side whose check found the host 9% slower at its end: noted, and the floor at least 9%
    // (18% doubled).
    let mut drifted = checked.clone();
    drifted["uuid"] = common::fresh_uuid().into();
    drifted["noise_check"]["drift"] =
        serde_json::json!({"change_pct": 9.0, "ci_pct": [7.0, 11.0], "drifted": true});
    drifted["noise_check"]["before"]["spread_pct"] = 1.0.into();
    let mut quiet = checked.clone();
    quiet["uuid"] = common::fresh_uuid().into();
    quiet["noise_check"]["before"]["spread_pct"] = 1.0.into();
    quiet["noise_check"]["drift"]["drifted"] = false.into();
    let d = write(dir, "drifted.json", &drifted);
    let q = write(dir, "quiet.json", &quiet);
    let c = compare_json(&sb, &q, &d);
    assert!(
        c["notes"]
            .to_string()
            .contains("B drifted: its check job ran 9.0% slower"),
        "{c}"
    );
    assert_eq!(c["noise_floor_pct"], 18.0);
    let c = compare_json(&sb, &q, &twin(&q));
    assert_eq!(c["noise_floor_pct"], 2.0);
    // The text of the result shows the check; the HTML report too.
    let text = sb.cmd().args(["results", "show", "1"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("Noise check: a 10 ms CPU job timed 20 times"),
        "{text}"
    );
    let html = dir.join("r.html");
    sb.cmd()
        .args(["report", "1", "2", "-o", html.to_str().unwrap()])
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Noise check: a 10 ms CPU job") && page.contains("No noise check"));
}

#[test]
fn figures_of_different_placement_are_never_paired() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let sched = [
        "sched",
        "--no-noise-check",
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
    ];
    let free = write(dir, "free.json", &sb.json(&sched));
    let pinned = write(
        dir,
        "pinned.json",
        &sb.json(&[&sched[..], &["--pin"][..]].concat()),
    );
    // The same thread count free and pinned: different figures, nothing to compare.
    let out = sb
        .cmd()
        .args(["compare", free.to_str().unwrap(), pinned.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("share no measurement"));
    // Each pairs with its own kind, labelled with its placement.
    for (file, key, label) in [
        (&free, "sched/2 threads 1 sets/us per round", ", free"),
        (
            &pinned,
            "sched/2 threads 1 sets pinned/us per round",
            ", pinned",
        ),
    ] {
        let c = compare_json(&sb, file, &twin(file));
        let rows: Vec<&Value> = c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["suite"] != "host")
            .collect();
        assert_eq!(rows.len(), 1, "{c}");
        assert_eq!(rows[0]["key"], key);
        assert!(rows[0]["name"].as_str().unwrap().ends_with(label), "{c}");
    }
}

/// One run a side on a host with stored history: each figure is judged against its own
/// run-to-run spread over the host's earlier runs with the same figures, and the comparison
/// says from how many; with too few, today's rule, and how many more it needs.
#[test]
fn one_run_a_side_is_judged_against_the_hosts_own_earlier_runs() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let base = sb.json(&["noise", "5", "3"]);
    let start = chrono::DateTime::parse_from_rfc3339(base["started_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc);
    // A run `minutes` before the base run, whose 30 samples lie within 1% of `mean`.
    let value = |minutes: i64, mean: f64| -> Value {
        let mut v = noise_with(&base, &around(mean, 30, minutes as usize));
        v["started_at"] = (start - chrono::Duration::minutes(minutes))
            .to_rfc3339()
            .into();
        v["uuid"] = format!("00000000-0000-4000-8000-{:012}", minutes).into();
        v
    };
    let run = |name: &str, minutes: i64, mean: f64| write(dir, name, &value(minutes, mean));
    let (a, b) = (run("a.json", 2, 10.0), run("b.json", 1, 10.4));
    // Two earlier runs of the host: not enough. +4%, tight within each run, is worse by the
    // samples and the doubled floor (2%), and the note says how far the history is.
    // Such runs stored, each first changed by `change`.
    let store = |runs: &[(i64, f64)], change: fn(&mut Value)| {
        for &(i, mean) in runs {
            let mut v = value(i, mean);
            change(&mut v);
            let f = write(dir, &format!("h{i}.json"), &v);
            sb.cmd()
                .args(["results", "import", f.to_str().unwrap()])
                .assert()
                .success();
        }
    };
    store(&[(10, 10.0), (9, 10.5)], |_| {});
    let c = compare_json(&sb, &a, &b);
    assert_eq!(c["basis"], "within_run");
    assert!(c.get("spread_runs").is_none(), "{c}");
    assert_eq!(row(&c)["verdict"], "worse", "{c}");
    let notes = c["notes"].to_string();
    assert!(notes.contains("(2 now)"), "{notes}");
    // Four earlier runs that spread by about 4%: +4% is within this figure's noise, and the
    // comparison says from how many runs its floor came.
    store(&[(8, 9.6), (7, 10.3)], |_| {});
    let c = compare_json(&sb, &a, &b);
    assert_eq!(c["spread_runs"], 4, "{c}");
    let r = row(&c);
    assert_eq!(r["verdict"], "within_noise", "{r}");
    let floor = r["floor_pct"].as_f64().unwrap();
    assert!(floor > 4.0 && floor < 40.0, "{r}");
    // And the smallest change one run a side finds nine times in ten: beyond the floor.
    let found = r["found_pct"].as_f64().unwrap();
    assert!(found > floor && found < 3.0 * floor, "{r}");
    let text = String::from_utf8(
        sb.cmd()
            .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.contains("from 4 earlier runs of this host") && text.contains("(its floor ±"),
        "{text}"
    );
    // The job's run time and the host's reference (a figure too, and as still as the runs
    // copied from one), not the percentile.
    assert!(
        text.contains(
            "One run a side finds a 10% change 9 times in 10 on this host in 2 of these 3 figures."
        ),
        "{text}"
    );
    // Runs of another plan with the same figures (the job timed 4 times a run, not 3) are not
    // this run's history, however far apart they lie — also where the store's rows were kept
    // before they said their plan, and the results are read to learn it.
    store(&[(6, 20.0), (5, 5.0)], |v| {
        v["suites"][0]["settings"]["runs_requested"] = 4.into()
    });
    // Nor are runs of another machine of the same hostname (no label: the machine id tells).
    store(&[(4, 20.0), (3, 5.0)], |v| {
        v["environment"]["machine_id"] = "0123456789abcdef0123456789abcdef".into()
    });
    let again = compare_json(&sb, &a, &b);
    assert_eq!(again["spread_runs"], 4, "{again}");
    assert_eq!(row(&again)["floor_pct"], r["floor_pct"], "{again}");
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let unsaid = conn
        .execute(
            "UPDATE result_figures SET kept = json_remove(kept, '$.plan', '$.machine_id')",
            [],
        )
        .unwrap();
    assert_eq!(unsaid, 9, "the base run and eight imported");
    let old_rows = compare_json(&sb, &a, &b);
    assert_eq!(old_rows["spread_runs"], 4, "{old_rows}");
    assert_eq!(row(&old_rows)["floor_pct"], r["floor_pct"], "{old_rows}");
    // A change beyond that spread is still one.
    let slow = run("slow.json", 1, 14.0);
    assert_eq!(row(&compare_json(&sb, &a, &slow))["verdict"], "worse");
}

/// One run counted twice would look more certain than it is (`compare 1,1,1 2,2,2` called a
/// difference that `compare 1 2` did not): a run named twice on a side, or on both, is
/// refused — by id, by file, and by its UUID in another spelling.
#[test]
fn a_run_named_twice_is_refused_however_it_is_named() {
    let sb = Sandbox::new();
    sb.json(&["noise", "-l", "5000", "10", "3"]);
    sb.json(&["noise", "-l", "5000", "10", "3"]);
    let exported = sb.json(&["results", "export", "1", "--format", "json"]);
    let file = write(sb.dir.path(), "one.json", &exported);
    let mut respelled = exported.clone();
    let upper = format!("{{{}}}", exported["uuid"].as_str().unwrap().to_uppercase());
    respelled["uuid"] = upper.into();
    let respelled = write(sb.dir.path(), "one-again.json", &respelled);
    let (file, respelled) = (file.to_str().unwrap(), respelled.to_str().unwrap());
    for (a, b, says) in [
        ("1,1,1", "2,2,2", "twice"),
        ("1", "1", "on both sides"),
        (&format!("1,{file}"), "2", "twice"),
        (respelled, "1", "on both sides"),
        ("2", &format!("1,{respelled}"), "twice"),
    ] {
        let out = sb.cmd().args(["compare", a, b]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a} {b}: {err}");
        assert!(err.contains(says), "{a} {b}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let out = sb.cmd().args(["compare", "1", "2"]).output().unwrap();
    assert!(
        out.status.code() == Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One run a side on a host with three earlier runs of the same plan: the index score (derived:
/// no samples) and a test of one iteration (one sample a side) get a verdict from their own
/// run-to-run spread, and nothing the history knows is left "not tested".
#[test]
fn a_figure_without_samples_gets_a_verdict_from_the_hosts_history() {
    let sb = Sandbox::new();
    let args = [
        "index",
        "dhry2reg",
        "--seconds",
        "0.1",
        "-i",
        "1",
        "-c",
        "1",
    ];
    for _ in 0..5 {
        sb.json(&args);
    }
    let c = sb.json(&["compare", "4", "5"]);
    assert_eq!(c["spread_runs"], 3, "{c}");
    let rows = c["rows"].as_array().unwrap();
    let find = |what: &str| {
        rows.iter()
            .find(|r| r["name"].as_str().unwrap().contains(what))
            .unwrap_or_else(|| panic!("no {what} row in {c}"))
    };
    for what in ["System Benchmarks Index Score", "Dhrystone 2"] {
        let r = find(what);
        assert_eq!(r["basis"], "history", "{r}");
        assert_ne!(r["verdict"], "not_tested", "{r}");
        assert!(r["floor_pct"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert!(rows.iter().all(|r| r["verdict"] != "not_tested"), "{c}");
    let text = String::from_utf8(
        sb.cmd()
            .args(["compare", "4", "5"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.contains("(against its run-to-run spread here, "),
        "{text}"
    );
    assert!(text.contains(" 0 not tested."), "{text}");
    assert!(
        text.contains("judged against their own run-to-run spread on this host"),
        "{text}"
    );
}

/// Where a figure follows the host's speed over the host's earlier runs (the fixed-work
/// reference read beside its stretches), one run a side is judged on its change net of that
/// speed: +8% on a host that ran 8% slower is within the noise, +4% on a host that ran as fast
/// is worse, though the figure's own spread (about 5%) would hold both. And a reference that
/// moved far beyond its own spread is said, and nothing is netted.
#[test]
fn one_run_a_side_is_judged_net_of_the_hosts_speed_where_the_figure_follows_it() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let base = sb.json(&["noise", "5", "3"]);
    assert!(
        base["suites"][0]["runs"][0]["account"]["reference_ns"]
            .as_f64()
            .is_some_and(|ns| ns > 0.0),
        "the first noise run reads the reference: {base}"
    );
    let start = chrono::DateTime::parse_from_rfc3339(base["started_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc);
    // A run `minutes` before the base run on a host `slow` times its usual time for the
    // reference, whose job takes `slow` × (1 + `own`) × 10 ms, within 1%.
    let value = |minutes: i64, slow: f64, own: f64| -> Value {
        let mut v = noise_with(
            &base,
            &around(10.0 * slow * (1.0 + own), 30, minutes as usize),
        );
        v["started_at"] = (start - chrono::Duration::minutes(minutes))
            .to_rfc3339()
            .into();
        v["uuid"] = format!("00000000-0000-4000-8000-{:012}", minutes).into();
        for run in v["suites"][0]["runs"].as_array_mut().unwrap() {
            run["account"]["reference_ns"] = (300_000.0 * slow).into();
        }
        v
    };
    let speeds = [1.00, 1.05, 0.96, 1.03, 0.94, 1.06, 0.98, 1.02];
    let own = [0.004, -0.003, 0.002, -0.004, 0.003, 0.0, -0.002, 0.001];
    for (i, (s, e)) in speeds.iter().zip(own).enumerate() {
        let f = write(dir, &format!("h{i}.json"), &value(20 - i as i64, *s, e));
        sb.cmd()
            .args(["results", "import", f.to_str().unwrap()])
            .assert()
            .success();
    }
    let run = |name: &str, minutes: i64, slow: f64, own: f64| {
        write(dir, name, &value(minutes, slow, own))
    };
    let a = run("a.json", 3, 1.0, 0.0);
    let host_slower = run("b.json", 2, 1.08, 0.0);
    let c = compare_json(&sb, &a, &host_slower);
    let r = row(&c);
    assert!((r["change_pct"].as_f64().unwrap() - 8.0).abs() < 1.0, "{r}");
    let host = &r["host"];
    assert!(host["judged"].as_bool().unwrap(), "{r}");
    assert!(
        (host["reference_change_pct"].as_f64().unwrap() - 8.0).abs() < 1e-6,
        "{r}"
    );
    assert!(host["net_change_pct"].as_f64().unwrap().abs() < 1.0, "{r}");
    assert_eq!(r["verdict"], "within_noise", "{r}");
    // As measured, the 8% lies within the figure's own spread over a history whose host moved
    // by up to 6%: the row keeps that verdict beside the net one.
    assert_eq!(host["measured_verdict"], "within_noise", "{r}");
    let own_spread = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"].as_str().unwrap().contains("run time"))
        .unwrap()["floor_pct"]
        .as_f64()
        .unwrap();
    assert!(
        own_spread < 3.0,
        "net of the host, the floor is narrow: {r}"
    );
    let notes = c["notes"].to_string();
    assert!(notes.contains("followed the host's speed"), "{notes}");
    // The host's own figure is compared too: the reference ran 8% slower.
    assert!(
        c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["key"] == "host/reference/fixed-work job"
                && (r["change_pct"].as_f64().unwrap() - 8.0).abs() < 1e-6),
        "{c}"
    );
    // +4% on a host as fast as before: worse, net of it.
    let job_slower = run("c.json", 1, 1.0, 0.04);
    let r = row(&compare_json(&sb, &a, &job_slower));
    assert_eq!(r["verdict"], "worse", "{r}");
    let text = String::from_utf8(
        sb.cmd()
            .args(["compare", a.to_str().unwrap(), job_slower.to_str().unwrap()])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.contains("worse (net +4.0%, the host 0.0% slower; against its spread net of the host's speed here"),
        "{text}"
    );
    // A reference 40% slower: beyond anything the history showed. Said, and not netted.
    let moved = run("d.json", 0, 1.4, 0.0);
    let c = compare_json(&sb, &a, &moved);
    let r = row(&c);
    assert!(!r["host"]["judged"].as_bool().unwrap(), "{r}");
    assert_eq!(r["verdict"], "worse", "{r}");
    assert!(
        c["notes"]
            .to_string()
            .contains("fixed-work reference itself changed by +40.0%"),
        "{c}"
    );
}
