"""The summary table of scripts/bench.sh, from its results file (KEY=VALUE
lines): python3 bench/summary.py RESULTS NPROC CPU DATE ZE NEO IGC QUICK ROUNDS
WORK ELAPSED LOAD."""
import sys
path, nproc, cpu, date, ze, neo, igc, quick, rounds, work, elapsed, load = sys.argv[1:]
res = {}
for l in open(path):
    if "=" in l:
        k, v = l.rstrip("\n").split("=", 1)
        res.setdefault(k, v)
g = lambda k, d="-": res.get(k, d)
def f(k, fmt="{:.1f}"):
    try:
        return fmt.format(float(res[k]))
    except (KeyError, ValueError):
        return "-"
verdicts = []
def verdict(name, value, limit, unit):
    try:
        ok = float(value) <= limit
    except (TypeError, ValueError):
        verdicts.append(f"  {name:<52} {'-':>10}   target <= {limit:g} {unit}   NOT MEASURED")
        return
    shown = f"{float(value):>10.3f}" if limit < 10 else f"{float(value):>10.1f}"
    verdicts.append(f"  {name:<52} {shown}   target <= {limit:g} {unit}   {'MET' if ok else 'MISSED'}")

print()
print("=" * 100)
print(f"xpu-asm benchmark   {date}   {'QUICK (smoke test)' if quick == '1' else 'full'}")
print(f"machine: {nproc} CPUs, {cpu}; Level Zero loader {ze}, NEO {neo}, IGC {igc}")
print(f"NEO no-hardware mode (pvc, AUB capture filtered away); work folder {work}")
print(f"bench took {int(elapsed) // 60} min {int(elapsed) % 60} s; load average at the end {load}")
print("=" * 100)

if "launch_imm_launches" in res:
    print()
    print(f"1. Launch cost on the real stack (bench/launch_loop.c), {rounds} interleaved rounds (order rotated).")
    print("   Per run: CPU time of the process per launch over the fastest of 40 chunks (immediate) or")
    print("   5 repetitions (regular); the same in wall time. Figures: median over runs [quartiles].")
    print("   Overhead, ratio: median over rounds of (variant - none), (variant / none) in the same round.")
    for phase, title in (("imm", f"immediate list, {g('launch_imm_launches')} launches per run"),
                         ("reg", f"regular list, {g('launch_reg_launches')} launches per run (1000 appends, 200 executions, repeated)")):
        print(f"   {title}")
        print(f"   {'variant':<9} {'CPU ns/launch':>22} {'overhead ns':>24} {'ratio':>7} {'wall ns/launch':>15} {'overhead':>9} {'ratio':>7}")
        for v in ("none", "bare", "tracing", "xpu-asm"):
            t = f"launch_{phase}_{v}_cpu_min"
            if t not in res:
                continue
            w = f"launch_{phase}_{v}_min"
            ns = f"{f(t, '{:.1f}')} [{f(t+'_q1', '{:.0f}')}-{f(t+'_q3', '{:.0f}')}]"
            if phase == "reg":
                ns = f"{f(t, '{:.2f}')} [{f(t+'_q1', '{:.2f}')}-{f(t+'_q3', '{:.2f}')}]"
            none = v == "none"
            ov = "" if none else f"{f(t+'_overhead', '{:+.1f}')} [{f(t+'_overhead_q1', '{:+.1f}')},{f(t+'_overhead_q3', '{:+.1f}')}]"
            print(f"   {v:<9} {ns:>22} {ov:>24} {'' if none else f(t+'_ratio', '{:.4f}'):>7} "
                  f"{f(w, '{:.1f}' if phase == 'imm' else '{:.2f}'):>15} {'' if none else f(w+'_overhead', '{:+.1f}'):>9} "
                  f"{'' if none else f(w+'_ratio', '{:.4f}'):>7}")
    print("   none: no hook; bare: bench/bare_hook.c (one atomic counter, no features); tracing: the")
    print("   loader's tracing layer (ZE_ENABLE_TRACING_LAYER=1, no tracer registered); xpu-asm: the interposer.")
    print(f"   interposer counted every launch: {g('launch_count_check')}")
