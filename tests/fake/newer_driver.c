/*
 * A stand-in for a Level Zero driver of API 1.14, for the one thing the
 * real stack here (loader 1.8, NEO 22.43) cannot do: hand out
 * zeCommandListAppendLaunchKernelWithParameters / ...WithArguments (table
 * entries 36 and 37, API 1.14) and zeCommandListImmediateAppendCommandListsExp
 * (command-list-exp entry 1, API 1.9). Its functions do nothing but succeed.
 * Tables are filled by index, as in ze_ddi.h of API 1.14, and only as far as
 * the version asked for, like a real driver.
 */
#include <stdint.h>
#include <string.h>

typedef uint32_t ze_result_t;
typedef void *handle_t;
#define V(major, minor) (((major) << 16) | (minor))

static uintptr_t next = 0x100000;
static handle_t new_handle(void) { return (handle_t)(next += 0x140); }

static ze_result_t module_create(handle_t ctx, handle_t dev, const void *desc, handle_t *out, handle_t *log) {
    (void)ctx, (void)dev, (void)desc, (void)log;
    *out = new_handle();
    return 0;
}
static ze_result_t module_kernel_names(handle_t m, uint32_t *count, const char **names) {
    (void)m;
    if (names) {
        names[0] = "with_arguments";
        names[1] = "with_parameters";
    }
    *count = 2;
    return 0;
}
static ze_result_t kernel_create(handle_t m, const void *desc, handle_t *out) {
    (void)m, (void)desc;
    *out = new_handle();
    return 0;
}
static ze_result_t list_create(handle_t c, handle_t d, const void *desc, handle_t *out) {
    (void)c, (void)d, (void)desc;
    *out = new_handle();
    return 0;
}
static ze_result_t ok1(handle_t a) { (void)a; return 0; }
static ze_result_t launch_with_parameters(handle_t l, handle_t k, const void *g, const void *n, handle_t e,
                                          uint32_t nw, handle_t *w) {
    (void)l, (void)k, (void)g, (void)n, (void)e, (void)nw, (void)w;
    return 0;
}
typedef struct { uint32_t x, y, z; } group_t;
static ze_result_t launch_with_arguments(handle_t l, handle_t k, group_t counts, group_t sizes, void **args,
                                         const void *n, handle_t e, uint32_t nw, handle_t *w) {
    (void)l, (void)k, (void)n, (void)e, (void)nw, (void)w;
    /* The by-value groups must arrive intact through any hook. */
    if (counts.x != 3 || counts.y != 5 || counts.z != 7 || sizes.x != 11 || sizes.y != 13 || sizes.z != 17 ||
        args == 0)
        return 0x78000004; /* ZE_RESULT_ERROR_INVALID_ARGUMENT */
    return 0;
}
static ze_result_t immediate_append_lists(handle_t imm, uint32_t n, handle_t *lists, handle_t e, uint32_t nw,
                                          handle_t *w) {
    (void)imm, (void)n, (void)lists, (void)e, (void)nw, (void)w;
    return 0;
}

static void fill(void **t, int index, void *f) { t[index] = f; }

ze_result_t zeGetModuleProcAddrTable(uint32_t version, void **t) {
    (void)version;
    fill(t, 0, (void *)module_create);
    fill(t, 5, (void *)module_kernel_names);
    return 0;
}
ze_result_t zeGetKernelProcAddrTable(uint32_t version, void **t) {
    (void)version;
    fill(t, 0, (void *)kernel_create);
    fill(t, 1, (void *)ok1);
    return 0;
}
ze_result_t zeGetCommandListProcAddrTable(uint32_t version, void **t) {
    fill(t, 0, (void *)list_create);
    fill(t, 1, (void *)list_create); /* CreateImmediate: same signature */
    fill(t, 3, (void *)ok1);         /* Close */
    if (version >= V(1, 14)) {
        fill(t, 36, (void *)launch_with_parameters);
        fill(t, 37, (void *)launch_with_arguments);
    }
    return 0;
}
ze_result_t zeGetCommandListExpProcAddrTable(uint32_t version, void **t) {
    if (version >= V(1, 9))
        fill(t, 1, (void *)immediate_append_lists);
    return 0;
}
