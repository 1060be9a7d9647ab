// Kernels of the launch-loop benchmark: four small ones, launched round-robin
// so that the interposer sees distinct kernel handles as real programs do.
__kernel void bench_add(__global float *x) { x[get_global_id(0)] += 1.0f; }
__kernel void bench_mul(__global float *x) { x[get_global_id(0)] *= 2.0f; }
__kernel void bench_sub(__global float *x) { x[get_global_id(0)] -= 1.0f; }
__kernel void bench_fma(__global float *x) { size_t i = get_global_id(0); x[i] = x[i] * 3.0f + 0.5f; }
