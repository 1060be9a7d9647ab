#!/usr/bin/env bash
# Benchmarks xpu-asm on this machine's real Level Zero stack (NEO in its
# no-hardware mode, see docs/real-stack.md) and prints a summary table.
#
#   scripts/bench.sh [--quick] [--only SECTIONS] [--keep]
#
#   --quick        fewer runs and launches (a smoke test, ~1.5 minutes)
#   --only LIST    comma-separated subset of:
#                  launch,callgrind,core,collector,mpi,onefile,modules,binaries,reading,
#                  sycl,page,sycl-sid,callgrind-sid,port
#   --keep         keep the work folder (printed at the start)
#
# Sections:
#   launch     bench/launch_loop.c with no hook, a bare C hook that counts
#              launches, the loader's tracing layer, and the xpu-asm
#              interposer; interleaved runs; ns per launch, overhead, ratio.
#              Then the same hooks on bench/hook_loop.c over do-nothing
#              stand-ins of the loader and driver (bench/fake_ze.c): the
#              hook's own time, without the driver's run-to-run noise
#   callgrind  instructions per launch (and per OpenCL enqueue, bench/enqueue_loop.c) inside the measured loop (callgrind
#              --toggle-collect), with and without the interposer, and a
#              profile of what the interposer adds
#   core       interposer/benches/core.rs: the counting core alone on 1, 2
#              and 8 threads; memory after 10 million launches over 10,000
#              kernels
#   collector  `xpu-asm-run collect` on a synthetic capture of 100,000 .asm
#              files (1,000 modules, 10 processes), all launched, a tenth,
#              and all with a copy of each under asm/ (--asm-copies all; the
#              default copies 10,000): time and peak memory
#              (launched kernels' .asm files are read whole, for their
#              source lines and instruction mix), each run beside a plain
#              run (every dump file read once by two readers) and as a
#              ratio to it, beside the scan's system calls alone (the
#              example scan_floor: the floor of each configuration) and as
#              a ratio to them, and that analysis of the text alone (the
#              example analyze_speed: one thread, from memory)
#   mpi        32 ranks under Open MPI's mpirun, one xpu-asm-run per rank
#              (the C workload of tests/, 1,000 launches each): the time from
#              the job's end (the last rank's command ended) to report.json
#              written, and to mpirun's exit; the same under Slurm's srun, on
#              a one-host cluster of scripts/slurm-cluster.sh (started and
#              stopped here); then `collect` on a synthetic
#              capture of a 1,000-rank job (125 hosts, 100 kernels launched
#              by every rank, 100,000 .asm files)
#   ranks      one job at 1, 8, 32 and 128 ranks on this host (MPICH's
#              mpiexec.hydra, one xpu-asm-run --emulate pvc per rank, the C
#              workload): files and bytes in the capture (the per-rank
#              records, the report, the rest) and `collect` time, each
#              against the 1-rank job (bench/ranks.py)
#   onefile    xpu-asm-run copied alone into an empty folder, `-q -- true`:
#              its first start (it writes the interposer it carries into a
#              fresh cache) against later starts (it checks the one written)
#              and against the release pair (the library beside it);
#              interleaved, median of N, ratio
#   modules    bench/module_loop.c: zeModuleCreate of a small and a large
#              native module and of a SPIR-V module, without and with the
#              interposer in `--isa binary` mode (module recording and the
#              binary saved, no IGC dumps): CPU time added per module, and
#              for the first creation (the one that writes the binary)
#   binaries   `xpu-asm-run collect` of 10,000 launched kernels whose ISA
#              all comes from native module binaries (100 modules of 100
#              kernels, bench/gen_native_capture.py): IGA's disassembly of
#              every kernel, time and peak memory
#   reading    the analysis of each kernel's code (`flow`: IGA's decoding of it,
#              and the collector's own liveness over its operands: blocks,
#              loops, live GRF): `collect` of the capture of
#              `binaries` (10,000 launched kernels, 100 distinct codes) with
#              and without it (XPU_ASM_NO_FLOW=1), interleaved: the time it
#              adds; then the same on one module of 100 kernels (100
#              distinct codes): the time per distinct kernel code, and what
#              10,000 distinct codes would add
#   sycl       the real SYCL workload (tests/sycl/ops.py in the venv of
#              scripts/sycl-venv.sh, created if missing: 1.4 GB) run plain,
#              under xpu-asm-run (default: IGC 1's light dumps), with IGC's
#              full dumps (IGC_ShaderDumpEnable=1, the default before), and
#              with --isa binary,
#              interleaved: wall and CPU time, IGC dump bytes; each as the
#              median of its per-round ratios to the plain run of that round
#   sycl-sid   the same on the other stack, inside the Debian sid root
#              (scripts/sid-root.sh: NEO 26, IGC 2): tests/sycl/dpnp_ops.py in
#              the venv of scripts/sycl2026-venv.sh, on bmg (SYCL's v2
#              adapter, behind tests/shim/ze_resident.c, as tests/src/sycl2026.rs
#              runs it); skipped when there is no root or venv
#   callgrind-sid  the callgrind section's instruction counts on that stack:
#              launch_loop built inside the root, run under this host's
#              valgrind (its tools bind-mounted in)
#   page       the page to browse (report.html) of a synthetic capture of
#              1,000 launched kernels (bench/gen_capture.py, 200-line bodies):
#              its writing alone (the example page_write: ISA read and
#              compressed, the page assembled and written), its size, the
#              collection that writes it; then its load in Debian's headless
#              Chromium (tests/browser/check.mjs): the table built, the page
#              loaded (every ISA element parsed), and a kernel opened
#   port       bench/port.sh inside the sid root: 1,000 launched kernels
#              (five modules of 200) captured on pvc, then `xpu-asm-run
#              port` to bmg, lnl and ptl: wall time and time per kernel per
#              product
#
# A full run takes about 10 minutes on 2 cores (the sections of module
# binaries about 5 of them, the first time ~1 more to build a 100-kernel
# native module), of which ~15 s generate the
# synthetic capture (2.4 GB; reused on later runs in the same work folder).
#
# Needs: the stack of scripts/install-deps.sh, valgrind for callgrind
# (scripts/install-deps.sh --bench), gcc, python3, GNU time (/usr/bin/time).
# Environment: XPU_ASM_BENCH_DIR (work folder; default a new /tmp folder;
# the synthetic capture, ~2.3 GB, is reused from there when present),
# XPU_ASM_BENCH_ROUNDS (interleaved rounds of the launch section),
# XPU_ASM_BENCH_SID_ROOT_SH (the sid-root.sh that enters the root, default
# this checkout's: another checkout's when it made the root with other
# packages).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUICK=0
ONLY="launch,callgrind,core,collector,mpi,ranks,onefile,modules,binaries,reading,sycl,page,sycl-sid,callgrind-sid,port"
KEEP=0
while [[ $# -gt 0 ]]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --only)
        ONLY="$2"
        shift
        ;;
    --keep) KEEP=1 ;;
    -h | --help)
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
        ;;
    *)
        echo "bench.sh: unknown argument '$1' (see --help)" >&2
        exit 2
        ;;
    esac
    shift
done
want() { [[ ",$ONLY," == *",$1,"* ]]; }
for s in ${ONLY//,/ }; do
    case "$s" in
    launch | callgrind | core | collector | mpi | ranks | onefile | modules | binaries | reading | sycl | page | sycl-sid | callgrind-sid | port) ;;
    *)
        echo "bench.sh: unknown section '$s' (launch, callgrind, core, collector, mpi, ranks, onefile, modules, binaries, reading, sycl, page, sycl-sid, callgrind-sid, port)" >&2
        exit 2
        ;;
    esac
done
START=$(date +%s)

if [[ -n "${XPU_ASM_BENCH_DIR:-}" ]]; then
    WORK="$XPU_ASM_BENCH_DIR"
    mkdir -p "$WORK"
    KEEP=1
else
    WORK=$(mktemp -d /tmp/xpu-asm-bench.XXXXXX)
