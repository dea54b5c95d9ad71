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


def job_blocks(out: str, rule: str) -> list[str]:
    """The dry-run text of each job of ``rule`` (jobs start with a ``[date]`` line)."""
    blocks = re.split(r"^\[\w{3} \w{3} .*\]$", out, flags=re.M)
    return [b for b in blocks if re.search(rf"^(local)?rule {rule}:", b.strip(), re.M)]


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
    for model, seed in [("smollm2-pure", 0), ("smollm2-nucleus", 0), ("smollm2-nucleus", 1)]:
        path = res / f"generations/agnews/{model}/seed{seed}.jsonl"
        rows = [json.loads(line) for line in open(path)]
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
    ppl = df[(df.metric == "perplexity") & (df.name == "perplexity") & (df.seed.fillna(0) == 0)]
    ppl = ppl.set_index("model")["value"]
    assert set(ppl.index) == set(cfg["models"]) | {"references"}
    assert ((ppl > 1.5) & (ppl < 2000)).all()  # a real LM on real news text
    # lower temperature + nucleus gives text the evaluator (the same LM) finds more likely
    assert ppl["smollm2-nucleus"] < ppl["smollm2-pure"]
    # text metrics ran through their own inputs: POS tags, paired references, raw texts
    names = set(zip(df.metric, df.name, strict=True))
    assert {
        ("pos_compression_ratio", "compression_ratio"),
        ("rouge", "rougeL"),
        ("self_bleu", "self_bleu"),
        ("self_bleu", "mean_words"),
    } <= names
    rl = df[(df.metric == "rouge") & (df.name == "rouge1")]
    assert len(rl) == 3 and ((rl.value > 0.2) & (rl.value < 1)).all()  # 3 (model, seed) sources
    # length control: after cutting to the shortest text per prompt, all sources are equally long
    lc = df[(df.variant == "ngram_diversity_lc") & (df.name == "mean_words")]
    free = df[(df.variant == "self_bleu") & (df.name == "mean_words")]
    assert len(lc) == 4 and lc.value.max() - lc.value.min() < 1e-9
    assert lc.value.max() <= free.value.min() + 1e-9
    # spread over seeds (vary Q) and reference resamples (vary P), Table B.4
    spread = pd.read_csv(res / "spread.csv")
    nuc = spread[(spread.model == "smollm2-nucleus") & (spread.name == "precision")]
    assert set(nuc.vary) == {"candidate", "reference", "both"}
    assert nuc.set_index("vary").loc["candidate", "n_runs"] == 2
    assert nuc.set_index("vary").loc["reference", "n_runs"] == 3
    assert (nuc["std"] >= 0).all() and ((nuc["mean"] >= 0) & (nuc["mean"] <= 1)).all()
    summary = pd.read_csv(res / "scores_summary.csv")
    row = summary[(summary.model == "smollm2-nucleus") & (summary.name == "recall")]
    assert row.n_seeds.item() == 2 and row["std"].item() >= 0
    length = pd.read_csv(res / "analysis/length_correlation.csv", index_col=0)
    assert "spearman" in length.columns
    tags = [json.loads(line) for line in open(res / "features/pos/agnews/references.jsonl")]
    assert len(tags) == len(refs) and all(
        len(t["tags"]) == len(r["text"].split()) for t, r in zip(tags, refs, strict=True)
    )
    for fig in ("metric_correlation.png", "precision_recall.png", "length_correlation.png"):
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
    # a length-controlled score depends on every source by design (the shortest text per
    # prompt); leave it out to check that nothing else of the existing models reruns
    del cfg["metrics"]["ngram_diversity_lc"]
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
    assert counts["pos_tags"] == 1 and counts["spread"] == 1
    assert "fetch_model" not in counts and "clean_dataset" not in counts
    # no job of an existing model: every job with model-specific wildcards is the new model's
    blocks = re.split(r"^\[\w{3} \w{3} .*\]$", proc.stdout, flags=re.M)
    wildcards = [m for b in blocks for m in re.findall(r"^\s*wildcards: (.*)$", b, re.M)]
    assert wildcards and not [w for w in wildcards if "smollm2-pure" in w or "smollm2-nucleus" in w]


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


@pytest.mark.e2e
def test_sweeps_target(e2e):
    work, cfg, _ = e2e
    snakemake("sweeps", "--cores", "2", "--configfile", str(work / "e2e.yaml"), cwd=work)
    df = pd.read_csv(work / "results/analysis/sweep/agnews/smollm2-pure/seed0/precision_recall.csv")
    assert sorted(df[df.sweep == "n"]["n"]) == [10, 20]
    assert sorted(df[df.sweep == "k"]["k"]) == [1, 2, 3, 4, 5]
    by_k = df[df.sweep == "k"].set_index("k")
    assert by_k["recall"].is_monotonic_increasing  # larger balls cover more
    # the full-size point of the N sweep equals the k=4 point of the k sweep
    full = df[(df.sweep == "n") & (df.n == 20)].iloc[0]
    assert full["precision"] == pytest.approx(by_k.loc[4, "precision"])
    assert (work / "results/figures/pr_sweep.png").read_bytes()[:4] == b"\x89PNG"


def test_cluster_profile_maps_gpu_rules_to_gpu_partitions(tmp_path):
    proc = snakemake(
        "-n",
        "--profile",
        str(REPO / "cluster"),
        "--configfile",
        str(REPO / "config.yaml"),
        cwd=tmp_path,
    )
    gen = job_blocks(proc.stdout, "generate")[0]
    assert "gpu=1" in gen and "slurm_partition=a100" in gen
    agg = job_blocks(proc.stdout, "aggregate")[0]
    assert "gpu=" not in agg


def test_model_vs_model_comparison_dag(tmp_path):
    """The creative-writing config compares models with each other: no human reference."""
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    proc = snakemake(
        "-n", "--cores", "2", "--configfile", str(REPO / "configs/creative.yaml"), cwd=tmp_path
    )
    out = proc.stdout
    pr_jobs = [b for b in job_blocks(out, "score") if "metric=precision_recall" in b]
    # every (model, seed) except the reference itself: 2 models × 4 seeds − 1
    assert len(pr_jobs) == 7
    for block in pr_jobs:
        assert "features/embed/minilm/creative/smollm2-t1.0/seed0.npz" in block
        assert "source=smollm2-t1.0/seed0," not in block
    counts = job_counts(out)
    assert counts["generate"] == 8 and "surprisal" not in counts
    assert "references.npz" not in out  # the human texts are not featurized
