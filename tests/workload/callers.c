/*
 * Call stacks workload for xpu-asm: three kernels of kernels_a.cl, each
 * launched from its own function in one of two shared libraries
 * (callers_lib.c built twice: libcallers_a.so with launch_from_a1 and
 * launch_from_a2, libcallers_b.so with launch_from_b), through the real
 * Level Zero loader. tests/tests/origins.rs checks that each kernel's
 * first frame outside xpu-asm and the runtimes is exactly its function.
 *
 * Usage: callers A.spv N (each kernel launched N times)
 */
#include <level_zero/ze_api.h>

#include <stdio.h>
#include <stdlib.h>

void launch_from_a1(ze_command_list_handle_t list, ze_kernel_handle_t k, int n);
void launch_from_a2(ze_command_list_handle_t list, ze_kernel_handle_t k, int n);
void launch_from_b(ze_command_list_handle_t list, ze_kernel_handle_t k, int n);

static void check(ze_result_t r, const char *what) {
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "callers: %s failed: ze_result_t 0x%08x\n", what, (unsigned)r);
        exit(1);
    }
}

static ze_kernel_handle_t kernel(ze_module_handle_t m, const char *name, void *buf) {
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
    ze_kernel_handle_t k;
    check(zeKernelCreate(m, &kd, &k), "zeKernelCreate");
    check(zeKernelSetGroupSize(k, 1, 1, 1), "zeKernelSetGroupSize");
    check(zeKernelSetArgumentValue(k, 0, sizeof(buf), &buf), "zeKernelSetArgumentValue");
    return k;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: callers A.spv N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "callers: cannot open %s\n", argv[1]);
        return 1;
    }
    static unsigned char spv[1 << 20];
    size_t size = fread(spv, 1, sizeof spv, f);
    fclose(f);
    check(zeInit(0), "zeInit");
    uint32_t count = 1;
    ze_driver_handle_t drv;
    check(zeDriverGet(&count, &drv), "zeDriverGet");
    ze_device_handle_t dev;
    count = 1;
    check(zeDeviceGet(drv, &count, &dev), "zeDeviceGet");
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx;
    check(zeContextCreate(drv, &cd, &ctx), "zeContextCreate");
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                  ZE_COMMAND_QUEUE_MODE_DEFAULT, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list;
    check(zeCommandListCreateImmediate(ctx, dev, &qd, &list), "zeCommandListCreateImmediate");
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV,
                           size, spv, "", NULL};
    ze_module_handle_t m;
    check(zeModuleCreate(ctx, dev, &md, &m, NULL), "zeModuleCreate");
    ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *buf;
    check(zeMemAllocShared(ctx, &dd, &hd, 4096, 64, dev, &buf), "zeMemAllocShared");
    launch_from_a1(list, kernel(m, "scale", buf), n);
    launch_from_a2(list, kernel(m, "scale_v2", buf), n);
    launch_from_b(list, kernel(m, "common_kernel", buf), n);
    return 0;
}
