# The callgrind-sid section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# the callgrind section's instruction counts on that stack: launch_loop
# built inside the root, run under this host's valgrind (its tools
# bind-mounted in)

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
