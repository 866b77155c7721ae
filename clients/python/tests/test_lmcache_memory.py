"""Issue 36 goal: zero payload-sized Python allocations on a get through the LMCache connector. With LMCache's
pinned pool standing in as pre-touched reusable slabs, reading 8 x 32 MiB chunks (Llama-3.1-8B, 256 tokens, bf16)
through ``batched_get`` peaks below 2 MiB under tracemalloc: every byte goes from the socket into the MemoryObj."""

import tracemalloc

from backend_harness import LMCacheHarness
from managers import figure
from payloads import payload
from standin_lmcache import CpuAllocator

CHUNK = 32 << 20


def test_batched_get_of_8_x_32_mib_allocates_no_payload(big):
    # raw chunks: a 32 MiB chunk plus the 64-byte header would exceed this Manager's 32 MiB block maximum
    h = LMCacheHarness(big.url, "lmcache/memory", tokens=256, save_chunk_meta=False, timeout_s=60.0)
    try:
        h.shape = (2, 32, 256, 1024)  # Llama-3.1-8B: 32 layers x 8 KV heads x 128, 256 tokens: 32 MiB
        h.connector.chunk_shape = h.shape
        h.size = CHUNK
        h.allocator = h.connector.backend = CpuAllocator(slabs=10, slab_bytes=CHUNK)
        ids = list(range(8))
        h.put(ids, gen=1)
        keys = [h.key(i) for i in ids]
        h.backend.run(h.connector.batched_get(keys[:1]))[0].ref_count_down()  # warm: connections, limits
        tracemalloc.start()
        try:
            got = h.backend.run(h.connector.batched_get(keys))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert all(g is not None for g in got)
        for i, g in zip(ids, got):
            assert g.byte_array == memoryview(payload(1, i, CHUNK))
            g.ref_count_down()
        assert h.allocator.live_count() == 0
        assert peak < 2 << 20, f"tracemalloc peak {peak} B"
        figure(f"LMCache connector batched_get 8 x 32 MiB: tracemalloc peak {peak / 1024:.0f} KiB")
    finally:
        h.close()
