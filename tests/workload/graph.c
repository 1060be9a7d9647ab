/*
 * Graph workload for xpu-asm: graphs (record and replay) and mutable command
 * lists through the real Level Zero loader, each counting rule on a kernel of
 * its own (tests/workload/kernels_graph.cl), with counts that tell the rules
 * apart. tests/tests/graphs.rs runs it and checks the report.
 *
 *   --via link   the loader's exported functions (binary built with
 *                -DVIA_LINK -lze_loader)
 *   --via ddi    DDI tables of the loader (zeGet*ProcAddrTable), as SYCL's
 *                v1 adapter
 *   --via dlsym  dlsym of each function by name
 *   --via gefa   the core functions by dlsym, the graph functions from
 *                zeDriverGetExtensionFunctionAddress under the names NEO 26
 *                hands out (the experimental ...Exp ones, some with their
 *                arguments in another order), as SYCL's v2 adapter; the
 *                mutable list functions from there too when the driver has
 *                them, else by dlsym
 *
 * The graph functions are declared here (not taken from the headers), so
 * that the program builds against Debian 12's loader 1.8 too, where the
 * driver has no graph extension: the step "extensions" says which of the
 * extensions the driver reports.
 *
 * Usage: graph --via WAY --module g=GRAPH.spv [--module b=B.spv] STEP...
 * Steps (counts decimal; K, K1.. kernel names of module g, KB of module b):
 *   extensions                 print the graph extensions the driver reports
 *   imm:K:N                    N launches on an immediate list
 *   capture:K:C:R              zeCommandListBeginGraphCaptureExt, C appends,
 *                              end, instantiate, R appends of the graph
 *   into:K:C:R                 zeGraphCreateExt, then the same with
 *                              zeCommandListBeginCaptureIntoGraphExt
 *   regular:K:C:E              a graph of C appends appended to a regular
 *                              list, executed E times
 *   nested:K:C:KO:S:R          a graph of C appends of K, appended S times
 *                              to a capture that also appends KO once,
 *                              the outer graph appended R times
 *   fork:K:C:KB:P:R            a capture forks onto a second immediate list
 *                              (waiting on an event signaled in the capture)
 *                              with C appends of K there, joined; meanwhile
 *                              P launches of KB on a third list; R replays
 *   lists:K:A:X:Y              a regular list of A appends appended to an
 *                              immediate list X times with ...ListsExp and Y
 *                              times with ...ListsWithParameters
 *   mutable:K1:K2:E1:E2        a mutable list running K1 E1 times, its
 *                              command swapped to K2, E2 more times
 *   unseen:K:C:R               a graph captured through the driver's own
 *                              functions (found with dlvsym: no hook sees
 *                              it), appended R times the usual way
 *   reuse:K1:R1:K2:R2          an executable graph of K1 appended R1 times,
 *                              destroyed; another of K2 (whether the driver
 *                              gave it the first's handle printed) appended
 *                              R2 times
 *   badswap:K:M:KB:E1:E2       a mutable command of K may become K or M; it
 *                              runs E1 times, is swapped to KB (module b,
 *                              not listed), runs E2 times
 *   badid:K:M:E1:E2            a mutable command of K (may become M), its id
 *                              from the driver's own function (no hook sees
 *                              it handed out), runs E1 times, is swapped to
 *                              M, runs E2 times. (A swap of an id the driver
 *                              never handed out crashes NEO 26.27 here.)
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The core functions, as in workload.c: name without "ze", its DDI table
 * and member. */
#define ZE_FUNCS(X)                                                          \
    X(Init, global, pfnInit)                                                 \
    X(DriverGet, driver, pfnGet)                                             \
    X(DriverGetExtensionProperties, driver, pfnGetExtensionProperties)       \
    X(DriverGetExtensionFunctionAddress, driver, pfnGetExtensionFunctionAddress) \
    X(DeviceGet, device, pfnGet)                                             \
    X(ContextCreate, context, pfnCreate)                                     \
    X(CommandQueueCreate, command_queue, pfnCreate)                          \
    X(CommandQueueExecuteCommandLists, command_queue, pfnExecuteCommandLists) \
    X(CommandQueueSynchronize, command_queue, pfnSynchronize)                \
    X(CommandListCreate, command_list, pfnCreate)                            \
    X(CommandListCreateImmediate, command_list, pfnCreateImmediate)          \
    X(CommandListClose, command_list, pfnClose)                              \
    X(CommandListAppendLaunchKernel, command_list, pfnAppendLaunchKernel)    \
    X(CommandListAppendBarrier, command_list, pfnAppendBarrier)              \
    X(CommandListAppendWaitOnEvents, command_list, pfnAppendWaitOnEvents)    \
    X(EventPoolCreate, event_pool, pfnCreate)                                \
    X(EventCreate, event, pfnCreate)                                         \
    X(ModuleCreate, module, pfnCreate)                                       \
    X(KernelCreate, kernel, pfnCreate)                                       \
    X(KernelSetGroupSize, kernel, pfnSetGroupSize)                           \
    X(KernelSetArgumentValue, kernel, pfnSetArgumentValue)                   \
    X(MemAllocShared, mem, pfnAllocShared)

