#!/usr/bin/env bash
# Creates, or reuses, the Python virtual environment that the llama.cpp test
# (tests/tests/llama.rs) runs llama.cpp's SYCL backend from: CPython 3.12
# with cyllama-sycl 0.7.0 (llama.cpp b11669 and its libggml-sycl.so, built
# with DPC++ 2025.3.3, SPIR-V only), the oneAPI 2025.3 runtime that library
# was built against (intel-sycl-rt 2025.3.3, oneMKL's BLAS 2025.3.1, MKL
# 2025.3.1, oneDNN 2025.3.0: oneAPI 2026.2's runtime has other sonames), and
# gguf 0.19.0, with which the test writes its model. It lives inside the
# Debian sid root of scripts/sid-root.sh (NEO 26, IGC 2, loader 1.32), the
# stack it runs on. cyllama-sycl's wheel is for CPython 3.12 and later only
# (cp312-abi3): a plain `pip download` on an older Python silently takes
# 0.2.18, so the wheels are downloaded for Python 3.12 on
# manylinux by name, then installed from that folder alone. The
# host's Python 3.12 (a self-contained prefix such as pyenv's) is copied
# into the root at its own path, as scripts/sycl2026-venv.sh does. From
# nothing: about a minute (about 900 MB of wheels, 2.6 GB installed); a
# complete venv is checked in about 1 s.
#
#   scripts/llama-venv.sh    prints the venv's path inside the root as its
#                            last stdout line
#
# Environment:
#   XPU_ASM_LLAMA_VENV       the venv's path inside the root
#                            (default: /opt/xpu-asm/llama-venv)
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

# What the test asks for (cyllama-sycl, the runtime it was built against,
# gguf), then every package pip resolved for them on 2026-12-07, pinned so
# that the venv is the same wherever and whenever it is made.
PACKAGES=("cyllama-sycl==0.7.0" "intel-sycl-rt==2025.3.3" "onemkl-sycl-blas==2025.3.1"
    "mkl==2025.3.1" "onednn==2025.3.0" "gguf==0.19.0" "numpy==2.5.5"
    "dpcpp-cpp-rt==2025.3.3" "intel-cmplr-lib-rt==2025.3.3" "intel-cmplr-lib-ur==2025.3.3"
    "intel-cmplr-lic-rt==2025.3.3" "intel-opencl-rt==2025.3.3" "intel-openmp==2025.3.3"
    "onemkl-license==2025.3.1" "tbb==2022.3.1" "tcmlib==1.6.0" "umf==1.0.3"
    "pyyaml==6.0.4" "tqdm==4.70.1" "requests==2.34.2" "certifi==2026.10.19.post1"
    "charset_normalizer==3.5.3" "idna==3.21" "urllib3==2.8.0")
# The wheels' Python and platforms, named when downloading (cyllama-sycl's
# wheel is manylinux_2_35, oneAPI's and NumPy's manylinux_2_28; pure Python
# wheels are "any").
PY_VERSION=3.12
PLATFORMS=(manylinux_2_35_x86_64 manylinux_2_28_x86_64)
# Change this when PACKAGES or the Python version change: old venvs rebuild.
SPEC="xpu-asm llama-venv 1: python $PY_VERSION ${PLATFORMS[*]}; ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-llama-venv"

say() { echo "llama-venv.sh: $*" >&2; }
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

venv="${XPU_ASM_LLAMA_VENV:-/opt/xpu-asm/llama-venv}"
case "$venv" in
/*) ;;
*) die "XPU_ASM_LLAMA_VENV=$venv must be an absolute path (inside the root $root)" ;;
esac
venv="${venv%/}"
[[ "$venv" != "" ]] || die "XPU_ASM_LLAMA_VENV must not be /"
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
    die "no Python 3.12 found on the host (cyllama-sycl 0.7.0's wheel is cp312-abi3; the test's venv is pinned to 3.12).
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
assert version("cyllama-sycl") == "0.7.0", version("cyllama-sycl")
assert version("intel-sycl-rt") == "2025.3.3", version("intel-sycl-rt")
assert version("onemkl-sycl-blas") == "2025.3.1", version("onemkl-sycl-blas")
assert version("gguf") == "0.19.0", version("gguf")
import numpy, gguf, cyllama
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
        die "$host_venv exists and is not a Python venv; move it away or set XPU_ASM_LLAMA_VENV elsewhere"
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

say "creating $venv in $root with $prefix/$rel_python ($SPEC); about 900 MB to download, 2.6 GB unpacked, about a minute"
start=$SECONDS
in_root "$prefix/$rel_python" -m venv "$venv" >&2 ||
    die "\`$prefix/$rel_python -m venv $venv\` failed inside $root (see above)"
ca_env=(-u CURL_CA_BUNDLE -u REQUESTS_CA_BUNDLE -u PIP_CERT -u SSL_CERT_FILE -u PIP_FIND_LINKS)
if [[ -n "$ca" ]]; then
    ca_env+=(PIP_CERT="$ca_in_root" REQUESTS_CA_BUNDLE="$ca_in_root" SSL_CERT_FILE="$ca_in_root")
fi
wheels="$venv.wheels"
rm -rf --one-file-system "$root$wheels"
# The wheels for CPython 3.12 on this platform, by name (a plain download
# on another Python would resolve cyllama-sycl to another version), then
# the venv made from that folder alone.
in_root env "${ca_env[@]}" "$venv/bin/python" -m pip download \
    --no-input --disable-pip-version-check --no-cache-dir --no-deps --only-binary=:all: \
    --python-version "$PY_VERSION" --implementation cp "${PLATFORMS[@]/#/--platform=}" \
    -d "$wheels" "${PACKAGES[@]}" >&2 ||
    die "pip download ${PACKAGES[*]} for Python $PY_VERSION on ${PLATFORMS[*]} inside $root failed (network? disk space? see pip's output above)"
in_root env "${ca_env[@]}" "$venv/bin/python" -m pip install \
    --no-input --disable-pip-version-check --no-cache-dir --no-index --find-links "$wheels" \
    "${PACKAGES[@]}" >&2 ||
    die "pip install ${PACKAGES[*]} from $wheels into $venv inside $root failed (see pip's output above)"
rm -rf --one-file-system "$root$wheels"
printf '%s' "$SPEC" >"$marker"
venv_ok || die "$venv was built but its packages do not import inside $root; see pip's output above"
say "ready: $venv in $root ($(du -sh "$host_venv" | cut -f1), $((SECONDS - start)) s to download and install)"
echo "$venv"
