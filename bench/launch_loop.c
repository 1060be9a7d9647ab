/*
 * Launch-loop benchmark for xpu-asm: many kernel launches through the Level
 * Zero loader's exported API, timed, so that the cost the interposer adds to
 * one launch can be measured (scripts/bench.sh runs it with and without the
 * interposer, and under callgrind).
 *
 * usage: launch_loop KERNELS.spv [imm=N] [reg=KxM] [chunks=C] [reps=R] [warmup=W]
 *   imm=N    N launches on one immediate command list (asynchronous mode),
 *            in C timed chunks of N/C launches (default 40)
 *   reg=KxM  K appends to a regular command list, close, then M executions
 *            of it on a command queue (K*M launches); done R times (default
 *            5) on the same list, reset in between
 *   warmup=W W launches on the immediate list before anything is measured
 *            (first-use costs of the driver and of any hook stay out)
 *   gs=N     N zeKernelSetGroupSize of a kernel, each followed by a launch
 *            of it on the immediate list: its group size the same each time
 *            (gs=N) or alternating between 32 and 64 (gsalt=N), so that
 *            each launch has another shape than the kernel's last one
 *   synced=N N launches on the immediate list as imm=N does, the list
 *            synced after every S-th launch (sync=S, default 100) as
 *            programs sync an immediate list on Level Zero 1.8's loader: a
 *            barrier signaling an event, zeEventHostSynchronize of it and
 *            zeEventHostReset (the syncs at which `--time` reads its
 *            results, bench/time.sh); in C chunks
 *   kernels=K  launch K kernels round-robin instead of the four named
 *            below: the module's first K entry points (zeModuleGetKernelNames)
 *
 * Prints one line per measured phase:
 *   phase=imm launches=N ns=T ns_per_launch=X median_ns_per_launch=Y min_ns_per_launch=Z
 *             cpu_median_ns_per_launch=Yc cpu_min_ns_per_launch=Zc
 *   phase=reg (same fields, launches=R*K*M)
 *   phase=synced (same fields), then
 *   memory phase=synced kernels=K rss_kernels_kib=A rss_tenth_kib=B rss_end_kib=C hwm_kib=D
 *             the process's VmRSS once its kernels are made, after the
 *             first tenth of the launches (the chunk that reaches it), at
 *             the end, and its VmHWM
 * where X is the wall time over all launches, Y the median and Z the minimum
 * over the chunks (imm) or repetitions (reg) of wall time per launch, and Yc,
 * Zc the same in CPU time of the process (CLOCK_PROCESS_CPUTIME_ID: all its
 * threads, not the time it waited for a CPU). On a shared machine Zc is the
 * least disturbed by other processes: it is the figure to compare.
 *
 * The measured loops are the noinline functions bench_immediate_loop,
 * bench_regular_loop and bench_synced_loop; callgrind's
 * --toggle-collect=<function> restricts its count to them. The four kernels
 * of KERNELS.spv are launched round-robin (kernels=K: K of them).
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NKERNELS 4
static const char *kernel_names[NKERNELS] = {"bench_add", "bench_mul", "bench_sub", "bench_fma"};

static void check(ze_result_t r, const char *what) {
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "launch_loop: %s failed: ze_result_t 0x%08x\n", what, (unsigned)r);
        exit(1);
    }
}

#define CALL(f, ...) check(f(__VA_ARGS__), #f)

#include "append_loop.h"

/* The measured loop on an immediate list. noinline (and noclone): callgrind
 * toggles collection on entry and exit of this very symbol. */
__attribute__((noinline, noclone)) ze_result_t
bench_immediate_loop(ze_command_list_handle_t list, ze_kernel_handle_t *k, long n) {
    return append_loop(list, k, n);
}

/* The measured loop of gs=N and gsalt=N: a group size set, a launch; the
 * size alternates (alt) or not. */
__attribute__((noinline, noclone)) ze_result_t
bench_group_size_loop(ze_command_list_handle_t list, ze_kernel_handle_t *k, long n, int alt) {
    ze_result_t bad = ZE_RESULT_SUCCESS;
    for (long i = 0; i < n; i++) {
        ze_kernel_handle_t kernel = k[i % NKERNELS];
        uint32_t size = alt && (i / NKERNELS) % 2 ? 64 : 32;
        ze_result_t r = zeKernelSetGroupSize(kernel, size, 1, 1);
        if (r != ZE_RESULT_SUCCESS)
            bad = r;
        r = zeCommandListAppendLaunchKernel(list, kernel, &one_group, NULL, 0, NULL);
        if (r != ZE_RESULT_SUCCESS)
            bad = r;
    }
    return bad;
}

