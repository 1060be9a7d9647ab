#!/usr/bin/env bash
# The cost of `xpu-asm-run port`: 1,000 launched kernels (5 modules of
# 200, each kernel launched) captured on pvc, then ported to three
# products, each module compiled once per product, up to the cores at once.
# Prints the wall time per round (NEO's compiler cache off: every module
# compiled), its median, the time per kernel per product, and the same with
# NEO's compiler cache warm. Run it on the stack it measures (scripts/bench.sh --only port
# runs it inside the sid root, whose NEO emulates bmg, lnl and ptl).
#
#   bench/port_in_root.sh WORK XPU_ASM_RUN WORKLOAD [PRODUCTS] [ROUNDS]
#
# WORK: a folder to work in; WORKLOAD: tests/workload/workload.c built
# without -DVIA_LINK; PRODUCTS default bmg,lnl,ptl; ROUNDS default 3.
set -euo pipefail
WORK=$1
RUN=$2
WORKLOAD=$3
PRODUCTS=${4:-bmg,lnl,ptl}
ROUNDS=${5:-3}
MODULES=5
PER=200
mkdir -p "$WORK"
cd "$WORK"
args=(--via dlsym)
for m in $(seq 0 $((MODULES - 1))); do
    python3 -c "
for i in range($PER):
    print(f'kernel void many{i}(global float *x) {{ size_t g = get_global_id(0); x[g] = x[g] * {i + 1}.0f + $m.0f; }}')
" >"m$m.cl"
    ocloc compile -file "m$m.cl" -spv_only -device pvc -output "m$m" -output_no_suffix -q >/dev/null
    args+=(--module "m$m=$WORK/m$m.spv")
done
for m in $(seq 0 $((MODULES - 1))); do
    args+=("each:m$m:many:$PER")
done
rm -rf cap
"$RUN" --emulate pvc -q -o cap -- "$WORKLOAD" "${args[@]}" >/dev/null
n=$(($(echo "$PRODUCTS" | tr ',' '\n' | wc -l)))
times=()
for r in $(seq 1 "$ROUNDS"); do
    t0=$(date +%s.%N)
    # NEO's compiler cache off: every module compiled in every round.
    NEO_CACHE_PERSISTENT=0 "$RUN" port cap --to "$PRODUCTS" --json -q >port.json
    t1=$(date +%s.%N)
    t=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
    ported=$(python3 -c "
import json
v = json.load(open('port.json'))
print(sum(1 for k in v['kernels'] for p in k['products'] if p['not_ported'] is None and p['instructions']))
")
    echo "port round $r: $((MODULES * PER)) kernels to $PRODUCTS: ${t} s wall, $ported kernel ports with their ISA"
    [[ $ported == $((MODULES * PER * n)) ]] || { echo "port: expected $((MODULES * PER * n)) ported kernels" >&2; exit 1; }
    times+=("$t")
done
# Then with NEO's compiler cache (on by default since 2024), warm: a port
# again of the same capture takes its modules from it.
mkdir -p "$WORK/neo-cache"
NEO_CACHE_DIR="$WORK/neo-cache" "$RUN" port cap --to "$PRODUCTS" -q >/dev/null
t0=$(date +%s.%N)
NEO_CACHE_DIR="$WORK/neo-cache" "$RUN" port cap --to "$PRODUCTS" -q >/dev/null
t1=$(date +%s.%N)
warm=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
echo "port again with NEO's compiler cache warm: ${warm} s wall"
python3 -c "
import statistics, sys
t = statistics.median([float(x) for x in sys.argv[1:]])
k, n = $MODULES * $PER, $n
print(f'port: {k} launched kernels x {n} products ($PRODUCTS), {$MODULES} modules each compiled once per product, $(nproc) cores: median {t:.2f} s wall, {1000 * t / (k * n):.2f} ms per kernel per product (NEO cache warm: {1000 * $warm / (k * n):.2f})')
" "${times[@]}"
