#!/usr/bin/env bash
# The project's test command (README, CI): installs what the tests need, then
# formatting, lints and every test, on the real Level Zero stack.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
# The integration tests run the interposer library and the xpu-asm-run binary,
# which `cargo test` alone does not build.
cargo build --workspace
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line for the whole run (cargo ends with the last crate's
# doc-tests, which are few or none).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
