/*
 * The reference point of the launch benchmark: the least a preloaded hook can
 * do. It counts zeCommandListAppendLaunchKernel calls in one atomic counter
 * and forwards them; no kernel identity, no command lists, no record, no
 * reentrancy guard. scripts/bench.sh measures it beside the interposer: the
 * interposer's target is this hook's cost with all its features.
 *
 * Build: cc -O2 -shared -fPIC -o libbare_hook.so bare_hook.c -ldl
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef ze_result_t (*append_fn)(ze_command_list_handle_t, ze_kernel_handle_t,
                                 const ze_group_count_t *, ze_event_handle_t, uint32_t,
                                 ze_event_handle_t *);

static append_fn real_append;
static uint64_t launches;

__attribute__((constructor)) static void bare_hook_init(void) {
    real_append = (append_fn)dlsym(RTLD_NEXT, "zeCommandListAppendLaunchKernel");
}

__attribute__((destructor)) static void bare_hook_fini(void) {
    if (getenv("BARE_HOOK_REPORT"))
        fprintf(stderr, "bare_hook: %llu launches\n", (unsigned long long)launches);
}

ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t list,
                                            ze_kernel_handle_t kernel,
                                            const ze_group_count_t *args,
                                            ze_event_handle_t signal, uint32_t n_wait,
                                            ze_event_handle_t *wait) {
    __atomic_fetch_add(&launches, 1, __ATOMIC_RELAXED);
    return real_append(list, kernel, args, signal, n_wait, wait);
}
