//! The small program behind the index suite's execl, spawn, sysexec and looper tests, which
//! time what a process costs to start and to fork. build.rs compiles this file alone, without
//! Rust's standard library, into a program that needs only libc, so the process is as small as
//! UnixBench's own C programs rather than this large binary.
#![no_std]
#![no_main]

use core::fmt::Write;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

const CLOCK_MONOTONIC: i32 = 1;

#[link(name = "c")]
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    fn execv(path: *const u8, argv: *const *const u8) -> i32;
    fn execvp(file: *const u8, argv: *const *const u8) -> i32;
    fn open(path: *const u8, flags: i32, ...) -> i32;
    fn dup2(old: i32, new: i32) -> i32;
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn _exit(code: i32) -> !;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: ending the process.
    unsafe { _exit(3) }
}

/// The precompiled core library refers to this symbol from its unwind tables; with panics
/// aborting it is never called.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

fn now_ns() -> u64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A fixed buffer written through core::fmt, NUL-terminated by `c_str`.
struct Buf {
    bytes: [u8; 128],
    len: usize,
}

impl Buf {
    const fn new() -> Buf {
        Buf {
            bytes: [0; 128],
            len: 0,
        }
    }

    fn c_str(&mut self) -> *const u8 {
        self.bytes[self.len.min(127)] = 0;
        self.bytes.as_ptr()
    }
}

