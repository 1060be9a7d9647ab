# The launch section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# bench/launch_loop.c with no hook, a bare C hook that counts launches, the
# loader's tracing layer, and the xpu-asm interposer; interleaved runs; ns
# per launch, overhead, ratio. Then the same hooks on bench/hook_loop.c over
# do-nothing stand-ins of the loader and driver (bench/fake_ze.c): the
# hook's own time, without the driver's run-to-run noise.

# Launch: wall time per launch.

VARIANTS=(none bare tracing xpu-asm)
RAW="$WORK/launch-raw.txt"
: >"$RAW"
log "launch: $ROUNDS interleaved rounds of ${VARIANTS[*]} (imm=$IMM, $REG)"
for ((r = 0; r < ROUNDS; r++)); do
    # Rotate the order each round, so no variant always runs first.
    for ((i = 0; i < ${#VARIANTS[@]}; i++)); do
        v=${VARIANTS[$(((i + r) % ${#VARIANTS[@]}))]}
        run_variant "$v" imm=$IMM $REG | sed "s/^/round=$r variant=$v /" >>"$RAW"
    done
done
# The interposer counted every launch of its last run?
python3 - "$WORK/xpu-out" "$IMM" "$REG" >>"$RESULTS" <<'EOF'
import glob, struct, sys, re
out, imm, reg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
k, m = map(int, re.search(r"reg=(\d+)x(\d+)", reg).groups())
reps = int(re.search(r"reps=(\d+)", reg).group(1))
expected = imm + 1000 + k * m * reps  # + the warm-up launches
# The counts file as xpu_asm_record::shapes::scan reads it: 32-byte slots
# after a 64-byte header, each a kernel's counter (immediate, appended,
# launched by regular lists), a shape's head (a counter, tagged "SHP1") and
# its tail (its key), or a time block ("TIM1", 82 slots).
SHAPE, TIME = 0x31504853, 0x314D4954
got = 0
for f in glob.glob(out + "/records/*.counts"):
    b = open(f, "rb").read()
    s = 64
    while s + 32 <= len(b):
        w = struct.unpack_from("<4Q", b, s)
        if w[3] >> 32 == TIME:
            s += 82 * 32
            continue
        got += w[0] + w[2]
        s += 64 if w[3] >> 32 == SHAPE else 32
print(f"launch_count_check={'ok' if got == expected else 'MISMATCH'} ({got} counted, {expected} launched)")
EOF
python3 - "$RAW" >>"$RESULTS" <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(dict)  # (variant, phase) -> {round: fields}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split())
    runs[(f["variant"], f["phase"])][int(f["round"])] = f
def q(v, p):
    v = sorted(v)
    i = (len(v) - 1) * p
    lo = int(i)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)
for phase in ("imm", "reg"):
    base = runs[("none", phase)]
    for variant in ("none", "bare", "tracing", "xpu-asm"):
        r = runs[(variant, phase)]
        if not r:
            continue
        for stat in ("cpu_min", "cpu_median", "min", "median"):
            key = f"{stat}_ns_per_launch"
            vals = [float(x[key]) for x in r.values()]
            tag = f"launch_{phase}_{variant}_{stat}"
            print(f"{tag}={statistics.median(vals):.2f}")
            print(f"{tag}_q1={q(vals, 0.25):.2f}")
            print(f"{tag}_q3={q(vals, 0.75):.2f}")
            print(f"{tag}_lo={min(vals):.2f}")
            print(f"{tag}_hi={max(vals):.2f}")
            if variant != "none":
                # Paired by round: each round ran every variant back to back.
                diffs = [float(x[key]) - float(base[rd][key]) for rd, x in r.items() if rd in base]
                ratios = [float(x[key]) / float(base[rd][key]) for rd, x in r.items() if rd in base]
                print(f"{tag}_overhead={statistics.median(diffs):.2f}")
                print(f"{tag}_overhead_q1={q(diffs, 0.25):.2f}")
                print(f"{tag}_overhead_q3={q(diffs, 0.75):.2f}")
                print(f"{tag}_ratio={statistics.median(ratios):.4f}")
        print(f"launch_{phase}_{variant}_runs={len(r)}")
        print(f"launch_{phase}_launches={next(iter(r.values()))['launches']}")
EOF

# Hook path: the same hooks over a do-nothing loader and driver.

RAW="$WORK/hookpath-raw.txt"
: >"$RAW"
HP_ROUNDS=$(((ROUNDS + 2) / 3))
log "hook path: $HP_ROUNDS interleaved rounds of none bare xpu-asm (bench/hook_loop.c)"
for ((r = 0; r < HP_ROUNDS; r++)); do
    for v in none bare xpu-asm; do
        case "$v" in
        none) line=$("$BIN/hook_loop") ;;
        bare) line=$(LD_PRELOAD="$BIN/libbare_hook.so" "$BIN/hook_loop") ;;
        xpu-asm)
            rm -rf "$WORK/xpu-out"
            line=$(XPU_ASM_OUT="$WORK/xpu-out" LD_PRELOAD="$INTERPOSER" "$BIN/hook_loop")
            ;;
        esac
        echo "round=$r variant=$v $line" >>"$RAW"
    done
done
python3 - "$RAW" >>"$RESULTS" <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split())
    runs[f["variant"]][int(f["round"])] = float(f["min_ns_per_launch"])
for v in ("none", "bare", "xpu-asm"):
    vals = list(runs[v].values())
    print(f"hook_{v}_ns={statistics.median(vals):.2f}")
    print(f"hook_{v}_ns_lo={min(vals):.2f}")
    print(f"hook_{v}_ns_hi={max(vals):.2f}")
    if v != "none":
        d = [x - runs["none"][r] for r, x in runs[v].items()]
        print(f"hook_{v}_overhead={statistics.median(d):.2f}")
        print(f"hook_{v}_overhead_lo={min(d):.2f}")
        print(f"hook_{v}_overhead_hi={max(d):.2f}")
print(f"hook_rounds={len(runs['none'])}")
EOF
