#!/usr/bin/env bash
# Today's Intel GPU stack beside the host's: a root of Debian sid's packages
# (Level Zero loader 1.32, NEO 26, IGC 2; docs/real-stack.md, "Today's stack:
# Debian sid"), made with debootstrap from the mirror the host's apt sources
# name, and the tests' tools (gcc, python3, Open MPI, MPICH) inside it. The
# host's packages are not touched. scripts/install-deps.sh makes it;
# scripts/test.sh runs the integration tests inside it.
#
#   scripts/sid-root.sh make          create or update the root; last stdout line: its path
#   scripts/sid-root.sh path          print the root's path
#   scripts/sid-root.sh run [--bind DIR]... [--] CMD...
#                                     run CMD inside the root (chroot) with /proc, /sys,
#                                     /dev, /tmp, this workspace, CARGO_TARGET_DIR and each
#                                     DIR bind-mounted at their own paths, in a mount
#                                     namespace of its own (nothing stays mounted after)
#
# Environment:
#   XPU_ASM_SID_ROOT    where the root lives (default /var/cache/xpu-asm/sid-root)
#   XPU_ASM_SID_MIRROR  the Debian mirror (default: the first Debian URI of the
#                       host's /etc/apt/sources.list{,.d/*})
#
# Idempotent: a root whose marker names this exact package set is reused as
# is (a changed set is installed into it); a root that a killed run left
# half-made is detected (no debootstrap marker) and made again. Needs root
# (debootstrap, chroot, mount); run as another user, it uses sudo.
set -euo pipefail

# What the tests need inside: the stack (with the OpenCL ICD loader and
# headers, for the OpenCL workload), the C build, the tools the tests
# call (python3 for the terminal tests, procps for kill, binutils for
# readelf, spirv-tools for the modules of hostile names the tests
# assemble), both MPI launchers, and Slurm with munge (about 11 MB: the
# tests start a one-host cluster of their own, scripts/slurm-cluster.sh).
PACKAGES=(libze1 libze-dev libze-intel-gpu1 intel-opencl-icd intel-ocloc libigc2-tools
    ocl-icd-libopencl1 opencl-c-headers
    gcc libc6-dev binutils spirv-tools python3 procps openmpi-bin libopenmpi-dev mpich
    slurmctld slurmd slurm-client munge)
SPEC="xpu-asm sid-root 1: ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-sid-root"
BOOTSTRAPPED_NAME=".xpu-asm-debootstrapped"
# The archive here is a dated snapshot whose Release is past its Valid-Until.
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false -o Dpkg::Use-Pty=0)

