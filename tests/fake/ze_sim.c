/*
 * A simulated Level Zero driver whose device times are known: the real
 * loader loads it (ZE_ENABLE_ALT_DRIVERS=/path/libze_sim.so), and programs
 * run on it as on a GPU that executes nothing but its clock. One device, one
 * in-order engine whose clock (in ticks of a timer of SIM_HZ ticks per
 * second, SIM_BITS valid bits) advances SIM_TICKS ticks per work-group of
 * each kernel, then SIM_GAP ticks before the next; kernel timestamp events
 * get those ticks. Kernels named "add_one" and "add_two" add 1 (2) to
 * the 32-bit word of each work-item in their first argument, as
 * tests/workload/kernels_time.cl's do, so that a test can read a result. Nothing is compiled: a module's kernels are its SPIR-V's entry
 * points.
 *
 * Settings, read at the first zeInit (the prefix is SIM_ENV, "XPU_ASM_SIM_"
 * unless built with another, so that two builds of this file are two
 * drivers with settings of their own):
 *   TICKS      ticks per work-group (default 1000)
 *   HZ         timer ticks per second (default 12500000: 80 ns a tick)
 *   BITS       kernelTimestampValidBits (default 32)
 *   START      the clock at start (default 0; near 2^BITS: a wrap)
 *   GAP        ticks between two kernels (default 100)
 *   NOT_READY  queries of a kernel's event (its status, its timestamp)
 *              answered NOT_READY after it ran, before it says it is done,
 *              unless a host sync came since (default 0)
 *   NEVER      1: the device never completes a kernel (its events never
 *              signal; host waits return at once, as NEO's do without
 *              hardware)
 * zeDeviceGetProperties gives the timer in ticks per second with the 1.2
 * properties type and in ns per tick with the 1.0 one, as the spec says.
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SIM_ENV
#define SIM_ENV "XPU_ASM_SIM_"
#endif
#ifndef SIM_NAME
#define SIM_NAME "xpu-asm simulated device"
#endif
#define STYPE_DEVICE_PROPERTIES_1_2 0x00020006u
#define POOL_TIMESTAMP 4u    /* ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP */
#define CB_TIMESTAMP 16u     /* counter-based events' DEVICE_TIMESTAMP flag */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t ticks_per_group = 1000, hz = 12500000, bits = 32, gap = 100, not_ready, never;
static uint64_t clock_now;
/* Host syncs so far: a sync after a kernel ran makes it done, however many
 * queries NOT_READY still had to answer. */
static uint64_t syncs;

enum kind { K_DRIVER = 0x51d1, K_DEVICE, K_CONTEXT, K_QUEUE, K_LIST, K_POOL, K_EVENT, K_FENCE, K_MODULE, K_KERNEL, K_LOG };
struct obj { int kind; };
static struct obj the_driver = {K_DRIVER}, the_device = {K_DEVICE};

struct event {
    struct obj o;
    int timestamps, counter_based, signaled;
    uint64_t queries_left, sync_mark, start, end;
};
struct pool { struct obj o; uint32_t flags, count; struct event *events; };
struct module { struct obj o; int n; char **names; };
#define ARGS 16
struct kernel { struct obj o; uint32_t adds; uint32_t size[3]; uint64_t args[ARGS]; };
enum op { OP_KERNEL, OP_SIGNAL, OP_RESET, OP_QUERY };
struct cmd {
    enum op op;
    struct kernel k; /* a copy: the kernel as appended */
    ze_group_count_t groups;
    struct event *event;
    void *dst; /* OP_QUERY: where the timestamp goes */
};
struct list { struct obj o; int immediate; int n, cap; struct cmd *cmds; };
struct fence { struct obj o; int signaled; };

