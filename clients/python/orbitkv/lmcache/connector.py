"""LMCache in-process backend: a ``RemoteConnector`` and its ``ConnectorAdapter`` for ``lmcache>=0.5.6,<0.6``.

Loaded by configuration alone (docs/engines.md "LMCache in-process"): ``remote_storage_plugins: ["orbitkv"]`` and
``extra_config`` ``remote_storage_plugin.orbitkv.module_path: orbitkv.lmcache``, ``...class_name:
OrbitKVConnectorAdapter``, ``...url: http://127.0.0.1:8090``. Importable without LMCache (the bases fall back to
``object``), written from LMCache's public interface; no LMCache code is copied.

Contract kept for the engine:
* every failure is a miss (``None``, ``False``, ``0``), counted and logged at a bounded rate; nothing is raised;
* each call is bounded by ``timeout_s``, which must be below LMCache's ``blocking_timeout_secs``;
* reads land in the ``MemoryObj`` the local CPU backend allocated (``readinto`` its ``byte_array``);
* refcounts: see :class:`OrbitKVConnector`.
"""

from __future__ import annotations

import logging
from typing import List, Optional

from .. import _plugin
from .._protocol import MISS
from ..aio import AsyncClient
from ..client import Client

try:  # the real bases when LMCache is installed; plain objects otherwise (tests use stand-ins)
    from lmcache.v1.storage_backend.connector.base_connector import RemoteConnector as _ConnectorBase
except Exception:  # noqa: BLE001 - any import failure means "LMCache is not here"
    _ConnectorBase = object
try:
    from lmcache.v1.storage_backend.connector import ConnectorAdapter as _AdapterBase
except Exception:  # noqa: BLE001
    _AdapterBase = object

LOG = logging.getLogger("orbitkv.lmcache")
SCHEME = "plugin://"
PLUGIN = "orbitkv"
#: LMCache's blocking timeout when its config does not name one
BLOCKING_TIMEOUT_DEFAULT_S = 10.0


class Settings:
    """The connector's options, read from LMCache's ``extra_config`` under ``remote_storage_plugin.<name>.``
    (``<name>`` is what follows ``plugin://``: ``orbitkv`` or ``orbitkv.<instance>``)."""

    def __init__(self, url: str, extra: dict, blocking_timeout_s: float, model_name: str):
        if not isinstance(url, str) or not url.startswith(SCHEME + PLUGIN):
            raise ValueError(f"not an orbitkv plugin URL: {url!r}")
        prefix = "remote_storage_plugin." + url[len(SCHEME):] + "."
        get = lambda name, default=None: extra.get(prefix + name, default)  # noqa: E731
        self.manager_url = get("url")
        if not self.manager_url:
            raise ValueError(f"extra_config {prefix}url (the Manager's http://HOST:PORT) is required")
        self.namespace = str(get("namespace") or ("lmcache/" + (model_name or "model")))
        self.timeout_s = float(get("timeout_s", min(2.0, blocking_timeout_s / 2)))
        if not 0 < self.timeout_s < blocking_timeout_s:
            raise ValueError(f"{prefix}timeout_s ({self.timeout_s}) must be positive and below LMCache's "
                             f"blocking_timeout_secs ({blocking_timeout_s}): the connector must answer first")
        self.connect_timeout_s = float(get("connect_timeout_s", 0.1))
        self.pool_size = int(get("pool_size", 8))
        self.log_interval_s = float(get("log_interval_s", 10.0))
        self.put_releases_ref = _bool(get("put_releases_ref", False))
        self.save_chunk_meta = _bool(extra.get("save_chunk_meta", True))
        token_file = get("token_file")
        self.token = open(token_file, encoding="utf-8").read().strip() if token_file else None


def _bool(v) -> bool:
    return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true", "yes", "on")


