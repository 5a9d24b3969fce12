//! `interactive`, after interbench: simulated interactive tasks (benches) measured alone and
//! under background loads. For each bench × load pair the coordinator starts a load worker,
//! waits for it to run, starts a bench worker, lets both run `-t` seconds and collects the
//! bench's figures (docs/interactive.md).

pub mod event;
mod part;
pub use event::InteractiveEvent;
pub use part::run_parts;
pub mod benches;
mod config;
mod run;
pub mod worker;

pub use config::{custom_spec, InteractiveConfig, Selection};
pub use run::{pairs, plan, run, seconds_per_pair, InteractiveOutcome, Pairs};
