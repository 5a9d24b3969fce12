//! The index suite's result (UnixBench): the settings, and every pass with each test's
//! iterations, score and index value; UnixBench's arithmetic is in `scoring`.

pub mod scoring;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::figures::{Better, Figure, Placement};
use super::headline::{self, Column, Figure as HeadlineFigure, AT_LEAST_ZERO};
pub use super::order::Order;
use super::{implausible_s, RunResult, SuiteData, SuiteResult};
use crate::platform::locale;
use crate::text::Text;
use scoring::{CopyReport, Pass};

/// Run's `-i`: iterations of the fast tests (the slow ones run int((i + 1) / 3)).
pub const DEFAULT_ITERATIONS: usize = 10;

/// The settings of an index run, as stored with its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexSettings {
    /// The names given (tests and aliases).
    pub requested: Vec<Text>,
    /// The tests they expand to, in order.
    pub tests: Vec<Text>,
    /// Copies per pass: one pass per entry.
    pub copies: Vec<usize>,
    /// `-i`: iterations of fast tests (slow ones run int((i + 1) / 3)).
    pub iterations: usize,
    /// Overrides every test's duration (seconds), for quick checks and tests.
    pub seconds: Option<f64>,
    /// `--quick`: a tenth of each duration (at least 1 s), 3 and 1 iterations.
    pub quick: bool,
    /// `--adaptive PCT`: stop a test's iterations once the 95% CI of its pass rates is within PCT.
    pub adaptive_pct: Option<f64>,
    /// `--pin`: copy k pinned to the k-th allowed CPU.
    pub pin: bool,
    /// `--xvfb`: the graphics tests draw on a private Xvfb server (also chosen when no
    /// display is set and Xvfb is installed).
    #[serde(default)]
    pub xvfb: bool,
    /// `--builtin-cpu-tests`: run the built-in Rust versions of the compiled tests even where
    /// the host has a C compiler.
    #[serde(default)]
    pub builtin_cpu_tests: bool,
    /// `--lang`: LANG for every test process (UnixBench: en_US.utf8).
    #[serde(default = "default_lang")]
    pub lang: Text,
    /// `--order`: each test's iterations in turn (UnixBench's), or in rounds. Left out when
    /// blocks, so a blocks run's settings (and plan) read as they did before rounds were.
    #[serde(default, skip_serializing_if = "Order::is_blocks")]
    pub order: Order,
}

fn default_lang() -> Text {
    locale::UNIXBENCH_LANG.into()
}

/// One test in one pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    pub name: Text,
    pub msg: Text,
    pub category: Category,
    pub unit: Text,
    pub copies: usize,
    /// Every iteration: each copy's report.
    pub iterations: Vec<Vec<CopyReport>>,
    pub passes: Vec<Pass>,
    /// Seconds from the pass's start to each iteration's start (after Run's pause), in the
    /// passes' order; empty in results stored before hostbench kept them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub started_s: Vec<f64>,
    /// The host's account of each iteration (its copies' processes, the CPUs they used), in
    /// the passes' order; empty in results stored before hostbench kept them, and with
    /// `HOSTBENCH_NO_ACCOUNT`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<super::account::Account>,
    pub score: Option<scoring::TestScore>,
    pub baseline: Option<f64>,
    pub index: Option<f64>,
    pub in_index: bool,
    /// Spread of the rates of the iterations the score keeps (all but the worst third): min,
    /// max and coefficient of variation (%).
    pub spread: Option<Spread>,
    /// Stopped early by --adaptive.
    pub adaptive_stop: bool,
    /// Ran the C version built with the host's compiler (false: the built-in version).
    #[serde(default)]
    pub native: bool,
    /// The seconds its counts are expressed per, as the score used it (UnixBench's timebase:
    /// 1 for per second, 60 for per minute, 0 when the count is a rate already). None in
    /// results of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timebase: Option<f64>,
    /// The test has a C version built with the host's compiler (so with `native` false it ran
    /// its built-in one). False in results of earlier versions, which did not say.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub has_native: bool,
    /// Where its workload is not quite UnixBench's, what differs, as the run that made it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differs: Option<Text>,
    /// What it really times, where that is not what its title says (arith at UnixBench's
    /// flags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_note: Option<Text>,
}

