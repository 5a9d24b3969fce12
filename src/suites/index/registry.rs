//! Every UnixBench test and alias, listed once (from UnixBench's Run script and the usage
//! document): what each is called, its category, how long one run lasts, how many times it is
//! repeated, its unit, and the score of the baseline machine George where it has one.

use serde::{Deserialize, Serialize};

use crate::error::UsageError;

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

/// What a test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "program", rename_all = "snake_case")]
pub enum Program {
    Dhrystone,
    Whetstone,
    Syscall,
    SysExec,
    Pipe,
    Context1,
    Spawn,
    Execl,
    FileWrite {
        bufsize: usize,
        maxblocks: usize,
    },
    FileRead {
        bufsize: usize,
        maxblocks: usize,
    },
    FileCopy {
        bufsize: usize,
        maxblocks: usize,
    },
    Shell {
        concurrent: usize,
    },
    Compile,
    Arith {
        kind: ArithKind,
    },
    Dc,
    Hanoi,
    Grep,
    /// A selection of the host's x11perf tests (the test's name picks which).
    X11perf,
    /// Gears frames per second with the host's glxgears.
    Gears,
}

impl Program {
    /// Whether the test runs the host's programs, whose work depends on the language (sort's
    /// collation, grep's and tr's character classes); hostbench's own programs ignore it.
    pub fn reads_language(self) -> bool {
        matches!(
            self,
            Program::Shell { .. } | Program::Compile | Program::Dc | Program::Grep
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArithKind {
    Overhead,
    Short,
    Int,
    Long,
    Float,
    Double,
}

#[derive(Debug)]
pub struct TestInfo {
    pub name: &'static str,
    /// The Run script's description, used in reports.
    pub msg: &'static str,
    pub category: Category,
    /// Seconds one run lasts (constant time, variable work).
    pub duration_s: u64,
    /// Slow tests run a third of the iterations.
    pub slow: bool,
    pub unit: &'static str,
    /// Seconds a count is expressed per (0: the program reports a rate).
    pub timebase: f64,
    /// George's score, for tests that have one.
    pub baseline: Option<f64>,
    /// Part of the BYTE index.
    pub in_index: bool,
    pub program: Program,
}

/// One row of the table below; positional so that each test stays on one line.
#[allow(clippy::too_many_arguments)]
const fn t(
    name: &'static str,
    msg: &'static str,
    category: Category,
    duration_s: u64,
    slow: bool,
    unit: &'static str,
    timebase: f64,
    baseline: Option<f64>,
    in_index: bool,
    program: Program,
) -> TestInfo {
    TestInfo {
        name,
        msg,
        category,
        duration_s,
        slow,
        unit,
        timebase,
        baseline,
        in_index,
        program,
    }
}

use Category::{Misc, System, ThreeD, TwoD};

/// The tests. Baselines are George's (pgms/index.base), as published with UnixBench.
pub const TESTS: &[TestInfo] = &[
    t(
        "dhry2reg",
        "Dhrystone 2 using register variables",
        System,
        10,
        false,
        "lps",
        1.0,
        Some(116_700.0),
        true,
        Program::Dhrystone,
    ),
    t(
        "whetstone-double",
        "Double-Precision Whetstone",
        System,
        10,
        false,
        "MWIPS",
        0.0,
        Some(55.0),
        true,
        Program::Whetstone,
    ),
    t(
        "syscall",
        "System Call Overhead",
        System,
        10,
        false,
        "lps",
        1.0,
        Some(15_000.0),
        true,
        Program::Syscall,
    ),
    t(
        "pipe",
        "Pipe Throughput",
        System,
        10,
        false,
        "lps",
        1.0,
        Some(12_440.0),
        true,
        Program::Pipe,
    ),
    t(
        "context1",
        "Pipe-based Context Switching",
        System,
        10,
        false,
        "lps",
        1.0,
        Some(4_000.0),
        true,
        Program::Context1,
    ),
    t(
        "spawn",
        "Process Creation",
        System,
        30,
        true,
        "lps",
        1.0,
        Some(126.0),
        true,
        Program::Spawn,
    ),
    t(
        "execl",
        "Execl Throughput",
        System,
        30,
        true,
        "lps",
        1.0,
        Some(43.0),
        true,
        Program::Execl,
    ),
    t(
        "fstime-w",
        "File Write 1024 bufsize 2000 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        None,
        false,
        Program::FileWrite {
            bufsize: 1024,
            maxblocks: 2000,
        },
    ),
    t(
        "fstime-r",
        "File Read 1024 bufsize 2000 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        None,
        false,
        Program::FileRead {
            bufsize: 1024,
            maxblocks: 2000,
        },
    ),
    t(
        "fstime",
        "File Copy 1024 bufsize 2000 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        Some(3_960.0),
        true,
        Program::FileCopy {
            bufsize: 1024,
            maxblocks: 2000,
        },
    ),
    t(
        "fsbuffer-w",
        "File Write 256 bufsize 500 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        None,
        false,
        Program::FileWrite {
            bufsize: 256,
            maxblocks: 500,
        },
    ),
    t(
        "fsbuffer-r",
        "File Read 256 bufsize 500 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        None,
        false,
        Program::FileRead {
            bufsize: 256,
            maxblocks: 500,
        },
    ),
    t(
        "fsbuffer",
        "File Copy 256 bufsize 500 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        Some(1_655.0),
        true,
        Program::FileCopy {
            bufsize: 256,
            maxblocks: 500,
        },
    ),
    t(
        "fsdisk-w",
        "File Write 4096 bufsize 8000 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        None,
        false,
        Program::FileWrite {
            bufsize: 4096,
            maxblocks: 8000,
        },
    ),
    t(
        "fsdisk-r",
        "File Read 4096 bufsize 8000 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        None,
        false,
        Program::FileRead {
            bufsize: 4096,
            maxblocks: 8000,
        },
    ),
    t(
        "fsdisk",
        "File Copy 4096 bufsize 8000 maxblocks",
        System,
        30,
        true,
        "KBps",
        0.0,
        Some(5_800.0),
        true,
        Program::FileCopy {
            bufsize: 4096,
            maxblocks: 8000,
        },
    ),
    t(
        "shell1",
        "Shell Scripts (1 concurrent)",
        System,
        60,
        true,
        "lpm",
        60.0,
        Some(42.4),
        true,
        Program::Shell { concurrent: 1 },
    ),
    t(
        "shell8",
        "Shell Scripts (8 concurrent)",
        System,
        60,
        true,
        "lpm",
        60.0,
        Some(6.0),
        true,
        Program::Shell { concurrent: 8 },
    ),
    t(
        "shell16",
        "Shell Scripts (16 concurrent)",
        System,
        60,
        true,
        "lpm",
        60.0,
        None,
        false,
        Program::Shell { concurrent: 16 },
    ),
    t(
        "C",
        "C Compiler Throughput",
        Misc,
        60,
        true,
        "lpm",
        60.0,
        None,
        false,
        Program::Compile,
    ),
    t(
        "arithoh",
        "Arithoh",
        Misc,
        10,
        true,
        "lps",
        1.0,
        None,
        false,
        Program::Arith {
            kind: ArithKind::Overhead,
        },
    ),
    t(
        "short",
        "Arithmetic Test (short)",
        Misc,
        10,
        true,
        "lps",
        1.0,
        None,
        false,
        Program::Arith {
            kind: ArithKind::Short,
        },
    ),
    t(
        "int",
        "Arithmetic Test (int)",
        Misc,
        10,
        true,
        "lps",
        1.0,
        None,
        false,
        Program::Arith {
            kind: ArithKind::Int,
        },
    ),
    t(
        "long",
        "Arithmetic Test (long)",
        Misc,
        10,
        true,
        "lps",
        1.0,
        None,
        false,
        Program::Arith {
            kind: ArithKind::Long,
        },
    ),
    t(
        "float",
        "Arithmetic Test (float)",
        Misc,
        10,
        true,
        "lps",
        1.0,
        None,
        false,
        Program::Arith {
            kind: ArithKind::Float,
        },
    ),
    t(
        "double",
        "Arithmetic Test (double)",
        Misc,
        10,
        true,
        "lps",
        1.0,
        None,
        false,
        Program::Arith {
            kind: ArithKind::Double,
        },
    ),
    t(
        "dc",
        "Dc: sqrt(2) to 99 decimal places",
        Misc,
        30,
        true,
        "lpm",
        60.0,
        None,
        false,
        Program::Dc,
    ),
    t(
        "hanoi",
        "Recursion Test -- Tower of Hanoi",
        Misc,
        20,
        true,
        "lps",
        1.0,
        None,
        false,
        Program::Hanoi,
    ),
    t(
        "grep",
        "Grep a large file (system's grep)",
        Misc,
        30,
        true,
        "lpm",
        60.0,
        Some(1.0),
        false,
        Program::Grep,
    ),
    t(
        "sysexec",
        "Exec System Call Overhead",
        Misc,
        10,
        false,
        "lps",
        1.0,
        Some(25.0),
        false,
        Program::SysExec,
    ),
    t(
        "2d-rects",
        "2D graphics: rectangles",
        TwoD,
        30,
        true,
        "score",
        0.0,
        Some(15.0),
        false,
        Program::X11perf,
    ),
    t(
        "2d-lines",
        "2D graphics: lines",
        TwoD,
        30,
        true,
        "score",
        0.0,
        None,
        false,
        Program::X11perf,
    ),
    t(
        "2d-circle",
        "2D graphics: circles",
        TwoD,
        30,
        true,
        "score",
        0.0,
        None,
        false,
        Program::X11perf,
    ),
    t(
        "2d-ellipse",
        "2D graphics: ellipses",
        TwoD,
        30,
        true,
        "score",
        0.0,
        Some(15.0),
        false,
        Program::X11perf,
    ),
    t(
        "2d-shapes",
        "2D graphics: polygons",
        TwoD,
        30,
        true,
        "score",
        0.0,
        None,
        false,
        Program::X11perf,
    ),
    t(
        "2d-aashapes",
        "2D graphics: aa polygons",
        TwoD,
        30,
        true,
        "score",
        0.0,
        Some(15.0),
        false,
        Program::X11perf,
    ),
    t(
        "2d-polys",
        "2D graphics: complex polygons",
        TwoD,
        30,
        true,
        "score",
        0.0,
        None,
        false,
        Program::X11perf,
    ),
    t(
        "2d-text",
        "2D graphics: text",
        TwoD,
        30,
        true,
        "score",
        0.0,
        Some(15.0),
        false,
        Program::X11perf,
    ),
    t(
        "2d-blit",
        "2D graphics: images and blits",
        TwoD,
        30,
        true,
        "score",
        0.0,
        Some(15.0),
        false,
        Program::X11perf,
    ),
    t(
        "2d-window",
        "2D graphics: windows",
        TwoD,
        30,
        true,
        "score",
        0.0,
        Some(15.0),
        false,
        Program::X11perf,
    ),
    t(
        "ubgears",
        "3D graphics: gears",
        ThreeD,
        20,
        true,
        "fps",
        0.0,
        Some(33.4),
        false,
        Program::Gears,
    ),
];

const ARITHMETIC: &[&str] = &[
    "arithoh",
    "short",
    "int",
    "long",
    "float",
    "double",
    "whetstone-double",
];
const OLDSYSTEM: &[&str] = &[
    "execl", "fstime", "fsbuffer", "fsdisk", "pipe", "context1", "spawn", "syscall",
];
const SHELL: &[&str] = &["shell1", "shell8", "shell16"];
const FS: &[&str] = &[
    "fstime-w",
    "fstime-r",
    "fstime",
    "fsbuffer-w",
    "fsbuffer-r",
    "fsbuffer",
    "fsdisk-w",
    "fsdisk-r",
    "fsdisk",
];
const GRAPHICS: &[&str] = &[
    "2d-rects",
    "2d-ellipse",
    "2d-aashapes",
    "2d-text",
    "2d-blit",
    "2d-window",
    "ubgears",
];

/// The aliases, as the Run script defines them.
pub fn alias(name: &str) -> Option<Vec<&'static str>> {
    let system: Vec<&str> = OLDSYSTEM.iter().chain(SHELL).copied().collect();
    let index: Vec<&str> = ["dhry2reg", "whetstone-double"]
        .iter()
        .chain(OLDSYSTEM)
        .chain(&["shell1", "shell8"])
        .copied()
        .collect();
    Some(match name {
        "arithmetic" => ARITHMETIC.to_vec(),
        "dhry" | "dhrystone" => vec!["dhry2reg"],
        "whets" | "whetstone" => vec!["whetstone-double"],
        "load" | "shell" => SHELL.to_vec(),
        "misc" => vec!["C", "dc", "hanoi"],
        "speed" => ARITHMETIC.iter().copied().chain(system).collect(),
        "oldsystem" => OLDSYSTEM.to_vec(),
        "system" => system,
        "fs" => FS.to_vec(),
        "index" => index,
        "2d" => TESTS
            .iter()
            .filter(|t| t.category == Category::TwoD)
            .map(|t| t.name)
            .collect(),
        "3d" => vec!["ubgears"],
        "graphics" => GRAPHICS.to_vec(),
        "gindex" => index.into_iter().chain(GRAPHICS.iter().copied()).collect(),
        "all" => TESTS.iter().map(|t| t.name).collect(),
        _ => return None,
    })
}

pub const ALIASES: &[&str] = &[
    "arithmetic",
    "dhry",
    "dhrystone",
    "whets",
    "whetstone",
    "load",
    "misc",
    "speed",
    "oldsystem",
    "system",
    "fs",
    "shell",
    "index",
    "2d",
    "3d",
    "graphics",
    "gindex",
    "all",
];

pub fn find(name: &str) -> Option<&'static TestInfo> {
    TESTS.iter().find(|t| t.name == name)
}

/// Test and alias names for error messages.
pub fn names() -> String {
    let tests: Vec<&str> = TESTS.iter().map(|t| t.name).collect();
    format!(
        "tests: {}; aliases: {}",
        tests.join(", "),
        ALIASES.join(", ")
    )
}

/// Expands names and aliases into tests, each once, in the order first named.
pub fn expand(names: &[String]) -> Result<Vec<&'static TestInfo>, UsageError> {
    let mut out: Vec<&'static TestInfo> = Vec::new();
    for name in names {
        let members = match alias(name) {
            Some(m) => m,
            None => vec![find(name).map(|t| t.name).ok_or_else(|| {
                UsageError::new(format!("unknown test {name:?}; {}", self::names()))
            })?],
        };
        for m in members {
            let info = find(m).expect("aliases name registered tests");
            if !out.iter().any(|t| t.name == info.name) {
                out.push(info);
            }
        }
    }
    Ok(out)
}

