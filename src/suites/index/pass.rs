//! One pass of the index tests: which tests run, in which order their iterations come
//! (UnixBench's blocks, or rounds), and what each has measured so far.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::event::IndexEvent;
use super::registry::{self, TestInfo};
use super::IndexConfig;
use super::{finish_pass, native, run_iteration, settle, supported, CopyContext};
use crate::model::account::Account;
use crate::model::index::scoring::{self, CopyReport, Pass};
use crate::model::index::{IndexPass, IndexResult, Skipped, Spread, TestResult};
use crate::model::SuiteResult;
use crate::platform::clock::monotonic_ns;
use crate::stats::{confidence_interval_95, Summary};
use crate::suites::event::{Event, Events, EVERY_UNIT};
use crate::text::Text;

/// What every iteration of a run needs, and the result so far for checkpoints.
pub(super) struct Running<'a> {
    pub config: &'a IndexConfig,
    pub ctx: &'a CopyContext<'a>,
    pub stop: &'a AtomicBool,
    /// The result without its passes.
    pub base: &'a IndexResult,
    /// The passes done.
    pub passes: &'a [IndexPass],
    /// When the pass began (monotonic ns).
    pub started_ns: u64,
    /// The part's iterations planned before this pass, and in all.
    pub units_before: u64,
    pub units: u64,
}

impl Running<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// One test of a pass: why it does not run, or the iterations it has run so far.
struct TestRun {
    t: &'static TestInfo,
    copies: usize,
    display: Option<String>,
    /// The iterations it is to run (fewer when `--adaptive` stops it).
    planned: usize,
    native: bool,
    all: Vec<Vec<CopyReport>>,
    passes: Vec<Pass>,
    /// Seconds from the pass's start to each iteration's start (after its pause).
    started_s: Vec<f64>,
    accounts: Vec<Account>,
    adaptive_stop: bool,
    /// Why it does not run here (a missing program, no display, …).
    skipped: Option<Text>,
    /// Why it failed (a full disk, a failed self-check); its iterations are not scored.
    failed: Option<Text>,
}

impl TestRun {
    /// Its iterations done, all of them once it is done (skipped or failed included).
    fn units_done(&self) -> usize {
        if self.done() {
            self.planned
        } else {
            self.passes.len()
        }
    }

    fn done(&self) -> bool {
        self.skipped.is_some()
            || self.failed.is_some()
            || self.adaptive_stop
            || self.passes.len() >= self.planned
    }

    /// Waits UnixBench's pause and runs one iteration. False when a stop came.
    fn step(&mut self, run: &Running<'_>, events: &mut dyn Events) -> Result<bool> {
        let config = run.config;
        if !settle(config, self.t, run.stop) {
            return Ok(false);
        }
        let seconds = config.duration_s(self.t);
        let started_ns = monotonic_ns();
        let Some((reports, account)) = run_iteration(
            self.t,
            self.copies,
            self.display.as_deref(),
            seconds,
            run.ctx,
            run.stop,
        )?
        else {
            return Ok(false);
        };
        self.accounts.extend(account);
        let pass = scoring::combine_copies(&reports);
        events.event(Event::Index(IndexEvent::IterationDone {
            name: self.t.name,
            index: self.passes.len(),
            pass: &pass,
        }));
        self.all.push(reports);
        self.passes.push(pass);
        self.started_s
            .push(started_ns.saturating_sub(run.started_ns) as f64 / 1e9);
        self.adaptive_stop = self.precise_enough(config.settings.adaptive_pct);
        Ok(true)
    }

    /// `--adaptive PCT`: at least 3 iterations, and the 95% CI of their rates within PCT,
    /// before the last planned one.
    fn precise_enough(&self, pct: Option<f64>) -> bool {
        let Some(pct) = pct else {
            return false;
        };
        if self.passes.len() < 3 || self.passes.len() >= self.planned {
            return false;
        }
        let rates: Vec<f64> = self
            .passes
            .iter()
            .map(|p| p.rate(self.t.timebase))
            .collect();
        Summary::of(&rates)
            .as_ref()
            .and_then(confidence_interval_95)
            .is_some_and(|ci| ci.half_width_pct() <= pct)
    }

    /// Its result from the iterations it has run: UnixBench's score, the index value, the
    /// spread.
    fn result(&self) -> TestResult {
        let t = self.t;
        // One account an iteration, or none at all.
        let accounts = if self.accounts.len() == self.passes.len() {
            self.accounts.clone()
        } else {
            Vec::new()
        };
        let score = scoring::score(&self.passes, t.timebase);
        // The spread of the iterations the score keeps.
        let rates: Vec<f64> = scoring::kept(&self.passes)
            .iter()
            .map(|p| p.rate(t.timebase))
            .collect();
        let spread = Summary::of(&rates).map(|s| Spread {
            min: s.min,
            max: s.max,
            cv_pct: s.cv_pct(),
        });
        TestResult {
            name: t.name.into(),
            msg: t.msg.into(),
            category: t.category,
            unit: t.unit.into(),
            copies: self.copies,
            iterations: self.all.clone(),
            index: match (score, t.baseline) {
                (Some(s), Some(b)) => Some(scoring::index_value(s.score, b)),
                _ => None,
            },
            baseline: t.baseline,
            in_index: t.in_index,
            passes: self.passes.clone(),
            started_s: self.started_s.clone(),
            accounts,
            score,
            spread,
            adaptive_stop: self.adaptive_stop,
            timebase: Some(t.timebase),
            native: self.native,
            has_native: native::has_native(t.program),
            differs: t.program.differs_from_unixbench().map(Text::from),
            timing_note: t.program.timing_note(self.native).map(Text::from),
        }
    }

