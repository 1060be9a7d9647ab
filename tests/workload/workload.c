/*
 * Test workload for xpu-asm: launches GPU kernels through the real Level Zero
 * loader in the three ways real programs reach it, so that the interposer can
 * be tested against each of them.
 *
 *   --via link   direct calls to the loader's exported functions (through the
 *                PLT); only in the binary built with -DVIA_LINK -lze_loader.
 *   --via ddi    like the SYCL runtime's Level Zero adapter: dlopen the loader,
 *                zeLoaderInit, fill DDI tables with zeGet*ProcAddrTable and
 *                call only through them.
 *   --via dlsym  like a program with a statically linked loader or oneMKL:
 *                dlopen, then dlsym each function by name.
 *
 * The binary built without VIA_LINK has no DT_NEEDED on libze_loader, so the
 * interposer cannot see its calls by symbol interposition alone.
 *
 * Usage: workload --via link|ddi|dlsym --module a=A.spv [--module b=B.spv]
 *                 [--native n=N.bin] [--build-flags FLAGS] STEP...
 * Steps are described in usage() below.
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every Level Zero function the workload uses: name without the "ze" prefix,
 * the DDI table that holds it and the table member. */
#define ZE_FUNCS(X)                                                          \
    X(Init, global, pfnInit)                                                 \
    X(DriverGet, driver, pfnGet)                                             \
    X(DeviceGet, device, pfnGet)                                             \
    X(ContextCreate, context, pfnCreate)                                     \
    X(ContextDestroy, context, pfnDestroy)                                   \
    X(CommandQueueCreate, command_queue, pfnCreate)                          \
    X(CommandQueueDestroy, command_queue, pfnDestroy)                        \
    X(CommandQueueExecuteCommandLists, command_queue, pfnExecuteCommandLists) \
    X(CommandQueueSynchronize, command_queue, pfnSynchronize)                \
    X(CommandListCreate, command_list, pfnCreate)                            \
    X(CommandListCreateImmediate, command_list, pfnCreateImmediate)          \
    X(CommandListDestroy, command_list, pfnDestroy)                          \
    X(CommandListClose, command_list, pfnClose)                              \
    X(CommandListReset, command_list, pfnReset)                              \
    X(CommandListAppendLaunchKernel, command_list, pfnAppendLaunchKernel)    \
    X(CommandListAppendLaunchCooperativeKernel, command_list,                \
      pfnAppendLaunchCooperativeKernel)                                      \
    X(CommandListAppendLaunchKernelIndirect, command_list,                   \
      pfnAppendLaunchKernelIndirect)                                         \
    X(CommandListAppendLaunchMultipleKernelsIndirect, command_list,          \
      pfnAppendLaunchMultipleKernelsIndirect)                                \
    X(CommandListAppendBarrier, command_list, pfnAppendBarrier)              \
    X(EventPoolCreate, event_pool, pfnCreate)                                \
    X(EventPoolDestroy, event_pool, pfnDestroy)                              \
    X(EventCreate, event, pfnCreate)                                         \
    X(EventDestroy, event, pfnDestroy)                                       \
    X(EventHostSynchronize, event, pfnHostSynchronize)                       \
    X(ModuleCreate, module, pfnCreate)                                       \
    X(ModuleDestroy, module, pfnDestroy)                                     \
    X(ModuleBuildLogGetString, module_build_log, pfnGetString)               \
    X(ModuleBuildLogDestroy, module_build_log, pfnDestroy)                   \
    X(KernelCreate, kernel, pfnCreate)                                       \
    X(KernelDestroy, kernel, pfnDestroy)                                     \
    X(KernelSetGroupSize, kernel, pfnSetGroupSize)                           \
    X(KernelSetArgumentValue, kernel, pfnSetArgumentValue)                   \
    X(MemAllocShared, mem, pfnAllocShared)                                   \
    X(MemFree, mem, pfnFree)

#ifdef VIA_LINK
/* Plain calls of the exported symbols, resolved through the PLT. */
#define ZE(name) ze##name
#else
static struct {
#define DECLARE(name, table, member) ze_pfn##name##_t name;
    ZE_FUNCS(DECLARE)
#undef DECLARE
} F;
#define ZE(name) F.name
#endif

/* ------------------------------------------------------------------------ */

static const char *current_step = "setup";

static void die(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "workload: step %s: ", current_step);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void check(ze_result_t r, const char *what) {
    if (r != ZE_RESULT_SUCCESS)
        die("%s failed: ze_result_t 0x%08x", what, (unsigned)r);
}

/* CALL(KernelCreate, ...) calls zeKernelCreate the chosen way and dies with
 * the function's name and result on any error. */
