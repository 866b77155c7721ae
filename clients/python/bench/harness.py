"""What every benchmark case shares: ABBA scheduling of arms, timing outside the byte checks, order statistics,
frozen goals with PASS/FAIL verdicts, the load average, the JSON run record and an SVG plot (standard library)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence


def load_average() -> List[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def quantile(samples: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (samples need not be sorted)."""
    s = sorted(samples)
    if not s:
        raise ValueError("no samples")
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


@dataclass
class Series:
    """The timed samples (seconds) of one arm of one case, and what they moved."""
    case: str
    arm: str
    bytes_per_call: int
    samples: List[float] = field(default_factory=list)

    def summary(self) -> dict:
        p50 = quantile(self.samples, 0.5)
        return {"case": self.case, "arm": self.arm, "calls": len(self.samples), "bytes_per_call": self.bytes_per_call,
                "p10_ms": quantile(self.samples, 0.1) * 1e3, "p50_ms": p50 * 1e3,
                "p90_ms": quantile(self.samples, 0.9) * 1e3, "p99_ms": quantile(self.samples, 0.99) * 1e3,
                "gb_per_s": self.bytes_per_call / p50 / 1e9 if p50 > 0 else 0.0}


@dataclass
class Arm:
    """One way of doing a case's work: ``call()`` is timed; ``check()`` and ``reset()`` run outside the timing
    (``check`` raises AssertionError when a byte is wrong; ``reset`` prepares the next call, e.g. zeroes buffers)."""
    name: str
    call: Callable[[], object]
    check: Callable[[object], None]
    reset: Callable[[], None] = lambda: None


def run_abba(case: str, arms: Sequence[Arm], bytes_per_call: int, rounds: int, calls_per_round: int,
             warmup_calls: int) -> Dict[str, Series]:
    """Warms every arm up by count, then runs ``rounds`` rounds, the arm order reversed every other round (ABBA for
    two arms: A B B A A B ...), ``calls_per_round`` timed calls per arm per round, each checked byte for byte."""
    for arm in arms:
        for _ in range(warmup_calls):
            arm.reset()
            arm.check(arm.call())
    out = {a.name: Series(case, a.name, bytes_per_call) for a in arms}
    clock = time.perf_counter
    for r in range(rounds):
        order = list(arms) if r % 2 == 0 else list(reversed(arms))
        for arm in order:
            series = out[arm.name]
            for _ in range(calls_per_round):
                arm.reset()
                t = clock()
                res = arm.call()
                elapsed = clock() - t
                arm.check(res)
                series.samples.append(elapsed)
    return out


# ---------------------------------------------------------------------------------------------------- goals

PASS, FAIL, NOT_MEASURED = "PASS", "FAIL", "NOT MEASURED"


@dataclass(frozen=True)
class Goal:
    """A frozen goal: ``figure`` (a key of the run's figures) compared with ``threshold`` by ``op`` (">=" or "<=").
    ``binding`` goals decide ``--strict``; the others are printed for reference (another issue's goal)."""
    name: str
    figure: str
    op: str
    threshold: float
    unit: str
    binding: bool = True
    why_absent: str = ""


def verdicts(goals: Sequence[Goal], figures: Dict[str, float]) -> List[dict]:
    rows = []
    for g in goals:
        value = figures.get(g.figure)
        if value is None:
            verdict = NOT_MEASURED
        elif g.op == ">=":
            verdict = PASS if value >= g.threshold else FAIL
        elif g.op == "<=":
            verdict = PASS if value <= g.threshold else FAIL
        else:
            raise ValueError(f"goal {g.name}: op must be >= or <=, got {g.op!r}")
        rows.append({"goal": g.name, "figure": g.figure, "value": value, "op": g.op, "threshold": g.threshold,
                     "unit": g.unit, "binding": g.binding, "verdict": verdict,
                     "note": g.why_absent if value is None else ""})
    return rows


def verdict_lines(rows: Sequence[dict]) -> List[str]:
    out = []
    for r in rows:
        value = "-" if r["value"] is None else f"{r['value']:.3f}"
        tag = "" if r["binding"] else " (reference)"
        note = f"  [{r['note']}]" if r["note"] else ""
        out.append(f"{r['verdict']:<12} {r['goal']}{tag}: {value} {r['unit']} (goal {r['op']} {r['threshold']:g}){note}")
    return out


def exit_code(rows: Sequence[dict], strict: bool) -> int:
    """0 unless ``strict`` and a binding goal failed or has no figure (a goal without a figure is not met)."""
    if not strict:
        return 0
    return 1 if any(r["binding"] and r["verdict"] != PASS for r in rows) else 0


