"""The engine admission API (issue 39 item 4; ROUTE-11): typed calls and the Submitter helper of orbitkv.admission.

Local rows (no Manager): bad arguments are refused before any connection is opened; the helper's exit returns the
right evidence (a fake client records the calls). Manager rows (few and short, two standalone Managers started in
parallel): a granted charge shows in /cache/metadata/status's admission lanes, a return brings the lane back to 0,
a full window refuses by name, the helper's three endings, the asyncio twin, 401, and 503 ADMISSION_DISABLED.
"""

import asyncio
import os
import socket
import urllib.request

import pytest

from conftest import TOKEN
from managers import Manager, work_dir
from orbitkv import AsyncClient, BadRequest, Client, ServerError, Unauthorized, Unavailable, admission as adm

MIB4 = 4 << 20


# ------------------------------------------------------------------------------------------------ local rows


@pytest.fixture()
def silent_port():
    """A listening socket nobody answers on: a call that sends anything connects to it first."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        s.setblocking(False)
        yield s


def _nothing_connected(s) -> bool:
    try:
        conn, _ = s.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


BAD_CHARGES = [
    ({"nbytes": 0}, "nbytes must be 1.."),
    ({"nbytes": -5}, "nbytes must be 1.."),
    ({"nbytes": True}, "nbytes must be an int"),
    ({"nbytes": 1.5}, "nbytes must be an int"),
    ({"deadline_ms": 0}, "deadline_ms must be 1..60000"),
    ({"deadline_ms": 60001}, "deadline_ms must be 1..60000"),
    ({"wait_ms": -1}, "wait_ms must be 0..60000"),
    ({"wait_ms": 60001}, "wait_ms must be 0..60000"),
    ({"wait_ms": 0.0}, "wait_ms must be an int"),
    ({"wait_ms": 4001}, "below the client's timeout_s"),
    ({"remaining_bytes": 99}, "remaining_bytes must be 100.."),
    ({"nic": ""}, "nic must be an interface name"),
    ({"nic": "eth0 "}, "nic must be an interface name"),
    ({"nic": "a" * 16}, "nic must be an interface name"),
    ({"direction": "up"}, "direction must be one of rx, tx"),
    ({"submitter": 0}, "submitter must be 1.."),
]


@pytest.mark.parametrize("bad,message", BAD_CHARGES, ids=[m + " " + repr(b) for b, m in BAD_CHARGES])
def test_bad_charge_is_refused_before_any_request(silent_port, bad, message):
    args = {"submitter": 1, "nic": "lo", "direction": "tx", "nbytes": 100, "deadline_ms": 1000,
            "remaining_bytes": None, "wait_ms": 0}
    args.update(bad)
    with Client("http://127.0.0.1:%d" % silent_port.getsockname()[1], "ns", timeout_s=5) as c:
        with pytest.raises(ValueError, match=message):
            c.admission_charge(**args)
    assert _nothing_connected(silent_port)


def test_other_bad_arguments_are_refused_before_any_request(silent_port):
    url = "http://127.0.0.1:%d" % silent_port.getsockname()[1]
    with Client(url, "ns", timeout_s=5) as c:
        for instance in ("", "a b", "x" * 129, "é", 7):
            with pytest.raises(ValueError, match="instance must be 1..128 printable ASCII"):
                c.admission_register(instance)
        with pytest.raises(ValueError, match="evidence must be one of never-submitted, transport-progress"):
            c.admission_return(1, 1, 10, "delivered")
        with pytest.raises(ValueError, match="lease must be 1.."):
            c.admission_return(1, 0, 10)
        with pytest.raises(ValueError, match="nbytes must be 1.."):
            c.admission_return(1, 1, 0)
        for call in (c.admission_terminate, c.admission_lost):
            with pytest.raises(ValueError, match="submitter must be 1.."):
                call(-1)
        with pytest.raises(ValueError, match="nic must be an interface name"):
            c.admission_submitter("vllm-0", nic="no such nic", direction="tx")
        with pytest.raises(ValueError, match="not registered"):
            c.admission_submitter("vllm-0", nic="lo", direction="tx").write(10, deadline_ms=100)

    async def run():
        async with AsyncClient(url, "ns", timeout_s=5) as a:
            with pytest.raises(ValueError, match="nbytes must be 1.."):
                await a.admission_charge(1, "lo", "tx", 0, 1000)
            with pytest.raises(ValueError, match="instance must be"):
                await a.admission_register("")

    asyncio.run(run())
    assert _nothing_connected(silent_port)


def test_an_unknown_answer_is_a_protocol_error():
    with pytest.raises(ServerError, match="not an admission answer"):
        adm._outcome({"outcome": "maybe"})
    assert adm._outcome({"outcome": "refused", "refusal": "paced", "detail": "d"}) == adm.Refused("paced", "d")
    assert adm._outcome({"outcome": "returned", "lease": 0, "bytes": 5, "outstanding": 0}) == adm.Returned(0, 5, 0)


class FakeClient:
    """Records the helper's calls; grants every charge, returns what it is asked to (or fails when told)."""

    def __init__(self, fail_returns=False):
        self.calls = []
        self.leases = 0
        self.fail_returns = fail_returns

    def admission_register(self, instance):
        self.calls.append(("register", instance))
        return adm.Registered(7)

    def admission_charge(self, submitter, nic, direction, nbytes, deadline_ms, remaining_bytes, wait_ms):
        self.calls.append(("charge", nic, direction, nbytes))
        if nbytes > 1000:
            return adm.Refused(adm.WINDOW_FULL, "full")
        self.leases += 1
        return adm.Granted(self.leases, nbytes, nic + "/" + direction, 30000)

    def admission_return(self, submitter, lease, nbytes, evidence):
        self.calls.append(("return", lease, nbytes, evidence))
        if self.fail_returns:
            raise Unavailable(503, "SHUTTING_DOWN", "going")
        return adm.Returned(lease, nbytes, 0)

    def admission_terminate(self, submitter):
        self.calls.append(("terminate", submitter))
        return adm.Returned(0, 0, 0)

    def admission_lost(self, submitter):
        self.calls.append(("lost", submitter))
        return adm.Returned(0, 0, 0)


