#!/usr/bin/env bash
# Builds tests/sycl/register_images.o, the C++ part of the test program
# that registers SYCL device images with the real SYCL runtime
# (tests/tests/origins_sycl.rs), on the host: the Debian sid root the test
# runs in has gcc but no g++. Uses the SYCL headers of the SYCL 2026 venv
# (scripts/sycl2026-venv.sh) in that root; the object is kept in the
# repository, and the test links it inside the root.
#
#   scripts/register-images.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=${XPU_ASM_SID_ROOT:-/var/cache/xpu-asm/sid-root}
venv=$root${XPU_ASM_SYCL2026_VENV:-/opt/xpu-asm/sycl2026-venv}
[[ -f "$venv/include/sycl/sycl.hpp" ]] || {
    echo "register-images.sh: no SYCL headers in $venv/include (make the venv with scripts/sycl2026-venv.sh)" >&2
    exit 1
}
out=tests/sycl/register_images.o
g++ -std=c++17 -O1 -g1 -fPIE -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING -isystem "$venv/include" \
    -ffile-prefix-map="$venv/"=sycl2026-venv/ -ffile-prefix-map="$PWD"=. \
    -c tests/sycl/register_images.cpp -o "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
