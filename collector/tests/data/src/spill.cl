// Spills at SIMD32 on dg2: IGC finishes SIMD8, then retries the module
// and keeps the retry's SIMD32 code.
#define N 64
__kernel void heavy(__global float *a, __global float *out, int n) {
  size_t gid = get_global_id(0);
  float acc[N];
  #pragma unroll
  for (int i = 0; i < N; i++) acc[i] = a[gid * N + i];
  for (int r = 0; r < n; r++) {
    #pragma unroll
    for (int i = 0; i < N; i++) acc[i] = acc[i] * acc[(i * 7 + r) % N] + acc[(i+1)%N];
  }
  float s = 0;
  #pragma unroll
  for (int i = 0; i < N; i++) s += acc[i] * (float)i;
  out[gid] = s;
}
