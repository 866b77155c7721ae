"""Benchmarks of the Python client (``scripts/bench engine``; ``python3 -m bench --help`` from clients/python).

A case is a module with ``make(urls, smoke, run_id, log) -> case``; the case's ``run()`` returns its record (a dict
with ``summaries``, ``figures`` and ``verdicts`` from bench.harness, plus anything else worth keeping) and a module
``plot(record, (load_start, load_end)) -> str`` may give an SVG. Add a case by adding its module name here.
"""

#: case name -> module (under this package) with make() and optionally plot()
CASES = {
    "engine": "engine",
    "backends": "backends_case",
}
