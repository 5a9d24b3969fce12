//! A result as a flat list of figures: one per measurement, with a stable key, its unit, which
//! direction is better, and the samples a two-sample test can use. `compare`, `results export`
//! and the HTML report read results through this view.

use serde::{Deserialize, Serialize};

use super::RunResult;
use crate::text::Text;

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// One measurement of a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Stable across runs of the same plan: `suite/what/figure`, for pairing and for CSV.
    pub key: String,
    pub suite: String,
    /// For people.
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub value: f64,
    /// The independent samples behind `value` (empty where it is a single figure).
    pub samples: Vec<f64>,
    /// What one sample is.
    pub sample_kind: String,
    /// The smallest difference of this figure that is a measurement, in its unit, where one
    /// is known: for a latency, the timer's own mean lateness in that pair (a change smaller
    /// than the timer's lateness is the timer's, not the scheduler's); for % deadlines met and
    /// % desired CPU, one deadline or one burn of the run. None: no such bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// For a percentage of counted events (% deadlines met, % desired CPU): how many events it
    /// is of. A bound learnt from a few runs is never narrower than the count's own spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of_events: Option<u64>,
    /// The figure is itself a measure of the host's noise (p1bench's percentiles of % slower
    /// than the fastest run): the host's noise floor does not apply to its changes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_spread: bool,
    /// The host's account of each stretch the figure was measured over, where the suite keeps
    /// one: each sample's, in the samples' order (a noise run, a sched run, an index iteration),
    /// or the one of its interactive pair (whose samples are batches within it). `compare`
    /// tests each item beside the figure, on two or more a side. Empty otherwise. Not written
    /// out: the result holds them.
    #[serde(skip)]
    pub accounts: Vec<super::account::Account>,
}

impl Figure {
    /// A figure without samples of its own (computed from others, or one per run).
    pub(crate) fn derived(
        key: String,
        suite: &str,
        name: String,
        unit: &str,
        better: Better,
        value: f64,
    ) -> Figure {
        Figure {
            key,
            suite: suite.into(),
            name,
            unit: unit.into(),
            better,
            value,
            samples: Vec::new(),
            sample_kind: "derived".into(),
            resolution: None,
            of_events: None,
            is_spread: false,
            accounts: Vec::new(),
        }
    }
}

impl Figure {
    /// The host's speed while the figure was measured: the geometric mean of the fixed-work
    /// reference over its stretches that read it (`Account::reference_ns`), ms; None where
    /// none did.
    pub fn host_ms(&self) -> Option<f64> {
        geometric_mean_ms(self.accounts.iter().filter_map(|a| a.reference_ns))
    }
}

/// The geometric mean of readings in ns, in ms; None for none.
fn geometric_mean_ms(ns: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum) = ns
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold((0usize, 0.0), |(n, s), x| (n + 1, s + x.ln()));
    (n > 0).then(|| (sum / n as f64).exp() / 1e6)
}

/// The key of the run's own host-speed figure ([`host_figure`]).
pub const HOST_REFERENCE_KEY: &str = "host/reference/fixed-work job";

/// The run's host speed as a figure of its own: the fixed-work reference over every stretch
/// that read it (ms, lower is faster), each stretch a sample. Compared like any figure, so a
/// change of the host's speed itself (a kernel's mitigations, a governor) shows; None where no
/// stretch read it.
fn host_figure(result: &RunResult) -> Option<Figure> {
    let accounts: Vec<&super::account::Account> = result
        .suites
        .iter()
        .flat_map(|s| s.data().stretches())
        .flat_map(|s| s.accounts)
        .filter(|a| a.reference_ns.is_some())
        .collect();
    let value = geometric_mean_ms(accounts.iter().filter_map(|a| a.reference_ns))?;
    Some(Figure {
        samples: accounts
            .iter()
            .filter_map(|a| a.reference_ns)
            .map(|ns| ns / 1e6)
            .collect(),
        sample_kind: "stretch".into(),
        // Its stretches' accounts, so that a change of the host's speed has the account's
        // items beside it (a softirq flood slows the reference too).
        accounts: accounts.iter().map(|a| (*a).clone()).collect(),
        ..Figure::derived(
            HOST_REFERENCE_KEY.into(),
            "host",
            "host: fixed-work reference".into(),
            "ms",
            Better::Lower,
            value,
        )
    })
}

