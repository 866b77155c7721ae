"""Typed errors of the OrbitKV client.

Every HTTP error answer of the Manager is ``{"error": {"code": "UPPER_SNAKE", "message": str}}`` (docs/api.md); the
client raises the class of its status with that code and message. Failures below HTTP are ``ConnectionFailed``
(status 0) and ``Timeout`` (status 0, or 408 when the Manager answered it).
"""

from __future__ import annotations

from typing import Optional


class OrbitKVError(Exception):
    """Base class: ``status`` (HTTP status, 0 below HTTP), ``code`` (the Manager's error code), ``message``."""

    def __init__(self, status: int, code: str, message: str, partial: Optional[list] = None):
        super().__init__(f"{status} {code}: {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        #: For batch reads cut by a failure: the per-key results up to the cut (a record counts only when it was
        #: read whole; the cut one and every later one is -1). None for other calls.
        self.partial = partial


class BadRequest(OrbitKVError):
    """400, 404, 405, 409, 415: the request is wrong (a bug of the caller or a version mismatch)."""


class Unauthorized(OrbitKVError):
    """401: the Manager needs the bearer token (``--http-token-file``) and it is missing or wrong."""


class TooLarge(OrbitKVError):
    """413: a body, record count, key count or payload exceeds the Manager's limits."""


class Overloaded(OrbitKVError):
    """429: a concurrency bound of the Manager is reached; ``retry_after`` seconds (from ``Retry-After``)."""

    def __init__(self, status: int, code: str, message: str, retry_after: float = 1.0, partial=None):
        super().__init__(status, code, message, partial)
        self.retry_after = retry_after


class Unavailable(OrbitKVError):
    """503: the Manager cannot serve now (shutting down, fenced, tier full, metadata unavailable)."""


class ServerError(OrbitKVError):
    """500 and other unexpected answers (including a response that breaks the protocol)."""


class ConnectionFailed(OrbitKVError):
    """No connection, or the connection broke before the answer was complete (status 0)."""

    def __init__(self, message: str, partial=None):
        super().__init__(0, "CONNECTION_FAILED", message, partial)


class Timeout(OrbitKVError):
    """The call's ``timeout_s`` passed (status 0), or the Manager answered 408."""

    def __init__(self, message: str, status: int = 0, code: str = "TIMEOUT", partial=None):
        super().__init__(status, code, message, partial)


def from_status(status: int, code: str, message: str, retry_after: Optional[str] = None) -> OrbitKVError:
    """The typed error of an HTTP error answer."""
    if status == 401:
        return Unauthorized(status, code, message)
    if status == 408:
        return Timeout(message, status, code)
    if status == 413:
        return TooLarge(status, code, message)
    if status == 429:
        try:
            after = float(retry_after) if retry_after is not None else 1.0
        except ValueError:
            after = 1.0
        return Overloaded(status, code, message, after)
    if status == 503:
        return Unavailable(status, code, message)
    if 400 <= status < 500:
        return BadRequest(status, code, message)
    return ServerError(status, code, message)
