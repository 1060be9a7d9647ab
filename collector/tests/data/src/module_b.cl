// A second module with a kernel of the same name as module_a's, other code.
__kernel void vector_add(__global float *a, __global const float *b) {
  size_t i = get_global_id(0);
  a[i] = a[i] * 2.0f + b[i];
}
__kernel void light(__global float *a) { a[get_global_id(0)] += 1.0f; }
