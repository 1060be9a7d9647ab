# The reading section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# the analysis of each kernel's code (`flow`: IGA's decoding of it, and the
# collector's own liveness over its operands: blocks, loops, live GRF):
# `collect` of the capture of `binaries` (10,000 launched kernels, 100
# distinct codes) with and without it (XPU_ASM_NO_FLOW=1), interleaved: the
# time it adds; then the same on one module of 100 kernels (100 distinct
# codes): the time per distinct kernel code, and what 10,000 distinct codes
# would add.

# Reading: the analysis of each kernel's code, with and without.

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
