"""The asyncio twin of :class:`orbitkv.Client`: the same calls (coroutines) over non-blocking sockets, reading
straight into the caller's buffers with ``loop.sock_recv_into``. Bound to the event loop of its first call."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from typing import List, Optional, Sequence, Union

from . import _ops
from . import admission as adm
from . import _protocol as p
from .client import Client, parse_url
from .errors import ConnectionFailed, OrbitKVError, Timeout
from .keys import Key


def _literal(host: str, port: int):
    """The address of an IP literal without getaddrinfo: the loop's resolver runs in its thread pool, which under
    load (8 engine threads connecting at once) took longer than the 100 ms connect timeout for 127.0.0.1."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    return [(family, socket.SOCK_STREAM, 0, "", (host, port))]


class _AConn:
    __slots__ = ("sock", "reader", "uses")

    def __init__(self, sock):
        self.sock = sock
        self.reader = p.Reader()
        self.uses = 0

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class AsyncClient:
    """``AsyncClient(url, namespace, token=None, timeout_s=5.0, connect_timeout_s=0.1, pool_size=8)``; every call is
    a coroutine with the name and result of :class:`orbitkv.Client`'s. ``async with`` closes it."""

    def __init__(self, url: str, namespace: str, token: Optional[str] = None, timeout_s: float = 5.0,
                 connect_timeout_s: float = 0.1, pool_size: int = 8, *, transfer_backend: Optional[str] = None):
        if timeout_s <= 0 or connect_timeout_s <= 0 or pool_size < 1:
            raise ValueError("timeout_s and connect_timeout_s must be positive, pool_size at least 1")
        self._host, self._port, self._authority = parse_url(url)
        self._session = _ops.Session(namespace, token, transfer_backend)
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.pool_size = pool_size
        self._idle: List[_AConn] = []
        self._slots: Optional[asyncio.Semaphore] = None
        self._closed = False

    async def put(self, key: Key, value) -> None:
        await self._do(_ops.put_batch, [key], [value])

    async def put_batch(self, keys: Sequence[Key], values: Sequence) -> int:
        return await self._do(_ops.put_batch, list(keys), list(values))

    async def put_if_absent_batch(self, keys: Sequence[Key], values: Sequence) -> List[bool]:
        return await self._do(_ops.put_if_absent_batch, list(keys), list(values))

    async def get(self, key: Key) -> Optional[bytearray]:
        return (await self.get_batch([key]))[0]

    async def get_batch(self, keys: Sequence[Key]) -> List[Optional[bytearray]]:
        return await self._do(_ops.get_batch, list(keys))

    async def get_into(self, key: Key, buffer) -> int:
        return (await self.batch_get_into([key], [buffer]))[0]

    async def batch_get_into(self, keys: Sequence[Key], buffers: Sequence, stream: bool = False) -> List[int]:
        return await self._do(_ops.batch_get_into, list(keys), list(buffers), stream)

    async def batch_get_with(self, keys: Sequence[Key], alloc, stream: bool = False) -> List[int]:
        return await self._do(_ops.read_prefix, list(keys), alloc, [p.MISS] * len(keys), time.monotonic, stream)

    async def exists(self, key: Key) -> bool:
        return (await self.batch_exists([key]))[0]

    async def batch_exists(self, keys: Sequence[Key]) -> List[bool]:
        return await self._do(_ops.batch_exists, list(keys))

    async def prefix_len(self, keys: Sequence[Key]) -> int:
        return await self._do(_ops.prefix_len, list(keys))

    async def remove(self, key: Key) -> int:
        return await self.batch_remove([key])

    async def batch_remove(self, keys: Sequence[Key]) -> int:
        return await self._do(_ops.batch_remove, list(keys))

    async def sync(self) -> dict:
        return await self._do(_ops.sync)

    async def health(self) -> dict:
        return await self._do(_ops.health)

    async def limits(self, refresh: bool = False) -> _ops.Limits:
        return await self._do(_ops.limits, refresh)

    async def admission_register(self, instance: str) -> Union[adm.Registered, adm.Refused]:
        body = {"kind": adm.ENGINE_WRITE, "instance": adm.check_instance(instance)}
        return await self._do(adm.call, "register", body)

    async def admission_charge(self, submitter: int, nic: str, direction: str, nbytes: int, deadline_ms: int,
                               remaining_bytes: Optional[int] = None,
                               wait_ms: int = 0) -> Union[adm.Granted, adm.Refused]:
        body = adm.charge_body(submitter, nic, direction, nbytes, deadline_ms, remaining_bytes, wait_ms,
                               self.timeout_s)
        return await self._do(adm.call, "charge", body)

    async def admission_return(self, submitter: int, lease: int, nbytes: int,
                               evidence: str = adm.TRANSPORT_PROGRESS) -> Union[adm.Returned, adm.Refused]:
        return await self._do(adm.call, "return", adm.return_body(submitter, lease, nbytes, evidence))

    async def admission_terminate(self, submitter: int) -> adm.Returned:
        return await self._do(adm.call, "terminate", adm.submitter_body(submitter))

    async def admission_lost(self, submitter: int) -> adm.Returned:
        return await self._do(adm.call, "lost", adm.submitter_body(submitter))

    async def admission_status(self) -> Optional[dict]:
        return await self._do(adm.status)

    def admission_submitter(self, instance: str, *, nic: str, direction: str) -> adm.AsyncSubmitter:
        return adm.AsyncSubmitter(self, instance, nic, direction)

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # ------------------------------------------------------------------ driving

    async def _do(self, fn, *args):
        if self._closed:
            raise ConnectionFailed("the client is closed")
        deadline = time.monotonic() + self.timeout_s
        op = fn(self._session, deadline, *args)
        res, exc = None, None
        while True:
            try:
                req = op.throw(exc) if exc is not None else op.send(res)
            except StopIteration as stop:
                return stop.value
            res, exc = None, None
            try:
                res = await self._perform(req, deadline)
            except OrbitKVError as e:
                exc = e

    async def _perform(self, req: _ops.Request, deadline: float):
        head = p.request_head(req.method, req.path, self._authority, req.content_type, req.length, self._session.token)
        for attempt in (0, 1):
            conn = await self._acquire(deadline)
            reused = conn.uses > 0
            conn.reader.received = 0
            state = {"close": True, "done": False}
            try:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Timeout("the call's timeout passed")
                try:
                    return await asyncio.wait_for(self._drive(conn, self._gen(conn, head, req, state)), remaining)
                except asyncio.TimeoutError:
                    raise Timeout("the call's timeout passed") from None
            except ConnectionFailed:
                if attempt == 0 and reused and conn.reader.received == 0:
                    self._flush_idle()
                    continue
                raise
            finally:
                conn.uses += 1
                self._release(conn, state["done"] and not state["close"])

    _gen = staticmethod(Client._gen)

    @staticmethod
    async def _drive(conn: _AConn, gen):
        loop = asyncio.get_running_loop()
        sock = conn.sock
        res = None
        try:
            op = gen.send(None)
            while True:
                kind, buf = op
                if kind == p.SEND:
                    try:
                        await loop.sock_sendall(sock, buf)
                        res = None
                    except OSError as e:
                        res = p.SendFailed(e)
                else:
                    res = await loop.sock_recv_into(sock, buf)
                op = gen.send(res)
        except StopIteration as stop:
            return stop.value
        except (p.Eof, OSError) as e:
            raise ConnectionFailed(f"the connection to the Manager broke: {e}") from None

    async def _acquire(self, deadline: float) -> _AConn:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.pool_size)
        try:
            await asyncio.wait_for(self._slots.acquire(), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            raise Timeout(f"all {self.pool_size} pooled connections stayed busy for the call's timeout") from None
        try:
            if self._closed:
                raise ConnectionFailed("the client is closed")
            if self._idle:
                return self._idle.pop()
            return await self._connect(deadline)
        except BaseException:
            self._slots.release()
            raise

    async def _connect(self, deadline: float) -> _AConn:
        loop = asyncio.get_running_loop()
        t = min(self.connect_timeout_s, max(0.001, deadline - time.monotonic()))
        try:
            infos = _literal(self._host, self._port) or await asyncio.wait_for(
                loop.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM), t)
        except (OSError, asyncio.TimeoutError) as e:
            raise ConnectionFailed(f"cannot resolve {self._authority}: {e!r}") from None
        last = None
        for family, type_, proto, _, addr in infos:
            sock = socket.socket(family, type_, proto)
            sock.setblocking(False)
            try:
                await asyncio.wait_for(loop.sock_connect(sock, addr), t)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return _AConn(sock)
            except asyncio.TimeoutError:
                sock.close()
                raise ConnectionFailed(f"connecting to {self._authority} timed out after {t:.3f} s") from None
            except OSError as e:
                sock.close()
                last = e
        raise ConnectionFailed(f"cannot connect to {self._authority}: {last}")

    def _release(self, conn: _AConn, reusable: bool) -> None:
        if reusable and not self._closed:
            self._idle.append(conn)
        else:
            conn.close()
        self._slots.release()

    def _flush_idle(self) -> None:
        idle, self._idle = self._idle, []
        for c in idle:
            c.close()