fi
SLURM_DIR=""
cleanup() {
    # The mpi section's Slurm cluster is stopped however the run ends.
    [[ -z "$SLURM_DIR" ]] || bash "$ROOT/scripts/slurm-cluster.sh" stop "$SLURM_DIR" || true
    [[ $KEEP == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT
RESULTS="$WORK/results.txt"
: >"$RESULTS"
result() { echo "$1=$2" >>"$RESULTS"; }
log() { echo "bench: $*" >&2; }

# NEO without GPU hardware (docs/real-stack.md), the same for a plain run
# and a capture. For Level Zero, NEO 22.43's sub-capture mode writes no AUB
# stream at all, where `--emulate` (collector/src/run/launch.rs,
# EMULATE_ENV) writes it to /dev/null for OpenCL's sake (its sub-capture
# mode makes every OpenCL enqueue blocking) at about 0.3 ms a launch; the
# OpenCL loop below takes --emulate's keys.
export NEOReadDebugKeys=1 SetCommandStreamReceiver=1 ProductFamilyOverride=pvc \
    HardwareInfoOverride=1x4x8 AUBDumpSubCaptureMode=1 \
    AUBDumpFilterKernelStartIdx=999999999 AUBDumpFilterKernelEndIdx=999999999 \
    UseAubStream=0 UseExternalAllocatorForSshAndDsh=0

if [[ $QUICK == 1 ]]; then
    ROUNDS=${XPU_ASM_BENCH_ROUNDS:-3}
    IMM=200000
    REG="reg=1000x200 reps=3"
    CG_LAUNCHES=5000
    COLLECT_RUNS=1
    MOD_RUNS=3
    SYCL_ROUNDS=3
    GEN_ARGS=(--processes 10 --modules 10 --kernels 100)
    MPI_RUNS=1
    ONEFILE_RUNS=5
    JOB_ARGS=(--processes 1000 --modules 1 --kernels 10 --job 8)
else
    ROUNDS=${XPU_ASM_BENCH_ROUNDS:-31}
    IMM=200000
    REG="reg=1000x200 reps=5"
    CG_LAUNCHES=20000
    COLLECT_RUNS=3
    MOD_RUNS=7
    SYCL_ROUNDS=15
    GEN_ARGS=(--processes 10 --modules 100 --kernels 100)
    MPI_RUNS=5
    ONEFILE_RUNS=21
    JOB_ARGS=(--processes 1000 --modules 4 --kernels 25 --job 8)
fi

# ---- machine and build ---------------------------------------------------

CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
pkgver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "?"; }
log "work folder: $WORK"
log "building (cargo build --release --workspace)"
(cd "$ROOT" && cargo build --release --workspace --quiet)
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
INTERPOSER="$TARGET/release/libxpu_asm_interposer.so"
RUNNER="$TARGET/release/xpu-asm-run"
[[ -f "$INTERPOSER" ]] || {
    echo "bench.sh: no $INTERPOSER after the build" >&2
    exit 1
}

BIN="$WORK/bin"
mkdir -p "$BIN"
gcc -O2 -g -Wall -Wextra -o "$BIN/launch_loop" "$ROOT/bench/launch_loop.c" -lze_loader
gcc -O2 -g -Wall -Wextra -o "$BIN/enqueue_loop" "$ROOT/bench/enqueue_loop.c" -l:libOpenCL.so.1
gcc -O2 -g -Wall -Wextra -shared -fPIC -o "$BIN/libbare_hook.so" "$ROOT/bench/bare_hook.c" -ldl
gcc -O2 -g -Wall -Wextra -shared -fPIC -DFAKE_DRIVER -o "$BIN/libfake_ze_driver.so" "$ROOT/bench/fake_ze.c"
gcc -O2 -g -Wall -Wextra -shared -fPIC -o "$BIN/libfake_ze.so" "$ROOT/bench/fake_ze.c" -ldl
gcc -O2 -g -Wall -Wextra -o "$BIN/hook_loop" "$ROOT/bench/hook_loop.c" -L"$BIN" -lfake_ze \
    -Wl,-rpath,"$BIN"
export FAKE_ZE_DRIVER="$BIN/libfake_ze_driver.so"
if [[ ! -f "$BIN/kernels.spv" ]]; then
    (cd "$BIN" && ocloc compile -file "$ROOT/bench/kernels.cl" -spv_only -device pvc \
        -output kernels -output_no_suffix -q >/dev/null)
fi
SPV="$BIN/kernels.spv"

# Runs launch_loop under variant $1 with the remaining arguments.
run_variant() {
    local v=$1
    shift
    case "$v" in
    none) "$BIN/launch_loop" "$SPV" "$@" ;;
    bare) LD_PRELOAD="$BIN/libbare_hook.so" "$BIN/launch_loop" "$SPV" "$@" ;;
    tracing) ZE_ENABLE_TRACING_LAYER=1 "$BIN/launch_loop" "$SPV" "$@" ;;
    xpu-asm)
        rm -rf "$WORK/xpu-out"
        XPU_ASM_OUT="$WORK/xpu-out" LD_PRELOAD="$INTERPOSER" "$BIN/launch_loop" "$SPV" "$@"
        ;;
    esac
}

# ---- launch: wall time per launch ------------------------------------------

