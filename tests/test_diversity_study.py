"""The diversity study's tables (Shaib et al. 2024): per source raw and truncated, the length
correlation per dataset, the stability across datasets; the plan's columns and
``length_control: shortest_models``. Hand-made scores and texts, hand-computed values."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, placeholder_checkpoint
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.plan import load_plan
from genmetrics.studies.shaib_diversity.tables import (
    diversity_markdown,
    diversity_table,
    length_correlations,
    stability,
)

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

COLUMNS = [
    {"label": "cr", "entry": "cr", "name": "compression_ratio", "direction": "lower",
     "cut_entry": "cr_cut"},
    {"label": "ngd", "entry": "ngd", "name": "ngram_diversity", "direction": "higher",
     "cut_entry": None},
]  # fmt: skip


def _rows(dataset, model, seed, entry, metric, values):
    return [
        {"dataset": dataset, "model": model, "seed": seed, "reference": None, "metric": metric,
         "entry": entry, "name": k, "value": v}
        for k, v in values.items()
    ]  # fmt: skip


def _scores() -> pd.DataFrame:
    rows = []
    # cnndm: 3 sources; model "a" has 2 seeds (averaged), the references none
    for ds, model, seed, cr, cut, ngd, words, cut_words in [
        ("cnndm", "a", 0, 2.0, 1.5, 3.0, 50, 20),
        ("cnndm", "a", 1, 3.0, 2.5, 3.2, 60, 20),
        ("cnndm", "b", 0, 4.0, 2.0, 2.0, 80, 20),
        ("cnndm", "references", None, 1.0, 1.2, 3.5, 30, 20),
        ("xsum", "a", 0, 1.1, 1.0, 3.1, 20, 10),
        ("xsum", "b", 0, 1.3, 1.2, 2.9, 25, 10),
        ("xsum", "references", None, 1.2, 1.1, 3.0, 18, 10),
    ]:
        rows += _rows(ds, model, seed, "cr", "compression_ratio",
                      {"compression_ratio": cr, "mean_words": words})  # fmt: skip
        rows += _rows(ds, model, seed, "cr_cut", "compression_ratio",
                      {"compression_ratio": cut, "mean_words": cut_words})  # fmt: skip
        rows += _rows(ds, model, seed, "ngd", "ngram_diversity",
                      {"ngram_diversity": ngd, "mean_words": words})  # fmt: skip
    df = pd.DataFrame(rows)
    df["seed"] = df["seed"].astype("Int64")
    return df


def test_the_table_has_raw_and_cut_values_and_lengths_averaged_over_seeds():
    t = diversity_table(_scores(), COLUMNS)
    assert list(t.columns) == ["n_seeds", "mean_words", "mean_words_cut", "cr", "ngd", "cr (cut)"]
    a = t.loc[("cnndm", "a")]
    assert a["n_seeds"] == 2 and a["mean_words"] == 55 and a["mean_words_cut"] == 20
    assert a["cr"] == 2.5 and a["cr (cut)"] == 2.0 and a["ngd"] == pytest.approx(3.1)
    refs = t.loc[("cnndm", "references")]
    assert refs["n_seeds"] == 1 and refs["cr"] == 1.0 and refs["mean_words"] == 30
    assert len(t) == 6


def test_length_correlation_per_dataset_by_hand():
    t = diversity_table(_scores(), COLUMNS)
    corr = length_correlations(t, COLUMNS).set_index(["dataset", "score", "version"])
    # cnndm: lengths (55, 80, 30), cr (2.5, 4.0, 1.0): hand-computed Pearson
    x, y = np.array([55.0, 80.0, 30.0]), np.array([2.5, 4.0, 1.0])
    r = ((x - x.mean()) * (y - y.mean())).sum() / np.sqrt(
        ((x - x.mean()) ** 2).sum() * ((y - y.mean()) ** 2).sum()
    )
    assert corr.loc[("cnndm", "cr", "raw"), "pearson"] == pytest.approx(r)
    assert corr.loc[("cnndm", "cr", "raw"), "spearman"] == pytest.approx(1.0)
    # the cut score against the uncut length: (2.0, 2.0, 1.2) -> ranks tie
    cut = corr.loc[("cnndm", "cr", "cut")]
    assert cut["n"] == 3
    assert cut["pearson"] == pytest.approx(stats.pearsonr(x, [2.0, 2.0, 1.2])[0])
    assert ("cnndm", "ngd", "cut") not in corr.index  # no truncated twin


def test_too_few_sources_give_no_correlation():
    t = diversity_table(_scores(), COLUMNS).drop(index=("cnndm", "b"))
    corr = length_correlations(t, COLUMNS).set_index(["dataset", "score", "version"])
    assert np.isnan(corr.loc[("cnndm", "cr", "raw"), "pearson"])
    assert corr.loc[("cnndm", "cr", "raw"), "n"] == 2


def test_stability_over_matched_sources_by_hand():
    t = diversity_table(_scores(), COLUMNS)
    table, pairs = stability(t, COLUMNS, ["cnndm", "xsum"])
    assert pairs == [("a", "a"), ("b", "b"), ("references", "references")]
    row = table.set_index(["score", "version"]).loc[("cr", "raw")]
    # cnndm cr: a 2.5, b 4.0, refs 1.0 ; xsum: 1.1, 1.3, 1.2 -> ranks (2,3,1) vs (1,3,2)
    # concordant pairs: (a,b) yes, (a,refs) no, (b,refs) yes: tau = (2-1)/3
    assert row["kendall_tau"] == pytest.approx(1 / 3)
    assert row["spearman"] == pytest.approx(0.5)
    assert row["n"] == 3
    mapped, pairs = stability(t, COLUMNS, ["cnndm", "xsum"], {"a": "b", "b": "a"})
    assert pairs == [("a", "b"), ("b", "a")]
    assert np.isnan(mapped.set_index(["score", "version"]).loc[("cr", "raw"), "kendall_tau"])


def test_a_match_naming_a_source_without_scores_is_refused():
    t = diversity_table(_scores(), COLUMNS)
    with pytest.raises(GenmetricsError, match="stability.match: 'c' has no scores on 'cnndm'"):
        stability(t, COLUMNS, ["cnndm", "xsum"], {"c": "a"})


def test_the_markdown_shows_both_blocks_units_and_no_raw_values():
    t = diversity_table(_scores(), COLUMNS)
    length = length_correlations(t, COLUMNS)
    stable, pairs = stability(t, COLUMNS, ["cnndm", "xsum"])
    md = diversity_markdown(t, COLUMNS, length, stable, pairs, ["cnndm", "xsum"])
    assert "## cnndm: raw (3 sources)" in md and "## cnndm: truncated (3 sources)" in md
    assert "| source | seeds | words | cr ↓ | ngd ↑ |" in md
    assert "| a | 2 | 55.0 | 2.500 | 3.100 |" in md
    assert "| a | 2 | 20.0 | 2.000 |" in md  # the truncated block: cut length, cut score
    assert "Stability across datasets (Table 2): cnndm against xsum" in md
    assert "None" not in md and "nan" not in md


# ---------------------------------------------------------------- the plan


@pytest.fixture
def study(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))
    return yaml.safe_load((REPO / "configs" / "summary_diversity.yaml").read_text())


def test_the_plan_pairs_each_entry_with_its_truncated_twin(study):
    plan = load_plan(study, SCHEMA)
    cols = {c["label"]: c for c in plan.diversity["columns"]}
    assert list(cols) == [
        "compression_ratio",
        "pos_compression_ratio",
        "ngram_diversity",
        "self_repetition",
        "hom_rougel",
        "hom_bertscore",
        "self_bleu",
        "mattr",
        "hdd",
    ]  # fmt: skip  (the paper's nine columns, in its order)
    assert cols["mattr"]["cut_entry"] is None and cols["hdd"]["direction"] == "higher"
    assert cols["hom_bertscore"]["cut_entry"] == "hom_bertscore_cut"
    assert cols["hom_rougel"]["cut_entry"] == "hom_rougel_cut"  # not the BERTScore one
    assert cols["ngram_diversity"]["direction"] == "higher"
    assert plan.diversity["stability"]["datasets"] == ["cnndm", "xsum"]
    assert plan.results.diversity_markdown in plan.targets.all
    paper = plan.diversity["paper"]
    assert paper["path"] == "resources/papers/summary-diversity.csv"
    assert (REPO / paper["path"]).is_file()
    assert paper["datasets"] == {"cnndm": "CNN/DM", "xsum": "XSUM"}
    assert paper["columns"]["mattr"] == "MATTR" and len(paper["columns"]) == 9
    assert plan.results.diversity_side_by_side_markdown in plan.targets.all


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["analysis"]["diversity"].update(entries=["nope"]),
         r"analysis.diversity.entries\[0\]: 'nope' is not in metrics"),
        (lambda c: c["analysis"]["diversity"].update(entries=["self_bleu_cut"]),
         r"analysis.diversity.entries\[0\]: 'self_bleu_cut' uses length_control"),
        (lambda c: c["analysis"]["diversity"]["stability"].update(datasets=["cnndm", "cnndm"]),
         "analysis.diversity.stability.datasets: two different datasets"),
        (lambda c: c["analysis"]["diversity"]["stability"].update(datasets=["cnndm", "nope"]),
         "analysis.diversity.stability.datasets: 'nope' is not in datasets"),
        (lambda c: c["analysis"]["diversity"]["paper"]["datasets"].update(xsum="XSum"),
         r"analysis.diversity.paper.datasets.xsum: 'XSum' is not a dataset of the paper's"),
        (lambda c: c["analysis"]["diversity"]["paper"]["datasets"].update(nope="XSUM"),
         "analysis.diversity.paper.datasets: 'nope' is not in datasets"),
        (lambda c: c["analysis"]["diversity"]["paper"]["columns"].update(rouge="CR"),
         "analysis.diversity.paper.columns: 'rouge' is not a column"),
        (lambda c: c["analysis"]["diversity"]["paper"]["columns"].update(mattr="TTR"),
         "analysis.diversity.paper.columns.mattr: 'TTR' is not a column of the paper's"),
        (lambda c: c["metrics"]["rouge"].update(length_control="shortest_models"),
         "metrics.rouge.length_control: shortest_models leaves the human references out"),
    ],
)  # fmt: skip
def test_bad_diversity_settings_name_their_key(study, edit, message):
    cfg = copy.deepcopy(study)
    edit(cfg)
    with pytest.raises(GenmetricsError, match=message):
        load_plan(cfg, SCHEMA)


def test_shortest_models_cuts_among_the_models_only_and_skips_the_references(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    cfg = yaml.safe_load((REPO / "configs" / "instruction_diversity.yaml").read_text())
    plan = load_plan(cfg, SCHEMA)
    inputs = plan.score_inputs("alpaca", "vicuna-7b/seed0", "self_bleu_cut")
    assert not any("/references" in p for p in inputs["group"])
    assert len(inputs["group"]) == 10
    targets = set(plan.targets.scores)
    ref = plan.results.score.format(dataset="alpaca", source="references", entry="self_bleu")
    ref_cut = plan.results.score.format(
        dataset="alpaca", source="references", entry="self_bleu_cut"
    )
    assert ref in targets and ref_cut not in targets
    # with shortest (the summary study), the references are cut and scored too
    study = yaml.safe_load((REPO / "configs" / "summary_diversity.yaml").read_text())
    plan = load_plan(study, SCHEMA)
    group = plan.score_inputs("cnndm", "t5-11b/seed0", "self_bleu_cut")["group"]
    assert any(p.endswith("cnndm/references.jsonl") for p in group) and len(group) == 25


def test_shortest_models_cuts_each_response_to_the_shortest_response(tmp_path):
    """Hand-made: two models answer two instructions; the (longer) instructions take no part
    in the cut, so each response becomes as long as the shorter response to its instruction."""
    from genmetrics.io import write_jsonl
    from genmetrics.scoring.job import score_entry

    refs = tmp_path / "references.jsonl"
    write_jsonl(refs, [{"id": "i1", "text": "one two three four five six seven"},
                       {"id": "i2", "text": "a b c d e f g h"}])  # fmt: skip
    m1, m2 = tmp_path / "m1.jsonl", tmp_path / "m2.jsonl"
    write_jsonl(m1, [{"id": "i1", "prompt_id": "i1", "text": "x y z w"},
                     {"id": "i2", "prompt_id": "i2", "text": "p q"}])  # fmt: skip
    write_jsonl(m2, [{"id": "i1", "prompt_id": "i1", "text": "u v"},
                     {"id": "i2", "prompt_id": "i2", "text": "r s t"}])  # fmt: skip
    settings = {"metric": "ngram_diversity", "params": {"num_n": 1, "round": None},
                "reference": None, "length_control": "shortest_models"}  # fmt: skip
    rec = score_entry(settings, entry="ngd_cut", dataset="d", source="m1/seed0",
                      candidate=m1, group=[m1, m2])  # fmt: skip
    # m1 cut: "x y" (i1: min 4, 2) and "p q" (i2: min 2, 3): 4 distinct of 4 words
    assert rec["values"]["mean_words"] == 2.0
    assert rec["values"]["ngram_diversity"] == 1.0
    # with the instructions in the group (shortest), nothing changes here: they are longer
    rec2 = score_entry({**settings, "length_control": "shortest"}, entry="ngd_cut",
                       dataset="d", source="m1/seed0", candidate=m1,
                       group=[refs, m1, m2])  # fmt: skip
    assert rec2["values"]["mean_words"] == 2.0
    # but a short reference cuts everything under shortest, and not under shortest_models
    write_jsonl(refs, [{"id": "i1", "text": "one"}, {"id": "i2", "text": "a"}])
    rec3 = score_entry({**settings, "length_control": "shortest"}, entry="ngd_cut",
                       dataset="d", source="m1/seed0", candidate=m1,
                       group=[refs, m1, m2])  # fmt: skip
    assert rec3["values"]["mean_words"] == 1.0


def test_without_a_cut_of_the_references_both_versions_leave_them_out():
    """shortest_models scores no cut of the references: the length correlation of the raw
    score then runs over the models too (the same sources as the cut), and the truncated
    block does not list the references."""
    df = _scores()
    df = df[~((df["model"] == "references") & (df["entry"] == "cr_cut"))]
    t = diversity_table(df, COLUMNS)
    corr = length_correlations(t, COLUMNS).set_index(["dataset", "score", "version"])
    assert corr.loc[("cnndm", "cr", "raw"), "n"] == 2  # a and b only
    assert corr.loc[("cnndm", "ngd", "raw"), "n"] == 3  # no twin: every source
    md = diversity_markdown(t, COLUMNS, corr.reset_index())
    assert "## cnndm: truncated (2 sources)" in md and "## cnndm: raw (3 sources)" in md
    truncated = md.split("## cnndm: truncated")[1].split("##")[0]
    assert "references" not in truncated


def test_spearman_p_is_exact_for_few_sources():
    from genmetrics.studies.shaib_diversity.tables import spearman_exact

    # a perfect order of 4: 2 of the 24 orderings reach |rho| = 1
    rho, p = spearman_exact(np.array([1.0, 2, 3, 4]), np.array([10.0, 20, 30, 40]))
    assert rho == pytest.approx(1.0) and p == pytest.approx(2 / 24)
    # rho = 0.8 for 4: |rho| >= 0.8 in 2 (rho = 1 or -1) + 3 + 3 (rho = +-0.8) = 8 of 24
    rho, p = spearman_exact(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4]))
    assert rho == pytest.approx(0.8) and p == pytest.approx(8 / 24)
    # above max_n: scipy's t approximation
    x = np.arange(10.0)
    y = np.array([0, 2, 1, 3, 5, 4, 6, 8, 7, 9.0])
    assert spearman_exact(x, y)[1] == pytest.approx(stats.spearmanr(x, y)[1])
