// Records the compiler that built hostbench (results state it, because the raw figures of
// CPU-bound tests depend on it), and compiles the small program of the index suite's execl and
// spawn tests, which hostbench embeds (see that file for why it is a program of its own).
use std::path::PathBuf;
use std::process::Command;

const SMALL_SRC: &str = "src/suites/index/assets/small.rs";

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    build_small(&rustc);
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc (unknown version)".into());
    println!("cargo:rustc-env=HOSTBENCH_RUSTC_VERSION={version}");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!("cargo:rustc-env=HOSTBENCH_BUILD_PROFILE={profile}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={SMALL_SRC}");
}

fn build_small(rustc: &str) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let status = Command::new(rustc)
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "bin",
            "--target",
            &target,
        ])
        .args([
            "-C",
            "opt-level=2",
            "-C",
            "panic=abort",
            "-C",
            "debuginfo=0",
        ])
        .args(["-C", "strip=symbols", "-o"])
        .arg(out.join("small"))
        .arg(SMALL_SRC)
        .status()
        .expect("running rustc for the small program");
    assert!(status.success(), "compiling {SMALL_SRC} failed");
}
