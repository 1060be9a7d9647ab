/*
 * The OpenCL workload of the device time tests (tests/tests/time_cl.rs):
 * enqueues of add_one and add_two (tests/workload/kernels_time.cl, from
 * source) in every way an enqueue's time can be taken, linked with the ICD
 * loader (ocl-icd). On the simulated ICD (tests/fake/cl_sim.c) each
 * enqueue of G work-groups takes G times its ns per group; the workload
 * reads its own events' profiling as a program measuring itself would, and
 * prints what it measured, what it sees of its queues and its result, so
 * that a test can compare a run with and without --time.
 *
 * Usage: timed_cl KERNELS.cl STEP...
 * Steps (K: add_one or add_two, N enqueues, G work-groups of 32 items):
 *   nd:K:N:G        clCreateCommandQueue without properties, N enqueues
 *                   without an event, then clFinish
 *   task:K:N        N clEnqueueTask, then clFinish
 *   props:K:N:G     clCreateCommandQueueWithProperties from a read-only
 *                   array (no profiling asked): prints what the queue says
 *                   of its properties ("own props P", "own array A B C")
 *                   and, per enqueue with an event, what its profiling
 *                   query answers ("own profiling R"); waits on each
 *   own:K:N:G       a queue made with profiling, each enqueue with an
 *                   event waited on and read: prints "own K ns"
 *   release:K:N:G   each enqueue's event released at once; then clFinish
 *   poll:K:N:G      each enqueue's event polled (clGetEventInfo) until
 *                   complete, then released
 *   many:K:N:G      N enqueues, no sync until the end (clFinish)
 *   blocking:K:N:G  N enqueues, then a blocking read as the only sync
 *   threads:K:T:N:G T threads, each its own queue and kernel, N enqueues
 *   fork:K:N:G      a forked child enqueues N times (and exits)
 *   pending:K:N:G   N enqueues, then the process exits without a sync
 *   result          prints the buffer's sum ("result S")
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ITEMS 32 /* work-items per group */
#define BUFFER_ITEMS (1 << 16)

static cl_platform_id platform;
static cl_device_id device;
static cl_context context;
static cl_program program;
static cl_mem buffer;

static void die(const char *what, cl_int r) {
    fprintf(stderr, "timed_cl: %s failed: %d\n", what, (int)r);
    exit(1);
}
#define CALL(f, ...)                                                         \
    do {                                                                     \
        cl_int r_ = f(__VA_ARGS__);                                          \
        if (r_ != CL_SUCCESS)                                                \
            die(#f, r_);                                                     \
    } while (0)

static void init(const char *source) {
    CALL(clGetPlatformIDs, 1, &platform, NULL);
    CALL(clGetDeviceIDs, platform, CL_DEVICE_TYPE_GPU, 1, &device, NULL);
    cl_int r;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &r);
    if (!context)
        die("clCreateContext", r);
    FILE *f = fopen(source, "rb");
    if (!f) {
        perror(source);
        exit(1);
    }
    static char text[1 << 16];
    size_t size = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    const char *s = text;
    program = clCreateProgramWithSource(context, 1, &s, &size, &r);
    if (!program)
        die("clCreateProgramWithSource", r);
    CALL(clBuildProgram, program, 1, &device, "", NULL, NULL);
    buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, BUFFER_ITEMS * 4, NULL, &r);
    if (!buffer)
        die("clCreateBuffer", r);
    static uint32_t zeros[BUFFER_ITEMS];
    cl_command_queue q = clCreateCommandQueue(context, device, 0, &r);
    if (!q)
        die("clCreateCommandQueue", r);
    CALL(clEnqueueWriteBuffer, q, buffer, CL_TRUE, 0, sizeof zeros, zeros, 0, NULL, NULL);
    CALL(clReleaseCommandQueue, q);
}

static cl_kernel kernel(const char *name) {
    cl_int r;
    cl_kernel k = clCreateKernel(program, name, &r);
    if (!k)
        die("clCreateKernel", r);
    CALL(clSetKernelArg, k, 0, sizeof buffer, &buffer);
    return k;
}

static cl_command_queue queue(cl_command_queue_properties props) {
    cl_int r;
    cl_command_queue q = clCreateCommandQueue(context, device, props, &r);
    if (!q)
        die("clCreateCommandQueue", r);
    return q;
}

static void enqueue(cl_command_queue q, cl_kernel k, uint32_t g, cl_event *e) {
    size_t global = (size_t)g * ITEMS, local = ITEMS;
    CALL(clEnqueueNDRangeKernel, q, k, 1, NULL, &global, &local, 0, NULL, e);
}

static void done(cl_command_queue q, cl_kernel k) {
    CALL(clReleaseKernel, k);
    CALL(clReleaseCommandQueue, q);
}

static void step_nd(const char *k, long n, uint32_t g, int task, int sync) {
    cl_command_queue q = queue(0);
    cl_kernel h = kernel(k);
    for (long i = 0; i < n; i++) {
        if (task)
            CALL(clEnqueueTask, q, h, 0, NULL, NULL);
        else
            enqueue(q, h, g, NULL);
    }
    if (sync == 1)
        CALL(clFinish, q);
    if (sync == 2) {
        uint32_t first;
        CALL(clEnqueueReadBuffer, q, buffer, CL_TRUE, 0, 4, &first, 0, NULL, NULL);
    }
    if (sync != 0)
        done(q, h);
    else
        CALL(clFlush, q);
}

