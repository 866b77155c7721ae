"""OrbitKV backend for SGLang HiCache (``--hicache-storage-backend dynamic``), importable without SGLang.
docs/engines.md "Engine backends" has the configuration, key mapping and failure semantics."""

from .hicache import PAGES_PER_CALL, OrbitKVHiCacheStorage, basic_key, key_bytes, page_key, rank_tag

__all__ = ["OrbitKVHiCacheStorage", "PAGES_PER_CALL", "basic_key", "key_bytes", "page_key", "rank_tag"]
