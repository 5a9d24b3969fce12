//! hostbench: a Linux host benchmark suite. Data flows one way: options (`cli`) → validated
//! config → plan → measure (`suites`) → result (`model`) → store (`store`) and render (`render`).

pub mod calibration;
pub mod cli;
pub mod compare;
pub mod error;
pub mod fleet;
pub mod history;
pub mod loads;
pub mod model;
pub mod platform;
pub mod render;
pub mod standard;
pub mod stats;
pub mod store;
pub mod suites;
pub mod text;
pub mod units;
pub mod workers;
