"""The client's calls, written once as generators over requests (driven by Client and AsyncClient).

An op yields a :class:`Request` and receives its handler's value, or has the request's typed error thrown in.
Batches are split by the Manager's ``limits()``; prefix reads continue across parts only after a full part, and
after a ``retryable`` stop from the restored count while each continuation makes progress (docs/engines.md).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields
from typing import Callable, List, Optional, Sequence
from urllib.parse import quote

from . import _protocol as p
from . import errors
from .framing import CONTENT_TYPE, RECORD_HEADER_BYTES, record_header
from .keys import map_key
from .stops import RETRYABLE, stop_class

#: small payloads are copied into one send buffer up to this many bytes; larger ones are sent from the caller's buffer
COALESCE_BYTES = 256 * 1024
#: restore deadline margin: the Manager gives up this long before the client's own timeout
DEADLINE_MARGIN_S = 0.05


@dataclass(frozen=True)
class Limits:
    """``GET /cache/limits`` (docs/api.md); a Manager without the endpoint gets API v1's documented defaults."""

    api_version: int = 1
    block_bytes_max: int = 16 << 20
    save_body_bytes_max: int = 256 << 20
    json_body_bytes_max: int = 64 << 10
    keys_per_request_max: int = 128
    records_per_save_max: int = 128
    key_bytes_max: int = 64
    namespace_bytes_max: int = 255
    restore_bytes_in_flight_max: int = 256 << 20
    record_framing_bytes: int = 6
    token_required: bool = False
    read_token_required: bool = False
    streamed_restore: bool = False

    @staticmethod
    def of(d: dict) -> "Limits":
        names = {f.name for f in fields(Limits)}
        return Limits(**{k: v for k, v in d.items() if k in names})


class Request:
    __slots__ = ("method", "path", "content_type", "body", "length", "handler")

    def __init__(self, method: str, path: str, content_type: Optional[str], body: Sequence, length: int,
                 handler: Callable):
        self.method = method
        self.path = path
        self.content_type = content_type
        self.body = body
        self.length = length
        self.handler = handler


class Session:
    """What the ops of one client share: namespace, token and the cached limits. Each op also takes its call's
    deadline (``time.monotonic()`` seconds)."""

    def __init__(self, namespace: str, token: Optional[str], transfer_backend: Optional[str] = None):
        raw = namespace.encode("utf-8") if isinstance(namespace, str) else b""
        if not isinstance(namespace, str) or not 1 <= len(raw) <= 255:
            raise ValueError("namespace must be a str of 1..255 UTF-8 bytes (the model identity, docs/engines.md)")
        self.namespace = namespace
        self.ns_json = json.dumps(namespace)
        self.ns_query = quote(namespace, safe="")
        self.token = token
        if transfer_backend not in (None, "tcp", "shared-memory-preferred"):
            raise ValueError('transfer_backend must be None, "tcp" or "shared-memory-preferred"')
        self.backend_json = "" if transfer_backend is None else ',"transfer_backend":"' + transfer_backend + '"'
        self.limits: Optional[Limits] = None


def _json(method: str, path: str, body: Optional[dict] = None) -> Request:
    data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
    return Request(method, path, "application/json" if body is not None else None, (data,) if data else (),
                   len(data), p.json_answer)


def limits(s: Session, deadline: float, refresh: bool = False):
    if s.limits is None or refresh:
        try:
            d = yield _json("GET", "/cache/limits")
            s.limits = Limits.of(d)
        except errors.BadRequest as e:
            if e.code != "UNKNOWN_PATH":
                raise
            s.limits = Limits()
    return s.limits


def health(s: Session, deadline: float):
    return (yield _json("GET", "/health"))


def sync(s: Session, deadline: float):
    return (yield Request("POST", "/cache/sync", None, (), 0, p.json_answer))


def _keys(keys) -> List[bytes]:
    return [map_key(k) for k in keys]


