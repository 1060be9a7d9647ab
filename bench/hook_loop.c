/*
 * The hook path alone: zeCommandListAppendLaunchKernel on an immediate list
 * in a loop, with bench/fake_ze.c (functions that do nothing) in place of
 * the Level Zero loader. Without a hook a launch costs a call; under a
 * preloaded hook, the difference is what the hook adds, timed without the
 * driver's run-to-run noise. One hook pass per launch: on the real stack the
 * launch also passes the hook installed in the loader's dispatch table.
 *
 * usage: hook_loop [launches] [chunks]   (default 20000000 100)
 * prints: launches=N min_ns_per_launch=X median_ns_per_launch=Y
 */
#include <level_zero/ze_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NKERNELS 4

#include "append_loop.h"

__attribute__((noinline, noclone)) ze_result_t
hook_loop(ze_command_list_handle_t list, ze_kernel_handle_t *k, long n) {
    return append_loop(list, k, n);
}

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    long chunks = argc > 2 ? atol(argv[2]) : 100;
    if (n <= 0 || chunks <= 0)
        return 2;
    ze_module_desc_t mdesc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC};
    mdesc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    static const unsigned char spv[16] = {0x03, 0x02, 0x23, 0x07};
    mdesc.inputSize = sizeof spv;
    mdesc.pInputModule = spv;
    mdesc.pBuildFlags = "";
    ze_module_handle_t module;
    zeModuleCreate(NULL, NULL, &mdesc, &module, NULL);
    ze_kernel_handle_t k[NKERNELS];
    const char *names[NKERNELS] = {"bench_add", "bench_mul", "bench_sub", "bench_fma"};
    for (int i = 0; i < NKERNELS; i++) {
        ze_kernel_desc_t kdesc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC};
        kdesc.pKernelName = names[i];
        zeKernelCreate(module, &kdesc, &k[i]);
    }
    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    ze_command_list_handle_t imm, regular;
    zeCommandListCreateImmediate(NULL, NULL, &qdesc, &imm);
    /* A regular list exists, as on the real-stack benchmark. */
    ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    zeCommandListCreate(NULL, NULL, &ldesc, &regular);

    hook_loop(imm, k, n / 10); /* warm-up */
    double *per = calloc((size_t)chunks, sizeof *per);
    for (long c = 0; c < chunks; c++) {
        long m = n / chunks;
        double t0 = cpu_ns();
        if (hook_loop(imm, k, m) != ZE_RESULT_SUCCESS)
            return 1;
        per[c] = (cpu_ns() - t0) / (double)m;
    }
    qsort(per, (size_t)chunks, sizeof *per, cmp_double);
    printf("launches=%ld min_ns_per_launch=%.2f median_ns_per_launch=%.2f\n", n, per[0],
           per[chunks / 2]);
    free(per);
    return 0;
}
