/*
 * Launch shapes workload for xpu-asm: kernels launched with known shapes
 * (work-group size, group count, dynamic local memory) through the real
 * Level Zero loader, on every launch path that counts: immediate lists,
 * a regular list executed several times, an indirect launch, a
 * cooperative one, two handles of one kernel, a kernel with more shapes
 * than xpu-asm keeps, and a module built for 256 registers.
 * tests/tests/shapes.rs runs it and checks every shape and its count.
 *
 * Usage: shapes SHAPES.spv BIG.spv [kill]
 * (kill: SIGKILL itself after the last launch, instead of returning)
 */
#include <level_zero/ze_api.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(ze_result_t r, const char *what) {
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "shapes: %s failed: ze_result_t 0x%08x\n", what, (unsigned)r);
        exit(1);
    }
}

static ze_context_handle_t ctx;
static ze_device_handle_t dev;
static ze_command_list_handle_t imm;
static void *buf;

static ze_module_handle_t module(const char *path, const char *flags) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "shapes: cannot open %s\n", path);
        exit(1);
    }
    static unsigned char spv[1 << 20];
    size_t n = fread(spv, 1, sizeof spv, f);
    fclose(f);
    ze_module_desc_t d = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                          .format = ZE_MODULE_FORMAT_IL_SPIRV,
                          .inputSize = n,
                          .pInputModule = spv,
                          .pBuildFlags = flags};
    ze_module_handle_t m;
    check(zeModuleCreate(ctx, dev, &d, &m, NULL), "zeModuleCreate");
    return m;
}

static ze_kernel_handle_t kernel(ze_module_handle_t m, const char *name) {
    ze_kernel_desc_t d = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
    ze_kernel_handle_t k;
    check(zeKernelCreate(m, &d, &k), name);
    check(zeKernelSetArgumentValue(k, 0, sizeof buf, &buf), "zeKernelSetArgumentValue");
    return k;
}

static void size(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z) {
    check(zeKernelSetGroupSize(k, x, y, z), "zeKernelSetGroupSize");
}

