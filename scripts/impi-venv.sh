#!/usr/bin/env bash
# Creates, or reuses, the Python virtual environment holding Intel MPI from
# PyPI for the Intel MPI tests (tests/tests/impi.rs): `impi-rt` 2021.19.0
# (mpiexec, libmpi) and `impi-devel` (mpicc), installed with --no-deps:
# impi-rt 2021.19.0 requires libfabric>=2.6, which is not on PyPI, and on one
# host with I_MPI_FABRICS=shm libfabric is never loaded (docs/clusters.md).
#
#   scripts/impi-venv.sh        prints the venv's path as its last stdout line
#
# Environment:
#   XPU_ASM_IMPI_VENV  where the venv lives (default: $HOME/.cache/xpu-asm/impi-venv)
#
# Idempotent and safe to run concurrently: a complete venv (a marker file
# that names this exact package set, and mpiexec runnable) is reused as is;
# a missing, partial or outdated one is rebuilt. Progress goes to stderr;
# stdout carries only the path.
set -euo pipefail

PACKAGES=("impi-rt==2021.19.0" "impi-devel==2021.19.0")
# Change this when PACKAGES change: old venvs rebuild.
SPEC="xpu-asm impi-venv 1: --no-deps ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-impi-venv"

say() { echo "impi-venv.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

venv="${XPU_ASM_IMPI_VENV:-${HOME:?HOME is not set; set XPU_ASM_IMPI_VENV}/.cache/xpu-asm/impi-venv}"
case "$venv" in
/*) ;;
*) venv="$PWD/$venv" ;;
esac
venv="${venv%/}"
marker="$venv/$MARKER_NAME"

# (Its output is read whole: `mpiexec --version | grep -q` fails under
# pipefail when grep stops reading before mpiexec has written.)
venv_ok() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$SPEC" ]] && [[ -x "$venv/bin/mpiexec" ]] &&
        [[ "$("$venv/bin/mpiexec" --version 2>/dev/null)" == *"Intel(R) MPI Library"* ]]
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
        die "$venv exists and is not a Python venv; move it away or set XPU_ASM_IMPI_VENV elsewhere"
    fi
fi

python=$(command -v python3) || die "python3 not found (with its venv module: apt-get install python3-venv)"
say "creating $venv ($SPEC); about 100 MB to download"
"$python" -m venv "$venv" >&2 || die "\`$python -m venv $venv\` failed (is the venv module installed?)"
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check --no-deps "${PACKAGES[@]}" >&2 ||
    die "pip install --no-deps ${PACKAGES[*]} into $venv failed (network? disk space? see pip's output above)"
printf '%s' "$SPEC" >"$marker"
venv_ok || die "$venv was built but $venv/bin/mpiexec does not run; see pip's output above"
say "ready: $venv"
echo "$venv"
