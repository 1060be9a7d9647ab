#!/usr/bin/env bash
# Creates, or reuses, the Python virtual environment that the SYCL runtime
# test (tests/tests/sycl.rs) runs real prebuilt SYCL kernels from: CPython
# 3.10 with dpctl 0.15.0 on the oneAPI 2024.0 DPC++ runtime from PyPI (about
# 1.4 GB, kept outside the repository and reused). Newer oneAPI runtimes from
# PyPI do not work with the NEO 22.43 driver of docs/real-stack.md, and dpctl
# 0.15 has no wheels for Python 3.11 or later.
#
#   scripts/sycl-venv.sh        prints the venv's path as its last stdout line
#
# Environment:
#   XPU_ASM_SYCL_VENV    where the venv lives
#                        (default: $HOME/.cache/xpu-asm/sycl-venv)
#   XPU_ASM_SYCL_PYTHON  the Python 3.10 to build it with (default: pyenv's
#                        3.10.13, else python3.10 from PATH)
#
# Idempotent and safe to run concurrently: a complete venv (marker file that
# names this exact package set, and the packages importable at the pinned
# versions) is reused as is; a missing, partial or outdated one is rebuilt.
# Progress goes to stderr; stdout carries only the path.
set -euo pipefail

PACKAGES=("dpctl==0.15.0" "dpcpp-cpp-rt==2024.0.3" "numpy<2")
# Change this when PACKAGES or the Python version change: old venvs rebuild.
SPEC="xpu-asm sycl-venv 1: python 3.10; ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-sycl-venv"

say() { echo "sycl-venv.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

venv="${XPU_ASM_SYCL_VENV:-${HOME:?HOME is not set; set XPU_ASM_SYCL_VENV}/.cache/xpu-asm/sycl-venv}"
case "$venv" in
/*) ;;
*) venv="$PWD/$venv" ;;
esac
venv="${venv%/}"
marker="$venv/$MARKER_NAME"

is_python310() {
    [[ -x "$1" ]] && [[ "$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" == "3.10" ]]
}

find_python() {
    local p prefix
    if [[ -n "${XPU_ASM_SYCL_PYTHON:-}" ]]; then
        is_python310 "$XPU_ASM_SYCL_PYTHON" ||
            die "XPU_ASM_SYCL_PYTHON=$XPU_ASM_SYCL_PYTHON is not a runnable Python 3.10"
        echo "$XPU_ASM_SYCL_PYTHON"
        return
    fi
    if command -v pyenv >/dev/null 2>&1 && prefix=$(pyenv prefix 3.10.13 2>/dev/null); then
        for p in "$prefix/bin/python3.10" "$prefix/bin/python"; do
            if is_python310 "$p"; then
                echo "$p"
                return
            fi
        done
    fi
    if p=$(command -v python3.10 2>/dev/null) && is_python310 "$p"; then
        echo "$p"
        return
    fi
    die "no Python 3.10 found (dpctl 0.15.0 has wheels for CPython 3.9 and 3.10 only).
Tried: \`pyenv prefix 3.10.13\` and python3.10 in PATH.
Install one, e.g. \`pyenv install 3.10.13\` or your distribution's python3.10 (with its venv module),
or point XPU_ASM_SYCL_PYTHON at a Python 3.10 executable."
}

# The venv is complete when its marker names this SPEC and the pinned
# packages import at their pinned versions (the wheels carry no RPATH, hence
# LD_LIBRARY_PATH).
venv_ok() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$SPEC" ]] && [[ -x "$venv/bin/python" ]] &&
        LD_LIBRARY_PATH="$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$venv/bin/python" - <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
assert sys.version_info[:2] == (3, 10), sys.version
assert version("dpctl") == "0.15.0", version("dpctl")
assert version("dpcpp-cpp-rt") == "2024.0.3", version("dpcpp-cpp-rt")
assert int(version("numpy").split(".")[0]) < 2, version("numpy")
import numpy, dpctl, dpctl.tensor
EOF
}

if venv_ok; then
    echo "$venv"
    exit 0
fi

mkdir -p "$(dirname "$venv")" || die "cannot create $(dirname "$venv")"
command -v flock >/dev/null 2>&1 || die "flock (util-linux) not found; it keeps two runs from building one venv at once"
exec 9>"$venv.lock" || die "cannot create the lock file $venv.lock"
say "taking the lock $venv.lock (another run may be building the venv)"
flock 9
# Another run may have finished the venv while this one waited.
if venv_ok; then
    echo "$venv"
    exit 0
fi

if [[ -e "$venv" ]]; then
    # Only ever delete what looks like a venv (or an empty folder): the path
    # may have been mistyped into someone's data.
    if [[ -f "$venv/pyvenv.cfg" || -f "$marker" ]] || [[ -d "$venv" && -z "$(ls -A "$venv")" ]]; then
        say "$venv is incomplete or outdated; rebuilding it"
        rm -rf "$venv"
    else
        die "$venv exists and is not a Python venv; move it away or set XPU_ASM_SYCL_VENV elsewhere"
    fi
fi

python=$(find_python)
say "creating $venv with $python ($SPEC); about 1.4 GB to download and unpack"
"$python" -m venv "$venv" >&2 || die "\`$python -m venv $venv\` failed (is the venv module installed?)"
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check "${PACKAGES[@]}" >&2 ||
    die "pip install ${PACKAGES[*]} into $venv failed (network? disk space? see pip's output above)"
printf '%s' "$SPEC" >"$marker"
venv_ok || die "$venv was built but its packages do not import; see pip's output above"
say "ready: $venv"
echo "$venv"