if "hook_none_ns" in res:
    print()
    print("1b. The hook path alone (bench/hook_loop.c over bench/fake_ze.c: a loader and a driver that do")
    print("   nothing; a launch passes the exported hook and the dispatch-table hook, as on the real stack).")
    print(f"   CPU ns per launch, fastest of 100 chunks of 200,000; median of {g('hook_rounds')} interleaved runs [min-max]")
    print(f"   {'variant':<9} {'ns/launch':>20} {'added ns':>20}")
    for v in ("none", "bare", "xpu-asm"):
        ns = f"{f(f'hook_{v}_ns', '{:.2f}')} [{f(f'hook_{v}_ns_lo', '{:.2f}')}-{f(f'hook_{v}_ns_hi', '{:.2f}')}]"
        ad = "" if v == "none" else f"{f(f'hook_{v}_overhead', '{:+.2f}')} [{f(f'hook_{v}_overhead_lo', '{:+.1f}')},{f(f'hook_{v}_overhead_hi', '{:+.1f}')}]"
        print(f"   {v:<9} {ns:>20} {ad:>20}")
    print("   (caches and branch predictors stay warm here; between real driver calls they do not)")

if "cg_imm_xpu_added_per_launch" in res or "cg_skipped" in res:
    print()
    print("2. Instructions per launch inside the measured loop (callgrind --toggle-collect; deterministic)")
    if "cg_skipped" in res:
        print(f"   skipped: {g('cg_skipped')}")
    else:
        ni, nr = float(g("cg_imm_launches")), float(g("cg_reg_launches"))
        print(f"   {'loop':<36} {'without':>10} {'with':>10} {'added/launch':>13}")
        print(f"   {'immediate list, bare C hook':<36} {float(g('cg_imm_bare_base_ir'))/ni:>10.1f} {float(g('cg_imm_bare_with_ir'))/ni:>10.1f} {f('cg_imm_bare_added_per_launch'):>13}")
        print(f"   {'immediate list, xpu-asm':<36} {float(g('cg_imm_xpu_base_ir'))/ni:>10.1f} {float(g('cg_imm_xpu_with_ir'))/ni:>10.1f} {f('cg_imm_xpu_added_per_launch'):>13}")
        print(f"   {'regular list (append+execute), xpu-asm':<36} {float(g('cg_reg_xpu_base_ir'))/nr:>10.1f} {float(g('cg_reg_xpu_with_ir'))/nr:>10.1f} {f('cg_reg_xpu_added_per_launch'):>13}")
        if "cg_cl_xpu_added_per_launch" in res:
            nc = float(g("cg_cl_enqueues"))
            print(f"   {'OpenCL clEnqueueNDRangeKernel, xpu-asm':<36} {float(g('cg_cl_xpu_base_ir'))/nc:>10.1f} {float(g('cg_cl_xpu_with_ir'))/nc:>10.1f} {f('cg_cl_xpu_added_per_launch'):>13}")
        for lab, title in (("cg_imm_xpu", "immediate"), ("cg_reg_xpu", "regular"), ("cg_cl_xpu", "OpenCL enqueue")):
            obs = sorted(((k[len(lab) + 4:], float(v)) for k, v in res.items() if k.startswith(lab + "_ob_")),
                         key=lambda kv: -abs(kv[1]))
            print(f"   {title}, added per launch by object: " + ", ".join(f"{o} {v:+.1f}" for o, v in obs))
        print(f"   profiles: {work}/callgrind/imm.profile, reg.profile (callgrind_annotate {work}/callgrind/imm.xpu-asm)")

