// The kernels of tests/workload/timed.c: each work-item adds to its own
// word, so that a run's result is known (and the simulated driver of
// tests/fake/ze_sim.c does the same).
kernel void add_one(global uint *a) { a[get_global_id(0)] += 1; }
kernel void add_two(global uint *a) { a[get_global_id(0)] += 2; }
