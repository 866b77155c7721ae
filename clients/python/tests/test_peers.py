"""A peer restore through a second Manager: the two distributed Managers PythonClientGateTest started in one etcd
cluster (ORBITKV_PEER_URLS). Blocks saved on the first are read byte-exact through the second, over TCP and over
shared memory (the Manager's restore metrics name the backend that served them)."""

import os
import re
import time
import urllib.request

import pytest

from conftest import BLOCK_MAX
from managers import figure
from orbitkv import Client
from payloads import payload

SIZES = [1, 64 << 10, 1 << 20, BLOCK_MAX]


@pytest.fixture(scope="module")
def peers():
    urls = os.environ.get("ORBITKV_PEER_URLS", "")
    if urls.count(",") != 1:
        raise RuntimeError("ORBITKV_PEER_URLS (two distributed Managers) is not set: run through PythonClientGateTest")
    return urls.split(",")


def _served(url: str, backend: str) -> float:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("orbitkv_restore_blocks_total{"):
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
            if labels.get("route") == "peer-dram" and labels.get("backend") == backend:
                total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.mark.parametrize("backend,label", [("tcp", "tcp"), ("shared-memory-preferred", "shared_memory")])
def test_peer_restore_is_byte_exact(peers, backend, label):
    a, b = peers
    ns = "pytest/peers/" + label
    keys = [f"peer-{label}-{size}" for size in SIZES]
    values = [payload(11, i, size) for i, size in enumerate(SIZES)]
    with Client(a, ns, timeout_s=60) as ca:
        assert ca.put_batch(keys, values) == len(keys)
        assert "inventory_fence" in ca.sync()
    with Client(b, ns, timeout_s=60, transfer_backend=backend) as cb:
        deadline = time.monotonic() + 45
        while cb.prefix_len(keys) < len(keys) and time.monotonic() < deadline:
            time.sleep(0.05)  # await b's index of a's saves (a bounded condition wait)
        assert cb.prefix_len(keys) == len(keys)
        assert cb.batch_exists(keys) == [True] * len(keys)
        before = _served(b, label)
        buffers = [bytearray(size) for size in SIZES]
        t = time.monotonic()
        assert cb.batch_get_into(keys, buffers) == SIZES
        elapsed = time.monotonic() - t
        assert all(x == y for x, y in zip(buffers, values))
        assert _served(b, label) - before == len(keys), f"every block came from the peer over {label}"
    figure(f"peer restore over {label}: 1 B + 64 KiB + 1 MiB + 32 MiB byte-exact through the second Manager "
           f"in {elapsed * 1000:.0f} ms")
