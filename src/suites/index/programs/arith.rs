//! UnixBench's arith.c and hanoi.c, written in Rust: the arithmetic loop sums i²/(i²−1) for i
//! in 2..=101 in a given type (arithoh: the bare loop); the recursion test moves 10 discs of the
//! Tower of Hanoi. Each counts complete loops.

use std::hint::black_box;

use crate::suites::index::registry::ArithKind;

macro_rules! dumb_stuff {
    ($name:ident, $t:ty) => {
        #[inline(never)]
        fn $name(seed: i64) -> i64 {
            let mut x: $t = 0 as $t;
            let mut y: $t = 0 as $t;
            let mut z: $t = 0 as $t;
            for i in 2..=101i64 {
                x = black_box(i) as $t;
                y = x.wrapping_mul_compat(x);
                z = z.wrapping_add_compat(y.div_compat(y.wrapping_sub_compat(1 as $t)));
            }
            black_box(seed);
            (x.wrapping_add_compat(y).wrapping_add_compat(z)) as i64
        }
    };
}

/// Arithmetic that wraps for integers (as C's does in practice) and is plain for floats.
trait Compat: Copy {
    fn wrapping_mul_compat(self, o: Self) -> Self;
    fn wrapping_add_compat(self, o: Self) -> Self;
    fn wrapping_sub_compat(self, o: Self) -> Self;
    fn div_compat(self, o: Self) -> Self;
}

macro_rules! compat_int {
    ($t:ty) => {
        impl Compat for $t {
            fn wrapping_mul_compat(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn wrapping_add_compat(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn wrapping_sub_compat(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn div_compat(self, o: Self) -> Self {
                if o == 0 {
                    0
                } else {
                    self.wrapping_div(o)
                }
            }
        }
    };
}
macro_rules! compat_float {
    ($t:ty) => {
        impl Compat for $t {
            fn wrapping_mul_compat(self, o: Self) -> Self {
                self * o
            }
            fn wrapping_add_compat(self, o: Self) -> Self {
                self + o
            }
            fn wrapping_sub_compat(self, o: Self) -> Self {
                self - o
            }
            fn div_compat(self, o: Self) -> Self {
                self / o
            }
        }
    };
}
compat_int!(i16);
compat_int!(i32);
compat_int!(i64);
compat_float!(f32);
compat_float!(f64);

dumb_stuff!(dumb_short, i16);
dumb_stuff!(dumb_int, i32);
dumb_stuff!(dumb_long, i64);
dumb_stuff!(dumb_float, f32);
dumb_stuff!(dumb_double, f64);

#[inline(never)]
fn dumb_overhead(seed: i64) -> i64 {
    for i in 2..=101i64 {
        black_box(i);
    }
    black_box(seed)
}

/// Runs `n` arithmetic loops of `kind`, returning the last result (so the work is used).
pub fn arith(kind: ArithKind, n: u64, mut result: i64) -> i64 {
    let f = match kind {
        ArithKind::Overhead => dumb_overhead,
        ArithKind::Short => dumb_short,
        ArithKind::Int => dumb_int,
        ArithKind::Long => dumb_long,
        ArithKind::Float => dumb_float,
        ArithKind::Double => dumb_double,
    };
    for _ in 0..n {
        result = f(result);
    }
    result
}

/// The Tower of Hanoi with `discs` discs, once; returns the moves made (2^discs − 1).
pub fn hanoi(discs: u32) -> u64 {
    fn mov(n: u32, from: usize, to: usize, pegs: &mut [i64; 4], moves: &mut u64) {
        if n == 1 {
            pegs[from] -= 1;
            pegs[to] += 1;
            *moves += 1;
            return;
        }
        let other = 6 - (from + to);
        mov(n - 1, from, other, pegs, moves);
        mov(1, from, to, pegs, moves);
        mov(n - 1, other, to, pegs, moves);
    }
    let mut pegs = [0i64, black_box(discs as i64), 0, 0];
    let mut moves = 0;
    mov(black_box(discs), 1, 3, &mut pegs, &mut moves);
    debug_assert_eq!(pegs[3], discs as i64);
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_results() {
        // sum over i=2..101 of i*i/(i*i-1) in integers is 100 (each term is 1); x = 101,
        // y = 10201: 101 + 10201 + 100.
        assert_eq!(arith(ArithKind::Long, 1, 0), 10_402);
        assert_eq!(arith(ArithKind::Int, 3, 0), 10_402);
        // In floating point each term is a little above 1.
        assert!(arith(ArithKind::Double, 1, 0) >= 10_402);
        assert_eq!(arith(ArithKind::Overhead, 2, 7), 7);
    }

    #[test]
    fn hanoi_moves() {
        assert_eq!(hanoi(10), 1023);
        assert_eq!(hanoi(1), 1);
    }
}
