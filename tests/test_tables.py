"""The score tables' shared conventions (genmetrics.analysis.units; issue 26, item 3), from
hand-made score records through ``write_aggregates`` as the aggregate rule runs it:

* one scale per value, stated once in the header: a proportion reads 0–1 in every derived
  table (rep-n's % and sacreBLEU's 0–100 divided by 100), ``scores.csv`` keeps the metric's
  own numbers with their scale;
* the texts each value was computed on (``n_candidate``, ``n_reference``) beside it, in the
  CSVs and visible in the markdown;
* ``spread.csv`` on the headline's terms: the same value names, scale and std, with the
  reference size that explains where its mean differs.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from genmetrics.analysis.aggregate import read_scores, write_aggregates
from genmetrics.analysis.distribution import spread_analysis, spread_table
from genmetrics.analysis.headline import N_REFERENCES, N_TEXTS
from genmetrics.analysis.units import CONVENTION
from genmetrics.metrics.registry import SCALES, TABLE_SCALES, get
from genmetrics.scoring.from_files import score_loaded


def record(source: str, metric: str, values: dict, n: dict, reference=None, **keys) -> dict:
    """A score record as the workflow's score job writes it (the fields the tables read)."""
    return {
        "metric": metric,
        "entry": keys.get("entry", metric),
        "dataset": "news",
        "source": source,
        "reference": reference,
        "values": values,
        "params": {},
        "n": n,
    }


def aggregate(tmp_path, records: list[dict]) -> dict:
    """Write the records, run write_aggregates; the tables it wrote."""
    paths = []
    for i, rec in enumerate(records):
        paths.append(tmp_path / f"rec{i}.json")
        paths[-1].write_text(json.dumps(rec), encoding="utf-8")
    out = {k: tmp_path / f"{k}" for k in ("scores", "summary", "headline", "md")}
    write_aggregates(paths, out["scores"], out["summary"], out["headline"], out["md"])
    return {
        "scores": read_scores(out["scores"]),
        "summary": pd.read_csv(out["summary"]),
        "headline": pd.read_csv(out["headline"]),
        "md": out["md"].read_text(encoding="utf-8"),
    }


@pytest.fixture
def tables(tmp_path) -> dict:
    """Two seeds of one model and the human texts: SimCTG rep-n (%), sacreBLEU (0–100),
    distinct-n (0–1), HD-D and MATTR (MATTR excluded 2 texts of seed 1)."""
    recs = []
    for seed, (rep2, bleu, d1) in enumerate([(2.5, 12.0, 0.25), (3.5, 14.0, 0.35)]):
        src = f"gpt/seed{seed}"
        rep = {"rep_2": rep2, "rep_3": 1.0, "rep_4": 0.5, "diversity": 0.9, "mean_words": 40.0}
        recs += [
            record(src, "rep_n", rep, {"candidate": 10}),
            record(src, "bleu", {"bleu": bleu}, {"candidate": 10, "reference": 12}, "references"),
            record(src, "distinct_n", {"distinct_1": d1}, {"candidate": 10}),
            record(src, "hdd", {"hdd": 0.8}, {"candidate": 10}),
            record(src, "mattr", {"mattr": 0.7}, {"candidate": 10, "excluded": 2 * seed}),
        ]
    recs.append(record("references", "rep_n", {"rep_2": 1.0, "diversity": 0.97}, {"candidate": 12}))
    return aggregate(tmp_path, recs)


def test_the_tables_convention_comes_from_the_registry():
    assert all(s in SCALES and shown in SCALES for s, (shown, _) in TABLE_SCALES.items())
    assert get("rep_n").scale("rep_2") == "%"  # the metric's own numbers stay SimCTG's
    assert get("rep_n").table_scale("rep_2") == ("0–1", 0.01)
    assert get("bleu").table_scale("bleu") == ("0–1", 0.01)
    assert get("rep_n").table_scale("diversity") == ("0–1", 1.0)
    assert get("perplexity").table_scale("perplexity") == ("≥ 1", 1.0)


