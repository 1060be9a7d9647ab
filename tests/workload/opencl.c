/*
 * OpenCL test workload for xpu-asm: builds programs every way OpenCL has and
 * enqueues their kernels through the real ICD loader (ocl-icd's
 * libOpenCL.so.1) and NEO's OpenCL driver, step by step from its command
 * line, so that every count is known exactly.
 *
 *   --via link   direct calls of the loader's exported functions (the
 *                binary built with -DVIA_LINK, linked with libOpenCL.so.1)
 *   --via dlsym  dlopen the loader, dlsym each function by name (as
 *                programs that carry their own OpenCL declarations do)
 *
 * Usage: opencl --via link|dlsym [--options OPTS] [--spec ID=VALUE]...
 *               [--program P=HOW:FILE]... [--save P=FILE]... STEP...
 * --options: clBuildProgram's options of every program; --spec: a 4-byte
 * specialization constant set on every program from IL before its build.
 * Programs (built for the first GPU, in the order given):
 *   P=source:F   clCreateProgramWithSource of the text of F, clBuildProgram
 *   P=il:F       clCreateProgramWithIL of SPIR-V F, clBuildProgram
 *   P=ilkhr:F    the same through clCreateProgramWithILKHR, taken from
 *                clGetExtensionFunctionAddressForPlatform
 *   P=link:F     clCreateProgramWithSource of F, clCompileProgram, clLinkProgram
 *   P=binary:F   clCreateProgramWithBinary of the device binary F, clBuildProgram
 *   P=rebuild:Q  clCreateProgramWithBinary of program Q's CL_PROGRAM_BINARIES
 * --save P=F writes program P's CL_PROGRAM_BINARIES to F.
 * Steps (N launches, each of its kernel created for the step):
 *   nd:P:K:N      clEnqueueNDRangeKernel
 *   named:P:F:N   the same for the kernel whose name is F's bytes (any
 *                 bytes but NUL, of any length: names no command line holds)
 *   task:P:K:N    clEnqueueTask
 *   count:P:K:N   clEnqueueNDCountKernelINTEL (clGetExtensionFunctionAddressForPlatform)
 *   countg:P:K:N  the same from clGetExtensionFunctionAddress
 *   clone:P:K:N   clCloneKernel of K, N launches of the clone
 *   all:P:N       clCreateKernelsInProgram, N launches of each of its kernels
 *   user:P:K:N    N launches each behind a user event, signaled after the
 *                 enqueue, then clWaitForEvents of the last
 *   usersig:P:K:N the same, each event signaled before its enqueue
 *   local:P:K:N   argument 1 of K set as 2048 bytes of local memory and
 *                 argument 2 as a NULL buffer (no value), N launches of
 *                 1024 work-items in groups of 256
 *   end:exit|kill exit(0), or SIGKILL itself right after the last launch
 * Every step ends with clFinish and a blocking read. Prints "ready" once
 * the programs are built, "step S done" after each step.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every OpenCL function the workload calls through the loader. */
#define CL_FUNCS(X)                  \
    X(clGetPlatformIDs)              \
    X(clGetDeviceIDs)                \
    X(clCreateContext)               \
    X(clCreateCommandQueueWithProperties) \
    X(clCreateBuffer)                \
    X(clCreateProgramWithSource)     \
    X(clCreateProgramWithIL)         \
    X(clCreateProgramWithBinary)     \
    X(clBuildProgram)                \
    X(clSetProgramSpecializationConstant) \
    X(clCompileProgram)              \
    X(clLinkProgram)                 \
    X(clGetProgramInfo)              \
    X(clGetProgramBuildInfo)         \
    X(clCreateKernel)                \
    X(clCreateKernelsInProgram)      \
    X(clCloneKernel)                 \
    X(clSetKernelArg)                \
    X(clReleaseKernel)               \
    X(clEnqueueNDRangeKernel)        \
    X(clEnqueueTask)                 \
    X(clEnqueueReadBuffer)           \
    X(clCreateUserEvent)             \
    X(clSetUserEventStatus)          \
    X(clWaitForEvents)               \
    X(clReleaseEvent)                \
    X(clFinish)                      \
    X(clGetExtensionFunctionAddressForPlatform) \
    X(clGetExtensionFunctionAddress)

#ifdef VIA_LINK
#define CL(name) name
#else
static struct {
#define DECLARE(name) __typeof__(&name) name;
    CL_FUNCS(DECLARE)
#undef DECLARE
} F;
#define CL(name) F.name
#endif

static const char *current_step = "setup";

static void die(const char *what, cl_int e) {
    fprintf(stderr, "opencl: step %s: %s failed: %d\n", current_step, what, e);
    exit(1);
}

