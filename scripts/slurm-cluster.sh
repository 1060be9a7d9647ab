#!/usr/bin/env bash
# A one-host Slurm cluster for the tests and the benchmarks: Debian's munged,
# slurmctld and slurmd (scripts/install-deps.sh installs them), started by
# hand with every path under a folder of their own and ports of their own
# (free ones, picked at start), never the system's /etc/slurm, /run/munge or
# /var/spool. docs/clusters.md has the facts it rests on.
#
#   scripts/slurm-cluster.sh start OWNER_PID
#       cleans up clusters whose owner has died, then starts one under
#       ${TMPDIR:-/tmp}/xpu-asm-slurm/<owner>-<n>/ and waits until its node is
#       idle; the last stdout line is the folder. Clients use it with
#       SLURM_CONF=<folder>/slurm.conf.
#   scripts/slurm-cluster.sh stop DIR
#       cancels every job, stops the daemons by their pid files, kills any
#       slurmstepd and task left of this cluster, and removes DIR.
#   scripts/slurm-cluster.sh clean
#       stops every cluster whose owner has died.
#
# Every process of a cluster carries XPU_ASM_SLURM_CLUSTER=<folder> in its
# environment (the daemons, and slurmstepd, which inherits slurmd's), or
# SLURM_CONF=<folder>/slurm.conf (the clients and their tasks): that is how
# stop finds what a killed run left.
set -euo pipefail

