//! Tests of finding changes, drifts and suspects in stored series.

use super::*;
use crate::model::Repeat;

/// A noise result whose only figure, the run time, is `ms` (ten runs of it).
fn result(id: i64, minute: u32, ms: f64, repeat: Option<Repeat>) -> Run {
    let mut r = RunResult::example("h", false);
    r.started_at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, minute, 0).unwrap();
    r.repeat = repeat;
    if let crate::model::SuiteResult::Noise(n) = &mut r.suites[0] {
        n.runs = (0..10)
            .map(|_| crate::model::noise::NoiseRun {
                time_ns: (ms * 1e6) as u64,
                ..Default::default()
            })
            .collect();
        n.summary = crate::model::noise::summarize(&n.runs, 1000);
    }
    Run::of(id, &r)
}

/// As [`result`], each run read beside a fixed-work reference of `reference_ms`.
fn beside(id: i64, minute: u32, ms: f64, reference_ms: f64) -> Run {
    let mut r = RunResult::example("h", false);
    r.started_at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, minute, 0).unwrap();
    let account: crate::model::account::Account = serde_json::from_value(serde_json::json!({
        "wall_ns": 1_000_000_000u64, "cpus": [0], "ticks": 100, "user_pct": 100.0,
        "system_pct": 0.0, "irq_pct": 0.0, "softirq_pct": 0.0, "steal_pct": 0.0,
        "iowait_pct": 0.0, "idle_pct": 0.0, "run_ns": 1_000_000_000u64, "wait_ns": 0,
        "slices": 1, "voluntary": 0, "involuntary": 0, "minor_faults": 0, "major_faults": 0,
        "reference_ns": reference_ms * 1e6,
    }))
    .unwrap();
    if let crate::model::SuiteResult::Noise(n) = &mut r.suites[0] {
        n.runs = (0..10)
            .map(|_| crate::model::noise::NoiseRun {
                time_ns: (ms * 1e6) as u64,
                account: Some(Box::new(account.clone())),
                ..Default::default()
            })
            .collect();
        n.summary = crate::model::noise::summarize(&n.runs, 1000);
    }
    Run::of(id, &r)
}

/// The host ran 6% slower for ten runs of thirty, and the job with it: as measured, two
/// changes; net of the host's speed, none. Where the reference itself stepped for good
/// (a kernel's mitigations), nothing is netted and the job's step is found as measured.
#[test]
fn a_series_that_follows_the_hosts_speed_is_judged_net_of_it() {
    let wobble = |i: i64| 1.0 + 0.004 * ((i % 5) as f64 - 2.0);
    let slow = |i: i64| if (10..20).contains(&i) { 1.06 } else { 1.0 };
    let runs: Vec<Run> = (0..30)
        .map(|i| beside(i + 1, i as u32, 10.0 * slow(i) * wobble(i), 0.3 * slow(i)))
        .collect();
    let of = |runs: &[Run]| {
        history(
            &"h".into(),
            runs,
            &["run time".into()],
            &Settings::default(),
            Some(3.0),
            false,
            None,
        )
    };
    let measured: Vec<Run> = (0..30)
        .map(|i| result(i + 1, i as u32, 10.0 * slow(i) * wobble(i), None))
        .collect();
    assert_eq!(
        of(&measured).changes.len(),
        2,
        "{:?}",
        of(&measured).changes
    );
    let h = of(&runs);
    assert!(h.changes.is_empty(), "{:?}", h.changes);
    assert_eq!(h.reference_moved_at, None);
    let all = series(&runs, &["run time".into()]);
    let mut netted = all.clone();
    assert_eq!(net_of_host(&mut netted, None, &Settings::default()), None);
    let n = netted[0].net.expect("it follows");
    assert!((n.slope - 1.0).abs() < 0.05 && n.r > 0.95, "{n:?}");
    // The net values are on the figure's scale, at the host's typical speed.
    let net = netted[0].judged_values();
    assert!(net.iter().all(|v| (v / 10.0 - 1.0).abs() < 0.03), "{net:?}");
    // A reference that stepped for good, with the job.
    let kernel = |i: i64| if i >= 15 { 1.10 } else { 1.0 };
    let runs: Vec<Run> = (0..30)
        .map(|i| {
            beside(
                i + 1,
                i as u32,
                10.0 * kernel(i) * wobble(i),
                0.3 * kernel(i),
            )
        })
        .collect();
    let h = of(&runs);
    assert_eq!(h.reference_moved_at, Some(16));
    assert_eq!(h.changes.len(), 1, "{:?}", h.changes);
    assert_eq!((h.changes[0].result_id, h.changes[0].net), (16, None));
}

