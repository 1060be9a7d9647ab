/*
 * The workload of the device time tests (tests/tests/time/): launches of
 * add_one and add_two (tests/workload/kernels_time.cl) in every way a
 * launch's time can be taken, linked with the real loader. On the
 * simulated driver (tests/fake/ze_sim.c) each launch of G work-groups
 * takes G times its ticks per group; the workload reads its own
 * timestamp events as a program measuring itself would, and prints what
 * it measured and its result, so that a test can compare a run with and
 * without --time.
 *
 * Usage: timed [--driver I] MODULE.spv STEP...   (I: which of zeDriverGet's)
 * Steps (K: add_one or add_two, N launches, G work-groups of 32 items):
 *   imm:K:N:G        immediate list, no event; then a barrier and a wait
 *   userts:K:N:G     each with an event of the workload's timestamp pool,
 *                    waited on and read: prints "own K ns" per launch
 *   userplain:K:N:G  each with a plain event of the workload's, waited on
 *   poll:K:N:G       N times: a launch without an event, then one with a
 *                    plain event polled (zeEventQueryStatus) until signaled
 *   reg:K:A:E:G      regular list of A appends, E runs each followed by a
 *                    queue sync; then reset, 1 append, 1 run, a sync
 *   regnosync:K:A:E:G  A appends, E runs, then one queue sync
 *   fence:K:A:E:G    A appends, E runs each with a fence waited on
 *   cb:K:N:G         in-order immediate list, counter-based events
 *                    without timestamps (zexCounterBasedEventCreate2)
 *   cbts:K:N:G       the same with device timestamps: prints "own K ns"
 *   many:K:N:G       N launches, no sync until the end
 *   threads:K:T:N:G  T threads, each its own list and kernel, N launches
 *   fork:K:N:G       a forked child launches N times (and exits)
 *   pending:K:N:G    N launches, then the process exits without a sync
 *   result           prints the buffer's sum ("result S")
 *   driver:I         from here on, driver I of zeDriverGet's (its own
 *                    context, module and buffer)
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ITEMS 32 /* work-items per group */
#define QUEUE_IN_ORDER 2u /* ZE_COMMAND_QUEUE_FLAG_IN_ORDER (API 1.9) */
#define CB_IMMEDIATE 1u
#define CB_HOST_VISIBLE 4u
#define CB_DEVICE_TIMESTAMP 16u
#define STYPE_DEVICE_PROPERTIES_1_2 0x00020006

static ze_driver_handle_t driver;
static ze_device_handle_t device;
static ze_context_handle_t context;
static ze_module_handle_t module;
static uint32_t *buffer;
static size_t buffer_items = 1 << 20;
static uint64_t ticks_per_second, valid_bits;

static void die(const char *what, ze_result_t r) {
    fprintf(stderr, "timed: %s failed: 0x%x\n", what, (unsigned)r);
    exit(1);
}
#define CALL(f, ...)                                                         \
    do {                                                                     \
        ze_result_t r_ = f(__VA_ARGS__);                                     \
        if (r_ != ZE_RESULT_SUCCESS)                                         \
            die(#f, r_);                                                     \
    } while (0)

static void init(int which, const char *spv) {
    CALL(zeInit, 0);
    uint32_t n = 0;
    CALL(zeDriverGet, &n, NULL);
    ze_driver_handle_t drivers[8];
    n = n > 8 ? 8 : n;
    CALL(zeDriverGet, &n, drivers);
    if (which >= (int)n)
        die("the driver asked for", ZE_RESULT_ERROR_INVALID_ARGUMENT);
    driver = drivers[which];
    n = 1;
    CALL(zeDeviceGet, driver, &n, &device);
    ze_device_properties_t p = {.stype = (ze_structure_type_t)STYPE_DEVICE_PROPERTIES_1_2};
    CALL(zeDeviceGetProperties, device, &p);
    ticks_per_second = p.timerResolution;
    valid_bits = p.kernelTimestampValidBits;
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    CALL(zeContextCreate, driver, &cd, &context);
    FILE *f = fopen(spv, "rb");
    if (!f) {
        perror(spv);
        exit(1);
    }
    static unsigned char bytes[1 << 20];
    size_t size = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = ZE_MODULE_FORMAT_IL_SPIRV,
                           .inputSize = size, .pInputModule = bytes, .pBuildFlags = ""};
    CALL(zeModuleCreate, context, device, &md, &module, NULL);
    ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *b = NULL;
    CALL(zeMemAllocShared, context, &dd, &hd, buffer_items * 4, 64, device, &b);
    buffer = b;
    memset(buffer, 0, buffer_items * 4);
}

