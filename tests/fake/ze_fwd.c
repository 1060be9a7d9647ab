/*
 * A Level Zero driver that forwards every call to NEO (the real driver,
 * compiling with the real IGC) and gives the kernels' events known
 * timestamps: a device that executes in known time, for programs that only
 * run on NEO (SYCL's adapters, dpnp). The real loader loads it
 * (ZE_ENABLE_ALT_DRIVERS=/path/libze_fwd.so) in place of NEO; it loads NEO
 * itself.
 *
 * NEO runs without hardware under its debug keys, which this driver sets
 * for NEO alone: they are in XPU_ASM_FWD_NEO_ENV ("KEY=VALUE" words), put
 * in the environment while NEO loads and initialises, and taken out after
 * (the program sees a device that executes, as it would on a GPU, not
 * NEO's no-hardware mode).
 *
 * Each kernel launched signals its event, when it runs (an immediate list:
 * at the append; a regular list: at each execution), with a start and an
 * end on one clock in ticks of a timer of HZ ticks per second and BITS
 * valid bits: it takes TICKS x (its groups) x (1 + FNV-1a(its name) % 4)
 * ticks (an indirect launch: one group), then GAP ticks pass. Queries of
 * that event (its status, its host sync, its kernel timestamp) are answered
 * here, never by NEO (which, without hardware, never completes a kernel and
 * waits for ever on some of them); every other event is NEO's business.
 * zeDeviceGetProperties gives the timer (ticks per second with the 1.2
 * properties type, ns per tick with the 1.0 one).
 *
 * The ground truth: each kernel that runs is written to the file
 * XPU_ASM_FWD_LOG (".<pid>" appended), as
 *   ran <ticks> <groups x> <groups y> <groups z> <kernel name>
 *
 * Settings (XPU_ASM_FWD_ + name): NEO (NEO's library, default
 * libze_intel_gpu.so.1), NEO_ENV, LOG, TICKS (default 1000), HZ (default
 * 12500000: 80 ns a tick), BITS (default 32), START (default 0), GAP
 * (default 100).
 *
 * The loader is told no "driver DDI handles": it then calls NEO through
 * this driver's tables, not through the tables NEO's handles carry. All of
 * the functions a timing tool calls on events (pools, events, resets,
 * queries, barriers, the device's properties) are this object's, as a real
 * driver's all are its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STYPE_DEVICE_PROPERTIES_1_2 0x00020006u
#define STYPE_DDI_HANDLES_PROPERTIES 0x00020027u
#define DDI_HANDLES_NAME "ZE_extension_driver_ddi_handles"
#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 14)
#define HAS_1_14 1
#endif
#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 10)
#define HAS_1_10 1
#endif

typedef ze_result_t (*getter_t)(ze_api_version_t, void *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;
static void *neo;
static uint64_t ticks_per_group = 1000, hz = 12500000, bits = 32, gap = 100, clock_now;

/* NEO's own functions, from its tables: room for the entries of an API
 * newer than these headers', which NEO may fill. */
#define NEO_TABLE(type, name)                                                                      \
    static union {                                                                                 \
        type t;                                                                                    \
        void *room[256];                                                                           \
    } name##_room;
NEO_TABLE(ze_global_dditable_t, n_global)
NEO_TABLE(ze_driver_dditable_t, n_driver)
NEO_TABLE(ze_device_dditable_t, n_device)
NEO_TABLE(ze_command_queue_dditable_t, n_queue)
NEO_TABLE(ze_command_list_dditable_t, n_list)
NEO_TABLE(ze_event_pool_dditable_t, n_pool)
NEO_TABLE(ze_event_dditable_t, n_event)
NEO_TABLE(ze_kernel_dditable_t, n_kernel)
#define n_global n_global_room.t
#define n_driver n_driver_room.t
#define n_device n_device_room.t
#define n_queue n_queue_room.t
#define n_list n_list_room.t
#define n_pool n_pool_room.t
#define n_event n_event_room.t
#define n_kernel n_kernel_room.t

