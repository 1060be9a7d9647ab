/*
 * Module-creation benchmark for xpu-asm: creates (and destroys) one Level
 * Zero module many times, timing each zeModuleCreate, so that the cost the
 * interposer adds at module creation (hashing the module, asking the
 * driver for its binary, saving that binary once under <out>/modules/,
 * writing the module event) can be measured. scripts/bench.sh runs it with
 * and without the interposer, interleaved.
 *
 * usage: module_loop spirv|native FILE N
 *
 * Prints one line:
 *   format=F bytes=B modules=N first_ns=T0 median_ns=M min_ns=Z
 *   cpu_first_ns=C0 cpu_median_ns=CM cpu_min_ns=CZ
 * T0 is the first creation (the one that writes the binary to disk), M and
 * Z the median and minimum of the others, in wall time; the cpu_ figures
 * are the same in CPU time of the process (all its threads), which a busy
 * machine disturbs less.
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(ze_result_t r, const char *what) {
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "module_loop: %s failed: ze_result_t 0x%08x\n", what, (unsigned)r);
        exit(1);
    }
}

#define CALL(f, ...) check(f(__VA_ARGS__), #f)

static uint64_t clock_ns(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static uint64_t cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "module_loop: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "spirv") && strcmp(argv[1], "native"))) {
        fprintf(stderr, "usage: module_loop spirv|native FILE N\n");
        return 2;
    }
    int native = strcmp(argv[1], "native") == 0;
    long n = atol(argv[3]);
    if (n < 2) {
        fprintf(stderr, "module_loop: N must be at least 2\n");
        return 2;
    }
    size_t size;
    unsigned char *bytes = read_file(argv[2], &size);

    CALL(zeInit, 0);
    uint32_t count = 1;
    ze_driver_handle_t driver;
    CALL(zeDriverGet, &count, &driver);
    count = 1;
    ze_device_handle_t device;
    CALL(zeDeviceGet, driver, &count, &device);
    ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t context;
    CALL(zeContextCreate, driver, &cdesc, &context);

    ze_module_desc_t desc = {
        .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
        .format = native ? ZE_MODULE_FORMAT_NATIVE : ZE_MODULE_FORMAT_IL_SPIRV,
        .inputSize = size,
        .pInputModule = bytes,
        .pBuildFlags = "",
    };
    uint64_t *t = calloc((size_t)n, sizeof *t);
    uint64_t *c = calloc((size_t)n, sizeof *c);
    for (long i = 0; i < n; i++) {
        ze_module_handle_t module;
        uint64_t t0 = now_ns(), c0 = cpu_ns();
        CALL(zeModuleCreate, context, device, &desc, &module, NULL);
        c[i] = cpu_ns() - c0;
        t[i] = now_ns() - t0;
        CALL(zeModuleDestroy, module);
    }
    uint64_t first = t[0], cfirst = c[0];
    qsort(t + 1, (size_t)(n - 1), sizeof *t, cmp_u64);
    qsort(c + 1, (size_t)(n - 1), sizeof *c, cmp_u64);
    printf("format=%s bytes=%zu modules=%ld first_ns=%llu median_ns=%llu min_ns=%llu "
           "cpu_first_ns=%llu cpu_median_ns=%llu cpu_min_ns=%llu\n",
           argv[1], size, n, (unsigned long long)first, (unsigned long long)t[1 + (n - 1) / 2],
           (unsigned long long)t[1], (unsigned long long)cfirst,
           (unsigned long long)c[1 + (n - 1) / 2], (unsigned long long)c[1]);
    CALL(zeContextDestroy, context);
    free(t);
    free(c);
    free(bytes);
    return 0;
}
