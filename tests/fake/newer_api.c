/*
 * Drives tests/fake/newer_driver.c the way a current SYCL runtime drives a
 * Level Zero 1.14 loader: dlopen, dlsym of the table getters, calls through
 * the tables only. Usage: newer_api DRIVER.so N_ARGS N_PARAMS K M
 *   N_ARGS launches of `with_arguments` through ...WithArguments and
 *   N_PARAMS of `with_parameters` through ...WithParameters on an immediate
 *   list; then a regular list with K appends of `with_arguments` (through
 *   ...WithArguments), run M times with zeCommandListImmediateAppendCommandListsExp.
 * It also asks for the command-list table at API 1.4 with sentinels past
 * that version's end, and fails if anything wrote there.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t ze_result_t;
typedef void *handle_t;
typedef ze_result_t (*getter_t)(uint32_t, void **);
typedef struct { uint32_t x, y, z; } group_t;
#define V(major, minor) (((major) << 16) | (minor))
#define CK(what, x)                                                                 \
    do {                                                                            \
        ze_result_t r_ = (x);                                                       \
        if (r_) {                                                                   \
            fprintf(stderr, "newer_api: %s failed: 0x%x\n", what, (unsigned)r_);    \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static void *table(void *h, const char *getter, uint32_t version) {
    getter_t g = (getter_t)dlsym(h, getter);
    if (!g) {
        fprintf(stderr, "newer_api: no %s\n", getter);
        exit(1);
    }
    void **t = calloc(64, sizeof(void *));
    CK(getter, g(version, t));
    return t;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: newer_api DRIVER.so N_ARGS N_PARAMS K M\n");
        return 2;
    }
    int n_args = atoi(argv[2]), n_params = atoi(argv[3]), k = atoi(argv[4]), m = atoi(argv[5]);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "newer_api: %s\n", dlerror());
        return 1;
    }
    void **mod = table(h, "zeGetModuleProcAddrTable", V(1, 14));
    void **ker = table(h, "zeGetKernelProcAddrTable", V(1, 14));
    void **cl = table(h, "zeGetCommandListProcAddrTable", V(1, 14));
    void **exp = table(h, "zeGetCommandListExpProcAddrTable", V(1, 14));

    /* A table of API 1.4 ends after entry 27: nothing may be written past it. */
    void **old = calloc(64, sizeof(void *));
    for (int i = 28; i < 64; i++)
        old[i] = (void *)(uintptr_t)0x5e5e5e5e;
    CK("old table", ((getter_t)dlsym(h, "zeGetCommandListProcAddrTable"))(V(1, 4), old));
    for (int i = 28; i < 64; i++)
        if (old[i] != (void *)(uintptr_t)0x5e5e5e5e) {
            fprintf(stderr, "newer_api: entry %d of an API 1.4 table was overwritten\n", i);
            return 1;
        }

    static const unsigned char spirv[] = {0x03, 0x02, 0x23, 0x07, 1, 2, 3, 4};
    struct { uint32_t stype; const void *next; uint32_t format; size_t size; const uint8_t *data; const char *flags;
             const void *constants; } md = {0x1b, 0, 0, sizeof spirv, spirv, "-g", 0};
    handle_t module, k_args, k_params, imm, reg;
    CK("module", ((ze_result_t(*)(handle_t, handle_t, const void *, handle_t *, handle_t *))mod[0])(0, 0, &md, &module, 0));
    struct { uint32_t stype; const void *next; uint32_t flags; const char *name; } kd1 = {0x1d, 0, 0, "with_arguments"},
        kd2 = {0x1d, 0, 0, "with_parameters"};
    typedef ze_result_t (*kcreate_t)(handle_t, const void *, handle_t *);
    CK("kernel", ((kcreate_t)ker[0])(module, &kd1, &k_args));
    CK("kernel", ((kcreate_t)ker[0])(module, &kd2, &k_params));
    typedef ze_result_t (*lcreate_t)(handle_t, handle_t, const void *, handle_t *);
    CK("immediate list", ((lcreate_t)cl[1])(0, 0, 0, &imm));
    CK("regular list", ((lcreate_t)cl[0])(0, 0, 0, &reg));

    typedef ze_result_t (*with_args_t)(handle_t, handle_t, group_t, group_t, void **, const void *, handle_t,
                                       uint32_t, handle_t *);
    typedef ze_result_t (*with_params_t)(handle_t, handle_t, const group_t *, const void *, handle_t, uint32_t,
                                         handle_t *);
    group_t counts = {3, 5, 7}, sizes = {11, 13, 17};
    void *arg = 0, *args[] = {&arg};
    for (int i = 0; i < n_args; i++)
        CK("WithArguments", ((with_args_t)cl[37])(imm, k_args, counts, sizes, args, 0, 0, 0, 0));
    for (int i = 0; i < n_params; i++)
        CK("WithParameters", ((with_params_t)cl[36])(imm, k_params, &counts, 0, 0, 0, 0));
    for (int i = 0; i < k; i++)
        CK("WithArguments (regular)", ((with_args_t)cl[37])(reg, k_args, counts, sizes, args, 0, 0, 0, 0));
    CK("close", ((ze_result_t(*)(handle_t))cl[3])(reg));
    typedef ze_result_t (*append_lists_t)(handle_t, uint32_t, handle_t *, handle_t, uint32_t, handle_t *);
    for (int i = 0; i < m; i++)
        CK("ImmediateAppendCommandListsExp", ((append_lists_t)exp[1])(imm, 1, &reg, 0, 0, 0));
    printf("newer_api: %d with_arguments, %d with_parameters, regular %d x %d\n", n_args, n_params, k, m);
    return 0;
}
