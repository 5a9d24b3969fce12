#!/usr/bin/env bash
# Builds hostbench's Debian package with cargo-deb (scripts/install-test-deps.sh installs it):
# target/debian/hostbench_VERSION-1_ARCH.deb, holding the binary, a manual page for it and each
# of its commands, completion scripts for bash, zsh and fish, the README, CHANGELOG and docs,
# and the licence as its copyright file (Cargo.toml's [package.metadata.deb]).
# Usage: scripts/build-deb.sh [BINARY [OUTPUT_DIR]]
#   BINARY: package this hostbench instead of building the release binary (the test packages
#   the binary it was built with); OUTPUT_DIR: where the .deb goes (default target/debian).
# Prints the .deb's path.
set -euo pipefail
cd "$(dirname "$0")/.."
# Cargo's target directory, where the release binary is built and the .deb goes by default:
# CARGO_TARGET_DIR where it is set, else ./target. The staged assets stay in ./target/deb-assets
# whatever it is: Cargo.toml names them there, and cargo-deb reads them there.
target=${CARGO_TARGET_DIR:-target}
bin=${1:-}
out=${2:-$target/debian}
if [ -z "$bin" ]; then
  cargo build --release --locked -q
  bin=$target/release/hostbench
fi
command -v cargo-deb >/dev/null || { echo "build-deb: cargo-deb is missing (cargo install --locked cargo-deb)" >&2; exit 1; }
# Cargo.toml names the staging directory, so builds of the package take turns.
mkdir -p target
exec 9>target/deb-assets.lock
flock 9
stage=target/deb-assets
rm -rf "$stage"
mkdir -p "$stage/man" "$stage/completions" "$out"
# Stripped, as Debian ships programs (a debug build is mostly DWARF).
install -s -m 0755 "$bin" "$stage/hostbench"
# The binary writes its own pages and completions, so they match the options it has.
"$stage/hostbench" man >"$stage/man/hostbench.1"
commands=$("$stage/hostbench" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' | grep -vx help)
for c in $commands; do
  "$stage/hostbench" man "$c" >"$stage/man/hostbench-$c.1"
done
gzip -9n "$stage"/man/*.1
"$stage/hostbench" completions bash >"$stage/completions/hostbench"
"$stage/hostbench" completions zsh >"$stage/completions/_hostbench"
"$stage/hostbench" completions fish >"$stage/completions/hostbench.fish"
deb=$(cargo deb --no-build --quiet --output "$out")
echo "$deb"