#define CALL(name, ...) check(ZE(name)(__VA_ARGS__), "ze" #name)

static void usage(void) {
    fprintf(stderr,
            "usage: workload --via link|ddi|dlsym --module a=A.spv [--module b=B.spv]\n"
            "                [--native n=N.bin] [--build-flags FLAGS] STEP...\n"
            "  --program P=A.spv+B.spv  a module of two SPIR-V inputs (ze_module_program_exp_desc_t)\n"
            "  --build-flags FLAGS  zeModuleCreate's pBuildFlags for every module (default \"\")\n"
            "  --spec ID=VALUE      a specialization constant of every module (repeatable)\n"
            "steps (M module name, K kernel name, counts are decimal):\n"
            "  imm:M:K:N          N launches on one immediate command list\n"
            "  named:M:FILE:N     same for the kernel whose name is FILE's bytes (any bytes but NUL,\n"
            "                     of any length: names no command line can hold)\n"
            "  coop:M:K:N         same with zeCommandListAppendLaunchCooperativeKernel\n"
            "  indirect:M:K:N     same with zeCommandListAppendLaunchKernelIndirect\n"
            "  multi:M:K1,K2,..:N N calls of zeCommandListAppendLaunchMultipleKernelsIndirect\n"
            "  reg:M:K:A:E        regular list, A appends, close, E executes\n"
            "  regreset:M:K:A:E   A appends, reset, 1 append, close, E executes\n"
            "  threads:M:K:T:N    T threads, each with its own kernel handle and list, N launches\n"
            "  recreate:M:K:N     create K, N launches, destroy, create K again, N launches\n"
            "  swap:M:K1:K2:N     create K1, N launches, destroy, create K2, N launches\n"
            "  fork:M:K:N         a forked child initialises again and launches K N times\n"
            "  each:M:P:N         kernels P0..P(N-1) of M, each created, launched i+1 times, destroyed\n"
            "the workload's own files and limits (for the do-no-harm tests):\n"
            "  closefds           close every descriptor from 3 to 4095\n"
            "  open:PATH          open (create, truncate) PATH as the workload's own file\n"
            "  say:TEXT           write TEXT and a newline into that file (write(2))\n"
            "  fill:PATH          write PATH until its filesystem is full (ENOSPC)\n"
            "  unfill:PATH        remove PATH\n"
            "  fdfill / fdfree    open /dev/null until EMFILE, print how many; close them\n"
            "  chdir:PATH         change the working directory\n"
            "  umask:OCTAL        set the umask\n"
            "  handlers           SIGBUS and SIGSEGV print 'caught signal N' and exit 99\n"
            "  waitfile:PATH      wait until PATH exists (the test changes something meanwhile)\n"
            "  end:exit|_exit|abort|segv|kill|thread-exit|term-wait\n");
    exit(2);
}

/* ------------------------------------------------------------------------ */
/* Reaching Level Zero. */

#ifndef VIA_LINK
static void *open_loader(void) {
    void *h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        die("dlopen(libze_loader.so.1): %s", dlerror());
    return h;
}

