"""The engine submitter API of the Manager's node-local admission window (issue 39 item 4; DESIGN S6, ROUTE-11).

An engine that moves KV bytes itself (P/D disaggregation WRITEs) charges them to the window of its Manager before it
sends them and returns them with evidence, so the window the Manager's own restore READs see is node-wide
(docs/engines.md "Charging P/D WRITEs"; the endpoints ``POST /admission/*`` of docs/api.md). Every call answers one
outcome, a small frozen dataclass: :class:`Registered`, :class:`Granted`, :class:`Returned` or :class:`Refused`
(a bound is an answer with its refusal's name, never an error). Arguments are checked here before any request is
sent (``ValueError``); the Manager's 400, 401 and 503 (``ADMISSION_DISABLED``) are the client's
:class:`~orbitkv.BadRequest`, :class:`~orbitkv.Unauthorized` and :class:`~orbitkv.Unavailable`.

:class:`Submitter` (``Client.admission_submitter``) and :class:`AsyncSubmitter` wrap the calls for an engine: one
registration per engine instance, and a ``write`` context per WRITE that charges before the send and returns the
bytes with the right evidence when the block ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Union

from . import _ops
from . import errors

#: the only submitter kind an engine registers (the Manager registers its own READs and egress itself)
ENGINE_WRITE = "engine-write"
RX = "rx"
TX = "tx"
#: return evidence: the transport reported the bytes delivered or terminally failed
TRANSPORT_PROGRESS = "transport-progress"
#: return evidence: the bytes were never handed to the transport (trusted only before the lease expires)
NEVER_SUBMITTED = "never-submitted"

# refusal names (docs/api.md; orbitkv_admission_refusals_total's reason label)
WINDOW_FULL = "window-full"
PACED = "paced"
QUEUED_AHEAD = "queued-ahead"
QUEUE_FULL = "queue-full"
SUBMITTERS_FULL = "submitters-full"
LEASES_FULL = "leases-full"
SUBMITTER_LOST = "submitter-lost"
DEADLINE_PASSED = "deadline-passed"
UNSPENT_RETURN_UNTRUSTED = "unspent-return-untrusted"
REFUSALS = frozenset({WINDOW_FULL, PACED, QUEUED_AHEAD, QUEUE_FULL, SUBMITTERS_FULL, LEASES_FULL, SUBMITTER_LOST,
                      DEADLINE_PASSED, UNSPENT_RETURN_UNTRUSTED})
#: the 503 code of every call when the Manager runs with ``--admission-disabled``
ADMISSION_DISABLED = "ADMISSION_DISABLED"

#: bound of ``deadline_ms`` and ``wait_ms`` (the Manager's)
WAIT_MS_MAX = 60_000
#: part of the client's ``timeout_s`` a waiting charge leaves for the answer: a charge the client stopped waiting
#: for may still be granted, and nobody would return that lease before the submitter terminates
ANSWER_MARGIN_MS = 1_000
_NIC = re.compile(r"[A-Za-z0-9_.-]{1,15}")
_INSTANCE = re.compile(r"[\x21-\x7e]{1,128}")


@dataclass(frozen=True)
class Registered:
    """``register``: the submitter id every later call names."""
    submitter: int
    outcome = "registered"


@dataclass(frozen=True)
class Granted:
    """``charge``: ``bytes`` are charged to ``lane`` (``nic/direction``) under ``lease`` until returned;
    ``never-submitted`` returns are trusted for ``expires_in_ms``."""
    lease: int
    bytes: int
    lane: str
    expires_in_ms: int
    outcome = "granted"


@dataclass(frozen=True)
class Returned:
    """``return``: ``bytes`` of ``lease`` went back, ``outstanding`` still charged to it; ``terminate``: every byte
    the submitter held (``lease`` 0); ``lost``: 0 (its bytes stay charged, quarantined)."""
    lease: int
    bytes: int
    outstanding: int
    outcome = "returned"


@dataclass(frozen=True)
class Refused:
    """A bound answered: ``refusal`` is one of :data:`REFUSALS` (a newer Manager may name others), nothing
    changed."""
    refusal: str
    detail: str
    outcome = "refused"


Outcome = Union[Registered, Granted, Returned, Refused]


class AdmissionRefused(Exception):
    """Raised by :class:`Submitter` when the Manager refused its registration (``outcome``: the :class:`Refused`)."""

    def __init__(self, outcome: Refused):
        super().__init__(f"admission refused {outcome.refusal}: {outcome.detail}")
        self.outcome = outcome


# ---------------------------------------------------------------------------------------------- validation


def _int(name: str, v, lo: int, hi: Optional[int] = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{name} must be an int, got {type(v).__name__}")
    if v < lo or (hi is not None and v > hi):
        raise ValueError(f"{name} must be {lo}..{hi if hi is not None else ''}, got {v}")
    return v


def _choice(name: str, v, allowed) -> str:
    if v not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(sorted(allowed))}, got {v!r}")
    return v


def check_instance(instance) -> str:
    if not isinstance(instance, str) or not _INSTANCE.fullmatch(instance):
        raise ValueError(f"instance must be 1..128 printable ASCII characters without spaces, got {instance!r}")
    return instance


def check_lane(nic, direction) -> None:
    if not isinstance(nic, str) or not _NIC.fullmatch(nic):
        raise ValueError(f"nic must be an interface name of 1..15 characters [A-Za-z0-9_.-], got {nic!r}")
    _choice("direction", direction, {RX, TX})


def charge_body(submitter, nic, direction, nbytes, deadline_ms, remaining_bytes, wait_ms, timeout_s: float) -> dict:
    """The charge's JSON body after every local check (ValueError names the argument and its bound)."""
    check_lane(nic, direction)
    body = {"submitter": _int("submitter", submitter, 1), "nic": nic, "direction": direction,
            "bytes": _int("nbytes", nbytes, 1), "deadline_ms": _int("deadline_ms", deadline_ms, 1, WAIT_MS_MAX)}
    if remaining_bytes is not None:
        body["remaining_bytes"] = _int("remaining_bytes", remaining_bytes, nbytes)
    if _int("wait_ms", wait_ms, 0, WAIT_MS_MAX) > 0:
        if wait_ms > timeout_s * 1000 - ANSWER_MARGIN_MS:
            raise ValueError(f"wait_ms {wait_ms} must stay {ANSWER_MARGIN_MS} ms below the client's timeout_s "
                             f"{timeout_s} (a grant the client stopped waiting for would stay charged)")
        body["wait_ms"] = wait_ms
    return body


