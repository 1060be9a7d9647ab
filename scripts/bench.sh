#!/usr/bin/env bash
# Benchmarks xpu-asm on this machine's real Level Zero stack (NEO in its
# no-hardware mode, see docs/real-stack.md) and prints a summary table.
#
#   scripts/bench.sh [--quick] [--only SECTIONS] [--keep]
#
#   --quick        fewer runs and launches (a smoke test, ~1.5 minutes)
#   --only LIST    comma-separated subset of the sections (all by default)
#   --keep         keep the work folder (printed at the start)
#
# Each section is a script of its own, bench/<section>.sh, sourced in this
# order when asked for: launch, callgrind, time, core, collector, mpi, ranks,
# onefile, modules, binaries, reading, sycl, port, sycl-sid, callgrind-sid,
# page (`--help` prints what each measures). bench/lib.sh holds what they
# share (the settings of a quick or a full run, the release build, helpers);
# bench/summary.py prints the table from the figures they write.
#
# A full run takes about 10 minutes on 2 cores (the sections of module
# binaries about 5 of them, the first time ~1 more to build a 100-kernel
# native module), of which ~15 s generate the
# synthetic capture (2.4 GB; reused on later runs in the same work folder).
#
# Needs: the stack of scripts/install-deps.sh, valgrind for callgrind
# (scripts/install-deps.sh --bench), gcc, python3, GNU time (/usr/bin/time).
# Environment: XPU_ASM_BENCH_DIR (work folder; default a new /tmp folder;
# the synthetic capture, ~2.3 GB, is reused from there when present),
# XPU_ASM_BENCH_ROUNDS (interleaved rounds of the launch section),
# XPU_ASM_BENCH_SID_ROOT_SH (the sid-root.sh that enters the root, default
# this checkout's: another checkout's when it made the root with other
# packages).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECTIONS=(launch callgrind time core collector mpi ranks onefile modules binaries reading sycl port
    sycl-sid callgrind-sid page)
QUICK=0
ONLY=$(
    IFS=,
    echo "${SECTIONS[*]}"
)
KEEP=0
# The first comment block of a file, without its `#`s.
header() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"; }
while [[ $# -gt 0 ]]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --only)
        ONLY="$2"
        shift
        ;;
    --keep) KEEP=1 ;;
    -h | --help)
        header "$0"
        echo
        echo "Sections:"
        for s in "${SECTIONS[@]}"; do
            printf '  %-14s %s\n' "$s" "bench/$s.sh"
            awk 'NR > 2 && /^#/ { sub(/^# ?/, "    "); print; next } NR > 2 { exit }' "$ROOT/bench/$s.sh"
        done
        exit 0
        ;;
    *)
        echo "bench.sh: unknown argument '$1' (see --help)" >&2
        exit 2
        ;;
    esac
    shift
done
want() { [[ ",$ONLY," == *",$1,"* ]]; }
for s in ${ONLY//,/ }; do
    [[ " ${SECTIONS[*]} " == *" $s "* ]] || {
        echo "bench.sh: unknown section '$s' (${SECTIONS[*]})" >&2
        exit 2
    }
done
START=$(date +%s)

if [[ -n "${XPU_ASM_BENCH_DIR:-}" ]]; then
    WORK="$XPU_ASM_BENCH_DIR"
    mkdir -p "$WORK"
    KEEP=1
else
    WORK=$(mktemp -d /tmp/xpu-asm-bench.XXXXXX)
fi
SLURM_DIR=""
cleanup() {
    # The mpi section's Slurm cluster is stopped however the run ends.
    [[ -z "$SLURM_DIR" ]] || bash "$ROOT/scripts/slurm-cluster.sh" stop "$SLURM_DIR" || true
    [[ $KEEP == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

# The results file, the settings, the release build, the shared helpers.
source "$ROOT/bench/lib.sh"
for s in "${SECTIONS[@]}"; do
    if want "$s"; then
        source "$ROOT/bench/$s.sh"
    fi
done

python3 "$ROOT/bench/summary.py" "$RESULTS" "$(nproc)" "$CPU" "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    "$(pkgver libze1)" "$(pkgver intel-opencl-icd)" "$(pkgver libigc1)" "$QUICK" "$ROUNDS" \
    "$WORK" "$(($(date +%s) - START))" "$(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -s "$RANKS_TABLE" ]]; then
    echo "One job at 1 to 128 ranks on this host (section ranks; bench/ranks.py):"
    cat "$RANKS_TABLE"
fi
