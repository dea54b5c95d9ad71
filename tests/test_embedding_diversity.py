"""Remote-clique and chamfer distance (``embedding_diversity``): hand-computed cases and the
``diversity`` 0.3.1 package's own ``embedding.py`` (= cshaib/diversity commit 25127cc), run on
our embeddings by a stand-in encoder."""

from __future__ import annotations

import math
import types
from pathlib import Path

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import _kernels, compute
from genmetrics.metrics.embedding_diversity import chamfer_distance
from genmetrics.npz import save_npz
from genmetrics.scoring.from_files import score_files


def _angles(*degrees: float) -> np.ndarray:
    rad = np.radians(degrees)
    return np.stack([np.cos(rad), np.sin(rad)], axis=1)


def test_hand_computed_unit_vectors():
    """Vectors at 0°, 60°, 180°: cosine distances 1 − cos: d(0°, 60°) = ½, d(0°, 180°) = 2,
    d(60°, 180°) = 3/2. Remote clique: 2·(½ + 2 + 3/2) / 3² = 8/9 (the zero self-distances
    are in the mean). Chamfer: nearest distances ½, ½, 3/2 → 5/6."""
    x = _angles(0, 60, 180) * np.array([[1.0], [4.0], [0.2]])  # norms do not matter
    got = compute("embedding_diversity", x)
    assert got.values["remote_clique"] == pytest.approx(8 / 9, rel=1e-12)
    assert got.values["chamfer"] == pytest.approx(5 / 6, rel=1e-12)
    rounded = compute("embedding_diversity", x, params={"round": 3}).values
    assert rounded == {"remote_clique": 0.889, "chamfer": 0.833}


