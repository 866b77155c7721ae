"""One shape for the three engine backends, so the contract rows run against each: ``put(ids, gen)``,
``prefix(ids)``, ``get(ids) -> [bytes or None]``, ``mapped(i)`` (the Manager key of chunk ``i``), ``log`` (the
backend's miss log), ``close()``. Each drives its backend through the engine's stand-in the way the engine would."""

from __future__ import annotations

import json
import urllib.request

from orbitkv.keys import map_key
from orbitkv.lmcache.l2 import OrbitKVL2Adapter, OrbitKVL2AdapterConfig, object_key_string
from orbitkv.sglang import page_key
from payloads import payload
from standin_lmcache import (CacheEngineKey, CpuAllocator, L2Caller, LMCacheConfig, Metadata, ObjectKey,
                             RemoteBackend, create_connector, kv_rank)
from standin_sglang import HiCacheStorageConfig, HostKVCache, create_backend

MODEL = "Qwen/Qwen2.5-0.5B"
#: one chunk: (2, 4 layers, tokens, 1024) bfloat16 = 256 KiB at 16 tokens
TOKENS = 16


def chunk_bytes(tokens: int = TOKENS) -> int:
    return 2 * 4 * tokens * 1024 * 2


class LMCacheHarness:
    name = "lmcache"

    def __init__(self, url: str, namespace: str, tokens: int = TOKENS, save_chunk_meta: bool = True,
                 timeout_s: float = 5.0, connect_timeout_s: float = 0.1):
        extra = {"remote_storage_plugin.orbitkv.module_path": "orbitkv.lmcache",
                 "remote_storage_plugin.orbitkv.class_name": "OrbitKVConnectorAdapter",
                 "remote_storage_plugin.orbitkv.url": url, "remote_storage_plugin.orbitkv.namespace": namespace,
                 "remote_storage_plugin.orbitkv.timeout_s": timeout_s, "save_chunk_meta": save_chunk_meta,
                 "remote_storage_plugin.orbitkv.connect_timeout_s": connect_timeout_s}
        self.config = LMCacheConfig(extra_config=extra, blocking_timeout_secs=max(10.0, 2 * timeout_s))
        self.allocator = CpuAllocator()
        self.shape = (2, 4, tokens, 1024)
        self.connector = create_connector(self.config, Metadata(MODEL, self.shape), self.allocator)
        self.backend = RemoteBackend(self.connector, self.config.blocking_timeout_secs)
        self.log = self.connector.log
        self.size = chunk_bytes(tokens)

    def key(self, i: int) -> CacheEngineKey:
        return CacheEngineKey(MODEL, 1, 0, 0x5F3C0000 + i)

    def mapped(self, i: int) -> bytes:
        return map_key(self.key(i).to_string())

    def objects(self, ids, gen: int, tokens=None):
        objs = []
        for i in ids:
            shape = self.shape if tokens is None else self.shape[:2] + (tokens,) + self.shape[3:]
            obj = self.allocator.allocate(shape, "bfloat16")
            obj.byte_array[:] = payload(gen, i, obj.get_size())
            objs.append(obj)
        return objs

    def put(self, ids, gen: int) -> None:
        objs = self.objects(ids, gen)
        self.backend.run(self.connector.batched_put([self.key(i) for i in ids], objs))
        for o in objs:
            o.ref_count_down()

    def prefix(self, ids) -> int:
        return self.backend.run(self.connector.batched_async_contains("lookup", [self.key(i) for i in ids]))

    def get(self, ids) -> list:
        objs = self.backend.run(self.connector.batched_get([self.key(i) for i in ids]))
        out = []
        for o in objs:
            out.append(None if o is None else bytes(o.byte_array))
            if o is not None:
                o.ref_count_down()
        return out

    def close(self) -> None:
        self.backend.close()


