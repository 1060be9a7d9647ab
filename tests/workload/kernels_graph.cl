// The graph workload's kernels (tests/workload/graph.c): one per counting
// rule, so that each rule's count is read from its own kernel.

__kernel void g_immediate(__global float *x) { x[get_global_id(0)] += 1.0f; }
__kernel void g_captured(__global float *x) { x[get_global_id(0)] += 2.0f; }
__kernel void g_into(__global float *x) { x[get_global_id(0)] += 3.0f; }
__kernel void g_in_regular(__global float *x) { x[get_global_id(0)] += 4.0f; }
__kernel void g_nested(__global float *x) { x[get_global_id(0)] += 5.0f; }
__kernel void g_outer(__global float *x) { x[get_global_id(0)] += 6.0f; }
__kernel void g_forked(__global float *x) { x[get_global_id(0)] += 7.0f; }
__kernel void g_beside(__global float *x) { x[get_global_id(0)] += 8.0f; }
__kernel void g_lists(__global float *x) { x[get_global_id(0)] += 9.0f; }
__kernel void g_mutable_old(__global float *x) { x[get_global_id(0)] *= 2.0f; }
__kernel void g_mutable_new(__global float *x) { x[get_global_id(0)] *= 3.0f; }
__kernel void g_unseen(__global float *x) { x[get_global_id(0)] *= 4.0f; }
__kernel void g_reused_1(__global float *x) { x[get_global_id(0)] *= 5.0f; }
__kernel void g_reused_2(__global float *x) { x[get_global_id(0)] *= 6.0f; }
__kernel void g_bad_swap(__global float *x) { x[get_global_id(0)] *= 7.0f; }
__kernel void g_bad_id(__global float *x) { x[get_global_id(0)] *= 8.0f; }
