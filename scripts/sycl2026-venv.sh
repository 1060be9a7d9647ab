#!/usr/bin/env bash
# Creates, or reuses, the Python virtual environment that the SYCL 2026 test
# (tests/tests/sycl2026.rs) runs real prebuilt SYCL kernels from: CPython 3.12
# with dpctl 0.22.1 and dpnp 0.20.0 on oneAPI 2026.2's SYCL runtime
# (intel-sycl-rt, the Unified Runtime and its Level Zero adapters v1 and v2,
# oneMKL) from PyPI. It lives inside the Debian sid root of scripts/sid-root.sh
# (NEO 26, IGC 2, loader 1.32), the stack it runs on: oneAPI 2026 does not run
# on the host's NEO 22.43. sid's python3 is 3.14, for which dpctl has no
# wheels, so the host's Python 3.12 (a self-contained prefix such as pyenv's)
# is copied into the root at its own path, and the venv is made with it
# inside the root. From nothing: about a minute (880 MB of wheels, 2.9 GB
# installed, plus the 308 MB Python); a complete venv is checked in about 1 s.
#
#   scripts/sycl2026-venv.sh    prints the venv's path inside the root as its
#                               last stdout line
#
# Environment:
#   XPU_ASM_SYCL2026_VENV    the venv's path inside the root
#                            (default: /opt/xpu-asm/sycl2026-venv)
#   XPU_ASM_SYCL2026_PYTHON  the host's Python 3.12 to copy in (default: pyenv's
#                            newest 3.12, else python3.12 from PATH); its prefix
#                            must be its own folder, not /usr or /usr/local
#   XPU_ASM_SID_ROOT         the root (scripts/sid-root.sh's default otherwise)
#
# Idempotent and safe to run concurrently: a complete venv (marker file that
# names this exact package set, and the packages importable at the pinned
# versions inside the root) is reused as is; a missing, partial or outdated
# one is rebuilt. Progress goes to stderr; stdout carries only the path.
set -euo pipefail

# What the test asks for (dpctl, dpnp, intel-sycl-rt), then every package pip
# resolved for them on 2026-12-01, pinned so that the venv is the same
# wherever and whenever it is made.
PACKAGES=("dpctl==0.22.1" "dpnp==0.20.0" "intel-sycl-rt==2026.2.0"
    "dpcpp-cpp-rt==2026.2.0" "intel-cmplr-lib-rt==2026.2.0" "intel-cmplr-lib-ur==2026.2.0"
    "intel-cmplr-lic-rt==2026.2.0" "intel-opencl-rt==2026.2.0" "intel-openmp==2026.2.0"
    "mkl==2026.2.0" "onemkl-sycl-blas==2026.2.0" "onemkl-sycl-dft==2026.2.0"
    "onemkl-sycl-lapack==2026.2.0" "onemkl-sycl-rng==2026.2.0" "onemkl-sycl-vm==2026.2.0"
    "numpy==2.5.5" "tbb==2023.2.0" "tcmlib==1.6.0" "umf==1.2.0")
# Change this when PACKAGES or the Python version change: old venvs rebuild.
SPEC="xpu-asm sycl2026-venv 1: python 3.12; ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-sycl2026-venv"

