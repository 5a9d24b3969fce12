//! Inline SVG plots for the HTML report: line charts (linear or log x) and horizontal bar
//! charts, labelled with units. Every data mark carries the class `point` or `bar`, and every
//! plot `data-plot` (its kind) and `data-points` (its mark count), so a test can check a
//! rendered page for plots with data.

use std::fmt::Write;

/// Distinguishable colours for up to eight series (then they repeat).
const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

pub fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

/// Escapes text for HTML and XML (SVG): element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

const W: f64 = 640.0;
const H: f64 = 320.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 50.0;

/// About five round tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(t);
        t += step;
    }
    out
}

fn label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{:.3e}", v)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn open(out: &mut String, kind: &str, title: &str, marks: usize, height: f64) {
    let _ = write!(
        out,
        r#"<figure><svg class="plot" data-plot="{}" data-points="{marks}" viewBox="0 0 {W} {height}" width="{W}" height="{height}" role="img"><title>{}</title><text x="{}" y="18" class="title">{}</text>"#,
        esc(kind),
        esc(title),
        W / 2.0,
        esc(title)
    );
}

/// How the x axis of a line chart is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XScale {
    Linear,
    /// Powers of two (thread counts).
    Log2,
    /// Decades (latencies spanning microseconds to tens of milliseconds); values at or below
    /// zero are drawn at the smallest positive value.
    Log10,
}

impl XScale {
    fn base(self) -> f64 {
        match self {
            XScale::Log10 => 10.0,
            _ => 2.0,
        }
    }
}

/// A line chart.
pub fn line_chart(
    kind: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    scale: XScale,
) -> String {
    let log_x = scale != XScale::Linear;
    let least = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| *x > 0.0)
        .fold(f64::MAX, f64::min);
    let least = if least == f64::MAX { 1e-9 } else { least };
    let fx = |x: f64| {
        if log_x {
            x.max(least).log(scale.base())
        } else {
            x
        }
    };
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|&(x, y)| (fx(x), y)))
        .collect();
    let marks = all.len();
    let mut out = String::new();
    open(&mut out, kind, title, marks, H);
    if all.is_empty() {
        out.push_str(r#"<text x="320" y="160" class="empty">no data</text></svg></figure>"#);
        return out;
    }
    let (mut x0, mut x1) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let y1 = all.iter().fold(f64::MIN, |a, p| a.max(p.1)).max(1e-12) * 1.05;
    let y0 = 0.0f64.min(all.iter().fold(f64::MAX, |a, p| a.min(p.1)));
    if x1 <= x0 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM);
    axes(&mut out, x_label, y_label, H);
    let xticks: Vec<f64> = if log_x {
        (x0.floor() as i64..=x1.ceil() as i64)
            .map(|e| e as f64)
            .filter(|e| *e >= x0 - 1e-9 && *e <= x1 + 1e-9)
            .collect()
    } else {
        ticks(x0, x1)
    };
    for t in xticks {
        let shown = if log_x { scale.base().powf(t) } else { t };
        x_tick(&mut out, px(t), H, shown);
    }
    for t in ticks(y0, y1) {
        let _ = write!(
            out,
            r#"<line x1="{0}" x2="{1}" y1="{2}" y2="{2}" class="grid"/><text x="{3}" y="{4}" class="tick ytick">{5}</text>"#,
            LEFT,
            W - RIGHT,
            py(t),
            LEFT - 6.0,
            py(t) + 4.0,
            label(t)
        );
    }
    for (i, s) in series.iter().enumerate() {
        let c = colour(i);
        let pts: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(fx(x)), py(y)))
            .collect();
        let _ = write!(
            out,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{}"/>"#,
            pts.join(" ")
        );
        for &(x, y) in &s.points {
            let _ = write!(
                out,
                r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="2" fill="{c}"><title>{}: {} , {}</title></circle>"#,
                px(fx(x)),
                py(y),
                esc(&s.name),
                label(x),
                label(y)
            );
        }
        legend(&mut out, i, &s.name);
    }
    out.push_str("</svg></figure>");
    out
}

