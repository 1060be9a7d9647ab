"""Workload for xpu-asm's SYCL 2026 test (tests/tests/sycl2026.rs).

Runs real prebuilt SYCL kernels from PyPI (dpnp 0.20.0 and dpctl 0.22.1 on
oneAPI 2026.2's SYCL runtime, oneMKL among them) through SYCL's Level Zero
adapters: a fixed number of calls of a few dpnp operations, each of which
launches its own `_ZTS...` kernel(s). dpnp's own kernels are JIT-compiled
from SPIR-V by the driver at first use; oneMKL's come as it ships them.

    python dpnp_ops.py N            every operation N times
    python dpnp_ops.py N add=3 ...  every operation N times, except add 3 times

Operations: see OPS. The script prints one `called <op> <times>` line per
operation, then `device <name>` and `preload <LD_PRELOAD>` (the order in
which the interposer and the test's shim came in), and exits 0.

Which kernels each call launches is decided by dpnp's and oneMKL's code, not
here; the test counts them independently (the Unified Runtime's tracing
layer) and compares. What the script does to keep the runs alike:

* The inputs are float32 (plus one bool mask), contiguous and of one shape,
  so that every elementwise operation takes its contiguous kernel, with no
  broadcasting or strided copies.
* The inputs come from NumPy through dpnp.asarray: host-to-device copies.
  Nothing is copied back: under NEO's no-hardware mode no kernel really runs.
* dpnp.sum gets dtype=float32: without it the accumulator type depends on
  the device's fp64 support, and so would the kernel names.
"""

import os
import sys

import numpy as np

import dpctl
import dpnp

N_ELEMS = 1 << 16
MATMUL_N = 64

OPS = ("matmul", "add", "sin", "sum", "where", "astype")


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

    def dev(a):
        return dpnp.asarray(a, sycl_queue=q)

    x = dev(np.linspace(0.0, 1.0, N_ELEMS, dtype=np.float32))
    y = dev(np.full(N_ELEMS, 2.0, dtype=np.float32))
    mask = dev(np.arange(N_ELEMS) % 3 == 0)
    a = dev(np.ones((MATMUL_N, MATMUL_N), dtype=np.float32))
    b = dev(np.full((MATMUL_N, MATMUL_N), 0.5, dtype=np.float32))

    calls = {
        "add": lambda: dpnp.add(x, y),
        "sin": lambda: dpnp.sin(x),
        "sum": lambda: dpnp.sum(x, dtype=dpnp.float32),
        "where": lambda: dpnp.where(mask, x, y),
        "astype": lambda: dpnp.astype(x, dpnp.int32),
        "matmul": lambda: dpnp.matmul(a, b),
    }
    for op in OPS:
        for _ in range(times[op]):
            calls[op]()
        print(f"called {op} {times[op]}", flush=True)
    q.wait()
    print(f"device {q.sycl_device.name}", flush=True)
    print(f"preload {os.environ.get('LD_PRELOAD', '')}", flush=True)


if __name__ == "__main__":
    main()
