//! `wakeup`: schbench. Message threads hand requests to workers; the figures are the wakeup
//! latency (a post to the worker running), the request latency and requests a second. See
//! docs/wakeup.md.

pub mod workload;