/// A vertical grid line at `x` with its value under the axis.
fn x_tick(out: &mut String, x: f64, height: f64, value: f64) {
    let _ = write!(
        out,
        r#"<line x1="{x}" x2="{x}" y1="{TOP}" y2="{0}" class="grid"/><text x="{x}" y="{1}" class="tick">{2}</text>"#,
        height - BOTTOM,
        height - BOTTOM + 16.0,
        label(value)
    );
}

fn axes(out: &mut String, x_label: &str, y_label: &str, height: f64) {
    let _ = write!(
        out,
        r#"<line x1="{LEFT}" x2="{0}" y1="{1}" y2="{1}" class="axis"/><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{1}" class="axis"/><text x="{2}" y="{3}" class="label">{4}</text><text x="14" y="{5}" class="label" transform="rotate(-90 14 {5})">{6}</text>"#,
        W - RIGHT,
        height - BOTTOM,
        LEFT + (W - LEFT - RIGHT) / 2.0,
        height - 12.0,
        esc(x_label),
        TOP + (height - TOP - BOTTOM) / 2.0,
        esc(y_label)
    );
}

fn legend(out: &mut String, i: usize, name: &str) {
    let y = TOP + 14.0 * i as f64;
    let _ = write!(
        out,
        r#"<rect x="{0}" y="{1}" width="10" height="10" fill="{2}"/><text x="{3}" y="{4}" class="legend">{5}</text>"#,
        W - RIGHT + 10.0,
        y,
        colour(i),
        W - RIGHT + 24.0,
        y + 9.0,
        esc(name)
    );
}

