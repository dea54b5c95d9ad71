"""Human agreement (genmetrics.agreement: correlation, judgment_sets, scoring, preference,
settings): correlations equal scipy's, bootstrap intervals cover and shrink, the judgment-set
readers, the scores of judged texts through the registry, A/B agreement on a hand-computed
case, the config checks, and a real `snakemake agreement` on the five judgment sets of
../shared/data (small bootstrap)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import scripts_as_checked_out
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.agreement.correlation import correlations, upstream_check
from genmetrics.agreement.judgment_sets import (
    PairwiseJudgments,
    read_contrastive_search_ab,
    read_hanna,
    read_rankgen_ab,
    read_realsumm,
    read_xsum_hallucination,
)
from genmetrics.agreement.preference import pairwise_agreement
from genmetrics.agreement.scoring import score_texts
from genmetrics.agreement.settings import agreement_plan

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
needs_data = pytest.mark.skipif(not SHARED_DATA.exists(), reason="../shared/data is not present")
SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def _table(n_items: int, n_systems: int = 6, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for s in range(n_systems):
            h = rng.normal() + 0.3 * s
            rows.append(
                {
                    "item": f"d{i}",
                    "system": f"s{s}",
                    "good": h + rng.normal(),
                    "coarse": float(rng.integers(0, 3)),  # ties
                    "human": h,
                }
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- correlations


@pytest.mark.parametrize("method", sorted(SCIPY))
def test_correlations_equal_scipy_at_every_level(method):
    t = _table(20)
    c = correlations(t, ["good", "coarse"], ["human"], methods=[method], n_boot=20)
    f = SCIPY[method]
    means = t.groupby("system")[["good", "coarse", "human"]].mean()
    for m in ("good", "coarse"):
        got = c.set_index(["metric", "level"])["value"]
        assert got[(m, "system")] == pytest.approx(f(means[m], means["human"]).statistic, abs=1e-12)
        per_item = [
            f(g[m], g["human"]).statistic for _, g in t.groupby("item") if g[m].nunique() > 1
        ]
        assert got[(m, "item")] == pytest.approx(np.mean(per_item), abs=1e-12)
        assert got[(m, "pooled")] == pytest.approx(f(t[m], t["human"]).statistic, abs=1e-12)


def test_item_level_skips_items_where_the_correlation_is_undefined():
    t = _table(10)
    t.loc[t["item"] == "d0", "coarse"] = 1.0  # constant across systems in item d0
    c = correlations(t, ["coarse"], ["human"], levels=["item"], methods=["pearson"], n_boot=10)
    assert c["n_items_defined"].item() <= 9


def test_bootstrap_intervals_cover_the_estimate_and_shrink_with_more_items():
    widths = {}
    for n in (15, 240):
        c = correlations(_table(n), ["good"], ["human"], methods=["spearman"], n_boot=400, seed=3)
        for r in c.itertuples():
            assert r.ci_low <= r.value <= r.ci_high, (n, r.level)
            widths[(n, r.level)] = r.ci_high - r.ci_low
    for level in ("item", "pooled"):
        assert widths[(240, level)] < widths[(15, level)] / 2, level
    # system level: 6 systems either way; more items still narrow it
    assert widths[(240, "system")] < widths[(15, "system")]


def test_correlations_are_seeded():
    a = correlations(_table(12), ["good"], ["human"], n_boot=50, seed=7)
    b = correlations(_table(12), ["good"], ["human"], n_boot=50, seed=7)
    pd.testing.assert_frame_equal(a, b)


def test_incomplete_items_are_counted_not_silently_used():
    t = _table(8)
    t = t[~((t["item"] == "d3") & (t["system"] == "s2"))]
    c = correlations(t, ["good"], ["human"], levels=["system"], methods=["pearson"], n_boot=5)
    assert c["n_items"].item() == 7 and c["n_items_dropped"].item() == 1


def test_correlation_errors_name_the_problem():
    with pytest.raises(GenmetricsError, match="no column"):
        correlations(_table(3), ["nope"], ["human"])
    with pytest.raises(GenmetricsError, match="level"):
        correlations(_table(3), ["good"], ["human"], levels=["corpus"])


def test_upstream_check_hand_case():
    t = pd.DataFrame({"ours": [0.1, 0.2, 0.4], "theirs": [0.1, 0.25, 0.4]})
    r = upstream_check(t, {"ours": "theirs"}).iloc[0]
    assert r["max_abs_diff"] == pytest.approx(0.05)
    assert r["mean_abs_diff"] == pytest.approx(0.05 / 3)
    assert r["share_within_0.01"] == pytest.approx(2 / 3)
    assert r["spearman"] == pytest.approx(1.0)


# ---------------------------------------------------------------------------- A/B


def test_pairwise_agreement_hand_computed():
    """4 items, humans: a, a, b (2-1 votes), tie (1-1, not decisive). Metric (higher wins):
    a, b, b, a → agrees on items 0 and 2 of the 3 decisive ones: 2/3."""
    table = pd.DataFrame(
        {
            "item": ["i0", "i1", "i2", "i3"],
            "group": ["g"] * 4,
            "prompt": [""] * 4,
            "system_a": ["x", "x", "y", "x"],
            "text_a": [""] * 4,
            "system_b": ["y", "y", "x", "y"],
            "text_b": [""] * 4,
            "votes": [["a", "a", "b"], ["a"], ["b", "b", "a"], ["a", "b"]],
        }
    )
    ab = PairwiseJudgments("toy", table, "")
    scores = pd.DataFrame({"a.m": [2.0, 1.0, 0.0, 5.0], "b.m": [1.0, 3.0, 1.0, 4.0]})
    res = pairwise_agreement(ab, scores, {"m": True}, n_boot=200).iloc[0]
    assert res["item_agreement"] == pytest.approx(2 / 3)
    assert res["n_decisive_items"] == 3 and res["metric_undefined"] == 0
    # humans: x wins items 0, 1 (as a) and 2 (as b) by majority → x stronger
    assert res["human_bt.x"] > res["human_bt.y"]
    # a metric undefined on a text is a tie for that item, and counted
    scores.loc[0, "a.m"] = np.nan
    res = pairwise_agreement(ab, scores, {"m": True}, n_boot=50).iloc[0]
    assert res["item_agreement"] == pytest.approx(1 / 3) and res["metric_undefined"] == 1


# ---------------------------------------------------------------------------- readers, scoring


@needs_data
def test_readers_count_what_the_readmes_say():
    rs = read_realsumm(SHARED_DATA / "realsumm")
    assert rs.table.shape[0] == 2500 and rs.table["system"].nunique() == 25
    assert rs.table.groupby("system").size().eq(100).all()  # bart_out abs and ext stay apart
    xs = read_xsum_hallucination(SHARED_DATA / "xsum_hallucination")
    assert len(xs.table) == 1992 and xs.excluded == {"system summaries without human scores": 8}
    hanna = read_hanna(SHARED_DATA / "hanna")
    assert hanna.table.shape[0] == 1056 and len(hanna.upstream) == 72
    cs = read_contrastive_search_ab(SHARED_DATA / "contrastive_search" / "human_ab.jsonl")
    assert len(cs.table) == 150 and cs.table["votes"].map(len).eq(4).all()
    assert cs.table.at[0, "text_a"].startswith("around us were covered.")  # prompt cut off
    rg = read_rankgen_ab(SHARED_DATA / "rankgen_ab")
    assert len(rg.table) == 200 and rg.table["votes"].map(len).sum() == 609


def test_reader_errors_name_file_and_row(tmp_path):
    folder = tmp_path / "rankgen"
    folder.mkdir()
    item = {
        "id": "i0",
        "prompt": "p",
        "text_1": "a",
        "system_1": "x",
        "text_2": "b",
        "system_2": "y",
    }
    (folder / "items.jsonl").write_text(json.dumps(item) + "\n")
    (folder / "judgments.jsonl").write_text(json.dumps({"item_id": "i0", "preferred": 3}) + "\n")
    with pytest.raises(
        GenmetricsError, match=r"judgments.jsonl: row 1: 'preferred' must be 1 or 2"
    ):
        read_rankgen_ab(folder)
    (folder / "judgments.jsonl").write_text(json.dumps({"item_id": "zz", "preferred": 1}) + "\n")
    with pytest.raises(GenmetricsError, match="item_id 'zz' is not in"):
        read_rankgen_ab(folder)


@needs_data
def test_scores_of_judged_texts_equal_the_reference_packages():
    """Item values through the registry: ROUGE per pair = rouge_score's own, BLEU on one
    pair = sacrebleu's corpus BLEU of that pair, and ROUGE-1 F agrees with REALSumm's stored
    ROUGE-1 F of the same summaries (stored with the ROUGE-1.5.5 Perl script)."""
    import sacrebleu
    from rouge_score import rouge_scorer

    rs = read_realsumm(SHARED_DATA / "realsumm").table.iloc[::97].reset_index(drop=True)
    entries = {
        "rouge": {
            "metric": "rouge",
            "params": {"use_stemmer": True, "split_sentences": False},
            "values": ["rouge1", "rouge2_recall"],
        },
        "bleu": {"metric": "bleu", "params": {}, "values": None},
    }
    got = score_texts(rs["text"], rs["reference"], entries)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True)
    for i, r in rs.iterrows():
        s = scorer.score(r["reference"], r["text"])
        assert got.at[i, "rouge.rouge1"] == pytest.approx(s["rouge1"].fmeasure, abs=1e-12)
        assert got.at[i, "rouge.rouge2_recall"] == pytest.approx(s["rouge2"].recall, abs=1e-12)
        bleu = sacrebleu.corpus_bleu([r["text"]], [[r["reference"]]]).score
        assert got.at[i, "bleu.bleu"] == pytest.approx(bleu, abs=1e-9)
    diff = (got["rouge.rouge1"] - rs["upstream.rouge_1_f_score"]).abs()
    assert (
        diff.median() < 0.02
        and np.corrcoef(got["rouge.rouge1"], rs["upstream.rouge_1_f_score"])[0, 1] > 0.97
    )


@needs_data
def test_hanna_heatmap_values_equal_scipy_on_the_stored_scores():
    """The heatmap code on real numbers: system-level Kendall of stored BERTScore F1 (and
    BLEU) with each criterion over the 10 generators = scipy on the systems' means."""
    t = read_hanna(SHARED_DATA / "hanna").table
    t = t[t["system"] != "Human"]
    cols = ["upstream.BERTScore F1", "upstream.BLEU"]
    criteria = ["relevance", "coherence", "empathy", "surprise", "engagement", "complexity"]
    c = correlations(t, cols, criteria, levels=["system"], methods=["kendall"], n_boot=50)
    means = t.groupby("system")[[*cols, *criteria]].mean().round(12)  # ties stay ties
    for r in c.itertuples():
        want = stats.kendalltau(means[r.metric], means[r.criterion]).statistic
        assert r.value == pytest.approx(want, abs=1e-12), (r.metric, r.criterion)
        assert r.n_systems == 10


