// Module "a". The names cover the cases a matcher gets wrong: a SYCL-style
// typeinfo name, a name that is a prefix of another (scale / scale_v2), and a
// name that module "b" also defines with a different body (common_kernel).

__kernel void _ZTSZ4mainE10vector_add(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] + 1.0f;
}

__kernel void scale(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * 2.0f;
}

__kernel void scale_v2(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * 3.0f + 0.5f;
}

__kernel void common_kernel(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] - 1.0f;
}
