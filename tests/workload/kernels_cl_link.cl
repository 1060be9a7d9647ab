// The OpenCL workload's program made by clCompileProgram and clLinkProgram.

__kernel void cl_linked_a(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] + 11.0f;
}

__kernel void cl_linked_b(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * x[i] - 11.0f;
}