if want launch; then
    VARIANTS=(none bare tracing xpu-asm)
    RAW="$WORK/launch-raw.txt"
    : >"$RAW"
    log "launch: $ROUNDS interleaved rounds of ${VARIANTS[*]} (imm=$IMM, $REG)"
    for ((r = 0; r < ROUNDS; r++)); do
        # Rotate the order each round, so no variant always runs first.
        for ((i = 0; i < ${#VARIANTS[@]}; i++)); do
            v=${VARIANTS[$(((i + r) % ${#VARIANTS[@]}))]}
            run_variant "$v" imm=$IMM $REG | sed "s/^/round=$r variant=$v /" >>"$RAW"
        done
    done
    # The interposer counted every launch of its last run?
    python3 - "$WORK/xpu-out" "$IMM" "$REG" >>"$RESULTS" <<'EOF'
import glob, struct, sys, re
out, imm, reg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
k, m = map(int, re.search(r"reg=(\d+)x(\d+)", reg).groups())
reps = int(re.search(r"reps=(\d+)", reg).group(1))
expected = imm + 1000 + k * m * reps  # + the warm-up launches
got = 0
for f in glob.glob(out + "/records/*.counts"):
    b = open(f, "rb").read()
    got += sum(struct.unpack_from("<Q", b, o)[0] for o in range(64 + 16, len(b), 16))
print(f"launch_count_check={'ok' if got == expected else 'MISMATCH'} ({got} counted, {expected} launched)")
EOF
    python3 - "$RAW" >>"$RESULTS" <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(dict)  # (variant, phase) -> {round: fields}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split())
    runs[(f["variant"], f["phase"])][int(f["round"])] = f
def q(v, p):
    v = sorted(v)
    i = (len(v) - 1) * p
    lo = int(i)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)
for phase in ("imm", "reg"):
    base = runs[("none", phase)]
    for variant in ("none", "bare", "tracing", "xpu-asm"):
        r = runs[(variant, phase)]
        if not r:
            continue
        for stat in ("cpu_min", "cpu_median", "min", "median"):
            key = f"{stat}_ns_per_launch"
            vals = [float(x[key]) for x in r.values()]
            tag = f"launch_{phase}_{variant}_{stat}"
            print(f"{tag}={statistics.median(vals):.2f}")
            print(f"{tag}_q1={q(vals, 0.25):.2f}")
            print(f"{tag}_q3={q(vals, 0.75):.2f}")
            print(f"{tag}_lo={min(vals):.2f}")
            print(f"{tag}_hi={max(vals):.2f}")
            if variant != "none":
                # Paired by round: each round ran every variant back to back.
                diffs = [float(x[key]) - float(base[rd][key]) for rd, x in r.items() if rd in base]
                ratios = [float(x[key]) / float(base[rd][key]) for rd, x in r.items() if rd in base]
                print(f"{tag}_overhead={statistics.median(diffs):.2f}")
                print(f"{tag}_overhead_q1={q(diffs, 0.25):.2f}")
                print(f"{tag}_overhead_q3={q(diffs, 0.75):.2f}")
                print(f"{tag}_ratio={statistics.median(ratios):.4f}")
        print(f"launch_{phase}_{variant}_runs={len(r)}")
        print(f"launch_{phase}_launches={next(iter(r.values()))['launches']}")
EOF
fi

# ---- hook path: the same hooks over a do-nothing loader and driver -----------

if want launch; then
    RAW="$WORK/hookpath-raw.txt"
    : >"$RAW"
    HP_ROUNDS=$(((ROUNDS + 2) / 3))
    log "hook path: $HP_ROUNDS interleaved rounds of none bare xpu-asm (bench/hook_loop.c)"
    for ((r = 0; r < HP_ROUNDS; r++)); do
        for v in none bare xpu-asm; do
            case "$v" in
            none) line=$("$BIN/hook_loop") ;;
            bare) line=$(LD_PRELOAD="$BIN/libbare_hook.so" "$BIN/hook_loop") ;;
            xpu-asm)
                rm -rf "$WORK/xpu-out"
                line=$(XPU_ASM_OUT="$WORK/xpu-out" LD_PRELOAD="$INTERPOSER" "$BIN/hook_loop")
                ;;
            esac
            echo "round=$r variant=$v $line" >>"$RAW"
        done
    done
    python3 - "$RAW" >>"$RESULTS" <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split())
    runs[f["variant"]][int(f["round"])] = float(f["min_ns_per_launch"])
for v in ("none", "bare", "xpu-asm"):
    vals = list(runs[v].values())
    print(f"hook_{v}_ns={statistics.median(vals):.2f}")
    print(f"hook_{v}_ns_lo={min(vals):.2f}")
    print(f"hook_{v}_ns_hi={max(vals):.2f}")
    if v != "none":
        d = [x - runs["none"][r] for r, x in runs[v].items()]
        print(f"hook_{v}_overhead={statistics.median(d):.2f}")
        print(f"hook_{v}_overhead_lo={min(d):.2f}")
        print(f"hook_{v}_overhead_hi={max(d):.2f}")
print(f"hook_rounds={len(runs['none'])}")
EOF
fi

# ---- callgrind: instructions per launch ------------------------------------

if want callgrind; then
    if ! command -v valgrind >/dev/null 2>&1; then
        log "callgrind: valgrind not found; install it with scripts/install-deps.sh --bench"
        result cg_skipped "valgrind not installed (scripts/install-deps.sh --bench)"
    else
        CGD="$WORK/callgrind"
        mkdir -p "$CGD"
        N=$CG_LAUNCHES
        REGK=1000
        REGM=$((N / REGK))
        log "callgrind: immediate ($N launches) and regular ($REGK x $REGM) loops, 5 runs"
        cg() { # variant phase-args out-file loop-function
            local v=$1 args=$2 outf=$3 fn=$4
            case "$v" in
            none) valgrind --tool=callgrind --dump-instr=yes --toggle-collect="$fn" \
                --callgrind-out-file="$outf" "$BIN/launch_loop" "$SPV" $args chunks=1 reps=1 ;;
            bare) LD_PRELOAD="$BIN/libbare_hook.so" valgrind --tool=callgrind --dump-instr=yes \
                --toggle-collect="$fn" --callgrind-out-file="$outf" "$BIN/launch_loop" "$SPV" $args chunks=1 reps=1 ;;
            xpu-asm)
                rm -rf "$WORK/xpu-out"
                # valgrind (a shell script, then its launcher) runs with the
                # interposer preloaded too: it only reads its configuration
                # there, and records nothing (no Level Zero in them).
                XPU_ASM_OUT="$WORK/xpu-out" LD_PRELOAD="$INTERPOSER" valgrind --tool=callgrind \
                    --dump-instr=yes --toggle-collect="$fn" --callgrind-out-file="$outf" \
                    "$BIN/launch_loop" "$SPV" $args chunks=1 reps=1
                ;;
            esac
        }
        for v in none bare xpu-asm; do
            cg "$v" "imm=$N" "$CGD/imm.$v" bench_immediate_loop >/dev/null 2>"$CGD/imm.$v.log"
        done
        for v in none xpu-asm; do
            cg "$v" "reg=${REGK}x$REGM" "$CGD/reg.$v" bench_regular_loop >/dev/null 2>"$CGD/reg.$v.log"
        done
        S="$ROOT/bench/callgrind_summary.py"
        python3 "$S" "$CGD/imm.none" "$CGD/imm.bare" --launches "$N" --label cg_imm_bare --quiet |
            sed 's/^RESULT //' >>"$RESULTS"
        python3 "$S" "$CGD/imm.none" "$CGD/imm.xpu-asm" --launches "$N" --label cg_imm_xpu \
            >"$CGD/imm.profile"
        python3 "$S" "$CGD/reg.none" "$CGD/reg.xpu-asm" --launches "$((REGK * REGM))" \
            --label cg_reg_xpu >"$CGD/reg.profile"
        grep '^RESULT ' "$CGD/imm.profile" "$CGD/reg.profile" | sed 's/^[^:]*:RESULT //' >>"$RESULTS"
        result cg_imm_launches "$N"
        result cg_reg_launches "$((REGK * REGM))"
        # OpenCL: N clEnqueueNDRangeKernel through the system's ICD loader
        # (bench/enqueue_loop.c), with --emulate's keys for OpenCL (NEO's
        # sub-capture mode would make each enqueue blocking).
        log "callgrind: OpenCL enqueue loop ($N enqueues)"
        clg() { # out-file, then the preload's variables if any
            local outf=$1
            shift
            env -u AUBDumpSubCaptureMode -u AUBDumpFilterKernelStartIdx -u AUBDumpFilterKernelEndIdx \
                AUBDumpCaptureFileName=/dev/null EnableTimestampWaitForQueues=0 "$@" \
                valgrind --tool=callgrind --dump-instr=yes --toggle-collect=bench_enqueue_loop \
                --callgrind-out-file="$outf" "$BIN/enqueue_loop" "$ROOT/bench/kernels.cl" n="$N"
        }
        clg "$CGD/cl.none" >/dev/null 2>"$CGD/cl.none.log"
        rm -rf "$WORK/xpu-out"
        clg "$CGD/cl.xpu-asm" XPU_ASM_OUT="$WORK/xpu-out" LD_PRELOAD="$INTERPOSER" \
            >/dev/null 2>"$CGD/cl.xpu-asm.log"
        python3 "$S" "$CGD/cl.none" "$CGD/cl.xpu-asm" --launches "$N" --label cg_cl_xpu \
            >"$CGD/cl.profile"
        grep '^RESULT ' "$CGD/cl.profile" | sed 's/^RESULT //' >>"$RESULTS"
        result cg_cl_enqueues "$N"
    fi
fi

# ---- core: the counting core alone -------------------------------------------

if want core; then
    log "core: cargo bench -p xpu-asm-interposer --bench core"
    qa=()
    [[ $QUICK == 1 ]] && qa=(--quick)
    (cd "$ROOT" && cargo bench --quiet -p xpu-asm-interposer --bench core -- "${qa[@]}") \
        >"$WORK/core.txt"
    grep '^RESULT ' "$WORK/core.txt" | sed 's/^RESULT //' >>"$RESULTS"
fi

# ---- collector: a synthetic capture of 100,000 .asm files --------------------

if want collector; then
    if [[ ! -x "$RUNNER" ]]; then
        log "collector: no $RUNNER"
        result col_skipped "no xpu-asm-run binary"
    else
        GEN="$WORK/capture-all"
        STAMP="$GEN/.generated$(printf '_%s' "${GEN_ARGS[@]}")"
        if [[ ! -f "$STAMP" ]]; then
            rm -rf "$GEN"
            log "collector: generating the synthetic capture (${GEN_ARGS[*]})"
            python3 "$ROOT/bench/gen_capture.py" "$GEN" "${GEN_ARGS[@]}" --launched 1.0 >&2
            touch "$STAMP"
        fi
        # The same dumps, with records in which a tenth of the kernels ran.
        GEN10="$WORK/capture-tenth"
        rm -rf "$GEN10"
        python3 "$ROOT/bench/gen_capture.py" "$GEN10" "${GEN_ARGS[@]}" --launched 0.1 --no-dumps >/dev/null
        cp -al "$GEN/dumps" "$GEN10/dumps"
        result col_asm_files "$(find "$GEN/dumps" -name '*.asm' | wc -l)"
        result col_modules "$(find "$GEN/dumps" -name '*.spv' | wc -l)"
        result col_processes "$(find "$GEN/records" -name '*.events' | wc -l)"
        result col_dump_mb "$(du -sm "$GEN/dumps" | cut -f1)"
        FLOOR="$TARGET/release/examples/scan_floor"
        (cd "$ROOT" && cargo build --release --quiet -p xpu-asm-collector --example scan_floor) ||
            log "collector: the example scan_floor did not build"
        # collect prunes and writes into the folder: each run gets a fresh
        # copy (hard links, so the dump files are not rewritten).
        # `copies`: all launched, each with its copy under asm/ (the
        # default copies the 10,000 most launched).
        for cfg in all tenth copies; do
            src="$WORK/capture-$cfg"
            extra=()
            if [[ $cfg == copies ]]; then
                src="$WORK/capture-all"
                extra=(--asm-copies all)
            fi
            for ((r = 0; r < COLLECT_RUNS; r++)); do
                run="$WORK/collect-run"
                rm -rf "$run"
                cp -al "$src" "$run"
                rm -f "$run"/.generated-*
                sync
                # The plain run beside it: every dump file read once, by two
                # readers (as many as the cores collect has), on the same copy.
                /usr/bin/time -f "%e" -o "$WORK/plain.txt" sh -c \
                    'find "$1" -type f -print0 | xargs -0 -P 2 -n 5000 cat >/dev/null' sh "$run/dumps"
                result "col_${cfg}_${r}_plain_s" "$(tail -n1 "$WORK/plain.txt")"
                # The scan's system calls alone, on the collector's readers:
                # the floor of this configuration (example scan_floor).
                if [[ -x $FLOOR ]]; then
                    every=1
                    [[ $cfg == tenth ]] && every=10
                    "$FLOOR" "$run/dumps" --whole-every "$every" --rounds 1 | tr ' ' '\n' |
                        sed -n "s/^floor_s=/col_${cfg}_${r}_floor_s=/p" >>"$RESULTS"
                fi
                log "collector: collect ($cfg launched, run $((r + 1))/$COLLECT_RUNS)"
                /usr/bin/time -v -o "$WORK/time.txt" "$RUNNER" collect --quiet "${extra[@]}" "$run" ||
                    log "collector: xpu-asm-run collect failed (status $?)"
                python3 - "$WORK/time.txt" "$run/report.json" "$cfg" "$r" >>"$RESULTS" <<'EOF'