def _key_parts(s: Session, lim: Limits, hexes: List[str]):
    """Splits keys by keys_per_request_max and by the JSON body bound."""
    overhead = 64 + len(s.ns_json) + 40
    parts = []
    start, size = 0, overhead
    for i, h in enumerate(hexes):
        if i > start and (i - start >= lim.keys_per_request_max or size + len(h) + 3 > lim.json_body_bytes_max):
            parts.append((start, i))
            start, size = i, overhead
        size += len(h) + 3
    if start < len(hexes):
        parts.append((start, len(hexes)))
    return parts


def _query_body(s: Session, hexes: List[str], extra: str) -> bytes:
    return ('{"namespace":' + s.ns_json + ',"keys":["' + '","'.join(hexes) + '"]' + extra + "}").encode("utf-8")


def _lean(s: Session, hexes: List[str]) -> Request:
    data = _query_body(s, hexes, ',"detail":"prefix"')
    return Request("POST", "/cache/query", "application/json", (data,), len(data), p.json_answer)


def batch_exists(s: Session, deadline: float, keys):
    lim = yield from limits(s, deadline)
    hexes = [k.hex() for k in _keys(keys)]
    out: List[bool] = []
    for a, b in _key_parts(s, lim, hexes):
        answer = yield _lean(s, hexes[a:b])
        out.extend(bool(x) for x in answer["present"])
    return out


def prefix_len(s: Session, deadline: float, keys):
    lim = yield from limits(s, deadline)
    hexes = [k.hex() for k in _keys(keys)]
    total = 0
    for a, b in _key_parts(s, lim, hexes):
        answer = yield _lean(s, hexes[a:b])
        n = int(answer["recoverable_prefix"])
        total += n
        if n < b - a:
            break
    return total


def batch_remove(s: Session, deadline: float, keys):
    lim = yield from limits(s, deadline)
    hexes = [k.hex() for k in _keys(keys)]
    evicted = 0
    for a, b in _key_parts(s, lim, hexes):
        data = _query_body(s, hexes[a:b], ',"medium":"ALL"')
        answer = yield Request("POST", "/cache/evict", "application/json", (data,), len(data), p.json_answer)
        evicted += int(answer["evicted"])
    return evicted


def _as_bytes_view(value) -> memoryview:
    mv = value if isinstance(value, memoryview) else memoryview(value)
    if not mv.contiguous:
        raise ValueError("a value must be a contiguous buffer")
    return mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv


class _Gather:
    """A value given as a tuple of buffers (the engine backends' K and V halves of one page): one record whose
    payload is the buffers in order, sent from them without a copy when large."""

    __slots__ = ("parts", "nbytes")

    def __init__(self, buffers: tuple):
        self.parts = [_as_bytes_view(b) for b in buffers]
        self.nbytes = sum(v.nbytes for v in self.parts)

    def __iter__(self):
        return iter(self.parts)


def put_batch(s: Session, deadline: float, keys, values):
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} keys but {len(values)} values")
    lim = yield from limits(s, deadline)
    mapped = _keys(keys)
    views = [_Gather(v) if isinstance(v, tuple) else _as_bytes_view(v) for v in values]
    saved = 0
    i = 0
    while i < len(mapped):
        # one save: as many records as the record and body bounds allow (at least one: the Manager refuses it if
        # it is too large on its own)
        j, body = i, 0
        while j < len(mapped) and j - i < lim.records_per_save_max:
            size = RECORD_HEADER_BYTES + len(mapped[j]) + views[j].nbytes
            if j > i and body + size > lim.save_body_bytes_max:
                break
            body += size
            j += 1
        parts: list = []
        pending = bytearray()
        for k in range(i, j):
            header = record_header(mapped[k], views[k].nbytes)
            if views[k].nbytes <= COALESCE_BYTES // 4:
                pending += header
                for part in (views[k].parts if isinstance(views[k], _Gather) else (views[k],)):
                    pending += part
                if len(pending) >= COALESCE_BYTES:
                    parts.append(pending)
                    pending = bytearray()
            else:
                pending += header
                parts.append(pending)
                pending = bytearray()
                parts.extend(views[k].parts if isinstance(views[k], _Gather) else (views[k],))
        if pending:
            parts.append(pending)
        answer = yield Request("POST", "/cache/save?namespace=" + s.ns_query, CONTENT_TYPE, parts, body, p.json_answer)
        saved += len(answer["saved"])
        i = j
    return saved