static void load_ddi(void) {
    void *h = open_loader();
    /* The loader only discovers drivers in zeLoaderInit (called by its own
     * zeInit on the exported path); the table getters need them loaded. */
    ze_result_t (*loader_init)(void) = (ze_result_t(*)(void))dlsym(h, "zeLoaderInit");
    if (loader_init)
        check(loader_init(), "zeLoaderInit");

    ze_global_dditable_t global;
    ze_driver_dditable_t driver;
    ze_device_dditable_t device;
    ze_context_dditable_t context;
    ze_command_queue_dditable_t command_queue;
    ze_command_list_dditable_t command_list;
    ze_event_pool_dditable_t event_pool;
    ze_event_dditable_t event;
    ze_module_dditable_t module;
    ze_module_build_log_dditable_t module_build_log;
    ze_kernel_dditable_t kernel;
    ze_mem_dditable_t mem;
#define GET_TABLE(getter, table)                                             \
    do {                                                                     \
        ze_result_t (*get_)(ze_api_version_t, void *) =                      \
            (ze_result_t(*)(ze_api_version_t, void *))dlsym(h, getter);      \
        if (!get_)                                                           \
            die("dlsym(%s): %s", getter, dlerror());                         \
        memset(&table, 0, sizeof table);                                     \
        check(get_(ZE_API_VERSION_CURRENT, &table), getter);                 \
    } while (0)
    GET_TABLE("zeGetGlobalProcAddrTable", global);
    GET_TABLE("zeGetDriverProcAddrTable", driver);
    GET_TABLE("zeGetDeviceProcAddrTable", device);
    GET_TABLE("zeGetContextProcAddrTable", context);
    GET_TABLE("zeGetCommandQueueProcAddrTable", command_queue);
    GET_TABLE("zeGetCommandListProcAddrTable", command_list);
    GET_TABLE("zeGetEventPoolProcAddrTable", event_pool);
    GET_TABLE("zeGetEventProcAddrTable", event);
    GET_TABLE("zeGetModuleProcAddrTable", module);
    GET_TABLE("zeGetModuleBuildLogProcAddrTable", module_build_log);
    GET_TABLE("zeGetKernelProcAddrTable", kernel);
    GET_TABLE("zeGetMemProcAddrTable", mem);
#undef GET_TABLE
#define FROM_TABLE(name, table, member)                                      \
    F.name = table.member;                                                   \
    if (!F.name)                                                             \
        die("DDI table %s has no %s", #table, #member);
    ZE_FUNCS(FROM_TABLE)
#undef FROM_TABLE
}

static void load_dlsym(void) {
    void *h = open_loader();
#define BY_NAME(name, table, member)                                         \
    F.name = (ze_pfn##name##_t)dlsym(h, "ze" #name);                         \
    if (!F.name)                                                             \
        die("dlsym(ze%s): %s", #name, dlerror());
    ZE_FUNCS(BY_NAME)
#undef BY_NAME
}
#endif

/* ------------------------------------------------------------------------ */
/* State. */

typedef struct {
    const char *name;
    const char *path;
    ze_module_format_t format;
    unsigned char *bytes;
    size_t size;
    /* --program: a second SPIR-V input, linked with the first by the
     * driver (ze_module_program_exp_desc_t); NULL otherwise. */
    const char *path2;
    unsigned char *bytes2;
    size_t size2;
    ze_module_handle_t handle; /* created on first use */
} module_t;

typedef struct {
    int module;
    char *name;
    ze_kernel_handle_t handle;
} cached_kernel_t;

#define MAX_MODULES 8
#define MAX_CACHED 64

static module_t modules[MAX_MODULES];
static int n_modules;
static cached_kernel_t cache[MAX_CACHED];
static int n_cached;

static ze_driver_handle_t driver;
static ze_device_handle_t device;
static ze_context_handle_t context;
static float *buffer;                 /* the kernels' one argument */
static ze_group_count_t *group_count; /* for indirect launches */

/* NEO 22.43 in no-hardware mode crashes inside the driver when one thread
 * appends while another appends or creates an immediate command list (seen
 * here: 2 to 16 crashes in 100 runs of threads:a:scale:4:25 with only the
 * appends locked; none in 600 runs of threads:a:scale:8:25 with this lock).
 * Every append and every command list creation and destruction takes this
 * lock; kernel creation and destruction stay concurrent. */
static pthread_mutex_t driver_lock = PTHREAD_MUTEX_INITIALIZER;

static void *shared_alloc(size_t size) {
    ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *p = NULL;
    CALL(MemAllocShared, context, &ddesc, &hdesc, size, 64, device, &p);
    memset(p, 0, size);
    return p;
}

static void init_level_zero(void) {
    CALL(Init, 0);
    uint32_t n = 1;
    CALL(DriverGet, &n, &driver);
    if (n < 1)
        die("no Level Zero driver (is the NEO no-hardware environment set?)");
    n = 1;
    CALL(DeviceGet, driver, &n, &device);
    if (n < 1)
        die("the driver reports no device");
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    CALL(ContextCreate, driver, &cdesc, &context);
    buffer = shared_alloc(64 * sizeof(float));
    group_count = shared_alloc(sizeof(ze_group_count_t));
    group_count->groupCountX = group_count->groupCountY = group_count->groupCountZ = 1;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len)
        die("cannot read %s", path);
    fclose(f);
    *size = (size_t)len;
    return b;
}

static int find_module(const char *name) {
    for (int i = 0; i < n_modules; i++)
        if (strcmp(modules[i].name, name) == 0)
            return i;
    die("no module named '%s' (give it with --module %s=PATH)", name, name);
    return -1;
}

/* --build-flags: reach IGC as a program's own build options would (-g,
 * -cl-opt-disable, ...). */
static const char *build_flags = "";

/* --spec ID=VALUE: specialization constants for every module (the driver
 * reads each value at its type's size, from the low bytes here). */
#define MAX_SPEC 16
static uint32_t spec_ids[MAX_SPEC];
static uint64_t spec_values[MAX_SPEC];
static const void *spec_ptrs[MAX_SPEC];
static uint32_t n_spec;

static void add_spec(const char *arg) {
    unsigned long long v = 0;
    unsigned id = 0;
    if (n_spec == MAX_SPEC || sscanf(arg, "%u=%lli", &id, (long long *)&v) != 2)
        die("bad --spec '%s' (ID=VALUE, at most %d)", arg, MAX_SPEC);
    spec_ids[n_spec] = id;
    spec_values[n_spec] = v;
    spec_ptrs[n_spec] = &spec_values[n_spec];
    n_spec++;
}

static ze_module_handle_t create_module(module_t *m) {
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC};
    ze_module_constants_t constants = {n_spec, spec_ids, spec_ptrs};
    desc.format = m->format;
    desc.inputSize = m->size;
    desc.pInputModule = m->bytes;
    desc.pBuildFlags = build_flags;
    if (n_spec)
        desc.pConstants = &constants;
    /* --program: both inputs, each with the build flags and constants. */
    const uint8_t *inputs[2] = {m->bytes, m->bytes2};
    size_t sizes[2] = {m->size, m->size2};
    const char *flags[2] = {build_flags, build_flags};
    const ze_module_constants_t *consts[2] = {n_spec ? &constants : NULL,
                                              n_spec ? &constants : NULL};
    ze_module_program_exp_desc_t program = {.stype = ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC,
                                            .count = 2,
                                            .inputSizes = sizes,
                                            .pInputModules = inputs,
                                            .pBuildFlags = flags,
                                            .pConstants = consts};
    if (m->bytes2)
        desc.pNext = &program;
    ze_module_handle_t h = NULL;
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = ZE(ModuleCreate)(context, device, &desc, &h, &log);
    if (r != ZE_RESULT_SUCCESS) {
        size_t len = 0;
        char *text = NULL;
        if (log && ZE(ModuleBuildLogGetString)(log, &len, NULL) == ZE_RESULT_SUCCESS &&
            (text = calloc(len + 1, 1)))
            ZE(ModuleBuildLogGetString)(log, &len, text);
        die("zeModuleCreate(%s) failed: ze_result_t 0x%08x; build log: %s", m->path,
            (unsigned)r, text ? text : "(none)");
    }
    if (log)
        CALL(ModuleBuildLogDestroy, log);
    return h;
}

static ze_module_handle_t module_handle(int mi) {
    if (!modules[mi].handle)
        modules[mi].handle = create_module(&modules[mi]);
    return modules[mi].handle;
}

/* A new kernel handle with its argument and group size set. */
static ze_kernel_handle_t create_kernel(int mi, const char *name) {
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC};
    desc.pKernelName = name;
    ze_kernel_handle_t k = NULL;
    ze_result_t r = ZE(KernelCreate)(module_handle(mi), &desc, &k);
    if (r != ZE_RESULT_SUCCESS)
        die("zeKernelCreate(%s in module %s) failed: ze_result_t 0x%08x", name,
            modules[mi].name, (unsigned)r);
    CALL(KernelSetGroupSize, k, 1, 1, 1);
    CALL(KernelSetArgumentValue, k, 0, sizeof(buffer), &buffer);
    return k;
}