/* The measured loop on a regular list: K appends, close, M executions. */
__attribute__((noinline, noclone)) ze_result_t
bench_regular_loop(ze_command_queue_handle_t queue, ze_command_list_handle_t list,
                   ze_kernel_handle_t *k, long appends, long executions) {
    ze_result_t bad = append_loop(list, k, appends);
    ze_result_t r = zeCommandListClose(list);
    if (r != ZE_RESULT_SUCCESS)
        bad = r;
    for (long e = 0; e < executions; e++) {
        r = zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL);
        if (r != ZE_RESULT_SUCCESS)
            bad = r;
    }
    r = zeCommandQueueSynchronize(queue, UINT64_MAX);
    if (r != ZE_RESULT_SUCCESS)
        bad = r;
    return bad;
}

/* n launches of the nk kernels k in turn, the list synced after every
 * sync-th (a barrier signaling `done`, a host wait on it, its reset). */
static inline __attribute__((always_inline)) ze_result_t
synced_loop(ze_command_list_handle_t list, ze_kernel_handle_t *k, long nk, long n, long sync,
            ze_event_handle_t done) {
    ze_result_t bad = ZE_RESULT_SUCCESS;
    for (long i = 0; i < n; i++) {
        ze_result_t r =
            zeCommandListAppendLaunchKernel(list, k[i % nk], &one_group, NULL, 0, NULL);
        if (r != ZE_RESULT_SUCCESS)
            bad = r;
        if ((i + 1) % sync == 0) {
            ze_result_t s[3] = {zeCommandListAppendBarrier(list, done, 0, NULL),
                                zeEventHostSynchronize(done, UINT64_MAX), zeEventHostReset(done)};
            for (int j = 0; j < 3; j++)
                if (s[j] != ZE_RESULT_SUCCESS)
                    bad = s[j];
        }
    }
    return bad;
}

/* The measured loop of synced=N. */
__attribute__((noinline, noclone)) ze_result_t
bench_synced_loop(ze_command_list_handle_t list, ze_kernel_handle_t *k, long nk, long n,
                  long sync, ze_event_handle_t done) {
    return synced_loop(list, k, nk, n, sync, done);
}

/* Its warm-up, synced the same way (outside the measured functions). */
__attribute__((noinline, noclone)) ze_result_t
bench_synced_warmup(ze_command_list_handle_t list, ze_kernel_handle_t *k, long nk, long n,
                    long sync, ze_event_handle_t done) {
    return synced_loop(list, k, nk, n, sync, done);
}

/* Warm-up launches, outside the measured functions. */
__attribute__((noinline, noclone)) ze_result_t
bench_warmup_loop(ze_command_list_handle_t list, ze_kernel_handle_t *k, long n) {
    return append_loop(list, k, n);
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}