static ze_kernel_handle_t kernel(const char *name) {
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
    ze_kernel_handle_t k;
    CALL(zeKernelCreate, module, &kd, &k);
    CALL(zeKernelSetGroupSize, k, ITEMS, 1, 1);
    CALL(zeKernelSetArgumentValue, k, 0, sizeof buffer, &buffer);
    return k;
}

static ze_command_list_handle_t immediate(uint32_t flags) {
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .flags = flags,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_list_handle_t l;
    CALL(zeCommandListCreateImmediate, context, device, &qd, &l);
    return l;
}

static ze_event_pool_handle_t pool(uint32_t flags, uint32_t count) {
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = flags, .count = count};
    ze_event_pool_handle_t p;
    CALL(zeEventPoolCreate, context, &pd, 1, &device, &p);
    return p;
}

static ze_event_handle_t event(ze_event_pool_handle_t p, uint32_t i) {
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = i,
                          .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t e;
    CALL(zeEventCreate, p, &ed, &e);
    return e;
}

/* Waits for everything appended to an immediate list: a barrier that
 * signals an event, then a host wait on it. */
static void wait_list(ze_command_list_handle_t l) {
    ze_event_pool_handle_t p = pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1);
    ze_event_handle_t e = event(p, 0);
    CALL(zeCommandListAppendBarrier, l, e, 0, NULL);
    CALL(zeEventHostSynchronize, e, UINT64_MAX);
    CALL(zeEventDestroy, e);
    CALL(zeEventPoolDestroy, p);
}

static void launch(ze_command_list_handle_t l, ze_kernel_handle_t k, uint32_t g, ze_event_handle_t e) {
    ze_group_count_t gc = {g, 1, 1};
    CALL(zeCommandListAppendLaunchKernel, l, k, &gc, e, 0, NULL);
}

/* The workload's own measure of a timestamp event, as the spec says. */
static void print_own(const char *name, ze_event_handle_t e) {
    ze_kernel_timestamp_result_t t;
    CALL(zeEventQueryKernelTimestamp, e, &t);
    uint64_t mask = valid_bits >= 64 ? ~0ull : (1ull << valid_bits) - 1;
    uint64_t s = t.global.kernelStart & mask, d = t.global.kernelEnd & mask;
    uint64_t ticks = d >= s ? d - s : (d + mask + 1 - s) & mask;
    printf("own %s %llu\n", name, (unsigned long long)(ticks * 1000000000ull / ticks_per_second));
}

static void step_imm(const char *k, long n, uint32_t g) {
    ze_command_list_handle_t l = immediate(0);
    ze_kernel_handle_t h = kernel(k);
    for (long i = 0; i < n; i++)
        launch(l, h, g, NULL);
    wait_list(l);
    CALL(zeKernelDestroy, h);
    CALL(zeCommandListDestroy, l);
}

/* Launches with the workload's own events: waited on (or polled), then
 * reset and reused. */