def submitter_body(submitter) -> dict:
    return {"submitter": _int("submitter", submitter, 1)}


def return_body(submitter, lease, nbytes, evidence) -> dict:
    return {"submitter": _int("submitter", submitter, 1), "lease": _int("lease", lease, 1),
            "bytes": _int("nbytes", nbytes, 1), "evidence": _choice("evidence", evidence,
                                                                    {TRANSPORT_PROGRESS, NEVER_SUBMITTED})}


# ---------------------------------------------------------------------------------------------- ops


def _outcome(d: dict) -> Outcome:
    try:
        kind = d["outcome"]
        if kind == "registered":
            return Registered(int(d["submitter"]))
        if kind == "granted":
            return Granted(int(d["lease"]), int(d["bytes"]), str(d["lane"]), int(d["expires_in_ms"]))
        if kind == "returned":
            return Returned(int(d.get("lease", 0)), int(d["bytes"]), int(d.get("outstanding", 0)))
        if kind == "refused":
            return Refused(str(d["refusal"]), str(d.get("detail", "")))
    except (KeyError, TypeError, ValueError):
        pass
    raise errors.ServerError(200, "PROTOCOL", f"not an admission answer: {str(d)[:200]}")


def call(s: _ops.Session, deadline: float, endpoint: str, body: dict):
    """One ``POST /admission/<endpoint>`` (the body already checked); its outcome."""
    return _outcome((yield _ops._json("POST", "/admission/" + endpoint, body)))


def status(s: _ops.Session, deadline: float):
    """The ``admission`` part of ``/cache/metadata/status`` (None when the window is off)."""
    d = yield _ops._json("GET", "/cache/metadata/status")
    return d.get("admission")


