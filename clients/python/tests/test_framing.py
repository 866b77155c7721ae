"""The block framing golden vectors: docs/vectors/block-framing.json, the file the Manager's BlockFramingVectorsTest
reads too."""

import json

import pytest

from _paths import repo
from orbitkv import framing

with open(repo("docs", "vectors", "block-framing.json"), encoding="utf-8") as f:
    CASES = json.load(f)["cases"]


def test_the_vectors_cover_valid_and_invalid_bodies():
    assert sum(1 for c in CASES if "error" in c) >= 8
    assert sum(1 for c in CASES if "error" not in c) >= 5


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(case):
    body = bytes.fromhex(case["body"])
    if "error" in case:
        with pytest.raises(framing.FramingError) as e:
            framing.decode(body, case["block_bytes_max"], case["body_bytes_max"])
        assert e.value.code == case["error"]
        return
    records = [(bytes.fromhex(r["key"]), bytes.fromhex(r["payload"])) for r in case["records"]]
    assert framing.encode(records).hex() == case["body"]
    assert framing.decode(body) == records
    # the client's header writer is the encoder's
    assert b"".join(framing.record_header(k, len(p)) + p for k, p in records) == body


def test_record_header_refuses_what_the_manager_refuses():
    with pytest.raises(framing.FramingError) as e:
        framing.record_header(b"", 1)
    assert e.value.code == "INVALID_KEY_LENGTH"
    with pytest.raises(framing.FramingError):
        framing.record_header(b"k" * 65, 1)


def _drive(gen, data: bytes, step: int):
    """Feeds ``data`` to a sans-IO reading generator ``step`` bytes per receive; returns its value."""
    pos, op = 0, gen.send(None)
    try:
        while True:
            _, buf = op
            n = min(len(buf), step, len(data) - pos)
            buf[:n] = data[pos:pos + n]
            pos += n
            op = gen.send(n)
    except StopIteration as stop:
        return stop.value


def _streamed(records, end=None):
    """A streamed restore answer (docs/api.md "Streamed restore"): one chunk per record, the end record, the last chunk."""
    import struct
    chunks = b""
    for key, payload in records:
        rec = struct.pack(">H", len(key)) + key + struct.pack(">I", len(payload)) + payload
        chunks += b"%x\r\n" % len(rec) + rec + b"\r\n"
    if end is not None:
        rec = b"\x00\x00" + struct.pack(">I", len(end)) + end
        chunks += b"%x\r\n" % len(rec) + rec + b"\r\n0\r\n\r\n"
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-OrbitKV-Stream: 1\r\n\r\n" + chunks


@pytest.mark.parametrize("step", [1, 5, 1 << 16])
def test_streamed_answer_end_record_and_cut(step):
    from orbitkv import _protocol as p
    keys, payloads = [b"\x01", b"\x02"], [b"\x05" * 300, b"\x06" * 700]
    end = json.dumps({"restored": 2, "stop": "complete", "route": "r=2 stop=complete"}).encode()

    def read(data, results):
        r = p.Reader()

        def gen():
            answer = yield from p._read_answer(r)
            assert answer.length == p.CHUNKED
            return (yield from p.stream_records(r, answer, keys, 0, lambda i, n: memoryview(bytearray(n)), results))
        return _drive(gen(), data, step)

    results = [p.MISS, p.MISS]
    assert read(_streamed(list(zip(keys, payloads)), end), results) == (2, "complete")
    assert results == [300, 700]
    results = [p.MISS, p.MISS]
    with pytest.raises(p.Eof):  # cut after the first record: no end record, only whole records reported
        read(_streamed(list(zip(keys, payloads)))[:-100], results)
    assert results == [300, p.MISS]