static uint64_t setting(const char *name, uint64_t dflt) {
    char full[64];
    snprintf(full, sizeof full, "XPU_ASM_FWD_%s", name);
    const char *v = getenv(full);
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* NEO's keys into the environment (1) or out of it (0). */
static void neo_keys(int in) {
    const char *all = getenv("XPU_ASM_FWD_NEO_ENV");
    if (!all)
        return;
    char *copy = strdup(all), *save = NULL;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        if (!eq)
            continue;
        *eq = 0;
        if (in)
            setenv(w, eq + 1, 1);
        else
            unsetenv(w);
    }
    free(copy);
}

static void load(void) {
    ticks_per_group = setting("TICKS", 1000);
    hz = setting("HZ", 12500000);
    bits = setting("BITS", 32);
    clock_now = setting("START", 0);
    gap = setting("GAP", 100);
    const char *path = getenv("XPU_ASM_FWD_NEO");
    neo_keys(1);
    neo = dlopen(path && *path ? path : "libze_intel_gpu.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!neo)
        fprintf(stderr, "ze_fwd: cannot load NEO: %s\n", dlerror());
}

static getter_t neo_getter(const char *name) {
    pthread_once(&loaded, load);
    return neo ? (getter_t)dlsym(neo, name) : NULL;
}

/* ---- the ground truth ---------------------------------------------------- */

static FILE *log_file;
static pid_t log_pid;

static void write_ran(uint64_t ticks, const ze_group_count_t *g, const char *name) {
    const char *prefix = getenv("XPU_ASM_FWD_LOG");
    if (!prefix || !*prefix)
        return;
    if (!log_file || log_pid != getpid()) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", prefix, (int)getpid());
        log_file = fopen(path, "a");
        log_pid = getpid();
        if (!log_file)
            return;
    }
    fprintf(log_file, "ran %llu %u %u %u %s\n", (unsigned long long)ticks, g->groupCountX,
            g->groupCountY, g->groupCountZ, name);
    fflush(log_file);
}

/* ---- events this driver answers ---------------------------------------- */

#define EVENTS 65536
struct known {
    uintptr_t handle;
    int signaled;
    uint64_t start, end;
};
static struct known events[EVENTS];

static struct known *find_event(uintptr_t h, int make) {
    if (!h)
        return NULL;
    struct known *free_slot = NULL;
    for (size_t i = 0, at = (h >> 4) % EVENTS; i < EVENTS; i++, at = (at + 1) % EVENTS) {
        if (events[at].handle == h)
            return &events[at];
        if (events[at].handle == UINTPTR_MAX && !free_slot)
            free_slot = &events[at];
        if (events[at].handle == 0) {
            if (!free_slot)
                free_slot = &events[at];
            break;
        }
    }
    if (!make || !free_slot)
        return NULL;
    free_slot->handle = h;
    free_slot->signaled = 0;
    return free_slot;
}

static void forget_event(uintptr_t h) {
    for (size_t i = 0, at = (h >> 4) % EVENTS; i < EVENTS; i++, at = (at + 1) % EVENTS) {
        if (events[at].handle == 0)
            return;
        if (events[at].handle == h) {
            events[at].handle = UINTPTR_MAX; /* a tombstone */
            events[at].signaled = 0;
            return;
        }
    }
}

static uint64_t masked(uint64_t t) { return bits >= 64 ? t : t & ((1ull << bits) - 1); }

static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A kernel run: its ticks on the clock, its event signaled (lock held). */
static void run(const char *name, const ze_group_count_t *g, uintptr_t event) {
    uint64_t groups = (uint64_t)g->groupCountX * g->groupCountY * g->groupCountZ;
    uint64_t ticks = ticks_per_group * groups * (1 + fnv(name) % 4);
    uint64_t start = clock_now, end = start + ticks;
    clock_now = end + gap;
    write_ran(ticks, g, name);
    struct known *e = find_event(event, 1);
    if (e) {
        e->start = masked(start);
        e->end = masked(end);
        e->signaled = 1;
    }
}

/* ---- lists ----------------------------------------------------------------- */

