"""SGLang HiCache backend: a ``HiCacheStorage`` on an OrbitKV Manager, loaded with the dynamic backend option:
``--hicache-storage-backend dynamic --hicache-storage-backend-extra-config '{"backend_name":"orbitkv",
"module_path":"orbitkv.sglang","class_name":"OrbitKVHiCacheStorage","url":"http://127.0.0.1:8090"}'``.

Written from SGLang's public interface (``hicache_storage.py``, ``backend_factory.py``: constructed as
``cls(storage_config, kwargs)``); importable without SGLang. Every failure is a miss (``False``, ``None``, ``0``),
counted and logged at a bounded rate.

Key mapping (``orbitkv-keys/v1`` applied to an engine key, docs/vectors/engine-keys-v1.json): a page key of 64 hex
digits (SGLang's SHA-256 chain) is taken as its 32 bytes, any other key as its UTF-8; then ``_<rank>_<part>`` is
appended, ``<rank>`` being the TP rank (``m`` for an MLA model, whose latent every TP rank shares) followed by
``.<pp rank>`` when PP > 1, and ``<part>`` ``kv`` (an MHA page: its K bytes then its V bytes, one block) or ``k`` (an
MLA page). The basic API's keys get ``_<rank>`` only. The namespace is ``sglang/<model_name>`` unless configured.
"""

from __future__ import annotations

import logging
import string
from typing import List, Optional

from .. import _plugin
from .._protocol import MISS
from ..client import Client

try:
    from sglang.srt.mem_cache.hicache_storage import HiCacheStorage as _Base
except Exception:  # noqa: BLE001 - SGLang is not installed
    _Base = object

LOG = logging.getLogger("orbitkv.sglang")
#: pages per SGLang call (``STORAGE_BATCH_SIZE``): one lean query or one restore request each
PAGES_PER_CALL = 128
_HEX = set(string.hexdigits)


def key_bytes(key) -> bytes:
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    if len(key) == 64 and set(key) <= _HEX:
        return bytes.fromhex(key)
    return key.encode("utf-8", "surrogatepass")


def rank_tag(tp_rank: int, pp_rank: int, pp_size: int, is_mla: bool) -> str:
    return ("m" if is_mla else str(int(tp_rank))) + (f".{int(pp_rank)}" if pp_size > 1 else "")


def page_key(key, tag: str, is_mla: bool) -> bytes:
    """The engine key of one page of the zero-copy API (the client maps it with orbitkv-keys/v1)."""
    return key_bytes(key) + ("_" + tag + ("_k" if is_mla else "_kv")).encode("ascii")


def basic_key(key, tag: str) -> bytes:
    """The engine key of one value of the basic get/set API (the client maps it with orbitkv-keys/v1)."""
    return key_bytes(key) + ("_" + tag).encode("ascii")


def _view(x) -> memoryview:
    """A contiguous byte view of a bytes-like object, numpy array or CPU tensor."""
    try:
        mv = memoryview(x)
    except TypeError:
        t = x.contiguous()
        mv = memoryview(t.view(__import__("torch").uint8).numpy() if hasattr(t, "view") else t.numpy())
    return mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv


