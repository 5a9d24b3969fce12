//! A result's headline figures — the few numbers a fleet of hosts is compared on (the index of
//! one copy and of N, interbench's worst pair, reflex's cost per round, p1bench's spread) — and
//! its noise floor, taken from the result once and kept beside it in the store (layout 7), so a
//! fleet of many stored results is drawn without reading each whole.

use serde::{Deserialize, Serialize};

use super::figures::Better;
use super::{RunResult, SuiteResult};
use crate::text::Text;

/// A headline figure: a column of the fleet's table. A suite declares its columns beside its
/// result types; [`super::COLUMNS`] lists them in the order a stored result keeps its figures.
#[derive(Debug)]
pub struct Column {
    /// Its key in the fleet page (`#sort=`), the CSV and the JSON.
    pub key: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    /// The values the figure can take (a percentage of deadlines met lies in 0..=100): a range
    /// drawn around a median is cut to them.
    pub bounds: (f64, f64),
    pub better: Better,
    /// Whether the figure is itself a spread (p1bench's): the hosts' own noise floors do not
    /// widen its range.
    pub is_spread: bool,
    /// The figure in a result: its value, what it measured (hosts are ranged only with those
    /// that measured the same), and a note for the table.
    pub of: fn(&RunResult) -> Option<Figure>,
}

/// A figure that is at least 0 and has no upper bound.
pub const AT_LEAST_ZERO: (f64, f64) = (0.0, f64::INFINITY);

impl Column {
    /// Every column, in the order a stored result keeps its figures.
    pub fn all() -> &'static [&'static Column] {
        super::COLUMNS
    }

    /// The column with this key.
    pub fn by_key(key: &str) -> Option<&'static Column> {
        Self::all().iter().copied().find(|c| c.key == key)
    }
}

/// Columns are the same when their keys are.
impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        self.key == other.key
    }
}

impl Eq for Column {}

/// A column is written as its key.
impl Serialize for Column {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key)
    }
}

/// Each of a suite's results in `r`, as the variant `pick` takes out.
pub fn each<'a, T: 'a>(
    r: &'a RunResult,
    pick: fn(&'a SuiteResult) -> Option<&'a T>,
) -> impl Iterator<Item = &'a T> {
    r.suites.iter().filter_map(pick)
}

/// A headline figure of a result: its value, what it measured (hosts are compared only with
/// those that measured the same), and a note for a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub value: f64,
    /// Read back from a store another host writes to: shown only escaped.
    pub kind: Text,
    pub note: Text,
}

/// What a fleet reads of a result besides its list columns: its noise floor and a figure a
/// column, in [`Column::all`] order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadlineFigures {
    pub noise_floor_pct: Option<f64>,
    pub values: Vec<Option<Figure>>,
}

impl HeadlineFigures {
    pub fn of(r: &RunResult) -> HeadlineFigures {
        HeadlineFigures {
            noise_floor_pct: r.noise_floor_pct(),
            values: Column::all().iter().map(|c| (c.of)(r)).collect(),
        }
    }

    /// As stored: None for what does not read back with a figure a column (a row of an earlier
    /// layout holds none; one edited by hand may hold anything).
    pub fn parse(json: &str) -> Option<HeadlineFigures> {
        let mut f = serde_json::from_str::<HeadlineFigures>(json).ok()?;
        // A row stored before a suite's columns existed has none of them: the suite had not
        // measured there.
        if f.values.len() > Column::all().len() {
            return None;
        }
        f.values.resize(Column::all().len(), None);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_has_its_own_key() {
        let mut keys: Vec<&str> = Column::all().iter().map(|c| c.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Column::all().len());
        for c in Column::all() {
            assert_eq!(Column::by_key(c.key), Some(*c));
        }
    }

    #[test]
    fn a_row_stored_before_a_column_existed_reads_with_that_column_empty() {
        let figure = Figure {
            value: 1.0,
            kind: "k".into(),
            note: "n".into(),
        };
        let shorter = HeadlineFigures {
            noise_floor_pct: Some(0.5),
            values: vec![Some(figure.clone())],
        };
        let read = HeadlineFigures::parse(&serde_json::to_string(&shorter).unwrap()).unwrap();
        assert_eq!(read.values.len(), Column::all().len());
        assert_eq!(read.values[0], Some(figure.clone()));
        assert!(read.values[1..].iter().all(Option::is_none));
        let longer = HeadlineFigures {
            noise_floor_pct: None,
            values: vec![Some(figure); Column::all().len() + 1],
        };
        assert_eq!(
            HeadlineFigures::parse(&serde_json::to_string(&longer).unwrap()),
            None
        );
    }
}
