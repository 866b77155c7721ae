"""Stand-ins for the parts of LMCache the OrbitKV backends touch, written from the public interface described in
/work/shared/ENGINES.md section 1 (no LMCache code copied): a MemoryObj over a slice of a numpy slab with a refcount,
a CPU allocator that counts live objects and refcount underflows, CacheEngineKey.to_string(), the remote connector
loader's lookup rule (plugin://NAME, extra_config module_path/class_name, "No adapter found"), a RemoteBackend that
runs the connector's coroutines on its own event-loop thread, ObjectKey, and an L2 caller waiting on eventfds."""

from __future__ import annotations

import asyncio
import importlib
import os
import select
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

ITEMSIZE = {"bfloat16": 2, "float16": 2, "float32": 4, "uint8": 1}


@dataclass
class MemoryObjMetadata:
    shape: tuple
    dtype: str
    fmt: str = "KV_2LTD"


class MemoryObj:
    """Bytes of one chunk inside the allocator's slab; the token dimension is index 2 (KV_2LTD: 2, L, T, D)."""

    def __init__(self, allocator: "CpuAllocator", buf: np.ndarray, shape: tuple, dtype: str, fmt: str):
        self.allocator = allocator
        self._buf = buf
        self.metadata = MemoryObjMetadata(tuple(shape), dtype, fmt)
        self.ref = 1

    @property
    def byte_array(self) -> memoryview:
        return memoryview(self._buf)[:self.get_size()]

    def get_size(self) -> int:
        return int(np.prod(self.metadata.shape)) * ITEMSIZE[self.metadata.dtype]

    def get_shape(self) -> tuple:
        return self.metadata.shape

    def resize_tokens(self, nbytes: int) -> "MemoryObj":
        shape = list(self.metadata.shape)
        per_token = self.get_size() // shape[2]
        shape[2] = nbytes // per_token
        self.metadata.shape = tuple(shape)
        return self

    def ref_count_up(self) -> None:
        with self.allocator.lock:
            self.ref += 1

    def ref_count_down(self) -> None:
        with self.allocator.lock:
            self.ref -= 1
            if self.ref < 0:
                self.allocator.underflows += 1
            elif self.ref == 0:
                self.allocator.live.discard(id(self))
                self.allocator.used -= self.charged
                if self.allocator.slab_bytes and self._buf.nbytes == self.allocator.slab_bytes:
                    self.allocator.free.append(self._buf)

    def get_ref_count(self) -> int:
        return self.ref


class CpuAllocator:
    """LMCache's local CPU backend as the connector sees it: ``allocate(shape, dtype, fmt)`` or None when full."""

    def __init__(self, capacity_bytes: int = 1 << 30, slabs: int = 0, slab_bytes: int = 0):
        """``slabs`` buffers of ``slab_bytes`` are allocated (and touched) up front and reused, as LMCache's pinned
        pool is: an allocation of at most ``slab_bytes`` takes one, so a get allocates no payload-sized memory."""
        self.slab_bytes = slab_bytes
        self.free = [np.ones(slab_bytes, dtype=np.uint8) for _ in range(slabs)]
        self.capacity = capacity_bytes
        self.used = 0
        self.live: set = set()
        self.underflows = 0
        self.allocations = 0
        self.lock = threading.Lock()

    def allocate(self, shape, dtype, fmt=None) -> Optional[MemoryObj]:
        size = int(np.prod(shape)) * ITEMSIZE[str(dtype)]
        with self.lock:
            if self.used + size > self.capacity:
                return None
            self.used += size
            self.allocations += 1
            buf = self.free.pop() if self.free and size <= self.slab_bytes else None
        if buf is None:
            buf = np.zeros(size, dtype=np.uint8)
        obj = MemoryObj(self, buf, shape, str(dtype), fmt or "KV_2LTD")
        obj.charged = size
        with self.lock:
            self.live.add(id(obj))
        return obj

    def live_count(self) -> int:
        with self.lock:
            return len(self.live)