struct append {
    char name[512];
    ze_group_count_t groups;
    uintptr_t event;
};
struct list {
    uintptr_t handle;
    int immediate;
    int n, cap;
    struct append *appends;
};
#define LISTS 4096
static struct list lists[LISTS];

static struct list *find_list(uintptr_t h, int make) {
    for (size_t i = 0, at = (h >> 4) % LISTS; i < LISTS; i++, at = (at + 1) % LISTS) {
        if (lists[at].handle == h)
            return &lists[at];
        if (lists[at].handle == 0) {
            if (!make)
                return NULL;
            lists[at].handle = h;
            return &lists[at];
        }
    }
    return NULL;
}

static void kernel_name(ze_kernel_handle_t k, char *out, size_t cap) {
    size_t size = 0;
    snprintf(out, cap, "?");
    if (!n_kernel.pfnGetName || n_kernel.pfnGetName(k, &size, NULL) != ZE_RESULT_SUCCESS || size == 0)
        return;
    char *buf = malloc(size);
    if (buf && n_kernel.pfnGetName(k, &size, buf) == ZE_RESULT_SUCCESS)
        snprintf(out, cap, "%s", buf);
    free(buf);
}

/* A launch NEO accepted on list l: run now (immediate) or kept for each
 * execution (regular). */
static void launched(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g,
                     ze_event_handle_t e) {
    struct append a = {.groups = *g, .event = (uintptr_t)e};
    kernel_name(k, a.name, sizeof a.name);
    pthread_mutex_lock(&lock);
    struct list *li = find_list((uintptr_t)l, 1);
    if (li && li->immediate) {
        run(a.name, &a.groups, a.event);
    } else if (li) {
        if (li->n == li->cap) {
            int cap = li->cap ? li->cap * 2 : 16;
            struct append *more = realloc(li->appends, cap * sizeof *more);
            if (more)
                li->appends = more, li->cap = cap;
        }
        if (li->n < li->cap)
            li->appends[li->n++] = a;
        /* Not signaled until the list runs. */
        struct known *ke = find_event(a.event, 1);
        if (ke)
            ke->signaled = 0;
    }
    pthread_mutex_unlock(&lock);
}

static const ze_group_count_t one_group = {1, 1, 1};

static ze_result_t f_launch(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g,
                            ze_event_handle_t e, uint32_t nw, ze_event_handle_t *w) {
    ze_result_t r = n_list.pfnAppendLaunchKernel(l, k, g, e, nw, w);
    if (r == ZE_RESULT_SUCCESS)
        launched(l, k, g, e);
    return r;
}
static ze_result_t f_cooperative(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                 const ze_group_count_t *g, ze_event_handle_t e, uint32_t nw,
                                 ze_event_handle_t *w) {
    ze_result_t r = n_list.pfnAppendLaunchCooperativeKernel(l, k, g, e, nw, w);
    if (r == ZE_RESULT_SUCCESS)
        launched(l, k, g, e);
    return r;
}
static ze_result_t f_indirect(ze_command_list_handle_t l, ze_kernel_handle_t k,
                              const ze_group_count_t *g, ze_event_handle_t e, uint32_t nw,
                              ze_event_handle_t *w) {
    ze_result_t r = n_list.pfnAppendLaunchKernelIndirect(l, k, g, e, nw, w);
    if (r == ZE_RESULT_SUCCESS)
        launched(l, k, &one_group, e);
    return r;
}
#ifdef HAS_1_14
static ze_result_t f_with_parameters(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                     const ze_group_count_t *g, const void *next, ze_event_handle_t e,
                                     uint32_t nw, ze_event_handle_t *w) {
    ze_result_t r = n_list.pfnAppendLaunchKernelWithParameters(l, k, g, next, e, nw, w);
    if (r == ZE_RESULT_SUCCESS)
        launched(l, k, g, e);
    return r;
}
static ze_result_t f_with_arguments(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                    const ze_group_count_t g, const ze_group_size_t s, void **args,
                                    const void *next, ze_event_handle_t e, uint32_t nw,
                                    ze_event_handle_t *w) {
    ze_result_t r = n_list.pfnAppendLaunchKernelWithArguments(l, k, g, s, args, next, e, nw, w);
    if (r == ZE_RESULT_SUCCESS)
        launched(l, k, &g, e);
    return r;
}
#endif