static uint64_t env_or(const char *name, uint64_t dflt) {
    char full[64];
    snprintf(full, sizeof full, "%s%s", SIM_ENV, name);
    const char *v = getenv(full);
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static ze_result_t sim_init(ze_init_flags_t flags) {
    (void)flags;
    static int done;
    pthread_mutex_lock(&lock);
    if (!done) {
        ticks_per_group = env_or("TICKS", 1000);
        hz = env_or("HZ", 12500000);
        bits = env_or("BITS", 32);
        clock_now = env_or("START", 0);
        gap = env_or("GAP", 100);
        not_ready = env_or("NOT_READY", 0);
        never = env_or("NEVER", 0);
        done = 1;
    }
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}

static uint64_t masked(uint64_t t) { return bits >= 64 ? t : t & ((1ull << bits) - 1); }

/* The event's kernel (or other command) ran from start to end. */
static void signal_event(struct event *e, uint64_t start, uint64_t end) {
    if (!e || never)
        return;
    e->start = masked(start);
    e->end = masked(end);
    e->signaled = 1;
    e->queries_left = not_ready;
    e->sync_mark = syncs;
}

/* Whether e's command is done, as a query sees it (a query answered
 * NOT_READY counts down). */
static int done(struct event *e) {
    if (!e->signaled)
        return 0;
    if (e->queries_left == 0 || syncs > e->sync_mark)
        return 1;
    e->queries_left--;
    return 0;
}

static ze_result_t host_sync(void) {
    pthread_mutex_lock(&lock);
    syncs++;
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}

static void run_kernel(struct kernel *k, const ze_group_count_t *g, struct event *e) {
    uint64_t groups = (uint64_t)g->groupCountX * g->groupCountY * g->groupCountZ;
    uint64_t start = clock_now, end = start + groups * ticks_per_group;
    clock_now = end + gap;
    uint32_t *a = (uint32_t *)(uintptr_t)k->args[0];
    if (k->adds && a && !never) {
        uint64_t items = groups * k->size[0] * k->size[1] * k->size[2];
        for (uint64_t i = 0; i < items; i++)
            a[i] += k->adds;
    }
    signal_event(e, start, end);
}

static void run(struct cmd *c) {
    switch (c->op) {
    case OP_KERNEL:
        run_kernel(&c->k, &c->groups, c->event);
        break;
    case OP_SIGNAL:
        signal_event(c->event, clock_now, clock_now);
        break;
    case OP_RESET:
        if (c->event)
            c->event->signaled = 0;
        break;
    case OP_QUERY:
        if (c->event && c->event->signaled && c->dst) {
            uint64_t *d = c->dst;
            d[0] = d[2] = c->event->start;
            d[1] = d[3] = c->event->end;
        }
        break;
    }
}

/* A command on a list: run now (immediate) or kept for each execution. */
static ze_result_t append(ze_command_list_handle_t h, struct cmd c) {
    struct list *l = (struct list *)h;
    if (!l || l->o.kind != K_LIST)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    pthread_mutex_lock(&lock);
    if (l->immediate) {
        run(&c);
    } else {
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 16;
            l->cmds = realloc(l->cmds, l->cap * sizeof *l->cmds);
        }
        l->cmds[l->n++] = c;
    }
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}

static void *make(size_t size, int kind) {
    struct obj *o = calloc(1, size);
    o->kind = kind;
    return o;
}

/* ---- driver and device ------------------------------------------------- */

