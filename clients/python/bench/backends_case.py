"""``python3 -m bench --case backends``: issue 36's engine-unit benchmark (bench/backends.py) as a case of the bench
runner, so ``scripts/bench engine`` runs it beside the client's own case against the same Manager. Each row times an
engine backend call (LMCache connector, SGLang storage) against the client's raw call moving the same bytes, ABBA,
every byte checked outside the timing; the frozen goals of issue 36 get their verdicts."""

from __future__ import annotations

import os
import sys
from typing import Dict, List, Sequence

from . import harness as h

HERE = os.path.dirname(os.path.abspath(__file__))
for d in (os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests")):
    if d not in sys.path:
        sys.path.insert(0, d)

from . import backends as rows_of  # noqa: E402  (imports the tests' stand-ins as the engines)

MIB = 1 << 20
GOALS = [
    h.Goal("LMCache batched_put 8 x 32 MiB: backend over the raw client", "overhead batched_put_8", "<=", 1.05, "x"),
    h.Goal("LMCache batched_get_non_blocking 8 x 32 MiB: backend over the raw client", "overhead get_non_blocking_8",
           "<=", 1.05, "x"),
    h.Goal("LMCache batched_async_contains 128 keys: backend minus raw client, per call", "overhead ms contains_128",
           "<=", 0.2, "ms"),
    h.Goal("LMCache batched_async_contains 128 keys, end to end p50", "contains_128 p50 ms", "<=", 1.5, "ms"),
]


class BackendsCase:
    name = "backends"

    def __init__(self, url: str, smoke: bool, log):
        self.url, self.smoke, self.log = url, smoke, log

    def run(self) -> dict:
        rounds, chunk = (1, MIB) if self.smoke else (12, 32 * MIB)
        self.log(f"backends: LMCache rows (8 x {chunk // MIB} MiB, 128-key contains), SGLang 128 pages; {rounds} rounds")
        rows = {**rows_of.lmcache_rows(self.url, rounds, chunk), **rows_of.sglang_rows(self.url, rounds)}
        sizes = {"batched_put_8": 8 * chunk, "get_non_blocking_8": 8 * chunk, "contains_128": 0,
                 "contains_128_loop": 0, "batch_get_v1_128": 0}
        series: List[h.Series] = []
        for name, (backend, raw) in rows.items():
            series.append(h.Series(name, "backend", sizes.get(name, 0), list(backend)))
            series.append(h.Series(name, "client", sizes.get(name, 0), list(raw)))
        summaries = [s.summary() for s in series]
        figures = figures_of(summaries)
        return {"case": self.name, "summaries": summaries, "figures": figures, "checks": {},
                "verdicts": h.verdicts(GOALS, figures), "labels": list(rows)}


def figures_of(summaries: Sequence[dict]) -> Dict[str, float]:
    """Per row: backend ÷ client medians (1.0 = no overhead) and their difference in ms; the contains p50."""
    by = {(s["case"], s["arm"]): s for s in summaries}
    fig: Dict[str, float] = {}
    for (case, arm), s in by.items():
        c = by.get((case, "client"))
        if arm == "backend" and c is not None and c["p50_ms"] > 0:
            fig[f"overhead {case}"] = s["p50_ms"] / c["p50_ms"]
            fig[f"overhead ms {case}"] = s["p50_ms"] - c["p50_ms"]
    if ("contains_128", "backend") in by:
        fig["contains_128 p50 ms"] = by[("contains_128", "backend")]["p50_ms"]
    return fig


def make(urls: Sequence[str], smoke: bool, run_id: str, log=print) -> BackendsCase:
    """The registry's factory (bench/__init__.py): the first Manager holds the blocks."""
    _ = run_id
    return BackendsCase(urls[0], smoke, log)