impl TestResult {
    /// The timebase its score was computed with: as stored, or, in results of earlier
    /// versions, as the copies reported it (the same figure: each program reports its test's).
    pub fn timebase(&self) -> f64 {
        self.timebase.unwrap_or_else(|| {
            self.iterations
                .iter()
                .flatten()
                .next()
                .map_or(0.0, |c| c.timebase)
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    pub cv_pct: f64,
}

/// A test that did not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub name: Text,
    pub reason: Text,
}

/// One pass: every test at one number of copies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexPass {
    pub copies: usize,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub tests: Vec<TestResult>,
    /// Tests not run here, with the reason (a missing program, no display).
    pub skipped: Vec<Skipped>,
    /// Tests that started and failed (a full disk, a copy that died), with the error: unlike a
    /// skip, a failure makes the result incomplete.
    #[serde(default)]
    pub failed: Vec<Skipped>,
    /// The System Benchmarks index of this pass (geometric mean of its index values).
    pub system_index: Option<f64>,
    /// Index tests that ran, of those in the index.
    pub indexed: usize,
    pub index_tests: usize,
    /// The 2D Graphics Benchmarks index of this pass (2d-rects, 2d-ellipse, 2d-aashapes,
    /// 2d-text, 2d-blit, 2d-window) and the 3D one (ubgears), when any of their tests ran, and
    /// how many did; Run prints them apart.
    #[serde(default)]
    pub index_2d: Option<f64>,
    #[serde(default)]
    pub indexed_2d: usize,
    #[serde(default)]
    pub index_3d: Option<f64>,
    #[serde(default)]
    pub indexed_3d: usize,
    /// Run's "Non-Index Benchmarks" index: the geometric mean of the index values of the
    /// non-index tests that have a baseline in index.base (grep and sysexec), when either ran.
    /// Left out of the JSON when neither ran, so that results stored before it read back as
    /// they were written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_misc: Option<f64>,
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub indexed_misc: usize,
    /// How many tests each of those indexes has in all (so a report can say "Partial"); 0 in
    /// results of earlier versions, which did not say.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub index_tests_2d: usize,
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub index_tests_3d: usize,
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub index_tests_misc: usize,
}

impl IndexPass {
    /// A category's index in this pass: (the index, its tests that ran, the tests it has in
    /// all), when any of them ran. For results that did not store the count of a graphics or
    /// non-index category, the tests that ran.
    pub fn category_index(&self, cat: Category) -> Option<(f64, usize, usize)> {
        let stored =
            |index: Option<f64>, ran: usize, of: usize| index.map(|i| (i, ran, of.max(ran)));
        match cat {
            Category::System => self
                .system_index
                .map(|i| (i, self.indexed, self.index_tests)),
            Category::TwoD => stored(self.index_2d, self.indexed_2d, self.index_tests_2d),
            Category::ThreeD => stored(self.index_3d, self.indexed_3d, self.index_tests_3d),
            Category::Misc => stored(self.index_misc, self.indexed_misc, self.index_tests_misc),
        }
    }
}

/// An index result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexResult {
    pub settings: IndexSettings,
    /// LANG as set for the tests, and the character map and collation in effect under it.
    pub language: Text,
    /// Where the graphics tests drew: "Xvfb :N (private)" or the user's display.
    #[serde(default)]
    pub graphics_display: Option<Text>,
    /// The C tests' build, when they ran; else why the built-in versions ran.
    #[serde(default)]
    pub native: Option<NativeBuild>,
    #[serde(default)]
    pub native_note: Option<Text>,
    pub passes: Vec<IndexPass>,
}

impl IndexResult {
    /// Tests that failed, over every pass.
    pub fn failed_tests(&self) -> usize {
        self.passes.iter().map(|p| p.failed.len()).sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    System,
    Misc,
    #[serde(rename = "2d")]
    TwoD,
    #[serde(rename = "3d")]
    ThreeD,
}

impl Category {
    /// The Run script's category names.
    pub fn title(self) -> &'static str {
        match self {
            Category::System => "System Benchmarks",
            Category::Misc => "Non-Index Benchmarks",
            Category::TwoD => "2D Graphics Benchmarks",
            Category::ThreeD => "3D Graphics Benchmarks",
        }
    }
}

/// How the C tests were built, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeBuild {
    /// The compiler as found on PATH (`cc`), and what `cc --version` says of itself.
    pub compiler: Text,
    pub version: Text,
    pub flags: Text,
    /// The directory of the programs (one per test, named as the test's program), in the
    /// cache directory.
    pub path: Text,
    /// Built in this run (false: an earlier build was reused).
    pub built_now: bool,
    /// Why the cache directory was not trusted (another user could have written the programs
    /// there): the programs were then built for this run alone, in its private directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted_cache: Option<Text>,
}

