#!/usr/bin/env python3
"""Checks the project's documentation (README.md and docs/*.md).

    scripts/check-docs.py                 links: every relative link and #anchor
                                          in README.md and docs/*.md resolves, and
                                          every docs/*.md the repository's files
                                          name exists
    scripts/check-docs.py --against REV   also: nothing of README.md at git
                                          revision REV is lost, i.e. each of its
                                          code lines, table rows and sentences is
                                          somewhere in README.md or docs/*.md,
                                          and each code block whole
                                          (compared with links reduced to their
                                          text, quotes dropped and whitespace
                                          collapsed, so re-wrapped prose matches)

Prints what does not hold and exits 1, else prints a summary and exits 0.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z`*(\[])")


def doc_files():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def anchor(text):
    """GitHub's anchor for a heading's text."""
    text = LINK.sub(r"\1", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    in_fence = False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else HEADING.match(line)
        if m:
            a = anchor(m.group(2))
            n = seen.get(a, 0)
            seen[a] = n + 1
            out.add(a if n == 0 else f"{a}-{n}")
    return out


def check_links():
    problems = []
    count = 0
    for path in doc_files():
        in_fence = False
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for m in LINK.finditer(line):
                target = m.group(2)
                if re.match(r"^[a-z]+:", target):
                    continue
                count += 1
                file, _, frag = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                where = f"{path.relative_to(ROOT)}:{no}: {target}"
                if not dest.exists():
                    problems.append(f"{where}: no such file")
                elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                    problems.append(f"{where}: no heading with anchor #{frag}")
    # Files of the repository that point into docs/.
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in tracked:
        p = ROOT / name
        if p.suffix not in {".rs", ".sh", ".py", ".c", ".md", ".toml", ".cl"}:
            continue
        try:
            text = p.read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for m in re.finditer(r"\bdocs/[A-Za-z0-9_.-]+\.md\b", text):
            count += 1
            if not (ROOT / m.group(0)).exists():
                problems.append(f"{name}: names {m.group(0)}, which does not exist")
    return count, problems


def norm(text, prose):
    if prose:
        text = LINK.sub(r"\1", text)
        text = text.replace('"', "")
    return " ".join(text.split())


def units(text):
    """(kind, normalized text) for each code block, code line, table row,
    heading and sentence of a markdown text."""
    out = []
    para = []

    def flush():
        if para:
            joined = " ".join(para)
            for s in SENTENCE_END.split(joined):
                if s.strip():
                    out.append(("sentence", norm(s, True)))
            para.clear()

    in_fence = False
    block = []
    for line in text.splitlines():
        if FENCE.match(line):
            flush()
            if in_fence and block:
                # The whole block too: a line that occurs twice in it is
                # found alone even when one of its two copies is lost.
                out.append(("code block", " \n ".join(block)))
            block = []
            in_fence = not in_fence
            continue
        if in_fence:
            if line.strip():
                out.append(("code", norm(line, False)))
                block.append(norm(line, False))
            continue
        if not line.strip():
            flush()
            continue
        m = HEADING.match(line)
        if m:
            flush()
            out.append(("heading", norm(m.group(2), True)))
            continue
        if line.lstrip().startswith("|"):
            flush()
            if not TABLE_RULE.match(line):
                out.append(("table row", norm(line, True)))
            continue
        if ITEM.match(line):
            flush()
            line = ITEM.sub("", line, count=1)
        para.append(line)
    flush()
    return out


def corpus():
    parts = []
    for path in doc_files():
        text = path.read_text()
        # The same units, so that a unit split differently (a sentence
        # re-wrapped, a list item turned into prose) still matches.
        parts.extend(u for _, u in units(text))
    headings = set()
    for path in doc_files():
        headings |= {u for k, u in units(path.read_text()) if k == "heading"}
    return " \n ".join(parts), " ".join(parts), headings


def check_against(rev):
    old = subprocess.run(
        ["git", "show", f"{rev}:README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    by_unit, joined, headings = corpus()
    missing = []
    total = 0
    for kind, u in units(old):
        total += 1
        if kind == "heading":
            if u in headings:
                continue
        elif u in by_unit or u in joined:
            continue
        missing.append(f"{kind}: {u}")
    return total, missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", metavar="REV", help="git revision of an earlier README.md")
    args = ap.parse_args()
    failed = False
    count, problems = check_links()
    for p in problems:
        print(f"link: {p}")
    failed |= bool(problems)
    print(f"links: {count} checked, {len(problems)} broken")
    if args.against:
        total, missing = check_against(args.against)
        for m in missing:
            print(f"not found: {m}")
        failed |= bool(missing)
        print(
            f"README.md at {args.against}: {total} code blocks, code lines, table "
            f"rows, headings and sentences; {total - len(missing)} found, {len(missing)} not found"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
