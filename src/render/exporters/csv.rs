//! CSV: one row per measurement with stable column names — a result's figures, or a
//! comparison's rows.

use anyhow::Result;

use super::LabelledResults;
use crate::compare::Comparison;
use crate::history::Histories;
use crate::model::figures::{figures, Better, Figure};
use crate::model::RunResult;
use crate::stats::Summary;

pub(super) fn history(h: &Histories) -> Result<String> {
    history_csv(h)
}

pub(super) fn fleet(fleet: &crate::fleet::Fleet, _selection: &str) -> Result<String> {
    fleet_csv(fleet)
}

pub(super) fn result(id: i64, result: &RunResult) -> Result<String> {
    figures_csv(id, &figures(result))
}

pub(super) fn comparison(c: &Comparison) -> Result<String> {
    comparison_csv(c)
}

/// The stable CSV columns of `results export --format csv`.
pub const CSV_COLUMNS: [&str; 13] = [
    "result_id",
    "suite",
    "key",
    "name",
    "unit",
    "better",
    "value",
    "samples",
    "sample_mean",
    "sample_sd",
    "sample_min",
    "sample_max",
    "sample_kind",
];

pub(super) fn better(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher",
        Better::Lower => "lower",
    }
}

/// The stable columns of `history --format csv`, a row a change.
const HISTORY_COLUMNS: [&str; 16] = [
    "host",
    "key",
    "name",
    "unit",
    "point",
    "result_id",
    "started_at",
    "before",
    "after",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "direction",
    "p",
    "tags",
    "account",
];

/// One row per change a history found.
fn history_csv(hs: &Histories) -> Result<String> {
    let mut w = CsvOut::new(&HISTORY_COLUMNS)?;
    for (h, c) in hs
        .hosts
        .iter()
        .flat_map(|h| h.changes.iter().map(move |c| (h, c)))
    {
        let tags: Vec<String> = c.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        w.row([
            Cell::text(&h.host),
            Cell::text(&c.key),
            Cell::text(&c.name),
            Cell::text(&c.unit),
            Cell::number(c.point),
            Cell::number(c.result_id),
            Cell::text(c.started_at.to_rfc3339()),
            Cell::number(c.before),
            Cell::number(c.after),
            Cell::number(c.change_pct),
            Cell::maybe(c.interval_pct.map(|(l, _)| l)),
            Cell::maybe(c.interval_pct.map(|(_, h)| h)),
            Cell::text(if c.worse { "worse" } else { "better" }),
            Cell::number(c.p),
            Cell::text(tags.join(" ")),
            Cell::text(
                c.account
                    .as_ref()
                    .map(crate::render::account::verdicts_text)
                    .unwrap_or_default(),
            ),
        ])?;
    }
    w.finish()
}

/// One row per figure.
fn figures_csv(id: i64, figures: &[Figure]) -> Result<String> {
    let mut w = CsvOut::new(&CSV_COLUMNS)?;
    figure_rows(&mut w, || Cell::number(id), figures)?;
    w.finish()
}

/// `results export --format csv --account`: the figures' rows, each with the median of every
/// account item over the figure's stretches (empty where it has none) and their number.
pub fn result_with_account(id: i64, result: &RunResult) -> Result<String> {
    use crate::model::account::Item;
    let columns: Vec<String> = Item::ALL
        .iter()
        .map(|i| account_column(*i))
        .chain(std::iter::once("account_stretches".to_string()))
        .collect();
    let header: Vec<&str> = CSV_COLUMNS
        .iter()
        .copied()
        .chain(columns.iter().map(String::as_str))
        .collect();
    let mut w = CsvOut::new(&header)?;
    for f in figures(result) {
        let accounts: Vec<&crate::model::account::Account> = f.accounts.iter().collect();
        let medians = Item::ALL
            .iter()
            .map(|&item| Cell::maybe(crate::model::account::median_item(&accounts, item)));
        let cells: Vec<Cell> = figure_cells(Cell::number(id), &f)
            .into_iter()
            .chain(medians)
            .chain(std::iter::once(Cell::number(f.accounts.len())))
            .collect();
        w.row(cells)?;
    }
    w.finish()
}

/// An account item's CSV column: `account_run_queue_wait_ms_per_s`, `account_steal_pct`.
fn account_column(item: crate::model::account::Item) -> String {
    let (name, unit) = item.name();
    let unit = match unit {
        "%" => "pct",
        "ms/s" => "ms_per_s",
        "/s" => "per_s",
        "MHz" => "mhz",
        "/k instr" => "per_k_instr",
        other => other,
    };
    let name = name.replace([' ', '-'], "_").to_lowercase();
    if unit.is_empty() {
        format!("account_{name}")
    } else {
        format!("account_{name}_{unit}")
    }
}

/// The columns of `report --format csv`: `results export`'s, the result named by its label.
pub const REPORT_COLUMNS: [&str; 13] = [
    "result",
    "suite",
    "key",
    "name",
    "unit",
    "better",
    "value",
    "samples",
    "sample_mean",
    "sample_sd",
    "sample_min",
    "sample_max",
    "sample_kind",
];

/// A report: every figure of each result, one row per figure and result, in the order given
/// (the comparisons are `compare --format csv`'s).
pub(super) fn report(results: &LabelledResults, _comparisons: &[Comparison]) -> Result<String> {
    let mut w = CsvOut::new(&REPORT_COLUMNS)?;
    for (label, r) in results {
        figure_rows(&mut w, || Cell::text(label), &figures(r))?;
    }
    w.finish()
}

