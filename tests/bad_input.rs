//! Every way a user (or a hostile input) can get a command wrong, in one table: the arguments,
//! the exit code expected, and a fragment of the message. Each case runs under a time limit;
//! the test fails on any panic, any hang, any usage error that does not exit 2 with one line
//! on standard error, and prints the totals.

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use common::{run_bounded, Sandbox};

struct Case {
    args: Vec<OsString>,
    code: i32,
    says: &'static str,
}

fn case(args: &[&str], code: i32, says: &'static str) -> Case {
    Case {
        args: args.iter().map(OsString::from).collect(),
        code,
        says,
    }
}

fn raw(args: &[&[u8]], code: i32, says: &'static str) -> Case {
    Case {
        args: args
            .iter()
            .map(|a| OsStr::from_bytes(a).to_os_string())
            .collect(),
        code,
        says,
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Stored and file results to point the result commands at: a real result, and copies damaged
/// in each way a file can be.
struct Fixtures {
    good: String,
    headless_series: String,
    future: String,
    other: String,
    garbage: String,
    impossible: String,
    endless: String,
    junk_db: String,
    other_db: String,
    newer_db: String,
    malformed_db: String,
    fifo: String,
    long_label: String,
    escape_label: String,
    newline_tag: String,
    empty_uuid: String,
    forged_uuid: String,
    notes_db: String,
}

fn fixtures(sb: &Sandbox) -> Fixtures {
    let dir = sb.dir.path();
    let result = sb.json(&["noise", "-l", "5000", "10", "3"]);
    let write = |name: &str, v: &serde_json::Value| {
        let p = dir.join(name);
        std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let good = write("good.json", &result);
    // Result 2: a sched result, which shares no measurement with result 1.
    sb.json(&[
        "sched",
        "-c",
        "2",
        "-a",
        "1",
        "-t",
        "1",
        "--min-runs",
        "1",
        "--max-runs",
        "1",
    ]);
    let mut future = result.clone();
    future["schema_version"] = 99.into();
    let mut impossible = result.clone();
    impossible["suites"][0]["runs"][1]["time_ns"] = 0.into();
    let mut endless = result.clone();
    endless["suites"][0]["runs"][0]["time_ns"] = u64::MAX.into();
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "not json").unwrap();
    let headless_series = dir.join("headless.csv");
    std::fs::write(&headless_series, "a,1\na,2\n").unwrap();

    let junk_db = dir.join("junk.sqlite");
    std::fs::write(&junk_db, vec![b'x'; 4096]).unwrap();
    let other_db = dir.join("other.sqlite");
    rusqlite::Connection::open(&other_db)
        .unwrap()
        .execute_batch("CREATE TABLE results (id INTEGER PRIMARY KEY, x TEXT);")
        .unwrap();
    let newer_db = dir.join("newer.sqlite");
    rusqlite::Connection::open(&newer_db)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    // A store whose one row has lost its JSON.
    let malformed_db = dir.join("malformed.sqlite");
    sb.cmd()
        .args(["noise", "-l", "5000", "10", "2", "--db"])
        .arg(&malformed_db)
        .assert()
        .success();
    rusqlite::Connection::open(&malformed_db)
        .unwrap()
        .execute("UPDATE results SET result_json = X'00ff', host = X'00'", [])
        .unwrap();
    let fifo = dir.join("fifo.json");
    let c = std::ffi::CString::new(path(&fifo)).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let with = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut r = result.clone();
        f(&mut r);
        r
    };
    let notes_db = dir.join("notes.sqlite");
    rusqlite::Connection::open(&notes_db)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine');")
        .unwrap();
    Fixtures {
        fifo: path(&fifo).to_string(),
        long_label: write(
            "long-label.json",
            &with(&|r| r["host_label"] = "x".repeat(70_000).into()),
        ),
        escape_label: write(
            "escape-label.json",
            &with(&|r| r["host_label"] = "\u{1b}]0;owned\u{7}".into()),
        ),
        newline_tag: write(
            "newline-tag.json",
            &with(&|r| r["tags"] = serde_json::json!({"kernel": "A\nB"})),
        ),
        empty_uuid: write("empty-uuid.json", &with(&|r| r["uuid"] = "".into())),
        // Result 1's UUID on another run (another start, finished later): it must not
        // replace result 1.
        forged_uuid: write(
            "forged-uuid.json",
            &with(&|r| {
                r["started_at"] = "2020-01-01T00:00:00Z".into();
                r["finished_at"] = "2099-01-01T00:00:00Z".into();
            }),
        ),
        notes_db: path(&notes_db).to_string(),
        good,
        future: write("future.json", &future),
        other: write("other.json", &serde_json::json!({"hello": "world"})),
        garbage: path(&garbage).to_string(),
        headless_series: path(&headless_series).to_string(),
        impossible: write("impossible.json", &impossible),
        endless: write("endless.json", &endless),
        junk_db: path(&junk_db).to_string(),
        other_db: path(&other_db).to_string(),
        newer_db: path(&newer_db).to_string(),
        malformed_db: path(&malformed_db).to_string(),
    }
}

#[rustfmt::skip]
fn cases(f: &Fixtures, dir: &Path) -> Vec<Case> {
    let d = path(dir);
    let missing = dir.join("no-such-dir");
    let nodir = path(&missing);
    let long = "x".repeat(65_536);
    let sixty_five_tags: Vec<String> = std::iter::once("noise".to_string())
        .chain((0..65).flat_map(|i| ["--tag".to_string(), format!("k{i}=v")]))
        .chain(["10", "2"].map(String::from))
        .collect();
    vec![
        // The command line itself.
        case(&["frobnicate"], 2, "unrecognized subcommand"),
        case(&["noise", "--bogus"], 2, "unexpected argument '--bogus'"),
        case(&["compare"], 2, "required arguments were not provided: <A>, <B>"),
        case(&["compare", "1"], 2, "<B>"),
        case(&["results", "show"], 2, "<ID>"),
        case(&["results", "import"], 2, "<FILE>"),
        case(&["report"], 2, "report needs results"),
        case(&["report", "1", "--host", "h"], 2, "not both"),
        case(&["results", "delete"], 2, "<ID>"),
        case(&["results", "export", "--fleet", "--format", "csv"], 2, "results export --fleet writes --format openmetrics"),
        case(&["results", "export", "--fleet", "1", "--format", "openmetrics"], 2, "cannot be used with"),
        case(&["history", "--format", "openmetrics"], 2, "exports the nightly gate: give --fail-on"),
        case(&["results", "retire"], 2, "<HOST>"),
        case(&["results", "retire", "a\u{7}b"], 2, "holds the hidden character U+0007"),
        case(&["results", "delete", "--before", "soon"], 2, "--before"),
        case(&["results", "export", "1", "--host", "h", "--format", "json"], 2, "give an id or --fleet"),
        case(&["results", "delete", "one"], 2, "invalid value 'one'"),
        case(&["results", "delete", "--db", "/proc/none/x.sqlite", "1"], 2, "no stored results in /proc/none/x.sqlite"),
        case(&["noise", "--fallback-db", "postgres://db/x", "10", "2"], 2, "--fallback-db names an SQLite file"),
        case(&["results", "push", "--to", "/proc/none/x.sqlite"], 2, "cannot open the store"),
        case(
            &["results", "pull", "--from", "postgresql://nobody@localhost/none?host=/nonexistent"],
            2,
            "cannot open the store",
        ),
        case(&["compare", "1", "2", "--since", "2000-01-01"], 2, "narrow tag:KEY=VALUE"),
        raw(&[b"index", b"\xff"], 2, "invalid UTF-8"),
        raw(&[b"noise", b"--db", b"/proc/no/r\xe9s.sqlite", b"10", b"2"], 2, "cannot open the result store"),
        raw(&[b"results", b"list", b"--db", b"/tmp/hostbench-no-such-r\xe9s.sqlite"], 0, "No stored results"),
        // noise (p1bench)
        case(&["noise", "abc"], 2, "invalid value 'abc'"),
        case(&["noise", "-m", "abc"], 2, "invalid value 'abc'"),
        case(&["noise", "0"], 2, "time_ms must be at least 1"),
        case(&["noise", "4000000"], 2, "at most 3600000"),
        case(&["noise", "10", "0"], 2, "count must be at least 1"),
        case(&["noise", "10", "2", "3"], 2, "unexpected argument '3'"),
        case(&["noise", "-m", "0"], 2, "-m Mbytes must be at least 1"),
        case(&["noise", "-m", "100000000"], 2, "larger than"),
        case(&["noise", "-m", "64", "-l", "100"], 2, "cannot be used with -m"),
        case(&["noise", "-l", "0"], 2, "-l"),
        case(&["noise", "-l", "18446744073709551615"], 2, "-l"),
        // sched (reflex)
        case(&["sched", "-c", "9223372036854775808", "-a", "2"], 2, "-c must be at most 16384"),
        case(&["sched", "-c", "99999999999999999999999"], 2, "invalid value"),
        case(&["sched", "-c", "7", "-a", "1"], 2, "even number"),
        case(&["sched", "-c", "8", "-a", "9"], 2, "-a must be from 1"),
        case(&["sched", "-c", "8", "-a", "3"], 2, "-a must divide -c"),
        case(&["sched", "-a", "0"], 2, "-a must be from 1"),
        case(&["sched", "-w", "101"], 2, "-w must be from 0 to 100"),
        case(&["sched", "-t", "0"], 2, "-t must be from 1"),
        case(&["sched", "-t", "18446744074"], 2, "-t must be from 1 to 86400"),
        case(&["sched", "-r", "100000000"], 2, "-r must be at most 1000000"),
        case(&["sched", "-o", "3"], 2, "-o"),
        case(&["sched", "--ci", "0"], 2, "--ci"),
        case(&["sched", "--ci", "NaN"], 2, "--ci"),
        case(&["sched", "--ci", "inf"], 2, "--ci"),
        case(&["sched", "--min-runs", "5", "--max-runs", "2"], 2, "--min-runs"),
        case(&["sched", "--max-runs", "1000000"], 2, "--max-runs"),
        case(&["sched", "--sweep", "2,5"], 2, "even number"),
        case(&["sched", "--sweep", "2,9223372036854775806"], 2, "-c must be at most"),
        // interactive (interbench)
        case(&["interactive", "-W", "Doom"], 2, "Audio, Video, X, Gaming, Custom"),
        case(&["interactive", "-w", "Disco"], 2, "None, Video, X, Burn, Write, Read, Ring, Compile, Memload, Hack, Custom"),
        case(&["interactive", "-x", "Disco"], 2, "invalid value 'Disco' for '--exclude-load <LOAD>'"),
        case(&["interactive", "-W", "Audio", "-X", "Audio"], 2, "no bench left"),
        case(&["interactive", "-w", "None", "-x", "None"], 2, "no load left"),
        case(&["interactive", "-I", "1000"], 2, "-I needs -C"),
        case(&["interactive", "-C", "50"], 2, "-C needs -I"),
        case(&["interactive", "--explain", "0"], 2, "0 is not in 1..=100"),
        case(&["run", "--explain", "101"], 2, "101 is not in 1..=100"),
        case(&["interactive", "-C", "0", "-I", "1000"], 2, "-C must be"),
        case(&["interactive", "-C", "101", "-I", "1000"], 2, "-C must be"),
        case(&["interactive", "-C", "50", "-I", "18446744073709552"], 2, "-I must be from 1 to 10000000"),
        case(&["interactive", "-W", "Custom"], 2, "need -C"),
        case(&["interactive", "-t", "0"], 2, "-t must be from 1"),
        case(&["interactive", "-t", "18446744074"], 2, "-t must be from 1 to 86400"),
        case(&["interactive", "-L", "0"], 2, "-L must be from 1"),
        case(&["interactive", "-L", "3000", "-w", "Burn"], 2, "-L must be from 1 to"),
        case(&["interactive", "-L", "4294967295"], 2, "-L must be from 1 to"),
        case(&["interactive", "-L", "4294967296"], 2, "invalid value"),
        case(&["interactive", "-B", "30"], 2, "-B must be a nice level"),
        case(&["interactive", "-N", "-21"], 2, "-N must be a nice level"),
        case(&["interactive", "-r", "-W", "X"], 2, "-r benchmarks only"),
        case(&["interactive", "--settle-ms", "18446744073709551615"], 2, "--settle-ms must be at most"),
        case(&["interactive", "--hack-groups", "0"], 2, "--hack-groups must be from 1"),
        case(&["interactive", "--memload-mb", "0"], 2, "--memload-mb must be from 1"),
        case(&["interactive", "--memload-mb", "999999999999"], 2, "--memload-mb must be from 1"),
        case(&["interactive", "--file-size", "0"], 2, "--file-size must be at least 1 MB"),
        case(&["interactive", "--file-size", "99999999", "-W", "Audio", "-w", "Write"], 2, "free"),
        case(&["interactive", "--file-size", "18446744073709551615", "-W", "Audio", "-w", "Read"], 2, "free"),
        case(&["interactive", "-W", "Audio", "-w", "None", "-t", "1", "--workdir", "/proc"], 2, "cannot use /proc"),
        case(&["interactive", "-W", "Audio", "-w", "None", "-t", "1", "--log-dir", "/proc"], 2, "cannot write the log file"),
        // index (UnixBench)
        case(&["index", "bogus"], 2, "dhry2reg"),
        case(&["index", "-c", "0"], 2, "-c must be at least 1"),
        case(&["index", "-c", "100000"], 2, "more copies than this host can run"),
        case(&["index", "-i", "0"], 2, "-i must be at least 1"),
        case(&["index", "-i", "100000"], 2, "-i must be at most"),
        case(&["index", "--seconds", "0"], 2, "--seconds must be at least 0.01"),
        case(&["index", "--seconds", "1e12"], 2, "--seconds must be at least 0.01 and at most 86400"),
        case(&["index", "--seconds", "1e-9"], 2, "--seconds must be at least 0.01"),
        case(&["sched", "--min-runs", "0"], 2, "--min-runs (0) must be at least 1"),
        case(&["sched", "-c", "2", "-a", "1", "--sweep", "2,2,2"], 2, "names 2 threads twice"),
        case(&["compare", "1", "2", "--fail-on-regression", "inf"], 2, "a finite percentage"),
        case(&["noise", "--tag", "k=a", "--tag", "k=b", "10", "2"], 2, "--tag k is given twice"),
        case(&sixty_five_tags.iter().map(String::as_str).collect::<Vec<_>>(), 2, "--tag given 65 times"),
        case(&["index", "--list", "bogus"], 2, "bogus"),
        case(&["index", "--seconds", "inf"], 2, "--seconds"),
        case(&["index", "--seconds", "NaN"], 2, "--seconds"),
        case(&["index", "--adaptive", "0"], 2, "--adaptive"),
        case(&["index", "--workdir", "/proc", "syscall"], 2, "cannot use /proc"),
        case(&["index", "--workdir", nodir, "syscall"], 2, "no-such-dir for temporary files"),
        // run
        case(&["run", "--profile", "fast"], 2, "possible values: quick, standard, full"),
        case(&["run", "--workdir", "/proc"], 2, "cannot use /proc"),
        case(&["run", "--workdir", nodir], 2, "not a directory"),
        // results, compare, report: ids, files and stores
        case(&["results", "show", "424242"], 2, "no stored result with id 424242"),
        case(&["results", "show", "abc"], 2, "invalid value 'abc'"),
        case(&["results", "export", "5", "--format", "csv"], 2, "no stored result with id 5"),
        case(&["results", "export", "1", "--format", "xml"], 2, "xml"),
        case(&["results", "import", &f.garbage], 2, "is not JSON"),
        case(&["history", "--series", &f.headless_series], 2, "the first row must be the header series,value"),
        case(&["history", "--fail-on", "worse", "--window", "6"], 2, "6 is not in 1..=5"),
        case(&["history", "--window", "3"], 2, "--fail-on <WHAT>"),
        case(&["history", "--fail-on-host"], 2, "--fail-on <WHAT>"),
        case(&["results", "pull", "--from", "/nonexistent/none.sqlite"], 2, "there is no store at /nonexistent/none.sqlite"),
        case(&["results", "import", &f.good, &format!("{nodir}/r.json")], 2, "neither a stored result id nor a readable result file"),
        case(&["compare", "1", "7"], 2, "no stored result with id 7"),
        case(&["compare", "1", "2"], 2, "share no measurement"),
        case(&["compare", "1", &f.future], 2, "schema version 99"),
        case(&["compare", "1", &f.other], 2, "not a hostbench result"),
        case(&["compare", "1", &f.garbage], 2, "is not JSON"),
        case(&["compare", &f.impossible, &f.good], 2, "impossible figure (noise run 2 took 0 ns)"),
        case(&["compare", &f.good, &f.endless], 2, "noise run 1 took 18446744073709551615 ns"),
        case(&["report", &f.endless], 2, "impossible figure"),
        case(&["compare", &f.good, &f.good, "--fail-on-regression=-5"], 2, "--fail-on-regression must be"),
        case(&["compare", &f.good, &f.good, "--fail-on-regression", "-5"], 2, "tip: to pass '-5' as a value"),
        case(&["compare", &f.good, &f.good, "--format", "html"], 2, "invalid value 'html' for '--format <FORMAT>'"),
        case(&["compare", &f.good, &f.good, "--format", "html"], 2, "(possible values: text, json, csv, markdown)"),
        case(&["report", &f.good, "--format", "xml"], 2, "(possible values: text, json, csv, markdown, html;"),
        case(&["compare", "--json", &f.good, &f.good, "--format", "csv"], 2, "--json and --format csv ask for two formats"),
        case(&["results", "export", "1"], 2, "results export needs --format"),
        case(&["results", "export", "1", "--format", "json", "--account"], 2, "--account adds columns to --format csv, not to --format json"),
        case(&["noise", "--tag", "nokey", "10", "2"], 2, "\"nokey\" is not KEY=VALUE"),
        case(&["results", "show", "--tag", "a=b", "1"], 2, "unexpected argument '--tag'"),
        case(&["results", "list", "--host-label", "x"], 2, "unexpected argument '--host-label'"),
        // An option goes after the command it belongs to; clap points there.
        case(&["--db", "x.sqlite", "noise", "10", "2"], 2, "'noise --db' exists"),
        case(&["noise", "--since", "2026-01-01", "10", "2"], 2, "unexpected argument '--since'"),
        case(&["results", "list", "--since", "yesterday"], 2, "is neither a day (YYYY-MM-DD) nor an RFC 3339 time"),
        case(&["report", "4", "-o", "x.html"], 2, "no stored result with id 4"),
        case(&["report", &f.good, "-o", "/proc/x.html"], 2, "cannot write /proc/x.html"),
        case(&["report", &f.good, "-o", d], 2, "is a directory"),
        case(&["results", "list", "--db", d], 2, "cannot read the result store"),
        case(&["results", "list", "--db", &f.junk_db], 2, "not an SQLite database"),
        case(&["results", "list", "--db", &f.other_db], 2, "not a hostbench result store"),
        case(&["noise", "--db", &f.other_db, "10", "2"], 2, "not a hostbench result store"),
        case(&["noise", "--db", &f.newer_db, "10", "2"], 2, "newer hostbench"),
        case(&["noise", "--db", "/proc/hostbench-no-such-dir/r.sqlite", "10", "2"], 2, "cannot open the result store"),
        case(&["results", "show", "--db", &f.malformed_db, "1"], 2, "result 1 is malformed in the store"),
        case(&["results", "list", "--db", &f.malformed_db], 0, "[malformed row: host is a blob]"),
        case(&["compare", "--db", &f.malformed_db, "1", &f.good], 2, "result 1 is malformed in the store"),
        // A command without its subcommand, opposite options.
        case(&[], 2, "hostbench needs a command: run, noise,"),
        case(&["results"], 2, "hostbench results needs a command: list, hosts, show, export, import, push, pull, delete, retire"),
        case(&["index", "-q", "-v"], 2, "cannot be used with"),
        case(&["noise", "-q", "-v", "10", "2"], 2, "'--quiet' cannot be used with '--verbose'"),
        // Labels and tags: bounded, plain text, wherever they enter.
        case(&["noise", "--host-label", &long, "10", "2"], 2, "65536 characters long; at most 128"),
        case(&["noise", "--host-label", "a\u{1b}]0;t\u{7}", "10", "2"], 2, "hidden character U+00"),
        case(&["noise", "--tag", "kernel=a\rb", "10", "2"], 2, "hidden character U+00"),
        case(&["noise", "--host-label", "", "10", "2"], 2, "the host label is empty"),
        case(&["noise", "--host-label", " \t ", "10", "2"], 2, "the host label is blank"),
        case(&["noise", "--host-label", "node1\u{200b}", "10", "2"], 2, "hidden character U+200B"),
        case(&["noise", "--tag", "k=\u{202e}txt", "10", "2"], 2, "hidden character U+202E"),
        case(&["compare", "1,1", "2"], 2, "names the run"),
        case(&["noise", "--tag", &format!("k={long}"), "10", "2"], 2, "at most 256"),
        case(&["noise", "--tag", "kernel=a\nb\u{1b}[2J", "10", "2"], 2, "invalid value 'kernel=a\\nb\\e[2J' for '--tag <KEY=VALUE>'"),
        case(&["noise", "--db", "/proc/\u{1b}]0;owned\u{7}/r.sqlite", "10", "2"], 2, "creating /proc/\\e]0;owned\\u{7}: No such file"),
        case(&["results", "import", &f.long_label], 2, "at most 128 are allowed: refused"),
        case(&["results", "import", &f.escape_label], 2, "holds the hidden character U+001B"),
        case(&["results", "import", &f.newline_tag], 2, "the value of tag kernel A\\nB holds the hidden character U+000A"),
        // UUIDs: well formed, and never another run's.
        case(&["results", "import", &f.empty_uuid], 2, "its uuid \"\" is not a UUID of a run"),
        case(&["results", "import", &f.good, &f.forged_uuid], 2, "is that of stored result 1, another run"),
        // Files that are not result files, read without hanging or without end.
        case(&["results", "import", &f.fifo], 2, "it is a FIFO"),
        case(&["results", "import", "/dev/zero"], 2, "it is a device"),
        case(&["compare", &f.fifo, &f.good], 2, "it is a FIFO"),
        case(&["report", &f.fifo], 2, "it is a FIFO"),
        case(&["results", "list", "--db", &f.fifo], 2, "it is a FIFO, not a result store"),
        case(&["noise", "--db", &f.fifo, "10", "2"], 2, "it is a FIFO, not a result store"),
        case(&["noise", "--db", "/dev/null", "10", "2"], 2, "it is a device, not a result store"),
        // Stores: only SQLite paths and PostgreSQL URLs; another program's database untouched.
        case(&["results", "list", "--db", "mysql://me@db/results"], 2, "not mysql://"),
        case(&["noise", "--db", "POSTGRES://me@db/results", "10", "2"], 2, "in lower case), not POSTGRES://"),
        case(&["noise", "--db", "host=db dbname=hb password=s3cret", "10", "2"], 2, "a libpq connection string (keywords host, dbname, password) is not taken"),
        case(&["noise", "--db", &f.notes_db, "10", "2"], 2, "it holds other tables (notes): not a hostbench result store"),
        case(&["results", "list", "--db", &f.notes_db], 2, "it holds other tables (notes)"),
    ]
}

#[test]
fn every_bad_input_gets_one_line_and_its_exit_code_and_nothing_panics_or_hangs() {
    let sb = Sandbox::new();
    let f = fixtures(&sb);
    // The sandbox's store holds a noise result (id 1) and a sched result (id 2).
    let notes_before = std::fs::read(&f.notes_db).unwrap();
    let stored_before = sb
        .cmd()
        .args(["results", "export", "1", "--format", "json"])
        .output()
        .unwrap()
        .stdout;
    let cases = cases(&f, sb.dir.path());
    let (mut usage, mut panics, mut hangs) = (0, 0, 0);
    let mut wrong = Vec::new();
    for c in &cases {
        let mut cmd = sb.std_cmd();
        cmd.args(&c.args);
        let r = run_bounded(cmd, Duration::from_secs(30));
        panics += usize::from(r.panicked());
        hangs += usize::from(r.hung());
        usage += usize::from(r.code == Some(2));
        let out = if c.code == 0 { &r.stdout } else { &r.stderr };
        // The table, for `cargo test --test bad_input -- --nocapture`: exit, arguments, message.
        let shown: Vec<String> = c
            .args
            .iter()
            .map(|a| {
                let a = a.to_string_lossy().escape_debug().to_string();
                let cut: String = a.chars().take(40).collect();
                if cut.len() < a.len() {
                    format!("{cut}…")
                } else {
                    cut
                }
            })
            .collect();
        println!(
            "| {} | `{}` | {} |",
            r.code.map_or("-".to_string(), |c| c.to_string()),
            shown.join(" ").replace('|', "\\|"),
            out.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(160)
                .collect::<String>()
                .replace('|', "\\|")
        );
        let one_line = c.code == 0
            || (r.stderr.trim_end().lines().count() == 1
                && !r.stderr.trim_end().contains(|ch: char| ch.is_control())
                && r.stderr.len() < 4000
                && r.stderr.starts_with("hostbench: error: ")
                && r.stdout.is_empty());
        if r.code != Some(c.code) || !out.contains(c.says) || !one_line {
            wrong.push(format!(
                "{:?}: exit {:?} (want {}), stderr {:?}, stdout {:?}",
                c.args,
                r.code,
                c.code,
                r.stderr,
                r.stdout.chars().take(200).collect::<String>()
            ));
        }
    }
    // A bad input never creates a store or leaves a private directory behind.
    let left: Vec<_> = std::fs::read_dir(sb.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hostbench-"))
        .collect();
    println!(
        "bad input: {} tried, {usage} exit 2, {panics} panics, {hangs} hangs, {} wrong",
        cases.len(),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Another program's database is as it was; result 1 was not replaced by the forged copy.
    assert_eq!(std::fs::read(&f.notes_db).unwrap(), notes_before);
    let stored_after = sb
        .cmd()
        .args(["results", "export", "1", "--format", "json"])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(stored_after, stored_before);
    assert_eq!((panics, hangs), (0, 0));
    assert!(left.is_empty(), "{left:?}");
    // Reading a store that is not there creates none.
    assert!(!Path::new(OsStr::from_bytes(b"/tmp/hostbench-no-such-r\xe9s.sqlite")).exists());
}
