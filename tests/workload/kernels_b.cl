// Module "b": common_kernel has the same name as in module "a" but another
// body, so its ISA differs and a capture must keep the two apart.

__kernel void common_kernel(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = x[i] * x[i] + 7.0f;
}

__kernel void only_in_b(__global float *x) {
    size_t i = get_global_id(0);
    x[i] = sqrt(x[i]);
}
