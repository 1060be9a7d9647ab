#!/usr/bin/env bash
# The project's test command (README, CI): installs what the tests need, then
# formatting, lints and every test, on the real Level Zero stacks: the whole
# workspace on the host's (Debian 12: NEO 22.43, IGC 1), then the same
# integration tests (the tests crate, and the collector's tests of the real
# ocloc and IGA) on today's (Debian sid: NEO 26, IGC 2), run inside the root
# of scripts/sid-root.sh. Each stack gets a summary line, the run one closing
# line over both: `tests: N passed, M failed`.
#
# Environment:
#   XPU_ASM_STACKS  the stacks to test (default "debian12 sid")
set -euo pipefail
cd "$(dirname "$0")/.."
stacks=${XPU_ASM_STACKS:-debian12 sid}
for s in $stacks; do
    case "$s" in
    debian12 | sid) ;;
    *)
        echo "test.sh: XPU_ASM_STACKS names '$s'; the stacks are debian12 and sid" >&2
        exit 2
        ;;
    esac
done
has_stack() { [[ " $stacks " == *" $1 "* ]]; }

step_start=$SECONDS
step() {
    echo "test.sh: $1 took $((SECONDS - step_start)) s"
    step_start=$SECONDS
}

if has_stack sid; then
    bash scripts/install-deps.sh
else
    bash scripts/install-deps.sh --no-sid
fi
step "install-deps"
cargo fmt --all --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
step "fmt and clippy"
# The integration tests run the interposer library and the xpu-asm-run binary,
# which `cargo test` alone does not build.
cargo build --workspace
step "build"

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0

# Sums a log's `test result:` lines into "N passed, M failed".
summary() {
    awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
         END { printf "%d passed, %d failed\n", p, f }' "$@"
}
# The failed tests of a log, one a line: "<test binary>: <test>" (on sid
# "<crate>/<test binary>: <test>").
failures() {
    awk '/^ *Running on sid: / { cur = $4; next }
         /^ *Running / { f = $NF; gsub(/[()]/, "", f); n = split(f, a, "/"); cur = a[n]; sub(/-[0-9a-f]+$/, "", cur) }
         /^test .* \.\.\. FAILED$/ { print cur ": " $2 }' "$1"
}

if has_stack debian12; then
    set +e
    XPU_ASM_STACK=debian12 cargo test --workspace --no-fail-fast 2>&1 | tee "$logs/debian12"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
    set -e
    step "tests on debian12"
fi

if has_stack sid; then
    # The test binaries of the integration tests, built here (glibc 2.36) and
    # run inside the root (glibc 2.43) at the same paths: the workspace is
    # bind-mounted there, so the interposer, xpu-asm-run and target/ are
    # found where they were built. Inside, gcc, ocloc, the loader, NEO and
    # IGC are the root's.
    mapfile -t bins < <(
        cargo test -p xpu-asm-tests -p xpu-asm-collector --features xpu-asm-tests/sid --tests --no-run --message-format=json 2>/dev/null |
            python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    t, pkg = m["target"], m["package_id"]
    if t["kind"] != ["test"]:
        continue
    # The tests crate whole; of the collector, its tests of the real ocloc and IGA.
    crate = m["manifest_path"].rsplit("/", 2)[-2]
    if "xpu-asm-tests" in pkg or ("xpu-asm-collector" in pkg and t["name"] in ("native", "binaries")):
        print(m["manifest_path"].rsplit("/", 1)[0], crate + "/" + t["name"], m["executable"])
'
    )
    # The SYCL test's venv (scripts/sycl-venv.sh, made here if need be) and
    # the Python it was made with, bind-mounted at their paths: sid's own
    # Python is 3.14, for which dpctl 0.15 has no wheels.
    binds=()
    venv=$(bash scripts/sycl-venv.sh | tail -n1)
    python=$(readlink -f "$venv/bin/python")
    for d in "$venv" "$(dirname "$(dirname "$python")")"; do
        binds+=(--bind "$d")
    done
    # Intel MPI's venv (scripts/impi-venv.sh): its mpiexec and libmpi run
    # inside the root as they are.
    binds+=(--bind "$(bash scripts/impi-venv.sh | tail -n1)")
    # pyopencl's venv (scripts/pyopencl-venv.sh), and its Python (the SYCL
    # venv's, bound once).
    venv=$(bash scripts/pyopencl-venv.sh | tail -n1)
    python=$(dirname "$(dirname "$(readlink -f "$venv/bin/python")")")
    binds+=(--bind "$venv")
    [[ " ${binds[*]} " == *" $python "* ]] || binds+=(--bind "$python")
    if [[ ${#bins[@]} -eq 0 ]]; then
        echo "test.sh: found no integration test binaries to run on sid" >&2
        echo "test result: FAILED. 0 passed; 1 failed;" >"$logs/sid"
        status=1
    else
        : >"$logs/sid"
        for entry in "${bins[@]}"; do
            read -r dir name bin <<<"$entry"
            echo "     Running on sid: $name (${bin#"$PWD/"})" | tee -a "$logs/sid"
            set +e
            # As cargo runs a test: from its package's folder, with its manifest dir.
            bash scripts/sid-root.sh run "${binds[@]}" -- env XPU_ASM_STACK=sid CARGO_MANIFEST_DIR="$dir" \
                bash -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$bin" 2>&1 | tee -a "$logs/sid"
            [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
            set -e
        done
    fi
    step "tests on sid"
fi

echo
for s in $stacks; do
    echo "test.sh: $s: $(summary "$logs/$s")"
    failures "$logs/$s" | sed "s/^/test.sh: $s: FAILED /"
done
# One closing line for the whole run, over both stacks (CI reads it).
echo "tests: $(for s in $stacks; do cat "$logs/$s"; done | summary)"
exit "$status"
