//! Video, X and Custom as loads: the simulation of the same name, unmeasured — its task thread
//! SCHED_OTHER, its timekeeper as interbench v0.31 runs a load's (SCHED_FIFO 96 where
//! permitted: its comment meant SCHED_OTHER, its start-up order made it real-time).

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};

use super::sim::{self, LatencyRecorder, Profile};
use super::{BackgroundLoad, RunInputs, Starter, Tally, Uncounted, STACK};
use crate::calibration::Burner;
use crate::model::interactive::{Bench, CustomSpec, Load};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Simulation {
    pub bench: Bench,
    pub custom: Option<CustomSpec>,
    pub loops_per_ms: u64,
    pub timekeeping: sim::Timekeeping,
}

impl Simulation {
    /// `load`'s simulation: one of Video, X and Custom.
    pub fn of(load: Load, run: &RunInputs) -> Simulation {
        Simulation {
            bench: load.same_as().unwrap_or(Bench::Video),
            custom: run.custom,
            loops_per_ms: run.loops_per_ms,
            timekeeping: run.timekeeping.clone(),
        }
    }

    pub fn load(&self) -> Load {
        match self.bench {
            Bench::X => Load::X,
            Bench::Custom => Load::Custom,
            _ => Load::Video,
        }
    }
}

impl BackgroundLoad for Simulation {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        let bench = self.bench;
        let profile = Profile::of(bench, self.custom)
            .ok_or_else(|| anyhow!("{} needs -C and -I", bench.name()))?;
        let burner = Burner::interbench(self.loops_per_ms);
        let timekeeping = self.timekeeping.clone();
        s.spawn_gated("hb-sim-load", STACK, move |stop, policies, gate| {
            let new = || LatencyRecorder::new(0, 10_000_000_000);
            let (mut latency, mut wake, mut from_deadline) = (new()?, new()?, new()?);
            let recorders = sim::PeriodicRecorders {
                latency: &mut latency,
                wake: &mut wake,
                from_deadline: &mut from_deadline,
                marker: None,
            };
            // The timekeeper is made and set up before the load's gate, as interbench makes a
            // load's; a load stopped at the gate runs no period.
            let out = sim::run_periodic(profile, burner, &stop, timekeeping, recorders, gate)?;
            if let Some(p) = out.timer.policy {
                policies.record(p);
            }
            Ok(())
        })?;
        Ok(Box::new(Uncounted))
    }
}
