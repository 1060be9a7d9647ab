#!/usr/bin/env bash
# Creates, or reuses, the Python virtual environment of the release build
# (scripts/release.sh): maturin, which builds the wheel and links through
# cargo-zigbuild (inside it) with zig, ziglang (zig itself, from PyPI), and
# auditwheel, which checks the wheel's tag; every package pinned (about
# 470 MB, most of it zig; kept outside the repository and reused).
#
#   scripts/release-venv.sh    prints the venv's path as its last stdout line
#
# Environment:
#   XPU_ASM_RELEASE_VENV  where the venv lives
#                         (default: $HOME/.cache/xpu-asm/release-venv)
#
# Idempotent and safe to run concurrently: a complete venv (a marker file
# that names this exact package set, and each package at its pinned
# version) is reused as is; a missing, partial or outdated one is rebuilt.
# Progress goes to stderr; stdout carries only the path.
set -euo pipefail

PACKAGES=("maturin==1.16.0" "ziglang==0.17.1" "auditwheel==6.8.2" "pyelftools==0.33" "packaging==26.4")
# Change this when PACKAGES change: old venvs rebuild.
SPEC="xpu-asm release-venv 1: ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-release-venv"

say() { echo "release-venv.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

venv="${XPU_ASM_RELEASE_VENV:-${HOME:?HOME is not set; set XPU_ASM_RELEASE_VENV}/.cache/xpu-asm/release-venv}"
case "$venv" in
/*) ;;
*) venv="$PWD/$venv" ;;
esac
venv="${venv%/}"
marker="$venv/$MARKER_NAME"

venv_ok() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$SPEC" ]] && [[ -x "$venv/bin/python" ]] &&
        "$venv/bin/python" - "${PACKAGES[@]}" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    assert version(name) == want, (name, version(name))
PY
}

if venv_ok; then
    echo "$venv"
    exit 0
fi

mkdir -p "$(dirname "$venv")" || die "cannot create $(dirname "$venv")"
command -v flock >/dev/null 2>&1 || die "flock (util-linux) not found; it keeps two runs from building one venv at once"
exec 9>"$venv.lock" || die "cannot create the lock file $venv.lock"
flock 9
if venv_ok; then
    echo "$venv"
    exit 0
fi

if [[ -e "$venv" ]]; then
    # Only ever delete what looks like a venv (or an empty folder).
    if [[ -f "$venv/pyvenv.cfg" || -f "$marker" ]] || [[ -d "$venv" && -z "$(ls -A "$venv")" ]]; then
        say "$venv is incomplete or outdated; rebuilding it"
        rm -rf "$venv"
    else
        die "$venv exists and is not a Python venv; move it away or set XPU_ASM_RELEASE_VENV elsewhere"
    fi
fi

command -v python3 >/dev/null 2>&1 || die "python3 not found (3.8 or later, with its venv module)"
say "creating $venv ($SPEC); about 100 MB to download"
python3 -m venv "$venv" >&2 || die "\`python3 -m venv $venv\` failed (is the venv module installed?)"
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check "${PACKAGES[@]}" >&2 ||
    die "pip install ${PACKAGES[*]} into $venv failed (network? disk space? see pip's output above)"
printf '%s' "$SPEC" >"$marker"
venv_ok || die "$venv was built but its packages are not at their pinned versions; see pip's output above"
say "ready: $venv"
echo "$venv"
