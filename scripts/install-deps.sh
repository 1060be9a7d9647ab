#!/usr/bin/env bash
# Installs the real Intel GPU software stack that xpu-asm's tests run against
# (Level Zero loader, NEO driver with ocloc, IGC and its tools) and the MPI
# launchers the cluster tests use (Open MPI, MPICH); see docs/real-stack.md.
# Idempotent: does nothing when everything is installed.
#
#   scripts/install-deps.sh          the stack
#   scripts/install-deps.sh --bench  the stack and valgrind (for benchmarks)
set -euo pipefail

packages=(libze1 libze-dev intel-opencl-icd libigc1 libigdfcl1 libigc-tools
    openmpi-bin libopenmpi-dev mpich)

for arg in "$@"; do
    case "$arg" in
    --bench) packages+=(valgrind) ;;
    -h | --help)
        sed -n '2,8p' "$0"
        exit 0
        ;;
    *)
        echo "install-deps.sh: unknown argument '$arg' (only --bench is known)" >&2
        exit 2
        ;;
    esac
done

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
"${sudo[@]}" apt-get update || fail "apt-get update failed."
"${sudo[@]}" apt-get install -y "${missing[@]}" || fail "apt-get install failed."

mapfile -t still < <(missing_packages)
if [[ ${#still[@]} -ne 0 ]]; then
    fail "apt-get reported success but some packages are not installed."
fi
echo "install-deps.sh: installed: ${missing[*]}"
