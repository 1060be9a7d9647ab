#!/usr/bin/env bash
# The main job on the built-in demo workload, on a machine without an Intel
# GPU: installs the Level Zero stack if needed, builds, runs a small
# Level Zero program (reaching the loader as the SYCL runtime does, through its
# function tables) under `xpu-asm-run --emulate pvc`, and shows the table and
# where the ISA went. Two of its modules are SPIR-V (ISA from IGC's dumps), one
# is a native zebin built ahead of time (ISA disassembled from the binary). Kernels do not execute in emulation; they are compiled
# by the real IGC exactly as for a PVC GPU.
#
# Installs only what it runs (scripts/install-deps.sh --demo: the host's
# Level Zero stack, ocloc, a C compiler) and builds only what it runs
# (xpu-asm-run and the interposer), in cargo's dev profile: an optimised
# build takes two to four times as long on two cores (the collector crate
# compiles on one core for most of it), and the demo's captures take under a
# second each either way; for real workloads, `cargo build --release`
# (README). Each step's time goes to stderr:
# `demo.sh: <step> took N s`, then the total.
set -euo pipefail
cd "$(dirname "$0")/.."

demo_start=$SECONDS
step_start=$SECONDS
step() {
    echo "demo.sh: $1 took $((SECONDS - step_start)) s" >&2
    step_start=$SECONDS
}

bash scripts/install-deps.sh --demo
step "install-deps --demo"
cargo build -p xpu-asm-interposer -p xpu-asm-collector --quiet
step "build"

demo=target/demo
rm -rf "$demo"
mkdir -p "$demo/build"
gcc -std=c11 -O2 tests/workload/workload.c -o "$demo/build/workload" -ldl -lpthread
for m in a b; do
    (cd "$demo/build" && ocloc compile -file "../../../tests/workload/kernels_$m.cl" -spv_only \
        -device pvc -output "kernels_$m" -output_no_suffix -q >/dev/null)
done
# Ahead of time, as DPC++ -fsycl-targets=spir64_gen or a prebuilt wheel does.
(cd "$demo/build" && ocloc compile -file ../../../tests/workload/kernels_mix.cl \
    -device pvc --format zebin -output kernels_mix -output_no_suffix -q >/dev/null)
step "workload and its modules"

run=${CARGO_TARGET_DIR:-target}/debug/xpu-asm-run
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
    (cd "$demo/build" && ocloc compile -file "../../../tests/workload/kernels_$m.cl" -spv_only \
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

echo
echo "\$ xpu-asm-run show $demo/capture-g scale_v2 --lines"
"$run" show "$demo/capture-g" scale_v2 --lines
echo
echo "\$ xpu-asm-run diff $demo/capture $demo/capture-O0 --fail-on instructions+40%"
"$run" diff "$demo/capture" "$demo/capture-O0" --fail-on instructions+40% || true
step "show and diff"

echo
echo "ISA of each launched kernel:  $demo/capture/asm/"
ls "$demo/capture/asm" | sed 's/^/  /'
echo "full report:                  $demo/capture/report.json"
echo "again, without running:       $run collect $demo/capture"
echo "a kernel with its source lines: $run show $demo/capture-g scale_v2"
echo "demo.sh: total $((SECONDS - demo_start)) s" >&2
