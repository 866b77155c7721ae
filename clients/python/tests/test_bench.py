"""The smoke of ``scripts/bench engine`` (issue 35 item 8) in the default run, so the benchmark cannot rot: tiny
sizes and one round against the gate's two distributed Managers (every arm byte-checked, every peer read served by
the peer over the named backend), and the verdict logic on injected figures (a FAIL must fail ``--strict``)."""

import json
import os
import xml.etree.ElementTree as ET

import pytest

from bench import CASES, engine
from bench import harness as h
from bench.__main__ import main
from bench.raw import RawClient, RawServer
from managers import figure


def _passing_figures():
    figs = {g.figure: (g.threshold * 2 if g.op == ">=" else g.threshold / 2) for g in engine.GOALS}
    return figs


def test_verdict_file_lines_for_scripts_bench_qualify():
    figs = _passing_figures()
    figs.pop("query 16 p50 ms")
    lines = h.verdict_tsv("python3 -m bench (engine)", h.verdicts(engine.GOALS, figs))
    assert len(lines) == len([g for g in engine.GOALS if g.binding])  # reference goals are judged by their own harness
    fields = [line.split("\t") for line in lines]
    assert all(len(f) == 7 for f in fields)
    by_goal = {f[1]: f for f in fields}
    assert by_goal["prefix query of 16 keys p50"][5] == "COLLECTION FAILED"
    assert by_goal["prefix query of 128 keys p50"][2:6] == ["≤ 1 ms", "0.500 ms", "", "PASS"]


def test_verdicts_pass_fail_and_not_measured_on_injected_figures():
    figs = _passing_figures()
    rows = h.verdicts(engine.GOALS, figs)
    assert [r["verdict"] for r in rows] == [h.PASS] * len(engine.GOALS)
    assert h.exit_code(rows, strict=True) == 0
    # one binding goal just below (>=) or above (<=) its threshold fails, and only --strict turns that into exit 1
    for goal in [g for g in engine.GOALS if g.binding]:
        bad = dict(figs)
        bad[goal.figure] = goal.threshold * (0.99 if goal.op == ">=" else 1.01)
        rows = h.verdicts(engine.GOALS, bad)
        failed = [r["goal"] for r in rows if r["verdict"] == h.FAIL]
        assert failed == [goal.name]
        assert h.exit_code(rows, strict=True) == 1
        assert h.exit_code(rows, strict=False) == 0
        assert any(line.startswith("FAIL") and goal.name in line for line in h.verdict_lines(rows))
    # exactly at the threshold passes
    at = {g.figure: g.threshold for g in engine.GOALS}
    assert all(r["verdict"] == h.PASS for r in h.verdicts(engine.GOALS, at))
    # a binding goal without a figure is NOT MEASURED, which --strict does not accept; a reference goal's FAIL it does
    rows = h.verdicts(engine.GOALS, {k: v for k, v in figs.items() if k != "query 16 p50 ms"})
    assert [r["verdict"] for r in rows if r["figure"] == "query 16 p50 ms"] == [h.NOT_MEASURED]
    assert h.exit_code(rows, strict=True) == 1
    ref = [g for g in engine.GOALS if not g.binding][0]
    rows = h.verdicts(engine.GOALS, {**figs, ref.figure: 0.0})
    assert [r["verdict"] for r in rows if r["goal"] == ref.name] == [h.FAIL]
    assert h.exit_code(rows, strict=True) == 0


def test_figures_are_raw_over_arm_medians():
    s = [{"case": "c", "arm": "raw", "p50_ms": 2.0, "p99_ms": 3.0, "bytes_per_call": 100, "gb_per_s": 1.0},
         {"case": "c", "arm": "local", "p50_ms": 4.0, "p99_ms": 5.0, "bytes_per_call": 100, "gb_per_s": 0.5},
         {"case": "c", "arm": "raw_put", "p50_ms": 1.0, "p99_ms": 1.0, "bytes_per_call": 100, "gb_per_s": 1.0},
         {"case": "c", "arm": "put", "p50_ms": 4.0, "p99_ms": 4.0, "bytes_per_call": 100, "gb_per_s": 0.25},
         {"case": "query 16", "arm": "local", "p50_ms": 0.7, "p99_ms": 0.9, "bytes_per_call": 0, "gb_per_s": 0.0}]
    f = engine.figures_of(s)
    assert f["ratio local/raw c"] == 0.5 and f["ratio put/raw c"] == 0.25
    assert f["query 16 p50 ms"] == 0.7 and f["query 16 p99 ms"] == 0.9
    assert [r["verdict"] for r in h.verdicts(engine.GOALS, f) if r["figure"] == "query 16 p50 ms"] == [h.FAIL]