/* A field of /proc/self/status, in KiB (0 when absent). */
static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = 0;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            v = strtol(line + len + 1, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v. */
static double median(double *v, long n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Prints one phase's line; sorts the arrays. */
static void report(const char *phase, long launches, double total, double *wall, double *cpu,
                   long n) {
    double wmed = median(wall, n), cmed = median(cpu, n);
    printf("phase=%s launches=%ld ns=%.0f ns_per_launch=%.2f median_ns_per_launch=%.2f "
           "min_ns_per_launch=%.2f cpu_median_ns_per_launch=%.2f cpu_min_ns_per_launch=%.2f\n",
           phase, launches, total, total / (double)launches, wmed, wall[0], cmed, cpu[0]);
    fflush(stdout);
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "launch_loop: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "launch_loop: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *size = (size_t)len;
    return b;
}

static void usage(void) {
    fprintf(stderr, "usage: launch_loop KERNELS.spv [imm=N] [reg=KxM] [chunks=C] [reps=R] [warmup=W] "
                    "[gs=N|gsalt=N] [synced=N] [sync=S] [kernels=K]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2)
        usage();
    long imm = 0, reg_k = 0, reg_m = 0, warmup = 1000, chunks = 40, reps = 5, gs = 0;
    long synced = 0, sync = 100, nk = NKERNELS;
    int gs_alt = 0;
    for (int i = 2; i < argc; i++) {
        if (sscanf(argv[i], "synced=%ld", &synced) == 1)
            continue;
        if (sscanf(argv[i], "sync=%ld", &sync) == 1 && sync > 0)
            continue;
        if (sscanf(argv[i], "kernels=%ld", &nk) == 1 && nk > 0)
            continue;
        if (sscanf(argv[i], "gs=%ld", &gs) == 1)
            continue;
        if (sscanf(argv[i], "gsalt=%ld", &gs) == 1) {
            gs_alt = 1;
            continue;
        }
        if (sscanf(argv[i], "imm=%ld", &imm) == 1)
            continue;
        if (sscanf(argv[i], "reg=%ldx%ld", &reg_k, &reg_m) == 2)
            continue;
        if (sscanf(argv[i], "warmup=%ld", &warmup) == 1)
            continue;
        if (sscanf(argv[i], "chunks=%ld", &chunks) == 1 && chunks > 0)
            continue;
        if (sscanf(argv[i], "reps=%ld", &reps) == 1 && reps > 0)
            continue;
        usage();
    }

    CALL(zeInit, 0);
    uint32_t n = 1;
    ze_driver_handle_t driver;
    CALL(zeDriverGet, &n, &driver);
    if (n < 1) {
        fprintf(stderr, "launch_loop: no Level Zero driver (NEO no-hardware variables set?)\n");
        return 1;
    }
    ze_device_handle_t device;
    n = 1;
    CALL(zeDeviceGet, driver, &n, &device);
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t context;
    CALL(zeContextCreate, driver, &cdesc, &context);

    ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *buffer = NULL;
    CALL(zeMemAllocShared, context, &ddesc, &hdesc, 4096, 64, device, &buffer);
    memset(buffer, 0, 4096);

    size_t spv_size;
    unsigned char *spv = read_file(argv[1], &spv_size);
    ze_module_desc_t mdesc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC};
    mdesc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    mdesc.inputSize = spv_size;
    mdesc.pInputModule = spv;
    mdesc.pBuildFlags = "";
    ze_module_handle_t module;
    CALL(zeModuleCreate, context, device, &mdesc, &module, NULL);

    /* kernels=K: the module's first K entry points (at least the four the
     * other loops launch, which are its first four or named below). */
    const char **names = kernel_names;
    if (nk != NKERNELS) {
        uint32_t count = 0;
        CALL(zeModuleGetKernelNames, module, &count, NULL);
        names = calloc(count ? count : 1, sizeof *names);
        CALL(zeModuleGetKernelNames, module, &count, names);
        if ((long)count < nk || nk < NKERNELS) {
            fprintf(stderr, "launch_loop: kernels=%ld of a module of %u kernels (at least %d)\n", nk,
                    count, NKERNELS);
            return 2;
        }
    }
    ze_kernel_handle_t *k = calloc((size_t)nk, sizeof *k);
    for (long i = 0; i < nk; i++) {
        ze_kernel_desc_t kdesc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC};
        kdesc.pKernelName = names[i];
        CALL(zeKernelCreate, module, &kdesc, &k[i]);
        CALL(zeKernelSetGroupSize, k[i], 1, 1, 1);
        CALL(zeKernelSetArgumentValue, k[i], 0, sizeof(buffer), &buffer);
    }

    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_command_list_handle_t imm_list;
    CALL(zeCommandListCreateImmediate, context, device, &qdesc, &imm_list);
    /* The regular list and its queue exist from the start, as in programs
     * that use both kinds: a hook that tracks regular lists then has one to
     * look past on every immediate launch. */
    ze_command_queue_handle_t queue;
    CALL(zeCommandQueueCreate, context, device, &qdesc, &queue);
    ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    CALL(zeCommandListCreate, context, device, &ldesc, &list);

    /* synced=N: the event its syncs wait on; its warm-up synced too (the
     * interposer's events of --time are read, not left pending). */
    ze_event_pool_handle_t pool = NULL;
    ze_event_handle_t done_event = NULL;
    if (synced > 0) {
        ze_event_pool_desc_t pdesc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                      .count = 1};
        CALL(zeEventPoolCreate, context, &pdesc, 1, &device, &pool);
        ze_event_desc_t edesc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                                 .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                                 .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        CALL(zeEventCreate, pool, &edesc, &done_event);
        check(bench_synced_warmup(imm_list, k, nk, warmup, sync, done_event),
              "warm-up launches");
    } else {
        check(bench_warmup_loop(imm_list, k, warmup), "warm-up launches");
    }

    if (synced > 0) {
        double *wall = calloc((size_t)chunks, sizeof *wall);
        double *cpu = calloc((size_t)chunks, sizeof *cpu);
        double total = 0;
        long done = 0, rss_kernels = status_kib("VmRSS"), rss_tenth = 0;
        for (long c = 0; c < chunks; c++) {
            long n_c = synced / chunks + (c < synced % chunks);
            double c0 = cpu_ns(), t0 = now_ns();
            ze_result_t r = bench_synced_loop(imm_list, k, nk, n_c, sync, done_event);
            double t1 = now_ns(), c1 = cpu_ns();
            check(r, "zeCommandListAppendLaunchKernel (synced immediate list)");
            total += t1 - t0;
            done += n_c;
            if (!rss_tenth && done * 10 >= synced)
                rss_tenth = status_kib("VmRSS");
            wall[c] = n_c ? (t1 - t0) / (double)n_c : 0;
            cpu[c] = n_c ? (c1 - c0) / (double)n_c : 0;
        }
        report("synced", done, total, wall, cpu, chunks);
        printf("memory phase=synced kernels=%ld launches=%ld rss_kernels_kib=%ld rss_tenth_kib=%ld "
               "rss_end_kib=%ld hwm_kib=%ld\n",
               nk, done, rss_kernels, rss_tenth, status_kib("VmRSS"), status_kib("VmHWM"));
        fflush(stdout);
        free(wall);
        free(cpu);
        CALL(zeEventDestroy, done_event);
        CALL(zeEventPoolDestroy, pool);
    }

    if (imm > 0) {
        double *wall = calloc((size_t)chunks, sizeof *wall);
        double *cpu = calloc((size_t)chunks, sizeof *cpu);
        double total = 0;
        long done = 0;
        for (long c = 0; c < chunks; c++) {
            long n_c = imm / chunks + (c < imm % chunks);
            double c0 = cpu_ns(), t0 = now_ns();
            ze_result_t r = bench_immediate_loop(imm_list, k, n_c);
            double t1 = now_ns(), c1 = cpu_ns();
            check(r, "zeCommandListAppendLaunchKernel (immediate list)");
            total += t1 - t0;
            done += n_c;
            wall[c] = n_c ? (t1 - t0) / (double)n_c : 0;
            cpu[c] = n_c ? (c1 - c0) / (double)n_c : 0;
        }
        report("imm", done, total, wall, cpu, chunks);
        free(wall);
        free(cpu);
    }

    if (gs > 0) {
        double c0 = cpu_ns(), t0 = now_ns();
        check(bench_group_size_loop(imm_list, k, gs, gs_alt), "group size loop");
        double t1 = now_ns(), c1 = cpu_ns();
        double wall = (t1 - t0) / (double)gs, cpu = (c1 - c0) / (double)gs;
        report(gs_alt ? "gsalt" : "gs", gs, t1 - t0, &wall, &cpu, 1);
    }

    if (reg_k > 0 && reg_m > 0) {
        double *wall = calloc((size_t)reps, sizeof *wall);
        double *cpu = calloc((size_t)reps, sizeof *cpu);
        double total = 0;
        for (long rep = 0; rep < reps; rep++) {
            if (rep > 0)
                CALL(zeCommandListReset, list);
            double c0 = cpu_ns(), t0 = now_ns();
            ze_result_t r = bench_regular_loop(queue, list, k, reg_k, reg_m);
            double t1 = now_ns(), c1 = cpu_ns();
            check(r, "regular list loop");
            total += t1 - t0;
            wall[rep] = (t1 - t0) / (double)(reg_k * reg_m);
            cpu[rep] = (c1 - c0) / (double)(reg_k * reg_m);
        }
        report("reg", reps * reg_k * reg_m, total, wall, cpu, reps);
        free(wall);
        free(cpu);
    }

    CALL(zeCommandListDestroy, list);
    CALL(zeCommandQueueDestroy, queue);

    CALL(zeCommandListDestroy, imm_list);
    for (long i = 0; i < nk; i++)
        CALL(zeKernelDestroy, k[i]);
    free(k);
    if (names != kernel_names)
        free(names);
    CALL(zeModuleDestroy, module);
    CALL(zeMemFree, context, buffer);
    CALL(zeContextDestroy, context);
    free(spv);
    return 0;
}
