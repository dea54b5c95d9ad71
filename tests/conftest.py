"""Shared fixtures: the real-data folder, a tiny random causal LM with a word-level tokenizer
(built by :mod:`genmetrics.testing`, the package's own test helper)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from genmetrics.testing import WORDS, build_model, build_tokenizer  # noqa: F401 (used by tests)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# Hypothesis budgets (tests/test_fuzz_inputs.py): `short` in `make test`, `long` in
# `make test-slow` (HYPOTHESIS_PROFILE=long). No deadline: a shared 2-core machine is slow
# at times, and a hang shows as a test that does not end, not as a flaky deadline.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the fuzz tests skip themselves without it
    pass
else:
    _HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    settings.register_profile(
        "short", max_examples=20, deadline=None, suppress_health_check=_HEALTH
    )
    settings.register_profile(
        "long", max_examples=500, deadline=None, suppress_health_check=_HEALTH
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "short"))

# One download cache for the test session (assets, wheels, converted models), inside the repo.
os.environ.setdefault("GENMETRICS_CACHE", str(REPO / ".cache" / "genmetrics"))


@pytest.fixture(scope="session")
def _no_slurm_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("no_slurm")
    (d / "scontrol").write_text("#!/bin/sh\necho 'no SLURM in this test' >&2\nexit 1\n")
    (d / "scontrol").chmod(0o755)
    return d


@pytest.fixture(autouse=True)
def _no_slurm_controller(request, monkeypatch, _no_slurm_dir):
    """Snakemake imports the SLURM executor plugin at start, and the plugin runs
    `scontrol show config`; where SLURM is installed but its controller is down (a CI image
    after the SLURM test) that waits 9 s per Snakemake start. Tests not marked `slurm` do not
    talk to SLURM, so they see an `scontrol` that fails at once."""
    if "slurm" not in request.keywords:
        monkeypatch.setenv("PATH", f"{_no_slurm_dir}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture(scope="module")
def minilm():
    """The offline MiniLM sentence encoder's folder (skip where it cannot be obtained)."""
    try:
        from genmetrics.assets import minilm_dir

        return minilm_dir()
    except Exception as e:  # offline asset not obtainable here
        pytest.skip(f"MiniLM asset unavailable: {e}")


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


def placeholder_checkpoint(folder: Path) -> Path:
    """A folder that passes for a local checkpoint in a dry run (a config.json and a small
    weights file: the plan hashes a local checkpoint's content); nothing can load it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "placeholder"}')
    (folder / "model.safetensors").write_bytes(b"placeholder weights")
    return folder
