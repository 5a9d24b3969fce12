//! The simulated interactive tasks ("benches") and the background loads, each listed once:
//! names, help text, validation and the docs come from these tables.

use serde::{Deserialize, Serialize};

/// A simulated interactive task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Bench {
    Audio,
    Video,
    X,
    Gaming,
    Custom,
}

/// A background load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Load {
    None,
    Video,
    X,
    Burn,
    Write,
    Read,
    Ring,
    Compile,
    Memload,
    Hack,
    Custom,
}

pub struct BenchInfo {
    pub bench: Bench,
    pub name: &'static str,
    pub about: &'static str,
    /// Part of a default run.
    pub default: bool,
    /// Run under `-r` (as SCHED_FIFO).
    pub realtime: bool,
}

pub struct LoadInfo {
    pub load: Load,
    pub name: &'static str,
    pub about: &'static str,
    pub default: bool,
    /// The simulation of the same name, never measured under itself.
    pub same_as: Option<Bench>,
}

/// interbench's benches and which runs include them (interbench.c's threadlist).
pub const BENCHES: &[BenchInfo] = &[
    BenchInfo { bench: Bench::Audio, name: "Audio", about: "wakes every 50 ms and needs 5% CPU", default: true, realtime: true },
    BenchInfo { bench: Bench::Video, name: "Video", about: "wakes 60 times a second and needs 40% CPU", default: true, realtime: true },
    BenchInfo { bench: Bench::X, name: "X", about: "a window dragged across an idle desktop: 0% to 100% CPU in 1 ms steps of 100 ms periods", default: true, realtime: false },
    BenchInfo { bench: Bench::Gaming, name: "Gaming", about: "as much CPU as it can get, in 100 ms frames; no deadlines", default: true, realtime: false },
    BenchInfo { bench: Bench::Custom, name: "Custom", about: "-C percent CPU every -I microseconds", default: false, realtime: true },
];

/// interbench's loads; Ring is part of the default run as the issue asks (interbench left it out).
pub const LOADS: &[LoadInfo] = &[
    LoadInfo {
        load: Load::None,
        name: "None",
        about: "an otherwise idle system",
        default: true,
        same_as: None,
    },
    LoadInfo {
        load: Load::Video,
        name: "Video",
        about: "the Video simulation as a load",
        default: true,
        same_as: Some(Bench::Video),
    },
    LoadInfo {
        load: Load::X,
        name: "X",
        about: "the X simulation as a load",
        default: true,
        same_as: Some(Bench::X),
    },
    LoadInfo {
        load: Load::Burn,
        name: "Burn",
        about: "-L threads burning CPU without pause",
        default: true,
        same_as: None,
    },
    LoadInfo {
        load: Load::Write,
        name: "Write",
        about: "streaming writes of a large file, over and over",
        default: true,
        same_as: None,
    },
    LoadInfo {
        load: Load::Read,
        name: "Read",
        about: "reads of a large file, whole, with its cache dropped after each pass",
        default: true,
        same_as: None,
    },
    LoadInfo {
        load: Load::Ring,
        name: "Ring",
        about: "-L threads waking each other in a circle",
        default: true,
        same_as: None,
    },
    LoadInfo {
        load: Load::Compile,
        name: "Compile",
        about: "Burn, Write and Read at once, like make -j",
        default: true,
        same_as: None,
    },
    LoadInfo {
        load: Load::Memload,
        name: "Memload",
        about: "allocates, touches and copies 110% of available memory (needs swap)",
        default: true,
        same_as: None,
    },
    LoadInfo {
        load: Load::Hack,
        name: "Hack",
        about: "a hackbench storm of messages between groups of senders and receivers",
        default: false,
        same_as: None,
    },
    LoadInfo {
        load: Load::Custom,
        name: "Custom",
        about: "the Custom simulation as a load",
        default: false,
        same_as: Some(Bench::Custom),
    },
];

impl Bench {
    pub fn info(self) -> &'static BenchInfo {
        BENCHES
            .iter()
            .find(|b| b.bench == self)
            .expect("every bench is listed")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Case-insensitive, as interbench matched names.
    pub fn parse(name: &str) -> Option<Bench> {
        BENCHES
            .iter()
            .find(|b| b.name.eq_ignore_ascii_case(name))
            .map(|b| b.bench)
    }

    pub fn names() -> String {
        BENCHES
            .iter()
            .map(|b| b.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Load {
    pub fn info(self) -> &'static LoadInfo {
        LOADS
            .iter()
            .find(|l| l.load == self)
            .expect("every load is listed")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn parse(name: &str) -> Option<Load> {
        LOADS
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
            .map(|l| l.load)
    }

    pub fn names() -> String {
        LOADS.iter().map(|l| l.name).collect::<Vec<_>>().join(", ")
    }

    /// Whether this load writes or reads the large files.
    pub fn uses_files(self) -> (bool, bool) {
        match self {
            Load::Write => (true, false),
            Load::Read => (false, true),
            Load::Compile => (true, true),
            _ => (false, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_case_insensitively() {
        assert_eq!(Bench::parse("audio"), Some(Bench::Audio));
        assert_eq!(Bench::parse("GAMING"), Some(Bench::Gaming));
        assert_eq!(Load::parse("memload"), Some(Load::Memload));
        assert_eq!(Load::parse("nope"), None);
        for b in BENCHES {
            assert_eq!(Bench::parse(b.name), Some(b.bench));
        }
        for l in LOADS {
            assert_eq!(Load::parse(l.name), Some(l.load));
        }
        assert!(Load::names().starts_with("None, Video, X, Burn"));
    }
}
