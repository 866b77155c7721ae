"""Deterministic payloads without materialising Python objects per byte: a 16-byte header (PERF-4: little-endian
generation, block index) followed by a repeating pattern that differs per block."""

import struct

_PATTERN = bytes(range(251))  # a prime length: shifted patterns differ per block


def payload(generation: int, index: int, size: int) -> bytearray:
    b = bytearray(size)
    head = struct.pack("<QQ", generation, index)[:size]
    b[:len(head)] = head
    if size > 16:
        shift = (generation * 31 + index * 7) % 251
        unit = _PATTERN[shift:] + _PATTERN[:shift]
        body = unit * ((size - 16) // 251 + 1)
        b[16:] = body[:size - 16]
    return b
