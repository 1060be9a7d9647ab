#!/usr/bin/env bash
# Installs the real Intel GPU software stacks that xpu-asm's tests run
# against, and the launchers the cluster tests use (Open MPI, MPICH, Slurm
# and munge, Intel MPI from PyPI); see docs/real-stack.md and docs/clusters.md:
# - on the host, Debian 12's stack (Level Zero loader 1.8, NEO 22.43 with
#   ocloc, IGC 1 and its tools, the OpenCL ICD loader and headers, spirv-as
#   for the tests' modules of hostile names), Slurm's daemons and munge (never started
#   here: the tests start a cluster of their own, scripts/slurm-cluster.sh),
#   and debootstrap;
# - Intel MPI (impi-rt, impi-devel from PyPI) in a venv, scripts/impi-venv.sh;
# - pyopencl from PyPI in a venv, scripts/pyopencl-venv.sh;
# - in a root of Debian sid's packages beside it, today's stack (loader 1.32,
#   NEO 26, IGC 2), made by scripts/sid-root.sh and kept between runs, with
#   the venvs of its SYCL tests (scripts/sycl2026-venv.sh, scripts/llama-venv.sh).
# - for the test of the release (tests/tests/release.rs): the release
#   build's tools from PyPI (maturin, zig, auditwheel) in a venv,
#   scripts/release-venv.sh, and a Debian 11 root beside the host's system,
#   made by scripts/bullseye-root.sh and kept between runs;
# - on the host, for the test of the page to browse (tests/tests/page.rs):
#   Debian's chromium, Node.js (20 or later, with its npm), and playwright-core from the npm
#   registry into tests/browser/node_modules (`npm ci`: the version of
#   tests/browser/package-lock.json; it drives Debian's chromium and never
#   downloads a browser).
# Idempotent: does nothing when everything is installed. Each step is timed.
#
#   scripts/install-deps.sh          both stacks (what scripts/test.sh and CI run on)
#   scripts/install-deps.sh --bench  both stacks and valgrind (for benchmarks)
#   scripts/install-deps.sh --no-sid the host's stack only
#   scripts/install-deps.sh --demo   what scripts/demo.sh runs, nothing else:
#                                    the loader and its headers (libze1,
#                                    libze-dev), NEO with ocloc
#                                    (intel-opencl-icd), IGC with IGA's library
#                                    (libigc1, libigdfcl1), and the C compiler
#                                    (gcc, libc6-dev); no MPI, Slurm, browser,
#                                    venv or sid root
set -euo pipefail

packages=(libze1 libze-dev intel-opencl-icd libigc1 libigdfcl1 libigc-tools
    ocl-icd-libopencl1 opencl-c-headers spirv-tools
    openmpi-bin libopenmpi-dev mpich slurmctld slurmd slurm-client munge libpmix-dev
    debootstrap chromium nodejs)
# The demo: its workload's C build (gcc, libc6-dev and the loader's headers),
# ocloc for its modules, the stack its capture runs on; the C compiler also
# links the Rust build (and builds mimalloc's C).
demo_packages=(libze1 libze-dev intel-opencl-icd libigc1 libigdfcl1 gcc libc6-dev)
sid=1
demo=0
bench=0

for arg in "$@"; do
    case "$arg" in
    --bench) bench=1 ;;
    --no-sid) sid=0 ;;
    --demo) demo=1 ;;
    -h | --help)
        sed -n '2,/^set /{/^#/p}' "$0"
        exit 0
        ;;
    *)
        echo "install-deps.sh: unknown argument '$arg' (--bench, --no-sid and --demo are known)" >&2
        exit 2
        ;;
    esac
done
if [[ $demo -eq 1 ]]; then
    packages=("${demo_packages[@]}")
    sid=0
fi
if [[ $bench -eq 1 ]]; then
    packages+=(valgrind)
fi

# The steps after the host's packages: none for the demo.
after_packages() {
    [[ $demo -eq 0 ]] || return 0
    browser_deps
    impi_venv
    pyopencl_venv
    release_deps
    sid_root
}

