# The port section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# bench/port_in_root.sh inside the sid root: 1,000 launched kernels (five
# modules of 200) captured on pvc, then `xpu-asm-run port` to bmg, lnl and
# ptl: wall time and time per kernel per product.

# bench/port_in_root.sh inside the sid root (its NEO emulates bmg, lnl, ptl).
gcc -std=c11 -O2 -o "$BIN/workload-port" "$ROOT/tests/workload/workload.c" -ldl -lpthread
if sid_run true 2>/dev/null; then
    sid_run -- env -i PATH="$SID_PATH" HOME="$WORK" XPU_ASM_INTERPOSER="$INTERPOSER" \
        bash "$ROOT/bench/port_in_root.sh" "$WORK/port" "$RUNNER" "$BIN/workload-port" bmg,lnl,ptl \
        "$([[ $QUICK == 1 ]] && echo 1 || echo 3)" | tee "$WORK/port.txt" >&2
    result port_summary "\"$(tail -n1 "$WORK/port.txt")\""
else
    log "port: no complete sid root (scripts/install-deps.sh makes it)"
    result port_skipped "no complete sid root (scripts/install-deps.sh makes it)"
fi