/// Where the threads of a placement-sensitive figure ran: a pipe ping-pong between two CPUs
/// costs up to three times one within a CPU, so the two are different figures. Free figures
/// keep the keys they always had; pinned ones get " pinned" in theirs, so `compare`, which
/// pairs figures by key, never pairs a pinned figure with a free one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Wherever the scheduler put them.
    Free,
    /// `--pin` (index, sched) or `-u` (interactive): each ping-pong's ends on one CPU.
    Pinned,
}

impl Placement {
    pub fn of(pinned: bool) -> Self {
        if pinned {
            Placement::Pinned
        } else {
            Placement::Free
        }
    }

    pub(crate) fn key_suffix(self) -> &'static str {
        match self {
            Placement::Free => "",
            Placement::Pinned => " pinned",
        }
    }

    pub(crate) fn name_suffix(self) -> &'static str {
        match self {
            Placement::Free => ", free",
            Placement::Pinned => ", pinned",
        }
    }
}

/// Consecutive batches an interactive latency series is cut into: the batches' means are
/// close to independent where single wake-ups, one after another, are not.
pub const LATENCY_BATCHES: usize = 10;

/// Every figure of `result`, suite by suite (each suite says its own: `SuiteData::figures`).
pub fn figures(result: &RunResult) -> Vec<Figure> {
    let mut out = Vec::new();
    for suite in &result.suites {
        suite.data().figures(&mut out);
    }
    out.extend(host_figure(result));
    out
}

/// A figure's value without its samples: what a series over many results needs of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureValue {
    #[serde(rename = "k")]
    pub key: Text,
    #[serde(rename = "n")]
    pub name: Text,
    #[serde(rename = "u")]
    pub unit: Text,
    #[serde(rename = "b")]
    pub better: Better,
    #[serde(rename = "v")]
    pub value: f64,
    /// The host's speed beside it (`Figure::host_ms`), where its stretches read it.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub host_ms: Option<f64>,
    /// The figure is a spread of its runs (`Figure::is_spread`: a maximum or upper
    /// percentile), whose noise is skewed toward larger by construction.
    #[serde(rename = "s", default, skip_serializing_if = "std::ops::Not::not")]
    pub spread: bool,
}

/// What the store keeps of a result beside it for `history` (layout 9): every figure's value
/// (the finite ones), its repeat group and its noise floor, so a long series is read without
/// the results' JSON. Short field names: a quick run has about 140 figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub repeat_group: Option<i64>,
    pub noise_floor_pct: Option<f64>,
    pub figures: Vec<FigureValue>,
    /// `plan_digest` of the result (None in rows kept before it was: the result is then read
    /// to learn it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Text>,
    /// The host's /etc/machine-id, where it has one (None too in rows kept before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<Text>,
    /// The result's account in a few numbers (`account::summary`), by item name; empty in rows
    /// kept before it was, and for results without accounts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub account: Vec<(String, f64)>,
}

impl Kept {
    pub fn of(result: &RunResult) -> Kept {
        Kept {
            repeat_group: result.repeat.map(|r| r.group),
            noise_floor_pct: result.noise_floor_pct(),
            figures: figures(result)
                .into_iter()
                .filter(|f| f.value.is_finite())
                .map(|f| FigureValue {
                    host_ms: f.host_ms(),
                    spread: f.is_spread,
                    key: f.key.into(),
                    name: f.name.into(),
                    unit: f.unit.into(),
                    better: f.better,
                    value: f.value,
                })
                .collect(),
            plan: Some(plan_digest(result).into()),
            machine_id: result.environment.host.machine_id.clone(),
            account: super::account::summary(
                &result
                    .suites
                    .iter()
                    .flat_map(|s| s.data().stretches())
                    .collect::<Vec<_>>(),
            ),
        }
    }

