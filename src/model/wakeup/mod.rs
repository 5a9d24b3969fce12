//! The wakeup suite's result (schbench): the settings as resolved, and schbench's three tables —
//! wakeup latency, request latency and requests a second — with what hostbench keeps beside
//! them (the histograms whole, for the report's CDFs, and the rate each second).

use serde::{Deserialize, Serialize};

use super::account::{Account, Stretches};
use super::explain::Explained;
use super::figures::{Better, Figure};
use super::headline::{self, Column, Figure as HeadlineFigure, AT_LEAST_ZERO};
use super::{implausible_s, SuiteData, SuiteResult};
use crate::stats::plat::Plat;

/// schbench's defaults: `-m`, `-r` (s), `-w` (s), `-F` (KB), `-n`, `-s` (µs). `-t` is the
/// CPU count over the message threads.
pub const DEFAULT_MESSAGE_THREADS: usize = 1;
pub const DEFAULT_RUNTIME_S: u64 = 30;
pub const DEFAULT_WARMUP_S: u64 = 5;
pub const DEFAULT_FOOTPRINT_KB: u64 = 256;
pub const DEFAULT_OPERATIONS: u64 = 5;
pub const DEFAULT_SLEEP_US: u64 = 100;

/// The percentiles of schbench's latency tables, and of its RPS table.
pub const LATENCY_PCTS: [f64; 4] = [50.0, 90.0, 99.0, 99.9];
/// The pipe test's table starts at the 20th as well.
pub const PIPE_PCTS: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];
pub const RPS_PCTS: [f64; 3] = [20.0, 50.0, 90.0];

/// The settings of a wakeup run, resolved (the worker count and warm-up as they ran).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeupSettings {
    pub message_threads: usize,
    /// Workers of each message thread.
    pub workers: usize,
    pub runtime_s: u64,
    pub warmup_s: u64,
    #[serde(default)]
    pub zero_s: u64,
    pub footprint_kb: u64,
    pub operations: u64,
    /// `--split P`: P% of the footprint is each worker's own and the rest one set of matrices
    /// all workers share; P% of a request's operations use the worker's own (None: all own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_pct: Option<u32>,
    pub sleep_us: u64,
    pub locking: bool,
    pub calibrate: bool,
    /// Requests a second asked for (`-R`; 0: saturate).
    pub rps: u64,
    /// `-A` (0: off).
    pub auto_rps_pct: u32,
    /// `-p` (0: off).
    pub pipe_bytes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_cpus: Option<Vec<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_cpus: Option<Vec<usize>>,
    /// `--explain N`: the N worst wakeups explained from the kernel's scheduling trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<u32>,
}

impl WakeupSettings {
    /// The side of each of a worker's own matrices: three of them fill the footprint, 8-byte
    /// elements; with `--split`, its private share of it (schbench's integer KB).
    pub fn matrix_side(&self) -> usize {
        side_of(split_kb(self.footprint_kb, self.split_pct).0)
    }

    /// With `--split`: the side of the shared matrices (the footprint's other share).
    pub fn shared_side(&self) -> Option<usize> {
        self.split_pct
            .map(|_| side_of(split_kb(self.footprint_kb, self.split_pct).1))
    }

    /// A request's operations on the worker's own matrices, and on the shared ones.
    pub fn operations_split(&self) -> (u64, u64) {
        match self.split_pct {
            Some(p) => {
                let own = self.operations * u64::from(p) / 100;
                (own, self.operations - own)
            }
            None => (self.operations, 0),
        }
    }

    /// Requests are posted at a rate (`-R`, `-A`) rather than asked for by idle workers.
    pub fn rps_mode(&self) -> bool {
        self.rps > 0
    }
}

/// `-F` KB as each worker's own and the shared matrices' KB: with `--split P`, P% and the rest,
/// each rounded down as schbench does (the two may add up to a KB less); without, all its own.
pub fn split_kb(footprint_kb: u64, split_pct: Option<u32>) -> (u64, u64) {
    match split_pct {
        Some(p) => (
            footprint_kb.saturating_mul(u64::from(p)) / 100,
            footprint_kb.saturating_mul(u64::from(100 - p.min(100))) / 100,
        ),
        None => (footprint_kb, 0),
    }
}

