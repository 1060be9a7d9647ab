# The core section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# interposer/benches/core.rs: the counting core alone on 1, 2 and 8 threads;
# memory after 10 million launches over 10,000 kernels.

# Core: the counting core alone.

log "core: cargo bench -p xpu-asm-interposer --bench core"
qa=()
[[ $QUICK == 1 ]] && qa=(--quick)
(cd "$ROOT" && cargo bench --quiet -p xpu-asm-interposer --bench core -- "${qa[@]}") \
    >"$WORK/core.txt"
grep '^RESULT ' "$WORK/core.txt" | sed 's/^RESULT //' >>"$RESULTS"