# ---------------------------------------------------------------------------- config


def _section(**sets) -> dict:
    base = {
        "n_boot": 10,
        "ci": 0.95,
        "seed": 0,
        "levels": ["system", "item"],
        "methods": ["kendall"],
        "figure": {"level": "system", "method": "kendall"},
        "metrics": {"rouge": {"params": {}}, "rep_n": {"params": {}}},
        "sets": sets,
    }
    return base


def _set(kind: str, path: Path, **kw) -> dict:
    return {"kind": kind, "path": str(path), "upstream": True, "exclude_systems": [], **kw}


def test_agreement_plan_errors_name_the_key(tmp_path):
    with pytest.raises(GenmetricsError, match=r"agreement.sets.s.path: .* does not exist"):
        agreement_plan(_section(s=_set("realsumm", tmp_path / "nope")))
    sec = _section(s=_set("rankgen_ab", tmp_path, metrics=["rouge"]))
    with pytest.raises(GenmetricsError, match=r"agreement.sets.s.metrics: rouge \(rouge\)"):
        agreement_plan(sec)
    sec = _section(s=_set("realsumm", tmp_path))
    sec["metrics"]["rouge"]["params"] = {"use_stemer": True}
    with pytest.raises(GenmetricsError, match="agreement.metrics.rouge.params"):
        agreement_plan(sec)
    sec = _section(s=_set("realsumm", tmp_path))
    sec["metrics"]["mauve"] = {}
    with pytest.raises(GenmetricsError, match="agreement.metrics.mauve: mauve runs on embeddings"):
        agreement_plan(sec)


