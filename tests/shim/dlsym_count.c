/*
 * A user's dlsym-interposing preload, as tools stack them (a shim, another
 * recorder, a compatibility layer): its dlsym counts every lookup it is
 * asked, then asks the next dlsym of the preload chain for the answer. Built
 * twice by tests/tests/processes/chain.rs (-DTAG="front", -DTAG="back") and
 * preloaded in front of xpu-asm's interposer and behind it; alone, the two
 * see the same lookups. Like the interposer's, its dlsym jumps to the next
 * one (x86-64), so that every lookup keeps its caller's meaning.
 *
 * At exit it writes $DLSYM_COUNT_DIR/TAG-PID.txt, one line per lookup asked
 * of it, in order: "CALLER HANDLE NAME", where CALLER is "xpu-asm" when the
 * return address is in xpu-asm's interposer (its own lookups) and "other"
 * otherwise, HANDLE is "default", "next" or "handle".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TAG
#error "build with -DTAG=\"front\" or -DTAG=\"back\""
#endif

#define MAX_LOOKUPS 8192
#define MAX_LINE 160

typedef void *(*dlsym_fn)(void *, const char *);

static char lines[MAX_LOOKUPS][MAX_LINE];
static unsigned count;
static unsigned dropped;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* libc's dlsym, found by version (an unversioned dlsym of another preload
 * does not match), then the next dlsym after this library through it. */
static dlsym_fn next_dlsym(void) {
    static dlsym_fn next;
    if (next)
        return next;
    static const char *versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", 0};
    dlsym_fn libc = 0;
    for (int i = 0; versions[i] && !libc; i++)
        libc = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (!libc)
        abort();
    next = (dlsym_fn)libc(RTLD_NEXT, "dlsym");
    if (!next)
        next = libc;
    return next;
}

static const char *caller_of(void *ret) {
    Dl_info info;
    if (dladdr(ret, &info) && info.dli_fname && strstr(info.dli_fname, "xpu_asm_interposer"))
        return "xpu-asm";
    return "other";
}

/* Counts a lookup; returns the next dlsym, to jump to. */
__attribute__((visibility("hidden"), used)) void *count_lookup(void *handle, const char *name,
                                                               void *ret) {
    const char *caller = caller_of(ret);
    const char *kind = handle == RTLD_DEFAULT ? "default" : handle == RTLD_NEXT ? "next" : "handle";
    pthread_mutex_lock(&lock);
    if (count < MAX_LOOKUPS)
        snprintf(lines[count++], MAX_LINE, "%s %s %s\n", caller, kind, name);
    else
        dropped++;
    pthread_mutex_unlock(&lock);
    return (void *)next_dlsym();
}

/* dlsym depends on its caller (RTLD_DEFAULT searches the caller's scope,
 * RTLD_NEXT the objects after it), so the lookup is counted, then the next
 * dlsym is jumped to with the arguments and the return address as they
 * came: x86-64 System V, rdi = handle, rsi = name. */
__attribute__((naked)) void *dlsym(void *handle, const char *name) {
    (void)handle;
    (void)name;
    __asm__ volatile("push %rdi\n\t"
                     "push %rsi\n\t"
                     "sub $8, %rsp\n\t"
                     "mov 24(%rsp), %rdx\n\t"
                     "call count_lookup\n\t"
                     "add $8, %rsp\n\t"
                     "pop %rsi\n\t"
                     "pop %rdi\n\t"
                     "jmp *%rax\n\t");
}

__attribute__((destructor)) static void write_counts(void) {
    const char *dir = getenv("DLSYM_COUNT_DIR");
    if (!dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%d.txt", dir, TAG, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < count; i++)
        if (write(fd, lines[i], strlen(lines[i])) < 0)
            break;
    if (dropped) {
        char more[64];
        snprintf(more, sizeof more, "dropped %u\n", dropped);
        if (write(fd, more, strlen(more)) < 0) {
        }
    }
    pthread_mutex_unlock(&lock);
    close(fd);
}
