#!/usr/bin/env bash
# Installs xpu-asm under one prefix, for every node of a cluster when the
# prefix is on a shared filesystem:
#
#   PREFIX/bin/xpu-asm-run
#   PREFIX/lib/libxpu_asm_interposer.so   (xpu-asm-run finds it from ../lib)
#
# The binary also carries its interposer (it writes it to the user's cache
# when none is beside it: docs/usage.md); the library installed beside it
# is the one every run from PREFIX uses, so no run writes any cache.
#
#   scripts/install.sh [--prefix DIR] [--built DIR]
#
#   --prefix DIR  where to install (default: /usr/local)
#   --built DIR   take the binaries from DIR (a cargo profile folder such as
#                 target/release) instead of building them with
#                 `cargo build --release`
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
built=
while [[ $# -gt 0 ]]; do
    case "$1" in
    --prefix)
        prefix=${2:?"--prefix needs a folder"}
        shift 2
        ;;
    --built)
        built=${2:?"--built needs a folder"}
        shift 2
        ;;
    -h | --help)
        sed -n '2,17p' "$0"
        exit 0
        ;;
    *)
        echo "install.sh: unknown argument '$1' (known: --prefix DIR, --built DIR)" >&2
        exit 2
        ;;
    esac
done

if [[ -z "$built" ]]; then
    cargo build --release -p xpu-asm-collector -p xpu-asm-interposer
    built=${CARGO_TARGET_DIR:-target}/release
fi
for f in xpu-asm-run libxpu_asm_interposer.so; do
    if [[ ! -f "$built/$f" ]]; then
        echo "install.sh: $built/$f not found; build it with \`cargo build --release\` or give --built" >&2
        exit 1
    fi
done

mkdir -p "$prefix/bin" "$prefix/lib"
# A temporary name and a rename: nodes running the old binary keep it intact.
install -m 755 "$built/xpu-asm-run" "$prefix/bin/.xpu-asm-run.new"
mv -f "$prefix/bin/.xpu-asm-run.new" "$prefix/bin/xpu-asm-run"
install -m 644 "$built/libxpu_asm_interposer.so" "$prefix/lib/.libxpu_asm_interposer.so.new"
mv -f "$prefix/lib/.libxpu_asm_interposer.so.new" "$prefix/lib/libxpu_asm_interposer.so"
echo "install.sh: installed $prefix/bin/xpu-asm-run and $prefix/lib/libxpu_asm_interposer.so"
