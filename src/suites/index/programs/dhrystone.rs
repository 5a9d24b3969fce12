//! Dhrystone 2.1 (Reinhold Weicker, 1988), the procedure and function structure of the
//! original with its record, globals, strings and arrays, written in Rust for hostbench. The
//! procedures the original keeps in its second file (Proc_6..8, Func_1..3) are never inlined
//! into the main loop, as separate compilation keeps them apart there (among themselves they
//! may be, as in C); the strings are compared by the C library's `strcmp`, as C's are; the
//! loop's inputs pass through `black_box`, so the optimiser cannot fold the work away. [`Dhrystone::check`] compares the
//! final values with those the Dhrystone report says a correct run must print.

use std::hint::black_box;

/// Dhrystone's enumeration. Ident_5 is never produced by the program, in the original as here,
/// but Proc_6's switch handles it.
#[allow(dead_code)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ident {
    I1,
    I2,
    I3,
    I4,
    I5,
}

type Str30 = [u8; 31];

/// A string constant as Dhrystone's `strcpy` leaves it: the characters, then NULs.
const fn s30(s: &str) -> Str30 {
    let b = s.as_bytes();
    assert!(b.len() < 31);
    let mut a = [0u8; 31];
    let mut i = 0;
    while i < b.len() {
        a[i] = b[i];
        i += 1;
    }
    a
}

const SOME_STRING: Str30 = s30("DHRYSTONE PROGRAM, SOME STRING");
const STRING_1: Str30 = s30("DHRYSTONE PROGRAM, 1'ST STRING");
const STRING_2: Str30 = s30("DHRYSTONE PROGRAM, 2'ND STRING");
const STRING_3: Str30 = s30("DHRYSTONE PROGRAM, 3'RD STRING");

/// Dhrystone's `strcmp`, the C library's own, as the C version calls it: Dhrystone counts the
/// library's string routines as part of the work (its report says so), so the port calls the
/// same routine rather than a Rust loop of different speed.
fn strcmp(a: &Str30, b: &Str30) -> std::cmp::Ordering {
    // SAFETY: both arrays hold a NUL (s30 leaves at least the last byte NUL, and nothing
    // writes the strings but whole constants), so strcmp stays inside them.
    unsafe { libc::strcmp(a.as_ptr().cast(), b.as_ptr().cast()) }.cmp(&0)
}

#[derive(Debug, Clone, Copy)]
struct Record {
    /// Index of the record this one points to (0: Ptr_Glob's, 1: Next_Ptr_Glob's).
    ptr_comp: usize,
    discr: Ident,
    enum_comp: Ident,
    int_comp: i32,
    str_comp: Str30,
}

/// Dhrystone's globals (C `int`s are `i32` here, as in the original).
struct Globals {
    rec: [Record; 2],
    int_glob: i32,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: [i32; 50],
    arr_2_glob: Box<[[i32; 50]; 50]>,
}

pub struct Dhrystone {
    g: Globals,
    // The locals of main that the report prints.
    int_1_loc: i32,
    int_2_loc: i32,
    int_3_loc: i32,
    enum_loc: Ident,
    str_1_loc: Str30,
    str_2_loc: Str30,
    runs: u64,
}

const PTR_GLOB: usize = 0;
const NEXT_PTR_GLOB: usize = 1;

impl Default for Dhrystone {
    fn default() -> Self {
        Self::new()
    }
}

impl Dhrystone {
    pub fn new() -> Self {
        let glob = Record {
            ptr_comp: NEXT_PTR_GLOB,
            discr: Ident::I1,
            enum_comp: Ident::I3,
            int_comp: 40,
            str_comp: SOME_STRING,
        };
        let mut arr_2_glob = Box::new([[0i32; 50]; 50]);
        arr_2_glob[8][7] = 10;
        Dhrystone {
            g: Globals {
                rec: [glob, glob],
                int_glob: 0,
                bool_glob: false,
                ch_1_glob: 0,
                ch_2_glob: 0,
                arr_1_glob: [0; 50],
                arr_2_glob,
            },
            int_1_loc: 0,
            int_2_loc: 0,
            int_3_loc: 0,
            enum_loc: Ident::I1,
            str_1_loc: STRING_1,
            str_2_loc: [0; 31],
            runs: 0,
        }
    }