class OrbitKVHiCacheStorage(_Base):
    def __init__(self, storage_config=None, kwargs: Optional[dict] = None):
        extra = dict(getattr(storage_config, "extra_config", None) or {})
        extra.update(kwargs or {})
        url = extra.get("url")
        if not url:
            raise ValueError('extra_config "url" (the Manager\'s http://HOST:PORT) is required')
        self.is_mla = bool(getattr(storage_config, "is_mla_model", False))
        self.tag = rank_tag(getattr(storage_config, "tp_rank", 0), getattr(storage_config, "pp_rank", 0),
                            getattr(storage_config, "pp_size", 1), self.is_mla)
        model = getattr(storage_config, "model_name", None) or "model"
        self.namespace = str(extra.get("namespace") or f"sglang/{model}")
        token_file = extra.get("token_file")
        token = open(token_file, encoding="utf-8").read().strip() if token_file else None
        self.client = Client(url, self.namespace, token, float(extra.get("timeout_s", 1.5)),
                             float(extra.get("connect_timeout_s", 0.1)), int(extra.get("pool_size", 8)))
        self.log = _plugin.MissLog(LOG, float(extra.get("log_interval_s", 10.0)))
        self.mem_pool_host = None
        self._block_max: Optional[int] = None

    def register_mem_pool_host(self, mem_pool_host) -> None:
        self.mem_pool_host = mem_pool_host

    # ------------------------------------------------------------------ prefix and existence
    def exists(self, key) -> bool:
        try:
            return self.client.exists(basic_key(key, self.tag))
        except Exception as e:  # noqa: BLE001
            self.log.miss("exists", _plugin.reason_of(e), str(e))
            return False

    def batch_exists(self, keys, extra_info=None) -> int:
        """How many leading pages the Manager can deliver (one lean query per 128 pages)."""
        try:
            return self.client.prefix_len([page_key(k, self.tag, self.is_mla) for k in keys])
        except Exception as e:  # noqa: BLE001
            self.log.miss("exists", _plugin.reason_of(e), str(e))
            return 0

    # ------------------------------------------------------------------ zero-copy page API
    def _pages(self, host_indices) -> List[tuple]:
        """Per page: the views of its host-pool bytes (K then V for MHA, the latent for MLA)."""
        ptrs, sizes = self.mem_pool_host.get_page_buffer_meta(host_indices)
        step = 1 if self.is_mla else 2
        if len(ptrs) % step or len(ptrs) != len(sizes):
            raise ValueError(f"{len(ptrs)} page pointers for {len(sizes)} sizes")
        return [tuple(_plugin.pointer_view(ptrs[i + j], sizes[i + j]) for j in range(step))
                for i in range(0, len(ptrs), step)]

    def batch_get_v1(self, keys, host_indices, extra_info=None) -> List[bool]:
        """Reads the pages' prefix straight into the host pool's pages; True per page read whole."""
        keys = list(keys)
        try:
            pages = self._pages(host_indices)
            if len(pages) != len(keys):
                raise ValueError(f"{len(keys)} keys for {len(pages)} pages")

            def alloc(i: int, size: int):
                return pages[i] if sum(v.nbytes for v in pages[i]) == size else None

            got = self.client.batch_get_with([page_key(k, self.tag, self.is_mla) for k in keys], alloc)
        except Exception as e:  # noqa: BLE001
            self.log.miss("get", _plugin.reason_of(e), str(e))
            got = getattr(e, "partial", None) or [MISS] * len(keys)
        out = [n >= 0 for n in got]
        if not all(out):
            first = out.index(False)
            if got[first] == -2:
                self.log.miss("get", "size-mismatch", f"page {first}: the stored page is not this pool's page size")
            out[first:] = [False] * (len(out) - first)
        return out

    def batch_set_v1(self, keys, host_indices, extra_info=None) -> List[bool]:
        """Saves the pages the Manager does not have yet, sent from the host pool's pages; True per stored page."""
        keys = list(keys)
        try:
            pages = self._pages(host_indices)
            if len(pages) != len(keys):
                raise ValueError(f"{len(keys)} keys for {len(pages)} pages")
            size = sum(v.nbytes for v in pages[0]) if pages else 0
            if size > self._block_bytes_max():
                self.log.miss("set", "oversized", f"a {size} B page exceeds the Manager's block maximum")
                return [False] * len(keys)
            self.client.put_if_absent_batch([page_key(k, self.tag, self.is_mla) for k in keys], pages)
            return [True] * len(keys)
        except Exception as e:  # noqa: BLE001
            self.log.miss("set", _plugin.reason_of(e), str(e))
            return [False] * len(keys)

    def _block_bytes_max(self) -> int:
        if self._block_max is None:
            self._block_max = self.client.limits().block_bytes_max
        return self._block_max

    # ------------------------------------------------------------------ basic API
    def get(self, key, target_location=None, target_sizes=None):
        return self.batch_get([key], None if target_location is None else [target_location])[0]

    def batch_get(self, keys, target_locations=None, target_sizes=None) -> list:
        """Into ``target_locations`` when given (each returned on a hit), else new bytearrays; None per miss."""
        keys = [basic_key(k, self.tag) for k in keys]
        try:
            if target_locations is None:
                return self.client.get_batch(keys)
            got = self.client.batch_get_into(keys, [_view(t) for t in target_locations])
            return [t if n >= 0 else None for t, n in zip(target_locations, got)]
        except Exception as e:  # noqa: BLE001
            self.log.miss("get", _plugin.reason_of(e), str(e))
            return [None] * len(keys)

    def set(self, key, value=None, target_location=None, target_sizes=None) -> bool:
        return self.batch_set([key], [value if value is not None else target_location])

    def batch_set(self, keys, values=None, target_locations=None, target_sizes=None) -> bool:
        values = values if values is not None else target_locations
        try:
            views = [_view(v) for v in values]
            limit = self._block_bytes_max()
            if any(v.nbytes > limit for v in views):
                self.log.miss("set", "oversized", f"a value exceeds the Manager's block maximum {limit} B")
                return False
            return self.client.put_batch([basic_key(k, self.tag) for k in keys], views) == len(views)
        except Exception as e:  # noqa: BLE001
            self.log.miss("set", _plugin.reason_of(e), str(e))
            return False

    def delete(self, key) -> None:
        try:
            self.client.remove(basic_key(key, self.tag))
        except Exception as e:  # noqa: BLE001
            self.log.miss("delete", _plugin.reason_of(e), str(e))

    def clear(self) -> None:
        pass  # a namespace is shared with other ranks and engines: nothing is cleared wholesale

    def get_stats(self) -> dict:
        return {"misses": {f"{op}/{reason}": n for (op, reason), n in self.log.counts.items()}}

    def close(self) -> None:
        self.client.close()