static ze_result_t f_create_immediate(ze_context_handle_t c, ze_device_handle_t d,
                                      const ze_command_queue_desc_t *desc,
                                      ze_command_list_handle_t *out) {
    ze_result_t r = n_list.pfnCreateImmediate(c, d, desc, out);
    if (r == ZE_RESULT_SUCCESS) {
        pthread_mutex_lock(&lock);
        struct list *li = find_list((uintptr_t)*out, 1);
        if (li)
            li->immediate = 1, li->n = 0;
        pthread_mutex_unlock(&lock);
    }
    return r;
}
static ze_result_t f_create(ze_context_handle_t c, ze_device_handle_t d,
                            const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
    ze_result_t r = n_list.pfnCreate(c, d, desc, out);
    if (r == ZE_RESULT_SUCCESS) {
        pthread_mutex_lock(&lock);
        struct list *li = find_list((uintptr_t)*out, 1);
        if (li)
            li->immediate = 0, li->n = 0;
        pthread_mutex_unlock(&lock);
    }
    return r;
}
static ze_result_t f_list_reset(ze_command_list_handle_t l) {
    pthread_mutex_lock(&lock);
    struct list *li = find_list((uintptr_t)l, 0);
    if (li)
        li->n = 0;
    pthread_mutex_unlock(&lock);
    return n_list.pfnReset(l);
}
static ze_result_t f_list_destroy(ze_command_list_handle_t l) {
    pthread_mutex_lock(&lock);
    struct list *li = find_list((uintptr_t)l, 0);
    if (li)
        li->n = 0, li->immediate = 0;
    pthread_mutex_unlock(&lock);
    return n_list.pfnDestroy(l);
}
static ze_result_t f_barrier(ze_command_list_handle_t l, ze_event_handle_t e, uint32_t nw,
                             ze_event_handle_t *w) {
    return n_list.pfnAppendBarrier(l, e, nw, w);
}
static ze_result_t f_execute(ze_command_queue_handle_t q, uint32_t n, ze_command_list_handle_t *ls,
                             ze_fence_handle_t fence) {
    ze_result_t r = n_queue.pfnExecuteCommandLists(q, n, ls, fence);
    if (r != ZE_RESULT_SUCCESS)
        return r;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++) {
        struct list *li = find_list((uintptr_t)ls[i], 0);
        for (int j = 0; li && j < li->n; j++)
            run(li->appends[j].name, &li->appends[j].groups, li->appends[j].event);
    }
    pthread_mutex_unlock(&lock);
    return r;
}

/* ---- events ------------------------------------------------------------------ */

static ze_result_t f_pool_create(ze_context_handle_t c, const ze_event_pool_desc_t *d, uint32_t n,
                                 ze_device_handle_t *ds, ze_event_pool_handle_t *out) {
    return n_pool.pfnCreate(c, d, n, ds, out);
}
static ze_result_t f_event_create(ze_event_pool_handle_t p, const ze_event_desc_t *d,
                                  ze_event_handle_t *out) {
    ze_result_t r = n_event.pfnCreate(p, d, out);
    if (r == ZE_RESULT_SUCCESS) {
        pthread_mutex_lock(&lock);
        forget_event((uintptr_t)*out);
        pthread_mutex_unlock(&lock);
    }
    return r;
}
static ze_result_t f_event_destroy(ze_event_handle_t e) {
    pthread_mutex_lock(&lock);
    forget_event((uintptr_t)e);
    pthread_mutex_unlock(&lock);
    return n_event.pfnDestroy(e);
}
static ze_result_t f_event_reset(ze_event_handle_t e) {
    pthread_mutex_lock(&lock);
    forget_event((uintptr_t)e);
    pthread_mutex_unlock(&lock);
    return n_event.pfnHostReset(e);
}
/* 1: a kernel of this driver's signals e, and it ran; 0: it is to run; -1:
 * NEO's business. */