# ---------------------------------------------------------------------------------------------- helpers


class _WriteState:
    """What one WRITE's context knows: the charge's outcome, whether the bytes reached the transport, whether they
    went back. Shared by the sync and asyncio helpers, which only differ in how they call."""

    def __init__(self, outcome: Union[Granted, Refused]):
        self.outcome = outcome
        self._submitted = False
        self._settled = not isinstance(outcome, Granted)
        #: the answer of the return this context made (None before, or when nothing was returned)
        self.returned: Optional[Union[Returned, Refused]] = None
        #: an error of the return call (the bytes then stay charged until the submitter terminates)
        self.error: Optional[errors.OrbitKVError] = None

    @property
    def granted(self) -> bool:
        return isinstance(self.outcome, Granted)

    def submitted(self) -> None:
        """The bytes were handed to the transport: from now on a failure leaves them charged (the transport may
        still send them) unless :meth:`done` reports the transport's end."""
        self._submitted = True

    def _exit_evidence(self, failed: bool) -> Optional[str]:
        if self._settled:
            return None
        if not failed:
            return TRANSPORT_PROGRESS
        return None if self._submitted else NEVER_SUBMITTED


class _SubmitterState:
    """Leases a submitter could not return: ``held`` (their transfer ended or never started: termination evidence
    covers them) and ``uncertain`` (handed to a transport whose end is unknown: only a lost mark is honest). Both
    are bounded by the Manager: each entry is one of its outstanding leases (``--admission-leases-max``)."""

    def __init__(self, instance: str, nic: str, direction: str):
        self.instance = check_instance(instance)
        check_lane(nic, direction)
        self.nic = nic
        self.direction = direction
        self.id: Optional[int] = None
        self.held: Dict[int, int] = {}
        self.uncertain: Dict[int, int] = {}

    def _registered(self, o: Outcome) -> int:
        if isinstance(o, Refused):
            raise AdmissionRefused(o)
        self.id = o.submitter
        return self.id

    def _after_exit(self, w: _WriteState, evidence: Optional[str], answer, error) -> None:
        g = w.outcome
        if not isinstance(g, Granted) or w._settled:
            return
        w._settled = True
        w.returned, w.error = answer, error
        if evidence is None:
            self.uncertain[g.lease] = g.bytes
        elif error is not None or isinstance(answer, Refused):
            self.held[g.lease] = g.bytes

    def _end_call(self) -> str:
        return "lost" if self.uncertain else "terminate"


class Write(_WriteState):
    """One WRITE's charge (sync). ``with sub.write(n, deadline_ms=...) as w``: ``w.outcome`` is :class:`Granted` or
    :class:`Refused` (do not send yet, or send outside the window knowingly). When the block ends normally the
    bytes go back with ``transport-progress``; on an exception before :meth:`submitted` with ``never-submitted``;
    on an exception after it they stay charged (the submitter then ends ``lost``)."""

    def __init__(self, sub: "Submitter", outcome):
        super().__init__(outcome)
        self._sub = sub

    def done(self) -> None:
        """The transport reported the bytes delivered or terminally failed: return them now."""
        self._sub._give_back(self, TRANSPORT_PROGRESS)

    def __enter__(self) -> "Write":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._sub._give_back(self, self._exit_evidence(exc_type is not None))


