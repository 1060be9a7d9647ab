/*
 * The launch loop shared by the benchmark programs: n appends of kernels
 * k[0..NKERNELS) in turn on `list`. Always inlined into the noinline
 * functions each program measures (callgrind toggles on those symbols).
 * Include after defining NKERNELS and including ze_api.h.
 */
#ifndef XPU_ASM_BENCH_APPEND_LOOP_H
#define XPU_ASM_BENCH_APPEND_LOOP_H

static const ze_group_count_t one_group = {1, 1, 1};

/* The last failing result, or ZE_RESULT_SUCCESS. */
static inline __attribute__((always_inline)) ze_result_t
append_loop(ze_command_list_handle_t list, ze_kernel_handle_t *k, long n) {
    ze_result_t bad = ZE_RESULT_SUCCESS;
    for (long i = 0; i < n; i++) {
        ze_result_t r = zeCommandListAppendLaunchKernel(list, k[i % NKERNELS], &one_group,
                                                        NULL, 0, NULL);
        if (r != ZE_RESULT_SUCCESS)
            bad = r;
    }
    return bad;
}

#endif
