"""The LMCache in-process connector beyond the shared contract: the loader's URL forms, the options' validation,
refcount balance of put and get, raw-bytes storage (save_chunk_meta false) with a partial last chunk, the
self-describing header, the prefix-only non-blocking get releasing what it does not return, and the bounded log."""

import logging

import pytest

from backend_harness import MODEL, LMCacheHarness, chunk_bytes
from managers import Manager
from orbitkv import Client
from orbitkv import _plugin
from orbitkv.keys import map_key
from orbitkv.lmcache import OrbitKVConnectorAdapter, Settings
from payloads import payload
from standin_lmcache import CpuAllocator, LMCacheConfig, Metadata, create_connector


@pytest.fixture(scope="module")
def manager():
    m = Manager("lmcache-connector", ["--block-bytes-max", "1MiB", "--dram", "128MiB"]).start()
    yield m
    m.kill()


@pytest.fixture
def harness(manager, request):
    opened = []

    def make(ns, **kw):
        h = LMCacheHarness(manager.url, f"lmcache/{request.node.name}/{ns}", **kw)
        opened.append(h)
        return h

    yield make
    for h in opened:
        h.close()


def test_adapter_accepts_the_plugin_urls_lmcache_dials():
    a = OrbitKVConnectorAdapter()
    assert a.can_parse("plugin://orbitkv") and a.can_parse("plugin://orbitkv.second")
    for url in ["plugin://orbitkvx", "plugin://orbitkv.", "plugin://other", "lm://127.0.0.1:65432", "", None]:
        assert not a.can_parse(url), url


def test_loader_finds_the_connector_or_says_no_adapter_found():
    extra = {"remote_storage_plugin.orbitkv.second.module_path": "orbitkv.lmcache",
             "remote_storage_plugin.orbitkv.second.class_name": "OrbitKVConnectorAdapter",
             "remote_storage_plugin.orbitkv.second.url": "http://127.0.0.1:1"}
    conn = create_connector(LMCacheConfig(extra, ["orbitkv.second"]), Metadata(MODEL, (2, 4, 16, 1024)), CpuAllocator())
    assert conn.settings.manager_url == "http://127.0.0.1:1" and conn.settings.namespace == "lmcache/" + MODEL
    other = {k.replace("orbitkv.second", "redis"): v for k, v in extra.items()}  # plugin://redis: not ours
    with pytest.raises(RuntimeError, match="No adapter found"):
        create_connector(LMCacheConfig(other, ["redis"]), Metadata(MODEL, (1,)), CpuAllocator())


def test_options_are_validated_naming_both_sides():
    extra = {"remote_storage_plugin.orbitkv.url": "http://127.0.0.1:1", "remote_storage_plugin.orbitkv.timeout_s": 5}
    with pytest.raises(ValueError, match="blocking_timeout_secs"):
        Settings("plugin://orbitkv", extra, 5.0, MODEL)
    assert Settings("plugin://orbitkv", {"remote_storage_plugin.orbitkv.url": "http://h:1"}, 3.0, MODEL).timeout_s == 1.5
    with pytest.raises(ValueError, match="url"):
        Settings("plugin://orbitkv", {}, 10.0, MODEL)


def test_refcounts_balance_over_put_and_get(harness):
    h = harness("refs")
    objs = h.objects([0, 1, 2], gen=1)
    h.backend.run(h.connector.batched_put([h.key(i) for i in range(3)], objs))
    h.backend.run(h.connector.put(h.key(3), objs[0]))
    assert [o.get_ref_count() for o in objs] == [1, 1, 1], "put takes no reference and drops none"
    got = h.backend.run(h.connector.batched_get([h.key(i) for i in range(4)]))
    assert [o.get_ref_count() for o in got] == [1, 1, 1, 1], "each returned object carries the allocator's one ref"
    for o in objs + got:
        o.ref_count_down()
    assert h.allocator.live_count() == 0 and h.allocator.underflows == 0


def test_non_blocking_get_returns_the_prefix_and_releases_the_rest(harness):
    h = harness("prefix")
    h.put([0, 1, 3], gen=2)
    got = h.backend.run(h.connector.batched_get_non_blocking("req-1", [h.key(i) for i in range(4)]))
    assert [bytes(o.byte_array) for o in got] == [payload(2, 0, h.size), payload(2, 1, h.size)]
    assert h.allocator.live_count() == 2, "nothing allocated past the first miss stays alive"
    padded = h.backend.run(h.connector.batched_get([h.key(i) for i in range(4)]))
    assert len(padded) == 4 and padded[2] is None and padded[3] is None
    for o in got + padded[:2]:
        o.ref_count_down()
    assert h.allocator.live_count() == 0 and h.allocator.underflows == 0


@pytest.mark.parametrize("meta", [False, True], ids=["raw", "header"])
def test_partial_last_chunk_round_trips(harness, manager, meta):
    h = harness("partial", save_chunk_meta=meta)
    (obj,) = h.objects([9], gen=3, tokens=5)
    h.backend.run(h.connector.put(h.key(9), obj))
    obj.ref_count_down()
    stored = Client(manager.url, h.connector.settings.namespace).get(h.key(9).to_string())
    body = chunk_bytes(5)
    assert len(stored) == body + (_plugin.HEADER_BYTES if meta else 0), "raw bytes, or the 64-byte header + bytes"
    if meta:
        assert _plugin.unpack_header(stored[:64]) == ((2, 4, 5, 1024), "bfloat16", "KV_2LTD", body)
    (got,) = h.backend.run(h.connector.batched_get([h.key(9)]))
    assert got.get_shape() == (2, 4, 5, 1024) and bytes(got.byte_array) == payload(3, 9, body)
    got.ref_count_down()
    assert h.allocator.live_count() == 0


def test_a_value_that_is_no_chunk_header_is_a_miss_and_released(harness, manager):
    h = harness("badheader")
    with Client(manager.url, h.connector.settings.namespace) as c:
        c.put(h.key(4).to_string(), bytes(h.size + 64))  # zeros: no OKVC magic
    assert h.get([4]) == [None]
    assert h.allocator.live_count() == 0 and h.log.counts.get(("get", "bad-header")) == 1


def test_keys_are_the_engine_key_strings_mapped_once(harness, manager):
    h = harness("keys")
    h.put([1], gen=4)
    with Client(manager.url, h.connector.settings.namespace) as c:
        assert c.exists(h.key(1).to_string())
    assert len(map_key(h.key(1).to_string())) <= 64


def test_the_miss_log_is_bounded_in_rate_and_reasons(caplog):
    log = _plugin.MissLog(logging.getLogger("orbitkv.test"), interval_s=3600)
    with caplog.at_level(logging.WARNING, logger="orbitkv.test"):
        for _ in range(100):
            log.miss("get", "connection_failed")
        for i in range(200):
            log.miss("get", f"reason-{i}")
    assert log.counts[("get", "connection_failed")] == 100
    assert len(log.counts) == _plugin.REASONS_MAX + 1 and log.counts[("other", "reasons-full")] == 137
    assert len(caplog.records) == 1 + (_plugin.REASONS_MAX - 1) + 1
