//! A change of one run a side told net of the host's speed: where the host's history shows
//! that a figure follows the fixed-work reference read beside it (`stats::Follows`), its
//! change is also given net of the reference's change, and judged on that against the spread
//! that is left. The figure keeps its measured value (an original's figure stays the
//! original's); the net change is hostbench's addition beside it.

use serde::{Deserialize, Serialize};

use super::spread::grain;
use super::{at_resolution, change_pct, verdict, Basis, HostSpread, Row, Verdict};
use crate::model::figures::{Figure, HOST_REFERENCE_KEY};

/// What the host's speed did beside a figure, one run a side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HostChange {
    /// The change of the fixed-work reference beside the figure, B over A, percent: above 0
    /// where B's host ran slower.
    pub reference_change_pct: f64,
    /// The figure's change net of it, percent (`stats::Follows::net_ratio`).
    pub net_change_pct: f64,
    /// d ln(figure) / d ln(reference) over the host's earlier runs, and the correlation.
    pub slope: f64,
    pub r: f64,
    /// Whether the verdict is on the net change. Not where the reference itself moved beyond
    /// its own run-to-run spread: the host's speed then changed as its history never showed
    /// (a kernel's mitigations, a governor), and taking it out could hide a real change.
    pub judged: bool,
    /// The verdict on the change as measured, against the figure's own spread: what the row
    /// would say without the host's speed (`scripts/compare-power-summary.py` counts both).
    pub measured_verdict: Verdict,
}

/// The reference's change between the runs where it lies beyond its own run-to-run spread on
/// this host (percent, B over A); None where it lies within, or cannot be told.
pub(super) fn reference_moved(spread: &HostSpread, a: &[Figure], b: &[Figure]) -> Option<f64> {
    let find = |figs: &[Figure]| figs.iter().find(|f| f.key == HOST_REFERENCE_KEY).cloned();
    let (ra, rb) = (find(a)?, find(b)?);
    let change = change_pct(ra.value, rb.value);
    (!spread.bound(&ra, &rb)?.holds(change)).then_some(change)
}

/// `row` of figure `a` against `b`, judged on its change net of the host's speed where the
/// host's history shows the figure follows it and both runs read the reference beside it;
/// else as it was. With `moved` (the reference moved beyond its own spread), the net change is
/// said but not judged.
pub(super) fn net_of_host(
    row: Row,
    a: &Figure,
    b: &Figure,
    spread: &HostSpread,
    moved: bool,
) -> Row {
    let (Some(follows), Some(ha), Some(hb)) = (spread.follows(a), a.host_ms(), b.host_ms()) else {
        return row;
    };
    if a.value <= 0.0 || b.value <= 0.0 || a.is_spread {
        return row;
    }
    let reference = hb / ha;
    let net = follows.net_ratio(b.value / a.value, reference);
    let host = HostChange {
        reference_change_pct: (reference - 1.0) * 100.0,
        net_change_pct: (net - 1.0) * 100.0,
        slope: follows.slope,
        r: follows.r,
        judged: !moved,
        measured_verdict: row.verdict,
    };
    if moved {
        return Row {
            host: Some(host),
            ..row
        };
    }
    let grain = grain(a, b);
    let bound = follows.net.bound(grain);
    let judged = Row {
        basis: Basis::History,
        floor_pct: Some(bound.pct),
        floor_on_ratio: bound.on_ratio,
        found_pct: Some(follows.net.smallest_found(grain)),
        verdict: verdict(true, host.net_change_pct, net > 1.0, a.better, Some(bound)),
        why_not_tested: None,
        host: Some(host),
        ..row
    };
    at_resolution(judged, a, Some(b))
}