class L2Harness:
    name = "lmcache-mp"

    def __init__(self, url: str, namespace: str, tokens: int = TOKENS, timeout_s: float = 5.0,
                 connect_timeout_s: float = 0.1):
        self.adapter = OrbitKVL2Adapter(OrbitKVL2AdapterConfig(url=url, namespace=namespace, timeout_s=timeout_s,
                                                               connect_timeout_s=connect_timeout_s))
        self.caller = L2Caller(self.adapter)
        self.allocator = CpuAllocator()
        self.shape = (2, 4, tokens, 1024)
        self.log = self.adapter.log
        self.size = chunk_bytes(tokens)

    def key(self, i: int) -> ObjectKey:
        return ObjectKey(bytes(range(i % 200, i % 200 + 32)), MODEL, kv_rank(1, 0, 1, 0), 0, "")

    def mapped(self, i: int) -> bytes:
        return map_key(object_key_string(self.key(i)))

    def put(self, ids, gen: int) -> None:
        objs = [self.allocator.allocate(self.shape, "bfloat16") for _ in ids]
        for i, o in zip(ids, objs):
            o.byte_array[:] = payload(gen, i, o.get_size())
        self.caller.store([self.key(i) for i in ids], objs)
        for o in objs:
            o.ref_count_down()

    def prefix(self, ids) -> int:
        bits = self.caller.lookup([self.key(i) for i in ids])
        self.adapter.submit_unlock([self.key(i) for i in ids])
        n = 0
        while n < len(bits) and bits.test(n):
            n += 1
        return n

    def get(self, ids) -> list:
        objs = [self.allocator.allocate(self.shape, "bfloat16") for _ in ids]
        bits = self.caller.load([self.key(i) for i in ids], objs)
        out = [bytes(o.byte_array) if bits.test(n) else None for n, o in enumerate(objs)]
        for o in objs:
            o.ref_count_down()
        return out

    def close(self) -> None:
        self.adapter.close()


class SGLangHarness:
    name = "sglang"
    PAGES = 200  # pool pages; chunk i lives in page i % PAGES

    def __init__(self, url: str, namespace: str, tokens: int = TOKENS, timeout_s: float = 5.0,
                 connect_timeout_s: float = 0.1, is_mla=False, tp_rank: int = 0):
        self.size = chunk_bytes(tokens)
        half = self.size if is_mla else self.size // 2
        self.pool = HostKVCache(self.PAGES, 64, half, is_mla)
        cfg = HiCacheStorageConfig(tp_rank=tp_rank, tp_size=2, is_mla_model=is_mla, model_name=MODEL, extra_config={
            "backend_name": "orbitkv", "module_path": "orbitkv.sglang", "class_name": "OrbitKVHiCacheStorage",
            "url": url, "namespace": namespace, "timeout_s": timeout_s, "connect_timeout_s": connect_timeout_s})
        self.storage = create_backend(cfg, self.pool)
        self.log = self.storage.log

    def key(self, i: int) -> str:
        return f"{i:064x}"

    def mapped(self, i: int) -> bytes:
        return map_key(page_key(self.key(i), self.storage.tag, self.storage.is_mla))

    def put(self, ids, gen: int) -> None:
        for i in ids:
            self.pool.fill(i % self.PAGES, payload(gen, i, self.size))
        self.storage.batch_set_v1([self.key(i) for i in ids], self.pool.token_indices([i % self.PAGES for i in ids]))

    def prefix(self, ids) -> int:
        return self.storage.batch_exists([self.key(i) for i in ids])

    def get(self, ids) -> list:
        for i in ids:
            self.pool.clear(i % self.PAGES)
        ok = self.storage.batch_get_v1([self.key(i) for i in ids], self.pool.token_indices([i % self.PAGES for i in ids]))
        return [self.pool.page_bytes(i % self.PAGES) if hit else None for i, hit in zip(ids, ok)]

    def close(self) -> None:
        self.storage.close()


def _post(url: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def evict(url: str, ns: str, keys, medium: str = "ALL") -> int:
    """Evicts Manager keys (already mapped bytes) behind the backend's back."""
    return _post(url, "/cache/evict", {"namespace": ns, "keys": [k.hex() for k in keys], "medium": medium})["evicted"]



HARNESSES = {"lmcache": LMCacheHarness, "lmcache-mp": L2Harness, "sglang": SGLangHarness}