say() { echo "slurm-cluster.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

base="${TMPDIR:-/tmp}/xpu-asm-slurm"
MARKER=XPU_ASM_SLURM_CLUSTER
# This script's own processes are no part of any cluster.
unset SLURM_CONF "$MARKER"

alive() { [[ -e /proc/$1 ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# This shell and its callers, up to pid 1.
ancestors() {
    local p=$$
    while [[ "$p" =~ ^[0-9]+$ && $p -gt 1 ]]; do
        echo "$p"
        p=$(awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$p/stat" 2>/dev/null || echo 0)
    done
}

# A process's session (field 6 of /proc/PID/stat).
session_of() { awk '{ sub(/^.*\) /, ""); print $4 }' "/proc/$1/stat" 2>/dev/null || true; }

# The pids whose environment holds exactly the string $1, but this shell,
# its callers and their session (a caller may have exported SLURM_CONF; a
# cluster's tasks and slurmstepd run in sessions of their own).
pids_with_env() {
    local p own
    own=$(session_of $$)
    grep -lzxF -- "$1" /proc/[0-9]*/environ 2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' |
        grep -vxF -f <(ancestors) | while read -r p; do
        [[ "$(session_of "$p")" == "$own" ]] || echo "$p"
    done || true
}

# Waits up to $1 tenths of a second for the pids $2... to end.
wait_gone() {
    local n=$1 p left
    shift
    while ((n-- > 0)); do
        left=0
        for p in "$@"; do
            if alive "$p"; then left=1; fi
        done
        ((left)) || return 0
        sleep 0.1
    done
    return 1
}

# Stops the process of pid file $1: SIGTERM, then SIGKILL after 5 s.
stop_pidfile() {
    local pid
    [[ -f "$1" ]] || return 0
    pid=$(cat "$1" 2>/dev/null || true)
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    wait_gone 50 "$pid" || kill -KILL "$pid" 2>/dev/null || true
    wait_gone 20 "$pid" || true
}

stop_cluster() {
    local dir=$1 conf=$1/slurm.conf ids pids munged
    [[ -d "$dir" && "$dir" == "$base"/* ]] || die "stop: $dir is not a cluster folder under $base"
    if [[ -f "$dir/slurmctld.pid" ]] && alive "$(cat "$dir/slurmctld.pid" 2>/dev/null || echo 0)"; then
        # Jobs first: slurmstepd and the tasks outlive slurmd.
        ids=$(SLURM_CONF=$conf timeout 10 squeue -h -o %i 2>/dev/null || true)
        if [[ -n "$ids" ]]; then
            # shellcheck disable=SC2086
            SLURM_CONF=$conf timeout 10 scancel $ids 2>/dev/null || true
            for _ in $(seq 100); do
                [[ -n "$(SLURM_CONF=$conf timeout 10 squeue -h -o %i 2>/dev/null || true)" ]] || break
                sleep 0.1
            done
        fi
    fi
    stop_pidfile "$dir/slurmd.pid"
    stop_pidfile "$dir/slurmctld.pid"
    # Whatever is left of this cluster: slurmstepd, tasks, clients.
    munged=$(cat "$dir/munged.pid" 2>/dev/null || echo none)
    mapfile -t pids < <({ pids_with_env "$MARKER=$dir"; pids_with_env "SLURM_CONF=$conf"; } | sort -u | grep -vx "$munged")
    if [[ ${#pids[@]} -gt 0 ]]; then
        say "killing what is left of $dir: $(for p in "${pids[@]}"; do printf '%s(%s) ' "$p" "$(cat "/proc/$p/comm" 2>/dev/null)"; done)"
        kill -KILL "${pids[@]}" 2>/dev/null || true
        wait_gone 50 "${pids[@]}" || say "still running after SIGKILL: ${pids[*]}"
    fi
    stop_pidfile "$dir/munged.pid"
    rm -rf --one-file-system "$dir"
    # pid 1 reaps the daemons a moment after they end: wait for it, so that
    # no `[slurmd] <defunct>` is seen once this returns.
    for _ in $(seq 50); do
        ps -eo stat=,comm= | grep -qE '^Z.* (slurm|munged)' || break
        sleep 0.1
    done
}

clean_stale() {
    local d owner
    [[ -d "$base" ]] || return 0
    for d in "$base"/*/; do
        d=${d%/}
        [[ -d "$d" ]] || continue
        owner=$(cat "$d/owner" 2>/dev/null || echo 0)
        if [[ "$owner" =~ ^[0-9]+$ ]] && alive "$owner" && [[ "$(cat "$d/owner-start" 2>/dev/null)" == "$(start_time "$owner")" ]]; then
            continue
        fi
        say "stopping the cluster $d of an earlier run (owner $owner has ended)"
        stop_cluster "$d"
    done
}

# A process's start time (field 22 of /proc/PID/stat): with the pid, it
# names the process even when the pid is reused.
start_time() { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null || true; }

# Two free TCP ports (the kernel's choice; a daemon binds each a moment later).
free_ports() {
    python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("", 0))
print(*(x.getsockname()[1] for x in s))'
}

write_conf() {
    local dir=$1 host=$2 ctld_port=$3 d_port=$4
    cat >"$dir/slurm.conf" <<EOF
# A one-host cluster of xpu-asm's tests (scripts/slurm-cluster.sh).
ClusterName=xpuasm
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=2
MailProg=/bin/true
NodeName=$host CPUs=64 State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start_cluster() {
    local owner=$1 dir host ports i state
    for p in munged slurmctld slurmd srun sbatch squeue scontrol sinfo python3; do
        command -v "$p" >/dev/null 2>&1 ||
            die "$p not found; scripts/install-deps.sh installs Slurm and munge (apt-get install slurmctld slurmd slurm-client munge libpmix-dev)"
    done
    alive "$owner" || die "start: owner pid $owner is not running"
    clean_stale
    mkdir -p "$base"
    chmod 0711 "$base"
    dir=$(mktemp -d "$base/$owner-XXXXXX")
    # munged refuses a socket folder not executable by all.
    chmod 0711 "$dir"
    echo "$owner" >"$dir/owner"
    start_time "$owner" >"$dir/owner-start"
    mkdir -m 0711 "$dir/munge"
    mkdir -m 0700 "$dir/state" "$dir/spool"
    head -c 1024 /dev/urandom >"$dir/munge.key"
    chmod 0400 "$dir/munge.key"
    host=$(hostname -s)
    read -r -a ports < <(free_ports)
    write_conf "$dir" "$host" "${ports[0]}" "${ports[1]}"
    export "$MARKER=$dir" SLURM_CONF="$dir/slurm.conf"
    munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge.key" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
        --seed-file="$dir/munged.seed" ||
        { stop_cluster "$dir"; die "munged did not start (its log: see above)"; }
    slurmctld -f "$SLURM_CONF" || { stop_cluster "$dir"; die "slurmctld did not start"; }
    slurmd -f "$SLURM_CONF" || { stop_cluster "$dir"; die "slurmd did not start"; }
    for i in $(seq 200); do
        state=$(sinfo -h -N -o %T 2>/dev/null || true)
        [[ "$state" != idle ]] || break
        sleep 0.1
    done
    if [[ "$state" != idle ]]; then
        say "the node is '${state:-?}' after 20 s, not idle; the logs:"
        tail -n 20 "$dir"/*.log >&2 || true
        stop_cluster "$dir"
        exit 1
    fi
    say "up in $dir (node $host idle, slurmctld port ${ports[0]}, slurmd port ${ports[1]})"
    echo "$dir"
}

case "${1:-}" in
start)
    [[ $# -eq 2 && "$2" =~ ^[0-9]+$ ]] || die "usage: $0 start OWNER_PID"
    start_cluster "$2"
    ;;
stop)
    [[ $# -eq 2 ]] || die "usage: $0 stop DIR"
    [[ -d "$2" ]] || exit 0
    stop_cluster "$(cd "$2" && pwd -P)"
    ;;
clean)
    clean_stale
    ;;
-h | --help)
    sed -n '2,23p' "$0"
    ;;
*)
    die "expected start, stop or clean (see $0 --help)"
    ;;
esac
