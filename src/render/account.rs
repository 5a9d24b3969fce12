//! A stretch's account in words: its items that moved, with their units.

use crate::model::account::{Item, Moved};

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
}
