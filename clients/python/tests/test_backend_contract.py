"""The engine backends' contract (issue 36 item 4) against real Manager processes, each row run for the LMCache
in-process connector, the LMCache MP L2 adapter and the SGLang HiCache backend through their engines' stand-ins:
prefix counts (hit, hit, miss, hit -> 2), eviction behind the engine's back, a flipped SSD byte (a miss, never wrong
bytes), an oversized chunk (a miss, logged once), Manager down (all misses within 50 ms), Manager restarted (hits
again with the same backend object), a peer hit through a second Manager, 8 threads with every byte checked."""

import logging
import os
import tempfile
import threading
import time

import pytest

from backend_harness import HARNESSES, chunk_bytes, evict
from managers import Manager, figure, free_port, work_dir
from orbitkv import Client
from payloads import payload

BACKENDS = sorted(HARNESSES)
BLOCK_MAX = 1 << 20


@pytest.fixture(scope="module")
def store():
    """A standalone Manager with 1 MiB blocks, DRAM and an SSD tier (its directory is ``store.ssd``)."""
    ssd = tempfile.mkdtemp(prefix="ssd-", dir=work_dir())
    m = Manager("backends", ["--block-bytes-max", "1MiB", "--dram", "256MiB", "--ssd-dir", ssd, "--ssd", "256MiB"])
    m.start()
    m.ssd = ssd
    yield m
    m.kill()


@pytest.fixture(scope="module")
def restartable():
    m = Manager("backends-restart", ["--block-bytes-max", "1MiB", "--dram", "64MiB"], port=free_port()).start()
    yield m
    m.kill()


@pytest.fixture
def open_harness():
    opened = []

    def make(backend, url, ns, **kw):
        h = HARNESSES[backend](url, ns, **kw)
        opened.append(h)
        return h

    yield make
    for h in opened:
        h.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_prefix_counts_hit_hit_miss_hit_is_two(store, open_harness, backend):
    h = open_harness(backend, store.url, f"contract/prefix/{backend}")
    h.put([0, 1, 3], gen=1)
    assert h.prefix([0, 1, 2, 3]) == 2
    got = h.get([0, 1, 2, 3])
    assert got[0] == payload(1, 0, h.size) and got[1] == payload(1, 1, h.size)
    assert got[2] is None
    assert got[3] is None or got[3] == payload(1, 3, h.size), "after a miss: nothing, or the right bytes"
    assert h.prefix([2, 3]) == 0 and h.prefix([]) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_eviction_behind_the_engines_back_is_a_miss(store, open_harness, backend):
    ns = f"contract/evict/{backend}"
    h = open_harness(backend, store.url, ns)
    h.put([5, 6], gen=2)
    assert h.prefix([5, 6]) == 2  # the engine saw the hits (an LMCache "pin" or an MP "lock" cannot hold them yet)
    assert evict(store.url, ns, [h.mapped(5)]) >= 1
    assert h.get([5, 6])[0] is None
    assert h.prefix([5, 6]) == 0
    assert h.get([6]) == [payload(2, 6, h.size)]


def _ssd_files(d: str) -> set:
    return {os.path.join(d, f) for f in os.listdir(d) if f.endswith(".okv")}


@pytest.mark.parametrize("backend", BACKENDS)
def test_flipped_ssd_byte_is_a_miss_never_wrong_bytes(store, open_harness, backend):
    ns = f"contract/ssd/{backend}"
    h = open_harness(backend, store.url, ns)
    with Client(store.url, ns, timeout_s=30) as c:
        c.sync()  # earlier rows' SSD writes are done before the snapshot
    before = _ssd_files(store.ssd)
    h.put([7], gen=3)
    with Client(store.url, ns, timeout_s=30) as c:
        c.sync()
    new = sorted(_ssd_files(store.ssd) - before)
    assert len(new) == 1, new
    assert evict(store.url, ns, [h.mapped(7)], "DRAM") == 1  # the SSD copy is now the only one
    with open(new[0], "r+b") as f:
        f.seek(os.path.getsize(new[0]) // 2)
        b = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([b[0] ^ 0x20]))
    assert h.get([7]) == [None]
    assert h.prefix([7]) == 0, "the broken residence left the Manager's index"


