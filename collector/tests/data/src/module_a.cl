// Two kernels, one name a prefix of the other's.
__kernel void vector_add(__global const float *a, __global const float *b, __global float *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void vector_add_scaled(__global const float *a, __global const float *b, __global float *c, float s) {
  size_t i = get_global_id(0);
  c[i] = s * (a[i] + b[i]);
}