class Boom(Exception):
    pass


def test_helper_returns_with_the_evidence_each_ending_has():
    c = FakeClient()
    with adm.Submitter(c, "vllm-0", "eth0", "tx") as sub:
        with sub.write(100, deadline_ms=1000) as w:  # the transfer completed inside the block
            assert w.granted and w.outcome.lane == "eth0/tx"
        with pytest.raises(Boom):
            with sub.write(200, deadline_ms=1000):  # failed before the bytes reached the transport
                raise Boom()
        with sub.write(300, deadline_ms=1000) as w:  # the transport reported its end early
            w.submitted()
            w.done()
        with sub.write(5000, deadline_ms=1000) as w:  # refused: nothing to return
            assert not w.granted and w.outcome.refusal == adm.WINDOW_FULL
    assert c.calls == [("register", "vllm-0"),
                       ("charge", "eth0", "tx", 100), ("return", 1, 100, adm.TRANSPORT_PROGRESS),
                       ("charge", "eth0", "tx", 200), ("return", 2, 200, adm.NEVER_SUBMITTED),
                       ("charge", "eth0", "tx", 300), ("return", 3, 300, adm.TRANSPORT_PROGRESS),
                       ("charge", "eth0", "tx", 5000), ("terminate", 7)]


def test_helper_keeps_uncertain_bytes_charged_and_ends_lost():
    c = FakeClient()
    with pytest.raises(Boom):
        with adm.Submitter(c, "vllm-0", "eth0", "rx") as sub:
            with sub.write(100, deadline_ms=1000) as w:
                w.submitted()
                raise Boom()  # the transport may still move these bytes: no return, and the exit is lost
    assert ("return", 1, 100, adm.TRANSPORT_PROGRESS) not in c.calls
    assert sub.uncertain == {1: 100}
    assert c.calls[-1] == ("lost", 7) and ("terminate", 7) not in c.calls


def test_helper_survives_a_failed_return_and_terminates():
    c = FakeClient(fail_returns=True)
    with adm.Submitter(c, "vllm-0", "eth0", "tx") as sub:
        with sub.write(100, deadline_ms=1000) as w:
            pass
        assert isinstance(w.error, Unavailable) and sub.held == {1: 100}
    assert c.calls[-1] == ("terminate", 7)


