# The onefile section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# xpu-asm-run copied alone into an empty folder, `-q -- true`: its first
# start (it writes the interposer it carries into a fresh cache) against
# later starts (it checks the one written) and against the release pair (the
# library beside it); interleaved, median of N, ratio.

# Onefile: the first start of the binary alone against later starts.

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
