//! `hostbench completions` and `hostbench man`: generated from the parser, so they name every
//! subcommand and option it accepts.

mod common;

use common::Sandbox;

fn stdout(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.cmd().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

const SUBCOMMANDS: [&str; 10] = [
    "run",
    "noise",
    "interactive",
    "sched",
    "index",
    "compare",
    "report",
    "results",
    "completions",
    "man",
];

#[test]
fn the_bash_completion_is_a_valid_script_that_knows_every_subcommand_and_option() {
    let sb = Sandbox::new();
    let script = stdout(&sb, &["completions", "bash"]);
    for word in SUBCOMMANDS
        .iter()
        .chain(&["--no-noise-check", "--repeat", "--profile", "--sweep"])
    {
        assert!(script.contains(word), "{word} missing");
    }
    // bash parses it, and after sourcing it completes the subcommands; the hidden worker
    // subcommand is not offered.
    let file = sb.dir.path().join("hostbench.bash");
    std::fs::write(&file, &script).unwrap();
    let complete = |word: &str| {
        let probe = format!(
            "source {}; COMP_WORDS=(hostbench {word}); COMP_CWORD=1; _hostbench hostbench {word} hostbench; echo ${{COMPREPLY[@]}}",
            file.display()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &probe])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(complete("sch"), "sched");
    assert_eq!(complete("__w"), "");
    // Option values come from the same lists the parser checks: the loads, the profiles.
    let values = |words: &str, cword: usize| {
        let probe = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; _hostbench hostbench \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; echo ${{COMPREPLY[@]}}",
            file.display()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &probe])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(values("hostbench interactive -w Bu", 3), "Burn");
    assert_eq!(
        values("hostbench run --profile ''", 3),
        "quick standard full"
    );
    assert_eq!(values("hostbench sched -o ''", 3), "0 1 2");
    for shell in ["zsh", "fish"] {
        assert!(!stdout(&sb, &["completions", shell]).is_empty(), "{shell}");
    }
    let out = sb.cmd().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_man_pages_name_every_subcommand_and_each_its_options() {
    let sb = Sandbox::new();
    let page = stdout(&sb, &["man"]);
    assert!(page.contains(".TH hostbench 1"), "{page}");
    for sub in SUBCOMMANDS {
        assert!(
            page.contains(&format!("hostbench\\-{sub}")),
            "{sub} missing"
        );
    }
    // The options are each command's: the top page lists none of them.
    assert!(!page.contains("no\\-noise\\-check"));
    // Every subcommand has its page (a subcommand's options that refer to a shared one, as
    // noise's --verbose conflicts with --quiet, once made it panic), with the shared options
    // that apply to it.
    for sub in SUBCOMMANDS {
        let sub_page = stdout(&sb, &["man", sub]);
        assert!(
            sub_page.contains(&format!(".TH hostbench-{sub} 1")),
            "{sub}: {sub_page}"
        );
        let stores = !matches!(sub, "completions" | "man");
        assert_eq!(
            sub_page.contains("\\-\\-db"),
            stores,
            "{sub}: store options"
        );
        let measures = matches!(sub, "run" | "noise" | "interactive" | "sched" | "index");
        assert_eq!(sub_page.contains("no\\-noise\\-check"), measures, "{sub}");
    }
    let run = stdout(&sb, &["man", "run"]);
    assert!(run.contains("\\-\\-profile") && run.contains("\\-\\-workdir"));
    let out = sb.cmd().args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no subcommand \"nope\""));
}

#[test]
fn a_full_disk_on_standard_output_is_said_not_only_exit_1() {
    let sb = Sandbox::new();
    for args in [&["man"][..], &["completions", "bash"]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = sb.std_cmd().args(args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("hostbench: error: writing to standard output: No space left"),
            "{args:?}: {err}"
        );
    }
}