static ze_kernel_handle_t cached_kernel(int mi, const char *name) {
    for (int i = 0; i < n_cached; i++)
        if (cache[i].module == mi && strcmp(cache[i].name, name) == 0)
            return cache[i].handle;
    if (n_cached == MAX_CACHED)
        die("too many kernels");
    cache[n_cached].module = mi;
    cache[n_cached].name = strdup(name);
    cache[n_cached].handle = create_kernel(mi, name);
    return cache[n_cached++].handle;
}

static ze_command_list_handle_t immediate_list(void) {
    ze_command_queue_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_command_list_handle_t cl = NULL;
    pthread_mutex_lock(&driver_lock);
    ze_result_t r = ZE(CommandListCreateImmediate)(context, device, &desc, &cl);
    pthread_mutex_unlock(&driver_lock);
    check(r, "zeCommandListCreateImmediate");
    return cl;
}

static void destroy_list(ze_command_list_handle_t cl) {
    pthread_mutex_lock(&driver_lock);
    ze_result_t r = ZE(CommandListDestroy)(cl);
    pthread_mutex_unlock(&driver_lock);
    check(r, "zeCommandListDestroy");
}

/* Waits for everything appended to an immediate list: a barrier that signals
 * an event, then a host wait on it (zeCommandListHostSynchronize is newer
 * than the loader's API version 1.4). */
static void sync_immediate(ze_command_list_handle_t cl) {
    ze_event_pool_desc_t pdesc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC};
    pdesc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    pdesc.count = 1;
    ze_event_pool_handle_t pool = NULL;
    CALL(EventPoolCreate, context, &pdesc, 1, &device, &pool);
    ze_event_desc_t edesc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC};
    edesc.index = 0;
    edesc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    edesc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    ze_event_handle_t ev = NULL;
    CALL(EventCreate, pool, &edesc, &ev);
    pthread_mutex_lock(&driver_lock);
    ze_result_t r = ZE(CommandListAppendBarrier)(cl, ev, 0, NULL);
    pthread_mutex_unlock(&driver_lock);
    check(r, "zeCommandListAppendBarrier");
    CALL(EventHostSynchronize, ev, UINT64_MAX);
    CALL(EventDestroy, ev);
    CALL(EventPoolDestroy, pool);
}

