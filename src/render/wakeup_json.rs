//! schbench's `-j FILE` output (`hostbench wakeup -j FILE [-J NAME]`): one JSON object with
//! the run's kernel, job name, host, sched_ext state and command line under "normal", and
//! under "int" the time, each table's 20th to 99.9th percentiles with its min and max, and the
//! runtime, with schbench's keys and in its order. Beside hostbench's own `--json`, which
//! prints the whole result.

use std::fmt::Write;

use crate::model::wakeup::{Table, WakeupResult};
use crate::text::Text;

/// The percentiles schbench writes for every table in its JSON.
const PCTS: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];

/// What the file says beside the tables: the run's own facts.
#[derive(Debug, Clone)]
pub struct Header<'a> {
    /// The kernel release (schbench's "version").
    pub kernel: &'a Text,
    pub jobname: Option<&'a Text>,
    pub hostname: &'a Text,
    /// The running sched_ext scheduler's name, or "disabled".
    pub sched_ext: &'a Text,
    pub command_line: &'a [Text],
    /// When the run ended, in seconds since the epoch.
    pub time: i64,
}

/// The JSON text of `r` as schbench's `-j` writes it.
pub fn render(h: &Header, r: &WakeupResult) -> String {
    let mut out = String::from("{\"normal\": {");
    let _ = write!(out, "\"version\": {},", quoted(h.kernel));
    if let Some(name) = h.jobname {
        let _ = write!(out, "\"jobname\": {},", quoted(name));
    }
    let _ = write!(out, "\"hostname\": {},", quoted(h.hostname));
    let _ = write!(out, "\"sched_ext\": {},", quoted(h.sched_ext));
    let cmdline = Text::new(
        h.command_line
            .iter()
            .map(Text::raw)
            .collect::<Vec<_>>()
            .join(" "),
    );
    let _ = write!(out, "\"cmdline\": {}}},", quoted(&cmdline));
    let _ = write!(out, "\"int\": {{\"time\": {}, ", h.time);
    stats(&mut out, &r.wakeup, "wakeup_latency");
    // schbench's pipe mode has no request or rate tables.
    for (t, label) in [(&r.request, "request_latency"), (&r.rps, "rps")] {
        if let Some(t) = t {
            out.push_str(", ");
            stats(&mut out, t, label);
        }
    }
    let _ = write!(out, ", \"runtime\": {}}}}}", r.settings.runtime_s);
    out
}

/// A JSON string: escaped as JSON requires (every control character, quote and backslash).
fn quoted(t: &Text) -> String {
    serde_json::to_string(t).expect("a string serializes")
}

/// One table's keys: `LABEL_pct20.0` … `LABEL_pct99.9`, `LABEL_min`, `LABEL_max`.
fn stats(out: &mut String, t: &Table, label: &str) {
    for (i, (pct, value)) in percentiles(t).iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "\"{label}_pct{pct:.1}\": {value}");
    }
    let _ = write!(out, ", \"{label}_min\": {},", t.min);
    let _ = write!(out, "\"{label}_max\": {}", t.max);
}

/// The table's values at [`PCTS`] from its histogram, by schbench's rule: walking the buckets,
/// the first at which the running count reaches pct% of the samples; with none, 0.
fn percentiles(t: &Table) -> Vec<(f64, u32)> {
    PCTS.iter()
        .map(|&pct| {
            let goal = pct / 100.0 * t.samples as f64;
            let mut running = 0u64;
            let at = t.buckets.iter().find(|&&(_, count)| {
                running += count;
                running as f64 >= goal
            });
            (pct, at.map_or(0, |&(value, _)| value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::wakeup::Row;

    fn table(buckets: Vec<(u32, u64)>) -> Table {
        let samples = buckets.iter().map(|b| b.1).sum();
        Table {
            samples,
            rows: vec![Row {
                pct: 50.0,
                value: 0,
                samples: 0,
            }],
            min: buckets.first().map_or(0, |b| b.0),
            max: buckets.last().map_or(0, |b| b.0),
            buckets,
        }
    }

    #[test]
    fn percentiles_follow_the_running_count() {
        // 100 samples, one a value 1..=100: the pct-th value, and 99.9% at the 100th.
        let t = table((1..=100).map(|v| (v, 1)).collect());
        let got: Vec<u32> = percentiles(&t).iter().map(|p| p.1).collect();
        assert_eq!(got, [20, 50, 90, 99, 100]);
        assert!(percentiles(&table(vec![])).iter().all(|p| p.1 == 0));
    }

    #[test]
    fn the_file_has_schbenchs_keys_in_its_order_and_is_json() {
        let mut r = crate::model::wakeup::tests::result(0);
        r.wakeup = table(vec![(5, 10), (9, 10)]);
        r.request = Some(table(vec![(100, 4)]));
        r.rps = Some(table(vec![(300, 2)]));
        let kernel = Text::new("6.18.0");
        let host = Text::new("h\"1\n");
        let name = Text::new("job one");
        let ext = Text::new("disabled");
        let cmd = [Text::new("hostbench"), Text::new("wakeup")];
        let h = Header {
            kernel: &kernel,
            jobname: Some(&name),
            hostname: &host,
            sched_ext: &ext,
            command_line: &cmd,
            time: 1_700_000_000,
        };
        let text = render(&h, &r);
        assert!(
            text.starts_with("{\"normal\": {\"version\": \"6.18.0\",\"jobname\": \"job one\","),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).expect(&text);
        assert_eq!(v["normal"]["hostname"], "h\"1\n");
        assert_eq!(v["normal"]["cmdline"], "hostbench wakeup");
        let int = &v["int"];
        assert_eq!(int["time"], 1_700_000_000);
        assert_eq!(int["wakeup_latency_pct20.0"], 5);
        assert_eq!(int["wakeup_latency_pct90.0"], 9);
        assert_eq!(int["wakeup_latency_min"], 5);
        assert_eq!(int["request_latency_pct99.9"], 100);
        assert_eq!(int["rps_max"], 300);
        assert_eq!(int["runtime"], r.settings.runtime_s);
        let order = [
            "\"time\"",
            "wakeup_latency_pct20.0",
            "wakeup_latency_max",
            "request_latency_pct20.0",
            "rps_pct20.0",
            "\"runtime\"",
        ];
        let at: Vec<usize> = order.iter().map(|k| text.find(k).expect(k)).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
        // Pipe mode: the wakeup table alone; no job name, no key.
        r.request = None;
        r.rps = None;
        let h = Header { jobname: None, ..h };
        let text = render(&h, &r);
        assert!(
            !text.contains("request_latency") && !text.contains("jobname"),
            "{text}"
        );
        assert!(
            serde_json::from_str::<serde_json::Value>(&text).is_ok(),
            "{text}"
        );
    }
}
