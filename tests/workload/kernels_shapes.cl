// The launch shapes workload's kernels (tests/workload/shapes.c): each
// launched with shapes of its own, so that every shape's count is exact.

__kernel void sh_1d(__global float *x) { x[get_global_id(0)] += 1.0f; }

__kernel void sh_2d(__global float *x, int w) {
    x[get_global_id(1) * w + get_global_id(0)] += 2.0f;
}

__kernel void sh_3d(__global float *x) {
    size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) +
               get_global_id(0);
    x[i] += 3.0f;
}

// Dynamic local memory (argument 1) and a pointer argument that the
// program sets to NULL (argument 2): only the first is local memory.
__kernel void sh_slm(__global float *x, __local float *tmp, __global float *maybe) {
    size_t l = get_local_id(0);
    tmp[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    x[get_global_id(0)] = tmp[get_local_size(0) - 1 - l] + (maybe ? maybe[0] : 0.0f);
}

// Static local memory (1 KiB) and a barrier.
__kernel void sh_static(__global float *x) {
    __local float buf[256];
    size_t l = get_local_id(0);
    buf[l % 256] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    x[get_global_id(0)] = buf[(l + 1) % 256];
}

__kernel void sh_regular(__global float *x) { x[get_global_id(0)] *= 2.0f; }
__kernel void sh_indirect(__global float *x) { x[get_global_id(0)] *= 3.0f; }
__kernel void sh_coop(__global float *x) { x[get_global_id(0)] *= 4.0f; }
__kernel void sh_many(__global float *x) { x[get_global_id(0)] *= 5.0f; }