/// The side of three square matrices of 8-byte elements in `kb` KB, as schbench rounds it.
fn side_of(kb: u64) -> usize {
    ((kb * 1024 / 3 / 8) as f64).sqrt() as usize
}

/// One row of a schbench table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub pct: f64,
    pub value: u32,
    /// Samples between the row before and this one.
    pub samples: u64,
}

/// One of schbench's tables: its percentiles, its sample count, min and max; and the
/// histogram's buckets that hold anything (value, count), for the report's CDF.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub samples: u64,
    pub rows: Vec<Row>,
    pub min: u32,
    pub max: u32,
    #[serde(default)]
    pub buckets: Vec<(u32, u64)>,
}

impl Table {
    /// The table of `plat` at `pcts`.
    pub fn of(plat: &Plat, pcts: &[f64]) -> Table {
        Table {
            samples: plat.samples,
            rows: plat
                .percentiles(pcts)
                .into_iter()
                .map(|p| Row {
                    pct: p.pct,
                    value: p.value,
                    samples: p.samples,
                })
                .collect(),
            min: plat.min().unwrap_or(0),
            max: plat.max().unwrap_or(0),
            buckets: plat.nonzero(),
        }
    }

    /// The value at `pct`, where the table has that row and any samples.
    pub fn at(&self, pct: f64) -> Option<u32> {
        if self.samples == 0 {
            return None;
        }
        self.rows.iter().find(|r| r.pct == pct).map(|r| r.value)
    }
}

/// A wakeup result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeupResult {
    pub settings: WakeupSettings,
    /// µs from a worker's wake-up to its running.
    pub wakeup: Table,
    /// µs a request took (None in the pipe test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Table>,
    /// Requests a second, a sample a second (None in the pipe test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rps: Option<Table>,
    /// schbench's "average rps": the run's requests over its run time (None with `-A`, where
    /// schbench says the rate it ended at, and in the pipe test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_rps: Option<f64>,
    /// `-A`: the rate it ended at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_rps_goal: Option<u64>,
    /// The pipe test's "avg worker transfer": hand-offs a second of one worker, and bytes a
    /// second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe_ops_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe_bytes_per_s: Option<f64>,
    /// Each second: seconds since the start, requests a second over it.
    #[serde(default)]
    pub per_second: Vec<(f64, f64)>,
    /// How long it ran, seconds.
    pub elapsed_s: f64,
    /// A stop ended it before its run time.
    #[serde(default)]
    pub stopped: bool,
    /// schbench's "sched delay" line as the run ended (not in the pipe test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_delay: Option<SchedDelay>,
    /// `--explain`: the worst wakeups, post to running, explained from the kernel's trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained: Option<Explained>,
    /// What the host did while the statistics were kept, with the host's speed read just
    /// before the threads started and just after they ended (`Account::reference_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Box<Account>>,
}

/// schbench's "sched delay": the threads' average run-queue wait a slice, from the kernel's
/// schedstat over each thread's whole life (warm-up included), averaged over the message
/// threads and over the workers, µs (schbench's integer division).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedDelay {
    pub message_us: u64,
    pub worker_us: u64,
}

/// The fleet's column: the p99 wakeup latency, µs.
pub const WAKEUP_P99: Column = Column {
    key: "wakeup",
    name: "wakeup p99",
    unit: "us",
    bounds: AT_LEAST_ZERO,
    better: Better::Lower,
    is_spread: false,
    of: |r| {
        let w = headline::each(r, |s| match s {
            SuiteResult::Wakeup(w) => Some(w),
            _ => None,
        })
        .find(|w| w.wakeup.samples > 0)?;
        let what = mode(&w.settings);
        Some(HeadlineFigure {
            value: f64::from(w.wakeup.at(99.0)?),
            kind: what.clone().into(),
            note: what.into(),
        })
    },
};

/// The mode in a few words: "saturating", "200 rps", "pipe 65536 B", with the thread counts.
pub fn mode(s: &WakeupSettings) -> String {
    let how = if s.pipe_bytes > 0 {
        format!("pipe {} B", s.pipe_bytes)
    } else if s.auto_rps_pct > 0 {
        format!("auto rps to {}% busy", s.auto_rps_pct)
    } else if s.rps > 0 {
        format!("{} rps", s.rps)
    } else {
        "saturating".to_string()
    };
    format!("{how}, m={} t={}", s.message_threads, s.workers)
}