#ifdef VIA_LINK
#define ZE(name) ze##name
#else
static struct {
#define DECLARE(name, table, member) ze_pfn##name##_t name;
    ZE_FUNCS(DECLARE)
#undef DECLARE
} F;
#define ZE(name) F.name
#endif

/* The graph and mutable list functions (Level Zero 1.15 to 1.17), with
 * plain pointers for their handles. */
typedef void *handle_t;
typedef ze_result_t (*graph_create_ext_t)(handle_t ctx, const void *next, handle_t *graph);
typedef ze_result_t (*graph_create_exp_t)(handle_t ctx, handle_t *graph, void *next);
typedef ze_result_t (*begin_t)(handle_t list, const void *next);
typedef ze_result_t (*begin_into_t)(handle_t list, handle_t graph, const void *next);
typedef ze_result_t (*end_ext_t)(handle_t list, const void *next, handle_t *graph);
typedef ze_result_t (*end_exp_t)(handle_t list, handle_t *graph, void *next);
typedef ze_result_t (*instantiate_ext_t)(handle_t graph, const void *next, handle_t *exec);
typedef ze_result_t (*instantiate_exp_t)(handle_t graph, handle_t *exec, void *next);
typedef ze_result_t (*append_graph_t)(handle_t list, handle_t exec, const void *next,
                                      handle_t signal, uint32_t n_wait, handle_t *wait);
typedef ze_result_t (*destroy_t)(handle_t object);
typedef ze_result_t (*query_t)(handle_t object);
typedef ze_result_t (*next_id_kernels_t)(handle_t list, const void *desc, uint32_t n,
                                         handle_t *kernels, uint64_t *id);
typedef ze_result_t (*update_kernels_t)(handle_t list, uint32_t n, uint64_t *ids,
                                        handle_t *kernels);
typedef ze_result_t (*imm_append_exp_t)(handle_t imm, uint32_t n, handle_t *lists,
                                        handle_t signal, uint32_t n_wait, handle_t *wait);
typedef ze_result_t (*imm_append_params_t)(handle_t imm, uint32_t n, handle_t *lists,
                                           const void *next, handle_t signal,
                                           uint32_t n_wait, handle_t *wait);

static struct {
    int exp; /* 1: the ...Exp forms below, 0: the ...Ext ones */
    graph_create_ext_t create_ext;
    graph_create_exp_t create_exp;
    begin_t begin;
    begin_into_t begin_into;
    end_ext_t end_ext;
    end_exp_t end_exp;
    instantiate_ext_t instantiate_ext;
    instantiate_exp_t instantiate_exp;
    append_graph_t append;
    destroy_t destroy;
    destroy_t exec_destroy;
    query_t is_capturing;
    next_id_kernels_t next_id_kernels;
    update_kernels_t update_kernels;
    imm_append_exp_t imm_append_exp;
    imm_append_params_t imm_append_params;
} G;

#ifdef VIA_LINK
/* Weak: loader 1.8 has none of them (and the step "extensions" says so).
 * Headers of Level Zero 1.17 declare them; older ones do not. */
#define LINKED(X)                                                            \
    X(zeGraphCreateExt, (handle_t, const void *, handle_t *))                \
    X(zeCommandListBeginGraphCaptureExt, (handle_t, const void *))           \
    X(zeCommandListBeginCaptureIntoGraphExt, (handle_t, handle_t, const void *)) \
    X(zeCommandListEndGraphCaptureExt, (handle_t, const void *, handle_t *)) \
    X(zeGraphInstantiateExt, (handle_t, const void *, handle_t *))           \
    X(zeCommandListAppendGraphExt,                                           \
      (handle_t, handle_t, const void *, handle_t, uint32_t, handle_t *))    \
    X(zeGraphDestroyExt, (handle_t))                                         \
    X(zeExecutableGraphDestroyExt, (handle_t))                               \
    X(zeCommandListIsGraphCaptureEnabledExt, (handle_t))                     \
    X(zeCommandListGetNextCommandIdWithKernelsExp,                           \
      (handle_t, const void *, uint32_t, handle_t *, uint64_t *))            \
    X(zeCommandListUpdateMutableCommandKernelsExp,                           \
      (handle_t, uint32_t, uint64_t *, handle_t *))                          \
    X(zeCommandListImmediateAppendCommandListsExp,                           \
      (handle_t, uint32_t, handle_t *, handle_t, uint32_t, handle_t *))      \
    X(zeCommandListImmediateAppendCommandListsWithParameters,                \
      (handle_t, uint32_t, handle_t *, const void *, handle_t, uint32_t, handle_t *))
