//! Each figure's run-to-run spread on one host, learnt from the host's earlier stored runs of
//! the same plan: the noise floor a comparison of one run a side judges each figure against.

use std::collections::{BTreeSet, HashMap};

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::model::figures::{plan_digest, Figure, Kept, HOST_REFERENCE_KEY};
use crate::model::RunResult;
use crate::stats::{Follows, Grain, RunBound, RunSpread};
use crate::store::{Filter, ResultStore};
use crate::text::Text;

/// Each figure's run-to-run spread on one host, from its earlier runs of the same plan: what a
/// comparison of one run a side takes as each figure's noise floor. Within one run, samples
/// cannot show how far the next run will land (the CPU's speed drifts over minutes, a
/// ping-pong lands on other CPUs); the host's own earlier runs can.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostSpread {
    /// The earlier runs found (the spread is used from [`HostSpread::MIN_RUNS`] on).
    pub runs: usize,
    /// By figure key: its values' spread over those runs (`stats::RunSpread`).
    pub spreads: HashMap<String, RunSpread>,
    /// By figure key, for the figures that followed the host's speed over those runs (the
    /// fixed-work reference beside them): the slope, and the spread net of it
    /// (`stats::Follows`).
    pub follows: HashMap<String, Follows>,
}

impl HostSpread {
    /// The fewest earlier runs whose spread is used.
    pub const MIN_RUNS: usize = 3;

    /// From the figures of the earlier runs (what the store keeps beside each result).
    pub fn of(earlier: &[&Kept]) -> HostSpread {
        let mut values: HashMap<&str, Vec<f64>> = HashMap::new();
        let mut beside: HashMap<&str, Vec<(f64, f64)>> = HashMap::new();
        for k in earlier {
            for f in &k.figures {
                values.entry(f.key.raw()).or_default().push(f.value);
                if let Some(h) = f.host_ms {
                    beside.entry(f.key.raw()).or_default().push((f.value, h));
                }
            }
        }
        HostSpread {
            runs: earlier.len(),
            follows: beside
                .into_iter()
                .filter(|(key, _)| *key != HOST_REFERENCE_KEY)
                .filter_map(|(key, pairs)| Some((key.to_string(), Follows::of(&pairs)?)))
                .collect(),
            spreads: values
                .into_iter()
                .filter(|(_, v)| v.len() >= Self::MIN_RUNS)
                .filter_map(|(key, v)| Some((key.to_string(), RunSpread::of(&v)?)))
                .collect(),
        }
    }

    /// The 95% bound of the change between two runs of the figure `a` and `b` are of
    /// (`RunSpread::bound`), at the coarser grain of the two (the larger resolution, the
    /// fewer events); None where its history is too short.
    pub fn bound(&self, a: &Figure, b: &Figure) -> Option<RunBound> {
        Some(self.spreads.get(&a.key)?.bound(grain(a, b)))
    }

    /// The smallest change of that figure one run a side finds nine times in ten on this host
    /// (`RunSpread::smallest_found`), percent on its bound's scale; None where its history is
    /// too short.
    pub fn smallest_found(&self, a: &Figure, b: &Figure) -> Option<f64> {
        Some(self.spreads.get(&a.key)?.smallest_found(grain(a, b)))
    }

    /// How the figure `a` and `b` are of followed the host's speed, where its history says it
    /// did.
    pub fn follows(&self, a: &Figure) -> Option<&Follows> {
        self.follows.get(&a.key)
    }

    pub(super) fn usable(&self) -> bool {
        self.runs >= Self::MIN_RUNS
    }
}

/// The coarser grain of two runs of a figure: the larger resolution, the fewer events.
pub(super) fn grain(a: &Figure, b: &Figure) -> Grain {
    fn coarser<T: PartialOrd>(x: Option<T>, y: Option<T>, pick: fn(T, T) -> T) -> Option<T> {
        match (x, y) {
            (Some(x), Some(y)) => Some(pick(x, y)),
            (x, y) => x.or(y),
        }
    }
    Grain {
        step: coarser(a.resolution, b.resolution, f64::max),
        of_events: coarser(a.of_events, b.of_events, u64::min).map(|n| n as f64),
    }
}

/// Most earlier runs a single-run comparison takes each figure's spread from: the latest, as
/// a host's speed and kernel move over months.
pub const SPREAD_RUNS: usize = 20;

/// Most earlier runs with the same figures looked through for those with the same plan.
pub const SPREAD_LOOKED_AT: usize = 100;

/// The host a result is of, as the store's filter names it.
pub fn host_of(r: &RunResult) -> String {
    r.host_name().raw().to_string()
}

/// The run-to-run spread of each figure of `like` over its host's (label, else machine id and
/// hostname) stored runs started before `before` — complete, not among `exclude`, with the
/// same figures and the same plan as `like` (`plan_digest`: the same command and profile) —
/// the latest [`SPREAD_RUNS`] of them, looked for among the latest [`SPREAD_LOOKED_AT`] with
/// the same figures.
pub fn host_spread(
    store: &dyn ResultStore,
    like: &RunResult,
    before: DateTime<Utc>,
    exclude: &[i64],
) -> Result<HostSpread> {
    let filter = Filter {
        host: Some(host_of(like)),
        until: Some(before),
        ..Filter::default()
    };
    let mut kept = store.kept(&filter)?;
    let own = Kept::of(like);
    // The same figures, the host's own speed figure apart (runs stored before it was read
    // are history too).
    let measured = |k: &Kept| -> BTreeSet<String> {
        k.figures
            .iter()
            .map(|f| f.key.raw())
            .filter(|key| *key != HOST_REFERENCE_KEY)
            .map(String::from)
            .collect()
    };
    let keys = measured(&own);
    let same_keys = |k: &Kept| measured(k) == keys;
    let earlier: Vec<i64> = store
        .list(&filter)?
        .iter()
        .filter(|e| !e.incomplete && e.problem.is_none() && !exclude.contains(&e.id))
        .filter(|e| e.started_at.is_some_and(|t| t < before))
        .map(|e| e.id)
        .filter(|id| kept.get(id).is_some_and(same_keys))
        .collect();
    // Without a label, the host is its machine id where both runs know one (two machines may
    // share a hostname), else its hostname.
    let same_machine = |machine: &Option<Text>| {
        like.host_label.is_some()
            || machine.is_none()
            || own.machine_id.is_none()
            || *machine == own.machine_id
    };
    let mut latest: Vec<Kept> = Vec::new();
    for id in earlier.iter().rev().take(SPREAD_LOOKED_AT) {
        let Some(k) = kept.remove(id) else { continue };
        // Rows kept before the plan was do not say it, nor the machine: their result does
        // (one that cannot be read is no history).
        let (plan, machine) = match &k.plan {
            Some(p) => (Some(p.clone()), k.machine_id.clone()),
            None => match store.load(*id).ok().flatten() {
                Some(r) => (Some(plan_digest(&r).into()), r.environment.host.machine_id),
                None => (None, None),
            },
        };
        // `own.plan` is always said: a plan not learnt matches nothing.
        if plan == own.plan && same_machine(&machine) {
            latest.push(k);
            if latest.len() == SPREAD_RUNS {
                break;
            }
        }
    }
    Ok(HostSpread::of(&latest.iter().collect::<Vec<_>>()))
}