/// One row of a bar chart: a label and a value for each series (None: not measured there).
pub struct BarRow {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// Horizontal bars, grouped by row, one colour a series; `reference` draws a labelled
/// vertical line (the baseline).
pub fn bar_chart(
    kind: &str,
    title: &str,
    value_label: &str,
    series: &[String],
    rows: &[BarRow],
    reference: Option<(f64, &str)>,
) -> String {
    let n = series.len().max(1);
    let bar_h = 10.0;
    let row_h = bar_h * n as f64 + 8.0;
    let left = 260.0;
    let height = TOP + BOTTOM + row_h * rows.len().max(1) as f64;
    let marks = rows.iter().flat_map(|r| r.values.iter().flatten()).count();
    let mut out = String::new();
    open(&mut out, kind, title, marks, height);
    let max = rows
        .iter()
        .flat_map(|r| r.values.iter().flatten())
        .copied()
        .chain(reference.map(|r| r.0))
        .fold(0.0f64, f64::max)
        .max(1e-12)
        * 1.05;
    let px = |v: f64| left + v / max * (W - left - RIGHT);
    let _ = write!(
        out,
        r#"<line x1="{left}" x2="{left}" y1="{TOP}" y2="{0}" class="axis"/><line x1="{left}" x2="{1}" y1="{0}" y2="{0}" class="axis"/><text x="{2}" y="{3}" class="label">{4}</text>"#,
        height - BOTTOM,
        W - RIGHT,
        left + (W - left - RIGHT) / 2.0,
        height - 12.0,
        esc(value_label)
    );
    for t in ticks(0.0, max) {
        x_tick(&mut out, px(t), height, t);
    }
    for (r, row) in rows.iter().enumerate() {
        let y = TOP + r as f64 * row_h + 4.0;
        let _ = write!(
            out,
            r#"<text x="{0}" y="{1}" class="tick ytick">{2}</text>"#,
            left - 6.0,
            y + row_h / 2.0,
            esc(&row.label)
        );
        for (s, v) in row.values.iter().enumerate() {
            let Some(v) = v else { continue };
            let _ = write!(
                out,
                r#"<rect class="bar" x="{left}" y="{:.1}" width="{:.1}" height="{bar_h}" fill="{}"><title>{}: {}</title></rect>"#,
                y + s as f64 * bar_h,
                (px(*v) - left).max(0.5),
                colour(s),
                esc(series.get(s).map_or("", |x| x.as_str())),
                label(*v)
            );
        }
    }
    if let Some((v, text)) = reference {
        let _ = write!(
            out,
            r#"<line x1="{0}" x2="{0}" y1="{1}" y2="{2}" class="reference"/><text x="{3}" y="{4}" class="reftext">{5}</text>"#,
            px(v),
            TOP,
            height - BOTTOM,
            px(v) + 4.0,
            height - BOTTOM - 4.0,
            esc(text)
        );
    }
    for (i, s) in series.iter().enumerate() {
        legend(&mut out, i, s);
    }
    out.push_str("</svg></figure>");
    out
}

/// One row of a forest plot: a change, its 95% interval (None: none), and how it is marked.
pub struct ForestRow {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    pub mark: Mark,
    /// The tooltip.
    pub title: String,
}

/// A forest plot: each row's change as a point and its interval as a line across it, on one
/// axis with a line at 0 (no change). The axis keeps to three times the largest change, so one
/// interval of thousands of percent does not squash the rest; a cut interval ends in an arrow.
pub fn forest(kind: &str, title: &str, value_label: &str, rows: &[ForestRow]) -> String {
    let row_h = 16.0;
    let left = 300.0;
    let height = TOP + BOTTOM + row_h * rows.len().max(1) as f64;
    let reach = rows.iter().map(|r| r.value.abs()).fold(1.0f64, f64::max) * 3.0;
    let ends: Vec<f64> = rows
        .iter()
        .flat_map(|r| {
            [
                r.value,
                r.interval.map_or(r.value, |i| i.0),
                r.interval.map_or(r.value, |i| i.1),
            ]
        })
        .chain([0.0])
        .map(|v| v.clamp(-reach, reach))
        .collect();
    let axis = Axis::over(&ends, (-reach, reach));
    let (x0, x1) = (left, W - RIGHT);
    let px = |v: f64| axis.at(v.clamp(axis.lo, axis.hi), x0, x1);
    let mut out = String::new();
    open(&mut out, kind, title, rows.len(), height);
    let _ = write!(
        out,
        r#"<line x1="{x0}" x2="{x1}" y1="{0}" y2="{0}" class="axis"/><text x="{1}" y="{2}" class="label">{3}</text><line x1="{4:.1}" x2="{4:.1}" y1="{TOP}" y2="{0}" class="reference"/>"#,
        height - BOTTOM,
        x0 + (x1 - x0) / 2.0,
        height - 12.0,
        esc(value_label),
        px(0.0)
    );
    for (t, text) in axis.ticks() {
        let _ = write!(
            out,
            r#"<line x1="{0:.1}" x2="{0:.1}" y1="{1}" y2="{2}" class="grid"/><text x="{0:.1}" y="{3}" class="tick">{4}</text>"#,
            px(t),
            TOP,
            height - BOTTOM,
            height - BOTTOM + 14.0,
            esc(&text)
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + i as f64 * row_h + row_h / 2.0;
        let colour = match r.mark {
            Mark::Worse => "#b00",
            Mark::Better => "#070",
            Mark::Within => "#666",
        };
        let _ = write!(
            out,
            r#"<text x="{0}" y="{1:.1}" class="tick ytick">{2}</text>"#,
            left - 6.0,
            y + 4.0,
            esc(&r.label)
        );
        if let Some((lo, hi)) = r.interval {
            let _ = write!(
                out,
                r#"<line x1="{0:.1}" x2="{1:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2"/>"#,
                px(lo),
                px(hi)
            );
            for (end, cut) in [(lo, lo < axis.lo), (hi, hi > axis.hi)] {
                if cut {
                    let x = px(end);
                    let d = if end < 0.0 { 6.0 } else { -6.0 };
                    let _ = write!(
                        out,
                        r#"<path d="M{x:.1} {y:.1} l{d} -4 v8 z" fill="{colour}"/>"#
                    );
                }
            }
        }
        let _ = write!(
            out,
            r#"<circle class="point {0}" cx="{1:.1}" cy="{y:.1}" r="4" fill="{colour}"><title>{2}</title></circle>"#,
            r.mark.class().trim_start_matches("point "),
            px(r.value),
            esc(&r.title)
        );
    }
    out.push_str("</svg></figure>");
    out
}

/// A bar on a timeline lane: what one CPU was doing over [start, end) (x units).
pub struct TimelineBar {
    pub lane: usize,
    pub start: f64,
    pub end: f64,
    /// Index into the legend (its colour).
    pub key: usize,
    /// Hover text.
    pub text: String,
}

/// A timeline: one lane per CPU (`lanes`), bars for what ran, vertical marks at instants
/// (`marks`: x and name), and a legend of the keys.
pub fn timeline(
    kind: &str,
    title: &str,
    x_label: &str,
    lanes: &[String],
    bars: &[TimelineBar],
    marks: &[(f64, String)],
    keys: &[String],
) -> String {
    let lane_h = 22.0;
    let left = 70.0;
    // Three rows for the marks' names above the lanes, so marks close together stay legible.
    let lanes_top = TOP + 40.0;
    let height = (lanes_top + BOTTOM + lane_h * lanes.len().max(1) as f64)
        .max(TOP + 14.0 * keys.len() as f64 + 10.0);
    let xs = bars
        .iter()
        .flat_map(|b| [b.start, b.end])
        .chain(marks.iter().map(|m| m.0));
    let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (lo, hi) = if lo < hi { (lo, hi) } else { (0.0, 1.0) };
    let px = |v: f64| left + (v - lo) / (hi - lo) * (W - left - RIGHT);
    let mut out = String::new();
    open(&mut out, kind, title, bars.len(), height);
    let bottom = height - BOTTOM;
    let _ = write!(
        out,
        r#"<line x1="{left}" x2="{0}" y1="{bottom}" y2="{bottom}" class="axis"/><text x="{1}" y="{2}" class="label">{3}</text>"#,
        W - RIGHT,
        left + (W - left - RIGHT) / 2.0,
        height - 12.0,
        esc(x_label)
    );
    for t in ticks(lo, hi) {
        x_tick(&mut out, px(t), height, t);
    }
    for (i, lane) in lanes.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{0}" y="{1}" class="tick ytick">{2}</text>"#,
            left - 6.0,
            lanes_top + i as f64 * lane_h + lane_h / 2.0 + 4.0,
            esc(lane)
        );
    }
    for b in bars {
        let _ = write!(
            out,
            r#"<rect class="bar" x="{:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{}"><title>{}</title></rect>"#,
            px(b.start),
            lanes_top + b.lane as f64 * lane_h + 2.0,
            (px(b.end) - px(b.start)).max(0.5),
            lane_h - 4.0,
            colour(b.key),
            esc(&b.text)
        );
    }
    for (i, (x, name)) in marks.iter().enumerate() {
        let row = TOP + 10.0 + 12.0 * (i % 3) as f64;
        let _ = write!(
            out,
            r#"<line x1="{0:.2}" x2="{0:.2}" y1="{1}" y2="{bottom}" class="reference"/><text x="{0:.2}" y="{2}" class="tick">{3}</text>"#,
            px(*x),
            row + 2.0,
            row,
            esc(name)
        );
    }
    for (i, k) in keys.iter().enumerate() {
        legend(&mut out, i, k);
    }
    out.push_str("</svg></figure>");
    out
}

