//! The double-precision Whetstone benchmark (Curnow and Wichmann; Roy Longbottom's self-timing
//! C version that UnixBench runs), written in Rust, rated in MWIPS. The port gives the optimiser
//! what whets.c gives a C compiler, no more and no less, so that the two scores compare.

/// Seconds on the wall clock (whets.c's `-DGTODay` timer, `gettimeofday`; here the monotonic
/// clock, which measures the same elapsed time without steps).
fn wall_seconds() -> f64 {
    crate::platform::clock::monotonic_ns() as f64 / 1e9
}

/// What one measured run gave.
pub struct WhetstoneRun {
    pub mwips: f64,
    pub seconds: f64,
    pub check: f64,
}

/// Runs every section `xtra` times with inner loops of `x100` × the section constants, and
/// gives the time counted and the check sum. Each section is a function of its own, inlined
/// here, so the compiler still sees one body as in UnixBench's whetstone.c: sections held out
/// of line would change what it makes of them, and so the score.
#[inline(never)]
fn whetstones(xtra: u64, x100: u64) -> (f64, f64) {
    let t0 = 0.499_999_75f64;
    let t1 = 0.500_000_25f64;
    let t2 = 2.0f64;
    let mut e1 = [1.0f64, -1.0, -1.0, -1.0];
    let sections = [
        array_elements(&mut e1, xtra, 12 * x100, t0),
        array_as_parameter(&mut e1, xtra, 14 * x100, t0, t2),
        conditional_jumps(xtra, 345 * x100),
        integer_arithmetic(&mut e1, xtra, 210 * x100),
        trigonometric_functions(xtra, 32 * x100, t0, t2),
        procedure_calls(xtra, 899 * x100, t0, t1, t2),
        array_references(&mut e1, xtra, 616 * x100),
        standard_functions(xtra, 93 * x100, t1),
    ];
    let mut time_used = 0.0;
    let mut check = 0.0;
    for (seconds, part) in sections {
        time_used += seconds;
        check += part;
    }
    (time_used, check)
}

/// Section 1: array elements, run ten times over, a tenth of its time counted.
#[inline(always)]
fn array_elements(e1: &mut [f64; 4], xtra: u64, n1: u64, t0: f64) -> (f64, f64) {
    let n1mult = 10;
    let mut t = t0;
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 0..n1 * n1mult {
            e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
            e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
            e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
            e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
        }
        t = 1.0 - t;
    }
    ((wall_seconds() - start) / n1mult as f64, e1[3])
}

/// Section 2: array as parameter.
#[inline(always)]
fn array_as_parameter(e1: &mut [f64; 4], xtra: u64, n2: u64, t0: f64, t2: f64) -> (f64, f64) {
    let mut t = t0;
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 0..n2 {
            pa(e1, t, t2);
        }
        t = 1.0 - t;
    }
    (wall_seconds() - start, e1[3])
}

/// Section 3: conditional jumps.
#[inline(always)]
fn conditional_jumps(xtra: u64, n3: u64) -> (f64, f64) {
    let mut j: i64 = 1;
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 0..n3 {
            j = if j == 1 { 2 } else { 3 };
            j = if j > 2 { 0 } else { 1 };
            j = if j < 1 { 1 } else { 0 };
        }
    }
    (wall_seconds() - start, j as f64)
}

/// Section 4: integer arithmetic.
#[inline(always)]
fn integer_arithmetic(e1: &mut [f64; 4], xtra: u64, n4: u64) -> (f64, f64) {
    let (mut j, mut k, mut l): (i64, i64, i64) = (1, 2, 3);
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 0..n4 {
            j = j * (k - j) * (l - k);
            k = l * k - (l - j) * k;
            l = (l - k) * (k + j);
            e1[(l - 2) as usize] = (j + k + l) as f64;
            e1[(k - 2) as usize] = (j * k * l) as f64;
        }
    }
    (wall_seconds() - start, e1[0] + e1[1])
}

