//! The background loads, each listed once: help text, validation and the docs come from this
//! table (the names are the model's, `Load::name`).

use crate::model::interactive::Load;

/// A load's line in the table.
pub struct LoadInfo {
    pub load: Load,
    pub about: &'static str,
    pub default: bool,
}

/// interbench's loads; Ring is part of the default run as the issue asks (interbench left it out).
pub const LOADS: &[LoadInfo] = &[
    LoadInfo {
        load: Load::None,
        about: "an otherwise idle system",
        default: true,
    },
    LoadInfo {
        load: Load::Video,
        about: "the Video simulation as a load",
        default: true,
    },
    LoadInfo {
        load: Load::X,
        about: "the X simulation as a load",
        default: true,
    },
    LoadInfo {
        load: Load::Burn,
        about: "-L threads burning CPU without pause",
        default: true,
    },
    LoadInfo {
        load: Load::Write,
        about: "streaming writes of a large file, over and over",
        default: true,
    },
    LoadInfo {
        load: Load::Read,
        about: "reads of a large file, whole, with its cache dropped after each pass",
        default: true,
    },
    LoadInfo {
        load: Load::Ring,
        about: "-L threads waking each other in a circle",
        default: true,
    },
    LoadInfo {
        load: Load::Compile,
        about: "Burn, Write and Read at once, like make -j",
        default: true,
    },
    LoadInfo {
        load: Load::Memload,
        about: "allocates, touches and copies 110% of available memory (needs swap)",
        default: true,
    },
    LoadInfo {
        load: Load::Hack,
        about: "a hackbench storm of messages between groups of senders and receivers",
        default: false,
    },
    LoadInfo {
        load: Load::Custom,
        about: "the Custom simulation as a load",
        default: false,
    },
];

/// A load's line in the table.
pub fn info(load: Load) -> &'static LoadInfo {
    LOADS
        .iter()
        .find(|l| l.load == load)
        .expect("every load is listed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_load_is_listed_once() {
        for l in Load::ALL {
            assert_eq!(LOADS.iter().filter(|i| i.load == l).count(), 1, "{l:?}");
        }
    }
}
