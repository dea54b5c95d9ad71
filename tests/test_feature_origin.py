"""A feature file says which weights made it (its provenance's ``features``: the checkpoint's
content hash and the feature cache key), and scoring refuses two sides made by different
weights under one featurizer name, naming both files and both digests (the issue "No silent
wrong number", finding 2). The files are written by the workflow's own embed script."""

from __future__ import annotations

import json
import random
import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.cli import main
from genmetrics.io import write_jsonl
from genmetrics.models.checkpoints import folder_sha256, prepare_model
from genmetrics.npz import read_provenance, save_npz, with_provenance
from genmetrics.scoring.from_files import score_files
from genmetrics.testing.tiny_lm import WORDS, save_tiny_model

EMBED_SCRIPT = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "embed.py"


@pytest.fixture(scope="module")
def two_lms(tmp_path_factory):
    """The tiny LM built with two seeds (two sets of weights), each prepared in one model
    cache as fetch_model prepares it: {seed: (folder, manifest)}."""
    root = tmp_path_factory.mktemp("two_lms")
    out = {}
    for seed in (0, 1):
        folder = save_tiny_model(root / f"lm{seed}", seed=seed)
        spec = {"source": {"kind": "local", "path": str(folder)}}
        out[seed] = folder, prepare_model("tiny", spec, root / "models")
    return out


def texts_file(path: Path, seed: int, n: int = 12) -> Path:
    rng = random.Random(seed)
    rows = [{"id": f"t{i}", "text": " ".join(rng.choices(WORDS, k=8))} for i in range(n)]
    write_jsonl(path, rows)
    return path


def workflow_embed(texts: Path, manifest: Path, out: Path, cache: Path) -> Path:
    """``workflow/scripts/embed.py`` run as Snakemake runs it (its ``snakemake`` object)."""
    settings = {
        "kind": "causal_lm",
        "max_tokens": 64,
        "batch_size": 16,
        "cache_dir": str(cache / "embed" / "tiny"),
        "cache_key": "tiny:tiny",
    }
    sm = SimpleNamespace(
        input=SimpleNamespace(texts=str(texts), model=str(manifest)),
        output=[str(out)],
        log=[str(out.with_suffix(".log"))],
        params=SimpleNamespace(settings=settings, source="references", part="text", code="x"),
        wildcards=SimpleNamespace(featurizer="tiny"),
        resources={},
    )
    runpy.run_path(str(EMBED_SCRIPT), init_globals={"snakemake": sm})
    return out


def test_scoring_refuses_features_of_two_checkpoints_under_one_featurizer(
    tmp_path, two_lms, capsys
):
    cand_texts = texts_file(tmp_path / "cand.jsonl", 1)
    ref_texts = texts_file(tmp_path / "ref.jsonl", 2)
    (lm0, m0), (lm1, m1) = two_lms[0], two_lms[1]
    d0, d1 = folder_sha256(lm0), folder_sha256(lm1)
    cand = workflow_embed(cand_texts, m0, tmp_path / "a" / "cand.npz", tmp_path / "f")
    ref_same = workflow_embed(ref_texts, m0, tmp_path / "a" / "ref.npz", tmp_path / "f")
    ref_other = workflow_embed(ref_texts, m1, tmp_path / "b" / "ref.npz", tmp_path / "f")
    made = read_provenance(cand)["features"]
    assert made["name"] == "tiny" and made["checkpoint_sha256"] == d0
    assert made["cache_settings"]["model"]["weights_sha256"] == d0
    assert len(made["cache_key"]) == 64
    other = read_provenance(ref_other)["features"]
    assert other["checkpoint_sha256"] == d1 and other["cache_key"] != made["cache_key"]
    # the same weights: scored
    args = ["score", "kid", "--candidate", str(cand), "--param", "subset_size=6"]
    assert main([*args, "--reference", str(ref_same)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    # two checkpoints under one featurizer name: refused by the command and by score_files,
    # naming both files and both digests
    assert main([*args, "--reference", str(ref_other)]) == 2
    err = capsys.readouterr().err.strip()
    want = (
        f"{cand} (candidate) and {ref_other} (reference): embeddings of featurizer tiny made "
        f"by different weights (checkpoint sha256 {d0[:16]}… and {d1[:16]}…)"
    )
    assert want in err and "\n" not in err
    with pytest.raises(GenmetricsError) as e:
        score_files("kid", cand, ref_other, {"subset_size": 6})
    assert want in str(e.value)
    # a feature file written before the features record: the weights hash of its model input
    z = dict(np.load(ref_other, allow_pickle=False))
    prov = json.loads(str(z.pop("provenance")))
    assert prov.pop("features") and prov["inputs"]["model"]["weights_sha256"] == d1
    old = tmp_path / "b" / "old.npz"
    save_npz(old, **with_provenance(z, prov))
    with pytest.raises(GenmetricsError, match="made by different weights"):
        score_files("kid", cand, old, {"subset_size": 6})