/// The fleet's column of UnixBench's System Benchmarks index of one copy.
pub const INDEX_ONE: Column = Column {
    key: "index_one",
    name: "index, 1 copy",
    unit: "index",
    bounds: AT_LEAST_ZERO,
    better: Better::Higher,
    is_spread: false,
    of: |r| index_headline(r, |passes| passes.into_iter().find(|p| p.copies == 1)),
};

/// The fleet's column of the index of the most copies run (usually one per CPU).
pub const INDEX_MANY: Column = Column {
    key: "index_many",
    name: "index, N copies",
    unit: "index",
    bounds: AT_LEAST_ZERO,
    better: Better::Higher,
    is_spread: false,
    of: |r| {
        index_headline(r, |passes| {
            passes
                .into_iter()
                .filter(|p| p.copies > 1)
                .max_by_key(|p| p.copies)
        })
    },
};

/// The index of the pass `pick` chooses among the result's passes that have one.
fn index_headline<'a>(
    r: &'a RunResult,
    pick: impl FnOnce(Vec<&'a IndexPass>) -> Option<&'a IndexPass>,
) -> Option<HeadlineFigure> {
    let results: Vec<&IndexResult> = headline::each(r, |s| match s {
        SuiteResult::Index(i) => Some(i),
        _ => None,
    })
    .collect();
    let passes = results
        .iter()
        .flat_map(|i| i.passes.iter())
        .filter(|p| p.system_index.is_some());
    let pass = pick(passes.collect())?;
    let result = results
        .iter()
        .find(|i| i.passes.iter().any(|p| std::ptr::eq(p, pass)))?;
    let copies = copies_words(pass.copies);
    let partial = if pass.indexed < pass.index_tests {
        format!(", partial: {} of {}", pass.indexed, pass.index_tests)
    } else {
        String::new()
    };
    Some(HeadlineFigure {
        value: pass.system_index?,
        kind: measured(&result.settings, pass).into(),
        note: format!("{copies}{partial}").into(),
    })
}

/// "1 copy", "2 copies".
pub fn copies_words(copies: usize) -> String {
    format!("{copies} cop{}", if copies == 1 { "y" } else { "ies" })
}

/// What a pass's index measured, as the fleet compares results (the headline's kind): its
/// copies, the index tests whose values made it, and each setting that moves the figure from
/// a default run's. Two results compare only where these words are the same.
///
/// "1 copy, 12 tests" is a whole default run; "1 copy, 1 of 12 tests: syscall, pinned, 2 s a
/// test" is not. `--order` is left out: it changes when iterations run, not what they score.
pub fn measured(settings: &IndexSettings, pass: &IndexPass) -> String {
    let counted: Vec<&TestResult> = pass
        .tests
        .iter()
        .filter(|t| t.in_index && t.index.is_some())
        .collect();
    let mut words = vec![copies_words(pass.copies)];
    if counted.len() == pass.index_tests {
        words.push(format!("{} tests", pass.index_tests));
    } else {
        let names: Vec<&str> = counted.iter().map(|t| t.name.raw()).collect();
        words.push(format!(
            "{} of {} tests: {}",
            counted.len(),
            pass.index_tests,
            names.join(" ")
        ));
    }
    if settings.pin {
        words.push("pinned".into());
    }
    words.extend(duration_words(settings));
    if let Some(pct) = settings.adaptive_pct {
        words.push(format!("adaptive {pct}%"));
    }
    // A test UnixBench compiles that ran its built-in version here (no compiler, or
    // `--builtin-cpu-tests`) measures other code.
    if counted.iter().any(|t| t.has_native && !t.native) {
        words.push("built-in CPU tests".into());
    }
    if settings.lang.raw() != locale::UNIXBENCH_LANG {
        words.push(format!("LANG={}", settings.lang.raw()));
    }
    words.join(", ")
}

/// `--seconds`, `--quick` and `-i` in the words of [`measured`]: none for UnixBench's
/// durations and iterations. `--quick` fixes the iterations (3, 1 for slow tests).
fn duration_words(settings: &IndexSettings) -> Vec<String> {
    let mut words = Vec::new();
    if let Some(s) = settings.seconds {
        words.push(format!("{s} s a test"));
    }
    if settings.quick {
        words.push("quick".into());
    } else if settings.iterations != DEFAULT_ITERATIONS {
        words.push(format!("-i {}", settings.iterations));
    }
    words
}