/// Section 5: trigonometric functions.
#[inline(always)]
fn trigonometric_functions(xtra: u64, n5: u64, t0: f64, t2: f64) -> (f64, f64) {
    let mut t = t0;
    let (mut x, mut y) = (0.5f64, 0.5f64);
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 1..n5 {
            x = t * (t2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
            y = t * (t2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        }
        t = 1.0 - t;
    }
    (wall_seconds() - start, y)
}

/// Section 6: procedure calls.
#[inline(always)]
fn procedure_calls(xtra: u64, n6: u64, t: f64, t1: f64, t2: f64) -> (f64, f64) {
    let (mut x, mut y, mut z) = (1.0f64, 1.0f64, 1.0f64);
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 0..n6 {
            p3(&mut x, &mut y, &mut z, t, t1, t2);
        }
    }
    (wall_seconds() - start, z)
}

/// Section 7: array references.
#[inline(always)]
fn array_references(e1: &mut [f64; 4], xtra: u64, n7: u64) -> (f64, f64) {
    let (j, k, l) = (0usize, 1usize, 2usize);
    e1[0] = 1.0;
    e1[1] = 2.0;
    e1[2] = 3.0;
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 0..n7 {
            po(e1, j, k, l);
        }
    }
    (wall_seconds() - start, e1[2])
}

/// Section 8: standard functions.
#[inline(always)]
fn standard_functions(xtra: u64, n8: u64, t1: f64) -> (f64, f64) {
    let mut x = 0.75f64;
    let start = wall_seconds();
    for _ in 0..xtra {
        for _ in 0..n8 {
            x = ((x.ln()) / t1).exp().sqrt();
        }
    }
    (wall_seconds() - start, x)
}

fn pa(e: &mut [f64; 4], t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

fn po(e1: &mut [f64; 4], j: usize, k: usize, l: usize) {
    e1[j] = e1[k];
    e1[k] = e1[l];
    e1[l] = e1[j];
}

fn p3(x: &mut f64, y: &mut f64, z: &mut f64, t: f64, t1: f64, t2: f64) {
    *x = *y;
    *y = *z;
    *x = t * (*x + *y);
    *y = t1 * (*x + *y);
    *z = (*x + *y) / t2;
}

/// Calibrates as whets.c does under UnixBench (passes ×5 until a run takes over 0.5 s, or at
/// most ten tries), scales to `duration_s`, runs, and rates the run.
///
/// Its eight sections keep their loop constants and are timed by the wall clock (UnixBench
/// builds whets.c with `-DGTODay`); MWIPS = passes × 100 / (10 × seconds), the first section
/// counting a tenth of its time as the original does, and the sum of the sections' check values
/// must come out non-zero. The same constants, procedures the optimiser may inline, no barriers
/// inside the loops: sections 4 and 7 reach a fixed point on their first pass, and GCC at
/// UnixBench's flags hoists them out of their loops, as LLVM does here; stopping that in one
/// language only would make the two scores incomparable. Nothing can fold the whole run: the
/// pass count is known only at run time and every section's result feeds the check value.
pub fn run(duration_s: f64) -> WhetstoneRun {
    let x100 = 100;
    let mut xtra = 1u64;
    let mut time_used = 0.0;
    for _ in 0..10 {
        time_used = whetstones(xtra, x100).0;
        if time_used > 0.5 {
            break;
        }
        xtra *= 5;
    }
    if time_used > 0.0 {
        xtra = ((duration_s * xtra as f64) / time_used) as u64;
    }
    let xtra = xtra.max(1);
    let (seconds, check) = whetstones(xtra, x100);
    WhetstoneRun {
        mwips: if seconds > 0.0 {
            xtra as f64 * x100 as f64 / (10.0 * seconds)
        } else {
            0.0
        },
        seconds,
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_give_the_published_check_values() {
        // One pass; whets.c's table lists N3 = 1, N4 = 12, N7 = 3 for every precision, and the
        // sum is non-zero.
        let (_, check) = whetstones(1, 100);
        assert!(check.is_finite() && check != 0.0);
        let r = run(0.2);
        assert!(
            r.mwips > 0.0 && r.seconds > 0.0,
            "{} MWIPS in {} s",
            r.mwips,
            r.seconds
        );
    }
}
