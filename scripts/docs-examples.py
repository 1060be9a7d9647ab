#!/usr/bin/env python3
"""The docs' examples of output, made from the demo, so that they cannot
drift from what the program prints.

An example is a fenced code block of README.md, docs/usage.md,
docs/report.md or skills/xpu-asm/SKILL.md whose first line is a command
`$ xpu-asm-run ...` that names `target/demo/` (a block may hold several
`$ ` commands, `$ echo $?` among them), or any block right after a line
`<!-- demo: COMMAND -->` (its whole text is COMMAND's output). Each command
runs with bash from a folder holding the demo's captures
(scripts/demo-captures.sh) with stderr after stdout as a terminal shows
them, and its output, the folder's path written as /home/me/xpu-asm, must
be the block's text; a line `...` in a block stands for any lines.

docs/page.png, the demo's page in headless Chromium, carries in a PNG text
chunk the SHA-256 of what it shows (the page's files and the demo's
kernels); it must be that of the page and the demo now.

  scripts/docs-examples.py [--write] [--demo ROOT]

  --demo ROOT  a folder holding target/demo (the house test makes one);
               default: made in a new temporary folder (about 15 s)
  --write      rewrite each example that differs with what the program
               prints (the lines around a `...` are taken from the output)
               and docs/page.png when it is stale (Chromium and
               playwright-core: scripts/install-deps.sh)

Environment: XPU_ASM_RUN, the xpu-asm-run to run (default: cargo's debug
build). Exit status: 0 when every example matches (or was rewritten), 1
with each difference, 2 on error.
"""
import difflib
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md", "docs/usage.md", "docs/report.md", "skills/xpu-asm/SKILL.md"]
SHOWN_ROOT = "/home/me/xpu-asm"
MARK = re.compile(r"^<!-- demo: (.*) -->$")
PAGE_PNG = "docs/page.png"
# What docs/page.png shows: the demo's -g capture, a kernel with source lines.
PAGE_CAPTURE, PAGE_KERNEL, PAGE_LINE = "target/demo/capture-g", "scale_v2", "kernels_a.cl:17"
PAGE_FILES = [
    "collector/src/report/export/html.rs",
    "collector/src/report/export/html/template.html",
    "collector/src/report/export/html/page.js",
    "collector/src/report/export/html/page.css",
    "tests/browser/shot.mjs",
]
PNG_KEY = b"xpu-asm-page"


def blocks(text):
    """Each example of `text`: (first line index, last line index + 1,
    whether a marker names its command, [(command, expected lines)])."""
    lines = text.split("\n")
    out, i, mark = [], 0, None
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        if m:
            mark, i = m.group(1), i + 1
            continue
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1 : j]
            if mark is not None:
                out.append((i + 1, j, True, [(mark, body)]))
            elif body and body[0].startswith("$ xpu-asm-run ") and "target/demo/" in body[0]:
                cmds = []
                for line in body:
                    if line.startswith("$ "):
                        cmds.append((line[2:], []))
                    else:
                        cmds[-1][1].append(line)
                out.append((i + 1, j, False, cmds))
            mark, i = None, j + 1
            continue
        if lines[i].strip():
            mark = None
        i += 1
    return out


