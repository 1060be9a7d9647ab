# The sycl-sid section of scripts/bench.sh, which sources this file (with
# bench/lib.sh's settings, build and helpers) when the section is asked for:
# the same on the other stack, inside the Debian sid root
# (scripts/sid-root.sh: NEO 26, IGC 2): tests/sycl/dpnp_ops.py in the venv
# of scripts/sycl2026-venv.sh, on bmg (SYCL's v2 adapter, behind
# tests/shim/ze_resident.c, as tests/src/sycl2026.rs runs it); skipped when
# there is no root or venv.

SVENV=/opt/xpu-asm/sycl2026-venv
SD="$WORK/sycl-sid"
mkdir -p "$SD"
if ! sid_run true 2>/dev/null; then
    log "sycl-sid: no complete sid root (scripts/install-deps.sh makes it)"
    result ssid_skipped "no complete sid root (scripts/install-deps.sh makes it)"
elif ! sid_run test -x "$SVENV/bin/python"; then
    log "sycl-sid: no SYCL 2026 venv in the root (scripts/sycl2026-venv.sh)"
    result ssid_skipped "no SYCL 2026 venv in the root (scripts/sycl2026-venv.sh)"
else
    # The v2 adapter's resident shim, built with the root's gcc and loader.
    sid_run env -i PATH="$SID_PATH" gcc -std=c11 -O1 -Wall -Wextra -Werror -shared -fPIC \
        "$ROOT/tests/shim/ze_resident.c" -o "$SD/libze_resident.so" \
        -Wl,--no-as-needed -lze_loader -ldl
    # One round: plain, default, --isa binary, in a rotating order; each
    # run's wall and CPU time (of its process tree) and report figures.
    cat >"$SD/round.py" <<'PY'
import json, os, resource, shutil, subprocess, sys, time
r, runner, venv, ops_py, out_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
ops = ["1", "matmul=7", "add=2", "sin=3", "sum=4", "where=5", "astype=6"]
base = [venv + "/bin/python", ops_py] + ops
variants = ["plain", "default", "binary", "dump"]
for v in variants[r % 4:] + variants[:r % 4]:
    out = f"{out_dir}/out"
    shutil.rmtree(out, ignore_errors=True)
    cmd = {"plain": base,
           "default": [runner, "-q", "-o", out, "--"] + base,
           "binary": [runner, "-q", "--isa", "binary", "-o", out, "--"] + base,
           "dump": [runner, "-q", "--isa", "dump", "-o", out, "--"] + base}[v]
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    ok = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode == 0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime
    if not ok:
        print(f"failed_{v}_{r}=1")
        continue
    print(f"ssid_{v}_{r}_wall_s={time.time() - t0:.3f}")
    print(f"ssid_{v}_{r}_cpu_s={cpu:.3f}")
    if v != "plain":
        rep = json.load(open(out + "/report.json"))
        t = rep["totals"]
        print(f"ssid_{v}_{r}_matched={t['matched']}/{t['kernels']}")
        print(f"ssid_{v}_{r}_dump_bytes={rep['dumps']['before']['bytes']}")
        print(f"ssid_{v}_{r}_dump_files={rep['dumps']['before']['files']}")
PY
    for ((r = 0; r < SYCL_ROUNDS; r++)); do
        log "sycl-sid: round $((r + 1))/$SYCL_ROUNDS (plain, default, --isa binary, --isa dump)"
        # shellcheck disable=SC2086
        sid_run env -i PATH="$SID_PATH" HOME="$SD" $SID_NEO ProductFamilyOverride=bmg \
            ONEAPI_DEVICE_SELECTOR=level_zero:gpu LD_LIBRARY_PATH="$SVENV/lib" \
            PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 \
            LD_PRELOAD="$SD/libze_resident.so" UMF_ZE_LOADER_LIB_NAME="$SD/libze_resident.so" \
            python3 "$SD/round.py" "$r" "$RUNNER" "$SVENV" "$ROOT/tests/sycl/dpnp_ops.py" "$SD" \
            >>"$RESULTS" || log "sycl-sid: round $((r + 1)) failed"
    done
    rm -rf "$SD/out"
    paired_summary sycl-sid ssid "dump_bytes dump_files"
fi
