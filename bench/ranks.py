#!/usr/bin/env python3
"""One job at several rank counts on one host: what its capture holds and
what collecting it costs (scripts/bench.sh, section `ranks`).

Each job is MPICH's `mpiexec.hydra -n N`, one `xpu-asm-run --emulate pvc`
per rank (the per-rank form), every rank running the C workload on the same
module; the last rank to end collects. Then, for each N:

- files and bytes in the capture folder: in all; the per-rank records
  (`records/`, `instances/`); the report (`report.json`, `report.html`,
  a row per process); and the rest (dumps, module binaries, `asm/`, the
  job's files): what must grow with the job's code, not its size;
- `xpu-asm-run collect --quiet` of the capture, timed ROUNDS times (the
  median).

usage: ranks.py --runner LABEL=XPU_ASM_RUN [--runner ...] --workload W
                --spv KERNELS_A_SPV [--ranks 1,8,32,128] [--rounds 3] WORKDIR

Prints a markdown table, then `key=value` lines for bench.sh's results.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

STEPS = ["imm:a:scale:5", "reg:a:scale_v2:1:3"]
PER_RANK = ("records", "instances")
REPORT = ("report.json", "report.html")


def usage(cap):
    """(files, bytes) in all, of the per-rank records, and of the report."""
    total, per_rank, report = [0, 0], [0, 0], [0, 0]
    for d, _, files in os.walk(cap):
        top = os.path.relpath(d, cap).split(os.sep)[0]
        for f in files:
            n = os.lstat(os.path.join(d, f)).st_size
            total[0] += 1
            total[1] += n
            part = per_rank if top in PER_RANK else report if top == "." and f in REPORT else None
            if part is not None:
                part[0] += 1
                part[1] += n
    return total, per_rank, report


def env():
    e = dict(os.environ)
    for k in list(e):
        if k.startswith(("PMI_", "OMPI_", "SLURM_", "I_MPI_", "XPU_ASM_", "IGC_")):
            del e[k]
    e.pop("LD_PRELOAD", None)
    return e


def job(runner, workload, spv, n, cap):
    shutil.rmtree(cap, ignore_errors=True)
    cmd = ["mpiexec.hydra", "-n", str(n), runner, "--emulate", "pvc", "-q", "-o", cap, "--",
           workload, "--via", "ddi", "--module", f"a={spv}"] + STEPS
    start = time.monotonic()
    p = subprocess.run(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit(f"ranks.py: the {n}-rank job failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    return time.monotonic() - start


def collect(runner, cap, rounds):
    times = []
    for _ in range(rounds):
        start = time.monotonic()
        subprocess.run([runner, "collect", "--quiet", cap], env=env(), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.monotonic() - start)
    return statistics.median(times)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--runner", action="append", required=True)
    a.add_argument("--workload", required=True)
    a.add_argument("--spv", required=True)
    a.add_argument("--ranks", default="1,8,32,128")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("work")
    o = a.parse_args()
    ranks = [int(r) for r in o.ranks.split(",")]
    rows, kv = [], []
    for spec in o.runner:
        label, runner = spec.split("=", 1)
        base = None
        for n in ranks:
            cap = os.path.join(o.work, f"{label}-{n}")
            wall = job(runner, o.workload, o.spv, n, cap)
            (files, size), (rfiles, rsize), (pfiles, psize) = usage(cap)
            secs = collect(runner, cap, o.rounds)
            dumps = len(os.listdir(os.path.join(cap, "dumps"))) if os.path.isdir(os.path.join(cap, "dumps")) else 0
            of, ob = files - rfiles - pfiles, size - rsize - psize
            if base is None:
                base = (of, ob, secs)
            rows.append((label, n, files, size, rfiles, rsize, psize, of, ob, dumps,
                         of / base[0], ob / base[1], secs, secs / base[2], wall))
            for k, v in [("files", files), ("bytes", size), ("rank_files", rfiles), ("rank_bytes", rsize),
                         ("report_bytes", psize),
                         ("dump_folders", dumps), ("collect_s", f"{secs:.3f}"), ("job_s", f"{wall:.1f}")]:
                kv.append(f"ranks_{label}_{n}_{k}={v}")
            shutil.rmtree(cap, ignore_errors=True)
    print("| xpu-asm | ranks | files | bytes | per-rank records: files, bytes | report bytes | the rest: files, bytes | dump folders | the rest vs 1 rank: files, bytes | collect (median) | vs 1 rank | job wall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (label, n, f, b, rf, rb, pb, of, ob, d, fr, br, s, sr, w) in rows:
        print(f"| {label} | {n} | {f} | {b:,} | {rf}, {rb:,} | {pb:,} | {of}, {ob:,} | {d} | {fr:.2f}, {br:.2f} | {s:.3f} s | {sr:.2f} | {w:.0f} s |")
    print()
    print("\n".join(kv))


if __name__ == "__main__":
    main()