if "tcg_launches" in res or "tcg_skipped" in res:
    print()
    print("2b. What --time costs (bench/time.sh): instructions added per immediate launch to a run without")
    print("   the interposer (callgrind, the interposer's own in brackets), by XPU_ASM_TIME policy")
    if "tcg_skipped" in res:
        print(f"   skipped: {g('tcg_skipped')}")
    else:
        own = "_ob_libxpu_asm_interposer.so"
        n = g("tcg_launches")
        print(f"   {'policy':<44} {'NEO (no timestamps)':>22} {'simulated driver':>22}")
        for v, what in (("xpu", "without --time"), ("out", "every launch sampled out (sample:0:1e9)"),
                        ("default", "the default sample (sample:10:100)"), ("all", "every launch timed (all)")):
            cells = []
            for stack in ("neo", "sim"):
                t = f"tcg_{stack}_{v}"
                cell = f"{f(t + '_added_per_launch')} [{f(t + own)}]" if t + "_added_per_launch" in res else "-"
                if t + "_sampled" in res and v != "xpu":
                    cell += f" {g(t + '_timed')}/{g(t + '_sampled')}"
                cells.append(cell)
            print(f"   {what:<44} {cells[0]:>22} {cells[1]:>22}")
        print(f"   {n} launches of 4 kernels (NEO's every launch timed: 1,000, no warm-up); after each figure")
        print("   with --time: launches timed / chosen. NEO: the immediate loop, no sync (its results never")
        print("   ready); the simulated driver: the loop synced every 100 launches, each result read there")
        if "tmem_default_rss_end_kib" in res:
            print(f"   memory, {g('tmem_default_launches')} launches of 1,000 kernels on the simulated driver (VmRSS KiB:"
                  " kernels made, a tenth, end; counts file B; CPU ns/launch):")
            for v, what in (("none", "no interposer"), ("xpu", "xpu-asm without --time"), ("default", "xpu-asm --time")):
                t = f"tmem_{v}"
                print(f"     {what:<24} {g(t + '_rss_kernels_kib'):>8} {g(t + '_rss_tenth_kib'):>8} {g(t + '_rss_end_kib'):>8}"
                      f" {g(t + '_counts_bytes', ''):>10} {f(t + '_cpu_min_ns_per_launch'):>8}"
                      + (f"  timed {g(t + '_timed')}/{g(t + '_sampled')}" if t + "_sampled" in res else ""))

if "core_own_t1_cpu_ns" in res:
    print()
    print("3. Counting core alone (interposer/benches/core.rs, no driver): CPU ns per counted launch")
    print("   (median of 7 runs; each thread launches its own kernel, whose 32-byte counter slot shares a")
    print("   cache line with its neighbours' / its own kernel in a cache line of its own / one kernel for all)")
    print(f"   {'threads':<8} {'own kernel':>11} {'own line':>9} {'one kernel':>11}")
    for t in (1, 2, 8):
        print(f"   {t:<8} {f(f'core_own_t{t}_cpu_ns', '{:.2f}'):>11} {f(f'core_spread_t{t}_cpu_ns', '{:.2f}'):>9} {f(f'core_shared_t{t}_cpu_ns', '{:.2f}'):>11}")
    print(f"   regular list: {f('core_regular_append_ns', '{:.2f}')} ns per append, "
          f"{f('core_regular_execute_ns_per_launch', '{:.2f}')} ns per launch counted at execution; "
          f"counts exact: {g('core_launch_check')}/{g('core_regular_check')}")
    print()
    print("4. Interposer memory (counting core; RSS in KiB)")
    print(f"   {'kernels':>8} {'launches':>11} {'RSS start':>10} {'+kernels':>10} {'+10% launches':>14} {'end':>8} {'growth by launches':>19} {'counts file B':>14} {'events B':>10}")
    for k in ("1000", "10000"):
        t = f"mem_k{k}"
        if t + "_rss_end_kib" not in res:
            continue
        grow = int(res[t + "_rss_end_kib"]) - int(res[t + "_rss_kernels_kib"])
        print(f"   {k:>8} {g(t+'_launches'):>11} {g(t+'_rss_start_kib'):>10} {g(t+'_rss_kernels_kib'):>10} {g(t+'_rss_tenth_kib'):>14} {g(t+'_rss_end_kib'):>8} {grow:>19} {g(t+'_counts_bytes'):>14} {g(t+'_events_bytes'):>10}")
    print("   (growth by launches = counts-file pages touched for the first time: 32 B per kernel)")

