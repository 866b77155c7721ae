"""The synchronous client against real standalone Managers (started by conftest.py from the command line
PythonClientGateTest passes): byte-exact round trips, batches split by limits() with prefix semantics, zero-copy
reads, the refusal table, token on and off."""

import select
import socket
import threading
import time
import tracemalloc

import pytest

from conftest import BLOCK_MAX, SMALL_BLOCK_MAX, TOKEN
from managers import figure
from orbitkv import (BadRequest, Client, ConnectionFailed, MISS, TOO_SMALL, Limits, OrbitKVError, Overloaded,
                     TooLarge, Unauthorized, Unavailable, map_key)
from payloads import payload

try:  # numpy views are tested when numpy is importable in this interpreter (scripts/lib installs it); never skipped
    import numpy
except ImportError:  # pragma: no cover
    numpy = None

SIZES = [1, 64 << 10, 1 << 20, BLOCK_MAX]


@pytest.fixture(scope="module")
def client(big):
    with Client(big.url, "pytest/sync", timeout_s=60) as c:
        yield c


def test_limits_are_the_running_configuration(client):
    lim = client.limits()
    assert isinstance(lim, Limits)
    assert lim.block_bytes_max == BLOCK_MAX
    assert lim.keys_per_request_max == 128 and lim.records_per_save_max == 128
    assert lim.token_required is False and lim.streamed_restore is True  # issue 35 item 4: offered


@pytest.mark.parametrize("size", SIZES, ids=["1B", "64KiB", "1MiB", "32MiB-block-max"])
def test_round_trip_is_byte_exact(client, size):
    data = payload(1, size, size)
    client.put(f"rt-{size}", data)
    buf = bytearray(size)
    assert client.get_into(f"rt-{size}", buf) == size
    assert buf == data
    got = client.get(f"rt-{size}")
    assert got == data
    # a larger buffer: the block fills its head, the rest is untouched
    bigger = bytearray(b"\xee" * (size + 3))
    assert client.get_into(f"rt-{size}", bigger) == size
    assert bigger[:size] == data and bigger[size:] == b"\xee\xee\xee"


def test_buffer_smaller_than_the_block(client):
    client.put("small-buf", payload(1, 2, 4096))
    buf = bytearray(100)
    assert client.get_into("small-buf", buf) == TOO_SMALL
    assert client.get_into("small-buf", bytearray(4096)) == 4096  # the connection stayed usable


@pytest.mark.parametrize("n", [1, 128, 300])
def test_batches_split_by_limits(client, n):
    keys = [f"batch{n}-{i}" for i in range(n)]
    values = [payload(n, i, 1000 + i) for i in range(n)]
    assert client.put_batch(keys, values) == n
    buffers = [bytearray(1000 + i) for i in range(n)]
    assert client.batch_get_into(keys, buffers) == [1000 + i for i in range(n)]
    assert all(b == v for b, v in zip(buffers, values))
    assert client.prefix_len(keys) == n
    assert client.batch_exists(keys) == [True] * n
    got = client.get_batch(keys)
    assert all(g == v for g, v in zip(got, values))


def test_prefix_semantics_across_parts(client):
    keys = [f"pfx-{i}" for i in range(300)]
    values = [payload(7, i, 64) for i in range(300)]
    client.put_batch(keys, values)
    client.remove(keys[200])  # a miss in the second part
    buffers = [bytearray(64) for _ in keys]
    got = client.batch_get_into(keys, buffers)
    assert got[:200] == [64] * 200 and got[200:] == [MISS] * 100, "the prefix ends at the first miss"
    assert client.prefix_len(keys) == 200
    assert client.batch_exists(keys) == [i != 200 for i in range(300)], "presence is per key, not a prefix"
    client.remove(keys[50])  # a miss in the first part: the second part is not even asked
    got = client.batch_get_into(keys, [bytearray(64) for _ in keys])
    assert got[:50] == [64] * 50 and got[50:] == [MISS] * 250
    assert client.prefix_len(keys) == 50


