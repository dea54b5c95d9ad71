"""Shared fixtures: the real-data folder, a tiny random causal LM with a word-level tokenizer
(built by :mod:`genmetrics.testing`, the package's own test helper)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from genmetrics.testing import WORDS, build_model, build_tokenizer  # noqa: F401 (used by tests)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# One download cache for the test session (assets, wheels, converted models), inside the repo.
os.environ.setdefault("GENMETRICS_CACHE", str(REPO / ".cache" / "genmetrics"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_lm():
    tok = build_tokenizer(with_bos=True, chat=True)
    return build_model(len(tok)), tok


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_lm):
    """The tiny model saved as an HF folder (config.json + safetensors + tokenizer)."""
    model, tok = tiny_lm
    d = tmp_path_factory.mktemp("tiny_model")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d
