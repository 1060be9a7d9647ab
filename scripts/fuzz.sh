#!/usr/bin/env bash
# Fuzzes the parsers that read what other programs wrote: the record reader
# (xpu_asm_record::read::parse_events / apply_counts), the `.asm` header
# parser (xpu_asm_collector::dumps::parse_header), dump file names,
# `.kernbin` binaries and the asm/ file names made from kernel names, and
# the native GPU binaries modules are built from (native::parse: zebin,
# patch tokens bare and in NEO's ELF, ocloc fat binaries; render_asm).
# Each target runs for a bounded time. Not part of CI.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default: 240 s, all)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz wants a nightly
# compiler for its sanitizer flags; on a stable toolchain this script sets
# RUSTC_BOOTSTRAP=1, which lets stable rustc accept them. FUZZ_TOOLCHAIN=nightly
# uses a nightly toolchain instead. Extra libFuzzer options go in FUZZ_ARGS.
#
# Corpora live in fuzz/corpus/<target> (seeded on first use from real IGC
# dumps, records, and binaries ocloc compiles then), crashes in fuzz/artifacts/<target>; both are
# ignored by git. The script prints, per target, the run time, executions
# and whether anything crashed, and exits non-zero when something did.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

secs=${1:-240}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(record_reader asm_header dump_names native_binary)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is not installed; install it with: cargo install cargo-fuzz" >&2
    exit 2
fi
toolchain=()
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
    toolchain=("+$FUZZ_TOOLCHAIN")
else
    export RUSTC_BOOTSTRAP=1
fi