    fn skip(&self) -> Option<Skipped> {
        self.skipped.as_ref().map(|reason| Skipped {
            name: self.t.name.into(),
            reason: reason.clone(),
        })
    }

    fn failure(&self) -> Option<Skipped> {
        self.failed.as_ref().map(|reason| Skipped {
            name: self.t.name.into(),
            reason: reason.clone(),
        })
    }
}

/// One pass at a number of copies: every test of the run, in the run's order.
pub(super) struct PassRun {
    copies: usize,
    started_at: DateTime<Utc>,
    runs: Vec<TestRun>,
}

impl PassRun {
    /// The pass's tests, each with why it does not run where that is so.
    pub fn new(
        config: &IndexConfig,
        copies: usize,
        display: &Result<String, String>,
        ctx: &CopyContext<'_>,
    ) -> Self {
        let single_pass = config.settings.copies.contains(&1);
        let runs = config
            .tests
            .iter()
            .map(|&t| {
                let graphics = registry::is_graphics(t);
                let skipped = if graphics && copies > 1 && single_pass {
                    Some("graphics tests run in the single-copy pass only, as in UnixBench".into())
                } else if let (true, Err(why)) = (graphics, display) {
                    Some(why.clone())
                } else {
                    supported(t).err()
                };
                // Graphics tests always run one copy (windows of parallel copies would
                // overlap).
                let (copies, display) = if graphics {
                    (1, display.as_ref().ok().cloned())
                } else {
                    (copies, None)
                };
                TestRun {
                    t,
                    copies,
                    display,
                    planned: config.iterations(t),
                    native: ctx.native.is_some() && native::has_native(t.program),
                    all: Vec::new(),
                    passes: Vec::new(),
                    started_s: Vec::new(),
                    accounts: Vec::new(),
                    adaptive_stop: false,
                    skipped: skipped.map(Text::from),
                    failed: None,
                }
            })
            .collect();
        PassRun {
            copies,
            started_at: Utc::now(),
            runs,
        }
    }

    /// UnixBench's order: each test's iterations in turn.
    pub fn in_blocks(&mut self, run: &Running<'_>, events: &mut dyn Events) {
        for k in 0..self.runs.len() {
            if let Some(s) = self.runs[k].skip() {
                events.event(Event::Index(IndexEvent::TestSkipped(&s)));
                continue;
            }
            if run.stopped() {
                return;
            }
            let r = &self.runs[k];
            events.event(Event::Index(IndexEvent::TestBegins {
                name: r.t.name,
                msg: r.t.msg,
                copies: r.copies,
                iterations: r.planned,
            }));
            while !self.runs[k].done() {
                if !self.advance(k, run, events) {
                    return;
                }
            }
        }
    }

    /// Rounds: every test's first iteration, then every test's second, and so on.
    pub fn in_rounds(&mut self, run: &Running<'_>, events: &mut dyn Events) {
        for s in self.runs.iter().filter_map(TestRun::skip) {
            events.event(Event::Index(IndexEvent::TestSkipped(&s)));
        }
        let rounds = self.runs.iter().map(|r| r.planned).max().unwrap_or(0);
        for round in 0..rounds {
            if run.stopped() || self.runs.iter().all(TestRun::done) {
                return;
            }
            events.event(Event::Index(IndexEvent::RoundBegins { round, rounds }));
            for k in 0..self.runs.len() {
                if self.runs[k].done() {
                    continue;
                }
                if !self.advance(k, run, events) {
                    return;
                }
            }
            events.event(Event::Index(IndexEvent::RoundDone));
        }
    }

    /// One iteration of test `k`, its end where that was its last, and a checkpoint. False
    /// when a stop came.
    fn advance(&mut self, k: usize, run: &Running<'_>, events: &mut dyn Events) -> bool {
        match self.runs[k].step(run, events) {
            Ok(true) => {}
            Ok(false) => return false,
            Err(_) if run.stopped() => return false,
            // A test that fails is reported with its reason, and the run goes on; the
            // result is incomplete.
            Err(e) => {
                self.runs[k].failed = Some(format!("{e:#}").into());
                if let Some(s) = self.runs[k].failure() {
                    events.event(Event::Index(IndexEvent::TestFailed(&s)));
                }
                return true;
            }
        }
        if self.runs[k].done() {
            events.event(Event::Index(IndexEvent::TestDone(&self.runs[k].result())));
        }
        let done: usize = self.runs.iter().map(TestRun::units_done).sum();
        let (copies, name) = (self.copies, self.runs[k].t.name);
        events.event(Event::progress(
            run.units_before + done as u64,
            run.units,
            &format_args!("{copies} x {name}"),
        ));
        events.event(Event::Partial {
            every: EVERY_UNIT,
            build: &|| SuiteResult::Index(self.so_far(run.base, run.passes)),
        });
        true
    }

    /// The pass as it stands: the tests that have run (those in progress with the
    /// iterations they have done), and those skipped and failed.
    pub fn pass(&self) -> IndexPass {
        let ran = |r: &&TestRun| r.skipped.is_none() && r.failed.is_none() && !r.passes.is_empty();
        finish_pass(
            self.copies,
            self.started_at,
            self.runs.iter().filter(ran).map(TestRun::result).collect(),
            self.runs.iter().filter_map(TestRun::skip).collect(),
            self.runs.iter().filter_map(TestRun::failure).collect(),
        )
    }

    /// The result so far, to store as the run goes: the passes done and this one.
    pub fn so_far(&self, base: &IndexResult, passes: &[IndexPass]) -> IndexResult {
        let mut passes = passes.to_vec();
        passes.push(self.pass());
        IndexResult {
            passes,
            ..base.clone()
        }
    }
}
