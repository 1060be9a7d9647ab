#!/usr/bin/env bash
# Builds and installs xpu-asm with Spack itself from its recipe
# (packaging/spack/xpu-asm/package.py), as a site would, then checks the
# install: the installed `xpu-asm-run --version` (the version and the commit
# the recipe pins), its man page read by `man -l`, its completions.
#
#   scripts/spack-check.sh
#
# What it uses, all of it in WORK (default /tmp/xpu-asm-spack; every run
# starts from a fresh configuration there, and keeps the Spack checkout, the
# venv and the install tree):
#   WORK/spack         a Spack checkout (cloned from $XPU_ASM_SPACK_GIT once,
#                      default https://github.com/spack/spack.git)
#   WORK/venv          Python with clingo from PyPI, Spack's concretizer (no
#                      bootstrapping from GitHub)
#   WORK/config        Spack's user configuration: the host's Rust as an
#                      external (buildable: false), the host's gcc as the
#                      compiler, the recipe's repository, the mirror
#   WORK/mirror        the source tarball of the commit the recipe pins
#                      (scripts/source-tarball.sh), laid out as Spack's mirrors are
#   WORK/opt, WORK/stage   the install tree, the build stage
#
# The build is `cargo install` in release mode and the crates come from
# crates.io (the build needs the network, as every CargoPackage's does):
# about 10 minutes on 2 busy cores. Exits 0 when every check holds.
#
# Environment:
#   XPU_ASM_SPACK_WORK   WORK
#   XPU_ASM_SPACK_GIT    where to clone Spack from (a URL or a local git folder)
#   XPU_ASM_RUST         the Rust toolchain's prefix (default: the one of `rustc` on PATH)
set -euo pipefail

say() { echo "spack-check.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd -P)
work=${XPU_ASM_SPACK_WORK:-/tmp/xpu-asm-spack}
recipe="$root/packaging/spack/xpu-asm/package.py"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)

# The version and the commit the recipe pins.
version=$(sed -n 's/^ *version("\([^"]*\)", sha256="[0-9a-f]*").*/\1/p' "$recipe" | head -n1)
sha=$(sed -n 's/^ *version("[^"]*", sha256="\([0-9a-f]*\)").*/\1/p' "$recipe" | head -n1)
commit=$(sed -n 's/^ *# commit \([0-9a-f]\{40\}\)$/\1/p' "$recipe" | head -n1)
[[ -n "$version" && -n "$sha" && -n "$commit" ]] ||
    die "$recipe names no version(\"V\", sha256=\"...\") after a '# commit HASH' line"

# Spack, and clingo for it.
if [[ ! -x "$work/spack/bin/spack" ]]; then
    git clone -q "${XPU_ASM_SPACK_GIT:-https://github.com/spack/spack.git}" "$work/spack"
fi
if [[ ! -x "$work/venv/bin/python" ]] || ! "$work/venv/bin/python" -c 'import clingo' 2>/dev/null; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q clingo==5.7.1
fi
export SPACK_PYTHON="$work/venv/bin/python"
export SPACK_USER_CONFIG_PATH="$work/config"
export SPACK_USER_CACHE_PATH="$work/cache"
spack() { "$work/spack/bin/spack" "$@"; }
say "$(spack --version), Python $("$SPACK_PYTHON" -c 'import platform; print(platform.python_version())')"

# The mirror: the tarball under the name Spack looks for (NAME/NAME-VERSION.tar.gz).
mkdir -p "$work/mirror/xpu-asm"
got=$(bash "$root/scripts/source-tarball.sh" --out "$work/mirror/xpu-asm" "$commit" | cut -d' ' -f1)
[[ "$got" == "$sha" ]] ||
    die "the tarball of $commit has sha256 $got; the recipe says $sha"
say "mirror: $work/mirror/xpu-asm/xpu-asm-$version.tar.gz, sha256 $sha (commit ${commit:0:12})"

# A fresh configuration.
rust=${XPU_ASM_RUST:-$(rustc --print sysroot)}
rust_version=$("$rust/bin/rustc" --version | cut -d' ' -f2)
rm -rf "$work/config"
mkdir -p "$work/config"
cat >"$work/config/packages.yaml" <<EOF
packages:
  rust:
    externals:
    - spec: rust@$rust_version
      prefix: $rust
    buildable: false
EOF
cat >"$work/config/config.yaml" <<EOF
config:
  install_tree:
    root: $work/opt
  build_stage:
  - $work/stage
  source_cache: $work/source-cache
EOF
spack compiler find --scope user "$(dirname "$(command -v gcc)")" >&2
spack repo add --scope user "$root/packaging/spack" >&2
spack mirror add --scope user xpu-asm-local "file://$work/mirror" >&2
say "rust@$rust_version external at $rust"

# The recipe as Spack reads it, then the build.
spack info xpu-asm >&2
spack audit packages xpu-asm >&2
spack uninstall -y -a xpu-asm >/dev/null 2>&1 || true
start=$SECONDS
spack install -v --fail-fast xpu-asm@"$version" >&2
say "spack install took $((SECONDS - start)) s"
prefix=$(spack location -i xpu-asm@"$version")

# The install.
bin="$prefix/bin/xpu-asm-run"
v=$("$bin" --version)
say "$bin --version: $v"
[[ "$v" == "xpu-asm-run $version (commit ${commit:0:12})" ]] ||
    die "--version is '$v', not xpu-asm-run $version (commit ${commit:0:12})"
[[ -f "$prefix/lib/libxpu_asm_interposer.so" ]] || die "no $prefix/lib/libxpu_asm_interposer.so"
page=$(MANWIDTH=80 man -l "$prefix/share/man/man1/xpu-asm-run.1" 2>/dev/null | col -b)
head -n 8 <<<"$page" >&2
grep -q "^NAME" <<<"$page" && grep -q "xpu-asm-run" <<<"$page" || die "man -l of xpu-asm-run.1 shows no NAME"
for f in share/bash-completion/completions/xpu-asm-run share/zsh/site-functions/_xpu-asm-run \
    share/fish/vendor_completions.d/xpu-asm-run.fish; do
    [[ -s "$prefix/$f" ]] || die "no $prefix/$f"
done
words=$(bash -c 'source "$1"; COMP_WORDS=(xpu-asm-run co); COMP_CWORD=1; _xpu-asm-run xpu-asm-run co xpu-asm-run; echo "${COMPREPLY[*]}"' \
    bash "$prefix/share/bash-completion/completions/xpu-asm-run")
[[ "$words" == collect ]] || die "the bash completion of 'xpu-asm-run co' is '$words', not collect"
say "man pages: $(ls "$prefix/share/man/man1" | tr '\n' ' ')"
say "ok: $prefix"
echo "$prefix"