@dataclass(frozen=True)
class CacheEngineKey:
    model_name: str
    world_size: int
    worker_id: int
    chunk_hash: int
    dtype: str = "bfloat16"

    def to_string(self) -> str:
        return f"{self.model_name}@{self.world_size}@{self.worker_id}@{self.chunk_hash:x}@{self.dtype}"


@dataclass
class LMCacheConfig:
    extra_config: dict
    remote_storage_plugins: list = field(default_factory=lambda: ["orbitkv"])
    blocking_timeout_secs: float = 10.0


@dataclass
class Metadata:
    model_name: str
    kv_shape: tuple
    kv_dtype: str = "bfloat16"


@dataclass
class ConnectorContext:
    url: str
    loop: object
    local_cpu_backend: CpuAllocator
    config: LMCacheConfig
    metadata: Metadata


def create_connector(config: LMCacheConfig, metadata: Metadata, allocator: CpuAllocator, loop=None):
    """The loader's rule: each plugin name gives the virtual URL plugin://NAME and an adapter class from
    extra_config; the first adapter whose can_parse accepts the URL creates the connector."""
    for name in config.remote_storage_plugins:
        extra = config.extra_config
        module = importlib.import_module(extra[f"remote_storage_plugin.{name}.module_path"])
        adapter = getattr(module, extra[f"remote_storage_plugin.{name}.class_name"])()
        url = f"plugin://{name}"
        if adapter.can_parse(url):
            return adapter.create_connector(ConnectorContext(url, loop, allocator, config, metadata))
    raise RuntimeError("No adapter found")


class RemoteBackend:
    """Runs the connector's coroutines on one event-loop thread and waits at most blocking_timeout_secs."""

    def __init__(self, connector, blocking_timeout_s: float = 10.0):
        self.connector = connector
        self.timeout = blocking_timeout_s
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(self.timeout)

    def close(self) -> None:
        self.run(self.connector.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@dataclass(frozen=True)
class ObjectKey:
    chunk_hash: bytes
    model_name: str
    kv_rank: int
    object_group_id: int = 0
    cache_salt: str = ""


def kv_rank(world_size: int, global_rank: int, local_world_size: int, local_rank: int) -> int:
    return world_size << 24 | global_rank << 16 | local_world_size << 8 | local_rank


class L2Caller:
    """What LMCache's MP server does with an L2 adapter: submit, then wait on the task kind's eventfd and poll.
    Shared by threads (one per adapter)."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.fds = {"store": adapter.get_store_event_fd(), "lookup": adapter.get_lookup_and_lock_event_fd(),
                    "load": adapter.get_load_event_fd()}
        self.stores: dict = {}  # store results drained by any thread, kept for the thread that waits for them
        self.lock = threading.Lock()

    def _wait(self, kind: str, ready, bound_s: float = 30.0):
        deadline = time.monotonic() + bound_s
        poller = select.poll()
        poller.register(self.fds[kind], select.POLLIN)
        while True:
            got = ready()
            if got is not None:
                return got
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {kind} result within {bound_s} s")
            if poller.poll(min(int(left * 1000), 50)):  # short: another thread may consume the count
                try:
                    os.eventfd_read(self.fds[kind])
                except BlockingIOError:
                    pass  # another waiting thread consumed the count: poll the results again

    def store(self, keys, objs) -> bool:
        task = self.adapter.submit_store_task(keys, objs)

        def ready():
            with self.lock:
                self.stores.update(self.adapter.pop_completed_store_tasks())
                return self.stores.pop(task, None)

        return self._wait("store", ready)

    def lookup(self, keys):
        task = self.adapter.submit_lookup_and_lock_task(keys)
        return self._wait("lookup", lambda: self.adapter.query_lookup_and_lock_result(task))

    def load(self, keys, objs):
        task = self.adapter.submit_load_task(keys, objs)
        return self._wait("load", lambda: self.adapter.query_load_result(task))