/// A row per figure, each after the cell `first` makes.
fn figure_rows(w: &mut CsvOut, first: impl Fn() -> Cell, figures: &[Figure]) -> Result<()> {
    for f in figures {
        w.row(figure_cells(first(), f))?;
    }
    Ok(())
}

/// A figure's cells in `results export`'s columns, after `first` (its result).
fn figure_cells(first: Cell, f: &Figure) -> [Cell; 13] {
    let s = Summary::of(&f.samples);
    [
        first,
        Cell::text(&f.suite),
        Cell::text(&f.key),
        Cell::text(&f.name),
        Cell::text(&f.unit),
        Cell::text(better(f.better)),
        Cell::number(f.value),
        Cell::number(f.samples.len()),
        Cell::maybe(s.map(|s| s.mean)),
        Cell::maybe(s.filter(|s| s.count > 1).map(|s| s.sd)),
        Cell::maybe(s.map(|s| s.min)),
        Cell::maybe(s.map(|s| s.max)),
        Cell::text(&f.sample_kind),
    ]
}

/// The stable CSV columns of `compare --format csv`.
pub const COMPARE_COLUMNS: [&str; 16] = [
    "key",
    "suite",
    "name",
    "unit",
    "better",
    "a",
    "b",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "samples_a",
    "samples_b",
    "verdict",
    "why_not_tested",
    "account",
];

/// One row per compared figure.
fn comparison_csv(c: &Comparison) -> Result<String> {
    let mut w = CsvOut::new(&COMPARE_COLUMNS)?;
    for r in &c.rows {
        w.row([
            Cell::text(&r.key),
            Cell::text(&r.suite),
            Cell::text(&r.name),
            Cell::text(&r.unit),
            Cell::text(better(r.better)),
            Cell::number(r.a),
            Cell::number(r.b),
            Cell::number(r.change_pct),
            Cell::maybe(r.ci_pct.map(|c| c[0])),
            Cell::maybe(r.ci_pct.map(|c| c[1])),
            Cell::maybe(r.p_value),
            Cell::number(r.samples_a),
            Cell::number(r.samples_b),
            Cell::text(r.verdict.label()),
            Cell::text(r.why_not_tested.as_deref().unwrap_or_default()),
            Cell::text(
                r.account
                    .as_ref()
                    .map(crate::render::account::verdicts_text)
                    .unwrap_or_default(),
            ),
        ])?;
    }
    w.finish()
}

/// The stable CSV columns of `report --fleet --format csv`.
pub const FLEET_COLUMNS: [&str; 8] = [
    "host",
    "figure",
    "unit",
    "value",
    "measured_as",
    "source",
    "outside",
    "from_median_pct",
];

/// A CSV cell: a number as it is, or text. Every CSV hostbench writes is written through
/// [`CsvOut`], which takes only cells, so no text reaches a cell unneutralised.
pub enum Cell {
    Number(String),
    Text(String),
}

/// The numbers a cell may hold as they are (a negative one included).
pub trait Number: std::fmt::Display {}
impl Number for f64 {}
impl Number for i64 {}
impl Number for u64 {}
impl Number for u32 {}
impl Number for usize {}

impl Cell {
    pub fn text(t: impl std::fmt::Display) -> Cell {
        Cell::Text(t.to_string())
    }

    pub fn number(x: impl Number) -> Cell {
        Cell::Number(x.to_string())
    }

    /// A number with `decimals` decimals, or an empty cell.
    pub fn fixed(x: Option<f64>, decimals: usize) -> Cell {
        Cell::Number(x.map_or(String::new(), |v| format!("{v:.decimals$}")))
    }

    /// A number, or an empty cell.
    pub fn maybe(x: Option<impl Number>) -> Cell {
        x.map_or(Cell::Number(String::new()), Cell::number)
    }

    /// What is written: a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage
    /// return gets a leading `'` (OWASP's advice on CSV injection), so a spreadsheet does not
    /// take a stored name (`=HYPERLINK(…)`, `@SUM(1)`, `-2+3+cmd|…`) for a formula.
    fn written(self) -> String {
        match self {
            Cell::Number(n) => n,
            Cell::Text(t) if t.starts_with(['=', '+', '-', '@', '\t', '\r']) => format!("'{t}"),
            Cell::Text(t) => t,
        }
    }
}

/// A CSV document: a header, then rows of [`Cell`]s.
pub struct CsvOut {
    w: csv::Writer<Vec<u8>>,
}

impl CsvOut {
    pub fn new(header: &[&str]) -> Result<CsvOut> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(header)?;
        Ok(CsvOut { w })
    }

    pub fn row(&mut self, cells: impl IntoIterator<Item = Cell>) -> Result<()> {
        self.w.write_record(cells.into_iter().map(Cell::written))?;
        Ok(())
    }

    pub fn finish(self) -> Result<String> {
        Ok(String::from_utf8(self.w.into_inner()?)?)
    }
}

/// One row per host and figure it has.
fn fleet_csv(f: &crate::fleet::Fleet) -> Result<String> {
    let mut w = CsvOut::new(&FLEET_COLUMNS)?;
    for row in &f.rows {
        for (c, cell) in f.columns.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            w.row([
                Cell::text(&row.host),
                Cell::text(c.key),
                Cell::text(c.unit),
                Cell::number(cell.value),
                Cell::text(&cell.kind),
                Cell::text(&cell.source),
                Cell::text(match cell.outside {
                    Some(crate::fleet::Outside::Worse) => "worse",
                    Some(crate::fleet::Outside::Better) => "better",
                    None => "",
                }),
                Cell::fixed(cell.from_median_pct, 3),
            ])?;
        }
    }
    w.finish()
}
