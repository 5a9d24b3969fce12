#!/usr/bin/env bash
# Installs the Debian packages the tests drive, when they are missing and this is root on
# Debian (the README's test command runs it before `cargo test`; so does .ci/run).
#   dc        the index suite's dc test (skipped, and says so, without it)
#   chromium  the HTML report test renders the report in headless Chromium
#   xvfb, x11-apps (x11perf), mesa-utils (glxgears)  the index suite's graphics tests
#   bsdutils (script)  the progress-line test runs hostbench on a pseudo-terminal
#   postgresql  the store tests start a real server (initdb into a temporary directory)
#   ansible, ansible-lint  the fleet test runs deploy/ansible's playbook and lints it
#   python3-apt  ... and its package option, where Ansible's apt module installs the .deb
#   prometheus, prometheus-node-exporter (and promtool), curl  the metrics test scrapes a run's
#             --textfile-dir through node_exporter into a Prometheus on a loopback port
#   prometheus-alertmanager (amtool)  ... and checks the example Alertmanager routing
#   libssl-dev, pkg-config  the build: TLS to a fleet's server goes through the platform's OpenSSL
#   openssl   the TLS tests make a CA and a server certificate
# and, with cargo (from crates.io, not Debian):
#   cargo-deb  the package test builds the .deb (scripts/build-deb.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v dc >/dev/null || missing+=(dc)
command -v chromium >/dev/null || missing+=(chromium)
command -v Xvfb >/dev/null || missing+=(xvfb)
command -v x11perf >/dev/null || missing+=(x11-apps)
command -v glxgears >/dev/null || missing+=(mesa-utils)
command -v script >/dev/null || missing+=(bsdutils)
command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v ansible-playbook >/dev/null || missing+=(ansible)
command -v ansible-lint >/dev/null || missing+=(ansible-lint)
/usr/bin/python3 -c 'import apt' 2>/dev/null || missing+=(python3-apt)
command -v prometheus >/dev/null && command -v promtool >/dev/null || missing+=(prometheus)
command -v prometheus-node-exporter >/dev/null || missing+=(prometheus-node-exporter)
command -v amtool >/dev/null || missing+=(prometheus-alertmanager)
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
command -v pkg-config >/dev/null || missing+=(pkg-config)
[ -f /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "install-test-deps: installing ${missing[*]}" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1 \
      || echo "install-test-deps: could not install ${missing[*]}" >&2
  else
    echo "install-test-deps: missing ${missing[*]}; install them (Debian: apt-get install ${missing[*]})" >&2
  fi
fi
if ! command -v cargo-deb >/dev/null; then
  echo "install-test-deps: installing cargo-deb (cargo install)" >&2
  cargo install --locked --quiet cargo-deb --version 3.8.0 >/dev/null 2>&1 \
    || echo "install-test-deps: could not install cargo-deb (cargo install --locked cargo-deb)" >&2
fi
