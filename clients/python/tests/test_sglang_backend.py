"""The SGLang HiCache backend beyond the shared contract: 128 pages per call in one restore request read straight
into the host pool's pages, MLA pages, TP ranks kept apart by the key mapping, the basic get/set API, and the
factory's construction ``cls(storage_config, kwargs)``."""

import re
import urllib.request

import numpy as np
import pytest

from backend_harness import SGLangHarness
from managers import Manager
from orbitkv.sglang import PAGES_PER_CALL, OrbitKVHiCacheStorage
from payloads import payload
from standin_sglang import HiCacheStorageConfig


@pytest.fixture(scope="module")
def manager():
    m = Manager("sglang", ["--block-bytes-max", "1MiB", "--dram", "256MiB"]).start()
    yield m
    m.kill()


def _restores(url: str) -> float:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    m = re.search(r'^orbitkv_http_requests_total\{endpoint="restore",status_class="2xx"\} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def test_128_pages_in_one_request_into_the_host_pool(manager):
    h = SGLangHarness(manager.url, "sglang/128", tokens=4)  # 64 KiB pages: 128 of them in one restore
    try:
        ids = list(range(PAGES_PER_CALL))
        h.put(ids, gen=1)
        assert h.prefix(ids) == PAGES_PER_CALL
        before = _restores(manager.url)
        got = h.get(ids)
        assert _restores(manager.url) - before == 1, "one restore request for 128 pages"
        assert got == [payload(1, i, h.size) for i in ids]
        k_ptr = h.pool.k.ctypes.data
        assert h.pool.get_page_buffer_meta(h.pool.token_indices([3]))[0][0] == k_ptr + 3 * h.pool.half_bytes
    finally:
        h.close()


def test_mla_pages_round_trip(manager):
    h = SGLangHarness(manager.url, "sglang/mla", is_mla=True)
    try:
        h.put([0, 1, 2], gen=2)
        assert h.prefix([0, 1, 2, 3]) == 3
        assert h.get([0, 1, 2]) == [payload(2, i, h.size) for i in range(3)]
        assert h.storage.tag == "m" and h.mapped(0).endswith(b"_m_k")
    finally:
        h.close()


def test_tp_ranks_do_not_see_each_others_pages(manager):
    r0 = SGLangHarness(manager.url, "sglang/tp", tp_rank=0)
    r1 = SGLangHarness(manager.url, "sglang/tp", tp_rank=1)
    try:
        r0.put([0], gen=3)
        assert r0.prefix([0]) == 1 and r1.prefix([0]) == 0
        assert r0.mapped(0) != r1.mapped(0) and r1.mapped(0).endswith(b"_1_kv")
    finally:
        r0.close()
        r1.close()


def test_basic_api_get_set_exists(manager):
    cfg = HiCacheStorageConfig(model_name="m", extra_config={"url": manager.url})
    s = OrbitKVHiCacheStorage(cfg, {"namespace": "sglang/basic"})
    try:
        value = np.frombuffer(bytes(payload(4, 0, 4096)), dtype=np.uint8)
        assert s.set("k0", value) and s.batch_set(["k1", "k2"], [value, value])
        assert s.exists("k0") and not s.exists("k9")
        target = np.zeros(4096, dtype=np.uint8)
        assert s.get("k0", target) is target and bytes(target) == bytes(value)
        got = s.batch_get(["k1", "k9", "k2"])
        assert bytes(got[0]) == bytes(value) and got[1] is None
        s.delete("k0")
        assert not s.exists("k0")
    finally:
        s.close()


def test_construction_needs_a_url():
    with pytest.raises(ValueError, match="url"):
        OrbitKVHiCacheStorage(HiCacheStorageConfig(), {})