/// How a strip plot's value axis runs: over the values it shows and no further than the
/// figure can go, linear, or logarithmic when every value is positive and the largest is
/// more than [`LOG_SPAN`] times the smallest (one far host would squash the rest into a dot).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

/// The span of values past which a strip plot's axis is logarithmic.
pub const LOG_SPAN: f64 = 20.0;

impl Axis {
    /// An axis over `values` (the hosts' figures and the range's ends), padded by a twentieth
    /// of their span on each side but never past `bounds` (a percentage stops at 0 and 100).
    pub fn over(values: &[f64], bounds: (f64, f64)) -> Axis {
        let (lo, hi) = values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        if lo > hi {
            return Axis {
                lo: bounds.0,
                hi: bounds.0 + 1.0,
                log: false,
            };
        }
        if lo > 0.0 && hi / lo > LOG_SPAN {
            return Axis {
                lo: lo / 1.15,
                hi: hi * 1.15,
                log: true,
            };
        }
        let pad = if hi > lo {
            (hi - lo) / 20.0
        } else {
            (hi.abs() / 20.0).max(0.5)
        };
        Axis {
            lo: (lo - pad).max(bounds.0),
            hi: (hi + pad).min(bounds.1),
            log: false,
        }
    }

    /// Where `v` lies between `x0` and `x1`.
    fn at(&self, v: f64, x0: f64, x1: f64) -> f64 {
        let f = |v: f64| if self.log { v.max(self.lo).log10() } else { v };
        x0 + (f(v) - f(self.lo)) / (f(self.hi) - f(self.lo)) * (x1 - x0)
    }