#define CHECK(call)                        \
    do {                                   \
        cl_int e_ = (call);                \
        if (e_ != CL_SUCCESS)              \
            die(#call, e_);                \
    } while (0)

static cl_platform_id platform;
static cl_device_id device;
static cl_context context;
static cl_command_queue queue;
static cl_mem buffer;

#define MAX_PROGRAMS 16
static struct {
    const char *name;
    cl_program program;
} programs[MAX_PROGRAMS];
static int n_programs;

static void reach_opencl(const char *via) {
#ifdef VIA_LINK
    if (strcmp(via, "link") != 0) {
        fprintf(stderr, "opencl: this binary does --via link only\n");
        exit(2);
    }
#else
    if (strcmp(via, "dlsym") != 0) {
        fprintf(stderr, "opencl: this binary does --via dlsym only\n");
        exit(2);
    }
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "opencl: dlopen(libOpenCL.so.1): %s\n", dlerror());
        exit(1);
    }
#define LOOKUP(name)                                                   \
    if (!(F.name = (__typeof__(F.name))dlsym(h, #name))) {             \
        fprintf(stderr, "opencl: dlsym(%s): %s\n", #name, dlerror()); \
        exit(1);                                                       \
    }
    CL_FUNCS(LOOKUP)
#undef LOOKUP
#endif
}

static void setup(void) {
    cl_uint n;
    cl_int e;
    CHECK(CL(clGetPlatformIDs)(1, &platform, &n));
    CHECK(CL(clGetDeviceIDs)(platform, CL_DEVICE_TYPE_GPU, 1, &device, NULL));
    context = CL(clCreateContext)(NULL, 1, &device, NULL, NULL, &e);
    CHECK(e);
    queue = CL(clCreateCommandQueueWithProperties)(context, device, NULL, &e);
    CHECK(e);
    buffer = CL(clCreateBuffer)(context, CL_MEM_READ_WRITE, 1 << 16, NULL, &e);
    CHECK(e);
}

static unsigned char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*size + 1);
    if (!b || fread(b, 1, *size, f) != *size) {
        fprintf(stderr, "opencl: cannot read %s\n", path);
        exit(1);
    }
    b[*size] = 0;
    fclose(f);
    return b;
}

static cl_program find_program(const char *name) {
    for (int i = 0; i < n_programs; i++)
        if (strcmp(programs[i].name, name) == 0)
            return programs[i].program;
    fprintf(stderr, "opencl: step %s: no program %s\n", current_step, name);
    exit(2);
}

/* Program P's device binary (CL_PROGRAM_BINARIES), malloc'ed. */
static unsigned char *binary_of(cl_program p, size_t *size) {
    CHECK(CL(clGetProgramInfo)(p, CL_PROGRAM_BINARY_SIZES, sizeof *size, size, NULL));
    unsigned char *b = malloc(*size);
    CHECK(CL(clGetProgramInfo)(p, CL_PROGRAM_BINARIES, sizeof b, &b, NULL));
    return b;
}

/* --options OPTS: clBuildProgram's options of every program; --spec
 * ID=VALUE: a 4-byte specialization constant of every program from IL. */
static const char *build_options = "";
#define MAX_SPEC 16
static cl_uint spec_ids[MAX_SPEC];
static cl_int spec_values[MAX_SPEC];
static int n_spec;

static void build(cl_program p, const char *what) {
    cl_int e = CL(clBuildProgram)(p, 1, &device, build_options, NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = "";
        CL(clGetProgramBuildInfo)(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "opencl: building %s failed (%d):\n%s\n", what, e, log);
        exit(1);
    }
}

static cl_program from_binary(const unsigned char *b, size_t size) {
    cl_int e, status;
    cl_program p = CL(clCreateProgramWithBinary)(context, 1, &device, &size, &b, &status, &e);
    CHECK(e);
    return p;
}

static cl_program linked(const char *file) {
    size_t size;
    const char *text = (const char *)slurp(file, &size);
    cl_int e;
    cl_program src = CL(clCreateProgramWithSource)(context, 1, &text, NULL, &e);
    CHECK(e);
    CHECK(CL(clCompileProgram)(src, 1, &device, "", 0, NULL, NULL, NULL, NULL));
    cl_program p = CL(clLinkProgram)(context, 1, &device, "", 1, &src, NULL, NULL, &e);
    CHECK(e);
    return p;
}