# Seeds: real IGC output from the collector's test data, and records in the
# real format (a process header, a module, kernels with UTF-8, escaped and
# hex names, an exit event) with a counts file.
# Native binaries: the committed ones and what ocloc makes of a test
# workload now (patch tokens in NEO's ELF, zebin, a PVC+TGLLP fat binary,
# and the bare patch-token program cut out of its ELF), each behind every
# device byte (0 none, 1 pvc, 2 tgllp, 3 dg2).
seed_native() {
    local out=$1 tmp f d
    tmp=$(mktemp -d)
    cp "$root"/collector/tests/data/module-binaries/* "$tmp/"
    if command -v ocloc >/dev/null; then
        if ! (
            cd "$tmp"
            cp "$root/tests/workload/kernels_a.cl" .
            ocloc compile -q -file kernels_a.cl -device pvc -output a.pvc-pt -output_no_suffix &&
                ocloc compile -q -file kernels_a.cl -device pvc --format zebin \
                    -output a.pvc-zebin -output_no_suffix &&
                ocloc compile -q -file kernels_a.cl -device pvc,tgllp -output a.fat -output_no_suffix
            rc=$?
            rm -f kernels_a.cl ./*.spv ./*.gen ./*.dbg
            exit $rc
        ) >/dev/null; then
            echo "fuzz.sh: ocloc failed; the native_binary seeds are the committed binaries only" >&2
        fi
    else
        echo "fuzz.sh: no ocloc; the native_binary seeds are the committed binaries only" >&2
    fi
    python3 - "$tmp" <<'PY'
import os, struct, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    b = open(os.path.join(d, name), "rb").read()
    if b[:5] != b"\x7fELF\x02":
        continue
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
    for i in range(shnum):
        off, size = struct.unpack_from("<QQ", b, shoff + i * shentsize + 0x18)
        if b[off:off + 4] == b"CTNI":
            with open(os.path.join(d, name + ".ctni"), "wb") as f:
                f.write(b[off:off + size])
PY
    for f in "$tmp"/*; do
        for d in 0 1 2 3; do
            { printf "\\$d"; cat "$f"; } >"$out/seed-$d-$(basename "$f")"
        done
    done
    rm -rf "$tmp"
}

seed() {
    local c="$root/fuzz/corpus"
    mkdir -p "$c/record_reader" "$c/asm_header" "$c/dump_names" "$c/native_binary"
    if [ -z "$(ls -A "$c/asm_header")" ]; then
        # The module's names (each ended by NUL, then an empty one), then the file.
        for f in "$root"/collector/tests/data/*/*.asm; do
            name=$(head -n1 "$f" | cut -c11-)
            { printf '%s\0other\0\0' "$name"; cat "$f"; } >"$c/asm_header/seed-$(basename "$f")"
            { printf '%s\n//.spill size 4096\0%s\0\0' "$name" "$name"; cat "$f"; } \
                >"$c/asm_header/seed-forged-$(basename "$f")"
        done
    fi
    if [ -z "$(ls -A "$c/dump_names")" ]; then
        for f in "$root"/collector/tests/data/*/*; do
            printf '%s' "$(basename "$f")" >"$c/dump_names/seed-name-$(basename "$f")"
        done
        for f in "$root"/collector/tests/data/pvc/*.kernbin; do
            cp "$f" "$c/dump_names/seed-$(basename "$f")"
        done
        printf '%s' '_ZTSZ4mainEUlN4sycl3_V12idILi1EEEE_' >"$c/dump_names/seed-sycl-name"
        printf '../../etc/passwd\n\377' >"$c/dump_names/seed-hostile-name"
    fi
    if [ -z "$(ls -A "$c/native_binary")" ]; then
        seed_native "$c/native_binary"
    fi
    if [ -z "$(ls -A "$c/record_reader")" ]; then
        python3 - "$c/record_reader" <<'PY'
import struct, sys, os
out = sys.argv[1]
events = (
    b'{"record":"xpu-asm","version":1,"type":"process","pid":7,"ppid":1,"host":"h",'
    b'"exe":"/bin/x","cmdline":["x","--y"],"dump_dir":"dumps/h-7","forked_from":null,'
    b'"start_unix_ms":1,"env":{"IGC_ShaderDumpEnable":{"value":"1","set_by":"xpu-asm"},'
    b'"NEO_CACHE_PERSISTENT":{"value":"1","set_by":"user"}}}\n'
    b'{"type":"module","id":1,"format":"spirv","size":3,"sha256":"ab","build_flags":"-g",'
    b'"inputs":[{"size":3,"sha256":"ab"}],"kernel_names":["a",{"hex":"ff00"}]}\n'
    b'{"type":"kernel","id":1,"module":1,"name":"scale"}\n'
    b'{"type":"kernel","id":2,"module":1,"name":"a\\n\\"b\\u0001"}\n'
    b'{"type":"kernel","id":3,"module":1,"name_hex":"6261ff"}\n'
    b'{"type":"note","message":"hello"}\n'
    b'{"type":"exit"}\n'
)
# Header (magic, version 1, 32-byte slots), then per kernel id: immediate,
# regular appended, regular launched, reserved (xpu-asm-record's layout).
counts = b"XPUCNT01" + struct.pack("<II", 1, 32) + bytes(48)
for i in range(4):
    counts += struct.pack("<QQQQ", i * 3, i * 2, i * 5, 0)
def put(name, ev, co):
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<H", len(ev)) + ev + co)
put("seed-full", events, counts)
put("seed-truncated", events[:-20], counts[:80])
put("seed-v2", events.replace(b'"version":1', b'"version":2'), counts)
PY
    fi
}
seed

failed=0
summary=()
for t in "${targets[@]}"; do
    echo "fuzz.sh: building $t" >&2
    if ! (cd fuzz && cargo "${toolchain[@]}" fuzz build "$t") >&2; then
        summary+=("$(printf '%-14s  build failed (see above)' "$t")")
        failed=1
        continue
    fi
    log="$root/fuzz/artifacts/$t.log"
    mkdir -p "$root/fuzz/artifacts/$t"
    dict=()
    if [ -f "$root/fuzz/dicts/$t.dict" ]; then
        dict=("-dict=$root/fuzz/dicts/$t.dict")
    fi
    echo "fuzz.sh: running $t for ${secs}s (log: $log)" >&2
    start=$(date +%s)
    set +e
    # shellcheck disable=SC2086
    (cd fuzz && cargo "${toolchain[@]}" fuzz run "$t" -- \
        -max_total_time="$secs" -rss_limit_mb=4096 -print_final_stats=1 \
        "${dict[@]}" ${FUZZ_ARGS:-}) >"$log" 2>&1
    rc=$?
    set -e
    end=$(date +%s)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    crashes=$(find "$root/fuzz/artifacts/$t" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) | wc -l)
    verdict="no crash"
    if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
        verdict="FAILED (exit $rc, $crashes artifact(s) in fuzz/artifacts/$t; see $log)"
        failed=1
    fi
    summary+=("$(printf '%-14s %5ss  %12s executions  %-10s  %s' "$t" "$((end - start))" "${execs:-?}" "${cov:-cov: ?}" "$verdict")")
done

echo
echo "target           time       executions  coverage    result"
printf '%s\n' "${summary[@]}"
exit $failed
