# The callgrind section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# instructions per launch (and per OpenCL enqueue, bench/enqueue_loop.c)
# inside the measured loop (callgrind --toggle-collect), with and without
# the interposer, and a profile of what the interposer adds.

# Callgrind: instructions per launch.

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
