"""The LMCache MP L2 adapter beyond the shared contract: three distinct eventfds signalled per completed task, each
result returned once, lookup-and-lock per key, a locked hit evicted before its load (a cleared bit: no lease yet),
the named refusal past ``tasks_max``, thread safety, and ``close()`` releasing the fds and the loop thread."""

import os
import select

import pytest

from backend_harness import L2Harness, evict
from managers import Manager
from orbitkv.keys import map_key
from orbitkv.lmcache.l2 import OrbitKVL2Adapter, OrbitKVL2AdapterConfig, object_key_string
from payloads import payload
from standin_lmcache import L2Caller, ObjectKey


@pytest.fixture(scope="module")
def manager():
    m = Manager("lmcache-l2", ["--block-bytes-max", "1MiB", "--dram", "128MiB"]).start()
    yield m
    m.kill()


@pytest.fixture
def harness(manager, request):
    h = L2Harness(manager.url, f"l2/{request.node.name}")
    yield h
    h.close()


def _readable(fd: int) -> bool:
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(0))


def test_three_distinct_eventfds_each_signalled_by_its_own_kind(harness):
    a = harness.adapter
    fds = [a.get_store_event_fd(), a.get_lookup_and_lock_event_fd(), a.get_load_event_fd()]
    assert len(set(fds)) == 3 and all(fd >= 0 for fd in fds)
    harness.put([1], gen=1)  # waits on the store fd
    assert not _readable(fds[1]) and not _readable(fds[2]), "a store signals only the store eventfd"
    harness.prefix([1])
    assert not _readable(fds[2]), "a lookup signals only the lookup eventfd"


def test_each_result_is_returned_once(harness):
    harness.put([1, 2], gen=2)
    keys = [harness.key(i) for i in (1, 2, 3)]
    bits = harness.caller.lookup(keys)
    assert bits.to_list() == [True, True, False]
    task = harness.adapter.submit_lookup_and_lock_task(keys)
    got = harness.caller._wait("lookup", lambda: harness.adapter.query_lookup_and_lock_result(task))
    assert got.to_list() == [True, True, False]
    assert harness.adapter.query_lookup_and_lock_result(task) is None, "a result is returned once"
    assert harness.adapter.pop_completed_store_tasks() == {}


def test_load_is_per_key_into_the_callers_buffers(harness):
    harness.put([0, 1, 3], gen=3)
    got = harness.get([0, 1, 2, 3])
    assert got == [payload(3, 0, harness.size), payload(3, 1, harness.size), None, payload(3, 3, harness.size)]


def test_a_locked_hit_evicted_before_its_load_is_a_cleared_bit(harness, manager):
    harness.put([4, 5], gen=4)
    keys = [harness.key(4), harness.key(5)]
    assert harness.caller.lookup(keys).to_list() == [True, True]
    assert harness.adapter.get_usage()["locked_hits"] == 2
    evict(manager.url, harness.adapter.config.namespace, [harness.mapped(4)])
    objs = [harness.allocator.allocate(harness.shape, "bfloat16") for _ in keys]
    bits = harness.caller.load(keys, objs)
    assert bits.to_list() == [False, True], "no lease: the evicted hit is reported not loaded, never stale bytes"
    assert bytes(objs[1].byte_array) == payload(4, 5, harness.size)
    harness.adapter.submit_unlock(keys)
    assert harness.adapter.get_usage()["locked_hits"] == 0


def test_tasks_past_the_bound_are_refused_by_name(manager):
    a = OrbitKVL2Adapter(OrbitKVL2AdapterConfig(url=manager.url, namespace="l2/bound", tasks_max=2))
    try:
        caller = L2Caller(a)
        keys = [ObjectKey(b"\x01" * 32, "m", 1)]
        tasks = [a.submit_lookup_and_lock_task(keys) for _ in range(3)]  # none collected yet
        results = [caller._wait("lookup", lambda t=t: a.query_lookup_and_lock_result(t)) for t in tasks]
        assert a.refused["tasks-full"] >= 1
        assert all(r.to_list() == [False] for r in results)
        assert a.get_usage()["outstanding_tasks"] == 0
    finally:
        a.close()


def test_close_releases_fds_and_the_loop_thread(manager):
    a = OrbitKVL2Adapter(url=manager.url, namespace="l2/close", unknown_option="ignored")  # extra kwargs accepted
    fds = [a.get_store_event_fd(), a.get_lookup_and_lock_event_fd(), a.get_load_event_fd()]
    L2Caller(a).lookup([ObjectKey(b"\x02" * 32, "m", 1)])
    a.close()
    a.close()  # idempotent
    assert not a._thread.is_alive()
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)
    with pytest.raises(RuntimeError, match="closed"):
        a.submit_lookup_and_lock_task([])


def test_config_refuses_a_missing_url():
    with pytest.raises(ValueError, match="url"):
        OrbitKVL2AdapterConfig()


def test_object_key_mapping_keeps_rank_group_and_salt_apart():
    base = ObjectKey(b"\xab" * 32, "Qwen/Qwen2.5-7B", 1 << 24 | 0 << 16 | 1 << 8 | 0, 0, "")
    variants = [base, ObjectKey(base.chunk_hash, base.model_name, base.kv_rank + 1),
                ObjectKey(base.chunk_hash, base.model_name, base.kv_rank, 1),
                ObjectKey(base.chunk_hash, base.model_name, base.kv_rank, 0, "salt")]
    mapped = {map_key(object_key_string(k)) for k in variants}
    assert len(mapped) == 4 and all(len(m) <= 64 for m in mapped)
