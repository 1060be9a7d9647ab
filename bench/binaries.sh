# The binaries section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# `xpu-asm-run collect` of 10,000 launched kernels whose ISA all comes from
# native module binaries (100 modules of 100 kernels,
# bench/gen_native_capture.py): IGA's disassembly of every kernel, time and
# peak memory.

# Binaries: collect 10,000 kernels from native module binaries.

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
