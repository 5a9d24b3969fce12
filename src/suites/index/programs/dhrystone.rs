//! Dhrystone 2.1 (Reinhold Weicker, 1988), the procedure and function structure of the
//! original with its record, globals, strings and arrays, written in Rust for hostbench. The
//! procedures the original kept in a separate file (Proc_6..8, Func_1..3) are never inlined,
//! as separate compilation kept them apart there, and every run's inputs pass through
//! `black_box`, so the optimiser cannot fold the work away. [`Dhrystone::check`] compares the
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

fn s30(s: &str) -> Str30 {
    let mut a = [0u8; 31];
    a[..s.len()].copy_from_slice(s.as_bytes());
    a
}

#[derive(Debug, Clone, Copy)]
struct Record {
    /// Index of the record this one points to (0: Ptr_Glob's, 1: Next_Ptr_Glob's).
    ptr_comp: usize,
    discr: Ident,
    enum_comp: Ident,
    int_comp: i64,
    str_comp: Str30,
}

pub struct Dhrystone {
    rec: [Record; 2],
    int_glob: i64,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: [i64; 50],
    arr_2_glob: Box<[[i64; 50]; 50]>,
    // The locals of main that the report prints.
    int_1_loc: i64,
    int_2_loc: i64,
    int_3_loc: i64,
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
        let some = s30("DHRYSTONE PROGRAM, SOME STRING");
        let glob = Record {
            ptr_comp: NEXT_PTR_GLOB,
            discr: Ident::I1,
            enum_comp: Ident::I3,
            int_comp: 40,
            str_comp: some,
        };
        let mut arr_2_glob = Box::new([[0i64; 50]; 50]);
        arr_2_glob[8][7] = 10;
        Dhrystone {
            rec: [glob, glob],
            int_glob: 0,
            bool_glob: false,
            ch_1_glob: 0,
            ch_2_glob: 0,
            arr_1_glob: [0; 50],
            arr_2_glob,
            int_1_loc: 0,
            int_2_loc: 0,
            int_3_loc: 0,
            enum_loc: Ident::I1,
            str_1_loc: s30("DHRYSTONE PROGRAM, 1'ST STRING"),
            str_2_loc: [0; 31],
            runs: 0,
        }
    }

    /// Runs `n` Dhrystone loops.
    pub fn run(&mut self, n: u64) {
        for _ in 0..n {
            self.runs += 1;
            let run_index = black_box(self.runs as i64);
            self.proc_5();
            self.proc_4();
            let mut int_1 = 2i64;
            let mut int_2 = 3i64;
            let mut int_3 = 0i64;
            self.str_2_loc = s30("DHRYSTONE PROGRAM, 2'ND STRING");
            let mut enum_loc = Ident::I2;
            self.bool_glob = !self.func_2(&black_box(self.str_1_loc), &black_box(self.str_2_loc));
            while int_1 < int_2 {
                int_3 = 5 * int_1 - int_2;
                proc_7(int_1, int_2, &mut int_3);
                int_1 += 1;
            }
            proc_8(
                &mut self.arr_1_glob,
                &mut self.arr_2_glob,
                int_1,
                int_3,
                &mut self.int_glob,
            );
            self.proc_1(PTR_GLOB);
            let mut ch = b'A';
            while ch <= self.ch_2_glob {
                if enum_loc == self.func_1(ch, b'C') {
                    proc_6(Ident::I1, &mut enum_loc, self.int_glob);
                    self.str_2_loc = s30("DHRYSTONE PROGRAM, 3'RD STRING");
                    int_2 = run_index;
                    self.int_glob = run_index;
                }
                ch += 1;
            }
            int_2 *= int_1;
            int_1 = int_2 / int_3;
            int_2 = 7 * (int_2 - int_3) - int_1;
            self.proc_2(&mut int_1);
            self.int_1_loc = int_1;
            self.int_2_loc = int_2;
            self.int_3_loc = int_3;
            self.enum_loc = enum_loc;
        }
    }

    fn proc_1(&mut self, ptr_val_par: usize) {
        let next = self.rec[ptr_val_par].ptr_comp;
        self.rec[next] = self.rec[PTR_GLOB];
        self.rec[ptr_val_par].int_comp = 5;
        self.rec[next].int_comp = self.rec[ptr_val_par].int_comp;
        self.rec[next].ptr_comp = self.rec[ptr_val_par].ptr_comp;
        // Proc_3(&Next_Record->Ptr_Comp)
        self.rec[next].ptr_comp = self.rec[PTR_GLOB].ptr_comp;
        let mut v = self.rec[PTR_GLOB].int_comp;
        proc_7(10, self.int_glob, &mut v);
        self.rec[PTR_GLOB].int_comp = v;
        if self.rec[next].discr == Ident::I1 {
            self.rec[next].int_comp = 6;
            let mut e = self.rec[next].enum_comp;
            proc_6(self.rec[ptr_val_par].enum_comp, &mut e, self.int_glob);
            self.rec[next].enum_comp = e;
            self.rec[next].ptr_comp = self.rec[PTR_GLOB].ptr_comp;
            let mut v = self.rec[next].int_comp;
            proc_7(v, 10, &mut v);
            self.rec[next].int_comp = v;
        } else {
            self.rec[ptr_val_par] = self.rec[self.rec[ptr_val_par].ptr_comp];
        }
    }

    fn proc_2(&mut self, int_par_ref: &mut i64) {
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

    #[inline(never)]
    fn func_1(&mut self, ch_1_par_val: u8, ch_2_par_val: u8) -> Ident {
        let ch_1_loc = ch_1_par_val;
        let ch_2_loc = ch_1_loc;
        if ch_2_loc != ch_2_par_val {
            Ident::I1
        } else {
            self.ch_1_glob = ch_1_loc;
            Ident::I2
        }
    }

    #[inline(never)]
    fn func_2(&mut self, str_1: &Str30, str_2: &Str30) -> bool {
        let mut int_loc = 2usize;
        let mut ch_loc = 0u8;
        while int_loc <= 2 {
            if self.func_1(str_1[int_loc], str_2[int_loc + 1]) == Ident::I1 {
                ch_loc = b'A';
                int_loc += 1;
            }
        }
        if (b'W'..b'Z').contains(&ch_loc) {
            int_loc = 7;
        }
        if ch_loc == b'R' {
            true
        } else if str_1 > str_2 {
            int_loc += 7;
            self.int_glob = int_loc as i64;
            true
        } else {
            false
        }
    }

    /// Checks the final values against those a correct Dhrystone run prints; returns what
    /// differs.
    pub fn check(&self) -> Result<(), String> {
        let g = &self.rec[PTR_GLOB];
        let n = &self.rec[NEXT_PTR_GLOB];
        let some = s30("DHRYSTONE PROGRAM, SOME STRING");
        let checks: [(&str, bool); 18] = [
            ("Int_Glob = 5", self.int_glob == 5),
            ("Bool_Glob = 1", self.bool_glob),
            ("Ch_1_Glob = A", self.ch_1_glob == b'A'),
            ("Ch_2_Glob = B", self.ch_2_glob == b'B'),
            ("Arr_1_Glob[8] = 7", self.arr_1_glob[8] == 7),
            (
                "Arr_2_Glob[8][7] = runs + 10",
                self.arr_2_glob[8][7] == self.runs as i64 + 10,
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
            (
                "Str_1_Loc",
                self.str_1_loc == s30("DHRYSTONE PROGRAM, 1'ST STRING"),
            ),
            (
                "Str_2_Loc",
                self.str_2_loc == s30("DHRYSTONE PROGRAM, 2'ND STRING"),
            ),
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
fn proc_6(enum_val_par: Ident, enum_ref_par: &mut Ident, int_glob: i64) {
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
fn proc_7(int_1_par_val: i64, int_2_par_val: i64, int_par_ref: &mut i64) {
    let int_loc = int_1_par_val + 2;
    *int_par_ref = int_2_par_val + int_loc;
}

#[inline(never)]
fn proc_8(
    arr_1: &mut [i64; 50],
    arr_2: &mut [[i64; 50]; 50],
    int_1_par_val: i64,
    int_2_par_val: i64,
    int_glob: &mut i64,
) {
    let int_loc = (int_1_par_val + 5) as usize;
    arr_1[int_loc] = int_2_par_val;
    arr_1[int_loc + 1] = arr_1[int_loc];
    arr_1[int_loc + 30] = int_loc as i64;
    // Dhrystone's own loop, kept as the benchmark defines its work.
    #[allow(clippy::needless_range_loop)]
    for int_index in int_loc..=int_loc + 1 {
        arr_2[int_loc][int_index] = int_loc as i64;
    }
    arr_2[int_loc][int_loc - 1] += 1;
    arr_2[int_loc + 20][int_loc] = arr_1[int_loc];
    *int_glob = 5;
}

#[inline(never)]
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
        assert_eq!(d.arr_2_glob[8][7], 1010);
    }

    #[test]
    fn a_fresh_run_fails_its_check() {
        assert!(Dhrystone::new().check().is_err());
    }
}
