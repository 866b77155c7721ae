"""Python 3.10 (the client's ``requires-python``) is checked statically only: the machines that run this suite have
3.11 and no package registry. Every source file under clients/python must parse with the 3.10 grammar and may not
use standard-library names added in 3.11 or later (a small list of the ones a client is likely to reach for)."""

import ast
import os

import pytest

from _paths import repo

#: module -> names added after 3.10 (None: the whole module is new)
NEWER_THAN_310 = {
    "tomllib": None,
    "asyncio": {"TaskGroup", "timeout", "timeout_at", "Timeout", "Runner"},
    "typing": {"Self", "LiteralString", "Never", "assert_never", "assert_type", "reveal_type", "TypeVarTuple",
               "Unpack", "Required", "NotRequired", "dataclass_transform", "override", "TypeAliasType"},
    "enum": {"StrEnum", "ReprEnum", "verify", "EnumCheck"},
    "datetime": {"UTC"},
    "hashlib": {"file_digest"},
    "contextlib": {"chdir"},
    "socket": {"SO_INCOMING_CPU"},
}
#: builtins added after 3.10
BUILTINS_NEWER_THAN_310 = {"ExceptionGroup", "BaseExceptionGroup", "EncodingWarning"}


def sources():
    root = repo("clients", "python")
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("__pycache__", "build", "dist") and not x.startswith("."))
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".py")]
    return out


def violations(src: str, name: str = "<src>"):
    """Why ``src`` would not run on Python 3.10: a grammar error or the newer names it uses (empty: none)."""
    try:
        tree = ast.parse(src, name, feature_version=(3, 10))
    except SyntaxError as e:
        return [f"{name}:{e.lineno}: not Python 3.10 syntax: {e.msg}"]
    aliases = {}  # local name -> module, for "import asyncio as aio"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                aliases[a.asname or top] = top
                if top in NEWER_THAN_310 and NEWER_THAN_310[top] is None:
                    found.append(f"{name}:{node.lineno}: import {a.name} (3.11+)")
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            newer = NEWER_THAN_310.get(top, set())
            if newer is None:
                found.append(f"{name}:{node.lineno}: from {node.module} import (3.11+)")
            else:
                found += [f"{name}:{node.lineno}: from {node.module} import {a.name} (3.11+)"
                          for a in node.names if a.name in newer]
        elif isinstance(node, ast.TryStar):
            found.append(f"{name}:{node.lineno}: except* (3.11+)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id)
            if module and node.attr in (NEWER_THAN_310.get(module) or ()):
                found.append(f"{name}:{node.lineno}: {module}.{node.attr} (3.11+)")
        elif isinstance(node, ast.Name) and node.id in BUILTINS_NEWER_THAN_310:
            found.append(f"{name}:{node.lineno}: {node.id} (3.11+)")
    return found


def test_every_client_source_is_python_310():
    files = sources()
    assert len(files) >= 15, files  # the package, its tests and the benchmark
    assert any(f.endswith(os.path.join("orbitkv", "client.py")) for f in files)
    problems = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            problems += violations(fh.read(), os.path.relpath(f, repo()))
    assert problems == []


@pytest.mark.parametrize("src", [
    "import tomllib\n",
    "from asyncio import TaskGroup\n",
    "import asyncio\nasync def f():\n    async with asyncio.timeout(1):\n        pass\n",
    "import asyncio as aio\nx = aio.TaskGroup\n",
    "from typing import Self\n",
    "import typing\nx: typing.Self\n",
    "raise ExceptionGroup('x', [ValueError()])\n",
    "try:\n    pass\nexcept* ValueError:\n    pass\n",
])
def test_the_check_rejects_311_code(src):
    assert violations(src) != []


def test_the_check_accepts_310_code():
    assert violations("import asyncio\nfrom typing import Optional\nmatch 1:\n    case 1:\n        pass\n"
                      "x = asyncio.wait_for\n") == []
