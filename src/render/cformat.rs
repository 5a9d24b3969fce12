//! C's `%.Ng` number format, which interbench's tables use: N significant digits, trailing
//! zeros removed, exponent notation for very small or large values.

/// Formats like C's `printf("%.{precision}g", x)`.
pub fn g(x: f64, precision: usize) -> String {
    let p = precision.max(1);
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return format!("{x}");
    }
    // The exponent after rounding to p significant digits decides the style.
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let m = trim_zeros(mantissa);
        format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_printf() {
        // Values from interbench's sample output and C's printf("%.3g").
        assert_eq!(g(0.495, 3), "0.495");
        assert_eq!(g(11.7, 3), "11.7");
        assert_eq!(g(0.0267, 3), "0.0267");
        assert_eq!(g(96.0, 3), "96");
        assert_eq!(g(62.7, 3), "62.7");
        assert_eq!(g(99.95, 3), "100");
        assert_eq!(g(100.0, 3), "100");
        assert_eq!(g(1815.0, 3), "1.82e+03");
        assert_eq!(g(0.000012, 3), "1.2e-05");
        assert_eq!(g(0.0001234, 3), "0.000123");
        assert_eq!(g(0.0, 3), "0");
        assert_eq!(g(-2.5, 3), "-2.5");
        assert_eq!(g(4.0, 3), "4");
    }
}