static const ze_group_count_t one_group = {1, 1, 1};

static void launch(ze_command_list_handle_t cl, ze_kernel_handle_t k) {
    pthread_mutex_lock(&driver_lock);
    ze_result_t r = ZE(CommandListAppendLaunchKernel)(cl, k, &one_group, NULL, 0, NULL);
    pthread_mutex_unlock(&driver_lock);
    if (r != ZE_RESULT_SUCCESS)
        die("zeCommandListAppendLaunchKernel failed: ze_result_t 0x%08x", (unsigned)r);
}

/* N launches of k on a new immediate list, then wait. */
static void launch_immediate(ze_kernel_handle_t k, long n) {
    ze_command_list_handle_t cl = immediate_list();
    for (long i = 0; i < n; i++)
        launch(cl, k);
    sync_immediate(cl);
    destroy_list(cl);
}

/* ------------------------------------------------------------------------ */
/* Steps. */

#define MAX_FIELDS 8

static int split(char *s, char sep, char **out, int max) {
    int n = 0;
    out[n++] = s;
    for (char *p = s; *p; p++)
        if (*p == sep) {
            if (n == max)
                return -1;
            *p = '\0';
            out[n++] = p + 1;
        }
    return n;
}

static long count_arg(const char *s) {
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || !end || *end || v < 0)
        die("'%s' is not a count", s);
    return v;
}

static void step_imm(const char *kind, int mi, const char *kname, long n) {
    ze_kernel_handle_t k = cached_kernel(mi, kname);
    ze_command_list_handle_t cl = immediate_list();
    for (long i = 0; i < n; i++) {
        ze_result_t r;
        pthread_mutex_lock(&driver_lock);
        if (strcmp(kind, "imm") == 0)
            r = ZE(CommandListAppendLaunchKernel)(cl, k, &one_group, NULL, 0, NULL);
        else if (strcmp(kind, "coop") == 0)
            r = ZE(CommandListAppendLaunchCooperativeKernel)(cl, k, &one_group, NULL, 0, NULL);
        else
            r = ZE(CommandListAppendLaunchKernelIndirect)(cl, k, group_count, NULL, 0, NULL);
        pthread_mutex_unlock(&driver_lock);
        if (r != ZE_RESULT_SUCCESS)
            die("append (%s launch %ld of %s) failed: ze_result_t 0x%08x", kind, i + 1, kname,
                (unsigned)r);
    }
    sync_immediate(cl);
    destroy_list(cl);
}

/* The bytes of FILE as a C string: a kernel's name exactly as the test
 * wrote it (none may be NUL: a C string ends there). */
static char *name_from_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *name = malloc(cap);
    size_t got;
    while (name && (got = fread(name + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap)
            name = realloc(name, cap *= 2);
    }
    fclose(f);
    if (!name)
        die("out of memory reading %s", path);
    if (memchr(name, '\0', len))
        die("%s holds a NUL byte: no kernel can have that name", path);
    name[len] = '\0';
    return name;
}

static void step_multi(int mi, char *knames, long n) {
    char *names[MAX_CACHED];
    int nk = split(knames, ',', names, MAX_CACHED);
    if (nk < 1)
        die("bad kernel list");
    ze_kernel_handle_t handles[MAX_CACHED];
    for (int i = 0; i < nk; i++)
        handles[i] = cached_kernel(mi, names[i]);
    uint32_t *count = shared_alloc(sizeof(uint32_t));
    *count = (uint32_t)nk;
    ze_group_count_t *args = shared_alloc(sizeof(ze_group_count_t) * (size_t)nk);
    for (int i = 0; i < nk; i++)
        args[i] = one_group;
    ze_command_list_handle_t cl = immediate_list();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&driver_lock);
        ze_result_t r = ZE(CommandListAppendLaunchMultipleKernelsIndirect)(
            cl, (uint32_t)nk, handles, count, args, NULL, 0, NULL);
        pthread_mutex_unlock(&driver_lock);
        check(r, "zeCommandListAppendLaunchMultipleKernelsIndirect");
    }
    sync_immediate(cl);
    destroy_list(cl);
    CALL(MemFree, context, args);
    CALL(MemFree, context, count);
}

