"""Engine key forms (docs/vectors/engine-keys-v1.json, docs/engines.md): LMCache's CacheEngineKey string, LMCache
MP's ObjectKey, SGLang's page and basic keys; each vector recomputed through the backends' functions and, for the
final key bytes, by the orbitkv-keys/v1 rule written out with hashlib alone."""

import hashlib
import json

import pytest

from _paths import repo
from orbitkv.keys import map_key
from orbitkv.lmcache.l2 import object_key_string
from orbitkv.sglang import basic_key, page_key, rank_tag
from standin_lmcache import ObjectKey

with open(repo("docs", "vectors", "engine-keys-v1.json"), encoding="utf-8") as f:
    DOC = json.load(f)
VECTORS = DOC["vectors"]


def _rule(raw: bytes) -> bytes:
    if 1 <= len(raw) <= 64 and raw[0] != 0xFF:
        return raw
    return b"\xff" + raw[:31] + hashlib.sha256(raw).digest()


def _engine_key(v) -> bytes:
    i = v["input"]
    if v["engine"] == "lmcache":
        return i["cache_engine_key"].encode()
    if v["engine"] == "lmcache-mp":
        k = ObjectKey(bytes.fromhex(i["chunk_hash"]), i["model_name"], i["kv_rank"], i["object_group_id"],
                      i["cache_salt"])
        s = object_key_string(k)
        assert s == v["engine_key"]
        return s.encode()
    tag = rank_tag(i["tp_rank"], i["pp_rank"], i["pp_size"], i["is_mla_model"])
    e = page_key(i["key"], tag, i["is_mla_model"]) if i["form"] == "page" else basic_key(i["key"], tag)
    assert e.hex() == v["engine_key_hex"]
    return e


@pytest.mark.parametrize("v", VECTORS, ids=[f'{v["engine"]}-{n}' for n, v in enumerate(VECTORS)])
def test_engine_key_vector(v):
    e = _engine_key(v)
    assert map_key(e).hex() == v["key"] == _rule(e).hex()


def test_sglang_page_keys_carry_rank_and_part():
    h = "ab" * 32
    assert page_key(h, rank_tag(0, 0, 1, False), False) == bytes.fromhex(h) + b"_0_kv"
    assert page_key(h, rank_tag(3, 1, 2, False), False) == bytes.fromhex(h) + b"_3.1_kv"
    assert page_key(h, rank_tag(5, 0, 1, True), True) == bytes.fromhex(h) + b"_m_k", "MLA: shared by TP ranks"
    assert page_key("not-hex", "0", False) == b"not-hex_0_kv"


def test_docs_list_the_same_engine_vectors():
    text = open(repo("docs", "engines.md"), encoding="utf-8").read()
    block = text.split("<!-- engine-keys-v1:begin -->")[1].split("<!-- engine-keys-v1:end -->")[0]
    listed = [l for l in block.splitlines() if l.startswith("| ") and "`" in l]
    keys = {cell.strip().strip("`") for row in listed for cell in row.strip("|").split("|")}
    assert len(listed) == len(VECTORS)
    for v in VECTORS:
        assert v["key"] in keys, v
