/*
 * Test support for the missing GPU, nothing else: lets SYCL's Level Zero v2
 * adapter create a context in NEO's no-hardware mode.
 *
 * UMF's Level Zero memory provider, which the v2 adapter uses for every
 * context, makes its allocations resident with zeContextMakeMemoryResident.
 * With no GPU (SetCommandStreamReceiver=1 and no aubstream, as Debian builds
 * NEO 26), NEO's AUB memory handler answers that call, and
 * zeContextEvictMemory, with ZE_RESULT_ERROR_UNINITIALIZED, and the context
 * cannot be made (docs/real-stack.md, "SYCL of 2026 on it"). This library
 * answers exactly that result of exactly those two calls with
 * ZE_RESULT_SUCCESS and passes every other result through unchanged. It
 * neither counts nor changes anything else.
 *
 * It is preloaded (LD_PRELOAD) and named by UMF_ZE_LOADER_LIB_NAME: UMF 1.2
 * (oneAPI 2026.2) finds its ze* functions with dlopen(UMF_ZE_LOADER_LIB_NAME,
 * RTLD_NOLOAD) and dlsym on that handle, so the library is linked against
 * libze_loader.so.1, and dlsym of every other ze* function on it resolves to
 * the loader's. UMF 1.0 (oneAPI 2025.3, llama.cpp's runtime) has no such
 * variable: it asks dlsym on the loader's own handle. So the library also has
 * a dlsym, which answers a lookup of those two names on an explicit handle
 * with its own functions and jumps to the next dlsym for every other lookup
 * (a jump, not a call: glibc reads RTLD_NEXT's caller from the return
 * address, which the jump keeps; x86-64 only, as the stacks here are).
 *
 * (--no-as-needed: nothing here calls the loader directly, and without it the
 * linker would drop the dependency).
 *
 *   gcc -shared -fPIC -o libze_resident.so ze_resident.c -Wl,--no-as-needed -lze_loader -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <stddef.h>
#include <string.h>

typedef ze_result_t (*resident_fn)(ze_context_handle_t, ze_device_handle_t, void *, size_t);

/* The next definition after this library's: the loader's (or a preload's in
 * between). Looked up on every call: context creation makes a handful. */
static ze_result_t call_next(const char *name, ze_context_handle_t context,
                             ze_device_handle_t device, void *ptr, size_t size) {
    resident_fn next = (resident_fn)dlsym(RTLD_NEXT, name);
    if (next == NULL)
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    ze_result_t r = next(context, device, ptr, size);
    return r == ZE_RESULT_ERROR_UNINITIALIZED ? ZE_RESULT_SUCCESS : r;
}

ZE_APIEXPORT ze_result_t ZE_APICALL zeContextMakeMemoryResident(ze_context_handle_t context,
                                                                ze_device_handle_t device,
                                                                void *ptr, size_t size) {
    return call_next("zeContextMakeMemoryResident", context, device, ptr, size);
}

ZE_APIEXPORT ze_result_t ZE_APICALL zeContextEvictMemory(ze_context_handle_t context,
                                                         ze_device_handle_t device, void *ptr,
                                                         size_t size) {
    return call_next("zeContextEvictMemory", context, device, ptr, size);
}

/* The next dlsym of the preload chain (libc's, or a preload's after this one). */
__attribute__((used)) static void *(*next_dlsym)(void *, const char *);

static void find_next_dlsym(void) {
    next_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (next_dlsym == NULL)
        next_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

__attribute__((constructor)) static void start(void) {
    if (next_dlsym == NULL)
        find_next_dlsym();
}

/* This library's function for a lookup it answers, else NULL. */
__attribute__((used)) static void *answer(void *handle, const char *name) {
    /* A lookup made before this library's constructor ran (another
     * preload's constructor starting the loader) finds the next dlsym here. */
    if (next_dlsym == NULL)
        find_next_dlsym();
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT || name == NULL)
        return NULL;
    if (strcmp(name, "zeContextMakeMemoryResident") == 0)
        return (void *)zeContextMakeMemoryResident;
    if (strcmp(name, "zeContextEvictMemory") == 0)
        return (void *)zeContextEvictMemory;
    return NULL;
}

__attribute__((naked)) void *dlsym(void *handle, const char *name) {
    (void)handle;
    (void)name;
    __asm__ volatile("push %rdi\n\t"
                     "push %rsi\n\t"
                     "sub $8, %rsp\n\t"
                     "call answer\n\t"
                     "add $8, %rsp\n\t"
                     "pop %rsi\n\t"
                     "pop %rdi\n\t"
                     "test %rax, %rax\n\t"
                     "jz 1f\n\t"
                     "ret\n"
                     "1:\n\t"
                     "jmp *next_dlsym(%rip)\n\t");
}