def test_async_helper_has_the_same_endings():
    c = FakeClient()

    class AsyncFake:
        def __getattr__(self, name):
            async def call(*args):
                return getattr(c, name)(*args)
            return call

    async def run():
        async with adm.AsyncSubmitter(AsyncFake(), "vllm-0", "eth0", "tx") as sub:
            async with sub.write(100, deadline_ms=1000) as w:
                assert w.granted
            with pytest.raises(Boom):
                async with sub.write(200, deadline_ms=1000):
                    raise Boom()
            with pytest.raises(Boom):
                async with sub.write(300, deadline_ms=1000) as w:
                    w.submitted()
                    raise Boom()
        return sub

    sub = asyncio.run(run())
    assert sub.uncertain == {3: 300}
    assert [x for x in c.calls if x[0] in ("return", "terminate", "lost")] == [
        ("return", 1, 100, adm.TRANSPORT_PROGRESS), ("return", 2, 200, adm.NEVER_SUBMITTED), ("lost", 7)]


def test_registration_refused_raises_typed():
    class Full(FakeClient):
        def admission_register(self, instance):
            return adm.Refused(adm.SUBMITTERS_FULL, "256 submitters")

    with pytest.raises(adm.AdmissionRefused) as e:
        with adm.Submitter(Full(), "vllm-0", "lo", "tx"):
            pass
    assert e.value.outcome.refusal == adm.SUBMITTERS_FULL


# ------------------------------------------------------------------------------------------------ Manager rows


@pytest.fixture(scope="module")
def window():
    """``on``: a small window (8 MiB per lane, no reserve, 4 MiB leases) behind the write token; ``off``:
    ``--admission-disabled``. Started in parallel."""
    token_file = os.path.join(work_dir(), "admission-token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    on = Manager("admission-on", ["--block-bytes-max", "1MiB", "--dram", "16MiB", "--http-token-file", token_file,
                                  "--admission-nics", "lo", "--admission-window-bytes-max", "8MiB",
                                  "--admission-reserve-percent", "0",
                                  "--admission-lease-batch-bytes-max", "4MiB"]).launch()
    off = Manager("admission-off", ["--block-bytes-max", "1MiB", "--dram", "16MiB", "--admission-disabled"]).launch()
    try:
        on.await_ready()
        off.await_ready()
        yield {"on": on, "off": off}
    finally:
        on.kill()
        off.kill()


@pytest.fixture()
def client(window):
    with Client(window["on"].url, "pytest/admission", token=TOKEN, timeout_s=30) as c:
        yield c


def metrics(client) -> str:
    """``GET /metrics`` (open, docs/api.md)."""
    with urllib.request.urlopen(client_url(client) + "/metrics", timeout=30) as r:
        return r.read().decode("utf-8")


def client_url(client) -> str:
    return "http://" + client._authority


def lane(status, nic="lo", direction="tx"):
    for row in status["lanes"]:
        if row["nic"] == nic and row["direction"] == direction:
            return row
    raise AssertionError(f"no {nic}/{direction} lane in {status}")


def test_granted_charge_shows_in_status_and_its_return_brings_the_lane_back(client):
    s = client.admission_register("vllm-status").submitter
    g = client.admission_charge(s, "lo", "tx", MIB4, deadline_ms=30000)
    assert isinstance(g, adm.Granted) and g.bytes == MIB4 and g.lane == "lo/tx" and g.expires_in_ms > 0
    st = client.admission_status()
    assert lane(st)["charged_bytes"] == MIB4
    assert st["charged_bytes_by_kind"]["engine-write"] == MIB4
    assert 'orbitkv_admission_charged_by_kind_bytes{kind="engine-write"} 4194304' in metrics(client)
    assert client.admission_return(s, g.lease, MIB4) == adm.Returned(g.lease, MIB4, 0)
    assert lane(client.admission_status())["charged_bytes"] == 0
    assert client.admission_terminate(s) == adm.Returned(0, 0, 0)


