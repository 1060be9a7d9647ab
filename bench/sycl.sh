# The sycl section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# the real SYCL workload (tests/sycl/ops.py in the venv of
# scripts/sycl-venv.sh, created if missing: 1.4 GB) run plain, under
# xpu-asm-run (default: IGC 1's light dumps), with IGC's full dumps
# (IGC_ShaderDumpEnable=1, the default before), and with --isa binary,
# interleaved: wall and CPU time, IGC dump bytes; each as the median of its
# per-round ratios to the plain run of that round.

VENV=$(bash "$ROOT/scripts/sycl-venv.sh" | tail -n 1) || VENV=""
if [[ ! -x "$RUNNER" || ! -x "$VENV/bin/python" ]]; then
    log "sycl: no SYCL venv (scripts/sycl-venv.sh failed) or no xpu-asm-run"
    result sycl_skipped "scripts/sycl-venv.sh failed or no xpu-asm-run"
else
    SYCL_OUT="$WORK/sycl-out"
    for ((r = 0; r < SYCL_ROUNDS; r++)); do
        for v in plain default full binary; do
            log "sycl: $v ($((r + 1))/$SYCL_ROUNDS)"
            rm -rf "$SYCL_OUT"
            cmd=("$VENV/bin/python" "$ROOT/tests/sycl/ops.py" 20)
            full=()
            case $v in
            default) cmd=("$RUNNER" --emulate pvc -q -o "$SYCL_OUT" -- "${cmd[@]}") ;;
            # IGC 1's full dumps, as xpu-asm-run had them before its light ones.
            full)
                full=(IGC_ShaderDumpEnable=1)
                cmd=("$RUNNER" --emulate pvc -q -o "$SYCL_OUT" -- "${cmd[@]}")
                ;;
            binary) cmd=("$RUNNER" --emulate pvc -q --isa binary -o "$SYCL_OUT" -- "${cmd[@]}") ;;
            esac
            env -u SYCL_CACHE_PERSISTENT -u NEO_CACHE_PERSISTENT -u l0_cache_dir -u IGC_ShaderDumpEnable \
                "${full[@]}" ONEAPI_DEVICE_SELECTOR=level_zero:gpu LD_LIBRARY_PATH="$VENV/lib" PYTHONNOUSERSITE=1 \
                PYTHONDONTWRITEBYTECODE=1 /usr/bin/time -f "%e %U %S" -o "$WORK/time.txt" "${cmd[@]}" >/dev/null ||
                log "sycl: $v failed (status $?)"
            read -r wall user sys <"$WORK/time.txt"
            result "sycl_${v}_${r}_wall_s" "$wall"
            result "sycl_${v}_${r}_cpu_s" "$(echo "$user + $sys" | bc)"
            if [[ -f "$SYCL_OUT/report.json" ]]; then
                result "sycl_${v}_${r}_dump_bytes" "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['dumps']['before']['bytes'])" "$SYCL_OUT/report.json")"
                result "sycl_${v}_${r}_matched" "$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['totals']; print(str(t['matched']) + '/' + str(t['kernels']))" "$SYCL_OUT/report.json")"
                result "sycl_${v}_${r}_modules_bytes" "$(du -sb "$SYCL_OUT/modules" | cut -f1)"
            fi
        done
    done
    rm -rf "$SYCL_OUT"
    paired_summary sycl sycl "dump_bytes modules_bytes"
fi