/// Run times and references of a real series (tests/history.rs on a busy 2-vCPU VM):
/// fifteen 5 ms jobs, the last on a host 40% slower, then one of four times the work on a
/// host 90% slower. By least squares the figure "followed" the host with slope +3 and the
/// fourfold job was netted to +15%: nothing found. Learnt from ranks and the median of the
/// pairs' slopes, the one far run cannot set the slope, and the newest is far beyond.
#[test]
fn one_run_far_out_on_both_axes_does_not_teach_the_slope() {
    let measured = [
        (5.110, 0.549),
        (4.937, 0.555),
        (4.877, 0.541),
        (5.121, 0.557),
        (4.865, 0.559),
        (4.842, 0.541),
        (4.869, 0.553),
        (4.869, 0.542),
        (4.834, 0.542),
        (4.873, 0.541),
        (4.903, 0.556),
        (4.808, 0.560),
        (5.267, 0.589),
        (4.997, 0.564),
        (8.320, 0.779),
        (36.361, 1.037),
    ];
    let runs: Vec<Run> = (0..16)
        .map(|i| beside(i as i64 + 1, i as u32, measured[i].0, measured[i].1))
        .collect();
    let mut all = series(&runs, &["run time".into()]);
    net_of_host(&mut all, None, &Settings::default());
    let judged = all[0].judged_values();
    let before = median(&judged[..15]).unwrap();
    assert!(judged[15] > 2.5 * before, "{:?} {judged:?}", all[0].net);
    if let Some(n) = all[0].net {
        assert!(n.slope < 1.5, "{n:?}");
    }
}

#[test]
fn a_repeat_group_is_one_point_in_time_order() {
    let g = |run| {
        Some(Repeat {
            group: 2,
            run,
            of: 2,
        })
    };
    // Stored out of time order; 2 and 3 are one --repeat group.
    let results = vec![
        result(3, 5, 12.0, g(2)),
        result(1, 1, 10.0, None),
        result(2, 4, 14.0, g(1)),
        result(4, 9, 20.0, None),
    ];
    let s = series(&results, &["run time".into()]);
    assert_eq!(s.len(), 1);
    let p = &s[0].points;
    assert_eq!(p.len(), 3);
    assert_eq!(p[0].ids, vec![1]);
    assert_eq!(p[1].ids, vec![2, 3]);
    assert!((p[1].value - 13.0).abs() < 1e-9, "{:?}", p[1]);
    assert_eq!(p[2].ids, vec![4]);
    // A pattern that matches nothing: no series.
    assert!(series(&results, &["no such figure".into()]).is_empty());
}

#[test]
fn a_step_gives_one_change_with_its_levels_and_direction() {
    let results: Vec<_> = (0..30)
        .map(|i| {
            let level = if i < 15 { 10.0 } else { 12.0 };
            // 1% wobble, the same every run.
            result(
                i + 1,
                i as u32,
                level * (1.0 + 0.01 * ((i % 3) as f64 - 1.0)),
                None,
            )
        })
        .collect();
    let h = history(
        &"h".into(),
        &results,
        &["run time".into()],
        &Settings::default(),
        Some(5.0),
        false,
        None,
    );
    assert_eq!(h.changes.len(), 1, "{h:?}");
    let c = &h.changes[0];
    assert_eq!(c.result_id, 16);
    assert!((c.change_pct - 20.0).abs() < 1.0, "{c:?}");
    assert!(c.worse, "a longer run time is worse");
    assert_eq!((c.points_before, c.points_after), (15, 15));
    let (lo, hi) = c.interval_pct.unwrap();
    assert!(lo < 20.0 && hi > 20.0 && lo > 15.0, "{c:?}");
    // Smaller than --min-change: not kept.
    let h = history(
        &"h".into(),
        &results,
        &["run time".into()],
        &Settings::default(),
        Some(25.0),
        false,
        None,
    );
    assert!(h.changes.is_empty());
}

/// A noise result whose ten runs take 100 ms but the last two, `pct` % slower: its p90
/// run is that much slower than the fastest.
fn spread(id: i64, minute: u32, pct: f64) -> Run {
    let mut r = RunResult::example("h", false);
    r.started_at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, minute, 0).unwrap();
    if let crate::model::SuiteResult::Noise(n) = &mut r.suites[0] {
        n.runs = (0..10)
            .map(|i| crate::model::noise::NoiseRun {
                time_ns: if i < 8 {
                    100_000_000
                } else {
                    (1e8 * (1.0 + pct / 100.0)) as u64
                },
                ..Default::default()
            })
            .collect();
        n.summary = crate::model::noise::summarize(&n.runs, 1000);
    }
    Run::of(id, &r)
}

#[test]
fn a_percentage_changes_in_points() {
    let step = |low: f64, high: f64| -> Vec<Run> {
        (0..30)
            .map(|i| {
                let level = if i < 15 { low } else { high };
                spread(i + 1, i as u32, level + 0.02 * (i % 3) as f64)
            })
            .collect()
    };
    let p90 = ["p90 slower".to_string()];
    // 3% → 11% slower: 8 points, kept from 5 points.
    let h = history(
        &"h".into(),
        &step(3.0, 11.0),
        &p90,
        &Settings::default(),
        Some(5.0),
        false,
        None,
    );
    assert_eq!(h.changes.len(), 1, "{h:?}");
    let c = &h.changes[0];
    assert_eq!((c.unit.raw(), c.result_id, c.worse), ("%", 16, true));
    assert!((c.after - c.before - 8.0).abs() < 0.1, "{c:?}");
    // 0.2% → 0.6% slower is +200% of the level but 0.4 points: not kept from 1 point.
    let h = history(
        &"h".into(),
        &step(0.2, 0.6),
        &p90,
        &Settings::default(),
        Some(1.0),
        false,
        None,
    );
    assert!(h.changes.is_empty(), "{h:?}");
}

