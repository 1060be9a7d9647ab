#!/usr/bin/env bash
# The demo's workload and its three captures, as scripts/demo.sh makes them
# (it runs this after installing and building): the C workload and its
# modules built into DEMO/build, then the workload run three times under
# `xpu-asm-run --emulate pvc`: DEMO/capture (the table on stdout),
# DEMO/capture-g (modules built with -g) and DEMO/capture-O0 (build flags
# -cl-opt-disable), quietly. Installs and builds nothing else; the tests
# and scripts/docs-examples.py run it in folders of their own.
#
#   scripts/demo-captures.sh [DEMO]
#
#   DEMO         the folder, relative to the current one (default target/demo);
#                emptied first
#   XPU_ASM_RUN  the xpu-asm-run to run (default: cargo's debug build)
#
# Each step's time goes to stderr (`demo.sh: <step> took N s`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
demo=${1:-target/demo}
run=${XPU_ASM_RUN:-${CARGO_TARGET_DIR:-$root/target}/debug/xpu-asm-run}
src=$root/tests/workload

step_start=$SECONDS
step() {
    echo "demo.sh: $1 took $((SECONDS - step_start)) s" >&2
    step_start=$SECONDS
}

rm -rf "$demo"
mkdir -p "$demo/build"
gcc -std=c11 -O2 "$src/workload.c" -o "$demo/build/workload" -ldl -lpthread
for m in a b; do
    (cd "$demo/build" && ocloc compile -file "$src/kernels_$m.cl" -spv_only \
        -device pvc -output "kernels_$m" -output_no_suffix -q >/dev/null)
done
# Ahead of time, as DPC++ -fsycl-targets=spir64_gen or a prebuilt wheel does.
# (NEO 26's ocloc names it kernels_mix.bin whatever -output_no_suffix says.)
(cd "$demo/build" && ocloc compile -file "$src/kernels_mix.cl" \
    -device pvc --format zebin -output kernels_mix -output_no_suffix -q >/dev/null &&
    if [[ ! -f kernels_mix ]]; then mv kernels_mix.bin kernels_mix; fi)
step "workload and its modules"

# 1000 + 300 + 20 launches on immediate lists, a regular list of 4 appends run
# 50 times (200 launches), a kernel of the same name in a second module, and
# two kernels of the ahead-of-time module.
steps=(imm:a:_ZTSZ4mainE10vector_add:1000 imm:a:scale:300 imm:a:scale_v2:20
    reg:a:common_kernel:4:50 imm:b:common_kernel:7 imm:b:only_in_b:2
    imm:m:mix_mad_loop:50 imm:m:mix_slm:10)
"$run" --emulate pvc -o "$demo/capture" -- \
    "$demo/build/workload" --via ddi \
    --module "a=$demo/build/kernels_a.spv" --module "b=$demo/build/kernels_b.spv" \
    --native "m=$demo/build/kernels_mix" "${steps[@]}"
step "capture"

# The same program twice more, quietly: its modules built with line
# information (-g), and without optimisation (build flags -cl-opt-disable);
# the ahead-of-time module is the same binary in all three.
for m in a b; do
    (cd "$demo/build" && ocloc compile -file "$src/kernels_$m.cl" -spv_only \
        -device pvc -options -g -output "kernels_${m}_g" -output_no_suffix -q >/dev/null)
done
step "modules with -g"
"$run" --emulate pvc -q -o "$demo/capture-g" -- \
    "$demo/build/workload" --via ddi --build-flags -g \
    --module "a=$demo/build/kernels_a_g.spv" --module "b=$demo/build/kernels_b_g.spv" \
    --native "m=$demo/build/kernels_mix" "${steps[@]}" >/dev/null
step "capture -g"
"$run" --emulate pvc -q -o "$demo/capture-O0" -- \
    "$demo/build/workload" --via ddi --build-flags -cl-opt-disable \
    --module "a=$demo/build/kernels_a.spv" --module "b=$demo/build/kernels_b.spv" \
    --native "m=$demo/build/kernels_mix" "${steps[@]}" >/dev/null
step "capture -O0"
