#!/usr/bin/env bash
# A Debian 11 (bullseye, glibc 2.31) root as a user's cluster node has it:
# no Rust, no C compiler; Python 3.9 with its venv module (to pip install
# the wheel) and bullseye's own Intel OpenCL driver (NEO 20.44, IGC 1.0.5353,
# with ocloc and the ICD loader). Made with debootstrap from the mirror the
# host's apt sources name, and kept (about 440 MB; 2 minutes to make).
# tests/tests/release.rs runs the release artifacts (scripts/release.sh)
# inside it; scripts/install-deps.sh makes it.
#
#   scripts/bullseye-root.sh make          create or update the root; last stdout line: its path
#   scripts/bullseye-root.sh path          print the root's path
#   scripts/bullseye-root.sh run [--bind DIR]... [--] CMD...
#                                          run CMD inside the root (chroot) with /proc, /sys,
#                                          /dev, /tmp and each DIR bind-mounted at their own
#                                          paths, in a mount namespace of its own, with the
#                                          root's PATH and nothing else of the caller's
#                                          environment but what CMD sets (env VAR=...)
#
# Environment:
#   XPU_ASM_BULLSEYE_ROOT    where the root lives (default /var/cache/xpu-asm/bullseye-root)
#   XPU_ASM_BULLSEYE_MIRROR  the Debian mirror (default: the first Debian URI of the
#                            host's apt sources; bullseye is there until it moves to
#                            the archive, then http://archive.debian.org/debian)
#
# Idempotent: a root whose marker names this exact package set is reused as
# is; one that a killed run left half-made is made again. Needs root
# (debootstrap, chroot, mount); run as another user, it uses sudo.
set -euo pipefail

PACKAGES=(python3 python3-venv intel-opencl-icd ocl-icd-libopencl1)
SPEC="xpu-asm bullseye-root 1: ${PACKAGES[*]}"
MARKER_NAME=".xpu-asm-bullseye-root"
BOOTSTRAPPED_NAME=".xpu-asm-debootstrapped"
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false -o Dpkg::Use-Pty=0)

say() { echo "bullseye-root.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

root="${XPU_ASM_BULLSEYE_ROOT:-/var/cache/xpu-asm/bullseye-root}"
case "$root" in
/*) ;;
*) root="$PWD/$root" ;;
esac
root="${root%/}"
[[ "$root" != "" && "$root" != "/" ]] || die "XPU_ASM_BULLSEYE_ROOT must not be /"
marker="$root/$MARKER_NAME"
bootstrapped="$root/$BOOTSTRAPPED_NAME"

as_root() {
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 ||
            die "not root and sudo is not available; run as root: $0 $*"
        exec sudo --preserve-env=XPU_ASM_BULLSEYE_ROOT,XPU_ASM_BULLSEYE_MIRROR "$0" "$@"
    fi
}

mirror() {
    local f uri
    if [[ -n "${XPU_ASM_BULLSEYE_MIRROR:-}" ]]; then
        echo "$XPU_ASM_BULLSEYE_MIRROR"
        return
    fi
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
    die "no Debian mirror in /etc/apt/sources.list{,.d/*}; set XPU_ASM_BULLSEYE_MIRROR (e.g. http://deb.debian.org/debian)"
}

root_ok() {
    [[ -f "$marker" ]] && [[ "$(cat "$marker")" == "$SPEC" ]]
}

# As scripts/sid-root.sh: bind-mounts ROOT's /proc, /sys, /dev, /tmp and each
# further argument before `--`, then chroots into ROOT and runs what follows.
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

in_root() {
    unshare --mount --propagation private -- bash -c "$ENTER" enter "$root" "$@"
}

make_root() {
    local m start
    if root_ok; then
        echo "$root"
        return
    fi
    command -v debootstrap >/dev/null 2>&1 ||
        die "debootstrap not found; scripts/install-deps.sh installs it (apt-get install debootstrap)"
    mkdir -p "$(dirname "$root")" || die "cannot create $(dirname "$root")"
    exec 9>"$root.lock" || die "cannot create the lock file $root.lock"
    flock 9
    if root_ok; then
        echo "$root"
        return
    fi
    m=$(mirror)
    if [[ ! -f "$bootstrapped" ]]; then
        if [[ -e "$root" ]]; then
            if [[ -f "$root/etc/debian_version" || -d "$root/debootstrap" ]] ||
                [[ -d "$root" && -z "$(ls -A "$root")" ]]; then
                say "$root is half-made (a killed run?); making it again"
                rm -rf --one-file-system "$root"
            else
                die "$root exists and is not a root this script made; move it away or set XPU_ASM_BULLSEYE_ROOT elsewhere"
            fi
        fi
        say "debootstrap --variant=minbase bullseye $root $m"
        start=$SECONDS
        unshare --mount --propagation private -- debootstrap --variant=minbase bullseye "$root" "$m" >&2 ||
            die "debootstrap of bullseye from $m into $root failed (see $root/debootstrap/debootstrap.log)"
        echo "deb $m bullseye main" >"$root/etc/apt/sources.list"
        echo "$m" >"$bootstrapped"
        say "debootstrap took $((SECONDS - start)) s"
    fi
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    say "apt-get install ${PACKAGES[*]}"
    start=$SECONDS
    # shellcheck disable=SC2016
    in_root -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive HOME=/root bash -c '
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
    root_ok || die "$root is not a complete bullseye root; make it with scripts/install-deps.sh (or $0 make)"
    for d in "${binds[@]}"; do
        [[ "$d" == /* && -d "$d" ]] || die "--bind $d: not an absolute path of a folder"
    done
    exec 9>"$root.lock" || die "cannot open the lock file $root.lock"
    flock -s 9
    in_root "${binds[@]}" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"
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
    sed -n '2,/^set /{/^#/p}' "$0"
    ;;
*)
    die "expected make, path or run (see $0 --help)"
    ;;
esac
