#!/usr/bin/env bash
# A developer's run of some integration tests on one stack, as scripts/test.sh
# runs them (no install, no fmt or clippy): builds the workspace, then the
# test binary, and runs it on the host's stack (debian12) or inside the sid
# root (sid), with the venvs test.sh binds.
#
#   scripts/test-some.sh STACK TEST [ARGS...]
#
#   STACK   debian12 or sid
#   TEST    a test target: `capture` (of the tests crate, tests/tests/capture.rs),
#           or `collector/native` for one of another package
#   ARGS    given to the test binary as cargo test gives them: names to run
#           (substrings), --exact, --test-threads=1, --nocapture
#
# Examples:
#   scripts/test-some.sh debian12 capture via_dlsym
#   scripts/test-some.sh sid opencl --test-threads=1
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || {
    sed -n '2,17p' "$0" >&2
    exit 2
}
stack=$1 test=$2
shift 2
case "$stack" in
debian12 | sid) ;;
*)
    echo "test-some.sh: the stacks are debian12 and sid, not '$stack'" >&2
    exit 2
    ;;
esac
pkg=xpu-asm-tests
if [[ "$test" == */* ]]; then
    pkg=xpu-asm-${test%%/*}
    test=${test#*/}
fi
features=()
[[ "$stack" == sid && "$pkg" == xpu-asm-tests ]] && features=(--features xpu-asm-tests/sid)

cargo build --workspace -q
# A test that does not build: cargo's errors, as it prints them.
cargo test -p "$pkg" "${features[@]}" --test "$test" --no-run -q || exit 2
bin=$(cargo test -p "$pkg" "${features[@]}" --test "$test" --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])
' | tail -n1)
[[ -n "$bin" ]] || {
    echo "test-some.sh: no test binary '$test' in $pkg" >&2
    exit 2
}
dir=$PWD/${pkg#xpu-asm-}
[[ "$pkg" == xpu-asm-tests ]] && dir=$PWD/tests

if [[ "$stack" == debian12 ]]; then
    cd "$dir"
    exec env XPU_ASM_STACK=debian12 CARGO_MANIFEST_DIR="$dir" "$bin" "$@"
fi

binds=()
venv=$(bash scripts/sycl-venv.sh | tail -n1)
python=$(readlink -f "$venv/bin/python")
for d in "$venv" "$(dirname "$(dirname "$python")")"; do
    binds+=(--bind "$d")
done
binds+=(--bind "$(bash scripts/impi-venv.sh | tail -n1)")
venv=$(bash scripts/pyopencl-venv.sh | tail -n1)
python=$(dirname "$(dirname "$(readlink -f "$venv/bin/python")")")
binds+=(--bind "$venv")
[[ " ${binds[*]} " == *" $python "* ]] || binds+=(--bind "$python")
exec bash scripts/sid-root.sh run "${binds[@]}" -- env XPU_ASM_STACK=sid CARGO_MANIFEST_DIR="$dir" \
    bash -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$bin" "$@"