import json, sys
t = {}
for line in open(sys.argv[1]):
    if ":" in line:
        k, v = line.rsplit(":", 1) if "Elapsed" not in line else line.split("): ", 1)
        t[k.strip()] = v.strip()
el = t.get("Elapsed (wall clock) time (h:mm:ss or m:ss", "0:0")
secs = 0.0
for part in el.split(":"):
    secs = secs * 60 + float(part)
cfg, r = sys.argv[3], sys.argv[4]
print(f"col_{cfg}_{r}_wall_s={secs:.2f}")
print(f"col_{cfg}_{r}_user_s={t.get('User time (seconds)', '?')}")
print(f"col_{cfg}_{r}_sys_s={t.get('System time (seconds)', '?')}")
print(f"col_{cfg}_{r}_maxrss_kib={t.get('Maximum resident set size (kbytes)', '?')}")
import os
for name, key in (("report.json", "json_mb"), ("report.html", "page_mb")):
    path = os.path.join(os.path.dirname(sys.argv[2]), name)
    if os.path.exists(path):
        print(f"col_{cfg}_{r}_{key}={os.path.getsize(path) / 1e6:.1f}")
try:
    tot = json.load(open(sys.argv[2]))["totals"]
    print(f"col_{cfg}_{r}_matched={tot['matched']}")
    print(f"col_{cfg}_{r}_kernels={tot['kernels']}")
except Exception as e:
    print(f"col_{cfg}_{r}_matched=? ({e})")
EOF
            done
            python3 - "$RESULTS" "$cfg" >>"$RESULTS" <<'EOF'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
cfg = sys.argv[2]
for base, name in (("plain_s", "ratio"), ("floor_s", "floor_ratio")):
    ratios = []
    for key, v in res.items():
        if key.startswith(f"col_{cfg}_") and key.endswith("_" + base) and key.count("_") == 4:
            wall = res.get(key[: -len(base)] + "wall_s", "")
            try:
                ratios.append(float(wall) / float(v))
            except (ValueError, ZeroDivisionError):
                pass
    if ratios:
        print(f"col_{cfg}_{name}={statistics.median(ratios):.2f}")
for k in ("wall_s", "maxrss_kib", "user_s", "sys_s", "plain_s", "floor_s"):
    vals = [float(v) for key, v in res.items()
            if key.startswith(f"col_{cfg}_") and key.endswith("_" + k) and v.replace(".", "").isdigit()]
    if vals:
        print(f"col_{cfg}_{k}={statistics.median(vals):g}")
        print(f"col_{cfg}_{k}_lo={min(vals):g}")
        print(f"col_{cfg}_{k}_hi={max(vals):g}")
EOF
        done
        rm -rf "$WORK/collect-run"
        # The scan's analysis of the text alone: one thread, from memory.
        if (cd "$ROOT" && cargo build --release --quiet -p xpu-asm-collector --example analyze_speed); then
            folder=$(find "$GEN/dumps" -mindepth 1 -maxdepth 1 -type d | sort | head -n1)
            "$TARGET/release/examples/analyze_speed" "$folder" --rounds 7 | tr ' ' '\n' >>"$RESULTS"
        else
            log "collector: the example analyze_speed did not build"
        fi
    fi
fi

# The end of a 32-rank job under Slurm's srun: from the last rank's command's
# end to report.json, and to srun's exit (as for mpirun below), on a
# one-host cluster started here and stopped by cleanup.
srun_runs() {
    local r
    if ! command -v srun >/dev/null || ! command -v slurmctld >/dev/null; then
        log "mpi: no Slurm (scripts/install-deps.sh installs slurmctld, slurmd, slurm-client, munge)"
        result srun_skipped "no Slurm"
        return
    fi
    SLURM_DIR=$(bash "$ROOT/scripts/slurm-cluster.sh" start $$ | tail -n1) || {
        log "mpi: the Slurm cluster did not start"
        result srun_skipped "the one-host Slurm cluster did not start"
        SLURM_DIR=""
        return
    }
    for ((r = 0; r < MPI_RUNS; r++)); do
        rm -rf "$MPIW"
        mkdir -p "$MPIW/ends"
        log "mpi: 32 ranks under srun, one xpu-asm-run each (run $((r + 1))/$MPI_RUNS)"
        SLURM_CONF="$SLURM_DIR/slurm.conf" srun -n 32 "$RUNNER" --emulate pvc -q -o "$MPIW/cap" -- \
            sh -c "'$BIN/workload' --via ddi --module a='$BIN/kernels_a.spv' imm:a:scale:1000 >/dev/null &&
                   date +%s.%N >'$MPIW/ends/'\$SLURM_PROCID" ||
            log "mpi: srun failed (status $?)"
        date +%s.%N >"$MPIW/mpirun-end"
        python3 - "$MPIW" "$r" >>"$RESULTS" <<'EOF'
import json, os, sys
w, r = sys.argv[1], sys.argv[2]
ends = [float(open(os.path.join(w, "ends", f)).read()) for f in os.listdir(os.path.join(w, "ends"))]
rep = os.path.join(w, "cap", "report.json")
job_end = max(ends)
print(f"srun_{r}_ranks_ended={len(ends)}")
print(f"srun_{r}_to_report_s={os.stat(rep).st_mtime_ns / 1e9 - job_end:.3f}")
print(f"srun_{r}_to_exit_s={float(open(os.path.join(w, 'mpirun-end')).read()) - job_end:.3f}")
t = json.load(open(rep))["totals"]
print(f"srun_{r}_launches={t['launches']}")
EOF
    done
    bash "$ROOT/scripts/slurm-cluster.sh" stop "$SLURM_DIR" || log "mpi: stopping the Slurm cluster failed"
    SLURM_DIR=""
}

# ---- mpi: one xpu-asm-run per rank, and a 1,000-rank capture ----------------

if want mpi; then
    if ! command -v mpirun.openmpi >/dev/null; then
        log "mpi: no mpirun.openmpi (scripts/install-deps.sh installs openmpi-bin)"
        result mpi_skipped "no mpirun.openmpi"
    else
        gcc -std=c11 -O2 -o "$BIN/workload" "$ROOT/tests/workload/workload.c" -ldl -lpthread
        (cd "$BIN" && ocloc compile -file "$ROOT/tests/workload/kernels_a.cl" -spv_only \
            -device pvc -output kernels_a -output_no_suffix -q >/dev/null)
        MPIW="$WORK/mpi"
        for ((r = 0; r < MPI_RUNS; r++)); do
            rm -rf "$MPIW"
            mkdir -p "$MPIW/ends"
            log "mpi: 32 ranks, one xpu-asm-run each (run $((r + 1))/$MPI_RUNS)"
            # Each rank's command notes when it ended; the job ends with the last.
            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                mpirun.openmpi --oversubscribe -np 32 "$RUNNER" --emulate pvc -q -o "$MPIW/cap" -- \
                sh -c "'$BIN/workload' --via ddi --module a='$BIN/kernels_a.spv' imm:a:scale:1000 >/dev/null &&
                       date +%s.%N >'$MPIW/ends/'\$OMPI_COMM_WORLD_RANK" ||
                log "mpi: mpirun failed (status $?)"
            date +%s.%N >"$MPIW/mpirun-end"
            python3 - "$MPIW" "$r" >>"$RESULTS" <<'EOF'
