#!/usr/bin/env bash
# Builds the release artifacts into dist/ (README, "Install"; docs/usage.md,
# "Release artifacts"), for x86-64 Linux with glibc 2.28 or later (RHEL 8,
# SLES 15, Ubuntu 20.04 and everything newer):
#
#   dist/xpu-asm-run                                       the binary, carrying its interposer
#   dist/xpu_asm-VERSION-py3-none-manylinux_2_28_x86_64.whl  the same binary as a wheel
#   dist/xpu-asm-VERSION-x86_64-linux-gnu.tar.gz           the binary, README.md, LICENSE,
#                                                          CHANGELOG.md, doc/ (man pages),
#                                                          complete/ (bash, zsh, fish, ...)
#   dist/xpu-asm-VERSION.tar.gz                            the source: git archive of HEAD
#                                                          (scripts/source-tarball.sh), what
#                                                          the Spack recipe builds
#   dist/SHA256SUMS
#
# How: maturin (the wheel's build backend, pyproject.toml) with --zig links
# through cargo-zigbuild with zig's linker against glibc 2.28's symbols; the
# interposer that collector/build.rs builds for the binary to carry is
# linked the same way (its cargo inherits the linker settings). The tools
# come pinned from PyPI (scripts/release-venv.sh); Rust and cargo are the
# host's. Then it checks what it built: the highest GLIBC_ symbol version
# that the binary and the interposer it writes out need (2.28 at most, or
# it fails), and that `auditwheel show` finds the wheel consistent with its
# tag. The man page and completions come from the command line's definition
# (xtask/). `xpu-asm-run --version` names the commit, with "-modified" when
# the tree has changes.
#
#   scripts/release.sh [--out DIR]    DIR: default dist/ in the checkout
#
# Environment:
#   CARGO_TARGET_DIR      the build goes into $CARGO_TARGET_DIR/dist
#                         (default target/dist), kept between runs
#   XPU_ASM_RELEASE_VENV  the tools' venv (scripts/release-venv.sh)
set -euo pipefail

GLIBC_MAX=2.28
PLATFORM=manylinux_2_28_x86_64
TRIPLE=x86_64-unknown-linux-gnu

