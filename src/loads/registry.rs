//! The background loads, each listed once: help text, validation, `interactive --list` and the
//! docs come from this table (the names are the model's, `Load::name`), and each load says
//! whether it can run here (`supported`), the one place that rule is kept: a run leaves out or
//! refuses a load by it, and `--list` shows it.

use crate::model::interactive::Load;
use crate::model::HostLimits;
use crate::units;

/// A load's line in the table.
pub struct LoadInfo {
    pub load: Load,
    pub about: &'static str,
    pub default: bool,
    /// Whether it can run here, or why not.
    pub supported: fn(Load, &Here) -> Result<(), String>,
}

/// What decides whether a load can run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Here<'a> {
    /// The host: its swap, and the free bytes where the Write and Read files would go (None:
    /// unknown, not checked).
    pub host: &'a HostLimits,
    /// The size of each of those files (interbench: the size of RAM).
    pub file_bytes: u64,
    /// `--memload-mb`: Memload at a size the user chose, swap or not.
    pub memload_mb: Option<u64>,
}

/// Runs anywhere.
fn anywhere(_: Load, _: &Here) -> Result<(), String> {
    Ok(())
}

/// Memload needs swap, as interbench decided; an explicit size runs it anyway.
fn needs_swap(_: Load, here: &Here) -> Result<(), String> {
    if here.host.swap_bytes == 0 && here.memload_mb.is_none() {
        return Err("no swap on this host: Memload would push 110% of available memory into the OOM killer (--memload-mb MB runs it at a size you choose)".into());
    }
    Ok(())
}

/// The disk loads need room for their files.
fn needs_room(load: Load, here: &Here) -> Result<(), String> {
    let (writes, reads) = load.uses_files();
    let files = here
        .file_bytes
        .saturating_mul(u64::from(writes) + u64::from(reads));
    match here.host.free_disk_bytes {
        Some(free) if free < room_needed(files) => Err(format!(
            "no room for its files: they need {} and {} is free",
            units::bytes(room_needed(files)),
            units::bytes(free)
        )),
        _ => Ok(()),
    }
}

/// The room files of `bytes` need on their file system: themselves and 10% to spare for
/// everything else there.
pub fn room_needed(bytes: u64) -> u64 {
    bytes.saturating_add(bytes / 10)
}

/// Whether `load` can run here, or why not.
pub fn supported(load: Load, here: &Here) -> Result<(), String> {
    (info(load).supported)(load, here)
}

/// interbench's loads; Ring is part of the default run as the issue asks (interbench left it out).
pub const LOADS: &[LoadInfo] = &[
    LoadInfo {
        load: Load::None,
        about: "an otherwise idle system",
        default: true,
        supported: anywhere,
    },
    LoadInfo {
        load: Load::Video,
        about: "the Video simulation as a load",
        default: true,
        supported: anywhere,
    },
    LoadInfo {
        load: Load::X,
        about: "the X simulation as a load",
        default: true,
        supported: anywhere,
    },
    LoadInfo {
        load: Load::Burn,
        about: "-L threads burning CPU without pause",
        default: true,
        supported: anywhere,
    },
    LoadInfo {
        load: Load::Write,
        about: "streaming writes of a large file, over and over",
        default: true,
        supported: needs_room,
    },
    LoadInfo {
        load: Load::Read,
        about: "reads of a large file, whole, with its cache dropped after each pass",
        default: true,
        supported: needs_room,
    },
    LoadInfo {
        load: Load::Ring,
        about: "-L threads waking each other in a circle",
        default: true,
        supported: anywhere,
    },
    LoadInfo {
        load: Load::Compile,
        about: "Burn, Write and Read at once, like make -j",
        default: true,
        supported: needs_room,
    },
    LoadInfo {
        load: Load::Memload,
        about: "allocates, touches and copies 110% of available memory (needs swap)",
        default: true,
        supported: needs_swap,
    },
    LoadInfo {
        load: Load::Hack,
        about: "a hackbench storm of messages between groups of senders and receivers",
        default: false,
        supported: anywhere,
    },
    LoadInfo {
        load: Load::Custom,
        about: "the Custom simulation as a load",
        default: false,
        supported: anywhere,
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
    fn disk_loads_need_room_and_memload_swap() {
        let host = HostLimits {
            usable_cpus: 2,
            memory_total_bytes: 24 << 30,
            memory_available_bytes: 20 << 30,
            swap_bytes: 0,
            free_disk_bytes: Some(1 << 30),
        };
        let here = Here {
            host: &host,
            file_bytes: 600 << 20,
            memload_mb: None,
        };
        assert!(supported(Load::Write, &here).is_ok());
        let compile = supported(Load::Compile, &here).unwrap_err();
        assert!(
            compile.contains("they need 1.3 GiB and 1.0 GiB is free"),
            "{compile}"
        );
        assert!(supported(Load::Burn, &here).is_ok());
        assert!(supported(Load::Memload, &here)
            .unwrap_err()
            .contains("no swap"));
        let chosen = Here {
            memload_mb: Some(100),
            ..here
        };
        assert!(supported(Load::Memload, &chosen).is_ok());
        let unknown_room = HostLimits {
            free_disk_bytes: None,
            ..host.clone()
        };
        let unknown = Here {
            host: &unknown_room,
            ..here
        };
        assert!(supported(Load::Compile, &unknown).is_ok());
    }

    #[test]
    fn every_load_is_listed_once() {
        for l in Load::ALL {
            assert_eq!(LOADS.iter().filter(|i| i.load == l).count(), 1, "{l:?}");
        }
    }
}
