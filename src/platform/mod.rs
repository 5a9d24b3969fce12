//! Thin, safe wrappers over what the kernel offers: the clock, host facts, signals.

pub mod account;
pub mod blockdev;
pub mod cleanup;
pub mod clock;
pub mod counters;
pub mod dir;
pub mod files;
pub mod futex;
pub mod host;
pub mod limits;
pub mod locale;
pub mod power;
pub mod private_dir;
pub mod procfs;
pub mod rusage;
pub mod sched;
pub mod sem;
pub mod signals;
pub mod tracefs;
pub mod xvfb;
