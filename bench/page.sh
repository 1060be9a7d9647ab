# The page section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# the page to browse (report.html) of a synthetic capture of 1,000 launched
# kernels (bench/gen_capture.py, 200-line bodies): its writing alone (the
# example page_write: ISA read and compressed, the page assembled and
# written), its size, the collection that writes it; then its load in
# Debian's headless Chromium (tests/browser/check.mjs): the table built, the
# page loaded (every ISA element parsed), and a kernel opened.

# Page: report.html of 1,000 kernels.

PGEN="$WORK/capture-page"
PAGE_ARGS=(--processes 1 --modules 10 --kernels 100 --launched 1.0)
STAMP="$PGEN/.generated$(printf '_%s' "${PAGE_ARGS[@]}")"
if [[ ! -f "$STAMP" ]]; then
    rm -rf "$PGEN"
    log "page: generating a capture of 1,000 launched kernels"
    python3 "$ROOT/bench/gen_capture.py" "$PGEN" "${PAGE_ARGS[@]}" >&2
    touch "$STAMP"
fi
(cd "$ROOT" && cargo build --release --quiet -p xpu-asm-collector --example page_write)
PRUN="$WORK/page-run"
rm -rf "$PRUN"
cp -al "$PGEN" "$PRUN"
rm -f "$PRUN"/.generated*
log "page: collect (writes report.json and report.html)"
/usr/bin/time -f "%e" -o "$WORK/time.txt" "$RUNNER" collect --quiet "$PRUN" ||
    log "page: collect failed (status $?)"
result page_collect_wall_s "$(cat "$WORK/time.txt")"
log "page: writing report.html alone, $COLLECT_RUNS+2 rounds"
line=$("$TARGET/release/examples/page_write" "$PRUN" --rounds $((COLLECT_RUNS + 2)))
for kv in $line; do result "${kv%%=*}" "${kv#*=}"; done
BROWSER="$ROOT/tests/browser"
if [[ -x /usr/bin/chromium && -d "$BROWSER/node_modules/playwright-core" ]]; then
    for ((r = 0; r < COLLECT_RUNS + 2; r++)); do
        log "page: load in headless Chromium ($((r + 1))/$((COLLECT_RUNS + 2)))"
        node "$BROWSER/check.mjs" "$PRUN/report.html" "$WORK/page-shots" --kernels 0,999 >"$WORK/page-load.json"
        python3 - "$WORK/page-load.json" "$r" >>"$RESULTS" <<'PY'
import json, sys
v, r = json.load(open(sys.argv[1])), sys.argv[2]
print(f"page_{r}_ready_ms={v['ready_ms']}")
print(f"page_{r}_loaded_ms={v['loaded_ms']}")
print(f"page_{r}_errors={len(v['errors'])}")
print(f"page_{r}_rows={len(v['kernels'])}")
print(f"page_{r}_opened_instructions={sum(o['panes'][0]['instructions'] for o in v['opened'])}")
PY
    done
    python3 - "$RESULTS" >>"$RESULTS" <<'PY'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
for k in ("ready_ms", "loaded_ms"):
    vals = [float(v) for key, v in res.items() if key.startswith("page_") and key.endswith("_" + k) and key.split("_")[1].isdigit()]
    if vals:
        print(f"page_{k}={statistics.median(vals):g}")
        print(f"page_{k}_lo={min(vals):g}")
        print(f"page_{k}_hi={max(vals):g}")
PY
else
    log "page: no /usr/bin/chromium or tests/browser/node_modules (scripts/install-deps.sh installs both)"
    result page_load_skipped "no chromium or playwright-core (scripts/install-deps.sh)"
fi
rm -rf "$PRUN"