#[test]
fn a_change_too_small_to_keep_does_not_cut_its_neighbours_level() {
    // 10 → 12 at point 15, then 12 → 12.6 (5%) at point 30, kept only from 4%.
    let results: Vec<_> = (0..45)
        .map(|i| {
            let level = match i {
                0..15 => 10.0,
                15..30 => 12.0,
                _ => 12.6,
            };
            result(
                i + 1,
                i as u32,
                level * (1.0 + 0.005 * ((i % 3) as f64 - 1.0)),
                None,
            )
        })
        .collect();
    let run_time = ["run time".to_string()];
    let both = history(
        &"h".into(),
        &results,
        &run_time,
        &Settings::default(),
        Some(4.0),
        false,
        None,
    );
    assert_eq!(both.changes.len(), 2, "{both:?}");
    let h = history(
        &"h".into(),
        &results,
        &run_time,
        &Settings::default(),
        Some(8.0),
        false,
        None,
    );
    assert_eq!(h.changes.len(), 1, "{h:?}");
    let c = &h.changes[0];
    assert_eq!(c.result_id, 16);
    // The level after runs to the end: the dropped change is no boundary.
    assert_eq!((c.points_before, c.points_after), (15, 30));
    assert!((c.after - 12.3).abs() < 0.05, "{c:?}");
}

/// 200 points: a level of 100 that rises by `drift` percent over the series, with a step
/// of `step` percent at point 120, in 1% noise (seeded).
fn drifting(drift: f64, step: f64, seed: u64) -> Vec<f64> {
    drifting_in(drift, step, 0.01, seed)
}

pub(super) fn drifting_in(drift: f64, step: f64, sd: f64, seed: u64) -> Vec<f64> {
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let noise = Normal::new(0.0, sd).unwrap();
    (0..200)
        .map(|i| {
            let level = 100.0 * (1.0 + drift / 100.0 * i as f64 / 199.0);
            let level = if i >= 120 {
                level * (1.0 + step / 100.0)
            } else {
                level
            };
            level * (1.0 + noise.sample(&mut rng))
        })
        .collect()
}

#[test]
fn a_drift_is_one_drift_a_step_a_step_and_a_step_on_a_drift_both() {
    let settings = Settings::default();
    for seed in 1..=3 {
        // A +5% drift: a line, no step (a step search alone cuts it into a staircase).
        let staircase = search(&drifting(5.0, 0.0, seed), &settings, None);
        assert!(!staircase.points.is_empty(), "seed {seed}");
        let d = find(&drifting(5.0, 0.0, seed), &settings, None);
        assert!(d.points.is_empty(), "seed {seed}: {:?}", d.points);
        let (start, slope, _) = d.drift.expect("a drift");
        assert!(
            (slope * 199.0 / start - 0.05).abs() < 0.01,
            "{start} {slope}"
        );
        // A 10% step alone: a step, no drift.
        let s = find(&drifting(0.0, 10.0, seed), &settings, None);
        assert!(s.drift.is_none(), "seed {seed}");
        assert_eq!(s.points.iter().map(|c| c.index).collect::<Vec<_>>(), [120]);
        // A 10% step on the drift: both, the step where it is.
        let b = find(&drifting(5.0, 10.0, seed), &settings, None);
        assert!(b.drift.is_some(), "seed {seed}");
        assert!(
            b.points.iter().any(|c| c.index.abs_diff(120) <= 1),
            "seed {seed}: {:?}",
            b.points
        );
        assert!(b.points.len() <= 2, "seed {seed}: {:?}", b.points);
    }
}

#[test]
fn a_drift_cut_once_is_a_drift() {
    // A +5% drift in 3% noise: the step search cuts nearly every such series once. A lone
    // step that a line alone fits better is the drift it is. (Judged by the levels' own
    // slope only, 18 of these 40 kept their step: the levels the cut leaves look flat, since
    // that is where it was put.)
    let settings = Settings::default();
    let (mut once, mut stepped) = (0, 0);
    for seed in 1..=40 {
        let z = drifting_in(5.0, 0.0, 0.03, seed);
        once += usize::from(search(&z, &settings, None).points.len() == 1);
        let d = find(&z, &settings, None);
        if !d.points.is_empty() {
            stepped += 1;
        } else {
            assert!(d.drift.is_some(), "seed {seed}");
        }
    }
    assert!(once >= 30, "{once} of 40 cut once");
    assert!(stepped <= 6, "{stepped} of 40 drifts kept a step");
    // A lone step on flat levels stays a step (its levels do not slope).
    for seed in 1..=5 {
        let s = find(&drifting_in(0.0, 5.0, 0.025, seed), &settings, None);
        assert!(s.drift.is_none(), "seed {seed}");
        assert_eq!(s.points.len(), 1, "seed {seed}: {:?}", s.points);
    }
}
