#!/usr/bin/env python3
"""Synthetic capture whose launched kernels all come from native modules,
for timing `xpu-asm-run collect` when every kernel's ISA is IGA's
disassembly of a module binary (scripts/bench.sh, section `binaries`).

    gen_native_capture.py cl OUT.cl --kernels K
        writes an OpenCL C file of K kernels named bench_native_<i>, each
        with a few dozen instructions (for ocloc to build once)
    gen_native_capture.py capture DIR --binary BIN --modules M --kernels K
        writes DIR/records (one process, one device: the emulated PVC) and
        DIR/modules: M native modules, each BIN with 8 bytes of its own
        appended (M distinct SHA-256s, the same kernels; ELF readers ignore
        bytes past the sections), every kernel of each launched once

The records are in the interposer's format (docs/internals.md, "Record format").
"""

import hashlib
import json
import os
import struct
import sys


def write_cl(path, kernels):
    with open(path, "w") as f:
        for i in range(kernels):
            f.write(
                f"__kernel void bench_native_{i}(__global float *a, __global const float *b, float s) {{\n"
                "  size_t g = get_global_id(0);\n"
                "  float x = a[g];\n"
                f"  for (int j = 0; j < 4; j++) x = x * s + b[(g + j * {i + 1}) & 1023];\n"
                "  a[g] = x;\n"
                "}\n"
            )


def write_capture(out, binary, modules, kernels):
    blob = open(binary, "rb").read()
    os.makedirs(os.path.join(out, "records"), exist_ok=True)
    os.makedirs(os.path.join(out, "modules"), exist_ok=True)
    host, pid = "bench", 4242
    lines = [
        {
            "record": "xpu-asm",
            "version": 2,
            "type": "process",
            "pid": pid,
            "ppid": 1,
            "host": host,
            "exe": "/bench",
            "cmdline": ["/bench"],
            "dump_dir": f"dumps/{host}-{pid}",
            "forked_from": None,
            "start_unix_ms": 0,
            "env": {},
        },
        {
            "type": "device",
            "id": 1,
            "vendor_id": 0x8086,
            "device_id": 0x0BD5,
            "name": "Intel(R) Graphics [0x0bd5]",
            "ip_version": None,
        },
    ]
    kid = 0
    names = [f"bench_native_{i}" for i in range(kernels)]
    for m in range(1, modules + 1):
        data = blob + struct.pack("<Q", m)
        sha = hashlib.sha256(data).hexdigest()
        with open(os.path.join(out, "modules", f"{sha}.bin"), "wb") as f:
            f.write(data)
        lines.append(
            {
                "type": "module",
                "id": m,
                "format": "native",
                "size": len(data),
                "sha256": sha,
                "build_flags": "",
                "kernel_names": names,
                "device": 1,
                "binary": {"size": len(data), "sha256": sha, "file": f"modules/{sha}.bin"},
            }
        )
        for n in names:
            kid += 1
            lines.append({"type": "kernel", "id": kid, "module": m, "name": n})
    lines.append({"type": "exit", "code": 0})
    with open(os.path.join(out, "records", f"{host}-{pid}.events"), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    with open(os.path.join(out, "records", f"{host}-{pid}.counts"), "wb") as f:
        header = bytearray(64)
        header[:8] = b"XPUCNT01"
        header[8:12] = struct.pack("<I", 2)
        header[12:16] = struct.pack("<I", 32)
        f.write(header)
        f.write(bytes(32))  # slot 0: unknown kernels
        for _ in range(kid):
            f.write(struct.pack("<QQQQ", 1, 0, 0, 0))
    print(f"gen_native_capture: {out}: {modules} native modules, {kid} kernels launched")


def main(argv):
    if len(argv) >= 3 and argv[1] == "cl":
        write_cl(argv[2], int(argv[argv.index("--kernels") + 1]))
    elif len(argv) >= 3 and argv[1] == "capture":
        opt = lambda k: argv[argv.index(k) + 1]
        write_capture(argv[2], opt("--binary"), int(opt("--modules")), int(opt("--kernels")))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
