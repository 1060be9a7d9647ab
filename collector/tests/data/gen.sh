#!/bin/sh
# Regenerates the IGC dumps under collector/tests/data from src/*.cl with
# ocloc (intel-opencl-icd 22.43, IGC 1.0.12504): .spv files whole, .asm files
# trimmed (the whole header, then a few instruction lines), and module_b's
# small `light` kernel's .dat (machine code) and .kernbin (final binary).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/out"
trim() { # in out
  awk '
    BEGIN { state = 0; kept = 0 }
    state == 0 && /^\/\/\.declare/ { state = 1 }
    state == 0 { print; next }
    state == 1 && /^\/\// { next }
    state == 1 { state = 2; print "// [xpu-asm test data: declarations and instructions trimmed]"; print ""; next }
    state == 2 && (/^$/ || /^\/\//) { next }
    state == 2 && kept < 6 { print; kept++; next }
  ' "$1" > "$2"
}
gen() { # dest device sources...
  dest=$1; dev=$2; shift 2
  rm -rf "${here:?}/$dest"; mkdir -p "$here/$dest"
  for src in "$@"; do
    # ocloc writes its own outputs into the current folder: keep them out.
    (cd "$tmp/out" && IGC_ShaderDumpEnable=1 IGC_DumpToCustomDir="$tmp/$dest" \
      ocloc compile -q -file "$here/src/$src" -device "$dev" -out_dir "$tmp/out" >/dev/null)
  done
  for f in "$tmp/$dest"/*; do
    n=$(basename "$f")
    case "$n" in
      *.spv) cp "$f" "$here/$dest/$n" ;;
      *.asm) trim "$f" "$here/$dest/$n" ;;
    esac
  done
}
gen pvc pvc module_a.cl module_b.cl spill.cl
gen dg2-retry dg2 spill.cl
for asm in "$tmp"/pvc/*.asm; do
  if head -n 1 "$asm" | grep -qx '//.kernel light'; then
    stem=${asm%.asm}
    cp "$stem.dat" "$here/pvc/"
    entry=${stem##*_entry_}
    hash=$(basename "$stem" | sed 's/^OCL_asm\([0-9a-f]*\)_.*/\1/')
    cp "$tmp/pvc/OCL_asm${hash}_entry_${entry}.kernbin" "$here/pvc/"
  fi
done
# Module binaries as the interposer saves them (modules/<sha256>.bin), of
# module_a.cl: ocloc's default patch-token ELF for pvc, and a zebin.
rm -rf "${here:?}/module-binaries"; mkdir -p "$here/module-binaries"
(cd "$tmp/out" && ocloc compile -q -file "$here/src/module_a.cl" -device pvc \
  -output module_a -output_no_suffix >/dev/null && \
  cp module_a "$here/module-binaries/module_a.pvc.bin" && \
  ocloc compile -q -file "$here/src/module_a.cl" -device pvc --format zebin \
  -output module_a_zebin -output_no_suffix >/dev/null && \
  cp module_a_zebin "$here/module-binaries/module_a.pvc.zebin")