if "col_asm_files" in res or "col_skipped" in res:
    print()
    print("5. Collector: xpu-asm-run collect on a synthetic capture")
    if "col_skipped" in res:
        print(f"   skipped: {g('col_skipped')}")
    else:
        print(f"   {g('col_asm_files')} .asm files ({g('col_dump_mb')} MB of dumps), {g('col_modules')} modules, {g('col_processes')} processes")
        print(f"   {'kernels launched':<20} {'wall s':>8} {'[min-max]':>14} {'user s':>7} {'sys s':>7} {'peak RSS MiB':>13} {'matched':>8}")
        for cfg, label in (("all", "all 100%"), ("tenth", "a tenth"), ("copies", "all, every copy")):
            if f"col_{cfg}_wall_s" not in res:
                continue
            rss = float(res[f"col_{cfg}_maxrss_kib"]) / 1024
            print(f"   {label:<20} {f(f'col_{cfg}_wall_s', '{:.2f}'):>8} {f(f'col_{cfg}_wall_s_lo', '{:.2f}') + '-' + f(f'col_{cfg}_wall_s_hi', '{:.2f}'):>14} "
                  f"{f(f'col_{cfg}_user_s', '{:.2f}'):>7} {f(f'col_{cfg}_sys_s', '{:.2f}'):>7} {rss:>13.0f} {g(f'col_{cfg}_0_matched'):>8}")
        if "col_all_plain_s" in res:
            print(f"   the plain run beside each: every dump file read once by two readers (cat): "
                  f"{f('col_all_plain_s', '{:.2f}')} s; collect / plain, median of the runs' ratios: "
                  f"all {f('col_all_ratio', '{:.2f}')}, a tenth {f('col_tenth_ratio', '{:.2f}')}, "
                  f"all with every copy {f('col_copies_ratio', '{:.2f}')}")
        if "col_all_floor_s" in res:
            print(f"   the scan's system calls alone beside each (opens, fstats, reads: every .spv and launched .asm whole, "
                  f"the others' first 1 KiB; example scan_floor): all {f('col_all_floor_s', '{:.2f}')} s, "
                  f"a tenth {f('col_tenth_floor_s', '{:.2f}')} s; collect / floor: all {f('col_all_floor_ratio', '{:.2f}')}, "
                  f"a tenth {f('col_tenth_floor_ratio', '{:.2f}')}, all with every copy {f('col_copies_floor_ratio', '{:.2f}')}")
        if "col_all_0_page_mb" in res:
            print(f"   written, all launched: report.json {g('col_all_0_json_mb')} MB, report.html {g('col_all_0_page_mb')} MB "
                  f"(the 5,000 most launched kernels: --page-kernels); a tenth: {g('col_tenth_0_json_mb')} MB, {g('col_tenth_0_page_mb')} MB")
        if "analyze_ns_per_line" in res:
            print(f"   the analysis of the text alone (one thread, from memory, {int(res['analyze_files']):,} files): "
                  f"{f('analyze_ns_per_line', '{:.1f}')} ns a line, {f('analyze_mb_per_s', '{:.0f}')} MB/s")

if "mpi_to_report_s" in res or "mpi_skipped" in res:
    print()
    print("6. MPI: 32 ranks under mpirun.openmpi, one xpu-asm-run per rank (1,000 launches each)")
    if "mpi_skipped" in res:
        print(f"   skipped: {g('mpi_skipped')}")
    else:
        print(f"   from the job's end (last rank's command ended) to report.json written: "
              f"{f('mpi_to_report_s', '{:.2f}')} s [{f('mpi_to_report_s_lo', '{:.2f}')}-{f('mpi_to_report_s_hi', '{:.2f}')}];")
        print(f"   to mpirun's exit: {f('mpi_to_exit_s', '{:.2f}')} s [{f('mpi_to_exit_s_lo', '{:.2f}')}-{f('mpi_to_exit_s_hi', '{:.2f}')}]"
              f" (median [min-max]); launches counted: {g('mpi_0_launches')}")
        if "srun_to_report_s" in res:
            print(f"   under srun -n 32 (Slurm, one host): to report.json {f('srun_to_report_s', '{:.2f}')} s "
                  f"[{f('srun_to_report_s_lo', '{:.2f}')}-{f('srun_to_report_s_hi', '{:.2f}')}], to srun's exit "
                  f"{f('srun_to_exit_s', '{:.2f}')} s [{f('srun_to_exit_s_lo', '{:.2f}')}-{f('srun_to_exit_s_hi', '{:.2f}')}]; "
                  f"per rank {float(res['srun_to_exit_s']) / 32 * 1000:.0f} ms (mpirun: "
                  f"{float(res['mpi_to_exit_s']) / 32 * 1000:.0f} ms); launches counted: {g('srun_0_launches')}")
        elif "srun_skipped" in res:
            print(f"   srun: skipped: {g('srun_skipped')}")
        print(f"   collect of a 1,000-rank capture ({g('job_0_processes')} processes, {g('job_asm_files')} .asm files): "
              f"{f('job_wall_s', '{:.2f}')} s [{f('job_wall_s_lo', '{:.2f}')}-{f('job_wall_s_hi', '{:.2f}')}], "
              f"{float(res.get('job_maxrss_kib', 0)) / 1024:.0f} MiB peak")