    /// Runs `n` Dhrystone loops.
    pub fn run(&mut self, n: u64) {
        let g = &mut self.g;
        // main's locals, in registers or on the stack as the compiler sees fit.
        let str_1 = self.str_1_loc;
        let mut str_2 = self.str_2_loc;
        let (mut int_1, mut int_2, mut int_3) = (0i32, 0i32, 0i32);
        let mut enum_loc = Ident::I1;
        for _ in 0..n {
            self.runs += 1;
            let run_index = black_box(self.runs) as i32;
            g.proc_5();
            g.proc_4();
            int_1 = 2;
            int_2 = 3;
            str_2 = STRING_2;
            enum_loc = Ident::I2;
            g.bool_glob = !func_2(g, black_box(&str_1), black_box(&str_2));
            while int_1 < int_2 {
                int_3 = 5 * int_1 - int_2;
                proc_7(int_1, int_2, &mut int_3);
                int_1 += 1;
            }
            proc_8(
                &mut g.arr_1_glob,
                &mut g.arr_2_glob,
                int_1,
                int_3,
                &mut g.int_glob,
            );
            g.proc_1(PTR_GLOB);
            let mut ch = b'A';
            while ch <= g.ch_2_glob {
                if enum_loc == func_1(g, ch, b'C') {
                    proc_6(Ident::I1, &mut enum_loc, g.int_glob);
                    str_2 = STRING_3;
                    int_2 = run_index;
                    g.int_glob = run_index;
                }
                ch += 1;
            }
            int_2 *= int_1;
            int_1 = int_2 / int_3;
            int_2 = 7 * (int_2 - int_3) - int_1;
            g.proc_2(&mut int_1);
        }
        self.int_1_loc = int_1;
        self.int_2_loc = int_2;
        self.int_3_loc = int_3;
        self.enum_loc = enum_loc;
        self.str_2_loc = str_2;
    }
}

impl Globals {
    fn proc_1(&mut self, ptr_val_par: usize) {
        let next = self.rec[ptr_val_par].ptr_comp;
        self.rec[next] = self.rec[PTR_GLOB];
        self.rec[ptr_val_par].int_comp = 5;
        self.rec[next].int_comp = self.rec[ptr_val_par].int_comp;
        self.rec[next].ptr_comp = self.rec[ptr_val_par].ptr_comp;
        // Proc_3(&Next_Record->Ptr_Comp)
        self.rec[next].ptr_comp = self.rec[PTR_GLOB].ptr_comp;
        proc_7(10, self.int_glob, &mut self.rec[PTR_GLOB].int_comp);
        if self.rec[next].discr == Ident::I1 {
            self.rec[next].int_comp = 6;
            let val = self.rec[ptr_val_par].enum_comp;
            proc_6(val, &mut self.rec[next].enum_comp, self.int_glob);
            self.rec[next].ptr_comp = self.rec[PTR_GLOB].ptr_comp;
            let v = self.rec[next].int_comp;
            proc_7(v, 10, &mut self.rec[next].int_comp);
        } else {
            self.rec[ptr_val_par] = self.rec[self.rec[ptr_val_par].ptr_comp];
        }
    }

    fn proc_2(&mut self, int_par_ref: &mut i32) {
        let mut int_loc = *int_par_ref + 10;
        let mut enum_loc = Ident::I2;
        loop {
            if self.ch_1_glob == b'A' {
                int_loc -= 1;
                *int_par_ref = int_loc - self.int_glob;
                enum_loc = Ident::I1;
            }
            if enum_loc == Ident::I1 {
                break;
            }
        }
    }

    fn proc_4(&mut self) {
        let bool_loc = self.ch_1_glob == b'A';
        self.bool_glob |= bool_loc;
        self.ch_2_glob = b'B';
    }

    fn proc_5(&mut self) {
        self.ch_1_glob = b'A';
        self.bool_glob = false;
    }
}

/// Func_1 as the main loop calls it, from the other file: never inlined there.
#[inline(never)]
fn func_1(g: &mut Globals, ch_1_par_val: u8, ch_2_par_val: u8) -> Ident {
    func_1_body(g, ch_1_par_val, ch_2_par_val)
}

/// Func_1 itself, which Func_2 beside it in the same file may have inlined, as C's compiler
/// may.
#[inline]
fn func_1_body(g: &mut Globals, ch_1_par_val: u8, ch_2_par_val: u8) -> Ident {
    let ch_1_loc = ch_1_par_val;
    let ch_2_loc = ch_1_loc;
    if ch_2_loc != ch_2_par_val {
        Ident::I1
    } else {
        g.ch_1_glob = ch_1_loc;
        Ident::I2
    }
}

#[inline(never)]
fn func_2(g: &mut Globals, str_1: &Str30, str_2: &Str30) -> bool {
    let mut int_loc = 2usize;
    let mut ch_loc = 0u8;
    while int_loc <= 2 {
        if func_1_body(g, str_1[int_loc], str_2[int_loc + 1]) == Ident::I1 {
            ch_loc = b'A';
            int_loc += 1;
        }
    }
    if (b'W'..b'Z').contains(&ch_loc) {
        int_loc = 7;
    }
    if ch_loc == b'R' {
        true
    } else if strcmp(str_1, str_2).is_gt() {
        int_loc += 7;
        g.int_glob = int_loc as i32;
        true
    } else {
        false
    }
}

