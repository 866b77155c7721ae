"""The raw loopback arm: a minimal HTTP-ish server in its own process (standard library, one connection at a time)
and a client that moves the same bytes as the Manager arms, received with ``recv_into`` into the caller's
preallocated buffers. What is left when the store is taken away: one process boundary, loopback TCP, Python.

Requests are one line, answers an HTTP/1.1 status line and Content-Length:
  ``PUT <id> <size>`` + size bytes   the server receives them into a buffer kept per id (allocated once); empty answer
  ``GET <id> <id> ...``              a 4-byte big-endian length and the payload per id
  ``ECHO <answer-bytes> <size>`` + size bytes   answers that many bytes (the round trip of a small JSON call)
Run the server as ``python3 -m bench.raw`` (from clients/python): it prints ``port N`` and serves until stdin closes.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
from typing import Dict, List, Sequence

_LEN = struct.Struct(">I")
_HEAD_MAX = 64 * 1024
_SENDMSG_PARTS_MAX = 512


def _sendv(sock: socket.socket, views: List[memoryview]) -> None:
    """Writes the views in order with vectored sends (partial sends resumed)."""
    i = 0
    while i < len(views):
        n = sock.sendmsg(views[i:i + _SENDMSG_PARTS_MAX])
        while n > 0:
            v = views[i]
            if n >= len(v):
                n -= len(v)
                i += 1
            else:
                views[i] = v[n:]
                n = 0
        while i < len(views) and len(views[i]) == 0:
            i += 1


class _Conn:
    """Line and exact-length reads over one socket, payloads straight into the target buffer."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray(_HEAD_MAX)
        self.mv = memoryview(self.buf)
        self.start = self.end = 0

    def line(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n", self.start, self.end)
            if i >= 0:
                out = bytes(self.mv[self.start:i])
                self.start = i + 2
                return out
            if self.start:
                n = self.end - self.start
                self.buf[:n] = self.mv[self.start:self.end]
                self.start, self.end = 0, n
            if self.end == len(self.buf):
                raise IOError("header line longer than the buffer")
            n = self.sock.recv_into(self.mv[self.end:])
            if not n:
                raise EOFError("peer closed")
            self.end += n

    def into(self, target: memoryview) -> None:
        k = min(len(target), self.end - self.start)
        if k:
            target[:k] = self.mv[self.start:self.start + k]
            self.start += k
        pos = k
        while pos < len(target):
            n = self.sock.recv_into(target[pos:])
            if not n:
                raise EOFError("peer closed inside a payload")
            pos += n


def _answer(length: int) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % length


def _serve_connection(sock: socket.socket, blocks: Dict[bytes, bytearray]) -> None:
    c = _Conn(sock)
    zeros = bytes(64 * 1024)
    while True:
        try:
            words = c.line().split()
        except EOFError:
            return
        if words[0] == b"PUT":
            size = int(words[2])
            b = blocks.get(words[1])
            if b is None or len(b) != size:
                b = blocks[words[1]] = bytearray(size)
            c.into(memoryview(b))
            sock.sendall(_answer(0))
        elif words[0] == b"GET":
            views: List[memoryview] = []
            total = 0
            for key in words[1:]:
                b = blocks[key]
                views += [memoryview(_LEN.pack(len(b))), memoryview(b)]
                total += 4 + len(b)
            _sendv(sock, [memoryview(_answer(total))] + views)
        elif words[0] == b"ECHO":
            reply, size = int(words[1]), int(words[2])
            c.into(memoryview(bytearray(size)))
            sock.sendall(_answer(reply) + zeros[:reply])
        else:
            return


def serve(listener: socket.socket) -> None:
    blocks: Dict[bytes, bytearray] = {}
    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with sock:
            _serve_connection(sock, blocks)


class RawServer:
    """The server process; ``close()`` (or the context manager) ends it."""

    def __init__(self) -> None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.raw"], cwd=here, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            self.proc.kill()
            raise RuntimeError(f"the raw server printed {line!r}")
        self.port = int(line.split()[1])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> "RawServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RawClient:
    """One keep-alive connection to the raw server."""

    def __init__(self, port: int, timeout_s: float = 60.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = _Conn(self.sock)
        self._len = bytearray(4)

    def _head(self) -> int:
        status = self.conn.line()
        if not status.startswith(b"HTTP/1.1 200"):
            raise IOError(f"raw server answered {status!r}")
        length = -1
        while True:
            h = self.conn.line()
            if not h:
                return length
            name, _, value = h.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)

    def put(self, key: str, value) -> None:
        view = memoryview(value).cast("B")
        line = b"PUT %s %d\r\n" % (key.encode(), len(view))
        if len(view) <= 64 * 1024:
            self.sock.sendall(line + bytes(view))
        else:
            self.sock.sendall(line)
            self.sock.sendall(view)
        self._head()

    def put_batch(self, keys: Sequence[str], values: Sequence) -> int:
        for k, v in zip(keys, values):
            self.put(k, v)
        return len(keys)

    def batch_get_into(self, keys: Sequence[str], buffers: Sequence) -> List[int]:
        self.sock.sendall(b"GET " + b" ".join(k.encode() for k in keys) + b"\r\n")
        self._head()
        out = []
        lmv = memoryview(self._len)
        for b in buffers:
            self.conn.into(lmv)
            n = _LEN.unpack(self._len)[0]
            self.conn.into(memoryview(b).cast("B")[:n])
            out.append(n)
        return out

    def echo(self, request: bytes, answer_bytes: int) -> int:
        self.sock.sendall(b"ECHO %d %d\r\n" % (answer_bytes, len(request)) + request)
        n = self._head()
        self.conn.into(memoryview(bytearray(n)))
        return n

    def close(self) -> None:
        self.sock.close()


def _main() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    print("port", listener.getsockname()[1], flush=True)
    threading.Thread(target=serve, args=(listener,), daemon=True).start()
    sys.stdin.read()  # serve until the parent closes stdin (or dies)


if __name__ == "__main__":
    _main()
