/* The second input of a module built from two SPIR-V inputs
 * (kernels_program_a.cl): the function the first calls, and a kernel of
 * its own. */
float program_helper(float x) { return x * 3.0f + (float)get_local_id(0); }

__kernel void program_own(__global float *p) {
    size_t i = get_global_id(0);
    p[i] = program_helper(p[i]);
}
