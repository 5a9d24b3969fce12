#!/usr/bin/env python3
"""The house's sizes, for a review (run on demand): the README, CHANGELOG and docs by part in
bytes and words; each user page's longest sentence; "this VM" and commit hashes in user pages;
module docs over three sentences; and the functions in src/ over 100 lines.

Usage: python3 scripts/house-stats.py [--sentences N] (pages' sentences over N words, default 40)
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\[*])")
HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}\b")


def prose(text):
    """The page's running text: code blocks, tables and headings left out, lines joined."""
    out, block = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            block = not block
            continue
        if block or line.startswith(("|", "#", "    ")) or not line.strip():
            out.append("\n")
            continue
        if re.match(r"\s*([-*]|\d+\.) ", line):
            out.append("\n")  # a list item is a sentence of its own
        out.append(line)
    paragraphs = " ".join(out).split("\n")
    return [s.strip() for p in paragraphs for s in SENTENCE.split(p) if s.strip()]


def pages():
    """(part, path) of every Markdown page a user reads: README, CHANGELOG, docs by folder."""
    yield "README", "README.md"
    yield "CHANGELOG", "CHANGELOG.md"
    for d, _, files in sorted(os.walk(os.path.join(ROOT, "docs"))):
        rel = os.path.relpath(d, ROOT)
        part = "docs/evidence" if "evidence" in rel else "docs"
        for f in sorted(files):
            if f.endswith(".md"):
                yield part, os.path.join(rel, f)


def functions(path):
    """(name, lines) of each `fn` in a Rust file, by brace depth from its line to its close."""
    lines = open(path, errors="replace").read().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*(pub(\([^)]*\))?\s+)?(const\s+|async\s+|unsafe\s+|extern\s+\"C\"\s+)*fn\s+(\w+)", line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = lines[j].split("//")[0]
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                out.append((m.group(4), j - i + 1))
                break
            if not opened and code.rstrip().endswith(";"):
                break
    return out


def module_doc(path):
    doc = []
    for line in open(path, errors="replace"):
        if line.startswith("//!"):
            doc.append(line[3:].strip())
        elif doc:
            break
    text = " ".join(doc)
    return len([s for s in SENTENCE.split(text) if s.strip()]), len(text.split())


def main():
    limit = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--sentences" else 40
    sizes = {}
    print("## Pages: bytes, words, longest sentence (words), sentences over", limit, "words,",
          '"this VM", commit-like hashes')
    for part, rel in pages():
        text = open(os.path.join(ROOT, rel)).read()
        words = len(text.split())
        b, w = sizes.get(part, (0, 0))
        sizes[part] = (b + len(text.encode()), w + words)
        sentences = prose(text)
        longest = max((len(s.split()) for s in sentences), default=0)
        over = sum(1 for s in sentences if len(s.split()) > limit)
        vm = len(re.findall(r"this (2-CPU )?VM|this project's (\S+ )?VM", text))
        hashes = len(HASH.findall(text)) if part != "docs/evidence" else 0
        print(f"{rel:40} {len(text.encode()):7} B {words:6} w  longest {longest:4}  over {over:3}  VM {vm:2}  hashes {hashes:2}")
    print("\n## By part")
    for part, (b, w) in sizes.items():
        print(f"{part:15} {b / 1024:7.1f} KB {w:7} words")
    print("\n## Module docs over three sentences")
    long_fns = []
    for d, _, files in sorted(os.walk(os.path.join(ROOT, "src"))):
        for f in sorted(files):
            if f.endswith(".rs"):
                path = os.path.join(d, f)
                n, w = module_doc(path)
                if n > 3:
                    print(f"{os.path.relpath(path, ROOT)}: {n} sentences, {w} words")
                long_fns += [(lines, os.path.relpath(path, ROOT), name) for name, lines in functions(path) if lines > 100]
    print(f"\n## Functions over 100 lines: {len(long_fns)}")
    for lines, path, name in sorted(long_fns, reverse=True):
        print(f"{lines:5}  {path}  {name}")


main()
