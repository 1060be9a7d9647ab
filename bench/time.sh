# The time section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# what `--time` costs, by the callgrind section's method (bench/launch_loop.c
# under callgrind --toggle-collect, the release interposer preloaded, against
# a plain run in the same section): instructions per immediate launch without
# `--time`, per launch sampled out, with the default sample and per launch
# timed, on Debian 12's NEO (no timestamps: a timed launch's event is taken
# and its result never ready) and on the simulated driver tests/fake/ze_sim.c
# (loaded by the real loader through ZE_ENABLE_ALT_DRIVERS: every result read
# at the workload's syncs); then the memory of a process after 10^7 launches
# of 1,000 kernels with `--time`, against the interposer without it.

if ! command -v valgrind >/dev/null 2>&1; then
    log "time: valgrind not found; install it with scripts/install-deps.sh --bench"
    result tcg_skipped "valgrind not installed (scripts/install-deps.sh --bench)"
else
    TD="$WORK/time"
    mkdir -p "$TD"
    gcc -std=c11 -O1 -g -Wall -Wextra -Werror -shared -fPIC -o "$BIN/libze_sim.so" \
        "$ROOT/tests/fake/ze_sim.c" -lpthread
    # The simulated driver, without NEO's no-hardware keys of bench/lib.sh
    # (under them the interposer reads no result: NEO executes nothing).
    SIM="-u NEOReadDebugKeys -u SetCommandStreamReceiver ZE_ENABLE_ALT_DRIVERS=$BIN/libze_sim.so"
    N=$CG_LAUNCHES
    # The policies: none (the interposer without --time), every launch
    # sampled out (index 0 of each kernel is chosen, in the warm-up), the
    # default of --time, every launch (--time=all).
    declare -A POLICY=([xpu]="" [out]="sample:0:1000000000" [default]="sample:10:100" [all]="all")
    tcg() { # out-file toggle variant "env..." launch_loop-args...
        local outf=$1 fn=$2 v=$3 envs=$4
        shift 4
        local pre=()
        if [[ $v != none ]]; then
            rm -rf "$WORK/xpu-out"
            pre=(XPU_ASM_OUT="$WORK/xpu-out" LD_PRELOAD="$INTERPOSER")
            [[ -n "${POLICY[$v]}" ]] && pre+=(XPU_ASM_TIME="${POLICY[$v]}")
        fi
        # shellcheck disable=SC2086
        env $envs "${pre[@]}" valgrind --tool=callgrind --dump-instr=yes --toggle-collect="$fn" \
            --callgrind-out-file="$outf" "$BIN/launch_loop" "$SPV" "$@" chunks=1 reps=1 \
            >"$outf.stdout" 2>"$outf.log"
    }
    # What one policy's run added per launch to the plain run's.
    tsum() { # label base with launches
        python3 "$ROOT/bench/callgrind_summary.py" "$2" "$3" --launches "$4" --label "$1" \
            >"$3.profile"
        grep '^RESULT ' "$3.profile" | sed 's/^RESULT //' >>"$RESULTS"
    }
    # The timed launches of the last run, from its record: chosen, timed,
    # not timed by reason (the collector's reading of it).
    trecord() { # label
        python3 - "$WORK/xpu-out" "$1" >>"$RESULTS" <<'PY'
import glob, struct, sys
out, label = sys.argv[1], sys.argv[2]
# As xpu_asm_record::shapes::scan reads them: a time block (tag "TIM1",
# 82 slots), a shape's head and tail ("SHP1"), or a counter.
TAG, SHAPE, SLOTS, SLOT, HEAD = 0x314D4954, 0x31504853, 82, 32, 64
sampled = timed = not_complete = pool_full = total = 0
for f in glob.glob(out + "/records/*.counts"):
    b = open(f, "rb").read()
    s = HEAD + SLOT
    while s + SLOT <= len(b):
        w = struct.unpack_from("<4Q", b, s)
        if w[3] >> 32 == TAG and s + SLOTS * SLOT <= len(b):
            blk = struct.unpack_from(f"<{SLOTS * 4}Q", b, s)
            sampled += blk[0]; timed += blk[1]; total += blk[2]
            not_complete += blk[8]; pool_full += blk[8 + 3]
            s += SLOTS * SLOT
        elif w[3] >> 32 == SHAPE:
            s += 2 * SLOT
        else:
            s += SLOT
print(f"{label}_sampled={sampled}")
print(f"{label}_timed={timed}")
print(f"{label}_total_ns={total}")
print(f"{label}_not_complete={not_complete}")
print(f"{label}_pool_full={pool_full}")
PY
    }

    log "time: callgrind of $N immediate launches on NEO and on the simulated driver, per policy"
    # NEO: the immediate loop of the callgrind section (no sync: NEO
    # without hardware completes nothing, so its results are never read).
    for v in none xpu out default; do
        tcg "$TD/neo.$v" bench_immediate_loop "$v" "" "imm=$N"
        [[ $v == none ]] || { tsum "tcg_neo_$v" "$TD/neo.none" "$TD/neo.$v" "$N"; trecord "tcg_neo_$v"; }
    done
    # Every launch timed on NEO: 1,000 (a context holds 1,024 of timing's
    # events, all still pending; past them a launch is "pool full").
    for v in none all; do
        tcg "$TD/neo1k.$v" bench_immediate_loop "$v" "" "imm=1000" warmup=0
    done
    tsum tcg_neo_all "$TD/neo1k.none" "$TD/neo1k.all" 1000
    trecord tcg_neo_all
    # The simulated driver: the list synced every 100 launches (a barrier,
    # a wait on its event, its reset), where timing reads its results.
    for v in none xpu out default all; do
        tcg "$TD/sim.$v" bench_synced_loop "$v" "$SIM" "synced=$N" sync=100
        [[ $v == none ]] || { tsum "tcg_sim_$v" "$TD/sim.none" "$TD/sim.$v" "$N"; trecord "tcg_sim_$v"; }
    done
    result tcg_launches "$N"

    # Memory: 10^7 launches (quick: 10^6) of 1,000 kernels round-robin on
    # the simulated driver, synced every 1,000; RSS once the kernels are
    # made, after a tenth of the launches and at the end.
    if [[ $QUICK == 1 ]]; then ML=1000000; else ML=10000000; fi
    if [[ ! -f "$BIN/k1000.spv" ]]; then
        python3 "$ROOT/bench/gen_native_capture.py" cl "$BIN/k1000.cl" --kernels 1000
        (cd "$BIN" && ocloc compile -q -file k1000.cl -spv_only -device pvc -output k1000 \
            -output_no_suffix >/dev/null)
    fi
    log "time: memory after $ML launches of 1,000 kernels (none, xpu-asm, --time)"
    for v in none xpu default; do
        pre=()
        if [[ $v != none ]]; then
            rm -rf "$WORK/xpu-out"
            pre=(XPU_ASM_OUT="$WORK/xpu-out" LD_PRELOAD="$INTERPOSER")
            [[ -n "${POLICY[$v]}" ]] && pre+=(XPU_ASM_TIME="${POLICY[$v]}")
        fi
        # shellcheck disable=SC2086
        env $SIM "${pre[@]}" "$BIN/launch_loop" "$BIN/k1000.spv" "synced=$ML" sync=1000 \
            kernels=1000 chunks=10 warmup=0 >"$TD/mem.$v.txt"
        python3 - "$TD/mem.$v.txt" "tmem_$v" >>"$RESULTS" <<'PY'
import sys
label = sys.argv[2]
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    if line.startswith("memory "):
        for k in ("launches", "rss_kernels_kib", "rss_tenth_kib", "rss_end_kib", "hwm_kib"):
            print(f"{label}_{k}={f[k]}")
    elif f.get("phase") == "synced":
        print(f"{label}_cpu_min_ns_per_launch={f['cpu_min_ns_per_launch']}")
PY
        if [[ $v != none ]]; then
            result "tmem_${v}_counts_bytes" "$(cat "$WORK"/xpu-out/records/*.counts | wc -c)"
            trecord "tmem_$v"
        fi
    done
fi