static void step_reg(int mi, const char *kname, long appends, long executes, int reset) {
    ze_kernel_handle_t k = cached_kernel(mi, kname);
    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_command_queue_handle_t q = NULL;
    CALL(CommandQueueCreate, context, device, &qdesc, &q);
    ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t cl = NULL;
    CALL(CommandListCreate, context, device, &ldesc, &cl);
    for (long i = 0; i < appends; i++)
        launch(cl, k);
    if (reset) {
        CALL(CommandListReset, cl);
        launch(cl, k);
    }
    CALL(CommandListClose, cl);
    for (long i = 0; i < executes; i++)
        CALL(CommandQueueExecuteCommandLists, q, 1, &cl, NULL);
    CALL(CommandQueueSynchronize, q, UINT64_MAX);
    destroy_list(cl);
    CALL(CommandQueueDestroy, q);
}

typedef struct {
    int module;
    const char *kernel;
    long launches;
} thread_arg_t;

static void *thread_main(void *p) {
    thread_arg_t *a = p;
    ze_kernel_handle_t k = create_kernel(a->module, a->kernel);
    launch_immediate(k, a->launches);
    CALL(KernelDestroy, k);
    return NULL;
}

static void step_threads(int mi, const char *kname, long nthreads, long n) {
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    thread_arg_t arg = {mi, kname, n};
    /* Create the module before the threads start so that they only race on
     * kernel handles and lists, as a program using one module would. */
    module_handle(mi);
    for (long i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, thread_main, &arg) != 0)
            die("pthread_create failed");
    for (long i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    free(t);
}

/* Returns whether the driver gave the second kernel the first one's handle. */
static int step_recreate(int mi, const char *k1, const char *k2, long n) {
    ze_kernel_handle_t first = create_kernel(mi, k1);
    launch_immediate(first, n);
    CALL(KernelDestroy, first);
    ze_kernel_handle_t second = create_kernel(mi, k2);
    launch_immediate(second, n);
    CALL(KernelDestroy, second);
    return first == second;
}

static void step_fork(int mi, const char *kname, long n) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        die("fork failed: %s", strerror(errno));
    if (pid == 0) {
        /* Level Zero requires a forked child to initialise again, and the
         * parent's handles are not the child's: start from scratch. */
        current_step = "fork (child)";
        for (int i = 0; i < n_modules; i++)
            modules[i].handle = NULL;
        n_cached = 0;
        init_level_zero();
        ze_kernel_handle_t k = create_kernel(mi, kname);
        launch_immediate(k, n);
        CALL(KernelDestroy, k);
        printf("fork-child %s %s %ld pid=%d\n", modules[mi].name, kname, n, (int)getpid());
        fflush(stdout);
        exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid failed: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            die("forked child %d died of signal %d", (int)pid, WTERMSIG(status));
        die("forked child %d exited with %d", (int)pid, WEXITSTATUS(status));
    }
    printf("fork %s %s %ld child=%d\n", modules[mi].name, kname, n, (int)pid);
}

static void step_each(int mi, const char *prefix, long n) {
    char name[256];
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%ld", prefix, i);
        ze_kernel_handle_t k = create_kernel(mi, name);
        launch_immediate(k, i + 1);
        CALL(KernelDestroy, k);
    }
}

/* The workload's own file (open:, say:) and the descriptors of fdfill. */
static int own_fd = -1;
static int held[65536];
static int n_held;

static void step_open(const char *path) {
    own_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (own_fd < 0)
        die("open %s: %s", path, strerror(errno));
    printf("open %s fd=%d\n", path, own_fd);
}

static void step_say(const char *text) {
    if (own_fd < 0)
        die("say before open");
    size_t n = strlen(text);
    if (write(own_fd, text, n) != (ssize_t)n || write(own_fd, "\n", 1) != 1)
        die("write: %s", strerror(errno));
    printf("say %s\n", text);
}

static void step_fill(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    static char block[65536];
    memset(block, 'x', sizeof block);
    for (;;) {
        ssize_t w = write(fd, block, sizeof block);
        if (w < 0 && errno == ENOSPC)
            break;
        if (w < 0)
            die("write %s: %s", path, strerror(errno));
    }
    /* The last few bytes a block left. */
    while (write(fd, block, 1) == 1) {
    }
    close(fd);
    printf("fill %s: full\n", path);
}

static void step_fdfill(void) {
    n_held = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0) {
            if (errno != EMFILE)
                die("open /dev/null: %s", strerror(errno));
            break;
        }
        if (n_held == (int)(sizeof held / sizeof held[0]))
            die("too many descriptors");
        held[n_held++] = fd;
    }
    printf("fdfill %d\n", n_held);
}

static void step_fdfree(void) {
    for (int i = 0; i < n_held; i++)
        close(held[i]);
    printf("fdfree %d\n", n_held);
    n_held = 0;
}