def put_if_absent_batch(s: Session, deadline: float, keys, values):
    """Saves the keys the lean query reports absent; returns one bool per key (True: written now). Not atomic: a
    key saved by another writer between the query and the save is saved again (the same content under
    content-addressed keys, so the race costs an upload, never correctness)."""
    present = yield from batch_exists(s, deadline, keys)
    todo = [i for i, here in enumerate(present) if not here]
    if todo:
        yield from put_batch(s, deadline, [keys[i] for i in todo], [values[i] for i in todo])
    return [not here for here in present]


def _restore(s: Session, deadline: float, part: List[bytes], offset: int, alloc, results: List[int], clock,
             stream: bool = False):
    remaining_ms = int((deadline - clock() - DEADLINE_MARGIN_S) * 1000)
    data = _query_body(s, [k.hex() for k in part], ',"deadline_ms":' + str(max(1, min(600000, remaining_ms)))
                       + s.backend_json + (',"stream":true' if stream else ""))
    holder = {}

    def handler(reader, answer):
        if answer.status == 200 and answer.length == p.CHUNKED:  # streamed: the stop arrives in the end record
            n, holder["stop"] = yield from p.stream_records(reader, answer, part, offset, alloc, results)
            return n
        holder["stop"] = p.stop_of(answer) if answer.status == 200 else None
        return (yield from p.records(reader, answer, part, offset, alloc, results))

    n = yield Request("POST", "/cache/restore", "application/json", (data,), len(data), handler)
    return n, holder.get("stop") or "unknown"


def read_prefix(s: Session, deadline: float, keys, alloc, results: List[int], clock=time.monotonic, stream=False):
    """Restores the prefix of ``keys`` into ``alloc(index, size)``'s buffers; ``results[i]`` is the bytes read, -1
    for a key not read (a miss or after the prefix ended), -2 when the buffer was smaller than the block. With
    ``stream`` each part is a streamed restore (records as they are verified, then the end record)."""
    lim = yield from limits(s, deadline)
    mapped = _keys(keys)
    pos = 0
    try:
        while pos < len(mapped):
            part = mapped[pos:pos + lim.keys_per_request_max]
            n, stop = yield from _restore(s, deadline, part, pos, alloc, results, clock, stream)
            pos += n
            if n == len(part):
                continue
            if n > 0 and stop_class(stop) == RETRYABLE:
                continue  # a capacity stop: the next request continues from the restored count
            break
    except errors.OrbitKVError as e:
        e.partial = list(results)
        raise
    return results


def batch_get_into(s: Session, deadline: float, keys, buffers, stream: bool = False):
    if len(keys) != len(buffers):
        raise ValueError(f"{len(keys)} keys but {len(buffers)} buffers")
    views = [_writable(b) for b in buffers]

    def alloc(i: int, size: int):
        v = views[i]
        return v[:size] if v.nbytes >= size else None

    results = [p.MISS] * len(keys)
    return (yield from read_prefix(s, deadline, keys, alloc, results, stream=stream))


def _writable(b) -> memoryview:
    mv = b if isinstance(b, memoryview) else memoryview(b)
    if mv.readonly:
        raise ValueError("a buffer must be writable")
    if not mv.contiguous:
        raise ValueError("a buffer must be contiguous")
    return mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv


def get_batch(s: Session, deadline: float, keys):
    got: dict = {}

    def alloc(i: int, size: int):
        b = bytearray(size)
        got[i] = b
        return memoryview(b)

    results = [p.MISS] * len(keys)
    yield from read_prefix(s, deadline, keys, alloc, results)
    return [got[i] if results[i] >= 0 else None for i in range(len(keys))]