/// What the comparison says of the host's speed: how many figures were judged net of it and
/// how far the reference moved, or that it moved beyond its own spread and nothing was.
pub(super) fn note(rows: &[Row], moved: Option<f64>) -> Option<String> {
    let changes: Vec<&HostChange> = rows.iter().filter_map(|r| r.host.as_ref()).collect();
    changes.first()?;
    // The example: an index score where there is one, the headline users look at.
    let with: Vec<&Row> = rows.iter().filter(|r| r.host.is_some()).collect();
    let example = with
        .iter()
        .find(|r| r.name.contains("Index Score"))
        .unwrap_or(&with[0]);
    let shown = example.host.as_ref()?;
    if let Some(pct) = moved {
        return Some(format!(
            "the host's fixed-work reference itself changed by {pct:+.1}%, beyond its run-to-run spread here: its speed changed as this host's history never showed (a kernel's mitigations, a governor, other hardware), so the {} figures that follow it are judged as measured, not net of it",
            changes.len()
        ));
    }
    let slower = |pct: f64| {
        if pct >= 0.0 {
            format!("{pct:.1}% slower")
        } else {
            format!("{:.1}% faster", -pct)
        }
    };
    Some(format!(
        "{} figure{} followed the host's speed over its earlier runs (the fixed-work reference read beside each stretch: slope and correlation from that history), so {} judged on {} change net of it, against {} spread net of it (for example: {}, the host {}, net {:+.1}%); the figures' values are as measured",
        changes.len(),
        if changes.len() == 1 { "" } else { "s" },
        if changes.len() == 1 { "it is" } else { "they are" },
        if changes.len() == 1 { "its" } else { "their" },
        if changes.len() == 1 { "its" } else { "their" },
        example.name,
        slower(shown.reference_change_pct),
        shown.net_change_pct
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Verdict;
    use crate::model::account::Account;
    use crate::model::figures::{Better, FigureValue, Kept};
    use crate::stats::Follows;

    /// A rate of 1000 on a host whose speed moves: each earlier run's value follows its
    /// reference (slope −1) with 0.5% of its own.
    fn history() -> Vec<Kept> {
        let speeds = [1.00, 1.06, 0.95, 1.03, 0.92, 1.08, 0.98, 1.01, 0.94, 1.05];
        let own = [
            0.004, -0.005, 0.002, -0.003, 0.005, 0.0, -0.004, 0.003, -0.002, 0.001,
        ];
        speeds
            .iter()
            .zip(own)
            .map(|(s, e)| Kept {
                repeat_group: None,
                noise_floor_pct: None,
                figures: vec![
                    value("rate", 1000.0 * s * (1.0 + e), Some(1.0 / s)),
                    value(HOST_REFERENCE_KEY, 1.0 / s, None),
                ],
                plan: None,
                machine_id: None,
                account: Vec::new(),
            })
            .collect()
    }

    fn value(key: &str, v: f64, host_ms: Option<f64>) -> FigureValue {
        FigureValue {
            key: key.into(),
            name: key.into(),
            unit: "lps".into(),
            better: Better::Higher,
            value: v,
            host_ms,
            spread: false,
        }
    }

    /// A figure of one run: `value`, measured beside a reference of `host_ms`.
    fn figure(key: &str, value: f64, host_ms: f64) -> Figure {
        let account: Account =
            serde_json::from_str(&format!(r#"{{"wall_ns":1000000000,"cpus":[0],"ticks":100,"user_pct":100.0,"system_pct":0.0,"irq_pct":0.0,"softirq_pct":0.0,"steal_pct":0.0,"iowait_pct":0.0,"idle_pct":0.0,"run_ns":1000000000,"wait_ns":0,"slices":1,"voluntary":0,"involuntary":0,"minor_faults":0,"major_faults":0,"reference_ns":{}}}"#, host_ms * 1e6))
                .expect("an account");
        Figure {
            accounts: vec![account],
            ..Figure::derived(key.into(), "s", key.into(), "lps", Better::Higher, value)
        }
    }

    fn judged(a: &Figure, b: &Figure, moved: bool) -> Row {
        let kept = history();
        let spread = HostSpread::of(&kept.iter().collect::<Vec<_>>());
        let row = Row::untested(a, a.value, b.value, Basis::WithinRun, [0, 0]);
        net_of_host(row, a, b, &spread, moved)
    }

    #[test]
    fn a_change_the_hosts_speed_made_is_within_the_noise_net_of_it() {
        let spread = HostSpread::of(&history().iter().collect::<Vec<_>>());
        let f: &Follows = spread
            .follows(&figure("rate", 1.0, 1.0))
            .expect("it follows");
        assert!((f.slope + 1.0).abs() < 0.1, "slope {}", f.slope);
        // Its spread measured is about 5.5%; net of the host's speed, about 0.4%.
        assert!(spread.spreads["rate"].sd > 0.04 && f.net.sd < 0.01);
        // −9.8% on a host 8.1% slower: net about −2.5%, still beyond a spread of 0.4%.
        let r = judged(
            &figure("rate", 1000.0, 1.0),
            &figure("rate", 902.0, 1.081),
            false,
        );
        let h = r.host.expect("the host's change");
        assert_eq!(r.verdict, Verdict::Worse, "{r:?}");
        assert!((h.reference_change_pct - 8.1).abs() < 1e-9);
        assert!((h.net_change_pct - (0.902 * 1.081_f64.powf(-f.slope) - 1.0) * 100.0).abs() < 1e-9);
        // The same −9.8% where the host ran 10.9% slower: nothing net of it.
        let r = judged(
            &figure("rate", 1000.0, 1.0),
            &figure("rate", 902.0, 1.0 / 0.902),
            false,
        );
        assert_eq!(r.verdict, Verdict::WithinNoise, "{r:?}");
        assert!(r.host.unwrap().net_change_pct.abs() < 1.0);
        assert_eq!(r.basis, Basis::History);
        // A 5% drop on a host that ran as fast: worse, where its 5.5% spread alone would hide it.
        let r = judged(
            &figure("rate", 1000.0, 1.0),
            &figure("rate", 950.0, 1.0),
            false,
        );
        assert_eq!(r.verdict, Verdict::Worse, "{r:?}");
        assert!(r.floor_pct.unwrap() < 3.0);
    }

    #[test]
    fn where_the_reference_itself_moved_the_net_change_is_said_not_judged() {
        let a = figure("rate", 1000.0, 1.0);
        let b = figure("rate", 700.0, 1.0 / 0.7);
        let r = judged(&a, &b, true);
        let h = r.host.expect("the host's change");
        // The slope learnt from ten runs is −1 within a few hundredths (Theil–Sen's −0.97):
        // net of a 43% move, within 2%.
        assert!(!h.judged && h.net_change_pct.abs() < 2.0, "{h:?}");
        assert_eq!(r.verdict, Verdict::NotTested);
        assert_eq!(r.basis, Basis::WithinRun);
        // The reference's own move: 1/0.7 is far beyond its run-to-run spread here.
        let spread = HostSpread::of(&history().iter().collect::<Vec<_>>());
        let host = |ms: f64| {
            vec![Figure {
                key: HOST_REFERENCE_KEY.into(),
                ..figure("x", ms, ms)
            }]
        };
        let moved = reference_moved(&spread, &host(1.0), &host(1.0 / 0.7)).expect("moved");
        assert!((moved - (1.0 / 0.7 - 1.0) * 100.0).abs() < 1e-9);
        assert_eq!(reference_moved(&spread, &host(1.0), &host(1.04)), None);
    }

    #[test]
    fn a_figure_without_the_reference_beside_it_is_judged_as_before() {
        let a = Figure::derived(
            "rate".into(),
            "s",
            "r".into(),
            "lps",
            Better::Higher,
            1000.0,
        );
        let b = Figure {
            value: 900.0,
            ..a.clone()
        };
        let r = judged(&a, &b, false);
        assert_eq!(r.host, None);
        assert_eq!(r.verdict, Verdict::NotTested);
    }
}