if "onefile_first_ms" in res:
    print()
    print(f"6b. One file to copy: xpu-asm-run alone in an empty folder, `-q -- true`, {g('onefile_lib_bytes')} B interposer inside")
    print(f"   {'start':<52} {'ms':>7} {'[min-max]':>12}")
    for k, label in (("first", "first (writes its interposer into a fresh cache)"),
                     ("later", "later (checks the one written, byte for byte)"),
                     ("pair", "the pair (library beside the binary)")):
        print(f"   {label:<52} {f(f'onefile_{k}_ms', '{:.0f}'):>7} "
              f"{f(f'onefile_{k}_ms_lo', '{:.0f}') + '-' + f(f'onefile_{k}_ms_hi', '{:.0f}'):>12}")
    print(f"   first / later: {g('onefile_ratio')} (median over rounds)")
if "mod_spirv_cpu_median_ns_none" in res:
    print()
    print("7. Module creation (bench/module_loop.c): CPU time of zeModuleCreate, without and with the")
    print("   interposer in --isa binary mode (record + module binary saved, no IGC dumps). Median over")
    print("   interleaved runs of each run's median creation; the first creation writes the binary.")
    print(f"   {'module':<26} {'bytes':>9} {'none us':>10} {'xpu-asm us':>11} {'added us':>9} {'ratio':>7} {'first: added us':>16}")
    for label, title in (("native_small", "native, 4 kernels"), ("native_large", "native, 100 kernels"),
                         ("spirv", "SPIR-V, 4 kernels (JIT)")):
        k = f"mod_{label}_cpu_median_ns"
        if k + "_none" not in res:
            continue
        print(f"   {title:<26} {g(f'mod_{label}_bytes'):>9} {float(res[k + '_none']) / 1e3:>10.1f} {float(res[k + '_xpu']) / 1e3:>11.1f} "
              f"{float(res[k + '_added']) / 1e3:>+9.1f} {f(k + '_ratio', '{:.3f}'):>7} {float(res[f'mod_{label}_cpu_first_ns_added']) / 1e3:>+16.1f}")
if "mod_cg_ours_per_module" in res:
    print(f"   instructions per SPIR-V module (callgrind, deterministic): the interposer's own code "
          f"{float(res['mod_cg_ours_per_module']):,.0f}, the whole creation (NEO and IGC) "
          f"{float(res['mod_cg_total_per_module']):,.0f}: {float(res['mod_cg_share_pct']):.4f}%")
if "bin_wall_s" in res or "bin_skipped" in res:
    print()
    print("8. Collect with 10,000 launched kernels from native binaries (100 modules x 100 kernels),")
    print("   every kernel disassembled by IGA in-process")
    if "bin_skipped" in res:
        print(f"   skipped: {g('bin_skipped')}")
    else:
        print(f"   wall {f('bin_wall_s', '{:.2f}')} s [{f('bin_wall_s_lo', '{:.2f}')}-{f('bin_wall_s_hi', '{:.2f}')}], "
              f"CPU {f('bin_cpu_s', '{:.2f}')} s, peak RSS {float(res['bin_maxrss_kib']) / 1024:.0f} MiB, matched {g('bin_0_matched')}")
