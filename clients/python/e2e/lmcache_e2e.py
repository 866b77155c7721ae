"""Run by run_lmcache_e2e.sh inside a virtual environment holding lmcache>=0.5.6,<0.6 and a CPU torch. Uses LMCache's
own connector loader and memory allocator (never run on the machines that wrote it: no Python registry there; any
API difference of the installed release fails here with its exception). Prints one line; exits 1 on failure."""

import asyncio
import sys
import threading

import torch
from lmcache.v1.config import LMCacheEngineConfig
from lmcache.v1.memory_management import MemoryFormat, MixedMemoryAllocator
from lmcache.v1.storage_backend.connector import CreateConnector
from lmcache.config import LMCacheEngineMetadata
from lmcache.utils import CacheEngineKey

URL = sys.argv[1]
# Qwen2.5-7B, TP=1, bf16: 28 layers, 4 KV heads x 128 = 512 per token and layer; 256 tokens -> 14 MiB per chunk
LAYERS, TOKENS, HIDDEN = 28, 256, 512
SHAPE = (2, LAYERS, TOKENS, HIDDEN)


class CpuBackend:
    """What the connector calls on LMCache's local CPU backend: allocate(shape, dtype, fmt)."""

    def __init__(self):
        self.allocator = MixedMemoryAllocator(1 << 30)

    def allocate(self, shape, dtype, fmt=None):
        return self.allocator.allocate(torch.Size(shape), dtype, fmt or MemoryFormat.KV_2LTD)


def main() -> int:
    config = LMCacheEngineConfig.from_defaults(chunk_size=TOKENS, remote_url=None, remote_storage_plugins=["orbitkv"],
                                               extra_config={
                                                   "remote_storage_plugin.orbitkv.module_path": "orbitkv.lmcache",
                                                   "remote_storage_plugin.orbitkv.class_name": "OrbitKVConnectorAdapter",
                                                   "remote_storage_plugin.orbitkv.url": URL,
                                                   "save_chunk_meta": False})
    meta = LMCacheEngineMetadata("Qwen/Qwen2.5-7B", 1, 0, "vllm", torch.bfloat16, (LAYERS, 2, TOKENS, 4, 128))
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    backend = CpuBackend()
    conn = CreateConnector("plugin://orbitkv", loop, backend, config, meta)
    inner = getattr(conn, "connector", conn)
    if type(inner).__name__ != "OrbitKVConnector":
        raise SystemExit(f"LMCache's loader returned {type(conn).__name__}/{type(inner).__name__}, not OrbitKVConnector")
    run = lambda c: asyncio.run_coroutine_threadsafe(c, loop).result(30)  # noqa: E731
    keys = [CacheEngineKey("vllm", "Qwen/Qwen2.5-7B", 1, 0, 0x1000 + i, torch.bfloat16) for i in range(8)]
    objs = []
    for i in range(8):
        o = backend.allocate(SHAPE, torch.bfloat16)
        o.tensor.copy_(torch.randn(SHAPE, dtype=torch.float32).to(torch.bfloat16))
        objs.append(o)
    before = [o.get_ref_count() for o in objs]
    for k, o in zip(keys, objs):
        run(conn.put(k, o))
    after = [o.get_ref_count() for o in objs]
    got = run(conn.batched_get(keys)) if conn.support_batched_get() else [run(conn.get(k)) for k in keys]
    bad = [i for i, (o, g) in enumerate(zip(objs, got)) if g is None or not torch.equal(o.tensor, g.tensor)]
    if bad:
        raise SystemExit(f"chunks {bad} did not read back bit-equal")
    if after != before:
        raise SystemExit(f"refcounts before put {before}, after {after}: set put_releases_ref accordingly")
    print(f"8 x {objs[0].get_size() >> 20} MiB chunks bit-equal through {type(conn).__name__}; refcounts {before} kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
