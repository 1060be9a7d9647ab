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
# (README). The workload and its captures: scripts/demo-captures.sh. Each
# step's time goes to stderr:
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
run=${CARGO_TARGET_DIR:-target}/debug/xpu-asm-run
XPU_ASM_RUN=$run bash scripts/demo-captures.sh "$demo"
step_start=$SECONDS

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