/* n launches of k with group count (x, y, z) on the immediate list. */
static void launch(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z, int n) {
    ze_group_count_t g = {x, y, z};
    for (int i = 0; i < n; i++)
        check(zeCommandListAppendLaunchKernel(imm, k, &g, NULL, 0, NULL),
              "zeCommandListAppendLaunchKernel");
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "kill") == 0)) {
        fprintf(stderr, "usage: shapes SHAPES.spv BIG.spv [kill]\n");
        return 2;
    }
    check(zeInit(ZE_INIT_FLAG_GPU_ONLY), "zeInit");
    uint32_t n = 1;
    ze_driver_handle_t drv;
    check(zeDriverGet(&n, &drv), "zeDriverGet");
    n = 1;
    check(zeDeviceGet(drv, &n, &dev), "zeDeviceGet");
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    check(zeContextCreate(drv, &cd, &ctx), "zeContextCreate");
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    check(zeCommandListCreateImmediate(ctx, dev, &qd, &imm), "zeCommandListCreateImmediate");
    ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    check(zeMemAllocShared(ctx, &dd, &hd, 1 << 24, 64, dev, &buf), "zeMemAllocShared");

    ze_module_handle_t m = module(argv[1], "");
    ze_module_handle_t big = module(argv[2], "-ze-opt-large-register-file");

    /* sh_1d: (64,1,1)x(16,1,1) 5 times, (128,1,1)x(8,1,1) 3 times; a
     * second handle of it, (64,1,1)x(16,1,1) twice more and
     * (32,1,1)x(1,1,1) once. */
    ze_kernel_handle_t k1 = kernel(m, "sh_1d");
    size(k1, 64, 1, 1);
    launch(k1, 16, 1, 1, 5);
    size(k1, 128, 1, 1);
    launch(k1, 8, 1, 1, 3);
    ze_kernel_handle_t k1b = kernel(m, "sh_1d");
    size(k1b, 64, 1, 1);
    launch(k1b, 16, 1, 1, 2);
    size(k1b, 32, 1, 1);
    launch(k1b, 1, 1, 1, 1);

    /* sh_2d: (16,8,1)x(4,4,1) 4 times, (8,8,1)x(2,3,1) twice. */
    ze_kernel_handle_t k2 = kernel(m, "sh_2d");
    int w = 64;
    check(zeKernelSetArgumentValue(k2, 1, sizeof w, &w), "zeKernelSetArgumentValue");
    size(k2, 16, 8, 1);
    launch(k2, 4, 4, 1, 4);
    size(k2, 8, 8, 1);
    launch(k2, 2, 3, 1, 2);

    /* sh_3d: (4,4,4)x(2,2,2) 3 times, (8,4,2)x(1,2,3) once. */
    ze_kernel_handle_t k3 = kernel(m, "sh_3d");
    size(k3, 4, 4, 4);
    launch(k3, 2, 2, 2, 3);
    size(k3, 8, 4, 2);
    launch(k3, 1, 2, 3, 1);

    /* sh_slm: argument 1 local memory of 4096 bytes, argument 2 a NULL
     * pointer; (256,1,1)x(4,1,1) twice; then 1024 bytes, 3 times. */
    ze_kernel_handle_t ks = kernel(m, "sh_slm");
    check(zeKernelSetArgumentValue(ks, 1, 4096, NULL), "zeKernelSetArgumentValue(local)");
    check(zeKernelSetArgumentValue(ks, 2, sizeof(void *), NULL), "zeKernelSetArgumentValue(NULL)");
    size(ks, 256, 1, 1);
    launch(ks, 4, 1, 1, 2);
    check(zeKernelSetArgumentValue(ks, 1, 1024, NULL), "zeKernelSetArgumentValue(local)");
    launch(ks, 4, 1, 1, 3);

    /* sh_static: 1 KiB of static local memory, (128,1,1)x(32,1,1) twice. */
    ze_kernel_handle_t kst = kernel(m, "sh_static");
    size(kst, 128, 1, 1);
    launch(kst, 32, 1, 1, 2);

    /* sh_regular: a regular list of two appends, (32,1,1)x(10,1,1) and
     * x(20,1,1), executed 4 times. */
    ze_kernel_handle_t kr = kernel(m, "sh_regular");
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t reg;
    check(zeCommandListCreate(ctx, dev, &ld, &reg), "zeCommandListCreate");
    size(kr, 32, 1, 1);
    ze_group_count_t g10 = {10, 1, 1}, g20 = {20, 1, 1};
    check(zeCommandListAppendLaunchKernel(reg, kr, &g10, NULL, 0, NULL), "append");
    check(zeCommandListAppendLaunchKernel(reg, kr, &g20, NULL, 0, NULL), "append");
    check(zeCommandListClose(reg), "zeCommandListClose");
    ze_command_queue_handle_t q;
    check(zeCommandQueueCreate(ctx, dev, &qd, &q), "zeCommandQueueCreate");
    for (int i = 0; i < 4; i++)
        check(zeCommandQueueExecuteCommandLists(q, 1, &reg, NULL),
              "zeCommandQueueExecuteCommandLists");
    check(zeCommandQueueSynchronize(q, UINT64_MAX), "zeCommandQueueSynchronize");

    /* sh_indirect: (64,1,1), its group count in device memory, twice. */
    ze_kernel_handle_t ki = kernel(m, "sh_indirect");
    size(ki, 64, 1, 1);
    ze_group_count_t *gd = (ze_group_count_t *)((char *)buf + (1 << 23));
    gd->groupCountX = 5;
    gd->groupCountY = 1;
    gd->groupCountZ = 1;
    for (int i = 0; i < 2; i++)
        check(zeCommandListAppendLaunchKernelIndirect(imm, ki, gd, NULL, 0, NULL),
              "zeCommandListAppendLaunchKernelIndirect");

    /* sh_coop: (16,1,1)x(2,1,1), cooperative, once. */
    ze_kernel_handle_t kc = kernel(m, "sh_coop");
    size(kc, 16, 1, 1);
    ze_group_count_t g2 = {2, 1, 1};
    check(zeCommandListAppendLaunchCooperativeKernel(imm, kc, &g2, NULL, 0, NULL),
          "zeCommandListAppendLaunchCooperativeKernel");

    /* sh_many: (16,1,1) with group counts 1 to 300, once each: more
     * shapes than xpu-asm keeps per kernel and process (256) and lists
     * (32); then group count 7 five times more (a kept shape, the most
     * launched) and 290 three times more (a shape not kept). */
    ze_kernel_handle_t km = kernel(m, "sh_many");
    size(km, 16, 1, 1);
    for (uint32_t i = 1; i <= 300; i++)
        launch(km, i, 1, 1, 1);
    launch(km, 7, 1, 1, 5);
    launch(km, 290, 1, 1, 3);

    /* sh_big (256 registers): (16,1,1)x(64,1,1) 6 times. */
    ze_kernel_handle_t kb = kernel(big, "sh_big");
    size(kb, 16, 1, 1);
    launch(kb, 64, 1, 1, 6);

    /* Shapes that fill the 4 Xe-cores the tests emulate, each held down
     * by another limit: sh_slm with 48 KiB of local memory (slm),
     * sh_static (a barrier) and sh_1d (none) in groups of one thread
     * (barriers and groups where 10 threads per EU leave room, else
     * threads); 4096 groups each, once. */
    check(zeKernelSetArgumentValue(ks, 1, 49152, NULL), "zeKernelSetArgumentValue(local)");
    launch(ks, 4096, 1, 1, 1);
    size(kst, 32, 1, 1);
    launch(kst, 4096, 1, 1, 1);
    size(k1, 32, 1, 1);
    launch(k1, 4096, 1, 1, 1);

    printf("shapes: done\n");
    if (argc == 4) {
        fflush(stdout);
        raise(SIGKILL);
    }
    return 0;
}
