"""The first texts of a ``../shared/data`` file, for tests (skip when the folder is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_texts(rel: str, n: int) -> list[str]:
    """The ``text`` of the first ``n`` rows of ``../shared/data/<rel>``."""
    path = DATA / rel
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for _, line in zip(range(n), f, strict=False)]