#ifdef ZE_RECORD_REPLAY_GRAPH_EXT_NAME
#pragma weak zeGraphCreateExt
#pragma weak zeCommandListBeginGraphCaptureExt
#pragma weak zeCommandListBeginCaptureIntoGraphExt
#pragma weak zeCommandListEndGraphCaptureExt
#pragma weak zeGraphInstantiateExt
#pragma weak zeCommandListAppendGraphExt
#pragma weak zeGraphDestroyExt
#pragma weak zeExecutableGraphDestroyExt
#pragma weak zeCommandListIsGraphCaptureEnabledExt
#pragma weak zeCommandListGetNextCommandIdWithKernelsExp
#pragma weak zeCommandListUpdateMutableCommandKernelsExp
#pragma weak zeCommandListImmediateAppendCommandListsExp
#pragma weak zeCommandListImmediateAppendCommandListsWithParameters
#else
#define DECLARE_WEAK(name, args) __attribute__((weak)) ze_result_t name args;
LINKED(DECLARE_WEAK)
#undef DECLARE_WEAK
#endif
#endif

/* ------------------------------------------------------------------------ */

static const char *current_step = "setup";

static void die(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "graph: step %s: ", current_step);
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

#define CALL(name, ...) check(ZE(name)(__VA_ARGS__), "ze" #name)
/* A graph or mutable list function: dies when the chosen way has none. */
#define GCALL(fn, ...)                                                       \
    do {                                                                     \
        if (!G.fn)                                                           \
            die("no %s function (--via %s)", #fn, via);                      \
        check(G.fn(__VA_ARGS__), #fn);                                       \
    } while (0)

static const char *via = "";
#ifndef VIA_LINK
static void *loader; /* the loader's dlopen handle */
#endif

/* ------------------------------------------------------------------------ */
/* Reaching Level Zero. */

#ifndef VIA_LINK
static void open_loader(void) {
    loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader)
        die("dlopen(libze_loader.so.1): %s", dlerror());
}

typedef ze_result_t (*getter_t)(ze_api_version_t, void *);

/* Fills `table` (room for `slots` entries) with the getter's real one. */
static void get_table(const char *getter, ze_api_version_t version, void *table, size_t bytes) {
    getter_t get = (getter_t)dlsym(loader, getter);
    if (!get)
        die("dlsym(%s): %s", getter, dlerror());
    memset(table, 0, bytes);
    check(get(version, table), getter);
}

static void load_ddi(void) {
    open_loader();
    ze_result_t (*loader_init)(void) = (ze_result_t(*)(void))dlsym(loader, "zeLoaderInit");
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
    ze_kernel_dditable_t kernel;
    ze_mem_dditable_t mem;
#define GET(getter, t) get_table(getter, ZE_API_VERSION_CURRENT, &t, sizeof t)
    GET("zeGetGlobalProcAddrTable", global);
    GET("zeGetDriverProcAddrTable", driver);
    GET("zeGetDeviceProcAddrTable", device);
    GET("zeGetContextProcAddrTable", context);
    GET("zeGetCommandQueueProcAddrTable", command_queue);
    GET("zeGetCommandListProcAddrTable", command_list);
    GET("zeGetEventPoolProcAddrTable", event_pool);
    GET("zeGetEventProcAddrTable", event);
    GET("zeGetModuleProcAddrTable", module);
    GET("zeGetKernelProcAddrTable", kernel);
    GET("zeGetMemProcAddrTable", mem);
#undef GET
#define FROM_TABLE(name, table, member)                                      \
    F.name = table.member;                                                   \
    if (!F.name)                                                             \
        die("DDI table %s has no %s", #table, #member);
    ZE_FUNCS(FROM_TABLE)
#undef FROM_TABLE
}

static void load_dlsym(void) {
    open_loader();
#define BY_NAME(name, table, member)                                         \
    F.name = (ze_pfn##name##_t)dlsym(loader, "ze" #name);                    \
    if (!F.name)                                                             \
        die("dlsym(ze%s): %s", #name, dlerror());
    ZE_FUNCS(BY_NAME)
#undef BY_NAME
}
#endif

/* The graph functions of the chosen way, once the driver is known (only
 * called when it reports the graph extension). Table positions are those
 * of loader 1.32's ze_ddi.h (API 1.17). */
static void load_graph_functions(ze_driver_handle_t drv) {
    (void)drv;
#ifdef VIA_LINK
    G.create_ext = (graph_create_ext_t)zeGraphCreateExt;
    G.begin = (begin_t)zeCommandListBeginGraphCaptureExt;
    G.begin_into = (begin_into_t)zeCommandListBeginCaptureIntoGraphExt;
    G.end_ext = (end_ext_t)zeCommandListEndGraphCaptureExt;
    G.instantiate_ext = (instantiate_ext_t)zeGraphInstantiateExt;
    G.append = (append_graph_t)zeCommandListAppendGraphExt;
    G.destroy = (destroy_t)zeGraphDestroyExt;
    G.exec_destroy = (destroy_t)zeExecutableGraphDestroyExt;
    G.is_capturing = (query_t)zeCommandListIsGraphCaptureEnabledExt;
    G.next_id_kernels = (next_id_kernels_t)zeCommandListGetNextCommandIdWithKernelsExp;
    G.update_kernels = (update_kernels_t)zeCommandListUpdateMutableCommandKernelsExp;
    G.imm_append_exp = (imm_append_exp_t)zeCommandListImmediateAppendCommandListsExp;
    G.imm_append_params =
        (imm_append_params_t)zeCommandListImmediateAppendCommandListsWithParameters;
#else
    ze_api_version_t v117 = ZE_MAKE_VERSION(1, 17);
    if (strcmp(via, "ddi") == 0) {
        void *cl[64], *cle[16], *gr[16], *ex[8];
        get_table("zeGetCommandListProcAddrTable", v117, cl, sizeof cl);
        get_table("zeGetCommandListExpProcAddrTable", v117, cle, sizeof cle);
        get_table("zeGetGraphProcAddrTable", v117, gr, sizeof gr);
        get_table("zeGetExecutableGraphProcAddrTable", v117, ex, sizeof ex);
        G.imm_append_params = (imm_append_params_t)cl[40];
        G.begin = (begin_t)cl[45];
        G.begin_into = (begin_into_t)cl[46];
        G.is_capturing = (query_t)cl[47];
        G.end_ext = (end_ext_t)cl[48];
        G.append = (append_graph_t)cl[50];
        G.imm_append_exp = (imm_append_exp_t)cle[1];
        G.next_id_kernels = (next_id_kernels_t)cle[6];
        G.update_kernels = (update_kernels_t)cle[7];
        G.create_ext = (graph_create_ext_t)gr[0];
        G.instantiate_ext = (instantiate_ext_t)gr[3];
        G.destroy = (destroy_t)gr[6];
        G.exec_destroy = (destroy_t)ex[1];
        return;
    }
#define SYM(field, type, name) G.field = (type)dlsym(loader, name)
    SYM(create_ext, graph_create_ext_t, "zeGraphCreateExt");
    SYM(begin, begin_t, "zeCommandListBeginGraphCaptureExt");
    SYM(begin_into, begin_into_t, "zeCommandListBeginCaptureIntoGraphExt");
    SYM(end_ext, end_ext_t, "zeCommandListEndGraphCaptureExt");
    SYM(instantiate_ext, instantiate_ext_t, "zeGraphInstantiateExt");
    SYM(append, append_graph_t, "zeCommandListAppendGraphExt");
    SYM(destroy, destroy_t, "zeGraphDestroyExt");
    SYM(exec_destroy, destroy_t, "zeExecutableGraphDestroyExt");
    SYM(is_capturing, query_t, "zeCommandListIsGraphCaptureEnabledExt");
    SYM(next_id_kernels, next_id_kernels_t, "zeCommandListGetNextCommandIdWithKernelsExp");
    SYM(update_kernels, update_kernels_t, "zeCommandListUpdateMutableCommandKernelsExp");
    SYM(imm_append_exp, imm_append_exp_t, "zeCommandListImmediateAppendCommandListsExp");
    SYM(imm_append_params, imm_append_params_t,
        "zeCommandListImmediateAppendCommandListsWithParameters");
#undef SYM
    if (strcmp(via, "gefa") != 0)
        return;
    /* What the driver hands out by name replaces what it has. */
#define EXT(field, type, name)                                               \
    do {                                                                     \
        void *p_ = NULL;                                                     \
        if (ZE(DriverGetExtensionFunctionAddress)(drv, name, &p_) == ZE_RESULT_SUCCESS && p_) \
            G.field = (type)p_;                                              \
        else if (required)                                                   \
            die("zeDriverGetExtensionFunctionAddress has no %s", name);      \
    } while (0)
    int required = 1;
    G.exp = 1;
    G.create_ext = NULL;
    G.end_ext = NULL;
    G.instantiate_ext = NULL;
    EXT(create_exp, graph_create_exp_t, "zeGraphCreateExp");
    EXT(begin, begin_t, "zeCommandListBeginGraphCaptureExp");
    EXT(begin_into, begin_into_t, "zeCommandListBeginCaptureIntoGraphExp");
    EXT(end_exp, end_exp_t, "zeCommandListEndGraphCaptureExp");
    EXT(instantiate_exp, instantiate_exp_t, "zeCommandListInstantiateGraphExp");
    EXT(append, append_graph_t, "zeCommandListAppendGraphExp");
    EXT(destroy, destroy_t, "zeGraphDestroyExp");
    EXT(exec_destroy, destroy_t, "zeExecutableGraphDestroyExp");
    EXT(is_capturing, query_t, "zeCommandListIsGraphCaptureEnabledExp");
    required = 0;
    EXT(next_id_kernels, next_id_kernels_t, "zeCommandListGetNextCommandIdWithKernelsExp");
    EXT(update_kernels, update_kernels_t, "zeCommandListUpdateMutableCommandKernelsExp");
    EXT(imm_append_exp, imm_append_exp_t, "zeCommandListImmediateAppendCommandListsExp");
    EXT(imm_append_params, imm_append_params_t,
        "zeCommandListImmediateAppendCommandListsWithParameters");
#undef EXT
#endif
}

/* The calls whose two forms differ in argument order. */
static handle_t graph_create(void);
static void capture_end(handle_t list, handle_t *graph) {
    if (G.exp)
        GCALL(end_exp, list, graph, NULL);
    else
        GCALL(end_ext, list, NULL, graph);
}
static handle_t instantiate(handle_t graph) {
    handle_t e = NULL;
    if (G.exp)
        GCALL(instantiate_exp, graph, &e, NULL);
    else
        GCALL(instantiate_ext, graph, NULL, &e);
    return e;
}

/* ------------------------------------------------------------------------ */
/* State. */

typedef struct {
    const char *name;
    unsigned char *bytes;
    size_t size;
    ze_module_handle_t handle;
} module_t;

static module_t modules[4];
static int n_modules;
static ze_driver_handle_t driver;
static ze_device_handle_t device;
static ze_context_handle_t context;
static ze_command_queue_handle_t queue;
static float *buffer;
static const ze_group_count_t one_group = {1, 1, 1};

handle_t graph_create(void) {
    handle_t g = NULL;
    if (G.exp)
        GCALL(create_exp, context, &g, NULL);
    else
        GCALL(create_ext, context, NULL, &g);
    return g;
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

static ze_module_handle_t module_named(const char *name) {
    for (int i = 0; i < n_modules; i++) {
        module_t *m = &modules[i];
        if (strcmp(m->name, name) != 0)
            continue;
        if (!m->handle) {
            ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC};
            desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
            desc.inputSize = m->size;
            desc.pInputModule = m->bytes;
            desc.pBuildFlags = "";
            CALL(ModuleCreate, context, device, &desc, &m->handle, NULL);
        }
        return m->handle;
    }
    die("no module named '%s' (give it with --module %s=PATH)", name, name);
    return NULL;
}

/* A kernel of module g, or of module b for a name given as b/NAME. */
static ze_kernel_handle_t kernel(const char *spec) {
    const char *slash = strchr(spec, '/');
    char module[16] = "g";
    const char *name = spec;
    if (slash) {
        snprintf(module, sizeof module, "%.*s", (int)(slash - spec), spec);
        name = slash + 1;
    }
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC};
    desc.pKernelName = name;
    ze_kernel_handle_t k = NULL;
    CALL(KernelCreate, module_named(module), &desc, &k);
    CALL(KernelSetGroupSize, k, 1, 1, 1);
    CALL(KernelSetArgumentValue, k, 0, sizeof buffer, &buffer);
    return k;
}

static ze_command_list_handle_t immediate_list(void) {
    ze_command_queue_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    desc.flags = 1u << 1; /* ZE_COMMAND_QUEUE_FLAG_IN_ORDER (API 1.7) */
    desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_command_list_handle_t l = NULL;
    CALL(CommandListCreateImmediate, context, device, &desc, &l);
    return l;
}

/* ze_mutable_command_list_exp_desc_t and ze_mutable_command_id_exp_desc_t. */
typedef struct {
    uint32_t stype;
    const void *next;
    uint32_t flags;
} flags_desc_t;
#define STYPE_MUTABLE_COMMAND_LIST_EXP_DESC 0x00020016
#define STYPE_MUTABLE_COMMAND_ID_EXP_DESC 0x00020017
/* Kernel arguments, group count and size, kernel instruction: NEO 26 in
 * no-hardware mode crashes in the next append when only the last is set. */
#define MUTABLE_KERNEL_FLAGS 0x47

static ze_command_list_handle_t regular_list(int mutable) {
    flags_desc_t mdesc = {STYPE_MUTABLE_COMMAND_LIST_EXP_DESC, NULL, 0};
    ze_command_list_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    desc.pNext = mutable ? &mdesc : NULL;
    desc.flags = 1u << 3; /* ZE_COMMAND_LIST_FLAG_IN_ORDER (API 1.7) */
    ze_command_list_handle_t l = NULL;
    CALL(CommandListCreate, context, device, &desc, &l);
    return l;
}

static void launch(ze_command_list_handle_t l, ze_kernel_handle_t k, ze_event_handle_t signal,
                   uint32_t n_wait, ze_event_handle_t *wait) {
    CALL(CommandListAppendLaunchKernel, l, k, &one_group, signal, n_wait, wait);
}

static void execute(ze_command_list_handle_t l, long times) {
    for (long i = 0; i < times; i++)
        CALL(CommandQueueExecuteCommandLists, queue, 1, &l, NULL);
    CALL(CommandQueueSynchronize, queue, UINT64_MAX);
}

static ze_event_handle_t event(void) {
    static ze_event_pool_handle_t pool;
    static uint32_t used;
    if (!pool || used == 16) {
        ze_event_pool_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC};
        desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
        desc.count = 16;
        CALL(EventPoolCreate, context, &desc, 1, &device, &pool);
        used = 0;
    }
    ze_event_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC};
    desc.index = used++;
    ze_event_handle_t e = NULL;
    CALL(EventCreate, pool, &desc, &e);
    return e;
}

/* An executable graph of `c` appends of `k`, captured on `l`. */
static handle_t captured(ze_command_list_handle_t l, ze_kernel_handle_t k, long c) {
    GCALL(begin, l, NULL);
    for (long i = 0; i < c; i++)
        launch(l, k, NULL, 0, NULL);
    handle_t g = NULL;
    capture_end(l, &g);
    return instantiate(g);
}

static void replay(ze_command_list_handle_t l, handle_t exec, long times) {
    for (long i = 0; i < times; i++)
        GCALL(append, l, exec, NULL, NULL, 0, NULL);
}

/* A function of the driver itself (found with dlvsym, which no hook
 * stands in for): what a program gets past the loader and the interposer. */
static void *driver_function(const char *name) {
    void *neo = dlopen("libze_intel_gpu.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!neo)
        die("the driver libze_intel_gpu.so.1 is not loaded: %s", dlerror());
    void *f = dlvsym(neo, name, "");
    if (!f)
        die("the driver does not export %s", name);
    return f;
}

/* ------------------------------------------------------------------------ */
/* Steps. */

static char *fields[8];
static int n_fields;

static void split(char *step) {
    n_fields = 0;
    for (char *p = strtok(step, ":"); p && n_fields < 8; p = strtok(NULL, ":"))
        fields[n_fields++] = p;
}

static long num(int i) {
    if (i >= n_fields)
        die("missing field %d", i);
    char *end;
    long v = strtol(fields[i], &end, 10);
    if (*end || v < 0)
        die("'%s' is not a count", fields[i]);
    return v;
}

static const char *arg(int i) {
    if (i >= n_fields)
        die("missing field %d", i);
    return fields[i];
}

static const char *graph_extensions[] = {"ZE_extension_record_replay_graph",
                                         "ZE_experimental_record_replay_graph",
                                         "ZE_experimental_mutable_command_list",
                                         "ZE_experimental_immediate_command_list_append", NULL};

static int has_graphs;

static void check_extensions(int print) {
    uint32_t n = 0;
    CALL(DriverGetExtensionProperties, driver, &n, NULL);
    ze_driver_extension_properties_t *p = calloc(n ? n : 1, sizeof *p);
    CALL(DriverGetExtensionProperties, driver, &n, p);
    int found = 0;
    for (int i = 0; graph_extensions[i]; i++)
        for (uint32_t j = 0; j < n; j++)
            if (strcmp(p[j].name, graph_extensions[i]) == 0) {
                if (print)
                    printf("graph: extension %s %u.%u\n", p[j].name, p[j].version >> 16,
                           p[j].version & 0xffff);
                if (i == 0)
                    has_graphs = 1;
                found++;
            }
    if (print && !found)
        printf("graph: no graph or mutable command list extension among the driver's %u\n", n);
    free(p);
}

static void need_graphs(void) {
    if (!has_graphs)
        die("the driver reports no ZE_extension_record_replay_graph (run the step "
            "\"extensions\" to see what it has)");
}

static void run_step(char *step) {
    char shown[256];
    snprintf(shown, sizeof shown, "%s", step);
    current_step = shown;
    split(step);
    const char *what = arg(0);
    if (strcmp(what, "extensions") == 0) {
        check_extensions(1);
        return;
    }
    if (strcmp(what, "imm") == 0) {
        ze_command_list_handle_t l = immediate_list();
        ze_kernel_handle_t k = kernel(arg(1));
        for (long i = 0; i < num(2); i++)
            launch(l, k, NULL, 0, NULL);
        return;
    }
    need_graphs();
    if (strcmp(what, "capture") == 0) {
        ze_command_list_handle_t l = immediate_list();
        replay(l, captured(l, kernel(arg(1)), num(2)), num(3));
    } else if (strcmp(what, "into") == 0) {
        ze_command_list_handle_t l = immediate_list();
        ze_kernel_handle_t k = kernel(arg(1));
        handle_t g = graph_create();
        GCALL(begin_into, l, g, NULL);
        for (long i = 0; i < num(2); i++)
            launch(l, k, NULL, 0, NULL);
        handle_t got = NULL;
        capture_end(l, &got);
        if (got != g)
            die("the capture into graph %p ended with graph %p", g, got);
        replay(l, instantiate(g), num(3));
    } else if (strcmp(what, "regular") == 0) {
        handle_t e = captured(immediate_list(), kernel(arg(1)), num(2));
        ze_command_list_handle_t r = regular_list(0);
        GCALL(append, r, e, NULL, NULL, 0, NULL);
        CALL(CommandListClose, r);
        execute(r, num(3));
    } else if (strcmp(what, "nested") == 0) {
        ze_command_list_handle_t l = immediate_list();
        handle_t inner = captured(l, kernel(arg(1)), num(2));
        ze_kernel_handle_t outer_kernel = kernel(arg(3));
        GCALL(begin, l, NULL);
        launch(l, outer_kernel, NULL, 0, NULL);
        replay(l, inner, num(4));
        handle_t g = NULL;
        capture_end(l, &g);
        replay(l, instantiate(g), num(5));
    } else if (strcmp(what, "fork") == 0) {
        ze_command_list_handle_t primary = immediate_list(), forked = immediate_list(),
                                 beside = immediate_list();
        ze_kernel_handle_t k = kernel(arg(1)), kb = kernel(arg(3));
        long c = num(2), p = num(4);
        ze_event_handle_t fork_event = event(), join_event = event();
        GCALL(begin, primary, NULL);
        CALL(CommandListAppendBarrier, primary, fork_event, 0, NULL);
        for (long i = 0; i < c; i++)
            launch(forked, k, i == c - 1 ? join_event : NULL, i == 0 ? 1 : 0,
                   i == 0 ? &fork_event : NULL);
        ze_result_t forked_state = G.is_capturing(forked);
        for (long i = 0; i < p; i++)
            launch(beside, kb, NULL, 0, NULL);
        ze_result_t beside_state = G.is_capturing(beside);
        CALL(CommandListAppendWaitOnEvents, primary, 1, &join_event);
        handle_t g = NULL;
        capture_end(primary, &g);
        printf("graph: fork: capture state of the forked list 0x%x, of the list beside 0x%x\n",
               (unsigned)forked_state, (unsigned)beside_state);
        replay(primary, instantiate(g), num(5));
    } else if (strcmp(what, "lists") == 0) {
        ze_command_list_handle_t r = regular_list(0), l = immediate_list();
        ze_kernel_handle_t k = kernel(arg(1));
        for (long i = 0; i < num(2); i++)
            launch(r, k, NULL, 0, NULL);
        CALL(CommandListClose, r);
        for (long i = 0; i < num(3); i++)
            GCALL(imm_append_exp, l, 1, (handle_t *)&r, NULL, 0, NULL);
        for (long i = 0; i < num(4); i++)
            GCALL(imm_append_params, l, 1, (handle_t *)&r, NULL, NULL, 0, NULL);
    } else if (strcmp(what, "mutable") == 0 || strcmp(what, "badswap") == 0 ||
               strcmp(what, "badid") == 0) {
        int bad_swap = strcmp(what, "badswap") == 0, bad_id = strcmp(what, "badid") == 0;
        ze_kernel_handle_t k = kernel(arg(1));
        ze_kernel_handle_t other = kernel(arg(2));
        ze_kernel_handle_t to = bad_swap ? kernel(arg(3)) : other;
        long e1 = num(bad_swap ? 4 : 3), e2 = num(bad_swap ? 5 : 4);
        ze_command_list_handle_t m = regular_list(1);
        flags_desc_t id_desc = {STYPE_MUTABLE_COMMAND_ID_EXP_DESC, NULL, MUTABLE_KERNEL_FLAGS};
        handle_t candidates[2] = {k, other};
        uint64_t id = 0;
        if (bad_id) {
            /* The driver's own function hands the id out: no hook sees it. */
            next_id_kernels_t own = (next_id_kernels_t)driver_function(
                "zeCommandListGetNextCommandIdWithKernelsExp");
            check(own(m, &id_desc, 2, candidates, &id),
                  "the driver's zeCommandListGetNextCommandIdWithKernelsExp");
        } else {
            GCALL(next_id_kernels, m, &id_desc, 2, candidates, &id);
        }
        launch(m, k, NULL, 0, NULL);
        CALL(CommandListClose, m);
        execute(m, e1);
        GCALL(update_kernels, m, 1, &id, (handle_t *)&to);
        CALL(CommandListClose, m);
        execute(m, e2);
    } else if (strcmp(what, "unseen") == 0) {
        /* The driver's own functions: neither the loader nor a hook. */
        begin_t begin = (begin_t)driver_function("zeCommandListBeginGraphCaptureExt");
        end_ext_t end = (end_ext_t)driver_function("zeCommandListEndGraphCaptureExt");
        instantiate_ext_t inst = (instantiate_ext_t)driver_function("zeGraphInstantiateExt");
        ze_pfnCommandListAppendLaunchKernel_t append_kernel =
            (ze_pfnCommandListAppendLaunchKernel_t)driver_function("zeCommandListAppendLaunchKernel");
        ze_command_list_handle_t l = immediate_list();
        ze_kernel_handle_t k = kernel(arg(1));
        check(begin(l, NULL), "the driver's zeCommandListBeginGraphCaptureExt");
        for (long i = 0; i < num(2); i++)
            check(append_kernel(l, k, &one_group, NULL, 0, NULL),
                  "the driver's zeCommandListAppendLaunchKernel");
        handle_t g = NULL, e = NULL;
        check(end(l, NULL, &g), "the driver's zeCommandListEndGraphCaptureExt");
        check(inst(g, NULL, &e), "the driver's zeGraphInstantiateExt");
        replay(l, e, num(3));
    } else if (strcmp(what, "reuse") == 0) {
        ze_command_list_handle_t l = immediate_list();
        ze_kernel_handle_t k1 = kernel(arg(1)), k2 = kernel(arg(3));
        GCALL(begin, l, NULL);
        launch(l, k1, NULL, 0, NULL);
        handle_t g1 = NULL;
        capture_end(l, &g1);
        handle_t e1 = instantiate(g1);
        replay(l, e1, num(2));
        GCALL(begin, l, NULL);
        launch(l, k2, NULL, 0, NULL);
        handle_t g2 = NULL;
        capture_end(l, &g2);
        /* Destroyed right before the next instantiation, whose object then
         * mostly takes the memory just freed: the same handle. When not,
         * that one is destroyed (never appended: no launch) and the next
         * tried, a few times. */
        GCALL(exec_destroy, e1);
        handle_t e2 = instantiate(g2);
        for (int tries = 0; tries < 8 && e2 != e1; tries++) {
            GCALL(exec_destroy, e2);
            e2 = instantiate(g2);
        }
        GCALL(destroy, g1);
        printf("graph: reuse: the second executable graph %s the first's handle\n",
               e2 == e1 ? "has" : "does not have");
        replay(l, e2, num(4));
    } else {
        die("unknown step");
    }
}

int main(int argc, char **argv) {
    /* Each line out at once: a driver crash must not take earlier ones. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--via") == 0 && i + 1 < argc) {
            via = argv[++i];
        } else if (strcmp(argv[i], "--module") == 0 && i + 1 < argc) {
            char *spec = argv[++i], *eq = strchr(spec, '=');
            if (!eq || n_modules == 4)
                die("--module NAME=PATH (at most 4)");
            *eq = 0;
            modules[n_modules].name = spec;
            modules[n_modules].bytes = read_file(eq + 1, &modules[n_modules].size);
            n_modules++;
        } else {
            break;
        }
    }
#ifdef VIA_LINK
    if (strcmp(via, "link") != 0)
        die("this binary does --via link only");
#else
    if (strcmp(via, "ddi") == 0)
        load_ddi();
    else if (strcmp(via, "dlsym") == 0 || strcmp(via, "gefa") == 0)
        load_dlsym();
    else
        die("--via ddi|dlsym|gefa (or the binary built with -DVIA_LINK for --via link)");
#endif
    CALL(Init, 0);
    uint32_t n = 1;
    CALL(DriverGet, &n, &driver);
    n = 1;
    CALL(DeviceGet, driver, &n, &device);
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    CALL(ContextCreate, driver, &cdesc, &context);
    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    CALL(CommandQueueCreate, context, device, &qdesc, &queue);
    ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    CALL(MemAllocShared, context, &ddesc, &hdesc, 64 * sizeof(float), 64, device, (void **)&buffer);
    check_extensions(0);
    if (has_graphs)
        load_graph_functions(driver);
    for (; i < argc; i++)
        run_step(argv[i]);
    current_step = "end";
    printf("graph: done\n");
    return 0;
}
