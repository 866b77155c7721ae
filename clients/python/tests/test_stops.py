"""The client's stop classes equal docs/api.md's stop-classes table (StopClassesDocTest checks the table against the
Manager's stops)."""

from _paths import repo
from orbitkv import STOP_CLASSES, stop_class


def _table():
    text = open(repo("docs", "api.md"), encoding="utf-8").read()
    block = text.split("<!-- stop-classes:begin -->")[1].split("<!-- stop-classes:end -->")[0]
    out = {}
    for line in block.splitlines()[3:]:
        if line.startswith("|"):
            stop, cls = [c.strip() for c in line.strip("|").split("|")]
            out[stop.strip("`")] = cls
    return out


def test_client_table_equals_docs():
    assert STOP_CLASSES == _table()


def test_unknown_stop_is_a_miss():
    assert stop_class("a-stop-from-the-future") == "miss"
    assert stop_class("response-memory") == "retryable"
