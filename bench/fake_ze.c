/*
 * Stand-ins for the Level Zero loader and driver whose functions do nothing,
 * for the hook-path benchmark (bench/hook_loop.c): with them a launch costs
 * only its calls, and what a preloaded hook adds can be timed without the
 * real driver's run-to-run noise.
 *
 * Built twice:
 *   cc -O2 -shared -fPIC -DFAKE_DRIVER -o libfake_ze_driver.so fake_ze.c
 *   cc -O2 -shared -fPIC -o libfake_ze.so fake_ze.c -ldl
 * The fake loader dispatches zeCommandListAppendLaunchKernel through the
 * table it gets from the fake driver's zeGetCommandListProcAddrTable (found
 * with dlopen and dlsym, as the real loader does), so that a launch passes
 * a hook twice, as on the real stack: the exported symbol, then the table
 * entry. FAKE_ZE_DRIVER names the driver library (default
 * libfake_ze_driver.so, found like any dlopen'ed library).
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FAKE_DRIVER

static ze_result_t driver_append(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                 const ze_group_count_t *args, ze_event_handle_t signal,
                                 uint32_t n_wait, ze_event_handle_t *wait) {
    (void)list, (void)kernel, (void)args, (void)signal, (void)n_wait, (void)wait;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeGetCommandListProcAddrTable(ze_api_version_t version,
                                          ze_command_list_dditable_t *table) {
    (void)version;
    table->pfnAppendLaunchKernel = driver_append;
    return ZE_RESULT_SUCCESS;
}

#else

static uintptr_t next_handle = 0x10000;
static ze_command_list_dditable_t driver;

static void *new_handle(void) {
    next_handle += 0x240;
    return (void *)next_handle;
}

/* Like the real loader's zeInit: load the driver, ask for its table. */
static void load_driver(void) {
    if (driver.pfnAppendLaunchKernel)
        return;
    const char *name = getenv("FAKE_ZE_DRIVER");
    void *h = dlopen(name ? name : "libfake_ze_driver.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "fake_ze: %s\n", dlerror());
        exit(1);
    }
    ze_pfnGetCommandListProcAddrTable_t get =
        (ze_pfnGetCommandListProcAddrTable_t)dlsym(h, "zeGetCommandListProcAddrTable");
    if (!get || get(ZE_API_VERSION_CURRENT, &driver) != ZE_RESULT_SUCCESS ||
        !driver.pfnAppendLaunchKernel) {
        fprintf(stderr, "fake_ze: no command list table from the fake driver\n");
        exit(1);
    }
}

ze_result_t zeModuleCreate(ze_context_handle_t context, ze_device_handle_t device,
                           const ze_module_desc_t *desc, ze_module_handle_t *module,
                           ze_module_build_log_handle_t *log) {
    (void)context, (void)device, (void)desc;
    load_driver();
    *module = new_handle();
    if (log)
        *log = NULL;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleGetKernelNames(ze_module_handle_t module, uint32_t *count,
                                   const char **names) {
    (void)module, (void)names;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelCreate(ze_module_handle_t module, const ze_kernel_desc_t *desc,
                           ze_kernel_handle_t *kernel) {
    (void)module, (void)desc;
    *kernel = new_handle();
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListCreate(ze_context_handle_t context, ze_device_handle_t device,
                                const ze_command_list_desc_t *desc,
                                ze_command_list_handle_t *list) {
    (void)context, (void)device, (void)desc;
    *list = new_handle();
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListCreateImmediate(ze_context_handle_t context, ze_device_handle_t device,
                                         const ze_command_queue_desc_t *desc,
                                         ze_command_list_handle_t *list) {
    (void)context, (void)device, (void)desc;
    *list = new_handle();
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t list,
                                            ze_kernel_handle_t kernel,
                                            const ze_group_count_t *args,
                                            ze_event_handle_t signal, uint32_t n_wait,
                                            ze_event_handle_t *wait) {
    return driver.pfnAppendLaunchKernel(list, kernel, args, signal, n_wait, wait);
}

#endif
