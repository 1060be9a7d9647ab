# Sourced by scripts/bench.sh before its sections: the results file, the
# settings of a quick or a full run, the build, and the helpers more than one
# section uses.

RESULTS="$WORK/results.txt"
: >"$RESULTS"
result() { echo "$1=$2" >>"$RESULTS"; }
log() { echo "bench: $*" >&2; }

# NEO without GPU hardware (docs/real-stack.md), the same for a plain run
# and a capture. For Level Zero, NEO 22.43's sub-capture mode writes no AUB
# stream at all, where `--emulate` (collector/src/run/launch.rs,
# EMULATE_ENV) writes it to /dev/null for OpenCL's sake (its sub-capture
# mode makes every OpenCL enqueue blocking) at about 0.3 ms a launch; the
# OpenCL loop of the callgrind section takes --emulate's keys.
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

# The machine and the build.

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

# Runs "$@" inside the sid root, with the work folder, the checkout and the
# build visible at their own paths; fails when there is no complete root.
sid_run() {
    local binds=(--bind "$WORK" --bind "$ROOT")
    [[ "$TARGET" == "$ROOT"/* ]] || binds+=(--bind "$TARGET")
    bash "${XPU_ASM_BENCH_SID_ROOT_SH:-$ROOT/scripts/sid-root.sh}" run "${binds[@]}" "$@"
}
SID_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SID_NEO="NEOReadDebugKeys=1 SetCommandStreamReceiver=1 HardwareInfoOverride=1x4x8 UseAubStream=0 UseExternalAllocatorForSshAndDsh=0"

# The ranks section's table, which the summary prints after its own.
RANKS_TABLE="$WORK/ranks.md"
