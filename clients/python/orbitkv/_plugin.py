"""What the engine backends (``orbitkv.lmcache``, ``orbitkv.sglang``) share: the rate-limited miss log, the chunk
header of LMCache's ``save_chunk_meta`` mode, and views over raw pointers of an engine's host pool.

Every failure inside a backend is a miss for the engine (LMCache's convention, docs/engines.md "Engine backends"):
the backend catches it, counts it by reason and logs it at a bounded rate, never raises into the engine.
"""

from __future__ import annotations

import ctypes
import logging
import struct
import threading
import time
from typing import Dict, Optional, Tuple

from .errors import OrbitKVError

#: distinct (operation, reason) pairs the miss log tracks; a further pair is counted under ``other`` (BND-1)
REASONS_MAX = 64


def reason_of(exc: BaseException) -> str:
    """A short, bounded name of why a call failed: the Manager's error code, or the exception's class."""
    if isinstance(exc, OrbitKVError):
        return exc.code.lower()
    return type(exc).__name__


class MissLog:
    """Counts misses per (operation, reason) and logs each pair at most once per ``interval_s`` (the first time at
    once, later with the number suppressed meanwhile). Thread-safe; at most :data:`REASONS_MAX` pairs are tracked,
    the rest are counted as ``("other", "reasons-full")``."""

    def __init__(self, logger: logging.Logger, interval_s: float = 10.0):
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self.logger = logger
        self.interval_s = interval_s
        self.counts: Dict[Tuple[str, str], int] = {}
        self._last: Dict[Tuple[str, str], float] = {}
        self._suppressed: Dict[Tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def miss(self, op: str, reason: str, detail: str = "") -> None:
        key = (op, reason)
        now = time.monotonic()
        with self._lock:
            if key not in self.counts and len(self.counts) >= REASONS_MAX:
                key = ("other", "reasons-full")
            self.counts[key] = self.counts.get(key, 0) + 1
            last = self._last.get(key)
            if last is not None and now - last < self.interval_s:
                self._suppressed[key] = self._suppressed.get(key, 0) + 1
                return
            self._last[key] = now
            suppressed = self._suppressed.pop(key, 0)
        more = f" ({suppressed} more since the last report)" if suppressed else ""
        self.logger.warning("orbitkv %s: a miss (%s)%s%s", op, reason, more, f": {detail}" if detail else "")

    def total(self, op: Optional[str] = None) -> int:
        with self._lock:
            return sum(n for (o, _), n in self.counts.items() if op is None or o == op)


# ---------------------------------------------------------------------------------------------------- chunk header
#: ``save_chunk_meta`` mode: a fixed 64-byte header before the chunk bytes. Layout (little-endian): magic ``OKVC``,
#: version (u8), ndim (u8), 2 reserved bytes, payload bytes (u64), 6 dims (u32 each, unused ones 0), dtype name (12
#: bytes ASCII, NUL padded), memory format name (12 bytes ASCII, NUL padded).
HEADER = struct.Struct("<4sBBxxQ6I12s12s")
HEADER_BYTES = HEADER.size
MAGIC = b"OKVC"
VERSION = 1
assert HEADER_BYTES == 64


def _name(x) -> str:
    s = str(x) if x is not None else ""
    return s.rsplit(".", 1)[-1][:12]  # "torch.bfloat16" -> "bfloat16", "MemoryFormat.KV_2LTD" -> "KV_2LTD"


def pack_header(shape, dtype, fmt, nbytes: int) -> bytes:
    dims = [int(d) for d in shape]
    if not 1 <= len(dims) <= 6 or any(d < 0 or d >= 1 << 32 for d in dims):
        raise ValueError(f"a chunk shape has 1..6 dims below 2^32, got {tuple(dims)}")
    return HEADER.pack(MAGIC, VERSION, len(dims), nbytes, *(dims + [0] * (6 - len(dims))),
                       _name(dtype).encode("ascii"), _name(fmt).encode("ascii"))


def unpack_header(raw) -> Tuple[tuple, str, str, int]:
    """``(shape, dtype name, format name, payload bytes)``; ValueError for anything but a version-1 header."""
    magic, version, ndim, nbytes, *rest = HEADER.unpack(bytes(raw))
    if magic != MAGIC or version != VERSION or not 1 <= ndim <= 6:
        raise ValueError("not an orbitkv chunk header (magic, version or ndim)")
    dims, dtype, fmt = rest[:6], rest[6], rest[7]
    return tuple(dims[:ndim]), dtype.rstrip(b"\0").decode("ascii"), fmt.rstrip(b"\0").decode("ascii"), nbytes


def names_match(a, b) -> bool:
    return _name(a) == _name(b)


# ---------------------------------------------------------------------------------------------------- raw pointers
def pointer_view(ptr: int, size: int) -> memoryview:
    """A writable byte view of ``size`` bytes at address ``ptr`` (an engine's pinned host pool page): reads land there
    and writes are sent from there without a copy. The caller keeps the memory alive while the view is used."""
    if ptr <= 0 or size <= 0:
        raise ValueError(f"a page pointer and size must be positive, got ({ptr}, {size})")
    return memoryview((ctypes.c_char * size).from_address(ptr)).cast("B")