static cl_program make_program(const char *how, const char *file) {
    size_t size;
    cl_int e;
    cl_program p;
    if (strcmp(how, "source") == 0) {
        const char *text = (const char *)slurp(file, &size);
        p = CL(clCreateProgramWithSource)(context, 1, &text, &size, &e);
    } else if (strcmp(how, "il") == 0) {
        unsigned char *il = slurp(file, &size);
        p = CL(clCreateProgramWithIL)(context, il, size, &e);
        for (int i = 0; e == CL_SUCCESS && i < n_spec; i++)
            CHECK(CL(clSetProgramSpecializationConstant)(p, spec_ids[i], sizeof(cl_int),
                                                         &spec_values[i]));
    } else if (strcmp(how, "ilkhr") == 0) {
        clCreateProgramWithILKHR_fn f = (clCreateProgramWithILKHR_fn)CL(
            clGetExtensionFunctionAddressForPlatform)(platform, "clCreateProgramWithILKHR");
        if (!f)
            die("clGetExtensionFunctionAddressForPlatform(clCreateProgramWithILKHR)", -1);
        unsigned char *il = slurp(file, &size);
        p = f(context, il, size, &e);
    } else if (strcmp(how, "link") == 0) {
        return linked(file);
    } else if (strcmp(how, "binary") == 0) {
        unsigned char *b = slurp(file, &size);
        p = from_binary(b, size);
        e = CL_SUCCESS;
    } else if (strcmp(how, "rebuild") == 0) {
        unsigned char *b = binary_of(find_program(file), &size);
        p = from_binary(b, size);
        e = CL_SUCCESS;
    } else {
        fprintf(stderr, "opencl: unknown way to make a program: %s\n", how);
        exit(2);
    }
    CHECK(e);
    build(p, file);
    return p;
}

/* --program P=HOW:FILE */
static void add_program(char *spec) {
    char *eq = strchr(spec, '='), *colon = eq ? strchr(eq, ':') : NULL;
    if (!eq || !colon || n_programs == MAX_PROGRAMS) {
        fprintf(stderr, "opencl: bad --program %s\n", spec);
        exit(2);
    }
    *eq = *colon = 0;
    current_step = spec;
    programs[n_programs].name = spec;
    programs[n_programs].program = make_program(eq + 1, colon + 1);
    n_programs++;
}

/* --save P=FILE */
static void save(char *spec) {
    char *eq = strchr(spec, '=');
    if (!eq) {
        fprintf(stderr, "opencl: bad --save %s\n", spec);
        exit(2);
    }
    *eq = 0;
    size_t size;
    unsigned char *b = binary_of(find_program(spec), &size);
    FILE *f = fopen(eq + 1, "wb");
    if (!f || fwrite(b, 1, size, f) != size || fclose(f) != 0) {
        perror(eq + 1);
        exit(1);
    }
}

static cl_kernel kernel(const char *program, const char *name) {
    cl_int e;
    cl_kernel k = CL(clCreateKernel)(find_program(program), name, &e);
    CHECK(e);
    CHECK(CL(clSetKernelArg)(k, 0, sizeof buffer, &buffer));
    return k;
}

/* The bytes of file F as a C string: a kernel's name exactly as the test
 * wrote it (none may be NUL: a C string ends there). */
static char *name_from_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "opencl: step %s: cannot open %s\n", current_step, path);
        exit(2);
    }
    size_t cap = 4096, len = 0, got;
    char *name = malloc(cap);
    while (name && (got = fread(name + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap)
            name = realloc(name, cap *= 2);
    }
    fclose(f);
    if (!name || memchr(name, '\0', len)) {
        fprintf(stderr, "opencl: step %s: %s holds a NUL byte (or no memory)\n", current_step, path);
        exit(2);
    }
    name[len] = '\0';
    return name;
}

static void nd(cl_kernel k, long n) {
    size_t global = 64;
    for (long i = 0; i < n; i++)
        CHECK(CL(clEnqueueNDRangeKernel)(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL));
}