class Submitter(_SubmitterState):
    """An engine instance's registration (sync): ``with client.admission_submitter("vllm-0", nic="eth0",
    direction="tx") as sub``. Registers on enter (:class:`AdmissionRefused` if refused); on exit terminates
    (every byte back), or marks itself lost when a WRITE's bytes may still be in a transport
    (:attr:`uncertain`): they then stay charged until :meth:`terminate` once the transports are revoked."""

    def __init__(self, client, instance: str, nic: str, direction: str):
        super().__init__(instance, nic, direction)
        self._c = client

    def register(self) -> int:
        return self._registered(self._c.admission_register(self.instance))

    def write(self, nbytes: int, deadline_ms: int, remaining_bytes: Optional[int] = None, wait_ms: int = 0,
              nic: Optional[str] = None, direction: Optional[str] = None) -> Write:
        """Charges ``nbytes`` (at most ``--admission-lease-batch-bytes-max``) before a WRITE: a :class:`Write`."""
        if self.id is None:
            raise ValueError("the submitter is not registered (use it as a context manager or call register())")
        o = self._c.admission_charge(self.id, nic or self.nic, direction or self.direction, nbytes, deadline_ms,
                                     remaining_bytes, wait_ms)
        return Write(self, o)

    def _give_back(self, w: _WriteState, evidence: Optional[str]) -> None:
        if w._settled:
            return
        answer, error = None, None
        if evidence is not None:
            try:
                answer = self._c.admission_return(self.id, w.outcome.lease, w.outcome.bytes, evidence)
            except errors.OrbitKVError as e:
                error = e
        self._after_exit(w, evidence, answer, error)

    def terminate(self) -> Returned:
        """Termination evidence: this engine's transfers ended or were revoked; every byte goes back."""
        out = self._c.admission_terminate(self.id)
        self.held.clear()
        self.uncertain.clear()
        return out

    def lost(self) -> Returned:
        return self._c.admission_lost(self.id)

    def __enter__(self) -> "Submitter":
        self.register()
        return self

    def __exit__(self, *exc) -> None:
        if self.id is not None:
            self.lost() if self._end_call() == "lost" else self.terminate()


class AsyncWrite(_WriteState):
    """The asyncio twin of :class:`Write`: ``async with sub.write(n, deadline_ms=...) as w`` charges on enter
    (``w.outcome``), ``w.submitted()``, ``await w.done()``; the exit returns as :class:`Write`'s does."""

    def __init__(self, sub: "AsyncSubmitter", charge: tuple):
        super().__init__(Refused("", "not charged yet"))
        self._sub = sub
        self._charge = charge

    async def done(self) -> None:
        await self._sub._give_back(self, TRANSPORT_PROGRESS)

    async def __aenter__(self) -> "AsyncWrite":
        self.outcome = await self._sub._c.admission_charge(self._sub.id, *self._charge)
        self._settled = not isinstance(self.outcome, Granted)
        return self

    async def __aexit__(self, exc_type, exc, tb) -> None:
        await self._sub._give_back(self, self._exit_evidence(exc_type is not None))


class AsyncSubmitter(_SubmitterState):
    """The asyncio twin of :class:`Submitter` (``async with client.admission_submitter(...) as sub``; ``async with
    sub.write(...) as w``)."""

    def __init__(self, client, instance: str, nic: str, direction: str):
        super().__init__(instance, nic, direction)
        self._c = client

    async def register(self) -> int:
        return self._registered(await self._c.admission_register(self.instance))

    def write(self, nbytes: int, deadline_ms: int, remaining_bytes: Optional[int] = None, wait_ms: int = 0,
              nic: Optional[str] = None, direction: Optional[str] = None) -> AsyncWrite:
        """An :class:`AsyncWrite` that charges ``nbytes`` when entered (``async with``)."""
        if self.id is None:
            raise ValueError("the submitter is not registered (use it with async with or await register())")
        return AsyncWrite(self, (nic or self.nic, direction or self.direction, nbytes, deadline_ms, remaining_bytes,
                                 wait_ms))

    async def _give_back(self, w: _WriteState, evidence: Optional[str]) -> None:
        if w._settled:
            return
        answer, error = None, None
        if evidence is not None:
            try:
                answer = await self._c.admission_return(self.id, w.outcome.lease, w.outcome.bytes, evidence)
            except errors.OrbitKVError as e:
                error = e
        self._after_exit(w, evidence, answer, error)

    async def terminate(self) -> Returned:
        out = await self._c.admission_terminate(self.id)
        self.held.clear()
        self.uncertain.clear()
        return out

    async def lost(self) -> Returned:
        return await self._c.admission_lost(self.id)

    async def __aenter__(self) -> "AsyncSubmitter":
        await self.register()
        return self

    async def __aexit__(self, *exc) -> None:
        if self.id is not None:
            await (self.lost() if self._end_call() == "lost" else self.terminate())