# The release build's tools and the Debian 11 root its artifacts are tested
# in (after the host's packages, which bring debootstrap).
release_deps() {
    local start=$SECONDS
    bash "$(dirname "$0")/release-venv.sh" >/dev/null ||
        {
            echo "install-deps.sh: the release venv could not be made (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: release venv ready ($((SECONDS - start)) s)"
    start=$SECONDS
    bash "$(dirname "$0")/bullseye-root.sh" make >/dev/null ||
        {
            echo "install-deps.sh: the Debian 11 root could not be made (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: Debian 11 root ready ($((SECONDS - start)) s)"
}

# playwright-core for tests/browser/check.mjs, as its lock file pins it.
browser_deps() {
    local dir start=$SECONDS
    dir="$(dirname "$0")/../tests/browser"
    command -v npm >/dev/null 2>&1 ||
        {
            echo "install-deps.sh: no npm: install Node.js 20 or later with its npm (Debian's package npm)" >&2
            exit 1
        }
    if [[ -f "$dir/node_modules/.package-lock.json" ]] &&
        cmp -s <(grep -A1 '"node_modules/playwright-core"' "$dir/package-lock.json") \
            <(grep -A1 '"node_modules/playwright-core"' "$dir/node_modules/.package-lock.json"); then
        return 0
    fi
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        {
            echo "install-deps.sh: npm ci in tests/browser failed (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: tests/browser: playwright-core installed ($((SECONDS - start)) s)"
}

# Intel MPI from PyPI, in a venv kept between runs.
impi_venv() {
    local start=$SECONDS
    bash "$(dirname "$0")/impi-venv.sh" >/dev/null ||
        {
            echo "install-deps.sh: the Intel MPI venv could not be made (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: Intel MPI venv ready ($((SECONDS - start)) s)"
}

# pyopencl from PyPI, in a venv kept between runs (tests/tests/pyopencl.rs).
pyopencl_venv() {
    local start=$SECONDS
    bash "$(dirname "$0")/pyopencl-venv.sh" >/dev/null ||
        {
            echo "install-deps.sh: the pyopencl venv could not be made (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: pyopencl venv ready ($((SECONDS - start)) s)"
}

# Today's stack, in its root (after the host's packages, which bring debootstrap).
sid_root() {
    local start=$SECONDS
    [[ $sid -eq 1 ]] || return 0
    bash "$(dirname "$0")/sid-root.sh" make >/dev/null ||
        {
            echo "install-deps.sh: the Debian sid root could not be made (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: sid root ready ($((SECONDS - start)) s)"
    # oneAPI 2026's SYCL runtime (dpctl, dpnp) for the SYCL tests of the sid
    # stack, in a venv inside the root, kept between runs.
    start=$SECONDS
    bash "$(dirname "$0")/sycl2026-venv.sh" >/dev/null ||
        {
            echo "install-deps.sh: the SYCL 2026 venv could not be made (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: SYCL 2026 venv ready ($((SECONDS - start)) s)"
    # llama.cpp's SYCL backend (cyllama-sycl on oneAPI 2025.3's runtime)
    # for tests/tests/llama.rs, in a venv inside the root, kept between runs.
    start=$SECONDS
    bash "$(dirname "$0")/llama-venv.sh" >/dev/null ||
        {
            echo "install-deps.sh: the llama.cpp venv could not be made (see above)" >&2
            exit 1
        }
    echo "install-deps.sh: llama.cpp venv ready ($((SECONDS - start)) s)"
}

missing_packages() {
    local p status
    for p in "${packages[@]}"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        if [[ "$status" != "install ok installed" ]]; then
            echo "$p"
        fi
    done
}

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps.sh: dpkg-query not found; this script knows Debian/Ubuntu only." >&2
    echo "Install these packages (or your distribution's equivalents): ${packages[*]}" >&2
    exit 1
fi

mapfile -t missing < <(missing_packages)
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps.sh: all installed: ${packages[*]}"
    after_packages
    exit 0
fi

echo "install-deps.sh: missing: ${missing[*]}"

sudo=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "install-deps.sh: not root and sudo is not available." >&2
        echo "As root, run: apt-get update && apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

fail() {
    echo "install-deps.sh: $1" >&2
    mapfile -t still < <(missing_packages)
    echo "Still missing: ${still[*]:-(none)}" >&2
    echo "Install them with: ${sudo[*]:+${sudo[*]} }apt-get update && ${sudo[*]:+${sudo[*]} }apt-get install -y ${still[*]:-${missing[*]}}" >&2
    echo "(the packages are in Debian bookworm main; see docs/real-stack.md)" >&2
    exit 1
}

export DEBIAN_FRONTEND=noninteractive
start=$SECONDS
"${sudo[@]}" apt-get update || fail "apt-get update failed."
"${sudo[@]}" apt-get install -y "${missing[@]}" || fail "apt-get install failed."

mapfile -t still < <(missing_packages)
if [[ ${#still[@]} -ne 0 ]]; then
    fail "apt-get reported success but some packages are not installed."
fi
echo "install-deps.sh: installed: ${missing[*]} ($((SECONDS - start)) s)"
after_packages
