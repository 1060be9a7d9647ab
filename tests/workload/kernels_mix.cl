// Module "mix": kernels whose instruction mix is known, for the tests of
// `kernels[].mix` and `show`. Each kernel stresses one class.

// A loop of multiply-adds (x = x * a + b), unrolled by 8: mad instructions.
__kernel void mix_mad_loop(__global float *x, float a, float b, int n) {
    size_t i = get_global_id(0);
    float v = x[i];
    for (int r = 0; r < n; r++) {
#pragma unroll
        for (int k = 0; k < 8; k++)
            v = mad(v, a, b);
    }
    x[i] = v;
}

// Atomics on global memory: an atomic add and an atomic max.
__kernel void mix_atomics(__global int *counter, __global int *peak, __global const int *x) {
    size_t i = get_global_id(0);
    atomic_add(counter, 1);
    atomic_max(peak, x[i]);
}

// Shared local memory: a work-group's values staged in SLM, a barrier, then
// each work-item reads its neighbour's.
__kernel void mix_slm(__global float *x, __local float *tile) {
    size_t l = get_local_id(0);
    size_t n = get_local_size(0);
    tile[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    x[get_global_id(0)] = tile[(l + 1) % n];
}

// A large private array indexed at run time: it cannot live in registers,
// so IGC puts it in scratch (private) memory.
__kernel void mix_scratch(__global float *x, __global const int *idx) {
    size_t i = get_global_id(0);
    float a[256];
    for (int k = 0; k < 256; k++)
        a[k] = x[i + k];
    x[i] = a[idx[i] & 255] + a[idx[i + 1] & 255];
}

// More live values than registers: IGC spills some to scratch and fills
// them back. Every index is known at compile time, so that acc[] lives in
// registers (IGC 2 keeps an array indexed at run time in private memory
// instead, and spills nothing).
#define N 60
__kernel void mix_spill(__global float *a, __global float *out, int n) {
    size_t gid = get_global_id(0);
    float acc[N];
#pragma unroll
    for (int i = 0; i < N; i++)
        acc[i] = a[gid * N + i];
    for (int r = 0; r < n; r++) {
#pragma unroll
        for (int i = 0; i < N; i++)
            acc[i] = acc[i] * acc[(i * 7 + 3) % N] + acc[(i + 1) % N];
    }
    float s = 0;
#pragma unroll
    for (int i = 0; i < N; i++)
        s += acc[i] * (float)i;
    out[gid] = s;
}
