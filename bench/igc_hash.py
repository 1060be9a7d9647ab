#!/usr/bin/env python3
"""The module hash IGC 1.0 names its dump files by (`OCL_asm<hash>...`).

    igc_hash.py FILE.spv...

Prints each file's name and IGC's 64-bit hash of its bytes, as 16 hex
digits: `iSTD::HashFromBuffer` of IGC's iStdLib (Bob Jenkins' 96-bit mix
over the little-endian 32-bit words, the last partial word zero-padded;
the hash is the mix's last two words). On IGC 1.0.12504 it gives the name
of every `OCL_asm<hash>.spv` dumped (ocloc's and NEO's JIT of dpctl's
modules): a tool that knows a module's SPIR-V knows the name IGC 1 gives
its dumps. IGC 2 names some modules otherwise (`OCL_asm<h1>_<h2>.spv`).
"""

import struct
import sys

M = 0xFFFFFFFF


def mix(a, b, c):
    a = (a - b - c) & M
    a ^= c >> 13
    b = (b - c - a) & M
    b ^= (a << 8) & M
    c = (c - a - b) & M
    c ^= b >> 13
    a = (a - b - c) & M
    a ^= c >> 12
    b = (b - c - a) & M
    b ^= (a << 16) & M
    c = (c - a - b) & M
    c ^= b >> 5
    a = (a - b - c) & M
    a ^= c >> 3
    b = (b - c - a) & M
    b ^= (a << 10) & M
    c = (c - a - b) & M
    c ^= b >> 15
    return a, b, c


def hash_from_buffer(data: bytes) -> int:
    a, hi, lo = 0x428A2F98, 0x71374491, 0xB5C0FBCF
    whole = len(data) // 4 * 4
    for (d,) in struct.iter_unpack("<I", data[:whole]):
        a, hi, lo = mix(a ^ d, hi, lo)
    if len(data) % 4:
        last = int.from_bytes(data[whole:].ljust(4, b"\0"), "little")
        a, hi, lo = mix(a ^ last, hi, lo)
    return (hi << 32) | lo


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        with open(p, "rb") as f:
            print(f"{p} {hash_from_buffer(f.read()):016x}")