static int state(ze_event_handle_t e, struct known *copy) {
    pthread_mutex_lock(&lock);
    struct known *k = find_event((uintptr_t)e, 0);
    int s = k ? k->signaled : -1;
    if (k && copy)
        *copy = *k;
    pthread_mutex_unlock(&lock);
    return s;
}
static ze_result_t f_event_query(ze_event_handle_t e) {
    switch (state(e, NULL)) {
    case 1:
        return ZE_RESULT_SUCCESS;
    case 0:
        return ZE_RESULT_NOT_READY;
    default:
        return n_event.pfnQueryStatus(e);
    }
}
static ze_result_t f_event_sync(ze_event_handle_t e, uint64_t timeout) {
    switch (state(e, NULL)) {
    case 1:
        return ZE_RESULT_SUCCESS;
    case 0:
        return ZE_RESULT_NOT_READY;
    default:
        return n_event.pfnHostSynchronize(e, timeout);
    }
}
static ze_result_t f_event_timestamp(ze_event_handle_t e, ze_kernel_timestamp_result_t *r) {
    struct known k;
    switch (state(e, &k)) {
    case 1:
        r->global.kernelStart = r->context.kernelStart = k.start;
        r->global.kernelEnd = r->context.kernelEnd = k.end;
        return ZE_RESULT_SUCCESS;
    case 0:
        return ZE_RESULT_NOT_READY;
    default:
        return n_event.pfnQueryKernelTimestamp(e, r);
    }
}

/* ---- driver and device --------------------------------------------------- */

static ze_result_t f_init(ze_init_flags_t flags) {
    ze_result_t r = n_global.pfnInit(flags);
    neo_keys(0);
    return r;
}
#ifdef HAS_1_10
static ze_result_t f_init_drivers(uint32_t *count, ze_driver_handle_t *drivers,
                                  ze_init_driver_type_desc_t *desc) {
    ze_result_t r = n_global.pfnInitDrivers(count, drivers, desc);
    (void)drivers;
    neo_keys(0);
    return r;
}
#endif

static ze_result_t f_extensions(ze_driver_handle_t d, uint32_t *count, ze_driver_extension_properties_t *out) {
    uint32_t n = 0;
    ze_result_t r = n_driver.pfnGetExtensionProperties(d, &n, NULL);
    if (r != ZE_RESULT_SUCCESS)
        return r;
    ze_driver_extension_properties_t *all = calloc(n ? n : 1, sizeof *all);
    if (!all)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    r = n_driver.pfnGetExtensionProperties(d, &n, all);
    uint32_t kept = 0;
    for (uint32_t i = 0; r == ZE_RESULT_SUCCESS && i < n; i++) {
        if (strcmp(all[i].name, DDI_HANDLES_NAME) == 0)
            continue;
        if (out && kept < *count)
            out[kept] = all[i];
        kept++;
    }
    if (r == ZE_RESULT_SUCCESS)
        *count = out && *count < kept ? *count : kept;
    free(all);
    return r;
}
static ze_result_t f_driver_properties(ze_driver_handle_t d, ze_driver_properties_t *p) {
    ze_result_t r = n_driver.pfnGetProperties(d, p);
    for (ze_base_properties_t *x = (ze_base_properties_t *)p->pNext; r == ZE_RESULT_SUCCESS && x;
         x = (ze_base_properties_t *)x->pNext)
        if ((uint32_t)x->stype == STYPE_DDI_HANDLES_PROPERTIES)
            /* Its flags follow the base. */
            *(uint32_t *)(x + 1) = 0;
    return r;
}
static ze_result_t f_device_properties(ze_device_handle_t d, ze_device_properties_t *p) {
    ze_result_t r = n_device.pfnGetProperties(d, p);
    if (r == ZE_RESULT_SUCCESS) {
        /* 1.2: ticks per second; 1.0: ns per tick. */
        p->timerResolution = (uint32_t)p->stype == STYPE_DEVICE_PROPERTIES_1_2 ? hz : 1000000000ull / hz;
        p->timestampValidBits = (uint32_t)bits;
        p->kernelTimestampValidBits = (uint32_t)bits;
    }
    return r;
}

