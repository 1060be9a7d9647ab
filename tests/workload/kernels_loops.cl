// Module "loops": kernels whose loops are known, for the tests of
// `kernels[].flow`. Each loop is kept rolled (`#pragma unroll 1`) so that
// IGC leaves one loop in the code for each in the source.

// No loop.
__kernel void loop_none(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * 2.0f + 1.0f;
}

// One loop (lines 16-17).
__kernel void loop_one(__global float *x, int n) {
    size_t i = get_global_id(0);
    float v = x[i];
#pragma unroll 1
    for (int k = 0; k < n; k++)
        v = v * x[i + k] + 1.0f;
    x[i] = v;
}

// Two loops, one inside the other (outer lines 26-31, inner 28-29).
__kernel void loop_nested(__global float *x, int n, int m) {
    size_t i = get_global_id(0);
    float v = 0.0f;
#pragma unroll 1
    for (int a = 0; a < n; a++) {
#pragma unroll 1
        for (int b = 0; b < m; b++)
            v += x[i + a * m + b];
        v *= 0.5f;
    }
    x[i] = v;
}