impl Dhrystone {
    /// Checks the final values against those a correct Dhrystone run prints; returns what
    /// differs.
    pub fn check(&self) -> Result<(), String> {
        let gl = &self.g;
        let g = &gl.rec[PTR_GLOB];
        let n = &gl.rec[NEXT_PTR_GLOB];
        let some = SOME_STRING;
        let checks: [(&str, bool); 18] = [
            ("Int_Glob = 5", gl.int_glob == 5),
            ("Bool_Glob = 1", gl.bool_glob),
            ("Ch_1_Glob = A", gl.ch_1_glob == b'A'),
            ("Ch_2_Glob = B", gl.ch_2_glob == b'B'),
            ("Arr_1_Glob[8] = 7", gl.arr_1_glob[8] == 7),
            (
                "Arr_2_Glob[8][7] = runs + 10",
                gl.arr_2_glob[8][7] == (self.runs as i32).wrapping_add(10),
            ),
            (
                "Ptr_Glob: Discr 0, Enum_Comp 2, Int_Comp 17",
                g.discr == Ident::I1 && g.enum_comp == Ident::I3 && g.int_comp == 17,
            ),
            ("Ptr_Glob: Str_Comp", g.str_comp == some),
            (
                "Next_Ptr_Glob: Discr 0, Enum_Comp 1, Int_Comp 18",
                n.discr == Ident::I1 && n.enum_comp == Ident::I2 && n.int_comp == 18,
            ),
            ("Next_Ptr_Glob: Str_Comp", n.str_comp == some),
            ("Int_1_Loc = 5", self.int_1_loc == 5),
            ("Int_2_Loc = 13", self.int_2_loc == 13),
            ("Int_3_Loc = 7", self.int_3_loc == 7),
            ("Enum_Loc = 1", self.enum_loc == Ident::I2),
            ("Str_1_Loc", self.str_1_loc == STRING_1),
            ("Str_2_Loc", self.str_2_loc == STRING_2),
            (
                "Ptr_Glob points to Next_Ptr_Glob",
                g.ptr_comp == NEXT_PTR_GLOB,
            ),
            ("at least one run", self.runs > 0),
        ];
        let failed: Vec<&str> = checks
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(what, _)| *what)
            .collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "Dhrystone self-check failed: {}",
                failed.join(", ")
            ))
        }
    }
}

#[inline(never)]
fn proc_6(enum_val_par: Ident, enum_ref_par: &mut Ident, int_glob: i32) {
    *enum_ref_par = enum_val_par;
    if !func_3(enum_val_par) {
        *enum_ref_par = Ident::I4;
    }
    match enum_val_par {
        Ident::I1 => *enum_ref_par = Ident::I1,
        Ident::I2 => *enum_ref_par = if int_glob > 100 { Ident::I1 } else { Ident::I4 },
        Ident::I3 => *enum_ref_par = Ident::I2,
        Ident::I4 => {}
        Ident::I5 => *enum_ref_par = Ident::I3,
    }
}

#[inline(never)]
fn proc_7(int_1_par_val: i32, int_2_par_val: i32, int_par_ref: &mut i32) {
    let int_loc = int_1_par_val + 2;
    *int_par_ref = int_2_par_val + int_loc;
}

#[inline(never)]
fn proc_8(
    arr_1: &mut [i32; 50],
    arr_2: &mut [[i32; 50]; 50],
    int_1_par_val: i32,
    int_2_par_val: i32,
    int_glob: &mut i32,
) {
    let int_loc = (int_1_par_val + 5) as usize;
    arr_1[int_loc] = int_2_par_val;
    arr_1[int_loc + 1] = arr_1[int_loc];
    arr_1[int_loc + 30] = int_loc as i32;
    // Dhrystone's own loop, kept as the benchmark defines its work.
    #[allow(clippy::needless_range_loop)]
    for int_index in int_loc..=int_loc + 1 {
        arr_2[int_loc][int_index] = int_loc as i32;
    }
    arr_2[int_loc][int_loc - 1] += 1;
    arr_2[int_loc + 20][int_loc] = arr_1[int_loc];
    *int_glob = 5;
}

/// Called by Proc_6 only, in the same file: the compiler may inline it, as C's may.
fn func_3(enum_par_val: Ident) -> bool {
    enum_par_val == Ident::I3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_values_are_dhrystones() {
        let mut d = Dhrystone::new();
        d.run(1000);
        d.check().unwrap();
        assert_eq!(d.g.arr_2_glob[8][7], 1010);
    }

    #[test]
    fn a_fresh_run_fails_its_check() {
        assert!(Dhrystone::new().check().is_err());
    }
}