class OrbitKVConnector(_ConnectorBase):
    """The connector. ``local_cpu_backend.allocate(shape, dtype, fmt)`` gives the ``MemoryObj`` a get fills;
    ``chunk_shape``/``dtype``/``fmt`` describe a full chunk (from LMCache's metadata).

    Refcount balance (checked by tests/test_lmcache_connector.py): ``put``/``batched_put`` never change an object's
    refcount unless ``put_releases_ref`` is set (then one ``ref_count_down()`` per object after the send, for a
    release whose wrapper leaves the drop to the connector); ``get``/``batched_get``/``batched_get_non_blocking``
    hand each returned object over with the allocator's one reference, and ``ref_count_down()`` every object they
    allocated but do not return (a cut read, a bad header, anything past the first miss)."""

    def __init__(self, settings: Settings, local_cpu_backend, chunk_shape, dtype, fmt=None, loop=None):
        if _ConnectorBase is not object:
            super().__init__()
        self.settings = settings
        self.backend = local_cpu_backend
        self.chunk_shape = tuple(int(d) for d in chunk_shape)
        self.dtype = dtype
        self.fmt = fmt
        self.loop = loop
        s = settings
        self.client = Client(s.manager_url, s.namespace, s.token, s.timeout_s, s.connect_timeout_s, s.pool_size)
        self.aclient = AsyncClient(s.manager_url, s.namespace, s.token, s.timeout_s, s.connect_timeout_s,
                                   s.pool_size)
        self.log = _plugin.MissLog(LOG, s.log_interval_s)
        self.block_bytes_max: Optional[int] = None

    # ------------------------------------------------------------------ flags LMCache asks
    def support_ping(self) -> bool:
        return True

    def support_batched_get(self) -> bool:
        return True

    def support_batched_put(self) -> bool:
        return True

    def support_batched_async_contains(self) -> bool:
        return True

    def support_batched_get_non_blocking(self) -> bool:
        return True

    def post_init(self) -> None:
        pass

    # ------------------------------------------------------------------ lookups
    async def exists(self, key) -> bool:
        try:
            return (await self.aclient.batch_exists([_key(key)]))[0]
        except Exception as e:  # noqa: BLE001 - every failure is a miss
            self.log.miss("exists", _plugin.reason_of(e), str(e))
            return False

    def exists_sync(self, key) -> bool:
        try:
            return self.client.exists(_key(key))
        except Exception as e:  # noqa: BLE001
            self.log.miss("exists", _plugin.reason_of(e), str(e))
            return False

    async def batched_async_contains(self, lookup_id, keys, pin: bool = False) -> int:
        """Consecutive hits from the first key (one lean query per 128 keys). ``pin`` cannot be honoured until the
        Manager offers a lease: a counted hit may still be evicted before the get, which then misses."""
        try:
            return await self.aclient.prefix_len([_key(k) for k in keys])
        except Exception as e:  # noqa: BLE001
            self.log.miss("contains", _plugin.reason_of(e), str(e))
            return 0

    def batched_contains(self, keys) -> int:
        try:
            return self.client.prefix_len([_key(k) for k in keys])
        except Exception as e:  # noqa: BLE001
            self.log.miss("contains", _plugin.reason_of(e), str(e))
            return 0

    async def ping(self) -> int:
        """0 when the Manager answers /health healthy, 1 otherwise (LMCache's health monitor then falls back)."""
        try:
            await self.aclient.health()
            return 0
        except Exception as e:  # noqa: BLE001
            self.log.miss("ping", _plugin.reason_of(e), str(e))
            return 1

    async def list(self) -> List[str]:
        return []  # the Manager has no listing; LMCache allows an empty list

    # ------------------------------------------------------------------ reads
    async def get(self, key):
        return (await self._read("get", [key]))[0]

    async def batched_get(self, keys):
        """One entry per key in order (padded): the restored prefix, then ``None``."""
        return await self._read("get", list(keys))

    async def batched_get_non_blocking(self, lookup_id, keys):
        """The prefix only: the objects up to the first miss (everything else was released)."""
        out = await self._read("get", list(keys))
        n = next((i for i, o in enumerate(out) if o is None), len(out))
        return out[:n]

    async def _read(self, op: str, keys: list) -> list:
        objs: list = [None] * len(keys)
        results = [MISS] * len(keys)
        header = _plugin.HEADER_BYTES if self.settings.save_chunk_meta else 0
        heads = [bytearray(header) for _ in keys] if header else None

        def alloc(i: int, size: int):
            return self._alloc(i, size, objs, heads)

        try:
            results = await self.aclient.batch_get_with([_key(k) for k in keys], alloc)
        except Exception as e:  # noqa: BLE001
            self.log.miss(op, _plugin.reason_of(e), str(e))
            partial = getattr(e, "partial", None)
            results = partial if partial is not None else [MISS] * len(keys)
        return self._settle(op, keys, objs, results, heads)

    def _alloc(self, i: int, size: int, objs: list, heads):
        header = _plugin.HEADER_BYTES if heads is not None else 0
        full = _nbytes_of(self.chunk_shape, self.dtype)
        if size - header > full or size <= header:
            return None  # larger than a chunk of this model: not ours to read (reported -2, a miss)
        obj = self.backend.allocate(self.chunk_shape, self.dtype, self.fmt)
        if obj is None:
            return None  # LMCache's CPU pool is full: a miss
        objs[i] = obj
        body = memoryview(obj.byte_array).cast("B")[:size - header]
        return (memoryview(heads[i]), body) if header else body

    def _settle(self, op: str, keys: list, objs: list, results: list, heads) -> list:
        out: list = [None] * len(keys)
        ended = False
        for i, obj in enumerate(objs):
            n = results[i]
            if not ended and obj is not None and n >= 0:
                out[i] = self._finish(op, obj, n, heads[i] if heads is not None else None)
            if out[i] is None:
                ended = True  # the prefix ends at the first miss: release everything after it
                if obj is not None:
                    obj.ref_count_down()
        return out

    def _finish(self, op: str, obj, n: int, head):
        """The object holding a whole record of ``n`` bytes, reshaped to a partial last chunk; None for a header
        that does not describe what was read (the caller releases the object)."""
        body = n
        if head is not None:
            try:
                shape, dtype, fmt, nbytes = _plugin.unpack_header(head)
            except ValueError as e:
                self.log.miss(op, "bad-header", str(e))
                return None
            body = n - _plugin.HEADER_BYTES
            if nbytes != body or not _plugin.names_match(dtype, self.dtype) or nbytes != _nbytes_of(shape, self.dtype):
                self.log.miss(op, "header-mismatch", f"{shape} {dtype} {nbytes} B against {body} B read")
                return None
        full = _nbytes_of(self.chunk_shape, self.dtype)
        if body != full:
            return self._partial(obj, body)
        return obj

    def _partial(self, obj, nbytes: int):
        reshape = getattr(super(), "reshape_partial_chunk", None)
        if reshape is not None:  # LMCache's own rule for a short last chunk
            return reshape(obj, nbytes)
        resize = getattr(obj, "resize_tokens", None)  # the stand-in MemoryObj of the tests
        return resize(nbytes) if resize is not None else obj

    # ------------------------------------------------------------------ writes
    async def put(self, key, memory_obj) -> None:
        await self.batched_put([key], [memory_obj])

    async def batched_put(self, keys, memory_objs) -> None:
        """Saves the chunks (atomic per save); a failure is logged and lost, as LMCache expects of a put."""
        keys, memory_objs = list(keys), list(memory_objs)
        try:
            limit = await self._block_bytes_max()
            mapped, values = [], []
            for k, obj in zip(keys, memory_objs):
                value = self._value(obj)
                size = sum(len(v) for v in value) if isinstance(value, tuple) else len(value)
                if size > limit:
                    self.log.miss("put", "oversized", f"{size} B chunk exceeds the Manager's block maximum {limit} B")
                    continue
                mapped.append(_key(k))
                values.append(value)
            if mapped:
                await self.aclient.put_batch(mapped, values)
        except Exception as e:  # noqa: BLE001
            self.log.miss("put", _plugin.reason_of(e), str(e))
        finally:
            if self.settings.put_releases_ref:
                for obj in memory_objs:
                    obj.ref_count_down()

    def _value(self, obj):
        body = memoryview(obj.byte_array).cast("B")
        if not self.settings.save_chunk_meta:
            return body
        meta = obj.metadata
        return (_plugin.pack_header(meta.shape, meta.dtype, getattr(meta, "fmt", None), body.nbytes), body)

    async def _block_bytes_max(self) -> int:
        if self.block_bytes_max is None:
            self.block_bytes_max = (await self.aclient.limits()).block_bytes_max
        return self.block_bytes_max

    def remove_sync(self, key) -> bool:
        try:
            return self.client.remove(_key(key)) > 0
        except Exception as e:  # noqa: BLE001
            self.log.miss("remove", _plugin.reason_of(e), str(e))
            return False

    async def close(self) -> None:
        await self.aclient.close()
        self.client.close()


