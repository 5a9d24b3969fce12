//! `interactive`: interbench. Simulated interactive tasks (benches) measured alone and under
//! background loads, each in its own process.

pub mod benches;
pub mod deadline;
pub mod sim;
