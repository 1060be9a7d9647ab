#!/usr/bin/python3
"""Counts test helper functions defined in more than one file: top-level `fn`
items (not #[test] functions) across the test code
(tests/tests, tests/src, collector/tests, interposer/tests). The goal is 0:
one test kit (tests/src) that every test file uses. Usage:
  python3 scripts/duplicate-helpers.py [WORKSPACE]"""
import os, re, sys
from collections import defaultdict

ROOTS = ["tests/tests", "tests/src", "collector/tests", "interposer/tests"]
root = sys.argv[1] if len(sys.argv) > 1 else "."
fn_re = re.compile(r'^(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?(?:extern\s+"C"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)')
defs = defaultdict(set)
for r in ROOTS:
    for dp, _, fs in os.walk(os.path.join(root, r)):
        for f in sorted(fs):
            if not f.endswith(".rs"):
                continue
            p = os.path.join(dp, f)
            lines = open(p, encoding="utf-8").read().split("\n")
            attrs = []
            for line in lines:
                s = line.strip()
                if line.startswith("#["):
                    attrs.append(s)
                    continue
                m = fn_re.match(line)  # top level: no indentation
                if m and not any(a.startswith("#[test") or a.startswith("#[tokio::test") for a in attrs):
                    defs[m.group(1)].add(os.path.relpath(p, root))
                if s and not line.startswith("#[") and not line.startswith("//"):
                    attrs = []
dup = {n: fs for n, fs in defs.items() if len(fs) > 1}
for n in sorted(dup, key=lambda n: (-len(dup[n]), n)):
    print(f"{len(dup[n]):3} {n}: {' '.join(sorted(dup[n]))}")
print(f"helpers defined in more than one file: {len(dup)} names, {sum(len(v) for v in dup.values())} definitions")