say() { echo "sycl2026-venv.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

here=$(cd "$(dirname "$0")" && pwd -P)
sid_root_sh="$here/sid-root.sh"
[[ -f "$sid_root_sh" ]] || die "$sid_root_sh not found; it makes and enters the Debian sid root this venv lives in"
in_root() { bash "$sid_root_sh" run -- "$@"; }

root=$(bash "$sid_root_sh" path)
[[ -f "$root/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1" ]] ||
    die "no NEO in the sid root $root; make it first with scripts/install-deps.sh (or scripts/sid-root.sh make)"

venv="${XPU_ASM_SYCL2026_VENV:-/opt/xpu-asm/sycl2026-venv}"
case "$venv" in
/*) ;;
*) die "XPU_ASM_SYCL2026_VENV=$venv must be an absolute path (inside the root $root)" ;;
esac
venv="${venv%/}"
[[ "$venv" != "" ]] || die "XPU_ASM_SYCL2026_VENV must not be /"
host_venv="$root$venv"
marker="$host_venv/$MARKER_NAME"

is_python312() {
    [[ -x "$1" ]] && [[ "$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" == "3.12" ]]
}

find_python() {
    local p prefix v
    if [[ -n "${XPU_ASM_SYCL2026_PYTHON:-}" ]]; then
        is_python312 "$XPU_ASM_SYCL2026_PYTHON" ||
            die "XPU_ASM_SYCL2026_PYTHON=$XPU_ASM_SYCL2026_PYTHON is not a runnable Python 3.12"
        echo "$XPU_ASM_SYCL2026_PYTHON"
        return
    fi
    if command -v pyenv >/dev/null 2>&1; then
        for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.12\.[0-9]+$' | sort -t. -k3,3nr); do
            prefix=$(pyenv prefix "$v" 2>/dev/null) || continue
            for p in "$prefix/bin/python3.12" "$prefix/bin/python"; do
                if is_python312 "$p"; then
                    echo "$p"
                    return
                fi
            done
        done
    fi
    if p=$(command -v python3.12 2>/dev/null) && is_python312 "$p"; then
        echo "$p"
        return
    fi
    die "no Python 3.12 found on the host (dpctl 0.22.1 has wheels for CPython 3.10 to 3.13; sid's python3 is 3.14).
Tried: pyenv's 3.12 versions and python3.12 in PATH.
Install one with its own prefix, e.g. \`pyenv install 3.12\`, or point XPU_ASM_SYCL2026_PYTHON at one."
}

# The venv is complete when its marker names this SPEC and the pinned
# packages import at their pinned versions inside the root (the wheels carry
# no RPATH, hence LD_LIBRARY_PATH).
venv_ok() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$SPEC" ]] && [[ -x "$host_venv/bin/python" ]] &&
        in_root env LD_LIBRARY_PATH="$venv/lib" "$venv/bin/python" -c '
import sys
from importlib.metadata import version
assert sys.version_info[:2] == (3, 12), sys.version
assert version("dpctl") == "0.22.1", version("dpctl")
assert version("dpnp") == "0.20.0", version("dpnp")
assert version("intel-sycl-rt") == "2026.2.0", version("intel-sycl-rt")
assert version("intel-cmplr-lib-ur") == "2026.2.0", version("intel-cmplr-lib-ur")
assert version("numpy") == "2.5.5", version("numpy")
import numpy, dpctl, dpnp
' >/dev/null 2>&1
}

if venv_ok; then
    echo "$venv"
    exit 0
fi

mkdir -p "$(dirname "$host_venv")" || die "cannot create $(dirname "$host_venv")"
command -v flock >/dev/null 2>&1 || die "flock (util-linux) not found; it keeps two runs from building one venv at once"
exec 9>"$host_venv.lock" || die "cannot create the lock file $host_venv.lock"
say "taking the lock $host_venv.lock (another run may be building the venv)"
flock 9
# Another run may have finished the venv while this one waited.
if venv_ok; then
    echo "$venv"
    exit 0
fi

if [[ -e "$host_venv" ]]; then
    # Only ever delete what looks like a venv (or an empty folder): the path
    # may have been mistyped into someone's data.
    if [[ -f "$host_venv/pyvenv.cfg" || -f "$marker" ]] || [[ -d "$host_venv" && -z "$(ls -A "$host_venv")" ]]; then
        say "$host_venv is incomplete or outdated; rebuilding it"
        rm -rf --one-file-system "$host_venv"
    else
        die "$host_venv exists and is not a Python venv; move it away or set XPU_ASM_SYCL2026_VENV elsewhere"
    fi
fi

# The host's Python, copied into the root at its own path (its libpython is
# found through an RPATH that names that path).
python=$(find_python)
prefix=$("$python" -c 'import sys; print(sys.base_prefix)')
case "$prefix" in
/ | /usr | /usr/local | "")
    die "$python's prefix is $prefix, shared with the root's own Python; use a Python 3.12 with a prefix of its own (e.g. pyenv's) through XPU_ASM_SYCL2026_PYTHON"
    ;;
esac
rel_python="${python#"$prefix"/}"
if ! [[ -x "$root$prefix/$rel_python" ]] || ! in_root "$prefix/$rel_python" -c 'import ssl, venv' >/dev/null 2>&1; then
    say "copying $prefix into the root ($root$prefix)"
    rm -rf --one-file-system "$root$prefix.tmp"
    mkdir -p "$(dirname "$root$prefix")"
    cp -a "$prefix" "$root$prefix.tmp"
    rm -rf --one-file-system "$root$prefix"
    mv "$root$prefix.tmp" "$root$prefix"
    in_root "$prefix/$rel_python" -c 'import ssl, venv' >&2 ||
        die "$prefix/$rel_python, copied into $root, does not run there (see above)"
fi

# pip inside the root trusts what the host trusts (a proxy's CA, say): the
# host's CA bundle goes next to the venv, and only pip is pointed at it
# (through every variable that pip's requests reads: REQUESTS_CA_BUNDLE and
# CURL_CA_BUNDLE take precedence over PIP_CERT, and the host may set them to
# paths that inside the root name sid's bundle).
ca=""
for f in "${PIP_CERT:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
    if [[ -n "$f" && -f "$f" ]]; then
        ca=$f
        break
    fi
done
ca_in_root="$venv.ca.crt"
if [[ -n "$ca" ]]; then
    cp "$ca" "$root$ca_in_root"
fi

say "creating $venv in $root with $prefix/$rel_python ($SPEC); 880 MB to download, 2.9 GB unpacked, about a minute"
start=$SECONDS
in_root "$prefix/$rel_python" -m venv "$venv" >&2 ||
    die "\`$prefix/$rel_python -m venv $venv\` failed inside $root (see above)"
ca_env=(-u CURL_CA_BUNDLE -u REQUESTS_CA_BUNDLE -u PIP_CERT -u SSL_CERT_FILE -u PIP_FIND_LINKS)
if [[ -n "$ca" ]]; then
    ca_env+=(PIP_CERT="$ca_in_root" REQUESTS_CA_BUNDLE="$ca_in_root" SSL_CERT_FILE="$ca_in_root")
fi
in_root env "${ca_env[@]}" "$venv/bin/python" -m pip install \
    --no-input --disable-pip-version-check --no-cache-dir "${PACKAGES[@]}" >&2 ||
    die "pip install ${PACKAGES[*]} into $venv inside $root failed (network? disk space? see pip's output above)"
printf '%s' "$SPEC" >"$marker"
venv_ok || die "$venv was built but its packages do not import inside $root; see pip's output above"
say "ready: $venv in $root ($(du -sh "$host_venv" | cut -f1), $((SECONDS - start)) s to download and install)"
echo "$venv"
