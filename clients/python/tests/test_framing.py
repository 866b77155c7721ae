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