import json, os, sys
w, r = sys.argv[1], sys.argv[2]
ends = [float(open(os.path.join(w, "ends", f)).read()) for f in os.listdir(os.path.join(w, "ends"))]
rep = os.path.join(w, "cap", "report.json")
job_end = max(ends)
print(f"mpi_{r}_ranks_ended={len(ends)}")
print(f"mpi_{r}_to_report_s={os.stat(rep).st_mtime_ns / 1e9 - job_end:.3f}")
print(f"mpi_{r}_to_exit_s={float(open(os.path.join(w, 'mpirun-end')).read()) - job_end:.3f}")
t = json.load(open(rep))["totals"]
print(f"mpi_{r}_launches={t['launches']}")
EOF
        done
        srun_runs
        JOBGEN="$WORK/capture-job"
        STAMP="$JOBGEN/.generated$(printf '_%s' "${JOB_ARGS[@]}")"
        if [[ ! -f "$STAMP" ]]; then
            rm -rf "$JOBGEN"
            log "mpi: generating the synthetic 1,000-rank capture (${JOB_ARGS[*]})"
            python3 "$ROOT/bench/gen_capture.py" "$JOBGEN" "${JOB_ARGS[@]}" >&2
            touch "$STAMP"
        fi
        result job_asm_files "$(find "$JOBGEN/dumps" -name '*.asm' | wc -l)"
        for ((r = 0; r < COLLECT_RUNS; r++)); do
            run="$WORK/collect-job"
            rm -rf "$run"
            cp -al "$JOBGEN" "$run"
            rm -f "$run"/.generated-*
            sync
            log "mpi: collect the 1,000-rank capture (run $((r + 1))/$COLLECT_RUNS)"
            /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$RUNNER" collect --quiet "$run" ||
                log "mpi: collect failed (status $?)"
            read -r secs kib <"$WORK/time.txt"
            result "job_${r}_wall_s" "$secs"
            result "job_${r}_maxrss_kib" "$kib"
            result "job_${r}_processes" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"]))' "$run/report.json")"
        done
        rm -rf "$WORK/collect-job" "$MPIW"
        python3 - "$RESULTS" >>"$RESULTS" <<'EOF'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
for pre, keys in (("mpi", ("to_report_s", "to_exit_s")), ("srun", ("to_report_s", "to_exit_s")),
                  ("job", ("wall_s", "maxrss_kib"))):
    for k in keys:
        vals = [float(v) for key, v in res.items() if key.startswith(pre + "_") and key.endswith("_" + k)
                and key.split("_")[1].isdigit()]
        if vals:
            print(f"{pre}_{k}={statistics.median(vals):g}")
            print(f"{pre}_{k}_lo={min(vals):g}")
            print(f"{pre}_{k}_hi={max(vals):g}")
EOF
    fi
fi

# ---- ranks: one job at 1 to 128 ranks, its capture and its collection -------

RANKS_TABLE="$WORK/ranks.md"
if want ranks; then
    if ! command -v mpiexec.hydra >/dev/null; then
        log "ranks: no mpiexec.hydra (scripts/install-deps.sh installs mpich)"
    else
        gcc -std=c11 -O2 -o "$BIN/workload" "$ROOT/tests/workload/workload.c" -ldl -lpthread
        (cd "$BIN" && ocloc compile -file "$ROOT/tests/workload/kernels_a.cl" -spv_only \
            -device pvc -output kernels_a -output_no_suffix -q >/dev/null)
        log "ranks: one job at 1, 8, 32 and 128 ranks"
        python3 "$ROOT/bench/ranks.py" --runner "xpu-asm=$RUNNER" --workload "$BIN/workload" \
            --spv "$BIN/kernels_a.spv" --rounds 7 "$WORK/ranks" >"$WORK/ranks.out" ||
            log "ranks: bench/ranks.py failed (status $?)"
        grep '^|' "$WORK/ranks.out" >"$RANKS_TABLE" || true
        grep '=' "$WORK/ranks.out" >>"$RESULTS" || true
    fi
fi

# ---- onefile: the first start of the binary alone against later starts -----

if want onefile; then
    OF="$WORK/onefile"
    rm -rf "$OF"
    mkdir -p "$OF/bin"
    cp "$RUNNER" "$OF/bin/xpu-asm-run"
    # Milliseconds of one `xpu-asm-run -q -o DIR -- true` by $1 with the cache $2.
    onefile_ms() {
        local t0 t1
        rm -rf "$OF/out"
        t0=$(date +%s%N)
        env -u XPU_ASM_INTERPOSER XDG_CACHE_HOME="$2" "$1" -q -o "$OF/out" -- true ||
            log "onefile: $1 failed (status $?)"
        t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000000))
    }
    log "onefile: $ONEFILE_RUNS interleaved rounds of first start, later start, the pair"
    onefile_ms "$OF/bin/xpu-asm-run" "$OF/cache" >/dev/null
    for ((r = 0; r < ONEFILE_RUNS; r++)); do
        rm -rf "$OF/fresh"
        result "onefile_${r}_first_ms" "$(onefile_ms "$OF/bin/xpu-asm-run" "$OF/fresh")"
        result "onefile_${r}_later_ms" "$(onefile_ms "$OF/bin/xpu-asm-run" "$OF/cache")"
        result "onefile_${r}_pair_ms" "$(onefile_ms "$RUNNER" "$OF/unused")"
    done
    result onefile_lib_bytes "$(stat -c %s "$OF"/cache/xpu-asm/interposer-*/libxpu_asm_interposer.so)"
    python3 - "$RESULTS" "$ONEFILE_RUNS" >>"$RESULTS" <<'EOF'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
n = int(sys.argv[2])
for k in ("first_ms", "later_ms", "pair_ms"):
    vals = [float(res[f"onefile_{r}_{k}"]) for r in range(n)]
    print(f"onefile_{k}={statistics.median(vals):g}")
    print(f"onefile_{k}_lo={min(vals):g}")
    print(f"onefile_{k}_hi={max(vals):g}")
ratios = [float(res[f"onefile_{r}_first_ms"]) / max(float(res[f"onefile_{r}_later_ms"]), 1) for r in range(n)]
print(f"onefile_ratio={statistics.median(ratios):.2f}")
EOF
    rm -rf "$OF"
fi

# ---- modules: what the interposer adds to zeModuleCreate --------------------

# A native module of 100 kernels (about 350 KB), built once per work folder.
native_module() {
    local dir="$WORK/native"
    mkdir -p "$dir"
    if [[ ! -f "$dir/k100" ]]; then
        python3 "$ROOT/bench/gen_native_capture.py" cl "$dir/k100.cl" --kernels 100
        (cd "$dir" && ocloc compile -q -file k100.cl -device pvc -output k100 -output_no_suffix >/dev/null)
    fi
    echo "$dir/k100"
}