static ze_result_t driver_get(uint32_t *count, ze_driver_handle_t *drivers) {
    if (drivers && *count)
        drivers[0] = (ze_driver_handle_t)&the_driver;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t driver_api_version(ze_driver_handle_t d, ze_api_version_t *v) {
    (void)d;
    *v = ZE_MAKE_VERSION(1, 4);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t driver_properties(ze_driver_handle_t d, ze_driver_properties_t *p) {
    (void)d;
    memset(p->uuid.id, 0x5a, sizeof p->uuid.id);
    p->driverVersion = 1;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t driver_ipc_properties(ze_driver_handle_t d, ze_driver_ipc_properties_t *p) {
    (void)d;
    p->flags = 0;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t driver_extensions(ze_driver_handle_t d, uint32_t *count, ze_driver_extension_properties_t *p) {
    (void)d, (void)p;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t cb_event_create(ze_context_handle_t, ze_device_handle_t, const void *, ze_event_handle_t *);
static ze_result_t driver_extension_function(ze_driver_handle_t d, const char *name, void **f) {
    (void)d;
    if (strcmp(name, "zexCounterBasedEventCreate2") == 0) {
        *f = (void *)cb_event_create;
        return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}
static ze_result_t device_get(ze_driver_handle_t d, uint32_t *count, ze_device_handle_t *devices) {
    (void)d;
    if (devices && *count)
        devices[0] = (ze_device_handle_t)&the_device;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t device_sub_devices(ze_device_handle_t d, uint32_t *count, ze_device_handle_t *s) {
    (void)d, (void)s;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t device_properties(ze_device_handle_t d, ze_device_properties_t *p) {
    (void)d;
    p->type = ZE_DEVICE_TYPE_GPU;
    p->vendorId = 0x8086;
    p->deviceId = 0x0bd5;
    p->flags = 0;
    p->coreClockRate = 1600;
    p->maxMemAllocSize = 1ull << 32;
    p->maxHardwareContexts = 1;
    p->numThreadsPerEU = 8;
    p->physicalEUSimdWidth = 16;
    p->numEUsPerSubslice = 8;
    p->numSubslicesPerSlice = 4;
    p->numSlices = 1;
    /* 1.2: ticks per second; 1.0: ns per tick. */
    p->timerResolution = (uint32_t)p->stype == STYPE_DEVICE_PROPERTIES_1_2 ? hz : 1000000000ull / hz;
    p->timestampValidBits = (uint32_t)bits;
    p->kernelTimestampValidBits = (uint32_t)bits;
    memset(p->uuid.id, 0x5b, sizeof p->uuid.id);
    snprintf(p->name, sizeof p->name, "%s", SIM_NAME);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t device_compute(ze_device_handle_t d, ze_device_compute_properties_t *p) {
    (void)d;
    p->maxTotalGroupSize = 1024;
    p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
    p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 1u << 30;
    p->maxSharedLocalMemory = 65536;
    p->numSubGroupSizes = 2;
    p->subGroupSizes[0] = 16;
    p->subGroupSizes[1] = 32;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t device_queue_groups(ze_device_handle_t d, uint32_t *count, ze_command_queue_group_properties_t *p) {
    (void)d;
    if (p && *count) {
        p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
        p[0].maxMemoryFillPatternSize = 4;
        p[0].numQueues = 1;
    }
    *count = 1;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t device_timestamps(ze_device_handle_t d, uint64_t *host, uint64_t *dev) {
    (void)d;
    *host = 0;
    *dev = masked(clock_now);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t count_zero(void *h, uint32_t *count, void *p) {
    (void)h, (void)p;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t ok_handle(void *h) {
    (void)h;
    return ZE_RESULT_SUCCESS;
}

/* ---- contexts, memory, queues, lists, fences ---------------------------- */

static ze_result_t context_create(ze_driver_handle_t d, const ze_context_desc_t *desc, ze_context_handle_t *c) {
    (void)d, (void)desc;
    *c = make(sizeof(struct obj), K_CONTEXT);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t destroy(void *h) {
    free(h);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t mem_alloc(size_t size, size_t align, void **p) {
    *p = aligned_alloc(align > 64 ? align : 64, (size + 63) / 64 * 64);
    if (*p)
        memset(*p, 0, size);
    return *p ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}
static ze_result_t mem_shared(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd, const ze_host_mem_alloc_desc_t *hd,
                              size_t size, size_t align, ze_device_handle_t d, void **p) {
    (void)c, (void)dd, (void)hd, (void)d;
    return mem_alloc(size, align, p);
}
static ze_result_t mem_device(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd, size_t size, size_t align,
                              ze_device_handle_t d, void **p) {
    (void)c, (void)dd, (void)d;
    return mem_alloc(size, align, p);
}
static ze_result_t mem_host(ze_context_handle_t c, const ze_host_mem_alloc_desc_t *hd, size_t size, size_t align, void **p) {
    (void)c, (void)hd;
    return mem_alloc(size, align, p);
}
static ze_result_t mem_free(ze_context_handle_t c, void *p) {
    (void)c;
    free(p);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t queue_create(ze_context_handle_t c, ze_device_handle_t d, const ze_command_queue_desc_t *desc,
                                ze_command_queue_handle_t *q) {
    (void)c, (void)d, (void)desc;
    *q = make(sizeof(struct obj), K_QUEUE);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t queue_execute(ze_command_queue_handle_t q, uint32_t n, ze_command_list_handle_t *lists,
                                 ze_fence_handle_t f) {
    (void)q;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++) {
        struct list *l = (struct list *)lists[i];
        for (int j = 0; j < l->n; j++)
            run(&l->cmds[j]);
    }
    if (f && !never)
        ((struct fence *)f)->signaled = 1;
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t queue_sync(ze_command_queue_handle_t q, uint64_t timeout) {
    (void)q, (void)timeout;
    return host_sync();
}
static ze_result_t list_create(ze_context_handle_t c, ze_device_handle_t d, const ze_command_list_desc_t *desc,
                               ze_command_list_handle_t *out) {
    (void)c, (void)d, (void)desc;
    *out = make(sizeof(struct list), K_LIST);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t list_create_immediate(ze_context_handle_t c, ze_device_handle_t d, const ze_command_queue_desc_t *desc,
                                         ze_command_list_handle_t *out) {
    (void)c, (void)d, (void)desc;
    struct list *l = make(sizeof(struct list), K_LIST);
    l->immediate = 1;
    *out = (ze_command_list_handle_t)l;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t list_destroy(ze_command_list_handle_t h) {
    free(((struct list *)h)->cmds);
    free(h);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t list_reset(ze_command_list_handle_t h) {
    ((struct list *)h)->n = 0;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t list_sync(ze_command_list_handle_t h, uint64_t timeout) {
    (void)h, (void)timeout;
    return host_sync();
}
static ze_result_t fence_create(ze_command_queue_handle_t q, const ze_fence_desc_t *desc, ze_fence_handle_t *f) {
    (void)q, (void)desc;
    *f = make(sizeof(struct fence), K_FENCE);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t fence_sync(ze_fence_handle_t f, uint64_t timeout) {
    (void)f, (void)timeout;
    return host_sync();
}
static ze_result_t fence_query(ze_fence_handle_t f) {
    return ((struct fence *)f)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}
static ze_result_t fence_reset(ze_fence_handle_t f) {
    ((struct fence *)f)->signaled = 0;
    return ZE_RESULT_SUCCESS;
}

/* ---- events ------------------------------------------------------------- */

static ze_result_t pool_create(ze_context_handle_t c, const ze_event_pool_desc_t *desc, uint32_t n,
                               ze_device_handle_t *devices, ze_event_pool_handle_t *out) {
    (void)c, (void)n, (void)devices;
    struct pool *p = make(sizeof(struct pool), K_POOL);
    p->flags = desc->flags;
    p->count = desc->count;
    p->events = calloc(desc->count, sizeof *p->events);
    for (uint32_t i = 0; i < desc->count; i++) {
        p->events[i].o.kind = K_EVENT;
        p->events[i].timestamps = (desc->flags & POOL_TIMESTAMP) != 0;
    }
    *out = (ze_event_pool_handle_t)p;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t pool_destroy(ze_event_pool_handle_t h) {
    free(((struct pool *)h)->events);
    free(h);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t event_create(ze_event_pool_handle_t h, const ze_event_desc_t *desc, ze_event_handle_t *out) {
    struct pool *p = (struct pool *)h;
    if (desc->index >= p->count)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct event *e = &p->events[desc->index];
    e->signaled = 0;
    *out = (ze_event_handle_t)e;
    return ZE_RESULT_SUCCESS;
}
/* zexCounterBasedEventCreate2(context, device, desc, event): desc is
 * {stype, pNext, flags, signal scope, wait scope}. */
struct cb_desc { uint32_t stype; const void *next; uint32_t flags, signal, wait; };
static ze_result_t cb_event_create(ze_context_handle_t c, ze_device_handle_t d, const void *desc, ze_event_handle_t *out) {
    (void)c, (void)d;
    struct event *e = make(sizeof(struct event), K_EVENT);
    e->counter_based = 1;
    e->timestamps = (((const struct cb_desc *)desc)->flags & CB_TIMESTAMP) != 0;
    *out = (ze_event_handle_t)e;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t event_destroy(ze_event_handle_t h) {
    struct event *e = (struct event *)h;
    if (e->counter_based)
        free(e);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t event_host_signal(ze_event_handle_t h) {
    pthread_mutex_lock(&lock);
    signal_event((struct event *)h, clock_now, clock_now);
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t event_host_sync(ze_event_handle_t h, uint64_t timeout) {
    (void)h, (void)timeout;
    return host_sync();
}
static ze_result_t event_query(ze_event_handle_t h) {
    pthread_mutex_lock(&lock);
    ze_result_t r = done((struct event *)h) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
    pthread_mutex_unlock(&lock);
    return r;
}
static ze_result_t event_host_reset(ze_event_handle_t h) {
    ((struct event *)h)->signaled = 0;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t event_timestamp(ze_event_handle_t h, ze_kernel_timestamp_result_t *r) {
    struct event *e = (struct event *)h;
    if (!e->timestamps)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    ze_result_t res = done(e) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
    if (res == ZE_RESULT_SUCCESS) {
        r->global.kernelStart = r->context.kernelStart = e->start;
        r->global.kernelEnd = r->context.kernelEnd = e->end;
    }
    pthread_mutex_unlock(&lock);
    return res;
}

/* ---- modules and kernels ------------------------------------------------ */

/* The entry points of a SPIR-V module (OpEntryPoint: opcode 15, operands
 * model, id, name). */
static void entry_points(struct module *m, const uint8_t *bytes, size_t size) {
    if (size < 20 || ((const uint32_t *)bytes)[0] != 0x07230203u)
        return;
    const uint32_t *w = (const uint32_t *)bytes;
    size_t n = size / 4;
    for (size_t i = 5; i < n;) {
        uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
        if (count == 0 || i + count > n)
            break;
        if (op == 15 && count > 3) {
            const char *name = (const char *)&w[i + 3];
            size_t max = (count - 3) * 4;
            m->names = realloc(m->names, (m->n + 1) * sizeof *m->names);
            m->names[m->n++] = strndup(name, max);
        }
        i += count;
    }
}
static ze_result_t module_create(ze_context_handle_t c, ze_device_handle_t d, const ze_module_desc_t *desc,
                                 ze_module_handle_t *out, ze_module_build_log_handle_t *log) {
    (void)c, (void)d;
    struct module *m = make(sizeof(struct module), K_MODULE);
    entry_points(m, desc->pInputModule, desc->inputSize);
    *out = (ze_module_handle_t)m;
    if (log)
        *log = make(sizeof(struct obj), K_LOG);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t module_kernel_names(ze_module_handle_t h, uint32_t *count, const char **names) {
    struct module *m = (struct module *)h;
    if (names)
        for (int i = 0; i < m->n && i < (int)*count; i++)
            names[i] = m->names[i];
    *count = (uint32_t)m->n;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t module_native_binary(ze_module_handle_t h, size_t *size, uint8_t *bytes) {
    (void)h, (void)size, (void)bytes;
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}
static ze_result_t log_string(ze_module_build_log_handle_t h, size_t *size, char *s) {
    (void)h;
    if (s && *size)
        s[0] = 0;
    *size = 1;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t kernel_create(ze_module_handle_t m, const ze_kernel_desc_t *desc, ze_kernel_handle_t *out) {
    (void)m;
    struct kernel *k = make(sizeof(struct kernel), K_KERNEL);
    k->adds = strcmp(desc->pKernelName, "add_one") == 0 ? 1 : strcmp(desc->pKernelName, "add_two") == 0 ? 2 : 0;
    k->size[0] = k->size[1] = k->size[2] = 1;
    *out = (ze_kernel_handle_t)k;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t kernel_destroy(ze_kernel_handle_t h) {
    free(h);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t kernel_group_size(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z) {
    struct kernel *k = (struct kernel *)h;
    k->size[0] = x, k->size[1] = y, k->size[2] = z;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t kernel_suggest(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z, uint32_t *gx, uint32_t *gy,
                                  uint32_t *gz) {
    (void)h, (void)x, (void)y, (void)z;
    *gx = *gy = *gz = 1;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t kernel_set_arg(ze_kernel_handle_t h, uint32_t i, size_t size, const void *value) {
    struct kernel *k = (struct kernel *)h;
    if (i >= ARGS)
        return ZE_RESULT_SUCCESS;
    k->args[i] = 0;
    if (value && size)
        memcpy(&k->args[i], value, size < 8 ? size : 8);
    return ZE_RESULT_SUCCESS;
}
static ze_result_t kernel_properties(ze_kernel_handle_t h, ze_kernel_properties_t *p) {
    (void)h;
    p->numKernelArgs = 1;
    p->localMemSize = 0;
    return ZE_RESULT_SUCCESS;
}

/* ---- appends ------------------------------------------------------------ */

/* A copy of the kernel as it is now (its arguments' values with it). */
static struct cmd kernel_cmd(ze_kernel_handle_t h, const ze_group_count_t *g, ze_event_handle_t e) {
    struct cmd c = {.op = OP_KERNEL, .k = *(struct kernel *)h, .groups = *g, .event = (struct event *)e};
    return c;
}
static ze_result_t append_launch(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g,
                                 ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    (void)nw, (void)w;
    return append(l, kernel_cmd(k, g, e));
}
static ze_result_t append_indirect(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g,
                                   ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    return append_launch(l, k, g, e, nw, w);
}
static ze_result_t append_multiple(ze_command_list_handle_t l, uint32_t n, ze_kernel_handle_t *ks, const uint32_t *count,
                                   const ze_group_count_t *g, ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    (void)nw, (void)w;
    uint32_t m = count && *count < n ? *count : n;
    ze_result_t r = ZE_RESULT_SUCCESS;
    for (uint32_t i = 0; i < m && r == ZE_RESULT_SUCCESS; i++)
        r = append(l, kernel_cmd(ks[i], &g[i], i + 1 == m ? e : NULL));
    return r;
}
static ze_result_t append_barrier(ze_command_list_handle_t l, ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    (void)nw, (void)w;
    return append(l, (struct cmd){.op = OP_SIGNAL, .event = (struct event *)e});
}
static ze_result_t append_signal(ze_command_list_handle_t l, ze_event_handle_t e) {
    return append(l, (struct cmd){.op = OP_SIGNAL, .event = (struct event *)e});
}
static ze_result_t append_wait(ze_command_list_handle_t l, uint32_t n, ze_event_handle_t *e) {
    (void)l, (void)n, (void)e;
    return ZE_RESULT_SUCCESS;
}
static ze_result_t append_reset(ze_command_list_handle_t l, ze_event_handle_t e) {
    return append(l, (struct cmd){.op = OP_RESET, .event = (struct event *)e});
}
static ze_result_t append_query(ze_command_list_handle_t l, uint32_t n, ze_event_handle_t *events, void *dst,
                                const size_t *offsets, ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    (void)nw, (void)w;
    ze_result_t r = ZE_RESULT_SUCCESS;
    for (uint32_t i = 0; i < n && r == ZE_RESULT_SUCCESS; i++) {
        char *at = (char *)dst + (offsets ? offsets[i] : i * sizeof(ze_kernel_timestamp_result_t));
        r = append(l, (struct cmd){.op = OP_QUERY, .event = (struct event *)events[i], .dst = at});
    }
    return r == ZE_RESULT_SUCCESS ? append_signal(l, e) : r;
}
static ze_result_t append_copy(ze_command_list_handle_t l, void *dst, const void *src, size_t size, ze_event_handle_t e,
                               uint32_t nw, ze_event_handle_t *w) {
    (void)nw, (void)w;
    memmove(dst, src, size);
    return append(l, (struct cmd){.op = OP_SIGNAL, .event = (struct event *)e});
}

/* ---- the tables ----------------------------------------------------------- */

#define GETTER(name, type) ze_result_t name(ze_api_version_t v, type *t)
/* A getter that fills nothing, exported under `name` whatever type the
 * headers (of whichever version) give it. */
#define EMPTY(name)                                                          \
    ze_result_t sim_##name(ze_api_version_t v, void *t) __asm__(#name);      \
    ze_result_t sim_##name(ze_api_version_t v, void *t) {                    \
        (void)v, (void)t;                                                    \
        return ZE_RESULT_SUCCESS;                                            \
    }

GETTER(zeGetGlobalProcAddrTable, ze_global_dditable_t) {
    (void)v;
    t->pfnInit = sim_init;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetDriverProcAddrTable, ze_driver_dditable_t) {
    (void)v;
    t->pfnGet = driver_get;
    t->pfnGetApiVersion = driver_api_version;
    t->pfnGetProperties = driver_properties;
    t->pfnGetIpcProperties = driver_ipc_properties;
    t->pfnGetExtensionProperties = driver_extensions;
    t->pfnGetExtensionFunctionAddress = driver_extension_function;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetDeviceProcAddrTable, ze_device_dditable_t) {
    (void)v;
    t->pfnGet = device_get;
    t->pfnGetSubDevices = device_sub_devices;
    t->pfnGetProperties = device_properties;
    t->pfnGetComputeProperties = device_compute;
    t->pfnGetCommandQueueGroupProperties = device_queue_groups;
    t->pfnGetMemoryProperties = (ze_pfnDeviceGetMemoryProperties_t)count_zero;
    t->pfnGetCacheProperties = (ze_pfnDeviceGetCacheProperties_t)count_zero;
    t->pfnGetGlobalTimestamps = device_timestamps;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetContextProcAddrTable, ze_context_dditable_t) {
    (void)v;
    t->pfnCreate = context_create;
    t->pfnDestroy = (ze_pfnContextDestroy_t)destroy;
    t->pfnGetStatus = (ze_pfnContextGetStatus_t)ok_handle;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t) {
    (void)v;
    t->pfnCreate = queue_create;
    t->pfnDestroy = (ze_pfnCommandQueueDestroy_t)destroy;
    t->pfnExecuteCommandLists = queue_execute;
    t->pfnSynchronize = queue_sync;
    return ZE_RESULT_SUCCESS;
}
/* zeCommandListHostSynchronize (API 1.6) where the headers have it (the
 * version macro: the enum is 0 to the preprocessor). */
GETTER(zeGetCommandListProcAddrTable, ze_command_list_dditable_t) {
    t->pfnCreate = list_create;
    t->pfnCreateImmediate = list_create_immediate;
    t->pfnDestroy = list_destroy;
    t->pfnClose = (ze_pfnCommandListClose_t)ok_handle;
    t->pfnReset = list_reset;
    t->pfnAppendBarrier = append_barrier;
    t->pfnAppendMemoryCopy = append_copy;
    t->pfnAppendSignalEvent = append_signal;
    t->pfnAppendWaitOnEvents = append_wait;
    t->pfnAppendEventReset = append_reset;
    t->pfnAppendQueryKernelTimestamps = append_query;
    t->pfnAppendLaunchKernel = append_launch;
    t->pfnAppendLaunchCooperativeKernel = append_launch;
    t->pfnAppendLaunchKernelIndirect = append_indirect;
    t->pfnAppendLaunchMultipleKernelsIndirect = append_multiple;
#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 6)
    if (v >= ZE_MAKE_VERSION(1, 6))
        t->pfnHostSynchronize = list_sync;
#else
    (void)v, (void)list_sync;
#endif
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetFenceProcAddrTable, ze_fence_dditable_t) {
    (void)v;
    t->pfnCreate = fence_create;
    t->pfnDestroy = (ze_pfnFenceDestroy_t)destroy;
    t->pfnHostSynchronize = fence_sync;
    t->pfnQueryStatus = fence_query;
    t->pfnReset = fence_reset;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t) {
    (void)v;
    t->pfnCreate = pool_create;
    t->pfnDestroy = pool_destroy;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetEventProcAddrTable, ze_event_dditable_t) {
    (void)v;
    t->pfnCreate = event_create;
    t->pfnDestroy = event_destroy;
    t->pfnHostSignal = event_host_signal;
    t->pfnHostSynchronize = event_host_sync;
    t->pfnQueryStatus = event_query;
    t->pfnHostReset = event_host_reset;
    t->pfnQueryKernelTimestamp = event_timestamp;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t) {
    (void)v;
    t->pfnCreate = module_create;
    t->pfnDestroy = (ze_pfnModuleDestroy_t)destroy;
    t->pfnGetNativeBinary = module_native_binary;
    t->pfnGetKernelNames = module_kernel_names;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t) {
    (void)v;
    t->pfnDestroy = (ze_pfnModuleBuildLogDestroy_t)destroy;
    t->pfnGetString = log_string;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t) {
    (void)v;
    t->pfnCreate = kernel_create;
    t->pfnDestroy = kernel_destroy;
    t->pfnSetGroupSize = kernel_group_size;
    t->pfnSuggestGroupSize = kernel_suggest;
    t->pfnSetArgumentValue = kernel_set_arg;
    t->pfnGetProperties = kernel_properties;
    return ZE_RESULT_SUCCESS;
}
GETTER(zeGetMemProcAddrTable, ze_mem_dditable_t) {
    (void)v;
    t->pfnAllocShared = mem_shared;
    t->pfnAllocDevice = mem_device;
    t->pfnAllocHost = mem_host;
    t->pfnFree = mem_free;
    return ZE_RESULT_SUCCESS;
}
EMPTY(zeGetDeviceExpProcAddrTable)
EMPTY(zeGetEventExpProcAddrTable)
EMPTY(zeGetImageProcAddrTable)
EMPTY(zeGetImageExpProcAddrTable)
EMPTY(zeGetKernelExpProcAddrTable)
EMPTY(zeGetPhysicalMemProcAddrTable)
EMPTY(zeGetSamplerProcAddrTable)
EMPTY(zeGetVirtualMemProcAddrTable)
EMPTY(zeGetFabricEdgeExpProcAddrTable)
EMPTY(zeGetFabricVertexExpProcAddrTable)
EMPTY(zeGetMemExpProcAddrTable)
EMPTY(zeGetCommandListExpProcAddrTable)
EMPTY(zeGetDriverExpProcAddrTable)
/* Loader 1.8's zeInit asks for the tools' and sysman's tables too. */
EMPTY(zetGetDeviceProcAddrTable)
EMPTY(zetGetContextProcAddrTable)
EMPTY(zetGetCommandListProcAddrTable)
EMPTY(zetGetKernelProcAddrTable)
EMPTY(zetGetModuleProcAddrTable)
EMPTY(zetGetDebugProcAddrTable)
EMPTY(zetGetMetricProcAddrTable)
EMPTY(zetGetMetricGroupProcAddrTable)
EMPTY(zetGetMetricGroupExpProcAddrTable)
EMPTY(zetGetMetricQueryProcAddrTable)
EMPTY(zetGetMetricQueryPoolProcAddrTable)
EMPTY(zetGetMetricStreamerProcAddrTable)
EMPTY(zetGetTracerExpProcAddrTable)
EMPTY(zesGetDeviceProcAddrTable)
EMPTY(zesGetDriverProcAddrTable)
EMPTY(zesGetDiagnosticsProcAddrTable)
EMPTY(zesGetEngineProcAddrTable)
EMPTY(zesGetFabricPortProcAddrTable)
EMPTY(zesGetFanProcAddrTable)
EMPTY(zesGetFirmwareProcAddrTable)
EMPTY(zesGetFrequencyProcAddrTable)
EMPTY(zesGetLedProcAddrTable)
EMPTY(zesGetMemoryProcAddrTable)
EMPTY(zesGetPerformanceFactorProcAddrTable)
EMPTY(zesGetPowerProcAddrTable)
EMPTY(zesGetPsuProcAddrTable)
EMPTY(zesGetRasProcAddrTable)
EMPTY(zesGetSchedulerProcAddrTable)
EMPTY(zesGetStandbyProcAddrTable)
EMPTY(zesGetTemperatureProcAddrTable)
