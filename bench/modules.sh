# The modules section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# bench/module_loop.c: zeModuleCreate of a small and a large native module
# and of a SPIR-V module, without and with the interposer in `--isa binary`
# mode (module recording and the binary saved, no IGC dumps): CPU time added
# per module, and for the first creation (the one that writes the binary)

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
