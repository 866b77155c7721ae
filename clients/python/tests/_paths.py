"""Paths of the repository files the tests read (golden vectors, docs)."""

import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def repo(*parts: str) -> str:
    return os.path.join(ROOT, *parts)
