#!/usr/bin/env python3
"""Writes a synthetic xpu-asm capture folder for benchmarking the collector.

The folder looks like what `xpu-asm-run -o DIR -- CMD` leaves after a large
run: per process, a record (records/H-P.events, records/H-P.counts, in the
format of record/src/lib.rs) and an IGC dump folder (dumps/H-P/) holding one
OCL_asm<hash>.spv per module and one OCL_asm<hash>_simd32_entry_NNNN.asm per
kernel, with a header like IGC 1.0.12504's and a body of instruction lines.

    gen_capture.py DIR [--processes 10] [--modules 100] [--kernels 100]
                       [--body-lines 200] [--launched 1.0] [--spv-bytes 32768]
                       [--no-dumps] [--job RANKS_PER_HOST]

--modules is per process and --kernels per module: the defaults give 10
processes, 1,000 modules and 100,000 .asm files. --launched is the fraction
of each module's kernels that the records show created and launched (the rest
were compiled, as IGC compiles every kernel of a module, but never used).

--no-dumps writes the records only (the dumps of the same arguments are the
same files, so a script can link them in from another folder).

--job N makes the processes the ranks of one SPMD job (Open MPI's variables
in each record's `job`), N ranks per host (hosts node000, node001, ...):
every rank compiles and launches the same modules and kernels (so its dumps
are the same files), and files are named as the interposer names them, with
a per-process token.

Deterministic: the same arguments give the same folder. Prints a summary line.
"""

import argparse
import hashlib
import json
import os
import random
import struct
import sys

HOST = "benchhost"
VERSION = 2
COUNTS_MAGIC = b"XPUCNT01"
COUNTS_HEADER_LEN = 64
COUNTS_SLOT_LEN = 32

# Instruction lines in the style of IGC's PVC .asm output.
OPS = [
    "(W)     mov (16|M0)              r{a}.0<1>:ud  0x0:ud",
    "        add (32|M0)              r{a}.0<1>:f   r{b}.0<1;1,0>:f   r{c}.0<1;1,0>:f",
    "        mad (32|M0)              r{a}.0<1>:f   r{b}.0<1;0>:f     r{c}.0<1;0>:f     r{d}.0<1;0>:f",
    "(W)     and (1|M0)               r{a}.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud",
    "        shl (32|M0)              r{a}.0<1>:q   r{b}.0<1;1,0>:d   2:w",
    "        load.ugm.d32.a64 (32|M0)  r{a}:2       [r{b}:4]           {{A@1,$1}}",
    "        store.ugm.d32.a64 (32|M0) [r{a}:4]     r{b}:2             {{A@1,$2}}",
    "(W)     send.gtwy (1|M0)         null     r{a}    null:0  0x0  0x02000010  {{EOT,A@1}}",
    "        sync.nop                 null                             {{Compacted,$1.dst}}",
    "(f0.0)  sel (32|M0)              r{a}.0<1>:f   r{b}.0<1;1,0>:f   r{c}.0<1;1,0>:f",
    "        math.inv (32|M0)         r{a}.0<1>:f   r{b}.0<1;1,0>:f",
    "(W)     mov (8|M0)               r{a}.0<1>:ud  r{b}.0<1;1,0>:ud",
]


def kernel_name(p, m, k):
    """SYCL/ATen-like mangled names; kernel 7 of a module is a prefix of
    kernel 17's (the case a substring match gets wrong)."""
    if k % 10 == 7 and k >= 17:
        base = k - 10
        return f"_ZTSN2at6native12_GLOBAL__N_112reduce_k{p}m{m}k{base}E_v2"
    if k % 10 == 7:
        return f"_ZTSN2at6native12_GLOBAL__N_112reduce_k{p}m{m}k{k}E"
    return (
        f"_ZTSZZN2at6native12_GLOBAL__N_117gemm_kernel_implILi{p}ELi{m}ELi{k}EEEvRNS_6Tensor"
        f"EENKUlRN4sycl3_V17handlerEE_clES8_EUlNS6_7nd_itemILi1EEEE_"
    )


def body_pool(rng, lines, variants=64):
    pool = []
    for _ in range(variants):
        out = []
        for i in range(lines):
            op = rng.choice(OPS).format(
                a=rng.randrange(1, 127), b=rng.randrange(1, 127),
                c=rng.randrange(1, 127), d=rng.randrange(1, 127))
            out.append(f"{op:<100}// ${i}\n")
        pool.append("".join(out))
    return pool


def asm_text(name, inst, body):
    return (
        f"//.kernel {name}\n"
        "//.platform PVCXT\n"
        "//.thread_config numGRF=128, numAcc=4, numSWSB=16\n"
        '//.options_string ""\n'
        '//.full_options "-emitLocation -hasRNEandDenorm -noStitchExternFunc '
        '-crossThreadDataAlignment 32 -linker 0 -preserver0 -TotalGRFNum 128 -abortOnSpill 4 '
        '-boundsChecking -presched-ctrl 6 -presched-rp 100 -nodpsendreorder -SBIDDepLoc -output '
        '-binary -dumpcommonisa -dumpvisa -printHexFloatInAsm -noverifyCISA -enableHalfLSC "\n'
        f"//.instCount {inst}\n"
        "//.RA type\tLOCAL_ROUND_ROBIN_RA\n"
        "\n"
        "//.declare BuiltInR0 (0)  rf=r size=64 type=ud align=32 words (r0.0)\n"
        "//.declare %null (9)  rf=r size=4 type=ud align=2 words\n"
        "\n"
        "// B000: Preds:{},  Succs:{B001}\n"
        "per_thread_prolog:\n"
        f"{body}"
    )


