"""Two projects sharing one ``model_cache``, each naming a different folder ``tiny`` (the tiny
LM built with two seeds): each is scored with its own weights, and its records name them
(the issue "No silent wrong number", finding 1). Before, the converted-model cache was keyed
by the checkpoint's name: the second project found the first one's manifest in place, never
ran ``fetch_model`` and was scored with the first project's weights."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import FAST, TEST_CONFIG, snakemake

from genmetrics.models.checkpoints import folder_sha256
from genmetrics.npz import read_embeddings, read_provenance

SOURCE = "tiny-pure/seed0"
#: what each project builds: one featurizer's and one evaluator's score of one model
TARGETS = [f"results/scores/stories/{SOURCE}/{e}.json" for e in ("perplexity", "kid")]


def small_config(shared_cache: Path) -> dict:
    """.test/config.yaml cut to one model, one seed, one shard and two metrics, with the
    given model cache (the other caches stay in the project folder)."""
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    cfg.pop("omniinput")
    cfg["analysis"] = {}
    cfg["models"] = {"tiny-pure": cfg["models"]["tiny-pure"]}
    cfg["generation"].update(seeds=[0], shards=1)
    cfg["metrics"] = {"perplexity": {"evaluator": "tiny"}, "kid": {"featurizer": "tiny"}}
    cfg["model_cache"] = str(shared_cache)
    return cfg


def project(root: Path, name: str, seed: int, shared_cache: Path) -> tuple[Path, dict, Path]:
    """A project folder with its own tiny LM (``seed``) and a config naming it ``tiny``."""
    work = root / name
    work.mkdir()
    model = root / f"lm-{name}" / "tiny-model"  # outside the project: an absolute path
    cmd = [sys.executable, "-m", "genmetrics.testing.tiny_lm", "tiny-model", str(model)]
    subprocess.run([*cmd, "--seed", str(seed)], check=True, capture_output=True)
    config = work / "config.yaml"
    config.write_text(yaml.safe_dump(small_config(shared_cache)))
    return work, {"GENMETRICS_TINY_MODEL": str(model)}, config


def run(work: Path, env: dict, config: Path, *args: str) -> str:
    proc = snakemake("--configfile", str(config), *FAST, *args, *TARGETS, cwd=work, env=env)
    return proc.stdout + proc.stderr


@pytest.mark.e2e
def test_two_projects_share_a_model_cache_each_scored_with_its_own_weights(tmp_path):
    shared = tmp_path / "shared-models"
    a = project(tmp_path, "a", 0, shared)
    b = project(tmp_path, "b", 1, shared)
    digests = {}
    for work, env, config in (a, b):
        digests[work.name] = folder_sha256(Path(env["GENMETRICS_TINY_MODEL"]))
        run(work, env, config)
    assert digests["a"] != digests["b"]
    embedded = {}
    for work, _, _ in (a, b):
        res = work / "results"
        embedded[work.name] = read_embeddings(res / "features/embed/tiny/stories/references.npz")
    # the same reference texts under two different LMs: two different embeddings (one
    # checkpoint loaded in both projects gives the same numbers in both)
    assert list(embedded["a"][0]["ids"]) == list(embedded["b"][0]["ids"])
    assert not np.allclose(embedded["a"][1], embedded["b"][1])
    for work, _, _ in (a, b):
        res = work / "results"
        # the features were made by the project's own weights, and say so
        files = sorted((res / "features").glob("*/tiny/stories/**/*.npz"))
        assert {f.relative_to(res / "features").parts[0] for f in files} == {"embed", "surprisal"}
        for path in files:
            made = read_provenance(path)["features"]
            assert made["name"] == "tiny" and made["checkpoint_sha256"] == digests[work.name]
            identity = made["cache_settings"]["model"]
            assert made["cache_key"] and identity["weights_sha256"] == digests[work.name]
        # the score records name the weights they were scored with
        for entry in ("perplexity", "kid"):
            rec = json.loads((res / f"scores/stories/{SOURCE}/{entry}.json").read_text())
            upstream = rec["provenance"]["config"]["upstream"]
            option = "evaluator" if entry == "perplexity" else "featurizer"
            assert upstream[option]["checkpoint"]["content"] == digests[work.name]
    # one manifest per content in the shared cache, each naming its project's folder
    manifests = [json.loads(p.read_text()) for p in shared.glob("*/model.json")]
    assert {m["content_sha256"]: (m["path"], m["path_base"]) for m in manifests} == {
        digests[w.name]: (str(Path(env["GENMETRICS_TINY_MODEL"]).resolve()), "absolute")
        for w, env, _ in (a, b)
    }
    # preparing B's checkpoint again (as `genmetrics score --config B` does) leaves A alone
    code = (
        "import sys; from genmetrics.scoring.on_the_fly import load_config_plan, "
        "ready_checkpoint; print(ready_checkpoint(load_config_plan(sys.argv[1]), 'tiny'))"
    )
    env = {**os.environ, **b[1]}
    subprocess.run([sys.executable, "-c", code, str(b[2])], cwd=b[0], env=env, check=True)
    for work, env, config in (a, b):
        assert "Nothing to be done" in run(work, env, config, "-n"), work.name
