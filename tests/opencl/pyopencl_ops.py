"""The pyopencl test's workload (tests/tests/pyopencl.rs): two programs built
from source, each with a kernel named py_common (different bodies), and a
known number of enqueues of each kernel through pyopencl, which reaches NEO
through the ICD loader its wheel bundles. Prints "ok" at the end.

Usage: pyopencl_ops.py N_SCALE N_COMMON_A N_COMMON_B
"""
import sys

import numpy as np
import pyopencl as cl

A = """
kernel void py_scale(global float *x) { x[get_global_id(0)] *= 2.0f; }
kernel void py_common(global float *x) { x[get_global_id(0)] += 1.0f; }
"""
B = """
kernel void py_common(global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * 3.0f - 1.0f;
}
"""


def main():
    n_scale, n_common_a, n_common_b = (int(a) for a in sys.argv[1:4])
    ctx = cl.Context(dev_type=cl.device_type.GPU)
    queue = cl.CommandQueue(ctx)
    a = cl.Program(ctx, A).build()
    b = cl.Program(ctx, B).build()
    host = np.ones(256, np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    for prg, name, n in ((a, "py_scale", n_scale), (a, "py_common", n_common_a), (b, "py_common", n_common_b)):
        kernel = getattr(prg, name)
        for _ in range(n):
            kernel(queue, (64,), None, buf)
    cl.enqueue_copy(queue, host, buf)
    queue.finish()
    print("ok")


if __name__ == "__main__":
    main()