def test_orthogonal_and_identical_sets():
    n = 6
    got = compute("embedding_diversity", np.eye(n)).values
    assert got["remote_clique"] == pytest.approx((n - 1) / n)  # mean over all n² entries
    assert got["chamfer"] == pytest.approx(1.0)
    same = compute("embedding_diversity", np.tile([[1.0, 2.0, -3.0]], (5, 1))).values
    assert same["remote_clique"] == pytest.approx(0.0, abs=1e-12) and same["chamfer"] == 0.0
    # one duplicate pair: both items have a nearest neighbour at distance 0
    pair = compute("embedding_diversity", np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert pair.values["chamfer"] == pytest.approx(1 / 3)


def _package_embedding():
    """The package's diversity/embedding.py loaded alone, with ``sentence_transformers``
    replaced by an encoder that returns its input: the package's remote_clique and
    chamfer_dist then run on the embeddings we pass as ``data``."""
    from genmetrics.studies.shaib_diversity.runtime_scores import package_module

    class Identity:
        def __init__(self, model: str) -> None:
            self.model = model

        def encode(self, data, batch_size=64, show_progress_bar=True):
            return np.asarray(data)

    st = types.SimpleNamespace(SentenceTransformer=Identity)
    mod = package_module("embedding", stand_ins={"sentence_transformers": st})
    if mod is None:
        pytest.skip("reference package `diversity` not installed (pip install --no-deps)")
    return mod


def _sets():
    """Random sets of several shapes: isotropic, anisotropic (a common direction, as LM
    embeddings), clustered, with duplicates, float32."""
    rng = np.random.default_rng(0)
    for i in range(12):
        n, d = int(rng.integers(2, 90)), int(rng.integers(2, 40))
        x = rng.normal(size=(n, d))
        if i % 3 == 1:
            x += rng.normal(size=d) * 3  # a shared offset: cosines near 1
        if i % 3 == 2:
            x = rng.normal(size=(4, d))[rng.integers(0, 4, n)] + 0.05 * x  # 4 clusters
        if i % 4 == 0 and n > 3:
            x[1] = x[0]
        yield x.astype(np.float32) if i % 2 else x


def _theirs(pkg, x: np.ndarray) -> dict[str, float]:
    return {
        "remote_clique": float(pkg.remote_clique(x, verbose=False)),
        "chamfer": float(pkg.chamfer_dist(x, verbose=False)),
    }


def test_equals_the_package_embedding_module():
    pkg = _package_embedding()
    for x in _sets():
        # the package rounds to 3 decimals: round=3 gives its number exactly (float64 input)
        theirs = _theirs(pkg, x.astype(np.float64))
        assert compute("embedding_diversity", x, params={"round": 3}).values == theirs
        got = compute("embedding_diversity", x).values  # unrounded: within the rounding
        for k in theirs:
            assert abs(got[k] - theirs[k]) <= 5e-4, (k, got[k], theirs[k])
        if x.dtype == np.float32:  # what an encoder returns: sklearn computes in float32,
            theirs32 = _theirs(pkg, x)  # and the rounded number is a float32 (0.0820000022)
            for k in theirs:
                assert theirs32[k] == pytest.approx(theirs[k], abs=1e-6), k


def test_chamfer_in_blocks_equals_the_one_shot_minimum(monkeypatch):
    x = np.random.default_rng(1).normal(size=(23, 5))
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    d = 1 - u @ u.T
    np.fill_diagonal(d, np.inf)
    want = d.min(axis=1).mean()
    monkeypatch.setattr(_kernels, "BLOCK_ELEMENTS", 23 * 5)  # blocks of 5 rows, the last of 3
    assert len(list(_kernels.row_blocks(23))) == 5
    assert chamfer_distance(u) == pytest.approx(want, rel=1e-12)


def test_workflow_embeddings_file(tmp_path):
    """The workflow's .npz (kind ``embeddings``: ids, prompt_ids, emb float32) scores as the
    array it holds."""
    emb = np.random.default_rng(2).normal(size=(30, 8)).astype(np.float32)
    path = tmp_path / "seed0.npz"
    ids = [f"p{i}~0" for i in range(30)]
    save_npz(path, ids=ids, prompt_ids=[f"p{i}" for i in range(30)], emb=emb)
    for name in ("embedding_diversity", "vendi", "rke"):
        record = score_files(name, path)
        assert record["values"] == compute(name, emb).values, name
        assert record["n"]["candidate"] == 30


def test_too_few_items_and_zero_rows_are_errors():
    with pytest.raises(GenmetricsError, match="chamfer needs a nearest other item: 2 or more"):
        compute("embedding_diversity", np.ones((1, 4)))
    x = np.ones((4, 2))
    x[3] = 0
    with pytest.raises(GenmetricsError, match=r"zeros have no cosine similarity, first rows \[3\]"):
        compute("embedding_diversity", x)
    assert math.isfinite(compute("embedding_diversity", np.eye(2)).values["chamfer"])


def test_config_entries_reach_the_plan():
    """Entries of the three embedding scores and ngram_vendi in the config: a score target per
    source (the human references included), the featurizer's whole-text embeddings as input,
    and embedding_diversity's two-item minimum checked right after cleaning, naming the entry."""
    import yaml

    from genmetrics.data.clean import check_sizes
    from genmetrics.plan import load_plan

    repo = Path(__file__).resolve().parents[1]
    cfg = yaml.safe_load((repo / "config.yaml").read_text())
    cfg["metrics"] = {
        "vendi_q2": {"metric": "vendi", "featurizer": "smollm2", "params": {"q": 2}},
        "rke": {"featurizer": "minilm", "params": {"sigma": 0.5}},
        "embedding_diversity": {"featurizer": "minilm"},
        "ngram_vendi": {"params": {"q": "inf"}},
    }
    plan = load_plan(cfg, repo / "workflow" / "schemas" / "config.schema.yaml")
    assert "smollm2-pure/seed0" in plan.model_sources("bbc")
    sources = ["references", *plan.model_sources("bbc")]  # every (model, seed)
    assert sorted(plan.score_targets()) == sorted(
        f"results/scores/bbc/{s}/{e}.json" for s in sources for e in cfg["metrics"]
    )
    assert plan.score_inputs("bbc", "smollm2-pure/seed0", "vendi_q2") == {
        "candidate": "results/features/embed/smollm2/bbc/smollm2-pure/seed0.npz"
    }
    assert plan.score_inputs("bbc", "references", "rke") == {
        "candidate": "results/features/embed/minilm/bbc/references.npz"
    }
    assert plan.entries["ngram_vendi"].params == {"num_n": 4, "q": "inf"}
    needs = plan.size_requirements("bbc")
    assert needs == [
        {
            "entry": "embedding_diversity",
            "key": "metrics.embedding_diversity",
            "needs": 2,
            "why": "embedding_diversity needs at least 2 texts per set",
        }
    ]
    with pytest.raises(GenmetricsError, match=r"^metrics\.embedding_diversity: .* has 1 after"):
        check_sizes(1, needs, "bbc")
    cfg["metrics"]["rke"]["params"] = {"sigma": 0}
    with pytest.raises(GenmetricsError, match=r"metrics\.rke\.params\.sigma: must be a number > 0"):
        load_plan(cfg, repo / "workflow" / "schemas" / "config.schema.yaml")