def verdict_tsv(harness: str, rows: Sequence[dict]) -> List[str]:
    """The binding goals as lines of the Java harnesses' verdict file (orbitkv.testing.ContractVerdicts: harness,
    contract, threshold, figure, spread, verdict, note; tab-separated), so ``scripts/bench qualify`` prints them in its
    one table. A goal without a figure is a collection failure there. Reference goals are judged by their own harness."""
    out = []
    for r in rows:
        if not r["binding"]:
            continue
        op = {">=": "≥", "<=": "≤"}[r["op"]]
        figure = "-" if r["value"] is None else f"{r['value']:.3f} {r['unit']}"
        verdict = "COLLECTION FAILED" if r["verdict"] == NOT_MEASURED else r["verdict"]
        fields = [harness, r["goal"], f"{op} {r['threshold']:g} {r['unit']}", figure, "", verdict, r["note"]]
        out.append("\t".join(f.replace("\t", " ").replace("\n", " ") for f in fields))
    return out


# ---------------------------------------------------------------------------------------------------- output

def write_json(path: str, record: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True, default=lambda o: asdict(o))
        f.write("\n")
    os.replace(tmp, path)


_COLORS = ["#444444", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_bars(title: str, groups: Sequence[str], arms: Sequence[str], values: Dict[str, Dict[str, Optional[float]]],
             unit: str, note: str) -> str:
    """A grouped bar chart: one group per case, one bar per arm (``values[group][arm]``; None: no bar)."""
    width, height, left, top, bottom = 920, 420, 70, 50, 90
    plot_w, plot_h = width - left - 20, height - top - bottom
    vmax = max([v for g in values.values() for v in g.values() if v is not None] + [1e-9]) * 1.1
    gw = plot_w / max(1, len(groups))
    bw = gw * 0.8 / max(1, len(arms))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="12">', f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15">{_esc(title)}</text>',
             f'<text x="{width / 2}" y="38" text-anchor="middle" fill="#555">{_esc(note)}</text>']
    for i in range(6):
        v = vmax * i / 5
        y = top + plot_h - plot_h * i / 5
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{v:.2f}</text>')
    parts.append(f'<text x="16" y="{top + plot_h / 2}" transform="rotate(-90 16 {top + plot_h / 2})" '
                 f'text-anchor="middle">{_esc(unit)}</text>')
    for gi, g in enumerate(groups):
        x0 = left + gi * gw + gw * 0.1
        for ai, a in enumerate(arms):
            v = values.get(g, {}).get(a)
            if v is None:
                continue
            h = plot_h * v / vmax
            parts.append(f'<rect x="{x0 + ai * bw:.1f}" y="{top + plot_h - h:.1f}" width="{bw * 0.9:.1f}" '
                         f'height="{h:.1f}" fill="{_COLORS[ai % len(_COLORS)]}"><title>{_esc(g)} {_esc(a)}: '
                         f'{v:.3f}</title></rect>')
        parts.append(f'<text x="{left + gi * gw + gw / 2:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                     f'{_esc(g)}</text>')
    for ai, a in enumerate(arms):
        x = left + ai * 150
        parts.append(f'<rect x="{x}" y="{height - 40}" width="12" height="12" fill="{_COLORS[ai % len(_COLORS)]}"/>')
        parts.append(f'<text x="{x + 16}" y="{height - 30}">{_esc(a)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def markdown(name: str, record: dict) -> str:
    """The record as Markdown tables: series (medians and spreads), ratios to raw, checks and goal verdicts."""
    lines = [f"Run `{record.get('run_id', '?')}`, case `{name}`; load average (1, 5, 15 min) at start "
             f"{record.get('load_average_start')}, at end {record.get('load_average_end')}; Python "
             f"{record.get('python', '?')}.", "",
             "| case | arm | calls | p10 ms | p50 ms | p90 ms | p99 ms | GB/s at p50 |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for s in record["summaries"]:
        lines.append(f"| {s['case']} | {s['arm']} | {s['calls']} | {s['p10_ms']:.3f} | {s['p50_ms']:.3f} | "
                     f"{s['p90_ms']:.3f} | {s['p99_ms']:.3f} | {s['gb_per_s']:.3f} |")
    ratios = sorted((k, v) for k, v in record["figures"].items() if k.startswith("ratio "))
    if ratios:
        lines += ["", "| ratio (raw p50 / arm p50; 1.0 = level with raw) | value |", "|---|---:|"]
        lines += [f"| {k[len('ratio '):]} | {v:.3f} |" for k, v in ratios]
    if record.get("checks"):
        lines += ["", "| check | result |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in record["checks"].items()]
    lines += ["", "| verdict | goal | figure | threshold |", "|---|---|---:|---|"]
    for r in record["verdicts"]:
        value = "-" if r["value"] is None else f"{r['value']:.3f} {r['unit']}"
        note = f" ({r['note']})" if r["note"] else ""
        ref = " (reference)" if not r["binding"] else ""
        lines.append(f"| {r['verdict']} | {r['goal']}{ref}{note} | {value} | {r['op']} {r['threshold']:g} {r['unit']} |")
    return "\n".join(lines) + "\n"