static void on_fault(int sig) {
    char line[64];
    int n = snprintf(line, sizeof line, "caught signal %d\n", sig);
    if (write(1, line, (size_t)n) < 0) {
    }
    _exit(99);
}

static void step_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fault;
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    printf("handlers\n");
}

static void step_waitfile(const char *path) {
    while (access(path, F_OK) != 0)
        usleep(10000);
    printf("waitfile %s\n", path);
}

/* Steps of one field that are not about Level Zero; 0 when spec is none. */
static int run_plain_step(const char *kind, char **f, int nf) {
    if (strcmp(kind, "closefds") == 0 && nf == 1) {
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
        printf("closefds\n");
    } else if (strcmp(kind, "fdfill") == 0 && nf == 1) {
        step_fdfill();
    } else if (strcmp(kind, "fdfree") == 0 && nf == 1) {
        step_fdfree();
    } else if (strcmp(kind, "handlers") == 0 && nf == 1) {
        step_handlers();
    } else if (strcmp(kind, "open") == 0 && nf == 2) {
        step_open(f[1]);
    } else if (strcmp(kind, "say") == 0 && nf == 2) {
        step_say(f[1]);
    } else if (strcmp(kind, "fill") == 0 && nf == 2) {
        step_fill(f[1]);
    } else if (strcmp(kind, "unfill") == 0 && nf == 2) {
        if (unlink(f[1]) != 0)
            die("unlink %s: %s", f[1], strerror(errno));
        printf("unfill %s\n", f[1]);
    } else if (strcmp(kind, "chdir") == 0 && nf == 2) {
        if (chdir(f[1]) != 0)
            die("chdir %s: %s", f[1], strerror(errno));
        printf("chdir %s\n", f[1]);
    } else if (strcmp(kind, "umask") == 0 && nf == 2) {
        umask((mode_t)strtol(f[1], NULL, 8));
        printf("umask %s\n", f[1]);
    } else if (strcmp(kind, "waitfile") == 0 && nf == 2) {
        step_waitfile(f[1]);
    } else {
        return 0;
    }
    return 1;
}

static void *exit_from_thread(void *unused) {
    (void)unused;
    exit(3);
}

static void step_end(const char *how) {
    printf("end %s\n", how);
    fflush(stdout);
    fflush(stderr);
    if (strcmp(how, "exit") == 0) {
        exit(0);
    } else if (strcmp(how, "_exit") == 0) {
        _exit(0);
    } else if (strcmp(how, "abort") == 0) {
        abort();
    } else if (strcmp(how, "segv") == 0) {
        *(volatile int *)NULL = 1;
    } else if (strcmp(how, "kill") == 0) {
        raise(SIGKILL);
    } else if (strcmp(how, "thread-exit") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, exit_from_thread, NULL) != 0)
            die("pthread_create failed");
        pthread_join(t, NULL);
    } else if (strcmp(how, "term-wait") == 0) {
        /* SIGTERM keeps its default action: the process dies of it, as a
         * server stopped by its supervisor does. */
        signal(SIGTERM, SIG_DFL);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    die("unknown way to end '%s'", how);
}