/// Whether a test draws on an X display (it then runs single-copy).
pub fn is_graphics(t: &TestInfo) -> bool {
    matches!(t.category, Category::TwoD | Category::ThreeD)
}

/// The tests of a category's index: the system index's, or the graphics group's 2D or 3D
/// tests (Run prints a 2D and a 3D Graphics Benchmarks Index Score).
pub fn index_tests(category: Category) -> usize {
    match category {
        Category::System => TESTS.iter().filter(|t| t.in_index).count(),
        Category::TwoD | Category::ThreeD => GRAPHICS
            .iter()
            .filter_map(|n| find(n))
            .filter(|t| t.category == category)
            .count(),
        Category::Misc => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_of(v: &[&str]) -> Vec<&'static str> {
        expand(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap()
            .iter()
            .map(|t| t.name)
            .collect()
    }

    #[test]
    fn aliases_expand_as_in_the_run_script() {
        assert_eq!(
            names_of(&["index"]),
            vec![
                "dhry2reg",
                "whetstone-double",
                "execl",
                "fstime",
                "fsbuffer",
                "fsdisk",
                "pipe",
                "context1",
                "spawn",
                "syscall",
                "shell1",
                "shell8"
            ]
        );
        assert_eq!(
            names_of(&["dhrystone", "whets"]),
            vec!["dhry2reg", "whetstone-double"]
        );
        assert_eq!(names_of(&["load"]), vec!["shell1", "shell8", "shell16"]);
        assert_eq!(names_of(&["misc"]), vec!["C", "dc", "hanoi"]);
        assert_eq!(names_of(&["arithmetic"]).len(), 7);
        assert_eq!(names_of(&["system"]).len(), 11);
        assert_eq!(names_of(&["speed"]).len(), 18);
        assert_eq!(names_of(&["fs"]).len(), 9);
        // Duplicates are run once.
        assert_eq!(names_of(&["pipe", "oldsystem"]).len(), 8);
        assert_eq!(expand(&["all".to_string()]).unwrap().len(), 41);
        // The graphics groups, as the Run script defines them.
        assert_eq!(
            names_of(&["graphics"]),
            vec![
                "2d-rects",
                "2d-ellipse",
                "2d-aashapes",
                "2d-text",
                "2d-blit",
                "2d-window",
                "ubgears"
            ]
        );
        assert_eq!(names_of(&["2d"]).len(), 10);
        assert_eq!(names_of(&["3d"]), vec!["ubgears"]);
        let gindex = names_of(&["gindex"]);
        assert_eq!(gindex.len(), 12 + 7);
        assert_eq!(gindex[0], "dhry2reg");
        assert_eq!(gindex[18], "ubgears");
    }

    #[test]
    fn index_tests_have_baselines() {
        for t in TESTS.iter().filter(|t| t.in_index) {
            assert!(t.baseline.is_some(), "{}", t.name);
            assert_eq!(t.category, Category::System);
        }
        assert_eq!(TESTS.iter().filter(|t| t.in_index).count(), 12);
        assert_eq!(find("dhry2reg").unwrap().baseline, Some(116_700.0));
        assert_eq!(find("shell8").unwrap().baseline, Some(6.0));
    }

    #[test]
    fn unknown_names_are_refused_with_the_valid_ones() {
        let e = expand(&["bogus".to_string()]).unwrap_err().to_string();
        assert!(
            e.contains("bogus") && e.contains("dhry2reg") && e.contains("gindex"),
            "{e}"
        );
    }

    #[test]
    fn graphics_index_tests_have_their_baselines() {
        for name in GRAPHICS {
            let t = find(name).unwrap();
            assert!(is_graphics(t) && !t.in_index);
            let want = if *name == "ubgears" { 33.4 } else { 15.0 };
            assert_eq!(t.baseline, Some(want), "{name}");
        }
    }
}
