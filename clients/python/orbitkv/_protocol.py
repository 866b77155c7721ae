"""HTTP/1.1 over one socket, written once as generators (sans-IO) and driven by the sync and the asyncio client.

A generator yields ``(SEND, buffer)`` or ``(RECV, writable memoryview)`` and receives ``None`` (sent), a
:class:`SendFailed` (the send broke: the answer may still be readable, e.g. an early 413), or the byte count
``recv_into`` returned. Payloads are received straight into the caller's memoryview; only headers, keys and JSON
answers pass through the connection's 64 KiB buffer.
"""

from __future__ import annotations

import json
import struct
from typing import Callable, List, Optional, Sequence

from . import errors

SEND = 0
RECV = 1

#: bytes of a connection's input buffer (status line, headers, record headers, JSON answers pass through it)
BUFFER_BYTES = 64 * 1024
#: bound of the status line plus headers of one answer
HEAD_BYTES_MAX = 32 * 1024
#: bound of a JSON answer body (the largest, /cache/query of 128 keys with replicas, is far below)
JSON_BYTES_MAX = 16 * 1024 * 1024

MISS = -1
TOO_SMALL = -2
#: Answer.length of a chunked answer
CHUNKED = -1

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")


class SendFailed:
    def __init__(self, exc: BaseException):
        self.exc = exc


class Eof(Exception):
    """The Manager closed the connection."""


class Reader:
    """The input side of one connection."""

    __slots__ = ("buf", "mv", "start", "end", "received")

    def __init__(self) -> None:
        self.buf = bytearray(BUFFER_BYTES)
        self.mv = memoryview(self.buf)
        self.start = 0
        self.end = 0
        self.received = 0

    def available(self) -> int:
        return self.end - self.start

    def fill(self):
        if self.start == self.end:
            self.start = self.end = 0
        elif self.end == len(self.buf):
            n = self.end - self.start
            self.buf[0:n] = bytes(self.mv[self.start:self.end])
            self.start, self.end = 0, n
        if self.end == len(self.buf):
            raise errors.ServerError(0, "PROTOCOL", "a header of the answer exceeds the client's buffer")
        n = yield (RECV, self.mv[self.end:])
        if not n:
            raise Eof("the Manager closed the connection")
        self.end += n
        self.received += n

    def small(self, n: int):
        while self.end - self.start < n:
            yield from self.fill()
        out = bytes(self.mv[self.start:self.start + n])
        self.start += n
        return out

    def line(self):
        scanned = 0  # relative to start: fill() may move the buffered bytes
        while True:
            i = self.buf.find(b"\r\n", self.start + scanned, self.end)
            if i >= 0:
                out = bytes(self.mv[self.start:i])
                self.start = i + 2
                return out
            scanned = max(0, self.end - self.start - 1)
            if self.end - self.start > HEAD_BYTES_MAX:
                raise errors.ServerError(0, "PROTOCOL", "answer headers exceed the client's bound")
            yield from self.fill()

    def into(self, target: memoryview):
        """Reads exactly len(target) bytes into target: buffered bytes first, then straight from the socket."""
        want = len(target)
        k = min(want, self.end - self.start)
        if k:
            target[:k] = self.mv[self.start:self.start + k]
            self.start += k
        pos = k
        while pos < want:
            n = yield (RECV, target[pos:])
            if not n:
                raise Eof("the Manager closed the connection inside a payload")
            pos += n
            self.received += n

    def discard(self, n: int):
        while n > 0:
            if self.start == self.end:
                yield from self.fill()
            k = min(n, self.end - self.start)
            self.start += k
            n -= k


class Answer:
    """Status line and headers of one answer."""

    __slots__ = ("status", "headers", "length", "close")

    def __init__(self, status: int, headers: dict, length: int, close: bool):
        self.status = status
        self.headers = headers
        self.length = length
        self.close = close