/* ---- the tables ------------------------------------------------------------ */

#define SINCE(v, major, minor) ((v) >= ZE_MAKE_VERSION(major, minor))
#define PATCH(table, field, mine)                                                                  \
    do {                                                                                           \
        if ((table)->field)                                                                        \
            (table)->field = (mine);                                                               \
    } while (0)

/* Each table: NEO's, into a copy of this driver's and into the loader's
 * (as far as the loader's version has it), then this driver's entries. */
#define TABLE(name, type, mine)                                                                    \
    ze_result_t name(ze_api_version_t v, type *t) {                                                \
        getter_t g = neo_getter(#name);                                                            \
        if (!g)                                                                                    \
            return ZE_RESULT_ERROR_UNINITIALIZED;                                                  \
        memset(&mine##_room, 0, sizeof mine##_room);                                               \
        ze_result_t r = g(v, t);                                                                   \
        if (r == ZE_RESULT_SUCCESS)                                                                \
            r = g(v, &mine##_room);                                                                \
        if (r != ZE_RESULT_SUCCESS)                                                                \
            return r;
#define END                                                                                        \
    return r;                                                                                      \
    }

TABLE(zeGetGlobalProcAddrTable, ze_global_dditable_t, n_global)
PATCH(t, pfnInit, f_init);
#ifdef HAS_1_10
if (SINCE(v, 1, 10))
    PATCH(t, pfnInitDrivers, f_init_drivers);
#endif
END
TABLE(zeGetDriverProcAddrTable, ze_driver_dditable_t, n_driver)
PATCH(t, pfnGetExtensionProperties, f_extensions);
PATCH(t, pfnGetProperties, f_driver_properties);
END
TABLE(zeGetDeviceProcAddrTable, ze_device_dditable_t, n_device)
PATCH(t, pfnGetProperties, f_device_properties);
END
TABLE(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t, n_queue)
PATCH(t, pfnExecuteCommandLists, f_execute);
END
TABLE(zeGetCommandListProcAddrTable, ze_command_list_dditable_t, n_list)
PATCH(t, pfnCreate, f_create);
PATCH(t, pfnCreateImmediate, f_create_immediate);
PATCH(t, pfnReset, f_list_reset);
PATCH(t, pfnDestroy, f_list_destroy);
PATCH(t, pfnAppendBarrier, f_barrier);
PATCH(t, pfnAppendLaunchKernel, f_launch);
PATCH(t, pfnAppendLaunchCooperativeKernel, f_cooperative);
PATCH(t, pfnAppendLaunchKernelIndirect, f_indirect);
#ifdef HAS_1_14
if (SINCE(v, 1, 14)) {
    PATCH(t, pfnAppendLaunchKernelWithParameters, f_with_parameters);
    PATCH(t, pfnAppendLaunchKernelWithArguments, f_with_arguments);
}
#endif
END
TABLE(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t, n_pool)
PATCH(t, pfnCreate, f_pool_create);
END
TABLE(zeGetEventProcAddrTable, ze_event_dditable_t, n_event)
PATCH(t, pfnCreate, f_event_create);
PATCH(t, pfnDestroy, f_event_destroy);
PATCH(t, pfnHostReset, f_event_reset);
PATCH(t, pfnQueryStatus, f_event_query);
PATCH(t, pfnHostSynchronize, f_event_sync);
PATCH(t, pfnQueryKernelTimestamp, f_event_timestamp);
END
TABLE(zeGetKernelProcAddrTable, ze_kernel_dditable_t, n_kernel)
END

/* Every other table: NEO's as it is (none, where NEO has no such table). */
#define FORWARD(name)                                                                              \
    ze_result_t fwd_##name(ze_api_version_t v, void *t) __asm__(#name);                            \
    ze_result_t fwd_##name(ze_api_version_t v, void *t) {                                          \
        getter_t g = neo_getter(#name);                                                            \
        return g ? g(v, t) : ZE_RESULT_SUCCESS;                                                    \
    }
FORWARD(zeGetCommandListExpProcAddrTable)
FORWARD(zeGetContextProcAddrTable)
FORWARD(zeGetDeviceExpProcAddrTable)
FORWARD(zeGetDriverExpProcAddrTable)
FORWARD(zeGetEventExpProcAddrTable)
FORWARD(zeGetExecutableGraphProcAddrTable)
FORWARD(zeGetFabricEdgeExpProcAddrTable)
FORWARD(zeGetFabricVertexExpProcAddrTable)
FORWARD(zeGetFenceProcAddrTable)
FORWARD(zeGetGraphProcAddrTable)
FORWARD(zeGetImageExpProcAddrTable)
FORWARD(zeGetImageProcAddrTable)
FORWARD(zeGetKernelExpProcAddrTable)
FORWARD(zeGetMemExpProcAddrTable)
FORWARD(zeGetMemProcAddrTable)
FORWARD(zeGetModuleBuildLogProcAddrTable)
FORWARD(zeGetModuleProcAddrTable)
FORWARD(zeGetPhysicalMemProcAddrTable)
FORWARD(zeGetRTASBuilderExpProcAddrTable)
FORWARD(zeGetRTASBuilderProcAddrTable)
FORWARD(zeGetRTASParallelOperationExpProcAddrTable)
FORWARD(zeGetRTASParallelOperationProcAddrTable)
FORWARD(zeGetSamplerProcAddrTable)
FORWARD(zeGetVirtualMemProcAddrTable)
FORWARD(zerGetGlobalProcAddrTable)
FORWARD(zesGetDeviceExpProcAddrTable)
FORWARD(zesGetDeviceProcAddrTable)
FORWARD(zesGetDiagnosticsProcAddrTable)
FORWARD(zesGetDriverExpProcAddrTable)
FORWARD(zesGetDriverProcAddrTable)
FORWARD(zesGetEngineProcAddrTable)
FORWARD(zesGetFabricPortProcAddrTable)
FORWARD(zesGetFanProcAddrTable)
FORWARD(zesGetFirmwareExpProcAddrTable)
FORWARD(zesGetFirmwareProcAddrTable)
FORWARD(zesGetFrequencyProcAddrTable)
FORWARD(zesGetGlobalProcAddrTable)
FORWARD(zesGetLedProcAddrTable)
FORWARD(zesGetMemoryProcAddrTable)
FORWARD(zesGetOverclockProcAddrTable)
FORWARD(zesGetPerformanceFactorProcAddrTable)
FORWARD(zesGetPowerProcAddrTable)
FORWARD(zesGetPsuProcAddrTable)
FORWARD(zesGetRasExpProcAddrTable)
FORWARD(zesGetRasProcAddrTable)
FORWARD(zesGetSchedulerProcAddrTable)
FORWARD(zesGetStandbyProcAddrTable)
FORWARD(zesGetTemperatureProcAddrTable)
FORWARD(zesGetVFManagementExpProcAddrTable)
FORWARD(zetGetCommandListExpProcAddrTable)
FORWARD(zetGetCommandListProcAddrTable)
FORWARD(zetGetContextProcAddrTable)
FORWARD(zetGetDebugProcAddrTable)
FORWARD(zetGetDeviceExpProcAddrTable)
FORWARD(zetGetDeviceProcAddrTable)
FORWARD(zetGetKernelProcAddrTable)
FORWARD(zetGetMetricDecoderExpProcAddrTable)
FORWARD(zetGetMetricExpProcAddrTable)
FORWARD(zetGetMetricGroupExpProcAddrTable)
FORWARD(zetGetMetricGroupProcAddrTable)
FORWARD(zetGetMetricProcAddrTable)
FORWARD(zetGetMetricProgrammableExpProcAddrTable)
FORWARD(zetGetMetricQueryPoolProcAddrTable)
FORWARD(zetGetMetricQueryProcAddrTable)
FORWARD(zetGetMetricStreamerProcAddrTable)
FORWARD(zetGetMetricTracerExpProcAddrTable)
FORWARD(zetGetModuleProcAddrTable)
FORWARD(zetGetTracerExpProcAddrTable)
