"""Key mapping ``orbitkv-keys/v1``: any engine key (``str`` or ``bytes``) to the Manager's key bytes (1..64).

* A ``str`` is first encoded as UTF-8 (lone surrogates with ``surrogatepass``, so every ``str`` maps); ``bytes``
  are taken as they are.
* **Direct form**: 1..64 bytes whose first byte is not ``0xFF`` are the key unchanged (vLLM and SGLang block hashes
  of 32 bytes, short LMCache strings).
* **Digest form**: anything else (empty, longer than 64 bytes, or starting with ``0xFF``) becomes
  ``0xFF | the first min(31, n) bytes | SHA-256 of all n bytes`` (33..64 bytes). ``0xFF`` never occurs in UTF-8,
  so a direct key of a ``str`` can never equal a digest key; the readable head helps debugging only.

The namespace carries the model identity (docs/engines.md): the same key bytes in two namespaces are two blocks.
Golden vectors: ``docs/vectors/keys-v1.json`` and docs/engines.md (checked by tests/test_keys.py).
"""

from __future__ import annotations

import hashlib
from typing import Union

KEY_MAPPING = "orbitkv-keys/v1"
KEY_BYTES_MAX = 64
DIGEST_MARK = 0xFF
HEAD_BYTES = 31

Key = Union[str, bytes, bytearray, memoryview]


def map_key(key: Key) -> bytes:
    """The key bytes of an engine key under ``orbitkv-keys/v1``."""
    if isinstance(key, str):
        raw = key.encode("utf-8", "surrogatepass")
    elif isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
    else:
        raise TypeError(f"a key is str or bytes, got {type(key).__name__}")
    if 1 <= len(raw) <= KEY_BYTES_MAX and raw[0] != DIGEST_MARK:
        return raw
    return bytes([DIGEST_MARK]) + raw[:HEAD_BYTES] + hashlib.sha256(raw).digest()


def key_hex(key: Key) -> str:
    """The lowercase hex form the JSON endpoints take."""
    return map_key(key).hex()