def test_headline_values_are_on_their_declared_scales(tables):
    long = tables["headline"].set_index(["model", "entry", "value_name"])
    rep2 = long.loc[("gpt", "rep_n", "rep_2")]
    assert rep2["scale"] == "0–1"
    assert rep2["mean"] == pytest.approx(0.03) and rep2["std"] == pytest.approx(np.sqrt(2) / 200)
    assert long.loc[("references", "rep_n", "rep_2"), "mean"] == pytest.approx(0.01)
    bleu = long.loc[("gpt", "bleu", "bleu")]
    assert (bleu["scale"], bleu["mean"]) == ("0–1", pytest.approx(0.13))
    d1 = long.loc[("gpt", "distinct_n", "distinct_1")]  # registered 0–1: as it is
    assert (d1["scale"], d1["mean"]) == ("0–1", pytest.approx(0.30))
    assert set(tables["headline"]["scale"]) <= set(SCALES) - set(TABLE_SCALES)
    # scores.csv keeps each metric's own numbers, with their registered scale
    s = tables["scores"].set_index(["model", "seed", "name"])
    assert s.loc[("gpt", 0, "rep_2"), ["value", "scale"]].tolist() == [2.5, "%"]
    assert s.loc[("gpt", 1, "bleu"), ["value", "scale"]].tolist() == [14.0, "0–100"]
    assert s.loc[("gpt", 1, "mean_words"), "scale"] == "words"


def test_markdown_headers_carry_the_scale_stated_once(tables):
    md = tables["md"]
    diversity = md.split("## diversity")[1].split("## ")[0]
    head = next(line for line in diversity.splitlines() if line.startswith("| dataset"))
    assert "rep_n: rep_2 ↓ (0–1)" in head and "distinct_n: distinct_1 ↑ (0–1)" in head
    assert "bleu ↑ (0–1)" in md and "(%)" not in md and "(0–100)" not in md
    assert CONVENTION in md and "Divided by 100 in this table: bleu, rep_n: rep_2." in md
    row = next(line for line in diversity.splitlines() if line.startswith("| news | gpt |"))
    assert "| 0.03 ± 0.0071 |" in row and "%" not in row  # the scale is not repeated per cell


def test_reference_size_columns(tables):
    long = tables["headline"].set_index(["model", "entry", "value_name"])
    assert long.loc[("gpt", "bleu", "bleu"), ["n_candidate", "n_reference"]].tolist() == [10, 12]
    assert long.loc[("gpt", "rep_n", "rep_2"), "n_candidate"] == 10
    assert pd.isna(long.loc[("gpt", "rep_n", "rep_2"), "n_reference"])  # no reference
    assert long.loc[("references", "rep_n", "rep_2"), "n_candidate"] == 12
    assert long.loc[("gpt", "mattr", "mattr"), "n_candidate"] == 8  # the fewest: seed 1's
    s = tables["scores"].set_index(["model", "seed", "name"])
    assert s.loc[("gpt", 1, "mattr"), "n_candidate"] == 8  # 10 texts, 2 excluded
    assert s.loc[("gpt", 0, "mattr"), "n_candidate"] == 10
    # the markdown: the row's sizes beside its values, a value with other sizes says so
    md = tables["md"]
    ref = md.split("## reference")[1].split("## ")[0].splitlines()
    assert f"| dataset | model | {N_TEXTS} | {N_REFERENCES} | bleu ↑ (0–1) |" in ref
    assert "| news | gpt | 10 | 12 | 0.13 ± 0.014 |" in ref
    lexical = md.split("## lexical")[1].split("## ")[0].splitlines()
    assert f"| dataset | model | {N_TEXTS} | hdd ↑ (0–1) | mattr ↑ (0–1) |" in lexical
    assert "| news | gpt | 10 | 0.8 ± 0 | 0.7 ± 0 [n 8–10] |" in lexical