if "read_many_added_s" in res or "read_skipped" in res:
    print()
    print("8b. The analysis of each kernel's code (flow: IGA's decoding and the collector's liveness), added to collect")
    if "read_skipped" in res:
        print(f"   skipped: {g('read_skipped')}")
    else:
        print(f"   10,000 launched kernels, 100 distinct codes: collect {f('read_many_off_s', '{:.2f}')} s without, "
              f"{f('read_many_on_s', '{:.2f}')} s with: {f('read_many_added_s', '{:+.2f}')} s ({g('read_many_flows')} kernels analysed)")
        print(f"   100 kernels, 100 distinct codes: {f('read_one_added_s', '{:+.2f}')} s, "
              f"{f('read_per_code_ms', '{:.1f}')} ms per distinct code; 10,000 distinct codes would add ~{f('read_distinct_10000_s', '{:.0f}')} s")
if "sycl_plain_wall_s" in res or "sycl_skipped" in res:
    print()
    print("9. The real SYCL workload (tests/sycl/ops.py 20: dpctl, 6 kernels), interleaved runs")
    if "sycl_skipped" in res:
        print(f"   skipped: {g('sycl_skipped')}")
    else:
        print(f"   {'run':<26} {'wall s':>7} {'[quartiles]':>12} {'ratio':>7} {'CPU s':>7} {'CPU x':>6} {'IGC dumps':>10} {'binaries':>9} {'matched':>8}")
        for v, title in (("plain", "plain (no xpu-asm)"), ("default", "xpu-asm-run (dumps)"),
                         ("full", "  IGC_ShaderDumpEnable=1"), ("binary", "xpu-asm-run --isa binary")):
            if f"sycl_{v}_wall_s" not in res:
                continue
            dump = f"{float(res[f'sycl_{v}_dump_bytes']) / 1e6:.1f} MB" if f"sycl_{v}_dump_bytes" in res else "-"
            mods = f"{float(res[f'sycl_{v}_modules_bytes']) / 1e3:.0f} KB" if f"sycl_{v}_modules_bytes" in res else "-"
            quart = f"{f(f'sycl_{v}_wall_s_q1', '{:.2f}')}-{f(f'sycl_{v}_wall_s_q3', '{:.2f}')}"
            ratio = f(f"sycl_{v}_ratio", "{:.3f}") if v != "plain" else ""
            cpu = f(f"sycl_{v}_cpu_ratio", "{:.3f}") if v != "plain" else ""
            print(f"   {title:<26} {f(f'sycl_{v}_wall_s', '{:.2f}'):>7} {quart:>12} {ratio:>7} "
                  f"{f(f'sycl_{v}_cpu_s', '{:.2f}'):>7} {cpu:>6} {dump:>10} {mods:>9} {g(f'sycl_{v}_matched', ''):>8}")
if "ssid_plain_wall_s" in res or "ssid_skipped" in res:
    print()
    print("10. The sid stack's SYCL workload (inside the sid root: NEO 26, IGC 2; tests/sycl/dpnp_ops.py on")
    print("    bmg, SYCL's v2 adapter), paired rounds: ratios are medians of each round's ratio to its plain run")
    if "ssid_skipped" in res:
        print(f"   skipped: {g('ssid_skipped')}")
    else:
        print(f"   {'run':<26} {'wall s':>7} {'ratio':>7} {'[quartiles]':>13} {'CPU s':>7} {'CPU ratio':>9} {'IGC dumps':>10} {'files':>6} {'matched':>8}")
        for v, title in (("plain", "plain (no xpu-asm)"), ("default", "xpu-asm-run (default)"),
                         ("binary", "xpu-asm-run --isa binary"), ("dump", "xpu-asm-run --isa dump")):
            if f"ssid_{v}_wall_s" not in res:
                continue
            dump = f"{float(res[f'ssid_{v}_dump_bytes']) / 1e6:.2f} MB" if f"ssid_{v}_dump_bytes" in res else "-"
            files = f"{float(res[f'ssid_{v}_dump_files']):.0f}" if f"ssid_{v}_dump_files" in res else "-"
            ratio = f(f"ssid_{v}_ratio", "{:.3f}") if v != "plain" else ""
            quart = f"{f(f'ssid_{v}_ratio_q1', '{:.2f}')}-{f(f'ssid_{v}_ratio_q3', '{:.2f}')}" if v != "plain" else ""
            cratio = f(f"ssid_{v}_cpu_ratio", "{:.3f}") if v != "plain" else ""
            print(f"   {title:<26} {f(f'ssid_{v}_wall_s', '{:.2f}'):>7} {ratio:>7} {quart:>13} "
                  f"{f(f'ssid_{v}_cpu_s', '{:.2f}'):>7} {cratio:>9} {dump:>10} {files:>6} {g(f'ssid_{v}_matched', ''):>8}")
