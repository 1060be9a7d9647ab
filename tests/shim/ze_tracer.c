/*
 * An independent count of launch shapes for xpu-asm's tests: a tracer of
 * the Level Zero loader's own tracing layer (ZE_ENABLE_TRACING_LAYER=1,
 * zelTracerCreate), preloaded beside the program. It involves nothing of
 * xpu-asm: the loader calls it back on each Level Zero call the program
 * makes, whichever way the program reached the loader.
 *
 * It writes one line per launch to the file XPU_ASM_TEST_ZE_TRACE names
 * (with ".<pid>" appended), as
 *   launch <kernel name> <size x> <size y> <size z> <count x> <count y> <count z>
 * the group size being the one the launch passed or, for
 * zeCommandListAppendLaunchKernel and ...Cooperative..., the last one
 * zeKernelSetGroupSize gave the kernel handle. Appends to a regular
 * command list are written as "append-regular <kernel name>" (they run
 * when the list is executed: the test that reads this counts immediate
 * lists only, and fails on such a line). Lines it cannot trust are
 * written as "error <what>".
 */
#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/ze_api.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 4096

struct kernel {
    uintptr_t handle;
    char name[256];
    uint32_t size[3];
};

static struct kernel kernels[SLOTS];
static uintptr_t regular[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

static struct kernel *find(uintptr_t h, int make) {
    for (size_t i = 0, at = (h >> 3) % SLOTS; i < SLOTS; i++, at = (at + 1) % SLOTS) {
        if (kernels[at].handle == h)
            return &kernels[at];
        if (kernels[at].handle == 0) {
            if (!make)
                return NULL;
            kernels[at].handle = h;
            return &kernels[at];
        }
    }
    return NULL;
}

static int is_regular(uintptr_t l) {
    for (size_t i = 0; i < SLOTS && regular[i]; i++)
        if (regular[i] == l)
            return 1;
    return 0;
}

static void on_kernel_create(ze_kernel_create_params_t *p, ze_result_t r, void *u, void **i) {
    (void)u, (void)i;
    if (r != ZE_RESULT_SUCCESS)
        return;
    pthread_mutex_lock(&lock);
    struct kernel *k = find((uintptr_t)**p->pphKernel, 1);
    if (k) {
        snprintf(k->name, sizeof k->name, "%s", (*p->pdesc)->pKernelName);
        k->size[0] = k->size[1] = k->size[2] = 0;
    } else {
        fprintf(out, "error too many kernels\n");
    }
    pthread_mutex_unlock(&lock);
}

static void on_group_size(ze_kernel_set_group_size_params_t *p, ze_result_t r, void *u, void **i) {
    (void)u, (void)i;
    if (r != ZE_RESULT_SUCCESS)
        return;
    pthread_mutex_lock(&lock);
    struct kernel *k = find((uintptr_t)*p->phKernel, 0);
    if (k) {
        k->size[0] = *p->pgroupSizeX;
        k->size[1] = *p->pgroupSizeY;
        k->size[2] = *p->pgroupSizeZ;
    } else {
        fprintf(out, "error group size of an unknown kernel\n");
    }
    pthread_mutex_unlock(&lock);
}

static void on_list_create(ze_command_list_create_params_t *p, ze_result_t r, void *u, void **i) {
    (void)u, (void)i;
    if (r != ZE_RESULT_SUCCESS)
        return;
    pthread_mutex_lock(&lock);
    size_t n = 0;
    while (n < SLOTS && regular[n])
        n++;
    if (n < SLOTS)
        regular[n] = (uintptr_t)**p->pphCommandList;
    else
        fprintf(out, "error too many regular lists\n");
    pthread_mutex_unlock(&lock);
}

/* One launch: `size` NULL for the kernel handle's own group size. */
static void launch(uintptr_t list, uintptr_t kernel, const uint32_t *size, const ze_group_count_t *gc) {
    pthread_mutex_lock(&lock);
    struct kernel *k = find(kernel, 0);
    if (!k)
        fprintf(out, "error a launch of an unknown kernel\n");
    else if (is_regular(list))
        fprintf(out, "append-regular %s\n", k->name);
    else if (!gc)
        fprintf(out, "error a launch without a group count: %s\n", k->name);
    else {
        const uint32_t *s = size ? size : k->size;
        fprintf(out, "launch %s %u %u %u %u %u %u\n", k->name, s[0], s[1], s[2], gc->groupCountX,
                gc->groupCountY, gc->groupCountZ);
    }
    pthread_mutex_unlock(&lock);
}

static void on_launch(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *u,
                      void **i) {
    (void)u, (void)i;
    if (r == ZE_RESULT_SUCCESS)
        launch((uintptr_t)*p->phCommandList, (uintptr_t)*p->phKernel, NULL, *p->ppLaunchFuncArgs);
}

static void on_cooperative(ze_command_list_append_launch_cooperative_kernel_params_t *p,
                           ze_result_t r, void *u, void **i) {
    (void)u, (void)i;
    if (r == ZE_RESULT_SUCCESS)
        launch((uintptr_t)*p->phCommandList, (uintptr_t)*p->phKernel, NULL, *p->ppLaunchFuncArgs);
}

static void on_with_arguments(ze_command_list_append_launch_kernel_with_arguments_params_t *p,
                              ze_result_t r, void *u, void **i) {
    (void)u, (void)i;
    if (r != ZE_RESULT_SUCCESS)
        return;
    const ze_group_size_t *gs = p->pgroupSizes;
    uint32_t size[3] = {gs->groupSizeX, gs->groupSizeY, gs->groupSizeZ};
    launch((uintptr_t)*p->phCommandList, (uintptr_t)*p->phKernel, size, p->pgroupCounts);
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("XPU_ASM_TEST_ZE_TRACE");
    if (!path)
        return;
    char name[4096];
    snprintf(name, sizeof name, "%s.%d", path, (int)getpid());
    out = fopen(name, "a");
    if (!out)
        return;
    setvbuf(out, NULL, _IOLBF, 0);
    /* The tracing layer takes tracers once the loader is initialized (as
     * unitrace's tracer does). */
    ze_result_t r = zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(out, "error zeInit: 0x%x\n", (unsigned)r);
        return;
    }
    zel_tracer_desc_t desc = {ZEL_STRUCTURE_TYPE_TRACER_DESC, NULL, NULL};
    zel_tracer_handle_t t;
    r = zelTracerCreate(&desc, &t);
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(out, "error zelTracerCreate: 0x%x\n", (unsigned)r);
        return;
    }
    zelTracerKernelCreateRegisterCallback(t, ZEL_REGISTER_EPILOGUE, on_kernel_create);
    zelTracerKernelSetGroupSizeRegisterCallback(t, ZEL_REGISTER_EPILOGUE, on_group_size);
    zelTracerCommandListCreateRegisterCallback(t, ZEL_REGISTER_EPILOGUE, on_list_create);
    zelTracerCommandListAppendLaunchKernelRegisterCallback(t, ZEL_REGISTER_EPILOGUE, on_launch);
    zelTracerCommandListAppendLaunchCooperativeKernelRegisterCallback(t, ZEL_REGISTER_EPILOGUE,
                                                                      on_cooperative);
    zelTracerCommandListAppendLaunchKernelWithArgumentsRegisterCallback(t, ZEL_REGISTER_EPILOGUE,
                                                                        on_with_arguments);
    r = zelTracerSetEnabled(t, 1);
    if (r != ZE_RESULT_SUCCESS)
        fprintf(out, "error zelTracerSetEnabled: 0x%x\n", (unsigned)r);
}