def test_agreement_plan_runs_what_applies_and_says_what_not(tmp_path):
    plan = agreement_plan(_section(r=_set("realsumm", tmp_path), a=_set("rankgen_ab", tmp_path)))
    assert set(plan.sets["r"].entries) == {"rouge", "rep_n"}
    assert set(plan.sets["a"].entries) == {"rep_n"}
    assert "reference" in plan.sets["a"].skipped["rouge"]
    assert plan.sets["r"].twins()["rouge.rouge1"] == "upstream.rouge_1_f_score"


# ---------------------------------------------------------------------------- workflow


@needs_data
@pytest.mark.e2e
def test_snakemake_agreement_on_the_judgment_sets(tmp_path):
    """configs/agreement.yaml with a small bootstrap and no BERTScore (the encoder's load is
    tested in test_reference): every table and figure, the summary, and agreement of our
    ROUGE with the stored ROUGE of the same texts."""
    cfg = yaml.safe_load((REPO / "configs" / "agreement.yaml").read_text())
    cfg["agreement"]["n_boot"] = 30
    del cfg["agreement"]["metrics"]["bertscore"]
    for s in ("realsumm", "xsum"):
        cfg["agreement"]["sets"][s]["metrics"] = ["rouge", "bleu"]
    path = tmp_path / "agreement.yaml"
    path.write_text(yaml.safe_dump(cfg))
    cmd = [str(BIN / "snakemake"), "-s", str(REPO / "Snakefile"), "agreement", "--cores", "2"]
    # the test's PATH after BIN: it holds the scontrol that fails at once (conftest.py)
    env = {"GENMETRICS_REPO": str(REPO), "PATH": f"{BIN}:{os.environ['PATH']}"}
    # the judgment sets come from their upstreams; offline, from the data mirror (conftest.py)
    env["GENMETRICS_DATA_MIRROR"] = os.environ["GENMETRICS_DATA_MIRROR"]
    proc = subprocess.run(
        [*cmd, "--configfile", str(path)], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = tmp_path / cfg["results_dir"]  # the study's own tree
    for s in ("realsumm", "xsum", "hanna", "contrastive_search", "rankgen"):
        assert (res / "figures" / f"agreement_{s}.png").stat().st_size > 10_000, s
    summary = pd.read_csv(res / "agreement" / "summary.csv")
    assert set(summary["set"]) == {"realsumm", "xsum", "hanna", "contrastive_search", "rankgen"}
    check = pd.read_csv(res / "agreement" / "realsumm" / "upstream_check.csv").set_index("ours")
    assert check.loc["rouge.rouge1", "pearson"] > 0.97
    corr = pd.read_csv(res / "agreement" / "realsumm" / "correlations.csv")
    assert corr["n_systems"].eq(25).all() and corr["n_boot"].eq(30).all()
    with scripts_as_checked_out():  # not while test_workflow.py touches the scripts
        again = subprocess.run(
            [*cmd, "-n", "--configfile", str(path)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )
    assert "Nothing to be done" in again.stdout + again.stderr