static void step_props(const char *k, long n, uint32_t g) {
    /* Read-only: a write into it faults. */
    static const cl_queue_properties asked[] = {CL_QUEUE_PROPERTIES, 0, 0};
    cl_int r;
    cl_command_queue q = clCreateCommandQueueWithProperties(context, device, asked, &r);
    if (!q)
        die("clCreateCommandQueueWithProperties", r);
    cl_command_queue_properties props = 99;
    CALL(clGetCommandQueueInfo, q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    printf("own props %llu\n", (unsigned long long)props);
    cl_queue_properties array[8] = {0};
    size_t size = 0;
    CALL(clGetCommandQueueInfo, q, CL_QUEUE_PROPERTIES_ARRAY, sizeof array, array, &size);
    printf("own array");
    for (size_t i = 0; i < size / sizeof array[0]; i++)
        printf(" %llu", (unsigned long long)array[i]);
    printf("\n");
    cl_kernel h = kernel(k);
    for (long i = 0; i < n; i++) {
        cl_event e;
        enqueue(q, h, g, &e);
        CALL(clWaitForEvents, 1, &e);
        cl_ulong t;
        printf("own profiling %d\n", (int)clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL));
        CALL(clReleaseEvent, e);
    }
    done(q, h);
}

static void step_events(const char *k, long n, uint32_t g, char how) {
    cl_command_queue q = queue(how == 'o' ? CL_QUEUE_PROFILING_ENABLE : 0);
    cl_kernel h = kernel(k);
    for (long i = 0; i < n; i++) {
        cl_event e;
        enqueue(q, h, g, &e);
        if (how == 'o') {
            CALL(clWaitForEvents, 1, &e);
            cl_ulong s, d;
            CALL(clGetEventProfilingInfo, e, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
            CALL(clGetEventProfilingInfo, e, CL_PROFILING_COMMAND_END, sizeof d, &d, NULL);
            printf("own %s %llu\n", k, (unsigned long long)(d - s));
        }
        if (how == 'p') {
            cl_int st = CL_QUEUED;
            while (st != CL_COMPLETE)
                CALL(clGetEventInfo, e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        }
        CALL(clReleaseEvent, e);
    }
    CALL(clFinish, q);
    done(q, h);
}

struct job { const char *k; long n; uint32_t g; };
static void *thread_main(void *p) {
    struct job *j = p;
    step_nd(j->k, j->n, j->g, 0, 1);
    return NULL;
}

static void step_threads(const char *k, long t, long n, uint32_t g) {
    pthread_t th[16];
    struct job j = {k, n, g};
    t = t > 16 ? 16 : t;
    for (long i = 0; i < t; i++)
        pthread_create(&th[i], NULL, thread_main, &j);
    for (long i = 0; i < t; i++)
        pthread_join(th[i], NULL);
}

static void step_fork(const char *k, long n, uint32_t g) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        step_nd(k, n, g, 0, 1);
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("the forked child", -1);
}

static void result(void) {
    static uint32_t words[BUFFER_ITEMS];
    cl_command_queue q = queue(0);
    CALL(clEnqueueReadBuffer, q, buffer, CL_TRUE, 0, sizeof words, words, 0, NULL, NULL);
    CALL(clReleaseCommandQueue, q);
    uint64_t sum = 0;
    for (size_t i = 0; i < BUFFER_ITEMS; i++)
        sum += words[i];
    printf("result %llu\n", (unsigned long long)sum);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: timed_cl KERNELS.cl STEP...\n");
        return 2;
    }
    init(argv[1]);
    for (int a = 2; a < argc; a++) {
        char s[32], k[32];
        long x = 0, y = 0, z = 0;
        if (strcmp(argv[a], "result") == 0) {
            result();
            continue;
        }
        int got = sscanf(argv[a], "%31[a-z]:%31[a-z_]:%ld:%ld:%ld", s, k, &x, &y, &z);
        if (strcmp(s, "nd") == 0 && got == 4)
            step_nd(k, x, (uint32_t)y, 0, 1);
        else if (strcmp(s, "task") == 0 && got == 3)
            step_nd(k, x, 1, 1, 1);
        else if (strcmp(s, "props") == 0 && got == 4)
            step_props(k, x, (uint32_t)y);
        else if (strcmp(s, "own") == 0 && got == 4)
            step_events(k, x, (uint32_t)y, 'o');
        else if (strcmp(s, "release") == 0 && got == 4)
            step_events(k, x, (uint32_t)y, 'r');
        else if (strcmp(s, "poll") == 0 && got == 4)
            step_events(k, x, (uint32_t)y, 'p');
        else if (strcmp(s, "many") == 0 && got == 4)
            step_nd(k, x, (uint32_t)y, 0, 1);
        else if (strcmp(s, "blocking") == 0 && got == 4)
            step_nd(k, x, (uint32_t)y, 0, 2);
        else if (strcmp(s, "threads") == 0 && got == 5)
            step_threads(k, x, y, (uint32_t)z);
        else if (strcmp(s, "fork") == 0 && got == 4)
            step_fork(k, x, (uint32_t)y);
        else if (strcmp(s, "pending") == 0 && got == 4)
            step_nd(k, x, (uint32_t)y, 0, 0);
        else {
            fprintf(stderr, "timed_cl: bad step %s\n", argv[a]);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