static void step_user(const char *k, long n, uint32_t g, int timestamps, int poll) {
    ze_command_list_handle_t l = immediate(0);
    ze_kernel_handle_t h = kernel(k);
    ze_event_pool_handle_t p = pool(ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (timestamps ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0), 2);
    ze_event_handle_t e = event(p, 1);
    for (long i = 0; i < n; i++) {
        if (poll)
            launch(l, h, g, NULL);
        launch(l, h, g, e);
        if (poll)
            while (zeEventQueryStatus(e) != ZE_RESULT_SUCCESS)
                ;
        else
            CALL(zeEventHostSynchronize, e, UINT64_MAX);
        if (timestamps)
            print_own(k, e);
        CALL(zeEventHostReset, e);
    }
    CALL(zeEventDestroy, e);
    CALL(zeEventPoolDestroy, p);
    CALL(zeKernelDestroy, h);
    CALL(zeCommandListDestroy, l);
}

/* A regular list: A appends, E runs (each synced, or one sync at the
 * end, or each with a fence); then reset, one append, one run. */
static void step_regular(const char *k, long a, long runs, uint32_t g, char how) {
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    ze_command_queue_handle_t q;
    CALL(zeCommandQueueCreate, context, device, &qd, &q);
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t l;
    CALL(zeCommandListCreate, context, device, &ld, &l);
    ze_kernel_handle_t h = kernel(k);
    for (long i = 0; i < a; i++)
        launch(l, h, g, NULL);
    CALL(zeCommandListClose, l);
    ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t f;
    CALL(zeFenceCreate, q, &fd, &f);
    for (long r = 0; r < runs; r++) {
        CALL(zeCommandQueueExecuteCommandLists, q, 1, &l, how == 'f' ? f : NULL);
        if (how == 's')
            CALL(zeCommandQueueSynchronize, q, UINT64_MAX);
        if (how == 'f') {
            CALL(zeFenceHostSynchronize, f, UINT64_MAX);
            CALL(zeFenceReset, f);
        }
    }
    if (how == 'n')
        CALL(zeCommandQueueSynchronize, q, UINT64_MAX);
    CALL(zeCommandListReset, l);
    launch(l, h, g, NULL);
    CALL(zeCommandListClose, l);
    CALL(zeCommandQueueExecuteCommandLists, q, 1, &l, NULL);
    CALL(zeCommandQueueSynchronize, q, UINT64_MAX);
    CALL(zeFenceDestroy, f);
    CALL(zeKernelDestroy, h);
    CALL(zeCommandListDestroy, l);
    CALL(zeCommandQueueDestroy, q);
}

/* zex_counter_based_event_desc_t */
typedef struct {
    uint32_t stype;
    const void *next;
    uint32_t flags, signal, wait;
} cb_desc_t;
typedef ze_result_t (*cb_create_t)(ze_context_handle_t, ze_device_handle_t, const cb_desc_t *, ze_event_handle_t *);

/* Counter-based events on an in-order list, reused without a reset. */
static void step_counter_based(const char *k, long n, uint32_t g, int timestamps) {
    cb_create_t create = NULL;
    CALL(zeDriverGetExtensionFunctionAddress, driver, "zexCounterBasedEventCreate2", (void **)&create);
    cb_desc_t d = {.stype = 0x00030016, .flags = CB_IMMEDIATE | CB_HOST_VISIBLE | (timestamps ? CB_DEVICE_TIMESTAMP : 0),
                   .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t e;
    CALL(create, context, device, &d, &e);
    ze_command_list_handle_t l = immediate(QUEUE_IN_ORDER);
    ze_kernel_handle_t h = kernel(k);
    for (long i = 0; i < n; i++) {
        launch(l, h, g, e);
        CALL(zeEventHostSynchronize, e, UINT64_MAX);
        if (timestamps)
            print_own(k, e);
    }
    CALL(zeEventDestroy, e);
    CALL(zeKernelDestroy, h);
    CALL(zeCommandListDestroy, l);
}

/* N launches, no sync until the end (the interposer's events run out). */
static void step_many(const char *k, long n, uint32_t g, int sync) {
    ze_command_list_handle_t l = immediate(0);
    ze_kernel_handle_t h = kernel(k);
    for (long i = 0; i < n; i++)
        launch(l, h, g, NULL);
    if (sync) {
        wait_list(l);
        CALL(zeKernelDestroy, h);
        CALL(zeCommandListDestroy, l);
    }
}

struct thread_args { const char *k; long n; uint32_t g; };
static void *thread_main(void *p) {
    struct thread_args *a = p;
    step_imm(a->k, a->n, a->g);
    return NULL;
}

static void step_threads(const char *k, long t, long n, uint32_t g) {
    pthread_t ids[64];
    struct thread_args a = {k, n, g};
    t = t > 64 ? 64 : t;
    for (long i = 0; i < t; i++)
        pthread_create(&ids[i], NULL, thread_main, &a);
    for (long i = 0; i < t; i++)
        pthread_join(ids[i], NULL);
}

static void step_fork(const char *k, long n, uint32_t g) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        step_imm(k, n, g);
        fflush(stdout);
        exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("the forked child", (ze_result_t)status);
}

