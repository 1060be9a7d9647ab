# The mpi section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# 32 ranks under Open MPI's mpirun, one xpu-asm-run per rank (the C workload
# of tests/, 1,000 launches each): the time from the job's end (the last
# rank's command ended) to report.json written, and to mpirun's exit; the
# same under Slurm's srun, on a one-host cluster of scripts/slurm-cluster.sh
# (started and stopped here); then `collect` on a synthetic capture of a
# 1,000-rank job (125 hosts, 100 kernels launched by every rank, 100,000
# .asm files)

# The end of a 32-rank job under Slurm's srun: from the last rank's command's
# end to report.json, and to srun's exit (as for mpirun below), on a
# one-host cluster started here and stopped by cleanup.
srun_runs() {
    local r
    if ! command -v srun >/dev/null || ! command -v slurmctld >/dev/null; then
        log "mpi: no Slurm (scripts/install-deps.sh installs slurmctld, slurmd, slurm-client, munge)"
        result srun_skipped "no Slurm"
        return
    fi
    SLURM_DIR=$(bash "$ROOT/scripts/slurm-cluster.sh" start $$ | tail -n1) || {
        log "mpi: the Slurm cluster did not start"
        result srun_skipped "the one-host Slurm cluster did not start"
        SLURM_DIR=""
        return
    }
    for ((r = 0; r < MPI_RUNS; r++)); do
        rm -rf "$MPIW"
        mkdir -p "$MPIW/ends"
        log "mpi: 32 ranks under srun, one xpu-asm-run each (run $((r + 1))/$MPI_RUNS)"
        SLURM_CONF="$SLURM_DIR/slurm.conf" srun -n 32 "$RUNNER" --emulate pvc -q -o "$MPIW/cap" -- \
            sh -c "'$BIN/workload' --via ddi --module a='$BIN/kernels_a.spv' imm:a:scale:1000 >/dev/null &&
                   date +%s.%N >'$MPIW/ends/'\$SLURM_PROCID" ||
            log "mpi: srun failed (status $?)"
        date +%s.%N >"$MPIW/mpirun-end"
        python3 - "$MPIW" "$r" >>"$RESULTS" <<'EOF'
import json, os, sys
w, r = sys.argv[1], sys.argv[2]
ends = [float(open(os.path.join(w, "ends", f)).read()) for f in os.listdir(os.path.join(w, "ends"))]
rep = os.path.join(w, "cap", "report.json")
job_end = max(ends)
print(f"srun_{r}_ranks_ended={len(ends)}")
print(f"srun_{r}_to_report_s={os.stat(rep).st_mtime_ns / 1e9 - job_end:.3f}")
print(f"srun_{r}_to_exit_s={float(open(os.path.join(w, 'mpirun-end')).read()) - job_end:.3f}")
t = json.load(open(rep))["totals"]
print(f"srun_{r}_launches={t['launches']}")
EOF
    done
    bash "$ROOT/scripts/slurm-cluster.sh" stop "$SLURM_DIR" || log "mpi: stopping the Slurm cluster failed"
    SLURM_DIR=""
}

# Mpi: one xpu-asm-run per rank, and a 1,000-rank capture.

if ! command -v mpirun.openmpi >/dev/null; then
    log "mpi: no mpirun.openmpi (scripts/install-deps.sh installs openmpi-bin)"
    result mpi_skipped "no mpirun.openmpi"
else
    gcc -std=c11 -O2 -o "$BIN/workload" "$ROOT/tests/workload/workload.c" -ldl -lpthread
    (cd "$BIN" && ocloc compile -file "$ROOT/tests/workload/kernels_a.cl" -spv_only \
        -device pvc -output kernels_a -output_no_suffix -q >/dev/null)
    MPIW="$WORK/mpi"
    for ((r = 0; r < MPI_RUNS; r++)); do
        rm -rf "$MPIW"
        mkdir -p "$MPIW/ends"
        log "mpi: 32 ranks, one xpu-asm-run each (run $((r + 1))/$MPI_RUNS)"
        # Each rank's command notes when it ended; the job ends with the last.
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            mpirun.openmpi --oversubscribe -np 32 "$RUNNER" --emulate pvc -q -o "$MPIW/cap" -- \
            sh -c "'$BIN/workload' --via ddi --module a='$BIN/kernels_a.spv' imm:a:scale:1000 >/dev/null &&
                   date +%s.%N >'$MPIW/ends/'\$OMPI_COMM_WORLD_RANK" ||
            log "mpi: mpirun failed (status $?)"
        date +%s.%N >"$MPIW/mpirun-end"
        python3 - "$MPIW" "$r" >>"$RESULTS" <<'EOF'
import json, os, sys
w, r = sys.argv[1], sys.argv[2]
ends = [float(open(os.path.join(w, "ends", f)).read()) for f in os.listdir(os.path.join(w, "ends"))]
rep = os.path.join(w, "cap", "report.json")
job_end = max(ends)
print(f"mpi_{r}_ranks_ended={len(ends)}")
print(f"mpi_{r}_to_report_s={os.stat(rep).st_mtime_ns / 1e9 - job_end:.3f}")
print(f"mpi_{r}_to_exit_s={float(open(os.path.join(w, 'mpirun-end')).read()) - job_end:.3f}")
t = json.load(open(rep))["totals"]
print(f"mpi_{r}_launches={t['launches']}")
EOF
    done
    srun_runs
    JOBGEN="$WORK/capture-job"
    STAMP="$JOBGEN/.generated$(printf '_%s' "${JOB_ARGS[@]}")"
    if [[ ! -f "$STAMP" ]]; then
        rm -rf "$JOBGEN"
        log "mpi: generating the synthetic 1,000-rank capture (${JOB_ARGS[*]})"
        python3 "$ROOT/bench/gen_capture.py" "$JOBGEN" "${JOB_ARGS[@]}" >&2
        touch "$STAMP"
    fi
    result job_asm_files "$(find "$JOBGEN/dumps" -name '*.asm' | wc -l)"
    for ((r = 0; r < COLLECT_RUNS; r++)); do
        run="$WORK/collect-job"
        rm -rf "$run"
        cp -al "$JOBGEN" "$run"
        rm -f "$run"/.generated-*
        sync
        log "mpi: collect the 1,000-rank capture (run $((r + 1))/$COLLECT_RUNS)"
        /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$RUNNER" collect --quiet "$run" ||
            log "mpi: collect failed (status $?)"
        read -r secs kib <"$WORK/time.txt"
        result "job_${r}_wall_s" "$secs"
        result "job_${r}_maxrss_kib" "$kib"
        result "job_${r}_processes" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"]))' "$run/report.json")"
    done
    rm -rf "$WORK/collect-job" "$MPIW"
    python3 - "$RESULTS" >>"$RESULTS" <<'EOF'
import statistics, sys
res = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
for pre, keys in (("mpi", ("to_report_s", "to_exit_s")), ("srun", ("to_report_s", "to_exit_s")),
                  ("job", ("wall_s", "maxrss_kib"))):
    for k in keys:
        vals = [float(v) for key, v in res.items() if key.startswith(pre + "_") and key.endswith("_" + k)
                and key.split("_")[1].isdigit()]
        if vals:
            print(f"{pre}_{k}={statistics.median(vals):g}")
            print(f"{pre}_{k}_lo={min(vals):g}")
            print(f"{pre}_{k}_hi={max(vals):g}")
EOF
fi