def test_streamed_first_byte_margin_is_first_byte_minus_one_record():
    """Goal G7's figure: the streamed call's first record arrives within one record's time (the non-streamed
    8 x 32 MiB call's eighth) + 5 ms; no figure where the build offers no streamed restore."""
    s = [{"case": "8 x 32 MiB", "arm": "local", "p50_ms": 80.0, "p99_ms": 90.0, "bytes_per_call": 8 << 25,
          "gb_per_s": 3.3},
         {"case": "8 x 32 MiB", "arm": "stream_first_byte", "p50_ms": 16.0, "p99_ms": 20.0, "bytes_per_call": 0,
          "gb_per_s": 0.0}]
    f = engine.figures_of(s, streamed=True)
    assert f["streamed first byte margin ms"] == 6.0
    assert [r["verdict"] for r in h.verdicts(engine.GOALS, f) if r["figure"] == "streamed first byte margin ms"] \
        == [h.FAIL]
    assert "streamed first byte margin ms" not in engine.figures_of(s, streamed=False)


def test_quantiles_interpolate():
    assert h.quantile([3, 1, 2], 0.5) == 2
    assert h.quantile([1, 2], 0.5) == 1.5
    assert h.quantile(list(range(101)), 0.99) == 99


def test_abba_order_and_checks_outside_the_timing():
    calls = []
    arms = [h.Arm(n, lambda n=n: calls.append(n) or n, lambda r: None) for n in ("a", "b")]
    out = h.run_abba("c", arms, 1, rounds=4, calls_per_round=1, warmup_calls=0)
    assert "".join(calls) == "abbaabba"
    assert [len(s.samples) for s in out.values()] == [4, 4]

    def wrong(_):
        raise AssertionError("bytes differ")
    with pytest.raises(AssertionError, match="bytes differ"):
        h.run_abba("c", [h.Arm("x", lambda: 1, wrong)], 1, 1, 1, 0)


def test_raw_arm_moves_bytes_into_preallocated_buffers():
    with RawServer() as server:
        c = RawClient(server.port)
        try:
            blocks = [engine.payload(1, i, n) for i, n in enumerate([1, 70000, 1 << 20])]
            c.put_batch(["a", "b", "c"], blocks)
            bufs = [bytearray(len(b)) for b in blocks]
            assert c.batch_get_into(["a", "b", "c"], bufs) == [len(b) for b in blocks]
            assert bufs == blocks
            assert c.echo(b"x" * 4600, 200) == 200
        finally:
            c.close()


def test_the_case_registry_names_importable_modules():
    import importlib
    for name, module in CASES.items():
        m = importlib.import_module("bench." + module)
        assert callable(m.make), name


@pytest.fixture(scope="module")
def peers():
    urls = os.environ.get("ORBITKV_PEER_URLS", "")
    if urls.count(",") != 1:
        raise RuntimeError("ORBITKV_PEER_URLS (two distributed Managers) is not set: run through PythonClientGateTest")
    return urls


