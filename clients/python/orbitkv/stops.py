"""Stop classes of docs/api.md (issue 35 G6): why a restored or queried prefix ended, and whether a client should
continue from the restored count (``retryable``) or end the prefix there (``miss``). Equal to docs/api.md's
``stop-classes`` table (tests/test_stops.py)."""

MISS = "miss"
RETRYABLE = "retryable"
COMPLETE = "complete"

STOP_CLASSES = {
    "complete": COMPLETE,
    "absent-at-watermarks": MISS,
    "not-in-partial-hints": MISS,
    "metadata-unavailable": MISS,
    "stale-hints-only": MISS,
    "no-qualified-path": MISS,
    "rejected-in-request": MISS,
    "target-unsupported": MISS,
    "payload-failure": MISS,
    "cancelled": MISS,
    "closed": MISS,
    "corrupt-dram": MISS,
    "corrupt-ssd": MISS,
    "replans-exhausted": RETRYABLE,
    "receive-credits": RETRYABLE,
    "deadline": RETRYABLE,
    "destination-capacity": RETRYABLE,
    "response-memory": RETRYABLE,
    "pins-exhausted": RETRYABLE,
}


def stop_class(stop: str) -> str:
    """The class of a stop name; an unknown (newer) stop is a miss: never retry what is not understood."""
    return STOP_CLASSES.get(stop, MISS)
