"""Issue 35's acceptance "a documented two-line example saves and restores a 32 MiB chunk through the Python client":
the two lines of docs/engines.md, run exactly as written against a real Manager (only its URL substituted)."""

import re

from _paths import repo

DOC_URL = "http://127.0.0.1:8090"


def two_lines() -> str:
    with open(repo("docs", "engines.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Two lines: save and restore a 32 MiB chunk\n.*?```python\n(.*?)```", text, re.S | re.M)
    assert m, "docs/engines.md has the two-line example in a python code block"
    return m.group(1)


def test_the_example_is_two_lines_against_the_default_url():
    code = two_lines()
    assert len(code.strip().splitlines()) == 2, code
    assert DOC_URL in code


def test_the_two_line_example_saves_and_restores_a_32_mib_chunk(big):
    code = two_lines().replace(DOC_URL, big.url)
    ns = {}
    try:
        exec(compile(code, "docs/engines.md", "exec"), ns)  # the assert inside checks the bytes
    finally:
        if "c" in ns:
            ns["c"].close()
    assert len(ns["chunk"]) == 32 << 20 and ns["buf"] == ns["chunk"]