def request_head(method: str, path: str, host: str, content_type: Optional[str], length: int,
                 token: Optional[str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if method == "POST" or length:
        lines.append(f"Content-Length: {length}")
    if token:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _read_answer(reader: Reader):
    status_line = yield from reader.line()
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise errors.ServerError(0, "PROTOCOL", f"not an HTTP answer: {status_line[:64]!r}")
    status = int(parts[1])
    headers = {}
    while True:
        line = yield from reader.line()
        if not line:
            break
        name, _, value = line.partition(b":")
        headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    if status == 100:
        return (yield from _read_answer(reader))
    close = headers.get("connection", "").lower() == "close" or parts[0] == b"HTTP/1.0"
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return Answer(status, headers, CHUNKED, close)  # a streamed restore (docs/api.md "Streamed restore")
    if "content-length" not in headers:
        raise errors.ServerError(status, "PROTOCOL", "the answer has no Content-Length")
    return Answer(status, headers, int(headers["content-length"]), close)


def exchange(reader: Reader, head: bytes, body: Sequence, state: dict):
    """Sends one request and reads its answer's head. ``state["close"]`` tells the driver the connection ends."""
    failed = None
    res = yield (SEND, head)
    if isinstance(res, SendFailed):
        failed = res.exc
    else:
        for part in body:
            res = yield (SEND, part)
            if isinstance(res, SendFailed):
                failed = res.exc
                break
    try:
        answer = yield from _read_answer(reader)
    except Eof:
        if failed is not None:
            raise failed
        raise
    state["close"] = answer.close or failed is not None
    return answer


def error_of(reader: Reader, answer: Answer):
    """Reads an error answer's body and returns its typed error."""
    body = yield from _body(reader, answer)
    code, message = "HTTP_" + str(answer.status), body.decode("utf-8", "replace")[:512]
    try:
        e = json.loads(body)["error"]
        code, message = e["code"], e["message"]
    except (ValueError, KeyError, TypeError):
        try:  # /health answers 503 with its own body when fenced
            status = json.loads(body).get("status")
            if status:
                code, message = status.upper(), f"the Manager's health is {status}"
        except (ValueError, AttributeError):
            pass
    return errors.from_status(answer.status, code, message, answer.headers.get("retry-after"))


def _body(reader: Reader, answer: Answer):
    if answer.length > JSON_BYTES_MAX:
        raise errors.ServerError(answer.status, "PROTOCOL", f"answer of {answer.length} bytes exceeds the client's bound")
    if answer.length <= BUFFER_BYTES:
        return (yield from reader.small(answer.length))
    out = bytearray(answer.length)
    yield from reader.into(memoryview(out))
    return bytes(out)


def json_answer(reader: Reader, answer: Answer):
    if answer.status != 200:
        raise (yield from error_of(reader, answer))
    return json.loads((yield from _body(reader, answer)))


def records(reader: Reader, answer: Answer, keys: Sequence[bytes], offset: int,
            alloc: Callable[[int, int], Optional[memoryview]], results: List[int]):
    """Reads a restore answer's records (the prefix of ``keys`` in order) into ``alloc(index, size)``'s memoryview
    (or a tuple of memoryviews filled in order whose lengths add up to ``size``: the scatter form of the engine
    backends; ``None`` discards the record and reports ``TOO_SMALL``).
    ``results[offset + i]`` is set only once record i was read whole. Returns the record count."""
    if answer.status != 200:
        raise (yield from error_of(reader, answer))
    remaining = answer.length
    i = 0
    while remaining > 0:
        (klen,) = _U16.unpack((yield from reader.small(2)))
        key = yield from reader.small(klen)
        (plen,) = _U32.unpack((yield from reader.small(4)))
        remaining -= 6 + klen + plen
        if i >= len(keys) or key != keys[i] or remaining < 0:
            raise errors.ServerError(200, "PROTOCOL", f"restore record {i} is not the requested key in order")
        target = alloc(offset + i, plen)
        if target is None:
            yield from reader.discard(plen)
            results[offset + i] = TOO_SMALL
        elif isinstance(target, tuple):
            # scatter (engine backends): consecutive views whose lengths add up to the payload, filled in order
            if sum(len(t) for t in target) != plen:
                raise ValueError(f"record {offset + i}: scatter views hold {sum(len(t) for t in target)} bytes, "
                                 f"the payload {plen}")
            for t in target:
                yield from reader.into(t)
            results[offset + i] = plen
        else:
            yield from reader.into(target[:plen] if len(target) != plen else target)
            results[offset + i] = plen
        i += 1
    restored = answer.headers.get("x-orbitkv-restored")
    if restored is not None and int(restored) != i:
        raise errors.ServerError(200, "PROTOCOL", f"X-OrbitKV-Restored says {restored}, the body held {i} records")
    return i


def stop_of(answer: Answer) -> str:
    route = answer.headers.get("x-orbitkv-route", "")
    for part in route.split(" "):
        if part.startswith("stop="):
            return part[5:]
    return "complete" if route.startswith("r=") else "unknown"


class Dechunked:
    """The body of a chunked answer as a byte stream over ``reader``: payload bytes still go straight from the
    socket into the caller's memoryview; only chunk-size lines pass through the connection's buffer."""

    __slots__ = ("reader", "left", "ended")

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.left = 0
        self.ended = False

    def _next(self):
        if self.ended:
            raise errors.ServerError(200, "PROTOCOL", "the streamed answer ended inside a record")
        while self.left == 0:
            line = yield from self.reader.line()
            if not line:
                continue  # the CRLF that ends the previous chunk's data
            try:
                self.left = int(line.split(b";", 1)[0], 16)
            except ValueError:
                raise errors.ServerError(200, "PROTOCOL", f"bad chunk size line {line[:32]!r}") from None
            if self.left == 0:
                self.ended = True
                raise errors.ServerError(200, "PROTOCOL", "the streamed answer ended inside a record")

    def small(self, n: int):
        out = bytearray()
        while len(out) < n:
            yield from self._next()
            k = min(n - len(out), self.left)
            out += yield from self.reader.small(k)
            self.left -= k
        return bytes(out)

    def into(self, target: memoryview):
        pos = 0
        while pos < len(target):
            yield from self._next()
            k = min(len(target) - pos, self.left)
            yield from self.reader.into(target[pos:pos + k])
            self.left -= k
            pos += k

    def discard(self, n: int):
        while n > 0:
            yield from self._next()
            k = min(n, self.left)
            yield from self.reader.discard(k)
            self.left -= k
            n -= k

    def finish(self):
        """Reads the last chunk and the trailers after the end record; anything else there is a protocol error."""
        while True:
            line = yield from self.reader.line()
            if not line and self.left == 0:
                continue
            if self.left != 0 or int(line.split(b";", 1)[0], 16) != 0:
                raise errors.ServerError(200, "PROTOCOL", "bytes after the streamed restore's end record")
            break
        while (yield from self.reader.line()):
            pass  # trailers


def stream_records(reader: Reader, answer: Answer, keys: Sequence[bytes], offset: int,
                   alloc: Callable[[int, int], Optional[memoryview]], results: List[int]):
    """Reads a streamed restore answer: records as in :func:`records`, then the end record (zero-length key, JSON of
    restored, stop and route). Returns ``(record count, stop)``. Without the end record the answer is incomplete:
    the cut raises, and ``results`` holds only the records read whole before it."""
    if answer.status != 200:
        raise (yield from error_of(reader, answer))
    body = Dechunked(reader)
    i = 0
    while True:
        (klen,) = _U16.unpack((yield from body.small(2)))
        key = yield from body.small(klen)
        (plen,) = _U32.unpack((yield from body.small(4)))
        if klen == 0:
            if plen > JSON_BYTES_MAX:
                raise errors.ServerError(200, "PROTOCOL", f"end record of {plen} bytes exceeds the client's bound")
            end = json.loads((yield from body.small(plen)))
            yield from body.finish()
            if int(end["restored"]) != i:
                raise errors.ServerError(200, "PROTOCOL", f"the end record says {end['restored']}, the answer held {i}")
            return i, end["stop"].split(" ", 1)[0]
        if i >= len(keys) or key != keys[i]:
            raise errors.ServerError(200, "PROTOCOL", f"restore record {i} is not the requested key in order")
        target = alloc(offset + i, plen)
        if target is None:
            yield from body.discard(plen)
            results[offset + i] = TOO_SMALL
        else:
            yield from body.into(target[:plen] if len(target) != plen else target)
            results[offset + i] = plen
        i += 1
