# The ranks section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# one job at 1, 8, 32 and 128 ranks on this host (MPICH's mpiexec.hydra, one
# xpu-asm-run --emulate pvc per rank, the C workload): files and bytes in
# the capture (the per-rank records, the report, the rest) and `collect`
# time, each against the 1-rank job (bench/ranks.py)

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
