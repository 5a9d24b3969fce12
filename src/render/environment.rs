use std::fmt::Write;

use crate::model::label;
use crate::model::{Environment, RunResult};
use crate::text;

/// A few lines naming the run and the host: what a reader needs before trusting a figure.
pub fn header(result: &RunResult) -> String {
    let mut out = String::new();
    let env = &result.environment;
    let _ = writeln!(
        out,
        "hostbench {} — {} — started {} UTC{}",
        result.tool_version,
        result.suite_names(),
        result.started_at.format("%Y-%m-%d %H:%M:%S"),
        if result.incomplete {
            " — INCOMPLETE (stopped early)"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "Command: {}", result.shown_command_line());
    if let Some(line) = super::noise::check_line(result) {
        out.push_str(&line);
    }
    out.push_str(&host_lines(env));
    out
}

/// The host facts, one line each.
pub fn host_lines(env: &Environment) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Host: {} ({}), Linux {} ({})",
        env.host.hostname.cut(label::MAX_HOST_LABEL),
        env.host.arch.cut(32),
        env.host.kernel_release.cut(128),
        env.host.kernel_version.cut(200)
    );
    let _ = writeln!(
        out,
        "CPU: {} — {} online, {} allowed{}",
        env.host.cpu_model,
        env.host.cpus_online,
        env.host.cpus_allowed,
        cgroup_limit_note(env)
    );
    let _ = writeln!(
        out,
        "Memory: {:.1} GiB ({:.1} GiB available), swap {:.1} GiB",
        gib(env.host.memory_total_bytes),
        gib(env.host.memory_available_bytes),
        gib(env.host.swap_total_bytes)
    );
    let _ = writeln!(
        out,
        "Clocksource: {}, governor: {}, LANG: {}",
        text::or(env.host.clocksource.as_ref(), "unknown"),
        text::or(env.host.cpu_governor.as_ref(), "not reported"),
        text::or(env.host.lang.as_ref(), "unset")
    );
    let steal = env
        .steal_ms_during_run
        .map(|ms| format!("{ms:.0} ms stolen by the hypervisor during the run"))
        .unwrap_or_else(|| "steal time not reported".into());
    let _ = writeln!(
        out,
        "Built by: {} ({}); {steal}",
        env.compiler, env.build_profile
    );
    out
}

/// ", cgroup limit 1.50 CPUs" when a cgroup quota limits the process, else nothing.
pub fn cgroup_limit_note(env: &Environment) -> String {
    env.host
        .cgroup_cpu_limit
        .as_ref()
        .map(|l| format!(", cgroup limit {:.2} CPUs", l.cpus()))
        .unwrap_or_default()
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}
