#!/usr/bin/env bash
# Makes the release's source tarball, dist/xpu-asm-VERSION.tar.gz: `git
# archive` of a commit (default HEAD) under the prefix xpu-asm-VERSION/,
# VERSION from that commit's Cargo.toml ([workspace.package]). The same
# commit gives the same bytes (git archive's fixed owners, order and times,
# the commit's; gzip -n), so its sha256 can be written into a recipe
# (packaging/spack/xpu-asm/package.py). The archive's collector/COMMIT
# carries the commit (export-subst, .gitattributes), which a build of the
# unpacked tree names in `xpu-asm-run --version`. Prints the tarball's
# sha256 and path, as sha256sum does.
#
#   scripts/source-tarball.sh [--out DIR] [COMMIT]    DIR: default dist/ in the checkout
#
# Changes not committed are not in the tarball (a warning says so).
set -euo pipefail

say() { echo "source-tarball.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

workspace=$(cd "$(dirname "$0")/.." && pwd -P)
out="$workspace/dist"
rev=HEAD
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
    -*) die "unknown argument '$1' (--out DIR and a commit are known)" ;;
    *)
        rev=$1
        shift
        ;;
    esac
done
case "$out" in
/*) ;;
*) out="$PWD/$out" ;;
esac
cd "$workspace"
commit=$(git rev-parse --verify -q "$rev^{commit}") || die "'$rev' is not a commit of $workspace"
version=$(git show "$commit:Cargo.toml" | sed -n 's/^version = "\(.*\)"$/\1/p' | head -n1)
[[ -n "$version" ]] || die "no version in $commit's Cargo.toml ([workspace.package])"
if [[ "$rev" == HEAD && -n "$(git status --porcelain --untracked-files=no)" ]]; then
    say "warning: the tree has changes not committed; the tarball holds $(git rev-parse --short=12 HEAD) without them"
fi

name="xpu-asm-$version"
mkdir -p "$out"
tmp="$out/.$name.tar.gz.$$"
trap 'rm -f "$tmp"' EXIT
git archive --format=tar --prefix="$name/" "$commit" | gzip -n -9 >"$tmp"
mv -f "$tmp" "$out/$name.tar.gz"
sha256sum "$out/$name.tar.gz"
