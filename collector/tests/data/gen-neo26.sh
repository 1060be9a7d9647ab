#!/bin/sh
# Regenerates the module binaries of today's stack under
# collector/tests/data/module-binaries: module A (src/module_a.cl) as zebins
# for bmg (Xe2), ptl (Xe3) and tgllp (Xe, product family 29), from ocloc
# 26.27 (IGC 2.40) of Debian sid. Run it inside the sid root (scripts/sid-root.sh run -- sh collector/tests/data/gen-neo26.sh).
# (ocloc 26 writes <output>.bin: -output_no_suffix drops only the device.)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dev in bmg ptl tgllp; do
  (cd "$tmp" && ocloc compile -q -file "$here/src/module_a.cl" -device "$dev" \
    -output "module_a_$dev" -output_no_suffix >/dev/null)
  cp "$tmp/module_a_$dev.bin" "$here/module-binaries/module_a.$dev.zebin"
done
# The loops module of the workload built with -g, for the DWARF reader's
# tests: compiled in a folder of a fixed name, /tmp/xpu-asm-dwarf, which
# its line tables name (DW_AT_comp_dir), whatever the checkout's path.
mkdir -p /tmp/xpu-asm-dwarf
cp "$here/../../../tests/workload/kernels_loops.cl" /tmp/xpu-asm-dwarf/
(cd /tmp/xpu-asm-dwarf && ocloc compile -q -file kernels_loops.cl -device pvc -options -g \
  -output loops_g -output_no_suffix >/dev/null)
cp /tmp/xpu-asm-dwarf/loops_g.bin "$here/module-binaries/loops_g.pvc.zebin"
rm -rf /tmp/xpu-asm-dwarf
