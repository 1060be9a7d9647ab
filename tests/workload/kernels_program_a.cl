/* The first input of a module built from two SPIR-V inputs
 * (ze_module_program_exp_desc_t, tests/tests/port.rs): its kernel calls a
 * function the second input defines, so the driver must link both. */
float program_helper(float x);

__kernel void program_linked(__global float *p) {
    size_t i = get_global_id(0);
    p[i] = program_helper(p[i]) + 1.0f;
}
