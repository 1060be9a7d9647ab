# The collector section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# `xpu-asm-run collect` on a synthetic capture of 100,000 .asm files (1,000
# modules, 10 processes), all launched, a tenth, and all with a copy of each
# under asm/ (--asm-copies all; the default copies 10,000): time and peak
# memory (launched kernels' .asm files are read whole, for their source
# lines and instruction mix), each run beside a plain run (every dump file
# read once by two readers) and as a ratio to it, beside the scan's system
# calls alone (the example scan_floor: the floor of each configuration) and
# as a ratio to them, and that analysis of the text alone (the example
# analyze_speed: one thread, from memory)

# Collector: a synthetic capture of 100,000 .asm files.

if [[ ! -x "$RUNNER" ]]; then
    log "collector: no $RUNNER"
    result col_skipped "no xpu-asm-run binary"
else
    GEN="$WORK/capture-all"
    STAMP="$GEN/.generated$(printf '_%s' "${GEN_ARGS[@]}")"
    if [[ ! -f "$STAMP" ]]; then
        rm -rf "$GEN"
        log "collector: generating the synthetic capture (${GEN_ARGS[*]})"
        python3 "$ROOT/bench/gen_capture.py" "$GEN" "${GEN_ARGS[@]}" --launched 1.0 >&2
        touch "$STAMP"
    fi
    # The same dumps, with records in which a tenth of the kernels ran.
    GEN10="$WORK/capture-tenth"
    rm -rf "$GEN10"
    python3 "$ROOT/bench/gen_capture.py" "$GEN10" "${GEN_ARGS[@]}" --launched 0.1 --no-dumps >/dev/null
    cp -al "$GEN/dumps" "$GEN10/dumps"
    result col_asm_files "$(find "$GEN/dumps" -name '*.asm' | wc -l)"
    result col_modules "$(find "$GEN/dumps" -name '*.spv' | wc -l)"
    result col_processes "$(find "$GEN/records" -name '*.events' | wc -l)"
    result col_dump_mb "$(du -sm "$GEN/dumps" | cut -f1)"
    FLOOR="$TARGET/release/examples/scan_floor"
    (cd "$ROOT" && cargo build --release --quiet -p xpu-asm-collector --example scan_floor) ||
        log "collector: the example scan_floor did not build"
    # collect prunes and writes into the folder: each run gets a fresh
    # copy (hard links, so the dump files are not rewritten).
    # `copies`: all launched, each with its copy under asm/ (the
    # default copies the 10,000 most launched).
    for cfg in all tenth copies; do
        src="$WORK/capture-$cfg"
        extra=()
        if [[ $cfg == copies ]]; then
            src="$WORK/capture-all"
            extra=(--asm-copies all)
        fi
        for ((r = 0; r < COLLECT_RUNS; r++)); do
            run="$WORK/collect-run"
            rm -rf "$run"
            cp -al "$src" "$run"
            rm -f "$run"/.generated-*
            sync
            # The plain run beside it: every dump file read once, by two
            # readers (as many as the cores collect has), on the same copy.
            /usr/bin/time -f "%e" -o "$WORK/plain.txt" sh -c \
                'find "$1" -type f -print0 | xargs -0 -P 2 -n 5000 cat >/dev/null' sh "$run/dumps"
            result "col_${cfg}_${r}_plain_s" "$(tail -n1 "$WORK/plain.txt")"
            # The scan's system calls alone, on the collector's readers:
            # the floor of this configuration (example scan_floor).
            if [[ -x $FLOOR ]]; then
                every=1
                [[ $cfg == tenth ]] && every=10
                "$FLOOR" "$run/dumps" --whole-every "$every" --rounds 1 | tr ' ' '\n' |
                    sed -n "s/^floor_s=/col_${cfg}_${r}_floor_s=/p" >>"$RESULTS"
            fi
            log "collector: collect ($cfg launched, run $((r + 1))/$COLLECT_RUNS)"
            /usr/bin/time -v -o "$WORK/time.txt" "$RUNNER" collect --quiet "${extra[@]}" "$run" ||
                log "collector: xpu-asm-run collect failed (status $?)"
            python3 - "$WORK/time.txt" "$run/report.json" "$cfg" "$r" >>"$RESULTS" <<'EOF'
import json, sys
t = {}
for line in open(sys.argv[1]):
    if ":" in line:
        k, v = line.rsplit(":", 1) if "Elapsed" not in line else line.split("): ", 1)
        t[k.strip()] = v.strip()
el = t.get("Elapsed (wall clock) time (h:mm:ss or m:ss", "0:0")
secs = 0.0
for part in el.split(":"):
    secs = secs * 60 + float(part)
cfg, r = sys.argv[3], sys.argv[4]
print(f"col_{cfg}_{r}_wall_s={secs:.2f}")
print(f"col_{cfg}_{r}_user_s={t.get('User time (seconds)', '?')}")
print(f"col_{cfg}_{r}_sys_s={t.get('System time (seconds)', '?')}")
print(f"col_{cfg}_{r}_maxrss_kib={t.get('Maximum resident set size (kbytes)', '?')}")
import os
for name, key in (("report.json", "json_mb"), ("report.html", "page_mb")):
    path = os.path.join(os.path.dirname(sys.argv[2]), name)
    if os.path.exists(path):
        print(f"col_{cfg}_{r}_{key}={os.path.getsize(path) / 1e6:.1f}")
try:
    tot = json.load(open(sys.argv[2]))["totals"]
    print(f"col_{cfg}_{r}_matched={tot['matched']}")
    print(f"col_{cfg}_{r}_kernels={tot['kernels']}")
except Exception as e:
    print(f"col_{cfg}_{r}_matched=? ({e})")
EOF
        done
        python3 - "$RESULTS" "$cfg" >>"$RESULTS" <<'EOF'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
cfg = sys.argv[2]
for base, name in (("plain_s", "ratio"), ("floor_s", "floor_ratio")):
    ratios = []
    for key, v in res.items():
        if key.startswith(f"col_{cfg}_") and key.endswith("_" + base) and key.count("_") == 4:
            wall = res.get(key[: -len(base)] + "wall_s", "")
            try:
                ratios.append(float(wall) / float(v))
            except (ValueError, ZeroDivisionError):
                pass
    if ratios:
        print(f"col_{cfg}_{name}={statistics.median(ratios):.2f}")
for k in ("wall_s", "maxrss_kib", "user_s", "sys_s", "plain_s", "floor_s"):
    vals = [float(v) for key, v in res.items()
            if key.startswith(f"col_{cfg}_") and key.endswith("_" + k) and v.replace(".", "").isdigit()]
    if vals:
        print(f"col_{cfg}_{k}={statistics.median(vals):g}")
        print(f"col_{cfg}_{k}_lo={min(vals):g}")
        print(f"col_{cfg}_{k}_hi={max(vals):g}")
EOF
    done
    rm -rf "$WORK/collect-run"
    # The scan's analysis of the text alone: one thread, from memory.
    if (cd "$ROOT" && cargo build --release --quiet -p xpu-asm-collector --example analyze_speed); then
        folder=$(find "$GEN/dumps" -mindepth 1 -maxdepth 1 -type d | sort | head -n1)
        "$TARGET/release/examples/analyze_speed" "$folder" --rounds 7 | tr ' ' '\n' >>"$RESULTS"
    else
        log "collector: the example analyze_speed did not build"
    fi
fi