static void finish(void) {
    float host[4];
    CHECK(CL(clFinish)(queue));
    CHECK(CL(clEnqueueReadBuffer)(queue, buffer, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
}

/* Each enqueue waits on a user event, signaled after the enqueue returns,
 * or before it (first: where each enqueue blocks, as in NEO 22.43's
 * no-hardware mode, one behind an event not yet signaled never returns). */
static void behind_user_events(cl_kernel k, long n, int first) {
    size_t global = 64;
    cl_int e;
    cl_event done = NULL;
    for (long i = 0; i < n; i++) {
        cl_event user = CL(clCreateUserEvent)(context, &e);
        CHECK(e);
        if (done)
            CHECK(CL(clReleaseEvent)(done));
        if (first)
            CHECK(CL(clSetUserEventStatus)(user, CL_COMPLETE));
        CHECK(CL(clEnqueueNDRangeKernel)(queue, k, 1, NULL, &global, NULL, 1, &user, &done));
        if (!first)
            CHECK(CL(clSetUserEventStatus)(user, CL_COMPLETE));
        CHECK(CL(clReleaseEvent)(user));
    }
    if (done)
        CHECK(CL(clWaitForEvents)(1, &done));
}

/* clEnqueueNDCountKernelINTEL, from clGetExtensionFunctionAddressForPlatform
 * (for_platform) or clGetExtensionFunctionAddress. */
static void count_kernel(cl_kernel k, long n, int for_platform) {
    typedef cl_int (*count_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                               const size_t *, const size_t *, cl_uint, const cl_event *,
                               cl_event *);
    const char *name = "clEnqueueNDCountKernelINTEL";
    count_fn f = (count_fn)(for_platform
                                ? CL(clGetExtensionFunctionAddressForPlatform)(platform, name)
                                : CL(clGetExtensionFunctionAddress)(name));
    if (!f)
        die("clGetExtensionFunctionAddressForPlatform(clEnqueueNDCountKernelINTEL)", -1);
    size_t groups = 4, local = 16;
    for (long i = 0; i < n; i++)
        CHECK(f(queue, k, 1, NULL, &groups, &local, 0, NULL, NULL));
}

static void all_kernels(const char *program, long n) {
    cl_kernel ks[16];
    cl_uint made;
    CHECK(CL(clCreateKernelsInProgram)(find_program(program), 16, ks, &made));
    for (cl_uint i = 0; i < made; i++) {
        CHECK(CL(clSetKernelArg)(ks[i], 0, sizeof buffer, &buffer));
        nd(ks[i], n);
        CHECK(CL(clReleaseKernel)(ks[i]));
    }
}

static void end(const char *how) {
    if (strcmp(how, "exit") == 0)
        exit(0);
    if (strcmp(how, "kill") == 0) {
        fflush(stdout);
        raise(SIGKILL);
    }
    fprintf(stderr, "opencl: unknown end %s\n", how);
    exit(2);
}

static void step(char *s) {
    current_step = strdup(s);
    char *parts[4] = {0};
    int n = 0;
    for (char *t = strtok(s, ":"); t && n < 4; t = strtok(NULL, ":"))
        parts[n++] = t;
    const char *what = parts[0];
    if (strcmp(what, "end") == 0 && n == 2)
        return end(parts[1]);
    if (strcmp(what, "all") == 0 && n == 3) {
        all_kernels(parts[1], atol(parts[2]));
    } else if (n == 4) {
        long count = atol(parts[3]);
        int named = strcmp(what, "named") == 0;
        cl_kernel k = kernel(parts[1], named ? name_from_file(parts[2]) : parts[2]);
        if (strcmp(what, "nd") == 0 || named) {
            nd(k, count);
        } else if (strcmp(what, "task") == 0) {
            for (long i = 0; i < count; i++)
                CHECK(CL(clEnqueueTask)(queue, k, 0, NULL, NULL));
        } else if (strcmp(what, "count") == 0 || strcmp(what, "countg") == 0) {
            count_kernel(k, count, strcmp(what, "count") == 0);
        } else if (strcmp(what, "clone") == 0) {
            cl_int e;
            cl_kernel c = CL(clCloneKernel)(k, &e);
            CHECK(e);
            nd(c, count);
            CHECK(CL(clReleaseKernel)(c));
        } else if (strcmp(what, "local") == 0) {
            size_t global = 1024, local = 256;
            CHECK(CL(clSetKernelArg)(k, 1, 2048, NULL));
            CHECK(CL(clSetKernelArg)(k, 2, sizeof(cl_mem), NULL));
            for (long i = 0; i < count; i++)
                CHECK(CL(clEnqueueNDRangeKernel)(queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
        } else if (strcmp(what, "user") == 0 || strcmp(what, "usersig") == 0) {
            behind_user_events(k, count, strcmp(what, "usersig") == 0);
        } else {
            fprintf(stderr, "opencl: unknown step %s\n", current_step);
            exit(2);
        }
        CHECK(CL(clReleaseKernel)(k));
    } else {
        fprintf(stderr, "opencl: bad step %s\n", current_step);
        exit(2);
    }
    finish();
    printf("step %s done\n", current_step);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int i = 1;
    if (argc < 3 || strcmp(argv[1], "--via") != 0) {
        fprintf(stderr, "usage: opencl --via link|dlsym [--program P=HOW:FILE]... [--save P=FILE]... STEP...\n");
        return 2;
    }
    reach_opencl(argv[2]);
    setup();
    for (i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--options") == 0)
            build_options = argv[i + 1];
        else if (strcmp(argv[i], "--spec") == 0 && n_spec < MAX_SPEC &&
                 sscanf(argv[i + 1], "%u=%d", &spec_ids[n_spec], &spec_values[n_spec]) == 2)
            n_spec++;
        else
            break;
    }
    for (; i + 1 < argc && strcmp(argv[i], "--program") == 0; i += 2)
        add_program(argv[i + 1]);
    for (; i + 1 < argc && strcmp(argv[i], "--save") == 0; i += 2)
        save(argv[i + 1]);
    printf("ready\n");
    fflush(stdout);
    for (; i < argc; i++)
        step(argv[i]);
    return 0;
}
