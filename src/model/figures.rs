//! A result as a flat list of figures: one per measurement, with a stable key, its unit, which
//! direction is better, and the samples a two-sample test can use. `compare`, `results export`
//! and the HTML report read results through this view.

use serde::{Deserialize, Serialize};

use super::index::scoring;
use super::interactive::Measurement;
use super::noise::NoiseMode;
use super::{RunResult, SuiteResult};

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
}

impl Figure {
    /// A figure without samples of its own (computed from others, or one per run).
    fn derived(
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
        }
    }
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

    fn key_suffix(self) -> &'static str {
        match self {
            Placement::Free => "",
            Placement::Pinned => " pinned",
        }
    }

    fn name_suffix(self) -> &'static str {
        match self {
            Placement::Free => ", free",
            Placement::Pinned => ", pinned",
        }
    }
}

/// Consecutive batches an interactive latency series is cut into: the batches' means are
/// close to independent where single wake-ups, one after another, are not.
pub const LATENCY_BATCHES: usize = 10;

/// A noise part's fixed job, as its figures name it: `cpu 10 ms`, `memory 64 MB 10 ms`.
pub fn noise_job(settings: &crate::model::noise::NoiseSettings) -> String {
    match settings.mode {
        NoiseMode::Cpu => format!("cpu {} ms", settings.target_ms),
        NoiseMode::Memory { working_set_mb } => {
            format!("memory {working_set_mb} MB {} ms", settings.target_ms)
        }
    }
}

pub fn figures(result: &RunResult) -> Vec<Figure> {
    let mut out = Vec::new();
    for suite in &result.suites {
        match suite {
            SuiteResult::Noise(n) => {
                let job = noise_job(&n.settings);
                let samples: Vec<f64> = n.runs.iter().map(|r| r.time_ns as f64 / 1e6).collect();
                if let Some(s) = &n.summary {
                    out.push(Figure {
                        key: format!("noise/{job}/run time"),
                        suite: "noise".into(),
                        name: format!("noise: run time of the {job} job"),
                        unit: "ms".into(),
                        better: Better::Lower,
                        value: s.mean_ns / 1e6,
                        samples,
                        sample_kind: "run".into(),
                    });
                }
            }
            SuiteResult::Index(i) => {
                let placement = Placement::of(i.settings.pin);
                for pass in &i.passes {
                    let copies = format!(
                        "{} cop{}",
                        pass.copies,
                        if pass.copies == 1 { "y" } else { "ies" }
                    );
                    // Pinned copies are other figures than free ones: a key of their own.
                    let keyed = format!("{copies}{}", placement.key_suffix());
                    for t in &pass.tests {
                        let Some(score) = &t.score else { continue };
                        let timebase = t.timebase();
                        out.push(Figure {
                            key: format!("index/{keyed}/{}", t.name),
                            suite: "index".into(),
                            name: format!("{}, {copies}{}", t.msg, placement.name_suffix()),
                            unit: t.unit.clone(),
                            better: Better::Higher,
                            value: score.score,
                            // The iterations the score keeps: a test compares the same
                            // set the score is made of.
                            samples: scoring::kept(&t.passes)
                                .iter()
                                .map(|p| p.rate(timebase))
                                .collect(),
                            sample_kind: "iteration kept by the score".into(),
                        });
                    }
                    for (what, idx) in [
                        ("2D Graphics", pass.index_2d),
                        ("3D Graphics", pass.index_3d),
                        ("Non-Index", pass.index_misc),
                        ("System", pass.system_index),
                    ] {
                        if let Some(idx) = idx {
                            out.push(Figure::derived(
                                format!("index/{keyed}/{what} Benchmarks Index Score"),
                                "index",
                                format!(
                                    "{what} Benchmarks Index Score, {copies}{}",
                                    placement.name_suffix()
                                ),
                                "index",
                                Better::Higher,
                                idx,
                            ));
                        }
                    }
                }
            }
            SuiteResult::Interactive(i) => {
                let placement = Placement::of(i.settings.pinned_cpu.is_some());
                for m in &i.measurements {
                    interactive_figures(m, placement, &mut out);
                }
            }
            SuiteResult::Sched(s) => {
                for p in &s.points {
                    if p.runs.is_empty() {
                        continue;
                    }
                    let placement = Placement::of(s.settings.pin);
                    out.push(Figure {
                        key: format!(
                            "sched/{} threads {} sets{}/us per round",
                            p.threads,
                            p.active_sets,
                            placement.key_suffix()
                        ),
                        suite: "sched".into(),
                        name: format!(
                            "sched: {} threads in {} active sets{}",
                            p.threads,
                            p.active_sets,
                            placement.name_suffix()
                        ),
                        unit: "us/round".into(),
                        better: Better::Lower,
                        value: p.mean_us_per_round,
                        samples: p.runs.iter().map(|r| r.us_per_round).collect(),
                        sample_kind: "run".into(),
                    });
                }
            }
        }
    }
    out
}

fn interactive_figures(m: &Measurement, placement: Placement, out: &mut Vec<Figure>) {
    let what = format!(
        "{} under {}{}",
        m.bench.name(),
        m.load.name(),
        placement.name_suffix()
    );
    let key = format!(
        "interactive/{}/{}{}",
        m.bench.name(),
        m.load.name(),
        placement.key_suffix()
    );
    out.push(Figure {
        key: format!("{key}/latency mean"),
        suite: "interactive".into(),
        name: format!("{what}: latency mean"),
        unit: "ms".into(),
        better: Better::Lower,
        value: m.latency.mean_ns / 1e6,
        samples: batch_means_ms(&m.samples_ns, LATENCY_BATCHES),
        sample_kind: format!("mean of a tenth of the run ({LATENCY_BATCHES} batches)"),
    });
    if let Some(w) = &m.wake {
        out.push(Figure {
            key: format!("{key}/wake mean"),
            suite: "interactive".into(),
            name: format!("{what}: wake-up latency mean"),
            unit: "ms".into(),
            better: Better::Lower,
            value: w.mean_ns / 1e6,
            samples: batch_means_ms(&m.wake_samples_ns, LATENCY_BATCHES),
            sample_kind: format!("mean of a tenth of the run ({LATENCY_BATCHES} batches)"),
        });
    }
    let single = [
        (
            "latency p99",
            "ms",
            Better::Lower,
            Some(m.latency.p99_ns as f64 / 1e6),
        ),
        (
            "wake p99",
            "ms",
            Better::Lower,
            m.wake.map(|w| w.p99_ns as f64 / 1e6),
        ),
        ("deadlines met", "%", Better::Higher, m.deadlines_met_pct),
        ("desired CPU", "%", Better::Higher, Some(m.desired_cpu_pct)),
    ];
    for (figure, unit, better, value) in single {
        if let Some(v) = value {
            out.push(Figure::derived(
                format!("{key}/{}", figure.to_lowercase()),
                "interactive",
                format!("{what}: {figure}"),
                unit,
                better,
                v,
            ));
        }
    }
}

/// The means of `batches` consecutive, equal slices of `samples_ns`, in ms (the remainder left
/// out); empty when there are fewer than two samples a batch.
pub fn batch_means_ms(samples_ns: &[u64], batches: usize) -> Vec<f64> {
    let size = samples_ns.len() / batches;
    if size < 2 {
        return Vec::new();
    }
    samples_ns
        .chunks_exact(size)
        .take(batches)
        .map(|c| c.iter().map(|&x| x as f64).sum::<f64>() / c.len() as f64 / 1e6)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