impl WakeupResult {
    /// The figures' key prefix: what was run, so results of other settings are other figures.
    fn key(&self) -> String {
        let s = &self.settings;
        let mut k = mode(s);
        if s.pipe_bytes == 0 {
            k.push_str(&format!(
                " F={} n={} s={}",
                s.footprint_kb, s.operations, s.sleep_us
            ));
            if let Some(p) = s.split_pct {
                k.push_str(&format!(" split={p}"));
            }
            if !s.locking {
                k.push_str(" L");
            }
            if s.calibrate {
                k.push_str(" C");
            }
        }
        k
    }
}

impl SuiteData for WakeupResult {
    fn name(&self) -> &'static str {
        "wakeup"
    }

    fn complete(&self) -> bool {
        !self.stopped
    }

    fn implausible(&self) -> Option<String> {
        if implausible_s(self.elapsed_s) {
            return Some(format!("wakeup ran {} s", self.elapsed_s));
        }
        let t = &self.wakeup;
        if t.samples > 0 && (t.min > t.max || t.rows.windows(2).any(|w| w[0].value > w[1].value)) {
            return Some(format!(
                "wakeup latency percentiles out of order: {:?}",
                t.rows
            ));
        }
        None
    }

    fn pinned(&self) -> bool {
        self.settings.message_cpus.is_some() || self.settings.worker_cpus.is_some()
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::to_value(&self.settings).unwrap_or_default()
    }

    fn stretches(&self) -> Vec<Stretches<'_>> {
        self.account
            .as_deref()
            .map(|a| Stretches {
                what: format!("wakeup, {}", mode(&self.settings)),
                accounts: vec![a],
                // The workers wait for the CPUs and for each other's locks by design.
                own_waits: true,
            })
            .into_iter()
            .collect()
    }

    fn figures(&self, out: &mut Vec<Figure>) {
        let start = out.len();
        self.own_figures(out);
        // Every figure is of the one stretch: its account beside each.
        if let Some(a) = &self.account {
            for f in &mut out[start..] {
                f.accounts = vec![(**a).clone()];
            }
        }
    }
}

