"""Failure semantics against a Manager the test kills, stops and restarts: a kill in the middle of batch_get_into
reports no record after the cut and returns within the timeout; SIGTERM gives Unavailable or ConnectionFailed and
the pool reconnects by itself to the restarted Manager; a stopped (SIGSTOP) Manager gives Timeout."""

import signal
import socket
import threading
import time
import urllib.request

import pytest

from conftest import BLOCK_MAX
from managers import Manager, figure, free_port
from orbitkv import Client, ConnectionFailed, MISS, Timeout, Unavailable
from payloads import payload

def _in_flight(m) -> bool:
    with urllib.request.urlopen(m.url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    return any(line.startswith("orbitkv_http_requests_in_flight ") and float(line.split()[1]) >= 1
               for line in text.splitlines())


BLOCKS = 7  # 7 x 32 MiB: far more than every socket buffer between the Manager and the client


@pytest.fixture(scope="module")
def victim():
    m = Manager("victim", ["--block-bytes-max", "32MiB", "--dram", "320MiB"], port=free_port()).start()
    yield m
    m.kill()


def test_kill_mid_batch_get_into_reports_nothing_after_the_cut(victim):
    keys = [f"cut-{i}" for i in range(BLOCKS)]
    values = [payload(9, i, BLOCK_MAX) for i in range(BLOCKS)]
    buffers = [bytearray(BLOCK_MAX) for _ in keys]
    with Client(victim.url, "faults", timeout_s=30) as c:
        assert c.put_batch(keys, values) == BLOCKS
        last = memoryview(buffers[0])[BLOCK_MAX - 64:]
        expected_tail = bytes(values[0][BLOCK_MAX - 64:])
        outcome = {}

        def read():
            t = time.monotonic()
            try:
                outcome["result"] = c.batch_get_into(keys, buffers)
            except Exception as e:  # noqa: BLE001
                outcome["error"] = e
            outcome["elapsed"] = time.monotonic() - t

        reader = threading.Thread(target=read)
        reader.start()
        deadline = time.monotonic() + 30
        while bytes(last) != expected_tail and reader.is_alive() and time.monotonic() < deadline:
            time.sleep(0.0005)  # await the first record's last bytes (a bounded condition wait)
        victim.kill()
        reader.join(40)
        assert not reader.is_alive()
    assert "result" not in outcome, "the answer cannot have been complete: 6 x 32 MiB were still in the Manager"
    e = outcome["error"]
    assert isinstance(e, ConnectionFailed), repr(e)
    assert outcome["elapsed"] < 30
    partial = e.partial
    assert partial is not None and len(partial) == BLOCKS
    read_whole = [i for i, n in enumerate(partial) if n >= 0]
    assert read_whole == list(range(len(read_whole))), "only a prefix can be reported read"
    assert 1 <= len(read_whole) < BLOCKS
    assert partial[len(read_whole):] == [MISS] * (BLOCKS - len(read_whole))
    for i in read_whole:
        assert partial[i] == BLOCK_MAX and buffers[i] == values[i], "every record reported read is byte-exact"
    figure(f"kill mid batch_get_into: {len(read_whole)} of {BLOCKS} records reported read, "
           f"ConnectionFailed after {outcome['elapsed'] * 1000:.0f} ms")


def test_sigstop_gives_timeout_then_sigterm_gives_unavailable_and_the_pool_reconnects(victim):
    victim.restart()
    # generous timeouts for calls that must succeed (a restarted Manager is cold, the machine may be loaded); a
    # 1 s client for the stopped Manager
    with Client(victim.url, "faults", timeout_s=30) as c, Client(victim.url, "faults", timeout_s=1.0) as short:
        c.put("before", b"1")
        assert c.exists("before")  # a pooled keep-alive connection now exists
        victim.signal(signal.SIGSTOP)
        try:
            t = time.monotonic()
            with pytest.raises(Timeout):
                short.exists("before")
            stopped = time.monotonic() - t
            assert stopped < 5
        finally:
            victim.signal(signal.SIGCONT)
        # a save whose body never comes keeps the drain busy (up to --shutdown-drain-ms 2000): meanwhile requests on
        # the pooled connection are answered 503 SHUTTING_DOWN
        holder = socket.create_connection(("127.0.0.1", victim.port))
        holder.sendall(b"POST /cache/save?namespace=x HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-orbitkv-blocks"
                       b"\r\nContent-Length: 100\r\n\r\n")
        deadline = time.monotonic() + 30
        while not _in_flight(victim) and time.monotonic() < deadline:
            time.sleep(0.01)  # await the held save's admission (a bounded condition wait)
        assert _in_flight(victim), "the held save was never admitted"
        victim.terminate()
        seen = set()
        deadline = time.monotonic() + 60
        while victim.alive() and time.monotonic() < deadline:
            try:
                c.health()
            except (Unavailable, ConnectionFailed) as e:
                seen.add(type(e).__name__)
            except Timeout:
                seen.add("Timeout")  # a drain slower than the 1 s timeout, under load
        holder.close()
        assert victim.wait_exit(60) == 0
        assert "Unavailable" in seen and seen <= {"Unavailable", "ConnectionFailed", "Timeout"}, seen
        with pytest.raises(ConnectionFailed):
            c.exists("before")
        victim.restart()  # the same port
        c.put("after", b"2")  # the same client: the pool reconnects by itself
        assert c.get("after") == b"2"
        assert c.exists("before") is False, "a restarted Manager starts empty (no durable restart)"
    figure(f"SIGSTOP: Timeout after {stopped * 1000:.0f} ms (timeout_s 1.0); SIGTERM: calls during shutdown raised "
           f"{sorted(seen)}; the same client reconnected to the restarted Manager")