    /// Round values to mark, each with its label: 1, 2 and 5 times the powers of ten on a
    /// logarithmic axis; on a linear one, with as many decimals as the step between them needs
    /// (5.85 and 5.9, not 5.9 twice).
    fn ticks(&self) -> Vec<(f64, String)> {
        if !self.log {
            let t = ticks(self.lo, self.hi);
            let step = if t.len() > 1 { t[1] - t[0] } else { 1.0 };
            let decimals = (-step.log10()).ceil().clamp(0.0, 6.0) as usize;
            return t
                .into_iter()
                .map(|v| {
                    let text = if v.abs() >= 1e6 {
                        label(v)
                    } else {
                        format!("{v:.decimals$}")
                    };
                    (v, text)
                })
                .collect();
        }
        let mut out = Vec::new();
        for e in self.lo.log10().floor() as i32..=self.hi.log10().ceil() as i32 {
            for m in [1.0, 2.0, 5.0] {
                let t = m * 10f64.powi(e);
                if t >= self.lo && t <= self.hi {
                    out.push((t, label(t)));
                }
            }
        }
        out
    }

    pub fn is_log(&self) -> bool {
        self.log
    }
}

/// How a strip plot marks a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Within,
    Worse,
    Better,
}

impl Mark {
    fn class(self) -> &'static str {
        match self {
            Mark::Within => "point within",
            Mark::Worse => "point worse",
            Mark::Better => "point better",
        }
    }
}

/// One point of a strip plot: a host's figure, its tooltip, the id of the table row it links
/// to, and the name written beside it (None: none).
pub struct StripPoint {
    pub value: f64,
    pub title: String,
    pub row: String,
    pub mark: Mark,
    pub name: Option<String>,
}

const STRIP_W: f64 = 720.0;
const STRIP_H: f64 = 66.0;
const STRIP_X0: f64 = 12.0;
const STRIP_X1: f64 = STRIP_W - 12.0;
/// The points' band: each at its own height in it (a low-discrepancy sequence), so that a
/// thousand hosts of one value still show as a thousand points.
const STRIP_Y0: f64 = 8.0;
const STRIP_Y1: f64 = 40.0;
/// A name's line: its text (10 px) and a gap.
const NAME_LINE: f64 = 11.0;
/// The most names a strip plot writes beside its points.
const MAX_NAMES: usize = 12;

