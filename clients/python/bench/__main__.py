"""python3 -m bench [--case NAME ...] --urls URL[,URL] [--smoke] [--strict] [--out DIR] [--plot-dir DIR] [--verdicts FILE]

Runs benchmark cases against running Managers (``--urls``: the first holds the blocks, the second, a peer of the
same cluster, reads them from it), writes ``<out>/<case>.json`` and ``<out>/<case>.md`` (tables), prints every series and every frozen goal with its
verdict, and exits 1 on a failed (or unmeasured) binding goal only with ``--strict``."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time

from . import CASES
from . import harness as h


def _args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m bench", description=__doc__.split("\n\n")[1])
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="a case (repeatable; default: engine)")
    ap.add_argument("--urls", required=True, help="Manager URLs, comma-separated (holder first, then its peer)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round: checks the machinery, not speed")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a binding goal is not PASS")
    ap.add_argument("--run-id", default=time.strftime("%Y%m%d-%H%M%S"))
    ap.add_argument("--out", help="directory of the JSON records (default ${TMPDIR}/orbitkv-bench/<run-id>)")
    ap.add_argument("--verdicts", help="append the binding goals' verdicts to this file (scripts/bench qualify's one table)")
    ap.add_argument("--plot-dir", help="also copy each case's SVG plot here (scripts/bench: docs/perf)")
    return ap.parse_args(argv)


def _report(name: str, record: dict) -> None:
    print(f"== {name}: series (ms per call; GB/s at the median)")
    for s in record["summaries"]:
        print(f"  {s['case']:<12} {s['arm']:<9} calls={s['calls']:<5} p10={s['p10_ms']:.3f} p50={s['p50_ms']:.3f} "
              f"p90={s['p90_ms']:.3f} p99={s['p99_ms']:.3f} GB/s={s['gb_per_s']:.3f}")
    ratios = {k: v for k, v in record["figures"].items() if k.startswith("ratio ")}
    if ratios:
        print(f"== {name}: ratios (raw time / arm time, medians; 1.0 = level with raw)")
        for k in sorted(ratios):
            print(f"  {k}: {ratios[k]:.3f}")
    for k, v in record.get("checks", {}).items():
        print(f"  check: {k}: {v}")
    print(f"== {name}: frozen goals")
    for line in h.verdict_lines(record["verdicts"]):
        print("  " + line)


def main(argv=None) -> int:
    a = _args(argv)
    urls = [u for u in a.urls.split(",") if u]
    out = a.out or os.path.join(tempfile.gettempdir(), "orbitkv-bench", a.run_id)
    load_start = h.load_average()
    print(f"bench: run {a.run_id}, load average at start {load_start}, out {out}", flush=True)
    code = 0
    for name in a.case or ["engine"]:
        module = importlib.import_module(f"{__package__}.{CASES[name]}")
        case = module.make(urls, a.smoke, a.run_id, lambda m: print(m, flush=True))
        record = case.run()
        load_end = h.load_average()
        record.update({"run_id": a.run_id, "smoke": a.smoke, "urls": urls, "load_average_start": load_start,
                       "load_average_end": load_end, "python": sys.version.split()[0]})
        h.write_json(os.path.join(out, f"{name}.json"), record)
        with open(os.path.join(out, f"{name}.md"), "w", encoding="utf-8") as f:
            f.write(h.markdown(name, record))
        _report(name, record)
        if hasattr(module, "plot"):
            svg = module.plot(record, (load_start, load_end))
            paths = [os.path.join(out, f"{name}.svg")]
            if a.plot_dir:
                paths.append(os.path.join(a.plot_dir, f"{name}-bench.svg"))
            for p in paths:
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w", encoding="utf-8") as f:
                    f.write(svg)
            print(f"bench: plot {', '.join(paths)}")
        code = max(code, h.exit_code(record["verdicts"], a.strict))
        if a.verdicts:
            with open(a.verdicts, "a", encoding="utf-8") as f:
                f.writelines(line + "\n" for line in h.verdict_tsv(f"python3 -m bench ({name})", record["verdicts"]))
    print(f"bench: load average at end {h.load_average()} (a shared machine: not quiet-machine figures unless the "
          f"load average stayed below 1); JSON in {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
