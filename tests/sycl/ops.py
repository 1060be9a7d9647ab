"""Workload for xpu-asm's SYCL runtime test (tests/tests/sycl.rs).

Runs real prebuilt SYCL kernels from PyPI (dpctl 0.15.0 on the 2024.0 DPC++
runtime) through the SYCL Level Zero backend (or its OpenCL backend, with
ONEAPI_DEVICE_SELECTOR=opencl:gpu): a fixed number of calls of a few
dpctl.tensor operations, each of which launches its own `_ZTS...` kernel(s),
JIT-compiled from SPIR-V by the driver at first use.

    python ops.py N            every operation N times
    python ops.py N add=3 ...  every operation N times, except add 3 times

Operations: add, sin, sum, where, astype (see OPS). The script prints one
`called <op> <times>` line per operation, then `device <name>`, and exits 0.

Which kernels each call launches is decided by dpctl's C++ code, not here;
tests/tests/sycl.rs lists them and explains why. What the script does to keep
that list exact:

* The inputs are float32 (plus one bool mask), contiguous and of one shape, so
  every elementwise operation takes dpctl's "contig" kernel, one launch per
  call, with no broadcasting or strided copies.
* The inputs come from NumPy through dpt.asarray: a host-to-device memcpy,
  no kernel. Nothing is copied back (dpt.asnumpy would be a memcpy too, but
  nothing needs it: under NEO's no-hardware mode no kernel really runs).
* dpt.sum gets dtype=float32: without it the accumulator type depends on the
  device's fp64 support (float64 when present), and so would the kernel names.
* N_ELEMS is far above any work-group size, so dpt.sum takes the
  fill-then-atomic-reduction path (two launches per call), never the
  sequential one dpctl uses for reductions shorter than a work-group.
"""

import os
import sys

import numpy as np

import dpctl
import dpctl.tensor as dpt

N_ELEMS = 1 << 16

OPS = ("add", "sin", "sum", "where", "astype")


def parse(argv):
    if not argv:
        sys.exit(f"usage: {sys.argv[0]} N [op=TIMES ...]; ops: {', '.join(OPS)}")
    try:
        default = int(argv[0])
    except ValueError:
        sys.exit(f"{sys.argv[0]}: N must be an integer, got {argv[0]!r}")
    times = {op: default for op in OPS}
    for a in argv[1:]:
        op, sep, n = a.partition("=")
        if not sep or op not in OPS or not n.isdigit():
            sys.exit(
                f"{sys.argv[0]}: bad argument {a!r}; "
                f"expected op=TIMES, op one of {', '.join(OPS)}"
            )
        times[op] = int(n)
    return times


def main():
    times = parse(sys.argv[1:])
    # The backend of ONEAPI_DEVICE_SELECTOR (Level Zero unless it says
    # opencl:gpu).
    selector = os.environ.get("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
    backend = dpctl.backend_type.opencl if selector.startswith("opencl") else dpctl.backend_type.level_zero
    q = dpctl.SyclQueue(selector)
    if q.sycl_device.backend != backend:
        sys.exit(f"{sys.argv[0]}: expected a device of {backend}, got {q.sycl_device}")

    x = dpt.asarray(np.linspace(0.0, 1.0, N_ELEMS, dtype=np.float32), sycl_queue=q)
    y = dpt.asarray(np.full(N_ELEMS, 2.0, dtype=np.float32), sycl_queue=q)
    mask = dpt.asarray(np.arange(N_ELEMS) % 3 == 0, sycl_queue=q)

    calls = {
        "add": lambda: dpt.add(x, y),
        "sin": lambda: dpt.sin(x),
        "sum": lambda: dpt.sum(x, dtype=dpt.float32),
        "where": lambda: dpt.where(mask, x, y),
        "astype": lambda: dpt.astype(x, dpt.int32),
    }
    for op in OPS:
        for _ in range(times[op]):
            calls[op]()
        print(f"called {op} {times[op]}", flush=True)
    q.wait()
    print(f"device {q.sycl_device.name}", flush=True)


if __name__ == "__main__":
    main()