def run(cmd, demo, last):
    """`cmd`'s output from `demo`, and its exit status; `echo $?` prints `last`'s."""
    if cmd == "echo $?":
        return [str(last)], 0
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    env["PATH"] = os.path.dirname(xpu_asm_run()) + ":" + env.get("PATH", "")
    p = subprocess.run(["bash", "-c", cmd], cwd=demo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace").replace(os.path.realpath(demo), SHOWN_ROOT)
    return text.rstrip("\n").split("\n"), p.returncode


def is_gap(line):
    """`...`, or `... (24 more lines)`: any lines of the output."""
    return re.fullmatch(r"\.\.\.( \(.*\))?", line.strip()) is not None


def matches(want, got):
    """Whether `got` is `want`, each `...` line of `want` standing for any lines."""
    parts = [[]]
    for w in want:
        if is_gap(w):
            parts.append([])
        else:
            parts[-1].append(w.rstrip())
    got = [g.rstrip() for g in got]
    if len(parts) == 1:
        return parts[0] == got
    head, *mid, tail = parts
    if got[: len(head)] != head or (tail and got[len(got) - len(tail) :] != tail):
        return False
    at, end = len(head), len(got) - len(tail)
    if at > end:
        return False
    for m in mid:
        found = next((k for k in range(at, end - len(m) + 1) if got[k : k + len(m)] == m), None)
        if found is None:
            return False
        at = found + len(m)
    return True


def rewritten(want, got):
    """`want` made from `got`: the same `...` lines (a middle part kept as it is), the lines around them
    taken from `got` (as many as `want` had; the whole of it without `...`)."""
    gaps = [w for w in want if is_gap(w)]
    if not gaps:
        return got
    parts = [[]]
    for w in want:
        if is_gap(w):
            parts.append([])
        else:
            parts[-1].append(w)
    head, tail = parts[0], parts[-1]
    new = got[: len(head)]
    for gap, m in zip(gaps, parts[1:-1]):
        new += [gap] + m
    new += [gaps[-1]] + (got[len(got) - len(tail) :] if tail else [])
    return new


def check_doc(rel, demo, write):
    """The differences of one doc's examples; the doc rewritten with `write`."""
    path = os.path.join(ROOT, rel)
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    problems, edits = [], []
    for first, end, marked, cmds in blocks(text):
        body, last, same = [], 0, True
        for cmd, want in cmds:
            got, last = run(cmd, demo, last)
            if not matches(want, got):
                same = False
                diff = "\n".join(difflib.unified_diff(want, got, "the doc", "the output", lineterm="", n=1))
                problems.append(f"{rel}:{first + 1}: `{cmd}` prints otherwise:\n{diff}")
                want = rewritten(want, got)
            body += ([] if marked else [f"$ {cmd}"]) + want
        if not same:
            edits.append((first, end, body))
    if write:
        for first, end, body in reversed(edits):
            lines[first:end] = body
        if edits:
            open(path, "w", encoding="utf-8").write("\n".join(lines))
    return problems


def page_digest(demo):
    """The SHA-256 of what the page's screenshot shows: the page's files and
    the demo's kernels (names, launches, figures)."""
    h = hashlib.sha256()
    for f in PAGE_FILES:
        h.update(f.encode() + b"\0" + open(os.path.join(ROOT, f), "rb").read())
    report = json.load(open(os.path.join(demo, PAGE_CAPTURE, "report.json")))
    kernels = [[k["name"], k["launches"], k["instructions"], k["simd"], k["grf"]] for k in report["kernels"]]
    h.update(json.dumps(kernels).encode())
    return h.hexdigest()


def png_text(path):
    """The PNG's tEXt chunks, by key."""
    data = open(path, "rb").read()
    out, i = {}, 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[i : i + 8])
        if kind == b"tEXt":
            key, _, value = data[i + 8 : i + 8 + n].partition(b"\0")
            out[key] = value.decode("latin-1")
        i += 12 + n
    return out


def with_text(png, key, value):
    """`png` with a tEXt chunk `key`=`value` after its header."""
    body = key + b"\0" + value.encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    end_of_ihdr = 8 + 12 + struct.unpack(">I", png[8:12])[0]
    return png[:end_of_ihdr] + chunk + png[end_of_ihdr:]


def check_page(demo, write):
    """docs/page.png: stale or not; made again with `write`."""
    want = page_digest(demo)
    path = os.path.join(ROOT, PAGE_PNG)
    have = png_text(path).get(PNG_KEY) if os.path.exists(path) else None
    if have == want:
        return []
    if not write:
        return [f"{PAGE_PNG} shows another page or demo (its {PNG_KEY.decode()} is {have}, now {want}): "
                "run scripts/docs-examples.py --write"]
    with tempfile.TemporaryDirectory() as tmp:
        shot = os.path.join(tmp, "page.png")
        browser = os.path.join(ROOT, "tests", "browser")
        if not os.path.isdir(os.path.join(browser, "node_modules", "playwright-core")):
            subprocess.run(["npm", "ci", "--silent"], cwd=browser, check=True)
        page = os.path.join(demo, PAGE_CAPTURE, "report.html")
        subprocess.run(["node", os.path.join(browser, "shot.mjs"), page, shot, PAGE_KERNEL, PAGE_LINE], check=True)
        open(path, "wb").write(with_text(open(shot, "rb").read(), PNG_KEY, want))
    return []


def xpu_asm_run():
    return os.environ.get("XPU_ASM_RUN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "xpu-asm-run")


def main(argv):
    write = "--write" in argv
    demo = argv[argv.index("--demo") + 1] if "--demo" in argv else None
    tmp = None
    if demo is None:
        tmp = tempfile.TemporaryDirectory(prefix="xpu-asm-docs-")
        demo = tmp.name
        env = dict(os.environ, XPU_ASM_RUN=xpu_asm_run())
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo-captures.sh"), "target/demo"],
                       cwd=demo, env=env, check=True, stdout=subprocess.DEVNULL)
    problems = []
    for rel in DOCS:
        problems += check_doc(rel, demo, write)
    problems += check_page(demo, write)
    if write:
        print(f"docs-examples.py: {len(problems)} examples rewritten" if problems else "docs-examples.py: every example matches")
        return 0
    for p in problems:
        print(p, file=sys.stderr)
    print(f"docs-examples.py: {len(problems)} examples differ from the output (scripts/docs-examples.py --write rewrites them)"
          if problems else "docs-examples.py: every example matches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