impl Write for Buf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        if end >= self.bytes.len() {
            return Err(core::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The decimal number at `arg`, or None.
///
/// # Safety
/// `arg` is a NUL-terminated string.
unsafe fn number(arg: *const u8) -> Option<u64> {
    let mut n: u64 = 0;
    let mut p = arg;
    if *p == 0 {
        return None;
    }
    while *p != 0 {
        let d = (*p).wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(d as u64)?;
        p = p.add(1);
    }
    Some(n)
}

fn fail(msg: &str) -> ! {
    // SAFETY: writing a live buffer to standard error, then ending the process.
    unsafe {
        write(2, msg.as_ptr(), msg.len());
        _exit(2)
    }
}

/// Prints the report line: `count` loops in the time since `start_ns`.
fn report(count: u64, start_ns: u64) -> i32 {
    report_per(count, start_ns, 1)
}

/// The report line of `count` loops per `timebase` seconds.
fn report_per(count: u64, start_ns: u64, timebase: u32) -> i32 {
    let mut line = Buf::new();
    let secs = now_ns().saturating_sub(start_ns) as f64 / 1e9;
    if writeln!(
        line,
        "report {{\"count\":{count},\"timebase\":{timebase},\"time_s\":{secs}}}"
    )
    .is_err()
    {
        fail("small: report too long\n");
    }
    // SAFETY: writing a live buffer to standard output.
    unsafe { write(1, line.bytes.as_ptr(), line.len) };
    0
}

/// The argument at `i` as a number.
///
/// # Safety
/// argv holds at least i + 1 NUL-terminated strings.
unsafe fn arg(argv: *const *const u8, i: usize) -> u64 {
    match number(*argv.add(i)) {
        Some(n) => n,
        None => fail("small: arguments must be numbers\n"),
    }
}

/// One link of execl's chain.
///
/// # Safety
/// argv holds the 5 arguments of `small execl START DEADLINE COUNT`.
unsafe fn execl(argv: *const *const u8) -> i32 {
    let (start, deadline, count) = (arg(argv, 2), arg(argv, 3), arg(argv, 4));
    if now_ns() >= deadline {
        return report(count, start);
    }
    let mut next = Buf::new();
    let _ = write!(next, "{}", count + 1);
    let args = [
        *argv,
        *argv.add(1),
        *argv.add(2),
        *argv.add(3),
        next.c_str(),
        core::ptr::null(),
    ];
    // execv gets a NUL-terminated path and a NULL-terminated argv of NUL-terminated strings
    // that live until it returns (it returns only on failure).
    execv(c"/proc/self/exe".as_ptr().cast(), args.as_ptr());
    fail("small: execv /proc/self/exe failed\n")
}

/// spawn.c's loop.
///
/// # Safety
/// argv holds the 3 arguments of `small spawn DEADLINE`.
unsafe fn spawn(argv: *const *const u8) -> i32 {
    let deadline = arg(argv, 2);
    let start = now_ns();
    let mut count = 0;
    while now_ns() < deadline {
        match fork() {
            -1 => fail("small: fork failed\n"),
            0 => _exit(0),
            pid => {
                let mut status = 0;
                if waitpid(pid, &mut status, 0) != pid || status != 0 {
                    fail("small: a child did not exit cleanly\n");
                }
            }
        }
        count += 1;
    }
    report(count, start)
}

/// syscall.c's exec mode (UnixBench's sysexec).
///
/// # Safety
/// argv holds the 3 arguments of `small sysexec DEADLINE`.
unsafe fn sysexec(argv: *const *const u8) -> i32 {
    let deadline = arg(argv, 2);
    let start = now_ns();
    let mut count = 0;
    let truth = c"/bin/true".as_ptr().cast::<u8>();
    let args = [truth, core::ptr::null()];
    while now_ns() < deadline {
        match fork() {
            -1 => fail("small: fork failed\n"),
            0 => {
                execv(truth, args.as_ptr());
                _exit(127)
            }
            pid => {
                let mut status = 0;
                if waitpid(pid, &mut status, 0) != pid || status != 0 {
                    fail("small: /bin/true did not exit cleanly\n");
                }
            }
        }
        count += 1;
    }
    report(count, start)
}

/// looper.c's loop: the command at argv[3..] until the deadline.
///
/// # Safety
/// argv holds argc NUL-terminated strings and a NULL after them; argc >= 4.
unsafe fn looper(argv: *const *const u8) -> i32 {
    const O_WRONLY: i32 = 0o1;
    const O_CREAT: i32 = 0o100;
    const O_APPEND: i32 = 0o2000;
    const O_NOFOLLOW: i32 = 0o400000;
    const O_CLOEXEC: i32 = 0o2000000;
    let deadline = arg(argv, 2);
    let command = argv.add(3);
    // UnixBench's Run starts the looper with its standard output appended to the run's log
    // (`>> "$logFile"`), so every command's output is written to a file: for grep's short
    // answer that costs a quarter of its rate. The same here: the test's log in the run's
    // private directory (a file, never a link), opened once, handed to each command as its
    // standard output. Its errors go to standard error.
    let log = open(
        c"looper.log".as_ptr().cast(),
        O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
        0o600,
    );
    if log < 0 {
        fail("small: cannot open looper.log in the test directory\n");
    }
    let start = now_ns();
    let mut count = 0;
    while now_ns() < deadline {
        match fork() {
            -1 => fail("small: fork failed\n"),
            0 => {
                dup2(log, 1);
                execvp(*command, command);
                _exit(127)
            }
            pid => {
                let mut status = 0;
                if waitpid(pid, &mut status, 0) != pid || status != 0 {
                    let mut line = Buf::new();
                    let name = core::ffi::CStr::from_ptr((*command).cast());
                    let _ = writeln!(
                        line,
                        "error {} failed (wait status {status})",
                        name.to_str().unwrap_or("the command")
                    );
                    write(1, line.bytes.as_ptr(), line.len);
                    _exit(1);
                }
            }
        }
        if now_ns() <= deadline {
            count += 1;
        }
    }
    report_per(count, start, 60)
}

/// The program's entry. hostbench embeds the program and writes it into the suite's private
/// directory; it is run as:
///
/// ```text
/// small execl START_NS DEADLINE_NS COUNT
///   execl.c: a link of a chain; execs itself with COUNT + 1 until CLOCK_MONOTONIC passes
///   DEADLINE_NS, then reports COUNT links since START_NS.
/// small spawn DEADLINE_NS
///   spawn.c: forks a child that exits at once and waits for it, until DEADLINE_NS.
/// small sysexec DEADLINE_NS
///   syscall.c's exec mode: forks a child that execs /bin/true and waits for it.
/// small looper DEADLINE_NS PROGRAM ARG...
///   looper.c: runs PROGRAM ARG... (found on PATH, its standard output appended to
///   looper.log, as Run appends it to its log) over and over until DEADLINE_NS, and reports
///   the runs that completed before it, per minute.
/// ```
///
/// A process this small forks fast, as UnixBench's looper does; the hostbench worker that
/// started the copy is a large process whose every fork would cost more. The report is the
/// worker protocol's line: `report {"count":C,"timebase":1,"time_s":T}`.
#[no_mangle]
pub extern "C" fn main(argc: i32, argv: *const *const u8) -> i32 {
    // SAFETY: argv holds argc NUL-terminated strings; each mode is called with its count.
    unsafe {
        let mode = if argc > 1 { mode(*argv.add(1)) } else { Mode::Other };
        match (argc, mode) {
            (5, Mode::Execl) => execl(argv),
            (3, Mode::Spawn) => spawn(argv),
            (3, Mode::SysExec) => sysexec(argv),
            (n, Mode::Looper) if n >= 4 => looper(argv),
            _ => fail("usage: small execl START_NS DEADLINE_NS COUNT | small spawn DEADLINE_NS | small looper DEADLINE_NS PROGRAM ARG...\n"),
        }
    }
}

enum Mode {
    Execl,
    Spawn,
    SysExec,
    Looper,
    Other,
}

/// # Safety
/// `s` is a NUL-terminated string.
unsafe fn mode(s: *const u8) -> Mode {
    match core::ffi::CStr::from_ptr(s.cast()).to_bytes() {
        b"execl" => Mode::Execl,
        b"spawn" => Mode::Spawn,
        b"looper" => Mode::Looper,
        b"sysexec" => Mode::SysExec,
        _ => Mode::Other,
    }
}