def js(s):
    return json.dumps(s, ensure_ascii=False, separators=(",", ":"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--processes", type=int, default=10)
    ap.add_argument("--modules", type=int, default=100, help="modules per process")
    ap.add_argument("--kernels", type=int, default=100, help="kernels per module")
    ap.add_argument("--body-lines", type=int, default=200)
    ap.add_argument("--launched", type=float, default=1.0,
                    help="fraction of each module's kernels created and launched")
    ap.add_argument("--spv-bytes", type=int, default=32768)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-dumps", action="store_true", help="write the records only")
    ap.add_argument("--job", type=int, default=0, metavar="RANKS_PER_HOST",
                    help="the processes are the ranks of one job, this many per host")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    pool = body_pool(rng, a.body_lines)
    records = os.path.join(a.dir, "records")
    os.makedirs(records, exist_ok=True)
    n_asm = n_bytes = n_launched = 0
    for p in range(a.processes):
        pid = 40000 + p
        host, stem = HOST, f"{HOST}-{pid}"
        job = None
        if a.job:
            host = f"node{p // a.job:03d}"
            stem = f"{host}-{pid}-{p:08x}"
            job = {"launcher": "openmpi", "rank": p, "local_rank": p % a.job,
                   "size": a.processes, "id": "openmpi:1"}
        # The same program on every rank: the same modules and kernels.
        q = 0 if a.job else p
        dump_rel = f"dumps/{stem}"
        dump = os.path.join(a.dir, dump_rel)
        if not a.no_dumps:
            os.makedirs(dump, exist_ok=True)
        header = {
            "record": "xpu-asm", "version": VERSION, "type": "process", "pid": pid,
            "ppid": 39999, "host": host, "exe": "/usr/bin/python3",
            "cmdline": ["python3", "train.py", f"--rank={p}"], "dump_dir": dump_rel,
            "forked_from": None, "start_unix_ms": 1700000000000 + p, "job": job,
            "env": {
                "IGC_ShaderDumpEnable": {"value": "1", "set_by": "xpu-asm"},
                "IGC_DumpToCustomDir": {"value": dump_rel, "set_by": "xpu-asm"},
                "NEO_CACHE_PERSISTENT": {"value": "0", "set_by": "xpu-asm"},
                "SYCL_CACHE_PERSISTENT": {"value": "0", "set_by": "xpu-asm"},
            },
        }
        events = [json.dumps(header, separators=(",", ":"))]
        counts = []  # (launches, appended) per kernel id, from id 1
        next_kernel = 1
        for m in range(a.modules):
            mod_id = m + 1
            # The module's SPIR-V: magic, then bytes unique to this module.
            seed = hashlib.sha256(f"{a.seed}/{q}/{m}".encode()).digest()
            spv = struct.pack("<I", 0x07230203) + (seed * (a.spv_bytes // 32 + 1))[: a.spv_bytes - 4]
            sha = hashlib.sha256(spv).hexdigest()
            igc_hash = hashlib.sha1(spv).hexdigest()[:16]
            if not a.no_dumps:
                with open(os.path.join(dump, f"OCL_asm{igc_hash}.spv"), "wb") as f:
                    f.write(spv)
            names = [kernel_name(q, m, k) for k in range(a.kernels)]
            events.append(
                '{"type":"module","id":%d,"format":"spirv","size":%d,"sha256":%s,'
                '"build_flags":"","kernel_names":[%s]}'
                % (mod_id, len(spv), js(sha), ",".join(js(n) for n in names)))
            n_launch = round(a.kernels * a.launched)
            for k, name in enumerate(names):
                if not a.no_dumps:
                    # A job's ranks compile the same SPIR-V: the same ISA.
                    c = q if a.job else p
                    text = asm_text(name, 40 + (c * 7 + m * 13 + k) % 900,
                                    pool[(c * 31 + m * 7 + k) % len(pool)])
                    path = os.path.join(dump, f"OCL_asm{igc_hash}_simd32_entry_{k + 1:04d}.asm")
                    with open(path, "w") as f:
                        f.write(text)
                    n_asm += 1
                    n_bytes += len(text)
                if k < n_launch:
                    kid = next_kernel
                    next_kernel += 1
                    events.append('{"type":"kernel","id":%d,"module":%d,"name":%s}'
                                  % (kid, mod_id, js(name)))
                    launches = 1 + (kid * 2654435761) % 100000
                    counts.append((launches, launches))
                    n_launched += 1
        events.append('{"type":"exit","code":0}')
        with open(os.path.join(records, f"{stem}.events"), "w") as f:
            f.write("\n".join(events) + "\n")
        head = bytearray(COUNTS_HEADER_LEN)
        head[:8] = COUNTS_MAGIC
        head[8:12] = struct.pack("<I", VERSION)
        head[12:16] = struct.pack("<I", COUNTS_SLOT_LEN)
        slots = bytearray(COUNTS_SLOT_LEN)  # kernel id 0: unknown kernels
        for l, ap_ in counts:
            # immediate, regular_appended, regular_launched, reserved
            slots += struct.pack("<QQQQ", 0, ap_, l, 0)
        with open(os.path.join(records, f"{stem}.counts"), "wb") as f:
            f.write(bytes(head) + bytes(slots))
    print(f"gen_capture: {a.dir}: {a.processes} processes, {a.processes * a.modules} modules, "
          f"{n_asm} .asm files ({n_bytes / 1e6:.0f} MB), {n_launched} kernels launched")


if __name__ == "__main__":
    sys.exit(main())