    /// As stored: None for what does not read back as one (a row edited by hand), whose
    /// result is then read whole.
    pub fn parse(json: &str) -> Option<Kept> {
        serde_json::from_str(json).ok()
    }
}

/// What a result's suites were set to measure, in one short string: a name-based UUID of each
/// suite's name and settings (`SuiteData::settings`). Equal for two runs of the same command
/// and profile on one host (the settings a host derives, such as thread counts from its CPUs,
/// are equal there), different where any measuring option differs; where its results, work files and
/// output go are not settings.
pub fn plan_digest(result: &RunResult) -> String {
    let plan: Vec<(&str, serde_json::Value)> = result
        .suites
        .iter()
        .map(|s| (s.name(), s.data().settings()))
        .collect();
    let json = serde_json::to_string(&plan).unwrap_or_default();
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, json.as_bytes()).to_string()
}

/// The means of `batches` consecutive, equal slices of `samples_ns`, in ms (the remainder left
/// out); empty when there are fewer than two samples a batch.
pub fn batch_means_ms(samples_ns: &[u64], batches: usize) -> Vec<f64> {
    let ms: Vec<f64> = samples_ns.iter().map(|&x| x as f64 / 1e6).collect();
    crate::stats::batch_means(&ms, batches)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs of the same settings share a plan whatever they measured and wherever they
    /// ran; a measuring option apart, or another suite, and they do not; a comment is no
    /// setting.
    #[test]
    fn the_plan_digest_tells_runs_of_other_settings_apart() {
        use crate::model::interactive::InteractiveResult;
        use crate::model::SuiteResult;
        let a = RunResult::example("h1", false);
        let mut b = RunResult::example("h2", true);
        b.started_at += chrono::Duration::hours(1);
        assert_eq!(plan_digest(&a), plan_digest(&b));
        let mut c = a.clone();
        let SuiteResult::Noise(n) = &mut c.suites[0] else {
            unreachable!()
        };
        n.settings.target_ms += 1;
        assert_ne!(plan_digest(&a), plan_digest(&c));
        let mut i = a.clone();
        i.suites = vec![SuiteResult::Interactive(InteractiveResult::example())];
        assert_ne!(plan_digest(&a), plan_digest(&i));
        let with = |change: fn(&mut InteractiveResult)| {
            let mut r = i.clone();
            let SuiteResult::Interactive(x) = &mut r.suites[0] else {
                unreachable!()
            };
            change(x);
            plan_digest(&r)
        };
        let commented = with(|x| x.settings.comment = Some("after the kernel update".into()));
        assert_eq!(plan_digest(&i), commented);
        let memload = |x: &mut InteractiveResult| x.settings.memload_mb = Some(1000);
        assert_ne!(plan_digest(&i), with(memload));
        assert_eq!(
            with(memload),
            with(|x| x.settings.memload_mb = Some(1100)),
            "Memload's size follows the free memory"
        );
        assert_ne!(plan_digest(&i), with(|x| x.settings.burn_threads += 1));
        assert_eq!(Kept::of(&a).plan, Some(plan_digest(&a).into()));
    }

    #[test]
    fn batch_means_cut_the_series_in_order() {
        let s: Vec<u64> = (1..=21).map(|x| x * 1_000_000).collect();
        // 21 samples in 10 batches of 2 (the last sample left out).
        let m = batch_means_ms(&s, 10);
        assert_eq!(m.len(), 10);
        assert_eq!(m[0], 1.5);
        assert_eq!(m[9], 19.5);
        assert!(batch_means_ms(&s[..19], 10).is_empty());
    }
}
