"""orbitkv-keys/v1: the golden vectors of docs/vectors/keys-v1.json and docs/engines.md, and the mapping's rules."""

import hashlib
import json

import pytest

from _paths import repo
from orbitkv import KEY_MAPPING, key_hex, map_key

with open(repo("docs", "vectors", "keys-v1.json"), encoding="utf-8") as f:
    DOC = json.load(f)
VECTORS = DOC["vectors"]


def _input(v):
    return v["input"] if v["input_kind"] == "str" else bytes.fromhex(v["input"])


@pytest.mark.parametrize("v", VECTORS, ids=[repr(v["input"])[:40] for v in VECTORS])
def test_golden_vector(v):
    assert DOC["mapping"] == KEY_MAPPING == "orbitkv-keys/v1"
    assert map_key(_input(v)).hex() == v["key"]
    assert key_hex(_input(v)) == v["key"]


def test_digest_form_computed_independently():
    # the rule written out with hashlib alone, not through the client
    for raw in [b"", b"\xff", b"x" * 65, "漢字".encode() * 30]:
        expected = b"\xff" + raw[:31] + hashlib.sha256(raw).digest()
        assert map_key(raw) == expected
    assert map_key("").hex() == "ff" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert map_key(b"\xff").hex() == "ffff" + "a8100ae6aa1940d0b663bb31cd466142ebbdbd5187131b92d93818987832eb89"


def test_every_key_fits_and_forms_never_collide():
    for s in ["a", "x" * 64, "x" * 65, "", "\ud800", "é" * 40, "\x00"]:
        k = map_key(s)
        assert 1 <= len(k) <= 64
    # a direct key never starts with 0xFF, a digest key always does
    assert map_key("x" * 64)[0] != 0xFF and map_key("x" * 65)[0] == 0xFF
    assert map_key("x" * 65) != map_key("x" * 66)
    assert map_key("a") == map_key(b"a")  # a str is its UTF-8 bytes


def test_docs_list_the_same_vectors():
    text = open(repo("docs", "engines.md"), encoding="utf-8").read()
    block = text.split("<!-- keys-v1:begin -->")[1].split("<!-- keys-v1:end -->")[0]
    rows = [l for l in block.splitlines() if l.startswith("| `")]
    listed = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        listed[cells[0].strip("`")] = cells[2].strip("`")
    assert len(listed) == len(VECTORS)
    for v in VECTORS:
        shown = v["input"] if v["input_kind"] == "hex" else json.dumps(v["input"], ensure_ascii=False)
        assert listed[shown] == v["key"], shown


def test_not_a_key_type():
    with pytest.raises(TypeError):
        map_key(5)
