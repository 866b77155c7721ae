"""LMCache multi-process mode: an ``L2AdapterInterface`` plugin putting an OrbitKV Manager under ``lmcache server``.

Loaded by configuration alone: ``--l2-adapter '{"type":"plugin","module_path":"orbitkv.lmcache.l2",
"class_name":"OrbitKVL2Adapter","adapter_params":{"url":"http://127.0.0.1:8090"}}'`` (docs/engines.md). Written from
LMCache's public interface; importable without LMCache.

* The adapter runs its own asyncio loop on one background thread; ``submit_*`` calls are thread-safe, return a task
  id at once and signal the task's eventfd (three distinct ones: store, lookup-and-lock, load) when it completes.
* Results are per task and returned once: ``pop_completed_store_tasks`` drains, ``query_*_result`` pops.
* **Lock is not a lease.** The Manager has no lease yet (ENGINES.md G8): ``submit_lookup_and_lock_task`` reports what
  is present now and ``submit_unlock`` cannot fail because it does nothing on the Manager. A locked hit that is
  evicted before its load comes back as a cleared bit in the load's bitmap (a load miss); LMCache recomputes it.
* Bounded: at most ``tasks_max`` tasks submitted and not yet collected; a further submit is refused by name (its task
  completes at once as a failure: False, or an all-clear bitmap) and counted in ``refused["tasks-full"]``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional

from .. import _plugin
from .._protocol import MISS
from ..aio import AsyncClient

try:
    from lmcache.v1.distributed.l2_adapters.base import L2AdapterInterface as _Base
except Exception:  # noqa: BLE001 - LMCache is not installed
    _Base = object

LOG = logging.getLogger("orbitkv.lmcache.l2")


class Bitmap:
    """One bit per key of a task (the adapter's own when LMCache's is not importable): ``test(i)``, ``set(i)``,
    ``count()``, ``len()``."""

    def __init__(self, size: int):
        self.size = size
        self.bits = bytearray(size)

    def set(self, i: int) -> None:
        self.bits[i] = 1

    def test(self, i: int) -> bool:
        return bool(self.bits[i])

    __getitem__ = test

    def count(self) -> int:
        return sum(self.bits)

    def __len__(self) -> int:
        return self.size

    def to_list(self) -> List[bool]:
        return [bool(b) for b in self.bits]


def object_key_string(key) -> str:
    """The engine key of an ``ObjectKey`` (chunk_hash, model_name, kv_rank, object_group_id, cache_salt):
    ``model@kv_rank as 8 hex digits@group@salt@chunk_hash hex``; orbitkv-keys/v1 maps it (digest form when long)."""
    return (f"{key.model_name}@{int(key.kv_rank):08x}@{key.object_group_id}@{key.cache_salt or ''}@"
            f"{bytes(key.chunk_hash).hex()}")


@dataclass
class OrbitKVL2AdapterConfig:
    """``adapter_params`` of the plugin spec (LMCache hands them to the class named ``<Adapter>Config``)."""

    url: str = ""
    namespace: str = "lmcache-mp"
    timeout_s: float = 2.0
    connect_timeout_s: float = 0.1
    pool_size: int = 8
    tasks_max: int = 1024
    token_file: Optional[str] = None
    log_interval_s: float = 10.0

    def __post_init__(self):
        if not self.url:
            raise ValueError("adapter_params.url (the Manager's http://HOST:PORT) is required")
        if self.tasks_max < 1 or self.timeout_s <= 0:
            raise ValueError("adapter_params.tasks_max must be at least 1 and timeout_s positive")


class OrbitKVL2Adapter(_Base):
    def __init__(self, config: Optional[OrbitKVL2AdapterConfig] = None, **kwargs):
        if config is None:
            known = {k: v for k, v in kwargs.items() if k in OrbitKVL2AdapterConfig.__dataclass_fields__}
            config = OrbitKVL2AdapterConfig(**known)
        self.config = config
        token = open(config.token_file, encoding="utf-8").read().strip() if config.token_file else None
        self.client = AsyncClient(config.url, config.namespace, token, config.timeout_s, config.connect_timeout_s,
                                  config.pool_size)
        self.log = _plugin.MissLog(LOG, config.log_interval_s)
        flags = os.EFD_NONBLOCK | os.EFD_CLOEXEC
        self._fds = {kind: os.eventfd(0, flags) for kind in ("store", "lookup", "load")}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._outstanding = 0
        self._stores: Dict[int, bool] = {}
        self._lookups: Dict[int, Bitmap] = {}
        self._loads: Dict[int, Bitmap] = {}
        self.refused: Dict[str, int] = {"tasks-full": 0}
        self.locked_hits = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="orbitkv-l2-loop", daemon=True)
        self._thread.start()
        self._closed = False

    # ------------------------------------------------------------------ eventfds
    def get_store_event_fd(self) -> int:
        return self._fds["store"]

    def get_lookup_and_lock_event_fd(self) -> int:
        return self._fds["lookup"]

    def get_load_event_fd(self) -> int:
        return self._fds["load"]

    # ------------------------------------------------------------------ store
    def submit_store_task(self, keys, objects) -> int:
        """Saves the objects' bytes (the caller keeps them alive and unchanged until the task completes; their
        refcounts are not touched). The task's result is True when every object was saved."""
        return self._submit("store", self._store(list(keys), list(objects)), False)

    def pop_completed_store_tasks(self) -> Dict[int, bool]:
        with self._lock:
            done, self._stores = self._stores, {}
            self._outstanding -= len(done)
        return done

    async def _store(self, keys, objects) -> bool:
        try:
            views = [memoryview(o.byte_array).cast("B") for o in objects]
            return await self.client.put_batch([_mapped(k) for k in keys], views) == len(keys)
        except Exception as e:  # noqa: BLE001 - a failed store is a False result, never an exception
            self.log.miss("store", _plugin.reason_of(e), str(e))
            return False

    # ------------------------------------------------------------------ lookup and lock
    def submit_lookup_and_lock_task(self, keys) -> int:
        keys = list(keys)
        return self._submit("lookup", self._lookup(keys), Bitmap(len(keys)))

    def query_lookup_and_lock_result(self, task_id: int) -> Optional[Bitmap]:
        return self._pop(self._lookups, task_id)

    async def _lookup(self, keys) -> Bitmap:
        bits = Bitmap(len(keys))
        try:
            for i, here in enumerate(await self.client.batch_exists([_mapped(k) for k in keys])):
                if here:
                    bits.set(i)
        except Exception as e:  # noqa: BLE001
            self.log.miss("lookup", _plugin.reason_of(e), str(e))
        with self._lock:
            self.locked_hits += bits.count()
        return bits

    def submit_unlock(self, keys) -> None:
        """Never fails: nothing is held on the Manager (no lease yet), only the adapter's count of locked hits."""
        with self._lock:
            self.locked_hits = max(0, self.locked_hits - len(keys))

    # ------------------------------------------------------------------ load
    def submit_load_task(self, keys, objects) -> int:
        """Reads each key into its object's buffer; bit i is set when object i holds the whole stored value."""
        keys = list(keys)
        return self._submit("load", self._load(keys, list(objects)), Bitmap(len(keys)))

    def query_load_result(self, task_id: int) -> Optional[Bitmap]:
        return self._pop(self._loads, task_id)

    async def _load(self, keys, objects) -> Bitmap:
        bits = Bitmap(len(keys))
        views = [memoryview(o.byte_array).cast("B") for o in objects]
        mapped = [_mapped(k) for k in keys]
        pos = 0
        try:
            while pos < len(keys):  # a restore delivers a prefix: skip the first miss and go on (≤ len(keys) calls)
                got = await self.client.batch_get_into(mapped[pos:], views[pos:])
                n = 0
                while n < len(got) and got[n] >= 0:
                    if got[n] == views[pos + n].nbytes:
                        bits.set(pos + n)
                    n += 1
                pos += n + 1
        except Exception as e:  # noqa: BLE001
            self.log.miss("load", _plugin.reason_of(e), str(e))
            for i, r in enumerate(getattr(e, "partial", None) or []):
                if r >= 0 and r == views[pos + i].nbytes:
                    bits.set(pos + i)
        return bits

    # ------------------------------------------------------------------ tasks
    def _submit(self, kind: str, coro, failed) -> int:
        with self._lock:
            if self._closed:
                coro.close()
                raise RuntimeError("the adapter is closed")
            task_id = next(self._ids)
            self._outstanding += 1
            full = self._outstanding > self.config.tasks_max
            if full:
                self.refused["tasks-full"] += 1
        if full:
            coro.close()
            self.log.miss(kind, "tasks-full", f"{self.config.tasks_max} tasks not yet collected")
            self._complete(kind, task_id, failed)
        else:
            asyncio.run_coroutine_threadsafe(self._run(kind, task_id, coro, failed), self._loop)
        return task_id

    async def _run(self, kind: str, task_id: int, coro, failed) -> None:
        try:
            result = await coro
        except BaseException as e:  # noqa: BLE001 - a task always completes
            self.log.miss(kind, _plugin.reason_of(e), str(e))
            result = failed
        self._complete(kind, task_id, result)

    def _complete(self, kind: str, task_id: int, result) -> None:
        with self._lock:
            {"store": self._stores, "lookup": self._lookups, "load": self._loads}[kind][task_id] = result
        try:
            os.eventfd_write(self._fds[kind], 1)
        except OSError:
            pass  # closed meanwhile

    def _pop(self, table: dict, task_id: int):
        with self._lock:
            result = table.pop(task_id, None)
            if result is not None:
                self._outstanding -= 1
        return result

    # ------------------------------------------------------------------ misc
    def list_l2_keys(self) -> list:
        return []  # the Manager has no listing

    def get_usage(self) -> dict:
        with self._lock:
            return {"outstanding_tasks": self._outstanding, "locked_hits": self.locked_hits,
                    "refused": dict(self.refused), "misses": self.log.total()}

    def close(self) -> None:
        """Stops the loop thread and closes the connections and the three eventfds (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self.client.close(), self._loop).result(10)
        except Exception:  # noqa: BLE001
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
        for fd in self._fds.values():
            os.close(fd)


def _mapped(key):
    """The engine key (the client maps it with orbitkv-keys/v1, once)."""
    return key if isinstance(key, (str, bytes)) else object_key_string(key)


__all__ = ["OrbitKVL2Adapter", "OrbitKVL2AdapterConfig", "Bitmap", "object_key_string", "MISS"]
