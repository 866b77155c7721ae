"""AsyncClient passes the same round-trip, batch, prefix and error tests as Client, on asyncio."""

import asyncio
import socket
import time

import pytest

from conftest import BLOCK_MAX, SMALL_BLOCK_MAX, TOKEN
from managers import figure
from orbitkv import (AsyncClient, BadRequest, ConnectionFailed, MISS, TOO_SMALL, Limits, Unauthorized, Unavailable,
                     TooLarge)
from payloads import payload

SIZES = [1, 64 << 10, 1 << 20, BLOCK_MAX]


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("size", SIZES, ids=["1B", "64KiB", "1MiB", "32MiB-block-max"])
def test_round_trip_is_byte_exact(big, size):
    async def go():
        async with AsyncClient(big.url, "pytest/async", timeout_s=60) as c:
            data = payload(21, size, size)
            await c.put(f"art-{size}", data)
            buf = bytearray(size)
            assert await c.get_into(f"art-{size}", buf) == size
            assert buf == data
            assert await c.get(f"art-{size}") == data
            assert await c.get_into(f"art-{size}", bytearray(max(0, size - 1)) if size > 1 else bytearray(0)) == TOO_SMALL
    run(go())


@pytest.mark.parametrize("n", [1, 128, 300])
def test_batches_and_prefix(big, n):
    async def go():
        async with AsyncClient(big.url, "pytest/async", timeout_s=60) as c:
            assert isinstance(await c.limits(), Limits)
            keys = [f"abatch{n}-{i}" for i in range(n)]
            values = [payload(n, i, 512 + i) for i in range(n)]
            assert await c.put_batch(keys, values) == n
            buffers = [bytearray(512 + i) for i in range(n)]
            assert await c.batch_get_into(keys, buffers) == [512 + i for i in range(n)]
            assert all(b == v for b, v in zip(buffers, values))
            assert await c.prefix_len(keys) == n
            assert await c.batch_exists(keys) == [True] * n
            assert all(g == v for g, v in zip(await c.get_batch(keys), values))
            if n == 300:
                assert await c.remove(keys[200]) == 1
                got = await c.batch_get_into(keys, buffers)
                assert got[:200] == [512 + i for i in range(200)] and got[200:] == [MISS] * 100
                assert await c.prefix_len(keys) == 200
                assert not await c.exists(keys[200])
                assert await c.batch_remove(keys) == 299
    run(go())


def test_streamed_restore_into_buffers_and_through_alloc(big):
    """stream=True on the async twin (docs/api.md "Streamed restore"): batch_get_into byte-exact across two parts
    (300 keys, three restores of at most 128), and batch_get_with calls alloc once per record, in key order, as each
    verified record arrives; a miss ends the prefix (the end record's stop)."""
    async def go():
        async with AsyncClient(big.url, "pytest/async-stream", timeout_s=60) as c:
            keys = [f"astream-{i}" for i in range(300)]
            values = [payload(31, i, 1024 + i) for i in range(300)]
            assert await c.put_batch(keys, values) == 300
            buffers = [bytearray(1024 + i) for i in range(300)]
            assert await c.batch_get_into(keys, buffers, stream=True) == [1024 + i for i in range(300)]
            assert all(b == v for b, v in zip(buffers, values))
            seen = []

            def alloc(i, size):
                seen.append((i, size))
                return memoryview(bytearray(size))
            got = await c.batch_get_with(keys[:5] + ["astream-missing"] + keys[5:8], alloc, stream=True)
            assert got == [1024 + i for i in range(5)] + [MISS] * 4
            assert seen == [(i, 1024 + i) for i in range(5)]
    run(go())


def test_concurrent_calls_share_the_pool(big):
    async def go():
        async with AsyncClient(big.url, "pytest/async", timeout_s=60, pool_size=4) as c:
            async def one(i):
                data = payload(22, i, 4096)
                await c.put(f"conc-{i}", data)
                buf = bytearray(4096)
                assert await c.get_into(f"conc-{i}", buf) == 4096 and buf == data
            await asyncio.gather(*(one(i) for i in range(32)))
            assert (await c.health())["status"] == "ok"
            assert await c.sync() == {"standalone": True}
            assert await c.put_if_absent_batch(["conc-0", "conc-new"], [b"x", b"y"]) == [False, True]
    run(go())


REFUSALS = [
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
    ("remove without the token", lambda mk: mk(None).remove("a"), Unauthorized, "UNAUTHORIZED"),
    ("sync without the token", lambda mk: mk(None).sync(), Unauthorized, "UNAUTHORIZED"),
]


@pytest.mark.parametrize("name,call,cls,code", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusal_raises_its_typed_error(small, name, call, cls, code):
    async def go():
        made = []

        def mk(token):
            c = AsyncClient(small.url, "refusals", token=token, timeout_s=30)
            made.append(c)
            return c

        try:
            with pytest.raises(cls) as e:
                await call(mk)
            assert e.value.code == code
        finally:
            for c in made:
                await c.close()
    run(go())


def test_manager_not_running_every_call_raises_connection_failed_fast():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def go():
        c = AsyncClient(f"http://127.0.0.1:{port}", "dead")
        calls = [c.put("a", b"1"), c.put_batch(["a"], [b"1"]), c.put_if_absent_batch(["a"], [b"1"]), c.get("a"),
                 c.get_batch(["a"]), c.get_into("a", bytearray(1)), c.batch_get_into(["a"], [bytearray(1)]),
                 c.exists("a"), c.batch_exists(["a"]), c.prefix_len(["a"]), c.remove("a"), c.batch_remove(["a"]),
                 c.sync(), c.health(), c.limits()]
        worst = 0.0
        for call in calls:
            t = time.monotonic()
            with pytest.raises(ConnectionFailed):
                await call
            worst = max(worst, time.monotonic() - t)
        await c.close()
        return worst

    worst = run(go())
    assert worst < 1.0
    figure(f"Manager not running (async): every call raised ConnectionFailed, slowest {worst * 1000:.1f} ms")
