#!/usr/bin/env python3
"""Instructions a hook adds per launch, from two callgrind profiles.

    callgrind_summary.py BASE.out WITH.out --launches N [--top 15] [--label X]

Both profiles come from the same launch_loop phase run with callgrind's
--toggle-collect=<loop function>, BASE without any hook and WITH under one,
so each holds exactly the instructions of the measured loop. Prints:

    RESULT <label>_base_ir=...        instructions of the loop, BASE
    RESULT <label>_with_ir=...        instructions of the loop, WITH
    RESULT <label>_added_per_launch=  (WITH - BASE) / N
    RESULT <label>_ob_<object>=       self instructions per launch added in
                                      that object file (WITH - BASE) / N

and, as the profile of what was added, the self instructions per launch by
object file and by function where WITH and BASE differ, biggest first.
Reads the callgrind format directly (name compression, subpositions, the
inclusive cost lines after calls= that are not self cost).
"""

import argparse
import collections
import re
import sys


def parse(path):
    """Self Ir by (object, function), and the total."""
    names = {"ob": {}, "fn": {}, "fl": {}}
    cur = {"ob": "?", "fn": "?"}
    npos = 1
    self_cost = collections.Counter()
    total = 0
    skip_next = False
    name_re = re.compile(r"^(c?)(ob|fn|fl|fi|fe)=(?:\((\d+)\))?\s*(.*)$")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if skip_next:
                # The inclusive cost of the call just announced: not self cost.
                skip_next = False
                continue
            if line.startswith("positions:"):
                npos = len(line.split()[1:])
                continue
            c0 = line[0]
            if c0.isdigit() or c0 in "+-*":
                fields = line.split()
                if len(fields) > npos:
                    v = int(fields[npos])
                    self_cost[(cur["ob"], cur["fn"])] += v
                    total += v
                continue
            if line.startswith("calls="):
                skip_next = True
                continue
            m = name_re.match(line)
            if m:
                callee, kind, ident, name = m.groups()
                table = names["fl" if kind in ("fl", "fi", "fe") else kind]
                if ident is not None:
                    if name:
                        table[ident] = name
                    name = table.get(ident, name)
                if not callee and kind in ("ob", "fn"):
                    cur[kind] = name
    return self_cost, total


def short_ob(ob):
    return ob.rsplit("/", 1)[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("with_")
    ap.add_argument("--launches", type=int, required=True)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--label", default="cg")
    ap.add_argument("--quiet", action="store_true", help="only the RESULT lines")
    a = ap.parse_args()

    base, base_total = parse(a.base)
    with_, with_total = parse(a.with_)
    n = a.launches
    added = (with_total - base_total) / n
    print(f"RESULT {a.label}_base_ir={base_total}")
    print(f"RESULT {a.label}_with_ir={with_total}")
    print(f"RESULT {a.label}_added_per_launch={added:.1f}")
    by_ob = collections.Counter()
    for (ob, _), v in with_.items():
        by_ob[ob] += v
    for (ob, _), v in base.items():
        by_ob[ob] -= v
    for ob, v in by_ob.items():
        if abs(v) / n >= 0.05:
            print(f"RESULT {a.label}_ob_{short_ob(ob)}={v / n:.1f}")
    if a.quiet:
        return 0

    print(f"  instructions per launch: {base_total / n:.1f} without, {with_total / n:.1f} with, "
          f"{added:+.1f} added")
    print("  added, by object file (self instructions per launch, WITH - BASE):")
    for ob, v in sorted(by_ob.items(), key=lambda kv: -abs(kv[1])):
        if abs(v) / n >= 0.05:
            print(f"    {v / n:+9.1f}  {short_ob(ob)}")
    delta = collections.Counter(with_)
    delta.subtract(base)
    print(f"  added, by function (top {a.top}):")
    rows = sorted(delta.items(), key=lambda kv: -abs(kv[1]))[: a.top]
    for (ob, fn), v in rows:
        if abs(v) / n < 0.05:
            continue
        fn_s = fn if len(fn) <= 110 else fn[:107] + "..."
        print(f"    {v / n:+9.1f}  {fn_s}  [{short_ob(ob)}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
