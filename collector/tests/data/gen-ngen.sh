#!/bin/sh
# Regenerates module-binaries/ngen_trivial.{bmg,pvc,mtl}.zebin: a kernel
# (prologue and end of thread) as nGEN, the generator of oneDNN's and
# oneMKL's kernels, packages it: a zebin whose only platform note is the GFX
# core family, in a note section aligned to 16 bytes. Made with nGEN of
# oneDNN 3f27bec21fdce6b550f233bf6e0afd086ee8d543 (third_party/ngen) and
# g++ 12; NEO 26.27 creates a module and its kernel from each.
#   sh gen-ngen.sh ONEDNN_CHECKOUT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
onednn=${1:?give the path of a oneDNN checkout}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -std=c++17 -O1 -fno-operator-names -I "$onednn/third_party/ngen" \
  "$here/src/ngen_trivial.cpp" -o "$tmp/gen"
for p in bmg pvc mtl; do
  "$tmp/gen" "$p" "$here/module-binaries/ngen_trivial.$p.zebin"
done