def test_summary_follows_the_same_conventions(tables):
    summary = tables["summary"].set_index(["model", "entry", "name"])
    rep2 = summary.loc[("gpt", "rep_n", "rep_2")]
    assert (rep2["scale"], rep2["mean"], rep2["n_seeds"]) == ("0–1", pytest.approx(0.03), 2)
    assert rep2["std"] == pytest.approx(np.sqrt(2) / 200)
    assert summary.loc[("gpt", "rep_n", "rep_3"), "mean"] == pytest.approx(0.01)
    assert summary.loc[("gpt", "rep_n", "mean_words"), "scale"] == "words"
    assert summary.loc[("gpt", "bleu", "bleu"), ["n_candidate", "n_reference"]].tolist() == [10, 12]
    assert summary.loc[("gpt", "mattr", "mattr"), "n_candidate"] == 8
    # the headline's values are the summary's, on the same scale
    long = tables["headline"].set_index(["model", "entry", "value_name"])
    for key in [
        ("gpt", "rep_n", "rep_2"),
        ("gpt", "bleu", "bleu"),
        ("references", "rep_n", "rep_2"),
    ]:
        assert (
            summary.loc[key, ["mean", "scale"]].tolist()
            == long.loc[key, ["mean", "scale"]].tolist()
        )


def blobs(seed: int, n: int, d: int = 5) -> np.ndarray:
    centers = np.random.default_rng(7).normal(size=(3, d)) * 4
    rng = np.random.default_rng(seed)
    return centers[rng.integers(0, 3, n)] + rng.normal(size=(n, d))


@pytest.mark.parametrize("fraction", [1.0, 0.8])
def test_spread_and_headline_agree(tmp_path, fraction):
    """Two seeds scored against 30 human texts (the workflow's score job) and the spread job
    of the same entry: the same value names and scale; vary Q against the whole pool
    (fraction 1) is the headline's mean ± std exactly, against a resample it says so."""
    ref = blobs(0, 30)
    cands = [blobs(1, 25), blobs(2, 25)]
    params = {"k": 3, "pca": False}
    recs = []
    for seed, cand in enumerate(cands):
        rows = [{"id": str(i)} for i in range(len(cand))]
        refs = [{"id": str(i)} for i in range(len(ref))]
        rec = score_loaded("precision_recall", cand, rows, ref, refs, params)
        rec.update(entry="pr", dataset="news", source=f"gpt/seed{seed}", reference="references")
        recs.append(rec)
    tables = aggregate(tmp_path, recs)
    settings = {"reference_resamples": 2, "fraction": fraction, "seed": 0}
    spread = spread_analysis("precision_recall", ref, cands, params, settings)
    keys = {"dataset": "news", "model": "gpt", "entry": "pr", "metric": "precision_recall"}
    table = spread_table([{**keys, **spread}]).set_index(["vary", "value_name"])
    long = tables["headline"].set_index(["entry", "value_name"])
    assert set(long.loc["pr"].index) == {"precision", "recall"}
    for name in ("precision", "recall"):
        row, head = table.loc[("candidate", name)], long.loc[("pr", name)]
        assert row["headline"] and row["scale"] == head["scale"] == "0–1"
        assert row["n_runs"] == head["n_seeds"] == 2
        assert row["n_candidate"] == head["n_candidate"] == 25
        assert row["reference_pool"] == head["n_reference"] == 30
        assert "headline" in row["over"] and "reference set 0" in row["over"]
        if fraction == 1.0:  # the same texts: the headline's numbers
            assert row["n_reference"] == 30
            assert row["mean"] == pytest.approx(head["mean"], abs=1e-12)
            assert row["std"] == pytest.approx(head["std"], abs=1e-12)
        else:  # a resample of 24 of the 30 texts: the stated reason the means differ
            assert row["n_reference"] == 24
    assert not table.loc[("candidate", "density"), "headline"]  # a value of the full table
    assert table.loc[("candidate", "density"), "scale"] == "≥ 0"
    assert (table.loc["reference", "n_candidate"] == 25).all()
