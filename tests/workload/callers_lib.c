/*
 * The libraries of tests/workload/callers.c: built with -DLIB_A as
 * libcallers_a.so (launch_from_a1, launch_from_a2), with -DLIB_B as
 * libcallers_b.so (launch_from_b). Each function appends its kernel to an
 * immediate list N times; none is inlined into another.
 */
#include <level_zero/ze_api.h>

#include <stdio.h>
#include <stdlib.h>

/* The append is in the function itself, so that the launch's first frame
 * outside the runtimes is the function. */
#define LAUNCHER(name)                                                            \
    __attribute__((noinline)) void name(ze_command_list_handle_t list,            \
                                        ze_kernel_handle_t k, int n) {            \
        ze_group_count_t g = {1, 1, 1};                                           \
        for (int i = 0; i < n; i++) {                                             \
            ze_result_t r = zeCommandListAppendLaunchKernel(list, k, &g, NULL, 0, \
                                                            NULL);                \
            if (r != ZE_RESULT_SUCCESS) {                                         \
                fprintf(stderr, "callers: append failed: 0x%08x\n", (unsigned)r); \
                exit(1);                                                          \
            }                                                                     \
        }                                                                         \
    }

#ifdef LIB_A
LAUNCHER(launch_from_a1)
LAUNCHER(launch_from_a2)
#endif
#ifdef LIB_B
LAUNCHER(launch_from_b)
#endif
