#!/usr/bin/env bash
# Creates, or reuses, the Python virtual environment of the pyopencl test
# (tests/tests/pyopencl.rs): CPython 3.10 (the SYCL venv's, so that the sid
# pass of scripts/test.sh binds one Python for both) with pyopencl 2026.1.4
# from PyPI, whose wheel bundles its own ICD loader
# (pyopencl/.libs/libOpenCL-<hash>.so.1.0.0, ocl-icd reading
# /etc/OpenCL/vendors), every package pinned (about 40 MB, kept outside the
# repository and reused).
#
#   scripts/pyopencl-venv.sh    prints the venv's path as its last stdout line
#
# Environment:
#   XPU_ASM_PYOPENCL_VENV  where the venv lives
#                          (default: $HOME/.cache/xpu-asm/pyopencl-venv)
#   XPU_ASM_SYCL_PYTHON    the Python 3.10 to build it with (default: pyenv's
#                          3.10.13, else python3.10 from PATH)
#
# Idempotent and safe to run concurrently: a complete venv (a marker file
# that names this exact package set, and pyopencl importable at its pinned
# version) is reused as is; a missing, partial or outdated one is rebuilt.
# Progress goes to stderr; stdout carries only the path.
set -euo pipefail

PACKAGES=("pyopencl==2026.1.4" "numpy==2.2.6" "platformdirs==4.12.4" "pytools==2026.1.1"
    "siphash24==1.9" "typing_extensions==4.16.0")
# Change this when PACKAGES or the Python version change: old venvs rebuild.
SPEC="xpu-asm pyopencl-venv 1: python 3.10; ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-pyopencl-venv"

say() { echo "pyopencl-venv.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

venv="${XPU_ASM_PYOPENCL_VENV:-${HOME:?HOME is not set; set XPU_ASM_PYOPENCL_VENV}/.cache/xpu-asm/pyopencl-venv}"
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
    die "no Python 3.10 found. Tried: \`pyenv prefix 3.10.13\` and python3.10 in PATH.
Install one (\`pyenv install 3.10.13\`), or point XPU_ASM_SYCL_PYTHON at a Python 3.10 executable."
}

venv_ok() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$SPEC" ]] && [[ -x "$venv/bin/python" ]] &&
        "$venv/bin/python" - <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
assert sys.version_info[:2] == (3, 10), sys.version
assert version("pyopencl") == "2026.1.4", version("pyopencl")
import pyopencl
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
        die "$venv exists and is not a Python venv; move it away or set XPU_ASM_PYOPENCL_VENV elsewhere"
    fi
fi

python=$(find_python)
say "creating $venv with $python ($SPEC); about 40 MB to download"
"$python" -m venv "$venv" >&2 || die "\`$python -m venv $venv\` failed (is the venv module installed?)"
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check "${PACKAGES[@]}" >&2 ||
    die "pip install ${PACKAGES[*]} into $venv failed (network? disk space? see pip's output above)"
printf '%s' "$SPEC" >"$marker"
venv_ok || die "$venv was built but pyopencl does not import; see pip's output above"
say "ready: $venv"
echo "$venv"
