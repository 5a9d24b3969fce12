//! What `/proc/ID/stat` says of a process or thread: its start time, which tells a live process
//! apart from a later one that reused its pid, and its scheduling policy.

/// A process's start time in clock ticks since boot (field 22 of `/proc/PID/stat`).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    stat_field(pid as i64, 22)?.parse().ok()
}

/// Field `n` (from 1, as proc(5) numbers them; 3 or later) of `/proc/ID/stat`, for a process or
/// a thread; None if it is gone.
pub fn stat_field(id: i64, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{id}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace()
        .nth(n.checked_sub(3)?)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_of_this_process_is_read() {
        let t = process_start_ticks(std::process::id()).unwrap();
        assert!(t > 0);
        assert_eq!(process_start_ticks(std::process::id()), Some(t));
        // A pid that cannot exist has none.
        assert_eq!(process_start_ticks(u32::MAX), None);
    }
}
