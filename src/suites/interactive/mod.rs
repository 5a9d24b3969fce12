//! `interactive`: interbench. Simulated interactive tasks (benches) are measured alone and
//! under background loads. For each bench × load pair the coordinator starts a load worker
//! process, waits for it to run, starts a bench worker process, lets both run `-t` seconds and
//! collects the bench's figures. See docs/interactive.md for the method.

pub mod event;
pub use event::InteractiveEvent;
pub mod benches;
mod config;
mod run;
pub mod worker;

pub use config::{custom_spec, InteractiveConfig, Selection};
pub use run::{pairs, plan, run, seconds_per_pair, InteractiveOutcome, Pairs};