def test_engine_smoke_against_real_managers(peers, tmp_path, capsys):
    code = main(["--urls", peers, "--smoke", "--run-id", "smoke", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out  # without --strict only a collection failure (an exception) would fail
    record = json.loads((tmp_path / "engine.json").read_text())
    arms = {(s["case"], s["arm"]) for s in record["summaries"]}
    for label, _, _ in engine.SMOKE_CASES:
        for arm in engine.READ_ARMS + engine.PUT_ARMS:
            assert (label, arm) in arms
    assert {("get 64 KiB", "local"), ("query 16", "local"), ("query 128", "local"), ("query 128", "raw")} <= arms
    last = engine.SMOKE_CASES[-1][0]  # the streamed restore runs on the largest case (G7)
    assert {(last, "local_stream"), (last, "stream_first_byte")} <= arms
    assert all(s["calls"] >= 1 and s["p50_ms"] > 0 for s in record["summaries"])
    assert len(record["checks"]) == 2 * len(engine.SMOKE_CASES)  # peer reads counted per backend and case
    assert [r["goal"] for r in record["verdicts"]] == [g.name for g in engine.GOALS]
    assert record["load_average_start"] and record["load_average_end"]
    for g in engine.GOALS:
        assert g.name in out
    ET.parse(str(tmp_path / "engine.svg"))  # well-formed SVG
    md = (tmp_path / "engine.md").read_text()
    assert "| verdict | goal |" in md and all(g.name in md for g in engine.GOALS)
    figure("bench engine smoke: " + "; ".join(f"{r['verdict']} {r['goal']}" for r in record["verdicts"][:3]))


class _InjectedCase:
    """A case whose record carries injected figures: the CLI's verdict and exit-code plumbing without Managers."""

    def __init__(self, figures):
        self.figures = figures

    def run(self):
        return {"summaries": [], "figures": self.figures, "checks": {}, "labels": [],
                "verdicts": h.verdicts(engine.GOALS, self.figures)}


@pytest.mark.parametrize("strict,spoil,want", [(False, None, 0), (True, None, 0), (False, "query 16 p50 ms", 0),
                                               (True, "query 16 p50 ms", 1), (True, "GB/s local 8 x 32 MiB", 1)])
def test_the_cli_exits_1_on_a_fail_only_with_strict(monkeypatch, tmp_path, capsys, strict, spoil, want):
    figs = _passing_figures()
    if spoil:
        g = next(g for g in engine.GOALS if g.figure == spoil)
        figs[spoil] = g.threshold * (0.5 if g.op == ">=" else 2)
    monkeypatch.setattr(engine, "make", lambda urls, smoke, run_id, log: _InjectedCase(figs))
    args = ["--urls", "http://127.0.0.1:1", "--out", str(tmp_path)] + (["--strict"] if strict else [])
    assert main(args) == want
    out = capsys.readouterr().out
    assert ("FAIL" in out) == (spoil is not None)
    assert json.loads((tmp_path / "engine.json").read_text())["figures"] == figs


def test_backends_smoke_against_real_managers(peers, tmp_path, capsys):
    """scripts/bench engine's second case (issue 36 item 6): the LMCache and SGLang backends against the raw client,
    every row present with both arms, every frozen goal of issue 36 printed with a verdict."""
    from bench import backends_case
    code = main(["--case", "backends", "--urls", peers, "--smoke", "--run-id", "smoke-b", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    record = json.loads((tmp_path / "backends.json").read_text())
    arms = {(s["case"], s["arm"]) for s in record["summaries"]}
    for row in ("batched_put_8", "get_non_blocking_8", "contains_128", "batch_get_v1_128"):
        assert {(row, "backend"), (row, "client")} <= arms
    assert [r["goal"] for r in record["verdicts"]] == [g.name for g in backends_case.GOALS]
    assert all(g.name in out for g in backends_case.GOALS)


def test_backend_overhead_figures():
    from bench import backends_case
    s = [{"case": "batched_put_8", "arm": "backend", "p50_ms": 110.0}, {"case": "batched_put_8", "arm": "client",
                                                                        "p50_ms": 100.0},
         {"case": "contains_128", "arm": "backend", "p50_ms": 1.6}, {"case": "contains_128", "arm": "client",
                                                                     "p50_ms": 1.3}]
    f = backends_case.figures_of(s)
    assert abs(f["overhead batched_put_8"] - 1.1) < 1e-9 and abs(f["overhead ms contains_128"] - 0.3) < 1e-9
    rows = h.verdicts(backends_case.GOALS, f)
    assert {r["figure"]: r["verdict"] for r in rows}["overhead batched_put_8"] == h.FAIL
    assert {r["figure"]: r["verdict"] for r in rows}["contains_128 p50 ms"] == h.FAIL