int main(int argc, char **argv) {
    int a = 1, which = 0;
    if (a + 1 < argc && strcmp(argv[a], "--driver") == 0) {
        which = atoi(argv[a + 1]);
        a += 2;
    }
    if (a >= argc) {
        fprintf(stderr, "usage: timed [--driver I] MODULE.spv STEP...\n");
        return 2;
    }
    const char *spv = argv[a++];
    init(which, spv);
    for (; a < argc; a++) {
        if (strncmp(argv[a], "driver:", 7) == 0) {
            init(atoi(argv[a] + 7), spv);
            continue;
        }
        char step[64], k[32];
        long x = 0, y = 0, z = 0, w = 0;
        int got = sscanf(argv[a], "%63[a-z]:%31[a-z_]:%ld:%ld:%ld:%ld", step, k, &x, &y, &z, &w);
        const char *s = got >= 1 ? step : argv[a];
        if (strcmp(argv[a], "result") == 0) {
            unsigned long long sum = 0;
            for (size_t i = 0; i < buffer_items; i++)
                sum += buffer[i];
            printf("result %llu\n", sum);
        } else if (strcmp(s, "imm") == 0 && got == 4)
            step_imm(k, x, (uint32_t)y);
        else if (strcmp(s, "userts") == 0 && got == 4)
            step_user(k, x, (uint32_t)y, 1, 0);
        else if (strcmp(s, "userplain") == 0 && got == 4)
            step_user(k, x, (uint32_t)y, 0, 0);
        else if (strcmp(s, "poll") == 0 && got == 4)
            step_user(k, x, (uint32_t)y, 0, 1);
        else if (strcmp(s, "reg") == 0 && got == 5)
            step_regular(k, x, y, (uint32_t)z, 's');
        else if (strcmp(s, "regnosync") == 0 && got == 5)
            step_regular(k, x, y, (uint32_t)z, 'n');
        else if (strcmp(s, "fence") == 0 && got == 5)
            step_regular(k, x, y, (uint32_t)z, 'f');
        else if (strcmp(s, "cb") == 0 && got == 4)
            step_counter_based(k, x, (uint32_t)y, 0);
        else if (strcmp(s, "cbts") == 0 && got == 4)
            step_counter_based(k, x, (uint32_t)y, 1);
        else if (strcmp(s, "many") == 0 && got == 4)
            step_many(k, x, (uint32_t)y, 1);
        else if (strcmp(s, "threads") == 0 && got == 5)
            step_threads(k, x, y, (uint32_t)z);
        else if (strcmp(s, "fork") == 0 && got == 4)
            step_fork(k, x, (uint32_t)y);
        else if (strcmp(s, "pending") == 0 && got == 4)
            step_many(k, x, (uint32_t)y, 0);
        else {
            fprintf(stderr, "timed: bad step %s\n", argv[a]);
            return 2;
        }
        (void)w;
        fflush(stdout);
    }
    return 0;
}