static void run_step(char *spec) {
    char *copy = strdup(spec);
    current_step = spec;
    char *f[MAX_FIELDS];
    int nf = split(copy, ':', f, MAX_FIELDS);
    if (nf < 1)
        die("malformed step");
    const char *kind = f[0];
    /* named:M:FILE:N is imm:M:K:N of the kernel named by FILE's bytes
     * (one call of step_imm: the demo's stacks stay as they are). */
    const char *named_from = NULL;
    if (strcmp(kind, "named") == 0 && nf == 4) {
        named_from = f[2];
        f[2] = name_from_file(f[2]);
        kind = "imm";
    }
    if (run_plain_step(kind, f, nf)) {
    } else if (nf < 2) {
        die("malformed step");
    } else if (strcmp(kind, "end") == 0 && nf == 2) {
        step_end(f[1]);
    } else if ((strcmp(kind, "imm") == 0 || strcmp(kind, "coop") == 0 ||
                strcmp(kind, "indirect") == 0) &&
               nf == 4) {
        long n = count_arg(f[3]);
        step_imm(kind, find_module(f[1]), f[2], n);
        if (named_from)
            printf("named %s %s %ld\n", f[1], named_from, n);
        else
            printf("%s %s %s %ld\n", kind, f[1], f[2], n);
    } else if (strcmp(kind, "multi") == 0 && nf == 4) {
        long n = count_arg(f[3]);
        char *names = strdup(f[2]);
        step_multi(find_module(f[1]), names, n);
        printf("multi %s %s %ld\n", f[1], f[2], n);
    } else if ((strcmp(kind, "reg") == 0 || strcmp(kind, "regreset") == 0) && nf == 5) {
        long a = count_arg(f[3]), e = count_arg(f[4]);
        step_reg(find_module(f[1]), f[2], a, e, strcmp(kind, "regreset") == 0);
        printf("%s %s %s %ld %ld\n", kind, f[1], f[2], a, e);
    } else if (strcmp(kind, "threads") == 0 && nf == 5) {
        long t = count_arg(f[3]), n = count_arg(f[4]);
        step_threads(find_module(f[1]), f[2], t, n);
        printf("threads %s %s %ld %ld\n", f[1], f[2], t, n);
    } else if (strcmp(kind, "recreate") == 0 && nf == 4) {
        long n = count_arg(f[3]);
        int same = step_recreate(find_module(f[1]), f[2], f[2], n);
        printf("recreate %s %s %ld same_handle=%s\n", f[1], f[2], n, same ? "yes" : "no");
    } else if (strcmp(kind, "swap") == 0 && nf == 5) {
        long n = count_arg(f[4]);
        int same = step_recreate(find_module(f[1]), f[2], f[3], n);
        printf("swap %s %s %s %ld same_handle=%s\n", f[1], f[2], f[3], n,
               same ? "yes" : "no");
    } else if (strcmp(kind, "fork") == 0 && nf == 4) {
        step_fork(find_module(f[1]), f[2], count_arg(f[3]));
    } else if (strcmp(kind, "each") == 0 && nf == 4) {
        long n = count_arg(f[3]);
        step_each(find_module(f[1]), f[2], n);
        printf("each %s %s %ld\n", f[1], f[2], n);
    } else {
        die("unknown step or wrong number of fields");
    }
    free(copy);
}

static void add_module(const char *arg, ze_module_format_t format) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        die("module argument '%s' is not NAME=PATH", arg);
    if (n_modules == MAX_MODULES)
        die("too many modules");
    module_t *m = &modules[n_modules++];
    m->name = strndup(arg, (size_t)(eq - arg));
    m->path = eq + 1;
    m->format = format;
    m->bytes = read_file(m->path, &m->size);
}

/* --program NAME=A.spv+B.spv: one module of two SPIR-V inputs. */
static void add_program(const char *arg) {
    const char *eq = strchr(arg, '=');
    const char *plus = eq ? strchr(eq, '+') : NULL;
    if (!eq || eq == arg || !plus || plus == eq + 1 || !plus[1])
        die("program argument '%s' is not NAME=A.spv+B.spv", arg);
    if (n_modules == MAX_MODULES)
        die("too many modules");
    module_t *m = &modules[n_modules++];
    m->name = strndup(arg, (size_t)(eq - arg));
    m->path = strndup(eq + 1, (size_t)(plus - eq - 1));
    m->path2 = plus + 1;
    m->format = ZE_MODULE_FORMAT_IL_SPIRV;
    m->bytes = read_file(m->path, &m->size);
    m->bytes2 = read_file(m->path2, &m->size2);
}

int main(int argc, char **argv) {
    /* Lines must reach a pipe even when the process dies of a signal. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *via = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--via") == 0 && i + 1 < argc)
            via = argv[++i];
        else if (strcmp(argv[i], "--module") == 0 && i + 1 < argc)
            add_module(argv[++i], ZE_MODULE_FORMAT_IL_SPIRV);
        else if (strcmp(argv[i], "--native") == 0 && i + 1 < argc)
            add_module(argv[++i], ZE_MODULE_FORMAT_NATIVE);
        else if (strcmp(argv[i], "--program") == 0 && i + 1 < argc)
            add_program(argv[++i]);
        else if (strcmp(argv[i], "--build-flags") == 0 && i + 1 < argc)
            build_flags = argv[++i];
        else if (strcmp(argv[i], "--spec") == 0 && i + 1 < argc)
            add_spec(argv[++i]);
        else if (strncmp(argv[i], "--", 2) == 0)
            usage();
        else
            break;
    }
    if (!via)
        usage();
#ifdef VIA_LINK
    if (strcmp(via, "link") != 0)
        die("this binary is linked with the loader and only does --via link; "
            "use the unlinked workload for --via %s",
            via);
#else
    if (strcmp(via, "ddi") == 0)
        load_ddi();
    else if (strcmp(via, "dlsym") == 0)
        load_dlsym();
    else if (strcmp(via, "link") == 0)
        die("this binary does not link the loader; use the one built with -DVIA_LINK "
            "for --via link");
    else
        usage();
#endif
    init_level_zero();
    for (; i < argc; i++)
        run_step(argv[i]);
    return 0;
}