impl SuiteData for IndexResult {
    fn name(&self) -> &'static str {
        "index"
    }

    fn stretches(&self) -> Vec<super::account::Stretches<'_>> {
        let pinned = if self.settings.pin { ", pinned" } else { "" };
        self.passes
            .iter()
            .flat_map(|p| p.tests.iter())
            .filter(|t| !t.accounts.is_empty())
            .map(|t| {
                let copies = if t.copies == 1 { "copy" } else { "copies" };
                super::account::Stretches {
                    what: format!("{}, {} {copies}{pinned}", t.name, t.copies),
                    accounts: t.accounts.iter().collect(),
                    // Copies wait for each other where they outnumber the CPUs.
                    own_waits: t.copies > 1,
                }
            })
            .collect()
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::to_value(&self.settings).unwrap_or_default()
    }

    /// UnixBench's scores depend on the language its tests run under (sort, grep, the shell).
    fn conditions(&self) -> Vec<(&'static str, &Text)> {
        vec![("language settings for the index tests", &self.language)]
    }

    /// A failed test did not do what was planned; a skipped one (a missing program) could not
    /// be planned on this host.
    fn complete(&self) -> bool {
        let ran: usize = self
            .passes
            .iter()
            .map(|p| p.tests.len() + p.skipped.len())
            .sum();
        ran >= self.settings.copies.len() * self.settings.tests.len()
    }

    fn implausible(&self) -> Option<String> {
        for t in self.passes.iter().flat_map(|p| &p.tests) {
            for (i, pass) in t.passes.iter().enumerate() {
                if implausible_s(pass.time_s) || !(pass.count.is_finite() && pass.count >= 0.0) {
                    return Some(format!(
                        "{} iteration {} counted {} in {} s",
                        t.name,
                        i + 1,
                        pass.count,
                        pass.time_s
                    ));
                }
            }
        }
        None
    }

    fn pinned(&self) -> bool {
        self.settings.pin
    }

    fn figures(&self, out: &mut Vec<Figure>) {
        /// The accounts of the iterations kept by the scores of a category's tests in `pass`
        /// (the System index: its BYTE index tests); none unless every such test has them.
        fn score_accounts(pass: &IndexPass, cat: Category) -> Vec<super::account::Account> {
            let tests: Vec<&TestResult> = pass
                .tests
                .iter()
                .filter(|t| t.category == cat && t.score.is_some())
                .filter(|t| cat != Category::System || t.in_index)
                .collect();
            if tests.is_empty() || tests.iter().any(|t| t.accounts.len() != t.passes.len()) {
                return Vec::new();
            }
            tests
                .iter()
                .flat_map(|t| {
                    scoring::kept_indices(&t.passes)
                        .into_iter()
                        .map(|i| t.accounts[i].clone())
                })
                .collect()
        }
        let placement = Placement::of(self.pinned());
        for pass in &self.passes {
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
                    unit: t.unit.to_string(),
                    better: Better::Higher,
                    value: score.score,
                    // The iterations the score keeps: a test compares the same
                    // set the score is made of.
                    samples: scoring::kept(&t.passes)
                        .iter()
                        .map(|p| p.rate(timebase))
                        .collect(),
                    sample_kind: "iteration kept by the score".into(),
                    resolution: None,
                    of_events: None,
                    is_spread: false,
                    // The kept iterations' accounts, in the samples' order.
                    accounts: if t.accounts.len() == t.passes.len() {
                        scoring::kept_indices(&t.passes)
                            .into_iter()
                            .map(|i| t.accounts[i].clone())
                            .collect()
                    } else {
                        Vec::new()
                    },
                });
            }
            for (what, cat, idx) in [
                ("2D Graphics", Category::TwoD, pass.index_2d),
                ("3D Graphics", Category::ThreeD, pass.index_3d),
                ("Non-Index", Category::Misc, pass.index_misc),
                ("System", Category::System, pass.system_index),
            ] {
                if let Some(idx) = idx {
                    out.push(Figure {
                        // The kept iterations' accounts of every test the score is made of,
                        // where each has them: compare tests them beside a score that moved.
                        accounts: score_accounts(pass, cat),
                        ..Figure::derived(
                            format!("index/{keyed}/{what} Benchmarks Index Score"),
                            "index",
                            format!(
                                "{what} Benchmarks Index Score, {copies}{}",
                                placement.name_suffix()
                            ),
                            "index",
                            Better::Higher,
                            idx,
                        )
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blocks run's settings read as they did before rounds were (so its plan, and the
    /// history it belongs to, stay); rounds are said.
    #[test]
    fn the_order_is_stored_only_when_rounds() {
        let mut settings = IndexSettings {
            tests: vec!["dhry2reg".into()],
            iterations: 3,
            quick: true,
            ..settings()
        };
        let blocks = serde_json::to_value(&settings).unwrap();
        assert!(blocks.get("order").is_none(), "{blocks}");
        let back: IndexSettings = serde_json::from_value(blocks).unwrap();
        assert_eq!(back.order, Order::Blocks);
        settings.order = Order::Rounds;
        let rounds = serde_json::to_value(&settings).unwrap();
        assert_eq!(rounds["order"], "rounds");
        let back: IndexSettings = serde_json::from_value(rounds).unwrap();
        assert_eq!(back, settings);
    }

    fn test(name: &str, native: bool) -> TestResult {
        serde_json::from_value(serde_json::json!({
            "name": name, "msg": name, "category": "system", "unit": "lps", "copies": 1,
            "iterations": [], "passes": [], "score": null, "baseline": 1.0, "index": 10.0,
            "in_index": true, "spread": null, "adaptive_stop": false,
            "native": native, "has_native": name == "dhry2reg",
        }))
        .unwrap()
    }

    fn pass(tests: &[&str]) -> IndexPass {
        serde_json::from_value(serde_json::json!({
            "copies": 1, "started_at": "2026-12-07T00:00:00Z",
            "finished_at": "2026-12-07T00:01:00Z", "tests": [], "skipped": [],
            "system_index": 10.0, "indexed": tests.len(), "index_tests": 2,
        }))
        .map(|mut p: IndexPass| {
            p.tests = tests.iter().map(|t| test(t, true)).collect();
            p
        })
        .unwrap()
    }

    fn settings() -> IndexSettings {
        IndexSettings {
            requested: Vec::new(),
            tests: Vec::new(),
            copies: vec![1],
            iterations: DEFAULT_ITERATIONS,
            seconds: None,
            quick: false,
            adaptive_pct: None,
            pin: false,
            xvfb: false,
            builtin_cpu_tests: false,
            lang: default_lang(),
            order: Order::Blocks,
        }
    }

    /// Results of other tests, other copies or settings that change the figure never share a
    /// kind with a whole default run's, so the fleet never ranges them together.
    #[test]
    fn the_kind_names_the_tests_the_copies_and_each_setting_that_moves_the_figure() {
        let whole = pass(&["dhry2reg", "syscall"]);
        assert_eq!(measured(&settings(), &whole), "1 copy, 2 tests");
        assert_eq!(
            measured(&settings(), &pass(&["syscall"])),
            "1 copy, 1 of 2 tests: syscall"
        );
        let mut two = whole.clone();
        two.copies = 2;
        assert_eq!(measured(&settings(), &two), "2 copies, 2 tests");
        let changed = [
            (
                IndexSettings {
                    pin: true,
                    ..settings()
                },
                "pinned",
            ),
            (
                IndexSettings {
                    seconds: Some(2.0),
                    ..settings()
                },
                "2 s a test",
            ),
            (
                IndexSettings {
                    quick: true,
                    iterations: 3,
                    ..settings()
                },
                "quick",
            ),
            (
                IndexSettings {
                    iterations: 3,
                    ..settings()
                },
                "-i 3",
            ),
            (
                IndexSettings {
                    adaptive_pct: Some(2.0),
                    ..settings()
                },
                "adaptive 2%",
            ),
            (
                IndexSettings {
                    lang: "C".into(),
                    ..settings()
                },
                "LANG=C",
            ),
        ];
        for (s, word) in changed {
            assert_eq!(measured(&s, &whole), format!("1 copy, 2 tests, {word}"));
        }
        let rounds = IndexSettings {
            order: Order::Rounds,
            ..settings()
        };
        assert_eq!(measured(&rounds, &whole), "1 copy, 2 tests");
        let mut builtin = whole.clone();
        builtin.tests[0].native = false;
        assert_eq!(
            measured(&settings(), &builtin),
            "1 copy, 2 tests, built-in CPU tests"
        );
    }
}