def test_full_window_is_refused_by_name_and_bad_input_changes_nothing(client):
    s = client.admission_register("vllm-full").submitter
    leases = [client.admission_charge(s, "lo", "tx", MIB4, deadline_ms=30000) for _ in range(2)]
    assert all(isinstance(g, adm.Granted) for g in leases)
    refused = client.admission_charge(s, "lo", "tx", 1, deadline_ms=30000)
    assert isinstance(refused, adm.Refused) and refused.refusal == adm.WINDOW_FULL and refused.detail
    with pytest.raises(BadRequest) as e:  # above one lease batch: the Manager's bound, a 400
        client.admission_charge(s, "lo", "tx", MIB4 + 1, deadline_ms=30000)
    assert e.value.code == "INVALID_FIELD_VALUE"
    with pytest.raises(BadRequest):
        client.admission_return(s, 999999, 1)
    with pytest.raises(BadRequest):
        client.admission_charge(s, "eth9", "tx", 1, deadline_ms=30000)  # a NIC the window does not have
    assert lane(client.admission_status())["charged_bytes"] == 2 * MIB4
    assert client.admission_terminate(s).bytes == 2 * MIB4
    assert lane(client.admission_status())["charged_bytes"] == 0


def test_helper_endings_against_the_manager(client):
    with client.admission_submitter("vllm-helper", nic="lo", direction="tx") as sub:
        with sub.write(MIB4, deadline_ms=30000) as w:
            assert w.granted
            assert lane(client.admission_status())["charged_bytes"] == MIB4  # charged while the WRITE runs
        assert w.returned == adm.Returned(w.outcome.lease, MIB4, 0)
        assert lane(client.admission_status())["charged_bytes"] == 0
        with pytest.raises(Boom):
            with sub.write(MIB4, deadline_ms=30000) as w:
                w.submitted()
                raise Boom()
    st = client.admission_status()
    assert lane(st)["charged_bytes"] == MIB4 and lane(st)["quarantined_bytes"] == MIB4  # lost: stays charged
    assert client.admission_terminate(sub.id).bytes == MIB4  # the supervisor's termination evidence
    assert lane(client.admission_status())["charged_bytes"] == 0


def test_asyncio_twin_queues_and_returns(window):
    async def run():
        async with AsyncClient(window["on"].url, "pytest/admission", token=TOKEN, timeout_s=30) as a:
            async with a.admission_submitter("vllm-async", nic="lo", direction="rx") as sub:
                async with sub.write(MIB4, deadline_ms=30000) as w1, sub.write(MIB4, deadline_ms=30000) as w2:
                    assert w1.granted and w2.granted
                    waiting = asyncio.ensure_future(a.admission_charge(sub.id, "lo", "rx", MIB4, 30000, wait_ms=20000))
                    for _ in range(600):  # the charge is queued behind the full window (bounded wait, 60 s)
                        if lane(await a.admission_status(), direction="rx")["pending"] == 1:
                            break
                        await asyncio.sleep(0.1)
                    await w1.done()  # transport progress frees the bytes the queued charge waits for
                    queued = await waiting
                    assert isinstance(queued, adm.Granted)
                    await a.admission_return(sub.id, queued.lease, MIB4)
            return lane(await a.admission_status(), direction="rx")["charged_bytes"]

    assert asyncio.run(run()) == 0


def test_missing_token_is_unauthorized(window):
    with Client(window["on"].url, "pytest/admission", timeout_s=30) as c:
        with pytest.raises(Unauthorized):
            c.admission_register("vllm-token")


def test_disabled_manager_answers_the_typed_admission_disabled(window):
    with Client(window["off"].url, "pytest/admission", timeout_s=30) as c:
        with pytest.raises(Unavailable) as e:
            c.admission_register("vllm-off")
        assert e.value.status == 503 and e.value.code == adm.ADMISSION_DISABLED
        with pytest.raises(Unavailable):
            c.admission_charge(1, "lo", "tx", 1, deadline_ms=1000)
        assert c.admission_status() is None


def test_the_documented_example_runs_as_written(client, window):
    """docs/engines.md "From Python": the example, with the test Manager's URL and token, NIC lo and a stub
    transport."""
    import re
    from _paths import repo
    with open(repo("docs", "engines.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^### From Python\n.*?```python\n(.*?)```", text, re.S | re.M)
    assert m, "docs/engines.md has the admission example in a python code block"
    sent = []

    class Transport:
        def send(self, data):
            sent.append(lane(client.admission_status())["charged_bytes"])  # charged while on the wire

    code = m.group(1).replace('nic="eth0"', 'nic="lo"')
    ns = {"url": window["on"].url, "namespace": "pytest/admission", "token": TOKEN, "kv": bytes(MIB4),
          "transport": Transport()}
    exec(compile(code, "docs/engines.md", "exec"), ns)
    assert sent == [MIB4]
    assert lane(client.admission_status())["charged_bytes"] == 0
