// The OpenCL workload's program built from source (tests/workload/opencl.c):
// a name that is a prefix of another (cl_scale / cl_scale_twice), and
// common_kernel, which module "b" (kernels_b.cl) also defines with another
// body.

__kernel void cl_scale(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * 5.0f;
}

__kernel void cl_scale_twice(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * 5.0f * 5.0f + 1.0f;
}

__kernel void common_kernel(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] / 3.0f - 2.0f;
}