say() { echo "release.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

workspace=$(cd "$(dirname "$0")/.." && pwd -P)
out="$workspace/dist"
while [[ $# -gt 0 ]]; do
    case "$1" in
    --out)
        [[ $# -ge 2 ]] || die "--out needs a folder"
        out=$2
        shift 2
        ;;
    -h | --help)
        sed -n '2,/^set /{/^#/p}' "$0"
        exit 0
        ;;
    *) die "unknown argument '$1' (--out DIR is known)" ;;
    esac
done
case "$out" in
/*) ;;
*) out="$PWD/$out" ;;
esac
cd "$workspace"
command -v cargo >/dev/null 2>&1 || die "cargo not found: the release is built with the host's Rust toolchain (1.80 or later)"

target="${CARGO_TARGET_DIR:-$workspace/target}"
case "$target" in
/*) ;;
*) target="$workspace/$target" ;;
esac
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
[[ -n "$version" ]] || die "no version in Cargo.toml's [workspace.package]"
if commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
    [[ -z "$(git status --porcelain --untracked-files=no)" ]] || commit="$commit-modified"
else
    commit=unknown
fi

venv=$(bash scripts/release-venv.sh | tail -n1)
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The build: its own target folder (the interposer's nested one inside it),
# so nothing linked for the host's glibc is reused. No debug information:
# the binary and the interposer it carries are a third of their size.
say "building xpu-asm $version ($commit) for glibc $GLIBC_MAX with zig"
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target/dist" XPU_ASM_COMMIT="$commit" \
    CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=debuginfo \
    maturin build --release --zig --compatibility "${PLATFORM%_x86_64}" --out "$work/wheel" >&2 ||
    die "maturin build failed (see its output above)"
say "build took $((SECONDS - start)) s"
wheels=("$work"/wheel/*.whl)
[[ ${#wheels[@]} -eq 1 && -f "${wheels[0]}" ]] || die "maturin left no single wheel in $work/wheel"
wheel=${wheels[0]}
[[ "$(basename "$wheel")" == "xpu_asm-$version-py3-none-$PLATFORM.whl" ]] ||
    die "the wheel is $(basename "$wheel"), not tagged py3-none-$PLATFORM"

# The binary is the wheel's own (one build, the same bytes in both).
"$venv/bin/python" - "$wheel" "$work/xpu-asm-run" <<'PY' || die "no xpu-asm-run in the wheel"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    (name,) = [n for n in z.namelist() if n.endswith(".data/scripts/xpu-asm-run")]
    open(sys.argv[2], "wb").write(z.read(name))
PY
chmod 755 "$work/xpu-asm-run"
bin="$work/xpu-asm-run"

# The interposer it carries, as it writes it out on first use.
XDG_CACHE_HOME="$work/cache" "$bin" -q -o "$work/probe" -- true >&2 ||
    die "$bin -- true failed: the built binary does not run here"
libs=("$work"/cache/xpu-asm/interposer-*/libxpu_asm_interposer.so)
[[ -f "${libs[0]}" ]] || die "$bin wrote no interposer into $work/cache"

# The highest GLIBC_ version each needs (its .gnu.version_r), checked
# against GLIBC_MAX.
"$venv/bin/python" - "$GLIBC_MAX" "$bin" "${libs[0]}" <<'PY' || die "a file needs a glibc newer than $GLIBC_MAX"
import sys
from elftools.elf.elffile import ELFFile
limit = tuple(int(x) for x in sys.argv[1].split("."))
ok = True
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        sec = ELFFile(f).get_section_by_name(".gnu.version_r")
        names = [a.name for _, auxs in sec.iter_versions() for a in auxs]
    glibc = [tuple(int(x) for x in n[6:].split(".")) for n in names if n.startswith("GLIBC_2")]
    top = max(glibc)
    name = "the interposer it carries" if path.endswith(".so") else "xpu-asm-run"
    print(f"release.sh: {name}: newest glibc symbol version GLIBC_{'.'.join(map(str, top))}", file=sys.stderr)
    ok &= top <= limit
sys.exit(0 if ok else 1)
PY

show=$("$venv/bin/auditwheel" show "$wheel") || die "auditwheel show $wheel failed"
echo "$show" | tr '\n' ' ' | grep "is consistent with the following platform tag: \"$PLATFORM\"" >/dev/null ||
    die "auditwheel does not find the wheel consistent with $PLATFORM: $show"
say "auditwheel: $(basename "$wheel") is consistent with \"$PLATFORM\""

# The man page and completions, from the host's build of xtask/.
docs="$work/docs"
cargo run --quiet -p xpu-asm-xtask -- docs "$docs" >&2 || die "xtask docs failed"

name="xpu-asm-$version-x86_64-linux-gnu"
stage="$work/$name"
mkdir -p "$stage"
cp "$bin" README.md LICENSE CHANGELOG.md "$stage/"
cp -r "$docs/doc" "$docs/complete" "$stage/"
# The same bytes from the same commit: fixed names, owners, order and times.
when=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$when" -C "$work" -cf - "$name" |
    gzip -n -9 >"$work/$name.tar.gz"

mkdir -p "$out"
rm -f "$out"/xpu-asm-run "$out"/xpu_asm-*.whl "$out"/xpu-asm-*.tar.gz "$out"/SHA256SUMS
cp "$bin" "$wheel" "$work/$name.tar.gz" "$out/"
bash scripts/source-tarball.sh --out "$out" >/dev/null
(cd "$out" && sha256sum xpu-asm-run "$(basename "$wheel")" "$name.tar.gz" "xpu-asm-$version.tar.gz" >SHA256SUMS)
say "$("$out/xpu-asm-run" --version)"
for f in xpu-asm-run "$(basename "$wheel")" "$name.tar.gz" "xpu-asm-$version.tar.gz"; do
    say "$(printf '%9d bytes  %s' "$(stat -c %s "$out/$f")" "$out/$f")"
done
say "done in $((SECONDS - start)) s"
echo "$out"