if want modules; then
    gcc -O2 -g -Wall -Wextra -o "$BIN/module_loop" "$ROOT/bench/module_loop.c" -lze_loader
    if [[ ! -f "$BIN/kernels.native" ]]; then
        (cd "$BIN" && ocloc compile -file "$ROOT/bench/kernels.cl" -device pvc \
            -output kernels.native -output_no_suffix -q >/dev/null)
    fi
    BIG=$(native_module)
    MOD_OUT="$WORK/module-out"
    for ((r = 0; r < MOD_RUNS; r++)); do
        for c in "native_small native $BIN/kernels.native 200" "native_large native $BIG 30" "spirv spirv $SPV 10"; do
            read -r label fmt file n <<<"$c"
            for v in none xpu-asm; do
                log "modules: $label, $v ($((r + 1))/$MOD_RUNS)"
                rm -rf "$MOD_OUT"
                mkdir -p "$MOD_OUT"
                if [[ $v == none ]]; then
                    line=$(cd "$MOD_OUT" && "$BIN/module_loop" "$fmt" "$file" "$n")
                else
                    line=$(cd "$MOD_OUT" && XPU_ASM_OUT="$MOD_OUT" XPU_ASM_ISA=binary LD_PRELOAD="$INTERPOSER" \
                        "$BIN/module_loop" "$fmt" "$file" "$n")
                fi
                for kv in $line; do
                    result "mod_${label}_${v}_${r}_${kv%%=*}" "${kv#*=}"
                done
            done
        done
    done
    # Timings of a JIT compile vary by tens of ms from run to run; the
    # instructions the interposer itself executes per module do not.
    # callgrind over 2 and 4 creations: the difference is 2 modules' worth.
    if command -v valgrind >/dev/null 2>&1; then
        for n in 2 4; do
            log "modules: callgrind, SPIR-V, $n creations"
            rm -rf "$MOD_OUT"
            mkdir -p "$MOD_OUT"
            (cd "$MOD_OUT" && XPU_ASM_OUT="$MOD_OUT" XPU_ASM_ISA=binary LD_PRELOAD="$INTERPOSER" \
                valgrind --tool=callgrind --callgrind-out-file="$WORK/module.cg.$n" \
                "$BIN/module_loop" spirv "$SPV" "$n" >/dev/null 2>&1)
            total=$(callgrind_annotate "$WORK/module.cg.$n" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
            ours=$(callgrind_annotate --threshold=100 --inclusive=no "$WORK/module.cg.$n" 2>/dev/null |
                awk '/libxpu_asm_interposer\.so\]$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
            result "mod_cg_${n}_total" "$total"
            result "mod_cg_${n}_ours" "$ours"
        done
    fi
    rm -rf "$MOD_OUT"
    python3 - "$RESULTS" >>"$RESULTS" <<'PY'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
try:
    ours = (float(res["mod_cg_4_ours"]) - float(res["mod_cg_2_ours"])) / 2
    total = (float(res["mod_cg_4_total"]) - float(res["mod_cg_2_total"])) / 2
    print(f"mod_cg_ours_per_module={ours:g}")
    print(f"mod_cg_total_per_module={total:g}")
    print(f"mod_cg_share_pct={100 * ours / total:g}")
except (KeyError, ValueError, ZeroDivisionError):
    pass
for label in ("native_small", "native_large", "spirv"):
    for k in ("cpu_median_ns", "cpu_first_ns"):
        none, xpu, diff, ratio = [], [], [], []
        r = 0
        while f"mod_{label}_none_{r}_{k}" in res and f"mod_{label}_xpu-asm_{r}_{k}" in res:
            a, b = float(res[f"mod_{label}_none_{r}_{k}"]), float(res[f"mod_{label}_xpu-asm_{r}_{k}"])
            none.append(a)
            xpu.append(b)
            diff.append(b - a)
            ratio.append(b / a if a else 0)
            r += 1
        if none:
            print(f"mod_{label}_{k}_none={statistics.median(none):g}")
            print(f"mod_{label}_{k}_xpu={statistics.median(xpu):g}")
            print(f"mod_{label}_{k}_added={statistics.median(diff):g}")
            print(f"mod_{label}_{k}_ratio={statistics.median(ratio):g}")
    b = res.get(f"mod_{label}_none_0_bytes")
    if b:
        print(f"mod_{label}_bytes={b}")
PY
fi

# ---- binaries: collect 10,000 kernels from native module binaries ----------

if want binaries; then
    if [[ ! -x "$RUNNER" ]]; then
        result bin_skipped "no xpu-asm-run binary"
    else
        BIG=$(native_module)
        NCAP="$WORK/capture-native"
        rm -rf "$NCAP"
        python3 "$ROOT/bench/gen_native_capture.py" capture "$NCAP" --binary "$BIG" --modules 100 --kernels 100 >&2
        for ((r = 0; r < COLLECT_RUNS; r++)); do
            run="$WORK/collect-native"
            rm -rf "$run"
            cp -a "$NCAP" "$run"
            sync
            log "binaries: collect (run $((r + 1))/$COLLECT_RUNS)"
            /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.txt" "$RUNNER" collect --quiet "$run" ||
                log "binaries: xpu-asm-run collect failed (status $?)"
            read -r wall user sys rss <"$WORK/time.txt"
            result "bin_${r}_wall_s" "$wall"
            result "bin_${r}_cpu_s" "$(echo "$user + $sys" | bc)"
            result "bin_${r}_maxrss_kib" "$rss"
            result "bin_${r}_matched" "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals']['matched'])" "$run/report.json" 2>/dev/null || echo '?')"
        done
        rm -rf "$WORK/collect-native"
        python3 - "$RESULTS" >>"$RESULTS" <<'PY'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
for k in ("wall_s", "cpu_s", "maxrss_kib"):
    vals = [float(v) for key, v in res.items()
            if key.startswith("bin_") and key.endswith("_" + k) and key.split("_")[1].isdigit()]
    if vals:
        print(f"bin_{k}={statistics.median(vals):g}")
        print(f"bin_{k}_lo={min(vals):g}")
        print(f"bin_{k}_hi={max(vals):g}")
PY
    fi
fi

# ---- reading: the analysis of each kernel's code, with and without ---------

# `collect` of capture $1 (copied afresh), XPU_ASM_NO_FLOW=$2: its wall time.
collect_wall() {
    local run="$WORK/collect-reading"
    rm -rf "$run"
    cp -a "$1" "$run"
    sync
    XPU_ASM_NO_FLOW=$2 /usr/bin/time -f "%e" -o "$WORK/time.txt" "$RUNNER" collect --quiet "$run" ||
        log "reading: xpu-asm-run collect failed (status $?)"
    if [[ -z $2 ]]; then
        python3 -c "import json,sys; print(sum(1 for k in json.load(open(sys.argv[1]))['kernels'] if k.get('flow')))" \
            "$run/report.json" >"$WORK/flows.txt" 2>/dev/null || echo '?' >"$WORK/flows.txt"
    fi
    rm -rf "$run"
    cat "$WORK/time.txt"
}

if want reading; then
    if [[ ! -x "$RUNNER" ]]; then
        result read_skipped "no xpu-asm-run binary"
    else
        BIG=$(native_module)
        for c in "many 100" "one 1"; do
            read -r label mods <<<"$c"
            RCAP="$WORK/capture-reading-$label"
            rm -rf "$RCAP"
            python3 "$ROOT/bench/gen_native_capture.py" capture "$RCAP" --binary "$BIG" --modules "$mods" --kernels 100 >&2
            for ((r = 0; r < COLLECT_RUNS; r++)); do
                log "reading: $label, collect without and with the analysis (run $((r + 1))/$COLLECT_RUNS)"
                off=$(collect_wall "$RCAP" 1)
                on=$(collect_wall "$RCAP" "")
                result "read_${label}_${r}_off_s" "$off"
                result "read_${label}_${r}_on_s" "$on"
                result "read_${label}_${r}_added_s" "$(echo "$on - $off" | bc)"
                result "read_${label}_flows" "$(cat "$WORK/flows.txt")"
            done
            rm -rf "$RCAP"
        done
        python3 - "$RESULTS" >>"$RESULTS" <<'PY'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
med = {}
for label in ("many", "one"):
    for k in ("off_s", "on_s", "added_s"):
        vals = [float(v) for key, v in res.items()
                if key.startswith(f"read_{label}_") and key.endswith("_" + k) and key.split("_")[2].isdigit()]
        if vals:
            med[f"{label}_{k}"] = statistics.median(vals)
            print(f"read_{label}_{k}={med[f'{label}_{k}']:g}")
if "one_added_s" in med:
    per = max(med["one_added_s"], 0.0) / 100
    print(f"read_per_code_ms={per * 1e3:g}")
    print(f"read_distinct_10000_s={per * 10000:g}")
PY
    fi
fi

# ---- sycl: the real SYCL workload, plain, default, --isa binary -------------

# Medians of the paired rounds of section $1 (prefix $2): per variant, wall
# and CPU time (and the figures named in $3) and the per-round ratios of
# wall and CPU time to the plain run of the round.
paired_summary() { # section prefix "more figures"
    python3 - "$RESULTS" "$2" "$3" >>"$RESULTS" <<'PY'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
pre = sys.argv[2]
for v in ("plain", "default", "binary", "dump", "full"):
    for k in ["wall_s", "cpu_s"] + sys.argv[3].split():
        vals = [float(x) for key, x in res.items()
                if key.startswith(f"{pre}_{v}_") and key.endswith("_" + k) and key[len(pre) + len(v) + 2:].split("_")[0].isdigit()]
        if vals:
            print(f"{pre}_{v}_{k}={statistics.median(vals):g}")
            q = statistics.quantiles(vals, n=4) if len(vals) > 1 else [vals[0]] * 3
            print(f"{pre}_{v}_{k}_q1={q[0]:g}")
            print(f"{pre}_{v}_{k}_q3={q[2]:g}")
    if v == "plain":
        continue
    for k in ("wall_s", "cpu_s"):
        r, ratios = 0, []
        while f"{pre}_{v}_{r}_{k}" in res and f"{pre}_plain_{r}_{k}" in res:
            ratios.append(float(res[f"{pre}_{v}_{r}_{k}"]) / float(res[f"{pre}_plain_{r}_{k}"]))
            r += 1
        if ratios:
            name = "ratio" if k == "wall_s" else "cpu_ratio"
            print(f"{pre}_{v}_{name}={statistics.median(ratios):g}")
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            print(f"{pre}_{v}_{name}_q1={q[0]:g}")
            print(f"{pre}_{v}_{name}_q3={q[2]:g}")
    m = res.get(f"{pre}_{v}_0_matched")
    if m:
        print(f"{pre}_{v}_matched={m}")
PY
}

if want sycl; then
    VENV=$(bash "$ROOT/scripts/sycl-venv.sh" | tail -n 1) || VENV=""
    if [[ ! -x "$RUNNER" || ! -x "$VENV/bin/python" ]]; then
        log "sycl: no SYCL venv (scripts/sycl-venv.sh failed) or no xpu-asm-run"
        result sycl_skipped "scripts/sycl-venv.sh failed or no xpu-asm-run"
    else
        SYCL_OUT="$WORK/sycl-out"
        for ((r = 0; r < SYCL_ROUNDS; r++)); do
            for v in plain default full binary; do
                log "sycl: $v ($((r + 1))/$SYCL_ROUNDS)"
                rm -rf "$SYCL_OUT"
                cmd=("$VENV/bin/python" "$ROOT/tests/sycl/ops.py" 20)
                full=()
                case $v in
                default) cmd=("$RUNNER" --emulate pvc -q -o "$SYCL_OUT" -- "${cmd[@]}") ;;
                # IGC 1's full dumps, as xpu-asm-run had them before its light ones.
                full)
                    full=(IGC_ShaderDumpEnable=1)
                    cmd=("$RUNNER" --emulate pvc -q -o "$SYCL_OUT" -- "${cmd[@]}")
                    ;;
                binary) cmd=("$RUNNER" --emulate pvc -q --isa binary -o "$SYCL_OUT" -- "${cmd[@]}") ;;
                esac
                env -u SYCL_CACHE_PERSISTENT -u NEO_CACHE_PERSISTENT -u l0_cache_dir -u IGC_ShaderDumpEnable \
                    "${full[@]}" ONEAPI_DEVICE_SELECTOR=level_zero:gpu LD_LIBRARY_PATH="$VENV/lib" PYTHONNOUSERSITE=1 \
                    PYTHONDONTWRITEBYTECODE=1 /usr/bin/time -f "%e %U %S" -o "$WORK/time.txt" "${cmd[@]}" >/dev/null ||
                    log "sycl: $v failed (status $?)"
                read -r wall user sys <"$WORK/time.txt"
                result "sycl_${v}_${r}_wall_s" "$wall"
                result "sycl_${v}_${r}_cpu_s" "$(echo "$user + $sys" | bc)"
                if [[ -f "$SYCL_OUT/report.json" ]]; then
                    result "sycl_${v}_${r}_dump_bytes" "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['dumps']['before']['bytes'])" "$SYCL_OUT/report.json")"
                    result "sycl_${v}_${r}_matched" "$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['totals']; print(str(t['matched']) + '/' + str(t['kernels']))" "$SYCL_OUT/report.json")"
                    result "sycl_${v}_${r}_modules_bytes" "$(du -sb "$SYCL_OUT/modules" | cut -f1)"
                fi
            done
        done
        rm -rf "$SYCL_OUT"
        paired_summary sycl sycl "dump_bytes modules_bytes"
    fi