@pytest.mark.parametrize("backend", BACKENDS)
def test_oversized_chunk_is_a_miss_logged_once(store, open_harness, backend, caplog):
    tokens = 128  # 2 MiB: twice the Manager's block maximum
    assert chunk_bytes(tokens) > BLOCK_MAX
    h = open_harness(backend, store.url, f"contract/oversized/{backend}", tokens=tokens)
    with caplog.at_level(logging.WARNING, logger="orbitkv"):
        h.put([8], gen=4)
        h.put([8], gen=4)
        assert h.get([8]) == [None]
    puts = [r for r in caplog.records if r.name.startswith("orbitkv") and ("put" in r.getMessage()
            or "store" in r.getMessage() or "set" in r.getMessage())]
    assert len(puts) == 1, [r.getMessage() for r in puts]
    assert h.log.total() >= 2, "both refusals are counted, one is logged"


@pytest.mark.parametrize("backend", BACKENDS)
def test_manager_down_every_call_is_a_miss_within_50_ms(open_harness, backend):
    """The goal is 50 ms per call; what guarantees it is structural: a refused loopback connect is a miss at once,
    not after the 5 s call timeout. Asserted with a bound a loaded 2-core machine keeps (1 s, a fifth of the
    timeout: no call waited on it) and that every miss came from the refused connect; the gate prints the median and
    slowest call against the 50 ms goal (tests/test_client.py checks the client itself the same way)."""
    h = open_harness(backend, f"http://127.0.0.1:{free_port()}", f"contract/down/{backend}", timeout_s=5.0)
    times = []
    for _ in range(3):
        for call, expect in ((lambda: h.put([1, 2], gen=5), None), (lambda: h.prefix([1, 2]), 0),
                             (lambda: h.get([1, 2]), [None, None])):
            t = time.monotonic()
            assert call() == expect
            times.append(time.monotonic() - t)
    assert max(times) < 1.0, f"slowest call {max(times) * 1000:.1f} ms"
    reasons = {reason for (_, reason) in h.log.counts}
    assert reasons == {"connection_failed"}, reasons
    times.sort()
    figure(f"backend {backend}, Manager down: 9 calls (put, prefix, get) all misses, median "
           f"{times[4] * 1000:.1f} ms, slowest {times[-1] * 1000:.1f} ms (goal 50 ms)")


@pytest.mark.parametrize("backend", BACKENDS)
def test_manager_restarted_hits_again_without_a_new_backend(restartable, open_harness, backend):
    h = open_harness(backend, restartable.url, f"contract/restart/{backend}", timeout_s=10.0)
    h.put([1], gen=6)
    assert h.get([1]) == [payload(6, 1, h.size)]
    restartable.kill()
    assert h.get([1]) == [None] and h.prefix([1]) == 0
    restartable.restart()  # the same port, empty (no durable restart)
    h.put([1], gen=7)
    assert h.prefix([1]) == 1
    assert h.get([1]) == [payload(7, 1, h.size)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_peer_hit_through_a_second_manager(open_harness, backend):
    urls = os.environ.get("ORBITKV_PEER_URLS", "")
    if urls.count(",") != 1:
        raise RuntimeError("ORBITKV_PEER_URLS (two distributed Managers) is not set: run through PythonClientGateTest")
    a, b = urls.split(",")
    ns = f"contract/peer/{backend}"
    ha = open_harness(backend, a, ns, timeout_s=20.0)
    hb = open_harness(backend, b, ns, timeout_s=20.0)
    ids = [0, 1, 2]
    ha.put(ids, gen=8)
    with Client(a, ns, timeout_s=30) as c:
        c.sync()
    deadline = time.monotonic() + 45
    while hb.prefix(ids) < len(ids) and time.monotonic() < deadline:
        time.sleep(0.05)  # await b's index of a's saves (a bounded condition wait)
    assert hb.prefix(ids) == len(ids)
    assert hb.get(ids) == [payload(8, i, hb.size) for i in ids]


@pytest.mark.parametrize("backend", BACKENDS)
def test_eight_threads_every_byte_checked(store, open_harness, backend):
    # correctness under concurrency, not connect latency: a loaded 2-core machine can hold a loopback connect on the
    # event loop longer than the 100 ms default (a miss by contract, but this row checks every byte)
    h = open_harness(backend, store.url, f"contract/threads/{backend}", timeout_s=30.0, connect_timeout_s=5.0)
    errors = []

    def work(t: int) -> None:
        try:
            for rnd in range(3):
                ids = list(range(t * 24 + rnd * 8, t * 24 + rnd * 8 + 8))  # content-addressed: new keys per round
                h.put(ids, gen=100 + t * 10 + rnd)
                got = h.get(ids)
                bad = [i for i, g in zip(ids, got) if g != payload(100 + t * 10 + rnd, i, h.size)]
                if bad:
                    errors.append(f"thread {t} round {rnd}: wrong or missing {bad}")
        except Exception as e:  # noqa: BLE001
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads)
    assert errors == []
