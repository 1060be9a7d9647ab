// Built with -ze-opt-large-register-file (256 GRF) by the launch shapes
// workload (tests/workload/shapes.c).

__kernel void sh_big(__global float *x) { x[get_global_id(0)] = sqrt(x[get_global_id(0)]); }