def test_batch_get_into_bytearray_slices(client):
    keys = [f"slice-{i}" for i in range(16)]
    values = [payload(3, i, 4096) for i in range(16)]
    client.put_batch(keys, values)
    pool = bytearray(16 * 4096 + 100)
    view = memoryview(pool)
    got = client.batch_get_into(keys, [view[100 + i * 4096:100 + (i + 1) * 4096] for i in range(16)])
    assert got == [4096] * 16
    assert pool[:100] == bytes(100)
    assert bytes(pool[100:]) == b"".join(values)


if numpy is not None:
    def test_batch_get_into_numpy_views(client):
        keys = [f"np-{i}" for i in range(8)]
        values = [payload(4, i, 1 << 16) for i in range(8)]
        client.put_batch(keys, values)
        arena = numpy.zeros((8, 1 << 15), dtype=numpy.uint16)  # 8 rows of 64 KiB, a non-byte dtype
        got = client.batch_get_into(keys, [arena[i] for i in range(8)])
        assert got == [1 << 16] * 8
        assert arena.tobytes() == b"".join(bytes(v) for v in values)
        # and a numpy uint8 view of a slice
        flat = numpy.zeros(1 << 17, dtype=numpy.uint8)
        assert client.get_into(keys[1], flat[1000:1000 + (1 << 16)]) == 1 << 16
        assert flat[1000:1000 + (1 << 16)].tobytes() == bytes(values[1])


def test_eight_32mib_reads_stay_below_2mib_of_python_memory(client):
    keys = [f"big-{i}" for i in range(8)]
    values = [payload(5, i, BLOCK_MAX) for i in range(8)]
    assert client.put_batch(keys, values) == 8  # 8 x 32 MiB: two saves (the body bound)
    buffers = [bytearray(BLOCK_MAX) for _ in keys]
    tracemalloc.start()
    try:
        t = time.monotonic()
        got = client.batch_get_into(keys, buffers)
        elapsed = time.monotonic() - t
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    figure(f"batch_get_into 8 x 32 MiB: tracemalloc peak {peak} B, {elapsed * 1000:.0f} ms "
           f"(continues after the Manager's response-memory/destination-capacity stop)")
    assert got == [BLOCK_MAX] * 8, "the restore memory bound stops the prefix; the client continues from the count"
    assert peak < 2 << 20
    assert all(b == v for b, v in zip(buffers, values))


def test_batch_get_into_streamed(client):
    """stream=True (docs/api.md "Streamed restore"): the same prefix, byte-exact, read as records arrive; a miss
    mid-prefix ends it (the end record's stop), nothing after it is reported read."""
    keys = [f"stream-{i}" for i in range(6)]
    values = [payload(6, i, 4 << 20) for i in range(6)]
    client.put_batch(keys, values)
    buffers = [bytearray(4 << 20) for _ in keys]
    tracemalloc.start()
    try:
        got = client.batch_get_into(keys, buffers, stream=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == [4 << 20] * 6
    assert all(b == v for b, v in zip(buffers, values))
    assert peak < 2 << 20
    holes = [bytearray(4 << 20) for _ in range(7)]
    got = client.batch_get_into(keys[:3] + ["stream-missing"] + keys[3:], holes, stream=True)
    assert got == [4 << 20] * 3 + [MISS] * 4
    assert holes[:3] == values[:3] and holes[3] == bytearray(4 << 20)


def test_put_if_absent_batch(client):
    keys = [f"pia-{i}" for i in range(5)]
    client.put(keys[1], payload(1, 1, 10))
    written = client.put_if_absent_batch(keys, [payload(2, i, 10) for i in range(5)])
    assert written == [True, False, True, True, True]
    assert client.get(keys[1]) == payload(1, 1, 10), "a present key is not saved again"
    assert client.get(keys[0]) == payload(2, 0, 10)


def test_remove_and_exists(client):
    client.put("rm-1", b"abc")
    assert client.exists("rm-1")
    assert client.remove("rm-1") == 1
    assert not client.exists("rm-1")
    assert client.get("rm-1") is None
    assert client.get_into("rm-1", bytearray(3)) == MISS
    assert client.remove("rm-1") == 0


def test_engine_keys_are_mapped(client):
    long_key = "meta-llama/Llama-3.1-8B-Instruct@1@0@" + "ab" * 40 + "@bfloat16"
    client.put(long_key, b"lmcache")
    assert client.get(long_key) == b"lmcache"
    assert len(map_key(long_key)) == 64 and map_key(long_key)[0] == 0xFF
    client.put(bytes(range(32)), b"hash")  # a 32-byte block hash is its own key
    assert client.get(bytes(range(32))) == b"hash"
    assert client.batch_exists([long_key, bytes(range(32))]) == [True, True]
    assert client.exists(bytes(32)) is False


def test_health_and_sync(client):
    assert client.health()["status"] == "ok"
    assert client.sync() == {"standalone": True}


def test_threads_share_one_client(client):
    errors = []

    def worker(t):
        try:
            for i in range(20):
                data = payload(t, i, 2048)
                client.put(f"thr-{t}-{i}", data)
                buf = bytearray(2048)
                assert client.get_into(f"thr-{t}-{i}", buf) == 2048 and buf == data
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(12)]  # more threads than pool_size
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors


# ---------------------------------------------------------------- refusals a client can cause (table-driven)

def _hold_the_one_request_slot(small):
    """A save whose body never comes: it holds the small Manager's only request slot until the socket closes."""
    s = socket.create_connection(("127.0.0.1", small.port))
    s.sendall(f"POST /cache/save?namespace=x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
              "Content-Type: application/x-orbitkv-blocks\r\nContent-Length: 100\r\n\r\n".encode())
    return s


def _answered(sock):
    """True when the server has written to (answered or closed) the holder's connection: it holds no slot."""
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


def _overloaded(small):
    holder = _hold_the_one_request_slot(small)
    try:
        with Client(small.url, "refusals", token=TOKEN, timeout_s=20) as c:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:  # the held save is admitted once its headers are read: bounded wait
                if _answered(holder):
                    # refused (the slot was still taken by an earlier test's request as it arrived): hold it again
                    holder.close()
                    holder = _hold_the_one_request_slot(small)
                c.exists("aa")  # raises Overloaded once the slot is held
            raise AssertionError("the held request was never admitted")
    finally:
        holder.close()


REFUSALS = [
    # name, call(client factory), expected class, expected code
    ("payload above --block-bytes-max", lambda mk: mk(TOKEN).put("big", bytearray(SMALL_BLOCK_MAX + 1)),
     TooLarge, "PAYLOAD_TOO_LARGE"),
    ("a save larger than the DRAM tier", lambda mk: mk(TOKEN).put_batch([f"d{i}" for i in range(5)],
                                                                         [bytearray(SMALL_BLOCK_MAX)] * 5),
     Unavailable, "TIER_NO_EVICTABLE_SPACE"),
    ("duplicate key in a save", lambda mk: mk(TOKEN).put_batch(["a", "a"], [b"1", b"2"]), BadRequest, "DUPLICATE_KEY"),
    ("duplicate key in a restore", lambda mk: mk(TOKEN).batch_get_into(["a", "a"], [bytearray(1), bytearray(1)]),
     BadRequest, "DUPLICATE_KEY"),
    ("duplicate key in a query", lambda mk: mk(TOKEN).batch_exists(["a", "a"]), BadRequest, "DUPLICATE_KEY"),
    ("save without the token", lambda mk: mk(None).put("a", b"1"), Unauthorized, "UNAUTHORIZED"),
    ("save with a wrong token", lambda mk: mk("pyclient-token-wrong-0123456").put("a", b"1"), Unauthorized,
     "UNAUTHORIZED"),
    ("remove without the token", lambda mk: mk(None).remove("a"), Unauthorized, "UNAUTHORIZED"),
    ("sync without the token", lambda mk: mk(None).sync(), Unauthorized, "UNAUTHORIZED"),
]