/// A compact strip plot: every point on one value axis, the shaded band `range` and a line at
/// `median`; each point a link to its table row (`#ROW`) carrying `data-h="ROW"`.
pub fn strip_plot(
    kind: &str,
    title: &str,
    axis: Axis,
    points: &[StripPoint],
    range: Option<(f64, f64)>,
    median: Option<f64>,
) -> String {
    let mut out = String::new();
    let x = |v: f64| axis.at(v, STRIP_X0, STRIP_X1);
    // Each name on a line of its own, NAME_LINE apart: with more names than the band holds, the
    // band (and the plot) grows, so names never write over each other.
    let named = points
        .iter()
        .filter(|p| p.name.is_some())
        .count()
        .min(MAX_NAMES);
    let y1 = STRIP_Y1.max(STRIP_Y0 + named as f64 * NAME_LINE);
    let height = STRIP_H + (y1 - STRIP_Y1);
    let _ = write!(
        out,
        r#"<svg class="plot strip" data-plot="{}" data-points="{}" viewBox="0 0 {STRIP_W} {height}" width="{STRIP_W}" height="{height}" role="img"><title>{}</title>"#,
        esc(kind),
        points.len(),
        esc(title)
    );
    if let Some((lo, hi)) = range {
        let (a, b) = (x(lo.max(axis.lo)), x(hi.min(axis.hi)));
        let _ = write!(
            out,
            r#"<rect class="range" x="{a:.1}" y="2" width="{:.1}" height="{}"/>"#,
            (b - a).max(1.0),
            y1 + 4.0
        );
    }
    let base = y1 + 8.0;
    let _ = write!(
        out,
        r#"<line x1="{STRIP_X0}" x2="{STRIP_X1}" y1="{base}" y2="{base}" class="axis"/>"#
    );
    for (t, text) in axis.ticks() {
        let _ = write!(
            out,
            r#"<line x1="{0:.1}" x2="{0:.1}" y1="{base}" y2="{1}" class="axis"/><text x="{0:.1}" y="{2}" class="tick">{3}</text>"#,
            x(t),
            base + 3.0,
            base + 15.0,
            text
        );
    }
    if let Some(m) = median {
        let _ = write!(
            out,
            r#"<line x1="{0:.1}" x2="{0:.1}" y1="2" y2="{1}" class="median"/>"#,
            x(m),
            y1 + 6.0
        );
    }
    // Within-range points first, so that those outside are drawn over them. A name is written
    // on a line of its own (the names' lines, top to bottom, in the points' order), so that
    // hosts of one value do not write over each other.
    let mut order: Vec<&StripPoint> = points.iter().collect();
    order.sort_by_key(|p| p.mark != Mark::Within);
    let mut line = 0;
    for (i, p) in order.iter().enumerate() {
        let y = STRIP_Y0 + ((i as f64 * 0.618_034) % 1.0) * (y1 - STRIP_Y0);
        let cx = x(p.value);
        let _ = write!(
            out,
            r##"<a href="#{0}" data-h="{0}"><circle class="{1}" cx="{cx:.1}" cy="{y:.1}" r="3"><title>{2}</title></circle>"##,
            esc(&p.row),
            p.mark.class(),
            esc(&p.title)
        );
        // Past MAX_NAMES, a point is named by its tooltip and its table row only.
        if let Some(name) = p.name.as_ref().filter(|_| line < MAX_NAMES) {
            let (tx, anchor) = if cx > STRIP_W - 160.0 {
                (cx - 5.0, "end")
            } else {
                (cx + 5.0, "start")
            };
            let ty = STRIP_Y0 + 3.5 + line as f64 * NAME_LINE;
            line += 1;
            let _ = write!(
                out,
                r#"<text class="name" x="{tx:.1}" y="{ty:.1}" text-anchor="{anchor}">{}</text>"#,
                esc(name)
            );
        }
        out.push_str("</a>");
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_a_strip_plot_never_share_a_line_and_the_plot_grows_for_them() {
        let axis = Axis::over(&[0.0, 100.0], (0.0, f64::INFINITY));
        let points: Vec<StripPoint> = (0..20)
            .map(|i| StripPoint {
                value: 10.0,
                title: format!("h{i}"),
                row: format!("r{i}"),
                mark: Mark::Worse,
                name: Some(format!("host-{i}")),
            })
            .collect();
        let svg = strip_plot("k", "t", axis, &points, None, None);
        let ys: Vec<f64> = svg
            .split(r#"class="name" "#)
            .skip(1)
            .map(|t| {
                let y = t.split("y=\"").nth(1).unwrap();
                y[..y.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(ys.len(), MAX_NAMES);
        assert!(
            ys.windows(2).all(|w| w[1] - w[0] >= NAME_LINE - 1e-9),
            "{ys:?}"
        );
        let height: f64 = {
            let h = svg.split(r#" height=""#).nth(1).unwrap();
            h[..h.find('"').unwrap()].parse().unwrap()
        };
        assert!(height >= ys.last().unwrap() + 20.0, "{height} {ys:?}");
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(0.0, 0.37);
        assert!(t.len() >= 3 && *t.last().unwrap() <= 0.37 + 1e-9, "{t:?}");
    }

    #[test]
    fn plots_count_their_marks_and_escape_text() {
        let s = line_chart(
            "k",
            "a < b",
            "x",
            "y",
            &[Series {
                name: "s".into(),
                points: vec![(1.0, 2.0), (2.0, 3.0)],
            }],
            XScale::Log2,
        );
        assert!(s.contains(r#"data-points="2""#));
        assert_eq!(s.matches(r#"class="point""#).count(), 2);
        assert!(s.contains("a &lt; b"));
        let b = bar_chart(
            "b",
            "t",
            "v",
            &["A".into(), "B".into()],
            &[BarRow {
                label: "r".into(),
                values: vec![Some(1.0), None],
            }],
            Some((10.0, "baseline")),
        );
        assert_eq!(b.matches(r#"class="bar""#).count(), 1);
        assert!(b.contains("baseline"));
    }

    #[test]
    fn a_strip_axis_keeps_to_the_figure_and_goes_logarithmic_for_a_far_host() {
        // A percentage: padded, but never past 100 or below 0.
        let a = Axis::over(&[99.5, 100.0, 96.0], (0.0, 100.0));
        assert!(a.hi <= 100.0 && a.lo >= 0.0 && a.lo < 96.0, "{a:?}");
        // Not from zero: hosts around 1,000 get an axis around 1,000.
        let a = Axis::over(&[990.0, 1000.0, 1010.0], (0.0, f64::INFINITY));
        assert!(a.lo > 900.0 && a.hi < 1100.0 && !a.is_log(), "{a:?}");
        // One host a hundred times the others: a logarithmic axis with 1-2-5 ticks.
        let a = Axis::over(&[1.0, 1.1, 100.0], (0.0, f64::INFINITY));
        assert!(a.is_log());
        let t: Vec<f64> = a.ticks().into_iter().map(|t| t.0).collect();
        assert!(
            t.contains(&1.0) && t.contains(&10.0) && t.contains(&50.0),
            "{t:?}"
        );
        assert!(a.at(10.0, 0.0, 2.0) > 0.9 && a.at(10.0, 0.0, 2.0) < 1.1);
        // Ticks close together keep the decimals that tell them apart.
        let a = Axis::over(&[5.86, 5.88, 5.9], (0.0, f64::INFINITY));
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(labels, unique, "{labels:?}");
        // One value alone still spans something.
        let a = Axis::over(&[5.0], (0.0, f64::INFINITY));
        assert!(a.lo < 5.0 && a.hi > 5.0);
    }

    #[test]
    fn a_strip_plot_links_every_point_to_its_row_and_names_only_those_asked() {
        let axis = Axis::over(&[1.0, 2.0, 9.0], (0.0, f64::INFINITY));
        let p = |v: f64, row: &str, mark: Mark, named: bool| StripPoint {
            value: v,
            title: format!("{row}: {v}"),
            row: row.into(),
            mark,
            name: named.then(|| row.to_string()),
        };
        let s = strip_plot(
            "fleet-strip",
            "t",
            axis,
            &[
                p(1.0, "h-0", Mark::Within, false),
                p(2.0, "h-1", Mark::Within, false),
                p(9.0, "h-<2>", Mark::Worse, true),
            ],
            Some((0.5, 3.0)),
            Some(1.5),
        );
        assert!(s.contains(r#"data-points="3""#));
        assert_eq!(s.matches(r#"<circle class="point"#).count(), 3);
        assert_eq!(s.matches(r#"class="point worse""#).count(), 1);
        assert!(s.contains(r##"href="#h-0""##) && s.contains(r#"data-h="h-&lt;2&gt;""#));
        assert_eq!(s.matches(r#"class="name""#).count(), 1);
        assert!(s.contains(">h-&lt;2&gt;</text>"));
        assert!(s.contains(r#"class="range""#) && s.contains(r#"class="median""#));
    }

    #[test]
    fn markup_in_text_stays_text() {
        assert_eq!(
            esc(r#"<b a="1">x & y</b>"#),
            "&lt;b a=&quot;1&quot;&gt;x &amp; y&lt;/b&gt;"
        );
    }
}