def _key(key) -> str:
    """The engine key string (``CacheEngineKey.to_string()``); orbitkv-keys/v1 maps it to key bytes."""
    return key if isinstance(key, (str, bytes)) else key.to_string()


_ITEMSIZE = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "float64": 8, "uint8": 1, "int8": 1,
             "float8_e4m3fn": 1, "float8_e5m2": 1}


def _nbytes_of(shape, dtype) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    size = getattr(dtype, "itemsize", None)
    if not isinstance(size, int):
        size = _ITEMSIZE.get(str(dtype).rsplit(".", 1)[-1])
        if size is None:
            raise ValueError(f"unknown dtype {dtype!r}")
    return n * size


class OrbitKVConnectorAdapter(_AdapterBase):
    """LMCache's loader asks each adapter ``can_parse(url)`` and calls ``create_connector(context)`` on the first
    that accepts; this one accepts ``plugin://orbitkv`` and ``plugin://orbitkv.<instance>``."""

    def __init__(self, schema: str = SCHEME + PLUGIN):
        if _AdapterBase is not object:
            super().__init__(schema)
        self.schema = schema

    def can_parse(self, url: str) -> bool:
        if not isinstance(url, str) or not url.startswith(SCHEME + PLUGIN):
            return False
        rest = url[len(SCHEME + PLUGIN):]
        return rest == "" or (rest.startswith(".") and len(rest) > 1 and "/" not in rest)

    def create_connector(self, context):
        config, meta = context.config, context.metadata
        extra = dict(getattr(config, "extra_config", None) or {})
        blocking = float(getattr(config, "blocking_timeout_secs", None) or BLOCKING_TIMEOUT_DEFAULT_S)
        settings = Settings(context.url, extra, blocking, getattr(meta, "model_name", ""))
        LOG.info("orbitkv connector for %s: Manager %s namespace %r timeout %.3f s save_chunk_meta %s",
                 context.url, settings.manager_url, settings.namespace, settings.timeout_s, settings.save_chunk_meta)
        return OrbitKVConnector(settings, context.local_cpu_backend, meta.kv_shape, meta.kv_dtype,
                                getattr(context, "fmt", None), getattr(context, "loop", None))