if "cgsid_imm_xpu_added_per_launch" in res or "cgsid_skipped" in res:
    print()
    print("11. The sid stack's launch path (callgrind inside the sid root, loader 1.32, NEO 26)")
    if "cgsid_skipped" in res:
        print(f"   skipped: {g('cgsid_skipped')}")
    else:
        print(f"   instructions added per launch: immediate list {f('cgsid_imm_xpu_added_per_launch')}, "
              f"regular list {f('cgsid_reg_xpu_added_per_launch')}")

if "page_write_s" in res:
    print()
    print(f"12. The page to browse (report.html) of {g('page_kernels')} launched kernels "
          f"({float(res['page_isa_bytes']) / 1e6:.1f} MB of ISA text)")
    print(f"   written alone {f('page_write_s', '{:.2f}')} s [{f('page_write_s_lo', '{:.2f}')}-{f('page_write_s_hi', '{:.2f}')}], "
          f"{float(res['page_bytes']) / 1e6:.1f} MB; the collection that writes it {f('page_collect_wall_s', '{:.2f}')} s")
    if "page_ready_ms" in res:
        print(f"   headless Chromium: table built {f('page_ready_ms', '{:.0f}')} ms [{f('page_ready_ms_lo', '{:.0f}')}-{f('page_ready_ms_hi', '{:.0f}')}], "
              f"page loaded {f('page_loaded_ms', '{:.0f}')} ms [{f('page_loaded_ms_lo', '{:.0f}')}-{f('page_loaded_ms_hi', '{:.0f}')}], "
              f"rows {g('page_0_rows')}, console errors {g('page_0_errors')}")
    else:
        print(f"   headless Chromium: skipped: {g('page_load_skipped')}")

print()
print("Targets")
def verdict_noisy(name, key, limit, unit):
    # A median over noisy paired differences: decided only when the
    # quartiles agree.
    try:
        v, lo, hi = (float(res[key + s]) for s in ("", "_q1", "_q3"))
    except (KeyError, ValueError):
        verdicts.append(f"  {name:<52} {'-':>10}   target <= {limit:g} {unit}   NOT MEASURED")
        return
    state = "MET" if hi <= limit else "MISSED" if lo > limit else ("MET?" if v <= limit else "MISSED?") + " (quartiles straddle the target: noise)"
    verdicts.append(f"  {name:<52} {v:>10.1f}   target <= {limit:g} {unit}   {state}   [quartiles {lo:+.1f}, {hi:+.1f}]")
if "hook_xpu-asm_overhead" in res:
    verdict("ns added per launch (hook path alone, precise)", res["hook_xpu-asm_overhead"], 20, "ns")
if "launch_imm_xpu-asm_cpu_min_overhead" in res:
    verdict_noisy("ns added per launch (immediate list, CPU time)", "launch_imm_xpu-asm_cpu_min_overhead", 20, "ns")
    verdict_noisy("ns added per launch (regular list, CPU time)", "launch_reg_xpu-asm_cpu_min_overhead", 20, "ns")
if "cg_imm_xpu_added_per_launch" in res:
    # The interposer's own instructions (other objects move by a few with
    # the heap's layout from one build to the next).
    own = "_ob_libxpu_asm_interposer.so"
    verdict("debian12: the interposer's instructions per immediate launch", res.get("cg_imm_xpu" + own, res["cg_imm_xpu_added_per_launch"]), 70, "instr")
    verdict("debian12: the interposer's instructions per regular-list launch", res.get("cg_reg_xpu" + own, res["cg_reg_xpu_added_per_launch"]), 15, "instr")
    if "cg_cl_xpu" + own in res:
        verdict("debian12: the interposer's instructions per OpenCL enqueue", res["cg_cl_xpu" + own], 60, "instr")
if "mod_cg_share_pct" in res:
    verdict("SPIR-V module creation: instructions added (%)", res["mod_cg_share_pct"], 2, "%")