impl WakeupResult {
    /// schbench's figures, without their account.
    fn own_figures(&self, out: &mut Vec<Figure>) {
        let key = self.key();
        let latency = |out: &mut Vec<Figure>, table: &Table, what: &str, pcts: &[f64]| {
            for &pct in pcts {
                if let Some(v) = table.at(pct) {
                    out.push(Figure::derived(
                        format!("wakeup/{key}/{what} p{pct}"),
                        "wakeup",
                        format!("wakeup: {what} p{pct} ({key})"),
                        "us",
                        Better::Lower,
                        f64::from(v),
                    ));
                }
            }
        };
        latency(out, &self.wakeup, "wakeup latency", &[50.0, 99.0, 99.9]);
        if let Some(r) = &self.request {
            latency(out, r, "request latency", &[50.0, 99.0]);
        }
        if let Some(avg) = self.average_rps {
            out.push(Figure {
                // Each second's rate after the warm-up (and after the start's 0).
                samples: self
                    .per_second
                    .iter()
                    .filter(|s| s.0 > (self.settings.warmup_s as f64).max(0.5))
                    .map(|s| s.1)
                    .collect(),
                sample_kind: "second".into(),
                ..Figure::derived(
                    format!("wakeup/{key}/average rps"),
                    "wakeup",
                    format!("wakeup: average rps ({key})"),
                    "requests/s",
                    Better::Higher,
                    avg,
                )
            });
        }
        if let Some(ops) = self.pipe_ops_per_s {
            out.push(Figure::derived(
                format!("wakeup/{key}/worker transfers a second"),
                "wakeup",
                format!("wakeup: worker transfers a second ({key})"),
                "ops/s",
                Better::Higher,
                ops,
            ));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn split_divides_the_footprint_and_the_operations_as_schbench() {
        let mut s = result(0).settings;
        assert_eq!((s.matrix_side(), s.shared_side()), (104, None));
        assert_eq!(s.operations_split(), (5, 0));
        // 33% of 256 KB: 84 KB own (sides 59), 171 KB shared (85); 5·33/100 = 1 op own.
        s.split_pct = Some(33);
        assert_eq!((s.matrix_side(), s.shared_side()), (59, Some(85)));
        assert_eq!(s.operations_split(), (1, 4));
        // All shared: no matrices of its own.
        s.split_pct = Some(0);
        assert_eq!((s.matrix_side(), s.shared_side()), (0, Some(104)));
        assert_eq!(s.operations_split(), (0, 5));
        s.split_pct = Some(100);
        assert_eq!((s.matrix_side(), s.shared_side()), (104, Some(0)));
        assert_eq!(s.operations_split(), (5, 0));
    }

    pub(crate) fn result(warmup_s: u64) -> WakeupResult {
        let mut plat = Plat::default();
        for v in [3, 4, 5, 40] {
            plat.record(v);
        }
        WakeupResult {
            settings: WakeupSettings {
                message_threads: 1,
                workers: 2,
                runtime_s: 8,
                warmup_s,
                zero_s: 0,
                footprint_kb: 256,
                operations: 5,
                split_pct: None,
                sleep_us: 100,
                locking: true,
                calibrate: false,
                rps: 0,
                auto_rps_pct: 0,
                pipe_bytes: 0,
                message_cpus: None,
                worker_cpus: None,
                explain: None,
            },
            wakeup: Table::of(&plat, &LATENCY_PCTS),
            request: Some(Table::of(&plat, &LATENCY_PCTS)),
            rps: None,
            average_rps: Some(100.0),
            final_rps_goal: None,
            pipe_ops_per_s: None,
            pipe_bytes_per_s: None,
            per_second: (0..=8).map(|t| (t as f64, 100.0 + t as f64)).collect(),
            elapsed_s: 8.0,
            stopped: false,
            sched_delay: None,
            explained: None,
            account: None,
        }
    }

    #[test]
    fn every_figure_has_the_runs_account_and_so_its_host_speed() {
        let mut r = result(0);
        let mut out = Vec::new();
        r.figures(&mut out);
        assert!(out.iter().all(|f| f.host_ms().is_none()));
        assert!(r.stretches().is_empty());
        let account: Account = serde_json::from_str(
            r#"{"wall_ns":1000000000,"cpus":[0],"ticks":100,"user_pct":100.0,"system_pct":0.0,"irq_pct":0.0,"softirq_pct":0.0,"steal_pct":0.0,"iowait_pct":0.0,"idle_pct":0.0,"run_ns":1000000000,"wait_ns":0,"slices":1,"voluntary":0,"involuntary":0,"minor_faults":0,"major_faults":0,"reference_ns":2500000}"#,
        )
        .unwrap();
        r.account = Some(Box::new(account));
        let mut out = Vec::new();
        r.figures(&mut out);
        assert!(out.len() > 3);
        assert!(
            out.iter()
                .all(|f| f.host_ms().is_some_and(|h| (h - 2.5).abs() < 1e-9)),
            "{out:?}"
        );
        assert_eq!(r.stretches().len(), 1);
    }

    #[test]
    fn figures_name_the_mode_and_the_rate_has_a_sample_a_second_after_the_warm_up() {
        let mut out = Vec::new();
        result(0).figures(&mut out);
        let keys: Vec<&str> = out.iter().map(|f| f.key.as_str()).collect();
        assert!(keys.contains(&"wakeup/saturating, m=1 t=2 F=256 n=5 s=100/wakeup latency p99"));
        let rps = out.iter().find(|f| f.key.ends_with("average rps")).unwrap();
        // The start's 0 left out: seconds 1 to 8.
        assert_eq!(rps.samples.len(), 8);
        let mut out = Vec::new();
        result(5).figures(&mut out);
        let rps = out.iter().find(|f| f.key.ends_with("average rps")).unwrap();
        assert_eq!(rps.samples, [106.0, 107.0, 108.0]);
        // p99 of 3, 4, 5, 40 is the largest.
        let p99 = out
            .iter()
            .find(|f| f.key.ends_with("wakeup latency p99"))
            .unwrap();
        assert_eq!(p99.value, 40.0);
    }
}