@pytest.mark.parametrize("name,call,cls,code", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusal_raises_its_typed_error(small, name, call, cls, code):
    made = []

    def mk(token):
        c = Client(small.url, "refusals", token=token, timeout_s=30)
        made.append(c)
        return c

    try:
        with pytest.raises(cls) as e:
            call(mk)
        assert e.value.code == code
        assert e.value.status in (400, 401, 413, 503)
        assert isinstance(e.value, OrbitKVError) and e.value.message
    finally:
        for c in made:
            c.close()


def test_overloaded_carries_retry_after(small):
    with pytest.raises(Overloaded) as e:
        _overloaded(small)
    assert e.value.status == 429 and e.value.code == "TOO_MANY_REQUESTS_IN_FLIGHT"
    assert e.value.retry_after == 1.0


def test_token_on_and_off(small, big):
    with Client(small.url, "tok", token=TOKEN, timeout_s=30) as c:
        assert c.limits().token_required
        c.put("t", b"secret")
        assert c.get("t") == b"secret"
        c.remove("t")
    with Client(small.url, "tok", timeout_s=30) as c:
        assert c.exists("t") is False, "reads stay open without the token"
    with Client(big.url, "tok", token=TOKEN, timeout_s=30) as c:  # a token where none is needed is ignored
        c.put("t", b"x")
        assert not c.limits().token_required


def test_manager_not_running_every_call_raises_connection_failed_fast():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once closed
    c = Client(f"http://127.0.0.1:{port}", "dead")
    calls = {
        "put": lambda: c.put("a", b"1"), "put_batch": lambda: c.put_batch(["a"], [b"1"]),
        "put_if_absent_batch": lambda: c.put_if_absent_batch(["a"], [b"1"]), "get": lambda: c.get("a"),
        "get_batch": lambda: c.get_batch(["a"]), "get_into": lambda: c.get_into("a", bytearray(1)),
        "batch_get_into": lambda: c.batch_get_into(["a"], [bytearray(1)]), "exists": lambda: c.exists("a"),
        "batch_exists": lambda: c.batch_exists(["a"]), "prefix_len": lambda: c.prefix_len(["a"]),
        "remove": lambda: c.remove("a"), "batch_remove": lambda: c.batch_remove(["a"]), "sync": c.sync,
        "health": c.health, "limits": c.limits,
    }
    worst = 0.0
    for name, call in calls.items():
        t = time.monotonic()
        with pytest.raises(ConnectionFailed):
            call()
        elapsed = time.monotonic() - t
        worst = max(worst, elapsed)
        assert elapsed < 1.0, f"{name} took {elapsed:.3f} s"
    figure(f"Manager not running: every call raised ConnectionFailed, slowest {worst * 1000:.1f} ms")
    c.close()


def test_the_documented_two_line_example_runs(big):
    """docs/engines.md's two lines save and restore a 32 MiB chunk (against this suite's Manager)."""
    from _paths import repo
    text = open(repo("docs", "engines.md"), encoding="utf-8").read()
    code = text.split("## Two lines")[1].split("```python")[1].split("```")[0]
    assert len([l for l in code.strip().splitlines() if l.strip()]) == 2
    scope = {}
    # the suite's Manager, and a timeout for a loaded test machine instead of the 5 s default
    code = code.replace('"http://127.0.0.1:8090", "llama-3.1-8b/tp1/bf16")', f'"{big.url}", "llama-3.1-8b/tp1/bf16", timeout_s=60)')
    assert big.url in code and "timeout_s=60" in code
    exec(code, scope)  # noqa: S102
    assert scope["buf"] == scope["chunk"] and len(scope["buf"]) == 32 << 20
    scope["c"].close()
