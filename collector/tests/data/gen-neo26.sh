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
