#!/usr/bin/env bash
# Writes docs/reference.md, every command's options as Markdown, from hostbench's parser
# (tests/reference_docs.rs, which fails when the file is out of date).
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTBENCH_WRITE_REFERENCE=1 cargo test --quiet --test reference_docs >/dev/null
echo "wrote docs/reference.md ($(wc -c <docs/reference.md) bytes)"
