"""Typed errors: status and code map to one class each (no Manager needed)."""

import pytest

from orbitkv import errors

ROWS = [
    (400, "INVALID_KEY", errors.BadRequest),
    (404, "UNKNOWN_PATH", errors.BadRequest),
    (405, "METHOD_NOT_ALLOWED", errors.BadRequest),
    (409, "CLUSTER_MISMATCH", errors.BadRequest),
    (415, "UNSUPPORTED_CONTENT_TYPE", errors.BadRequest),
    (401, "UNAUTHORIZED", errors.Unauthorized),
    (408, "AWAIT_TIMEOUT", errors.Timeout),
    (413, "PAYLOAD_TOO_LARGE", errors.TooLarge),
    (429, "TOO_MANY_REQUESTS_IN_FLIGHT", errors.Overloaded),
    (500, "INTERNAL", errors.ServerError),
    (503, "SHUTTING_DOWN", errors.Unavailable),
]


@pytest.mark.parametrize("status,code,cls", ROWS, ids=[r[1] for r in ROWS])
def test_status_maps_to_its_class(status, code, cls):
    e = errors.from_status(status, code, "m", "2")
    assert type(e) is cls
    assert isinstance(e, errors.OrbitKVError)
    assert (e.status, e.code, e.message) == (status, code, "m")


def test_overloaded_carries_retry_after():
    assert errors.from_status(429, "X", "m", "3").retry_after == 3.0
    assert errors.from_status(429, "X", "m", None).retry_after == 1.0


def test_below_http():
    assert errors.ConnectionFailed("x").status == 0
    assert errors.ConnectionFailed("x").code == "CONNECTION_FAILED"
    assert errors.Timeout("x").code == "TIMEOUT"
