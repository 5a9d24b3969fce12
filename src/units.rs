//! Units: the conversions between the nanoseconds hostbench measures in and the µs, ms and s
//! its reports show, and quantities said the way a person reads them. Used by every layer
//! (a refusal names a size too), so it depends on nothing.

pub const NS_PER_US: f64 = 1e3;
pub const NS_PER_MS: f64 = 1e6;
pub const NS_PER_S: f64 = 1e9;

/// Nanoseconds as microseconds.
pub fn us(ns: f64) -> f64 {
    ns / NS_PER_US
}

/// Nanoseconds as milliseconds.
pub fn ms(ns: f64) -> f64 {
    ns / NS_PER_MS
}

/// Nanoseconds as milliseconds to three places, with the unit: "2.500 ms".
pub fn ms_text(ns: f64) -> String {
    format!("{:.3} ms", ms(ns))
}

/// Nanoseconds as seconds.
pub fn secs(ns: f64) -> f64 {
    ns / NS_PER_S
}

/// Bytes in the largest binary unit that keeps the figure at 1 or more: "512 B", "4.0 KiB",
/// "95.4 MiB", "1.5 GiB" (never "0.0 GiB" for a small size).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_convert_to_each_unit() {
        assert_eq!(us(1_500.0), 1.5);
        assert_eq!(ms(2_500_000.0), 2.5);
        assert_eq!(secs(3e9), 3.0);
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1000), "1000 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(100 << 20), "100.0 MiB");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
        assert_eq!(bytes(5 << 40), "5.0 TiB");
    }
}
