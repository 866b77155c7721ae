"""The block framing ``application/x-orbitkv-blocks`` (docs/api.md): records
``u16 key_len (big-endian, 1..64) | key | u32 payload_len (big-endian) | payload``.

The client writes record headers with :func:`record_header` and sends payloads from the caller's buffers; it reads
restore answers incrementally (``orbitkv._protocol``). :func:`encode` and :func:`decode` are whole-body helpers for
tests and tools, checked against ``docs/vectors/block-framing.json`` like the Manager's own decoder.
"""

from __future__ import annotations

import struct
from typing import List, Sequence, Tuple

CONTENT_TYPE = "application/x-orbitkv-blocks"
RECORD_HEADER_BYTES = 6
KEY_BYTES_MAX = 64
RECORDS_MAX = 128

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")


class FramingError(ValueError):
    """A body that is not valid framing; ``code`` is the Manager's error code for it."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def record_header(key: bytes, payload_len: int) -> bytes:
    if not 1 <= len(key) <= KEY_BYTES_MAX:
        raise FramingError("INVALID_KEY_LENGTH", f"key must be 1..{KEY_BYTES_MAX} bytes, got {len(key)}")
    if not 0 <= payload_len <= 0xFFFFFFFF:
        raise FramingError("PAYLOAD_TOO_LARGE", f"payload must be 0..2^32-1 bytes, got {payload_len}")
    return _U16.pack(len(key)) + key + _U32.pack(payload_len)


def encode(records: Sequence[Tuple[bytes, bytes]]) -> bytes:
    return b"".join(record_header(k, len(p)) + bytes(p) for k, p in records)


def decode(body: bytes, block_bytes_max: int = 1 << 32, body_bytes_max: int = 1 << 62,
           records_max: int = RECORDS_MAX) -> List[Tuple[bytes, bytes]]:
    """Decodes a whole body with the Manager's checks and codes, in the Manager's order."""
    if len(body) > body_bytes_max:  # the Manager refuses as soon as the body passes its bound
        raise FramingError("BODY_TOO_LARGE", f"body of {len(body)} bytes exceeds the bound {body_bytes_max}")
    out: List[Tuple[bytes, bytes]] = []
    seen = set()
    pos = 0
    n = len(body)
    while pos < n:
        if pos + 2 > n:
            raise FramingError("TRUNCATED_RECORD", f"body ends inside record {len(out)}")
        (klen,) = _U16.unpack_from(body, pos)
        if not 1 <= klen <= KEY_BYTES_MAX:
            raise FramingError("INVALID_KEY_LENGTH", f"record {len(out)}: key length {klen}, must be 1..{KEY_BYTES_MAX}")
        if len(out) >= records_max:
            raise FramingError("TOO_MANY_RECORDS", f"a body holds at most {records_max} records")
        if pos + 2 + klen > n:
            raise FramingError("TRUNCATED_RECORD", f"body ends inside record {len(out)}")
        key = bytes(body[pos + 2:pos + 2 + klen])
        if key in seen:
            raise FramingError("DUPLICATE_KEY", f"record {len(out)} repeats key {key.hex()}")
        seen.add(key)
        if pos + 2 + klen + 4 > n:
            raise FramingError("TRUNCATED_RECORD", f"body ends inside record {len(out)}")
        (plen,) = _U32.unpack_from(body, pos + 2 + klen)
        if plen > block_bytes_max:
            raise FramingError("PAYLOAD_TOO_LARGE", f"record {len(out)}: payload {plen} exceeds {block_bytes_max}")
        start = pos + 2 + klen + 4
        if start + plen > body_bytes_max:
            raise FramingError("BODY_TOO_LARGE", f"record {len(out)} would overrun the body bound {body_bytes_max}")
        if start + plen > n:
            raise FramingError("TRUNCATED_RECORD", f"body ends inside record {len(out)}")
        out.append((key, bytes(body[start:start + plen])))
        pos = start + plen
    if not out:
        raise FramingError("NO_RECORDS", "body holds no records")
    return out
