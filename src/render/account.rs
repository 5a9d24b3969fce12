//! A stretch's account in words: its items that moved, with their units.

use crate::model::account::{not_quiet, Item, ItemVerdicts, Moved};
use crate::model::RunResult;

/// A number with as many digits as its size deserves.
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// "run-queue wait 45 ms/s (0.10)", "steal 31% (0)".
pub fn moved_text(m: &Moved) -> String {
    let (name, unit) = m.item.name();
    let sep = if matches!(m.item, Item::Clock | Item::Wait) {
        " "
    } else {
        ""
    };
    format!("{name} {}{sep}{unit} ({})", num(m.these), num(m.typical))
}

/// What the host's accounts say beside a figure that changed: "run-queue wait 2.44 → 596
/// ms/s, involuntary switches 0 → 12.0/s; unchanged: steal, IRQ", or that no item changed (then
/// the cause is in what the kernel does not count: the code, or the kernel's path for it).
pub fn verdicts_text(v: &ItemVerdicts) -> String {
    let unchanged = if v.unchanged.is_empty() {
        String::new()
    } else {
        format!("unchanged: {}", v.unchanged.join(", "))
    };
    if v.changed.is_empty() {
        return format!("by the host's account: no item changed ({unchanged})");
    }
    let changed: Vec<String> = v
        .changed
        .iter()
        .map(|c| {
            let sep = if c.unit.starts_with('%') || c.unit.starts_with('/') {
                ""
            } else {
                " "
            };
            format!("{} {} → {}{sep}{}", c.item, num(c.a), num(c.b), c.unit)
        })
        .collect();
    let mut out = format!("by the host's account: {}", changed.join(", "));
    if !unchanged.is_empty() {
        out.push_str("; ");
        out.push_str(&unchanged);
    }
    out
}

/// "run-queue wait 502 ms/s a task, involuntary switches 126/s a task".
fn busy_text(items: &[(Item, f64)]) -> String {
    items
        .iter()
        .map(|&(item, v)| {
            let (name, unit) = item.name();
            let sep = if matches!(item, Item::Wait) { " " } else { "" };
            let each = if item.per_task() { " a task" } else { "" };
            format!("{name} {}{sep}{unit}{each}", num(v))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each of a result's measured stretches that was not quiet, by the host's account: (what it
/// measured, the items above their level). Empty when every one was quiet or none has an
/// account.
pub fn not_quiet_rows(result: &RunResult) -> Vec<(String, String)> {
    result
        .suites
        .iter()
        .flat_map(|s| s.data().stretches())
        .filter_map(|s| {
            let busy = not_quiet(&s.accounts, s.own_waits);
            (!busy.is_empty()).then(|| (s.what, busy_text(&busy)))
        })
        .collect()
}

/// The line that says what a host without a CPU PMU leaves out of its accounts, when every
/// stretch of `result` was taken on such a host; None otherwise.
pub fn no_pmu_line(result: &RunResult) -> Option<&'static str> {
    let mut accounts = result
        .suites
        .iter()
        .flat_map(|s| s.data().stretches())
        .flat_map(|s| s.accounts)
        .peekable();
    accounts.peek()?;
    accounts.all(|a| a.no_pmu).then_some(
        "No CPU PMU on this host (as in most VMs): IPC, cache and branch misses are not in its account.",
    )
}

/// The text report's lines on the host's account: what was not quiet, a line each; or that
/// all was; nothing for a result without accounts.
pub fn text_section(result: &RunResult) -> String {
    let counted = result
        .suites
        .iter()
        .any(|s| !s.data().stretches().is_empty());
    if !counted {
        return String::new();
    }
    let rows = not_quiet_rows(result);
    let mut out = if rows.is_empty() {
        "\nThe host's account: every measured stretch was quiet (medians: run-queue wait \
         and preemptions of a task, steal, interrupts, iowait, major faults, throttles).\n"
            .to_string()
    } else {
        let mut out = String::from(
            "\nThe host's account, what was not quiet while each was measured (medians):\n",
        );
        for (what, busy) in rows {
            out.push_str(&format!("  {what}: {busy}\n"));
        }
        out
    };
    if let Some(line) = no_pmu_line(result) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_item_reads_with_its_unit_and_the_others_value() {
        let m = |item, typical, these| {
            moved_text(&Moved {
                item,
                typical,
                these,
            })
        };
        assert_eq!(m(Item::Wait, 2.44, 596.2), "run-queue wait 596 ms/s (2.44)");
        assert_eq!(m(Item::Steal, 0.0, 31.25), "steal 31.2% (0)");
        assert_eq!(
            m(Item::Involuntary, 0.5, 12.0),
            "involuntary switches 12.0/s (0.50)"
        );
        assert_eq!(m(Item::Clock, 2600.0, 1200.0), "clock 1200 MHz (2600)");
    }

    #[test]
    fn the_items_beside_a_changed_figure_read_as_a_line() {
        use crate::model::account::ItemChange;
        let change = |item: &str, unit: &str, a, b| ItemChange {
            item: item.into(),
            unit: unit.into(),
            a,
            b,
        };
        let v = ItemVerdicts {
            changed: vec![
                change("run-queue wait", "ms/s", 2.44, 596.0),
                change("involuntary switches", "/s", 0.0, 12.0),
            ],
            unchanged: vec!["steal".into(), "IRQ".into()],
        };
        assert_eq!(
            verdicts_text(&v),
            "by the host's account: run-queue wait 2.44 → 596 ms/s, involuntary switches 0 → 12.0/s; unchanged: steal, IRQ"
        );
        let none = ItemVerdicts {
            changed: Vec::new(),
            unchanged: vec!["steal".into()],
        };
        assert_eq!(
            verdicts_text(&none),
            "by the host's account: no item changed (unchanged: steal)"
        );
    }
}
