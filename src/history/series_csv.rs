//! `history --series FILE`: change points of series read from a CSV file.

use super::*;

/// The most points `--series` takes in one series: the search's time grows with points ×
/// changes (30,000 points took 27 s), and 10,000 nightly results are 27 years of them.
pub const MAX_SERIES_POINTS: usize = 10_000;
/// The longest series name `--series` takes.
pub const MAX_SERIES_NAME: usize = 256;

/// The change points of each series of a CSV text (`history --series FILE`: a header
/// `series,value` or `series,value,floor`, then rows of a series' name, a value and its noise
/// floor, each series' values in order): the indices of the first point of each new level.
/// A change is kept as a store's history keeps it: at least `min_change_pct`, or else the
/// median floor of the level it leaves (any size where the file has no floors). How the
/// method is checked against synthetic series and other tools (docs/history.md). Err says
/// what is wrong with the text.
pub fn series_change_points(
    csv_text: &[u8],
    settings: &Settings,
    min_change_pct: Option<f64>,
) -> Result<BTreeMap<String, Vec<usize>>, String> {
    let all = read_series_csv(csv_text)?;
    Ok(all
        .into_iter()
        .map(|(name, (values, floors))| {
            let mut found = find(&values, settings, None).points;
            let least = |from: usize, c: usize| {
                min_change_pct
                    .unwrap_or_else(|| floors.get(from..c).and_then(median).unwrap_or(0.0))
            };
            drop_small(&values, &mut found, &|b, a| step_size("", b, a), &least);
            (name, found.into_iter().map(|c| c.index).collect())
        })
        .collect())
}

/// One series of a `--series` file: its values, and the noise floor of each (empty where the
/// file has no `floor` column).
type SeriesColumns = (Vec<f64>, Vec<f64>);

/// The series of a `--series` CSV text, by name.
pub(super) fn read_series_csv(csv_text: &[u8]) -> Result<BTreeMap<String, SeriesColumns>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(csv_text);
    // The header says what the columns are: without it the first row would be taken for one.
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let with_floor = match header.as_slice() {
        [s, v] if s == "series" && v == "value" => false,
        [s, v, f] if s == "series" && v == "value" && f == "floor" => true,
        _ => {
            return Err(format!(
                "the first row must be the header series,value or series,value,floor (it is {})",
                crate::model::label::printable(&header.join(","), 60)
            ))
        }
    };
    let mut all: BTreeMap<String, SeriesColumns> = Default::default();
    for (i, row) in reader.records().enumerate() {
        let bad = |why: String| format!("row {}: {why}", i + 2);
        let row = row.map_err(|e| bad(e.to_string()))?;
        let number = |at: usize| -> Result<f64, String> {
            let text = row.get(at).unwrap_or_default();
            text.trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| bad(format!("{text:?} is not a number")))
        };
        let (Some(name), Some(_)) = (row.get(0), row.get(1)) else {
            return Err(bad("not `series,value`".into()));
        };
        let value = number(1)?;
        let floor = if with_floor { Some(number(2)?) } else { None };
        if name.chars().count() > MAX_SERIES_NAME {
            return Err(bad(format!(
                "a series name has at most {MAX_SERIES_NAME} characters"
            )));
        }
        let (points, floors) = all.entry(name.to_string()).or_default();
        if points.len() == MAX_SERIES_POINTS {
            return Err(bad(format!(
                "series {} has more than {MAX_SERIES_POINTS} points",
                crate::model::label::printable(name, 60)
            )));
        }
        points.push(value);
        floors.extend(floor);
    }
    Ok(all)
}
