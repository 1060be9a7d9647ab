/*
 * Enqueue-loop benchmark for xpu-asm's OpenCL path: many
 * clEnqueueNDRangeKernel calls through the ICD loader's exported API (the
 * system's libOpenCL.so.1), so that the instructions the interposer adds to
 * one enqueue can be counted (scripts/bench.sh runs it under callgrind with
 * and without the interposer, as launch_loop for Level Zero).
 *
 * usage: enqueue_loop KERNELS.cl [n=N] [warmup=W]
 *   n=N      N enqueues on one in-order queue (default 20000)
 *   warmup=W W enqueues before the measured ones (first-use costs of the
 *            driver and of any hook stay out; default 1000)
 *
 * The measured loop is the noinline function bench_enqueue_loop, which
 * callgrind's --toggle-collect=bench_enqueue_loop restricts its count to.
 * The four kernels of KERNELS.cl are enqueued round-robin. Prints
 * "enqueues=N".
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NKERNELS 4
static const char *kernel_names[NKERNELS] = {"bench_add", "bench_mul", "bench_sub", "bench_fma"};

static void check(cl_int e, const char *what) {
    if (e != CL_SUCCESS) {
        fprintf(stderr, "enqueue_loop: %s failed: %d\n", what, e);
        exit(1);
    }
}

/* The measured loop. noinline (and noclone): callgrind toggles collection
 * on entry and exit of this very symbol. */
__attribute__((noinline, noclone)) cl_int
bench_enqueue_loop(cl_command_queue q, cl_kernel *k, long n) {
    size_t global = 64;
    for (long i = 0; i < n; i++) {
        cl_int e = clEnqueueNDRangeKernel(q, k[i & (NKERNELS - 1)], 1, NULL, &global, NULL, 0, NULL, NULL);
        if (e != CL_SUCCESS)
            return e;
    }
    return CL_SUCCESS;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *b = calloc(1, (size_t)size + 1);
    if (!b || fread(b, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "enqueue_loop: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return b;
}

int main(int argc, char **argv) {
    long n = 20000, warmup = 1000;
    if (argc < 2) {
        fprintf(stderr, "usage: enqueue_loop KERNELS.cl [n=N] [warmup=W]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strncmp(argv[i], "n=", 2) == 0)
            n = atol(argv[i] + 2);
        else if (strncmp(argv[i], "warmup=", 7) == 0)
            warmup = atol(argv[i] + 7);
    }
    cl_platform_id platform;
    cl_device_id device;
    cl_int e;
    check(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, NULL), "clGetDeviceIDs");
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &e);
    check(e, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &e);
    check(e, "clCreateCommandQueueWithProperties");
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 16, NULL, &e);
    check(e, "clCreateBuffer");
    const char *src = slurp(argv[1]);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    check(e, "clCreateProgramWithSource");
    check(clBuildProgram(p, 1, &device, "", NULL, NULL), "clBuildProgram");
    cl_kernel k[NKERNELS];
    for (int i = 0; i < NKERNELS; i++) {
        k[i] = clCreateKernel(p, kernel_names[i], &e);
        check(e, kernel_names[i]);
        check(clSetKernelArg(k[i], 0, sizeof buf, &buf), "clSetKernelArg");
    }
    check(bench_enqueue_loop(q, k, warmup), "warm-up enqueues");
    check(clFinish(q), "clFinish");
    check(bench_enqueue_loop(q, k, n), "enqueues");
    check(clFinish(q), "clFinish");
    printf("enqueues=%ld\n", n);
    return 0;
}
