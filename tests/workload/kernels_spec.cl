/* Kernels of a module built with specialization constants and build flags
 * (tests/tests/port.rs): ocloc compiles this to SPIR-V, then the test makes
 * the loop bound 1234567 specialization constant 7, so that the value the
 * program gives decides the code IGC makes (a loop of 4 is unrolled). */

__kernel void spec_loop(__global float *x) {
    size_t i = get_global_id(0);
    float acc = x[i];
    for (int j = 0; j < 1234567; j++)
        acc = acc * 1.5f + 0.25f;
    x[i] = acc;
}
