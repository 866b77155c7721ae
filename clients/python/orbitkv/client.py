"""The synchronous client: a thread-safe keep-alive pool of raw sockets (TCP_NODELAY) to one Manager."""

from __future__ import annotations

import socket
import threading
import time
from typing import List, Optional, Sequence, Union
from urllib.parse import urlsplit

from . import _ops
from . import admission as adm
from . import _protocol as p
from .errors import ConnectionFailed, OrbitKVError, Timeout
from .keys import Key


def parse_url(url: str):
    u = urlsplit(url)
    if u.scheme != "http" or not u.hostname or u.port is None:
        raise ValueError(f"url must be http://HOST:PORT, got {url!r}")
    host = u.hostname
    return host, u.port, (f"[{host}]" if ":" in host else host) + f":{u.port}"


class _Conn:
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


class Client:
    """A client of one Manager for one namespace (the model identity). Thread-safe; use one per process.

    ``timeout_s`` bounds every call as a whole (connection wait, connect, send, every part of a batch);
    ``connect_timeout_s`` bounds one TCP connect; at most ``pool_size`` connections are open, a call waiting for a
    free one longer than its timeout raises :class:`Timeout`. ``transfer_backend`` (keyword only) names the READ
    backend of peer restores (``"tcp"`` or ``"shared-memory-preferred"``; default: the Manager's
    ``--transfer-backend``).
    """

    def __init__(self, url: str, namespace: str, token: Optional[str] = None, timeout_s: float = 5.0,
                 connect_timeout_s: float = 0.1, pool_size: int = 8, *, transfer_backend: Optional[str] = None):
        if timeout_s <= 0 or connect_timeout_s <= 0 or pool_size < 1:
            raise ValueError("timeout_s and connect_timeout_s must be positive, pool_size at least 1")
        self._host, self._port, self._authority = parse_url(url)
        self._session = _ops.Session(namespace, token, transfer_backend)
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.pool_size = pool_size
        self._idle: List[_Conn] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(pool_size)
        self._closed = False

    # ------------------------------------------------------------------ calls

    def put(self, key: Key, value) -> None:
        """Saves one block (``value``: any contiguous buffer, sent from it without a copy when large)."""
        self._do(_ops.put_batch, [key], [value])

    def put_batch(self, keys: Sequence[Key], values: Sequence) -> int:
        """Saves blocks, split into saves by the Manager's limits; each save is atomic, the batch is not."""
        return self._do(_ops.put_batch, list(keys), list(values))

    def put_if_absent_batch(self, keys: Sequence[Key], values: Sequence) -> List[bool]:
        """Saves the keys the Manager does not have (lean query, then save); True per key written now."""
        return self._do(_ops.put_if_absent_batch, list(keys), list(values))

    def get(self, key: Key) -> Optional[bytearray]:
        """One block as a new bytearray, or None on a miss (allocates: :meth:`get_into` does not)."""
        return self.get_batch([key])[0]

    def get_batch(self, keys: Sequence[Key]) -> List[Optional[bytearray]]:
        """The prefix of ``keys`` as new bytearrays; None from the first key not read on."""
        return self._do(_ops.get_batch, list(keys))

    def get_into(self, key: Key, buffer) -> int:
        """Reads one block into ``buffer`` (a writable buffer); bytes read, -1 on a miss, -2 if it is too small."""
        return self.batch_get_into([key], [buffer])[0]

    def batch_get_into(self, keys: Sequence[Key], buffers: Sequence, stream: bool = False) -> List[int]:
        """Reads the recoverable prefix of ``keys`` straight from the socket into ``buffers`` (one writable buffer
        per key: bytearray, memoryview slice, numpy array). Per key: bytes read, -1 (a miss, or after the prefix
        ended), -2 (the buffer is smaller than the block; nothing reported read). On a broken connection or timeout
        the error's ``partial`` holds the results up to the cut. ``stream=True`` asks for the streamed restore
        (docs/api.md): records arrive as they are verified and the restore memory is held per record, not per
        answer; an answer without its end record is a cut."""
        return self._do(_ops.batch_get_into, list(keys), list(buffers), stream)

    def batch_get_with(self, keys: Sequence[Key], alloc, stream: bool = False) -> List[int]:
        """Like :meth:`batch_get_into`, but ``alloc(index, size)`` picks each record's destination once its size is
        known: a writable memoryview (at least ``size`` bytes), a tuple of memoryviews filled in order whose lengths
        add up to ``size`` (scatter), or None (the record is skipped: -2). For engine backends that allocate from
        their own pool only for records that arrive. ``stream=True``: the streamed restore, as in
        :meth:`batch_get_into` (``alloc`` is then called as each verified record arrives)."""
        return self._do(_ops.read_prefix, list(keys), alloc, [p.MISS] * len(keys), time.monotonic, stream)

    def exists(self, key: Key) -> bool:
        return self.batch_exists([key])[0]

    def batch_exists(self, keys: Sequence[Key]) -> List[bool]:
        """One presence flag per key (a local or fresh replica), from the lean query."""
        return self._do(_ops.batch_exists, list(keys))

    def prefix_len(self, keys: Sequence[Key]) -> int:
        """How many leading keys a restore can deliver now (the lean query's recoverable prefix)."""
        return self._do(_ops.prefix_len, list(keys))

    def remove(self, key: Key) -> int:
        return self.batch_remove([key])

    def batch_remove(self, keys: Sequence[Key]) -> int:
        """Evicts the keys from every tier; the number of (key, medium) residences removed."""
        return self._do(_ops.batch_remove, list(keys))

    def sync(self) -> dict:
        return self._do(_ops.sync)

    def health(self) -> dict:
        return self._do(_ops.health)

    def limits(self, refresh: bool = False) -> _ops.Limits:
        return self._do(_ops.limits, refresh)

    # ------------------------------------------------------------------ admission (docs/engines.md, issue 39)

    def admission_register(self, instance: str) -> Union[adm.Registered, adm.Refused]:
        """Registers an engine WRITE submitter (``instance``: the engine instance id; fairness is per instance)."""
        body = {"kind": adm.ENGINE_WRITE, "instance": adm.check_instance(instance)}
        return self._do(adm.call, "register", body)

    def admission_charge(self, submitter: int, nic: str, direction: str, nbytes: int, deadline_ms: int,
                         remaining_bytes: Optional[int] = None, wait_ms: int = 0) -> Union[adm.Granted, adm.Refused]:
        """Charges ``nbytes`` of a WRITE to lane ``nic``/``direction`` before sending them; ``wait_ms`` > 0 waits in
        the Manager's bounded queue (at most ``timeout_s`` minus 1 s)."""
        body = adm.charge_body(submitter, nic, direction, nbytes, deadline_ms, remaining_bytes, wait_ms,
                               self.timeout_s)
        return self._do(adm.call, "charge", body)

    def admission_return(self, submitter: int, lease: int, nbytes: int,
                         evidence: str = adm.TRANSPORT_PROGRESS) -> Union[adm.Returned, adm.Refused]:
        """Returns ``nbytes`` of ``lease`` with ``evidence`` (``transport-progress`` or ``never-submitted``)."""
        return self._do(adm.call, "return", adm.return_body(submitter, lease, nbytes, evidence))

    def admission_terminate(self, submitter: int) -> adm.Returned:
        """Termination evidence (the engine's transfers ended or were revoked): every byte it held goes back."""
        return self._do(adm.call, "terminate", adm.submitter_body(submitter))

    def admission_lost(self, submitter: int) -> adm.Returned:
        """The submitter vanished without evidence: its bytes stay charged (quarantined) until terminate."""
        return self._do(adm.call, "lost", adm.submitter_body(submitter))

    def admission_status(self) -> Optional[dict]:
        """The ``admission`` part of ``/cache/metadata/status`` (lanes, charged bytes by kind, refusals); None when
        the Manager runs with ``--admission-disabled``."""
        return self._do(adm.status)

    def admission_submitter(self, instance: str, *, nic: str, direction: str) -> adm.Submitter:
        """The engine helper (:class:`orbitkv.admission.Submitter`): ``with`` registers and terminates; its
        ``write`` contexts charge WRITEs on ``nic``/``direction`` and return them with evidence."""
        return adm.Submitter(self, instance, nic, direction)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ driving

    def _do(self, fn, *args):
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
                res = self._perform(req, deadline)
            except OrbitKVError as e:
                exc = e

    def _perform(self, req: _ops.Request, deadline: float):
        head = p.request_head(req.method, req.path, self._authority, req.content_type, req.length, self._session.token)
        for attempt in (0, 1):
            conn = self._acquire(deadline)
            reused = conn.uses > 0
            conn.reader.received = 0
            state = {"close": True, "done": False}
            try:
                return self._drive(conn, self._gen(conn, head, req, state), deadline)
            except ConnectionFailed:
                # a pooled connection the Manager closed meanwhile (idle timeout, restart): once more on a new one
                if attempt == 0 and reused and conn.reader.received == 0:
                    self._flush_idle()
                    continue
                raise
            finally:
                conn.uses += 1
                self._release(conn, state["done"] and not state["close"])

    @staticmethod
    def _gen(conn: _Conn, head: bytes, req: _ops.Request, state: dict):
        answer = yield from p.exchange(conn.reader, head, req.body, state)
        try:
            value = yield from req.handler(conn.reader, answer)
        except OrbitKVError as e:
            state["done"] = e.status != 0 and e.code != "PROTOCOL"
            raise
        state["done"] = True
        return value

    @staticmethod
    def _drive(conn: _Conn, gen, deadline: float):
        sock = conn.sock
        res = None
        try:
            op = gen.send(None)
            while True:
                kind, buf = op
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise socket.timeout()
                sock.settimeout(remaining)
                if kind == p.SEND:
                    try:
                        sock.sendall(buf)
                        res = None
                    except socket.timeout:
                        raise
                    except OSError as e:
                        res = p.SendFailed(e)
                else:
                    res = sock.recv_into(buf)
                op = gen.send(res)
        except StopIteration as stop:
            return stop.value
        except socket.timeout:
            raise Timeout("the call's timeout passed") from None
        except (p.Eof, OSError) as e:
            raise ConnectionFailed(f"the connection to the Manager broke: {e}") from None

    # ------------------------------------------------------------------ pool

    def _acquire(self, deadline: float) -> _Conn:
        if not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise Timeout(f"all {self.pool_size} pooled connections stayed busy for the call's timeout")
        try:
            with self._lock:
                if self._closed:
                    raise ConnectionFailed("the client is closed")
                if self._idle:
                    return self._idle.pop()
            return self._connect(deadline)
        except BaseException:
            self._slots.release()
            raise

    def _connect(self, deadline: float) -> _Conn:
        t = min(self.connect_timeout_s, max(0.001, deadline - time.monotonic()))
        try:
            sock = socket.create_connection((self._host, self._port), timeout=t)
        except socket.timeout:
            raise ConnectionFailed(f"connecting to {self._authority} timed out after {t:.3f} s") from None
        except OSError as e:
            raise ConnectionFailed(f"cannot connect to {self._authority}: {e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Conn(sock)

    def _release(self, conn: _Conn, reusable: bool) -> None:
        keep = False
        if reusable:
            with self._lock:
                if not self._closed:
                    self._idle.append(conn)
                    keep = True
        if not keep:
            conn.close()
        self._slots.release()

    def _flush_idle(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()