if "bin_wall_s" in res:
    verdict("collect 10,000 kernels from native binaries (s)", res["bin_wall_s"], 10, "s")
    verdict("  its peak memory (MiB)", float(res["bin_maxrss_kib"]) / 1024, 500, "MiB")
if "read_many_added_s" in res:
    verdict("analysis of 10,000 kernels' code, added to collect (s)", res["read_many_added_s"], 5, "s")
    verdict("  10,000 distinct codes, from 100 (s, extrapolated)", res.get("read_distinct_10000_s"), 5, "s")
if "sycl_binary_ratio" in res:
    verdict("SYCL workload, --isa binary / plain (wall ratio)", res["sycl_binary_ratio"], 1.05, "x")
if "sycl_default_ratio" in res:
    verdict("debian12: SYCL workload, default / plain (wall ratio)", res["sycl_default_ratio"], 1.10, "x")
if "ssid_default_ratio" in res:
    verdict("sid: SYCL workload, default / plain (wall ratio)", res["ssid_default_ratio"], 1.10, "x")
if "ssid_binary_ratio" in res:
    verdict("sid: SYCL workload, --isa binary / plain (wall ratio)", res["ssid_binary_ratio"], 1.05, "x")
if "cgsid_imm_xpu_added_per_launch" in res:
    verdict("sid: instructions added per launch (immediate list)", res["cgsid_imm_xpu_added_per_launch"], 80, "instr")
    verdict("sid: instructions added per launch (regular list)", res["cgsid_reg_xpu_added_per_launch"], 80, "instr")
if "mem_k10000_rss_end_kib" in res:
    grow = int(res["mem_k10000_rss_end_kib"]) - int(res["mem_k10000_rss_kernels_kib"])
    ml = int(res["mem_k10000_launches"]) // 1_000_000
    verdicts.append(f"  {f'memory O(kernels): RSS growth over {ml}M launches (KiB)':<52} {grow:>10}   "
                    f"counts file {res['mem_k10000_counts_bytes']} B   "
                    f"{'MET' if grow <= 10000 * 32 // 1024 + 64 else 'MISSED'}")
if "tmem_default_rss_end_kib" in res:
    grow = int(res["tmem_default_rss_end_kib"]) - int(res["tmem_default_rss_tenth_kib"])
    ml = int(res["tmem_default_launches"]) * 9 // 10
    verdicts.append(f"  {f'--time: RSS growth over the last {ml:,} launches (KiB)':<52} {grow:>10}   "
                    f"target nothing per launch (<= 256 KiB)   {'MET' if grow <= 256 else 'MISSED'}")
nasm = f"{int(res.get('col_asm_files', '0')):,}"
if "col_all_wall_s" in res:
    verdict(f"collect {nasm} .asm files, all launched (s)", res["col_all_wall_s"], 3, "s")
if "col_tenth_wall_s" in res:
    verdict(f"collect {nasm} .asm files, a tenth launched (s)", res["col_tenth_wall_s"], 1, "s")
if "job_wall_s" in res:
    verdict("collect a 1,000-rank capture (s)", res["job_wall_s"], 3, "s")
if "page_write_s" in res:
    verdict("report.html of 1,000 kernels written (s)", res["page_write_s"], 2, "s")
if "page_loaded_ms" in res:
    verdict("report.html of 1,000 kernels loaded in Chromium (s)", float(res["page_loaded_ms"]) / 1000, 2, "s")
r128 = "ranks_xpu-asm_128_"
if r128 + "files" in res:
    verdict("capture at 128 ranks but the per-rank records and report, vs 1 rank (x)",
            (int(res[r128 + "bytes"]) - int(res[r128 + "rank_bytes"]) - int(res.get(r128 + "report_bytes", 0)))
            / max(1, int(res["ranks_xpu-asm_1_bytes"]) - int(res["ranks_xpu-asm_1_rank_bytes"]) - int(res.get("ranks_xpu-asm_1_report_bytes", 0))),
            1.10, "x")
    verdict("collect at 128 ranks vs 1 rank (x)",
            float(res[r128 + "collect_s"]) / float(res["ranks_xpu-asm_1_collect_s"]), 2, "x")
print("\n".join(verdicts) if verdicts else "  (no section run)")
print()
