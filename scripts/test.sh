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
cargo test --workspace