fi

# ---- the sid stack (NEO 26, IGC 2) inside the Debian sid root ---------------

# Runs "$@" inside the sid root, with the work folder, the checkout and the
# build visible at their own paths; fails when there is no complete root.
sid_run() {
    local binds=(--bind "$WORK" --bind "$ROOT")
    [[ "$TARGET" == "$ROOT"/* ]] || binds+=(--bind "$TARGET")
    bash "${XPU_ASM_BENCH_SID_ROOT_SH:-$ROOT/scripts/sid-root.sh}" run "${binds[@]}" "$@"
}
SID_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SID_NEO="NEOReadDebugKeys=1 SetCommandStreamReceiver=1 HardwareInfoOverride=1x4x8 UseAubStream=0 UseExternalAllocatorForSshAndDsh=0"


if want port; then
    # bench/port.sh inside the sid root (its NEO emulates bmg, lnl, ptl).
    gcc -std=c11 -O2 -o "$BIN/workload-port" "$ROOT/tests/workload/workload.c" -ldl -lpthread
    if sid_run true 2>/dev/null; then
        sid_run -- env -i PATH="$SID_PATH" HOME="$WORK" XPU_ASM_INTERPOSER="$INTERPOSER" \
            bash "$ROOT/bench/port.sh" "$WORK/port" "$RUNNER" "$BIN/workload-port" bmg,lnl,ptl \
            "$([[ $QUICK == 1 ]] && echo 1 || echo 3)" | tee "$WORK/port.txt" >&2
        result port_summary "\"$(tail -n1 "$WORK/port.txt")\""
    else
        log "port: no complete sid root (scripts/install-deps.sh makes it)"
        result port_skipped "no complete sid root (scripts/install-deps.sh makes it)"
    fi
fi

if want sycl-sid; then
    SVENV=/opt/xpu-asm/sycl2026-venv
    SD="$WORK/sycl-sid"
    mkdir -p "$SD"
    if ! sid_run true 2>/dev/null; then
        log "sycl-sid: no complete sid root (scripts/install-deps.sh makes it)"
        result ssid_skipped "no complete sid root (scripts/install-deps.sh makes it)"
    elif ! sid_run test -x "$SVENV/bin/python"; then
        log "sycl-sid: no SYCL 2026 venv in the root (scripts/sycl2026-venv.sh)"
        result ssid_skipped "no SYCL 2026 venv in the root (scripts/sycl2026-venv.sh)"
    else
        # The v2 adapter's resident shim, built with the root's gcc and loader.
        sid_run env -i PATH="$SID_PATH" gcc -std=c11 -O1 -Wall -Wextra -Werror -shared -fPIC \
            "$ROOT/tests/shim/ze_resident.c" -o "$SD/libze_resident.so" \
            -Wl,--no-as-needed -lze_loader -ldl
        # One round: plain, default, --isa binary, in a rotating order; each
        # run's wall and CPU time (of its process tree) and report figures.
        cat >"$SD/round.py" <<'PY'
import json, os, resource, shutil, subprocess, sys, time
r, runner, venv, ops_py, out_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
ops = ["1", "matmul=7", "add=2", "sin=3", "sum=4", "where=5", "astype=6"]
base = [venv + "/bin/python", ops_py] + ops
variants = ["plain", "default", "binary", "dump"]
for v in variants[r % 4:] + variants[:r % 4]:
    out = f"{out_dir}/out"
    shutil.rmtree(out, ignore_errors=True)
    cmd = {"plain": base,
           "default": [runner, "-q", "-o", out, "--"] + base,
           "binary": [runner, "-q", "--isa", "binary", "-o", out, "--"] + base,
           "dump": [runner, "-q", "--isa", "dump", "-o", out, "--"] + base}[v]
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    ok = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode == 0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime
    if not ok:
        print(f"failed_{v}_{r}=1")
        continue
    print(f"ssid_{v}_{r}_wall_s={time.time() - t0:.3f}")
    print(f"ssid_{v}_{r}_cpu_s={cpu:.3f}")
    if v != "plain":
        rep = json.load(open(out + "/report.json"))
        t = rep["totals"]
        print(f"ssid_{v}_{r}_matched={t['matched']}/{t['kernels']}")
        print(f"ssid_{v}_{r}_dump_bytes={rep['dumps']['before']['bytes']}")
        print(f"ssid_{v}_{r}_dump_files={rep['dumps']['before']['files']}")
PY
        for ((r = 0; r < SYCL_ROUNDS; r++)); do
            log "sycl-sid: round $((r + 1))/$SYCL_ROUNDS (plain, default, --isa binary, --isa dump)"
            # shellcheck disable=SC2086
            sid_run env -i PATH="$SID_PATH" HOME="$SD" $SID_NEO ProductFamilyOverride=bmg \
                ONEAPI_DEVICE_SELECTOR=level_zero:gpu LD_LIBRARY_PATH="$SVENV/lib" \
                PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 \
                LD_PRELOAD="$SD/libze_resident.so" UMF_ZE_LOADER_LIB_NAME="$SD/libze_resident.so" \
                python3 "$SD/round.py" "$r" "$RUNNER" "$SVENV" "$ROOT/tests/sycl/dpnp_ops.py" "$SD" \
                >>"$RESULTS" || log "sycl-sid: round $((r + 1)) failed"
        done
        rm -rf "$SD/out"
        paired_summary sycl-sid ssid "dump_bytes dump_files"
    fi
fi

if want callgrind-sid; then
    CGS="$WORK/callgrind-sid"
    mkdir -p "$CGS"
    VG_LIB=/usr/libexec/valgrind
    if ! command -v valgrind.bin >/dev/null 2>&1 || [[ ! -d "$VG_LIB" ]]; then
        log "callgrind-sid: no valgrind on this host (scripts/install-deps.sh --bench)"
        result cgsid_skipped "valgrind not installed (scripts/install-deps.sh --bench)"
    elif ! sid_run true 2>/dev/null; then
        log "callgrind-sid: no complete sid root (scripts/install-deps.sh makes it)"
        result cgsid_skipped "no complete sid root (scripts/install-deps.sh makes it)"
    else
        N=$CG_LAUNCHES
        REGK=1000
        REGM=$((N / REGK))
        cp "$(command -v valgrind.bin)" "$CGS/valgrind.bin"
        cp "$SPV" "$CGS/kernels.spv"
        log "callgrind-sid: immediate ($N launches) and regular ($REGK x $REGM) loops inside the sid root"
        cat >"$CGS/run.sh" <<EOF
set -e
cd "$CGS"
gcc -O2 -g -Wall -Wextra -o launch_loop "$ROOT/bench/launch_loop.c" -lze_loader
cg() { # variant phase-args out-file loop-function
    local pre=()
    [[ \$1 == xpu-asm ]] && { rm -rf "$CGS/xpu-out"; pre=(env XPU_ASM_OUT="$CGS/xpu-out" LD_PRELOAD="$INTERPOSER"); }
    "\${pre[@]}" "$CGS/valgrind.bin" --tool=callgrind --dump-instr=yes --toggle-collect="\$4" \
        --callgrind-out-file="\$3" ./launch_loop kernels.spv \$2 chunks=1 reps=1 >/dev/null 2>"\$3.log"
}
for v in none xpu-asm; do
    cg \$v "imm=$N" "$CGS/imm.\$v" bench_immediate_loop
    cg \$v "reg=${REGK}x$REGM" "$CGS/reg.\$v" bench_regular_loop
done
# OpenCL: bench/enqueue_loop.c, with --emulate's OpenCL keys.
gcc -O2 -g -Wall -Wextra -o enqueue_loop "$ROOT/bench/enqueue_loop.c" -l:libOpenCL.so.1
for v in none xpu-asm; do
    pre=(env AUBDumpCaptureFileName=/dev/null EnableTimestampWaitForQueues=0)
    [[ \$v == xpu-asm ]] && { rm -rf "$CGS/xpu-out"; pre+=(XPU_ASM_OUT="$CGS/xpu-out" LD_PRELOAD="$INTERPOSER"); }
    "\${pre[@]}" "$CGS/valgrind.bin" --tool=callgrind --dump-instr=yes --toggle-collect=bench_enqueue_loop \
        --callgrind-out-file="$CGS/cl.\$v" ./enqueue_loop "$ROOT/bench/kernels.cl" n=$N >/dev/null 2>"$CGS/cl.\$v.log"
done
EOF
        # shellcheck disable=SC2086
        if sid_run --bind "$VG_LIB" env -i PATH="$SID_PATH" VALGRIND_LIB="$VG_LIB" $SID_NEO \
            ProductFamilyOverride=pvc bash "$CGS/run.sh"; then
            S="$ROOT/bench/callgrind_summary.py"
            python3 "$S" "$CGS/imm.none" "$CGS/imm.xpu-asm" --launches "$N" --label cgsid_imm_xpu \
                >"$CGS/imm.profile"
            python3 "$S" "$CGS/reg.none" "$CGS/reg.xpu-asm" --launches "$((REGK * REGM))" \
                --label cgsid_reg_xpu >"$CGS/reg.profile"
            python3 "$S" "$CGS/cl.none" "$CGS/cl.xpu-asm" --launches "$N" --label cgsid_cl_xpu \
                >"$CGS/cl.profile"
            grep '^RESULT ' "$CGS/imm.profile" "$CGS/reg.profile" "$CGS/cl.profile" | sed 's/^[^:]*:RESULT //' >>"$RESULTS"
        else
            log "callgrind-sid: the runs inside the root failed (logs in $CGS)"
            result cgsid_skipped "the runs inside the root failed"
        fi
    fi
fi

# ---- page: report.html of 1,000 kernels -------------------------------------

if want page; then
    PGEN="$WORK/capture-page"
    PAGE_ARGS=(--processes 1 --modules 10 --kernels 100 --launched 1.0)
    STAMP="$PGEN/.generated$(printf '_%s' "${PAGE_ARGS[@]}")"
    if [[ ! -f "$STAMP" ]]; then
        rm -rf "$PGEN"
        log "page: generating a capture of 1,000 launched kernels"
        python3 "$ROOT/bench/gen_capture.py" "$PGEN" "${PAGE_ARGS[@]}" >&2
        touch "$STAMP"
    fi
    (cd "$ROOT" && cargo build --release --quiet -p xpu-asm-collector --example page_write)
    PRUN="$WORK/page-run"
    rm -rf "$PRUN"
    cp -al "$PGEN" "$PRUN"
    rm -f "$PRUN"/.generated*
    log "page: collect (writes report.json and report.html)"
    /usr/bin/time -f "%e" -o "$WORK/time.txt" "$RUNNER" collect --quiet "$PRUN" ||
        log "page: collect failed (status $?)"
    result page_collect_wall_s "$(cat "$WORK/time.txt")"
    log "page: writing report.html alone, $COLLECT_RUNS+2 rounds"
    line=$("$TARGET/release/examples/page_write" "$PRUN" --rounds $((COLLECT_RUNS + 2)))
    for kv in $line; do result "${kv%%=*}" "${kv#*=}"; done
    BROWSER="$ROOT/tests/browser"
    if [[ -x /usr/bin/chromium && -d "$BROWSER/node_modules/playwright-core" ]]; then
        for ((r = 0; r < COLLECT_RUNS + 2; r++)); do
            log "page: load in headless Chromium ($((r + 1))/$((COLLECT_RUNS + 2)))"
            node "$BROWSER/check.mjs" "$PRUN/report.html" "$WORK/page-shots" --kernels 0,999 >"$WORK/page-load.json"
            python3 - "$WORK/page-load.json" "$r" >>"$RESULTS" <<'PY'
import json, sys
v, r = json.load(open(sys.argv[1])), sys.argv[2]
print(f"page_{r}_ready_ms={v['ready_ms']}")
print(f"page_{r}_loaded_ms={v['loaded_ms']}")
print(f"page_{r}_errors={len(v['errors'])}")
print(f"page_{r}_rows={len(v['kernels'])}")
print(f"page_{r}_opened_instructions={sum(o['panes'][0]['instructions'] for o in v['opened'])}")
PY
        done
        python3 - "$RESULTS" >>"$RESULTS" <<'PY'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
for k in ("ready_ms", "loaded_ms"):
    vals = [float(v) for key, v in res.items() if key.startswith("page_") and key.endswith("_" + k) and key.split("_")[1].isdigit()]
    if vals:
        print(f"page_{k}={statistics.median(vals):g}")
        print(f"page_{k}_lo={min(vals):g}")
        print(f"page_{k}_hi={max(vals):g}")
PY
    else
        log "page: no /usr/bin/chromium or tests/browser/node_modules (scripts/install-deps.sh installs both)"
        result page_load_skipped "no chromium or playwright-core (scripts/install-deps.sh)"
    fi
    rm -rf "$PRUN"
fi


# ---- summary ---------------------------------------------------------------

python3 - "$RESULTS" "$(nproc)" "$CPU" "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    "$(pkgver libze1)" "$(pkgver intel-opencl-icd)" "$(pkgver libigc1)" "$QUICK" "$ROUNDS" \
    "$WORK" "$(($(date +%s) - START))" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
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
        for lab, title in (("cg_imm_xpu", "immediate"), ("cg_reg_xpu", "regular")):
            obs = sorted(((k[len(lab) + 4:], float(v)) for k, v in res.items() if k.startswith(lab + "_ob_")),
                         key=lambda kv: -abs(kv[1]))
            print(f"   {title}, added per launch by object: " + ", ".join(f"{o} {v:+.1f}" for o, v in obs))
        print(f"   profiles: {work}/callgrind/imm.profile, reg.profile (callgrind_annotate {work}/callgrind/imm.xpu-asm)")

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
    verdict("debian12: instructions added per launch (immediate list)", res["cg_imm_xpu_added_per_launch"], 80, "instr")
    verdict("debian12: instructions added per launch (regular list)", res["cg_reg_xpu_added_per_launch"], 80, "instr")
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
EOF
if [[ -s "$RANKS_TABLE" ]]; then
    echo "One job at 1 to 128 ranks on this host (section ranks; bench/ranks.py):"
    cat "$RANKS_TABLE"
fi