say() { echo "sid-root.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

workspace=$(cd "$(dirname "$0")/.." && pwd -P)
root="${XPU_ASM_SID_ROOT:-/var/cache/xpu-asm/sid-root}"
case "$root" in
/*) ;;
*) root="$PWD/$root" ;;
esac
root="${root%/}"
[[ "$root" != "" && "$root" != "/" ]] || die "XPU_ASM_SID_ROOT must not be /"
marker="$root/$MARKER_NAME"
bootstrapped="$root/$BOOTSTRAPPED_NAME"

# Everything below needs root; as another user, run this script again with sudo.
as_root() {
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 ||
            die "not root and sudo is not available; run as root: $0 $*"
        exec sudo --preserve-env=XPU_ASM_SID_ROOT,XPU_ASM_SID_MIRROR,XPU_ASM_STACK,CARGO_TARGET_DIR,RUST_BACKTRACE,RUST_TEST_THREADS \
            "$0" "$@"
    fi
}

# The first Debian URI of the host's apt sources (one-line and deb822 forms).
host_mirror() {
    local f uri
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] || continue
        uri=$(awk '
            /^[[:space:]]*#/ { next }
            $1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }
            $1 == "URIs:" { for (i = 2; i <= NF; i++) print $i }
        ' "$f" | grep -E '/debian/?$' | head -n1 || true)
        if [[ -n "$uri" ]]; then
            echo "${uri%/}"
            return
        fi
    done
    return 1
}

mirror() {
    if [[ -n "${XPU_ASM_SID_MIRROR:-}" ]]; then
        echo "$XPU_ASM_SID_MIRROR"
    else
        host_mirror || die "no Debian mirror in /etc/apt/sources.list{,.d/*}; set XPU_ASM_SID_MIRROR (e.g. http://deb.debian.org/debian)"
    fi
}

root_ok() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$SPEC" ]]
}

# Mounts at or under the root in this mount namespace (there should be none:
# every use mounts in a namespace of its own).
mounts_under_root() {
    awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo
}

# Runs "$@" (a shell script for bash -c, and its arguments) in a mount
# namespace of its own (with ENTER, the binds below).
in_namespace() {
    unshare --mount --propagation private -- "$@"
}

# The script run by unshare: bind-mounts ROOT's /proc, /sys, /dev, /tmp and
# each further argument before `--`, then chroots into ROOT and runs what
# follows `--`.
# shellcheck disable=SC2016
ENTER='
set -euo pipefail
root=$1
shift
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
binds=(/tmp)
while [[ $# -gt 0 && "$1" != "--" ]]; do
    binds+=("$1")
    shift
done
shift
for d in "${binds[@]}"; do
    mkdir -p "$root$d"
    mount --rbind "$d" "$root$d"
done
exec chroot "$root" "$@"
'

# The host's name service files: DNS for apt, and the host's own name (MPI
# launchers connect back to it).
host_files() {
    local f
    for f in /etc/resolv.conf /etc/hosts; do
        # Into place in one step: runs at the same time read these files.
        if [[ -f "$f" ]] && ! cmp -s "$f" "$root$f"; then
            cp "$f" "$root$f.xpu-asm-$$" && mv -f "$root$f.xpu-asm-$$" "$root$f" || true
        fi
    done
}

make_root() {
    local m start
    if root_ok; then
        echo "$root"
        return
    fi
    command -v debootstrap >/dev/null 2>&1 ||
        die "debootstrap not found; scripts/install-deps.sh installs it (apt-get install debootstrap)"
    command -v unshare >/dev/null 2>&1 || die "unshare (util-linux) not found"
    mkdir -p "$(dirname "$root")" || die "cannot create $(dirname "$root")"
    exec 9>"$root.lock" || die "cannot create the lock file $root.lock"
    say "taking the lock $root.lock (another run may be making or using the root)"
    flock 9
    if root_ok; then
        echo "$root"
        return
    fi
    [[ -z "$(mounts_under_root)" ]] ||
        die "something is mounted under $root ($(mounts_under_root | tr '\n' ' ')); unmount it first"
    m=$(mirror)
    if [[ ! -f "$bootstrapped" ]]; then
        if [[ -e "$root" ]]; then
            # Only ever delete what this script made (or an empty folder).
            if [[ -f "$root/etc/debian_version" || -d "$root/debootstrap" ]] ||
                [[ -d "$root" && -z "$(ls -A "$root")" ]]; then
                say "$root is half-made (a killed run?); making it again"
                rm -rf --one-file-system "$root"
            else
                die "$root exists and is not a root this script made; move it away or set XPU_ASM_SID_ROOT elsewhere"
            fi
        fi
        say "debootstrap --variant=minbase sid $root $m"
        start=$SECONDS
        in_namespace debootstrap --variant=minbase --include=ca-certificates sid "$root" "$m" >&2 ||
            die "debootstrap of sid from $m into $root failed (see its log: $root/debootstrap/debootstrap.log)"
        echo "deb $m sid main" >"$root/etc/apt/sources.list"
        echo "$m" >"$bootstrapped"
        say "debootstrap took $((SECONDS - start)) s"
    fi
    host_files
    say "apt-get install ${PACKAGES[*]}"
    start=$SECONDS
    # shellcheck disable=SC2016
    in_namespace bash -c "$ENTER" enter "$root" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive HOME=/root bash -c '
            set -e
            dpkg --configure -a
            apt-get "$@" update
            apt-get "$@" install -y '"${PACKAGES[*]}"'
            apt-get clean
        ' apt "${APT_OPTS[@]}" >&2 ||
        die "installing ${PACKAGES[*]} into $root failed (see apt's output above; the mirror is $m)"
    printf '%s' "$SPEC" >"$marker"
    say "apt-get took $((SECONDS - start)) s"
    say "ready: $root"
    echo "$root"
}

run_in_root() {
    local binds=() d
    while [[ $# -gt 0 ]]; do
        case "$1" in
        --bind)
            [[ $# -ge 2 ]] || die "--bind needs a folder"
            binds+=("$2")
            shift 2
            ;;
        --)
            shift
            break
            ;;
        *) break ;;
        esac
    done
    [[ $# -gt 0 ]] || die "run: no command given"
    root_ok || die "$root is not a complete sid root; make it with scripts/install-deps.sh (or $0 make)"
    binds+=("$workspace")
    if [[ -n "${CARGO_TARGET_DIR:-}" ]]; then
        binds+=("$(cd "$CARGO_TARGET_DIR" && pwd -P)")
    fi
    for d in "${binds[@]}"; do
        [[ "$d" == /* && -d "$d" ]] || die "--bind $d: not an absolute path of a folder"
    done
    exec 9>"$root.lock" || die "cannot open the lock file $root.lock"
    # Shared: many runs at once, but none while the root is being made.
    flock -s 9
    host_files
    # The root's own tools and libraries, never the host's.
    in_namespace bash -c "$ENTER" enter "$root" "${binds[@]}" -- \
        env -u LD_LIBRARY_PATH -u LD_PRELOAD PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

case "${1:-}" in
make)
    shift
    as_root make "$@"
    make_root
    ;;
path)
    echo "$root"
    ;;
run)
    shift
    as_root run "$@"
    run_in_root "$@"
    ;;
-h | --help)
    sed -n '2,25p' "$0"
    ;;
*)
    die "expected make, path or run (see $0 --help)"
    ;;
esac
