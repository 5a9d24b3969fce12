//! `results delete --before DATE --keep N`: which stored results and run states go. One rule for
//! both, per host: older than the date, and not among the host's newest N. A row whose time
//! does not read back is never chosen by age.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

/// The most results (or run states) a host keeps by `--keep`.
pub const MAX_KEEP: u64 = 1_000_000;

/// What goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Retention {
    /// Rows started before this go (None: any age).
    pub before: Option<DateTime<Utc>>,
    /// Each host's newest this many stay, whatever their age (None: none kept by count).
    pub keep: Option<usize>,
}

impl Retention {
    /// The indices of `rows` (each its host and start) that go, in the order given. With
    /// neither bound nothing goes: a retention names what it removes.
    pub fn chosen<'a>(
        &self,
        rows: impl IntoIterator<Item = (&'a str, Option<DateTime<Utc>>)>,
    ) -> Vec<usize> {
        if self.before.is_none() && self.keep.is_none() {
            return Vec::new();
        }
        let rows: Vec<(&str, Option<DateTime<Utc>>)> = rows.into_iter().collect();
        // Each host's rows, newest first: a row's rank among its host's.
        let mut by_host: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, (host, _)) in rows.iter().enumerate() {
            by_host.entry(host).or_default().push(i);
        }
        let mut rank = vec![0usize; rows.len()];
        for each in by_host.values_mut() {
            each.sort_by(|&a, &b| rows[b].1.cmp(&rows[a].1).then(b.cmp(&a)));
            for (r, &i) in each.iter().enumerate() {
                rank[i] = r;
            }
        }
        (0..rows.len())
            .filter(|&i| {
                let Some(at) = rows[i].1 else { return false };
                let old = self.before.is_none_or(|before| at < before);
                let beyond = self.keep.is_none_or(|keep| rank[i] >= keep);
                old && beyond
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(day: u32) -> Option<DateTime<Utc>> {
        Some(
            chrono::NaiveDate::from_ymd_opt(2026, 1, day)
                .unwrap()
                .and_hms_opt(2, 30, 0)
                .unwrap()
                .and_utc(),
        )
    }

    fn rows() -> Vec<(&'static str, Option<DateTime<Utc>>)> {
        vec![
            ("a", at(1)),
            ("a", at(2)),
            ("b", at(1)),
            ("a", at(3)),
            ("a", None),
            ("b", at(5)),
        ]
    }

    #[test]
    fn before_a_date_goes_and_a_row_without_a_time_stays() {
        let r = Retention {
            before: at(3),
            keep: None,
        };
        assert_eq!(r.chosen(rows()), [0, 1, 2]);
    }

    #[test]
    fn keep_holds_each_hosts_newest_whatever_their_age() {
        let keep = |n| Retention {
            before: None,
            keep: Some(n),
        };
        // a's newest two are days 3 and 2; b's newest one is day 5.
        assert_eq!(keep(2).chosen(rows()), [0]);
        assert_eq!(keep(1).chosen(rows()), [0, 1, 2]);
        assert!(keep(5).chosen(rows()).is_empty());
        // Both: older than the date and beyond the newest N.
        let both = Retention {
            before: at(2),
            keep: Some(1),
        };
        assert_eq!(both.chosen(rows()), [0, 2]);
        let none = Retention {
            before: None,
            keep: None,
        };
        assert!(none.chosen(rows()).is_empty());
    }
}
