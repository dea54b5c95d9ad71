"""The side-by-side table of a study and its paper (genmetrics.analysis.paper_comparison), on
a hand-built tidy scores table and hand-built and shipped paper tables: the paper's value as
printed and as a number, ours with its interval and n, and whether the direction agrees."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from genmetrics import GenmetricsError
from genmetrics.analysis.aggregate import COLUMNS, EXTRA_COLUMNS
from genmetrics.analysis.paper_comparison import (
    FIGURE_NOTE,
    SIDE_BY_SIDE_COLUMNS,
    Match,
    paper_number,
    paper_tables,
    side_by_side,
)

#: t_{0.975, 2}, the 95% two-sided quantile of Student's t with 2 degrees of freedom
T_975_2 = 4.302652729911275


@pytest.mark.parametrize(
    ("printed", "number"),
    [
        ("0.356 (0.053)", 0.356),
        ("0.36(0.05)", 0.36),
        ("1.00 ± 0.00", 1.0),
        ("0.005 ± 0.001", 0.005),
        ("4.159*", 4.159),
        ("41/500", 0.082),
        ("1/6 ≈ 0.167", 0.167),
        ("-0.87", -0.87),
        ("−0.95", -0.95),
        ("0", 0.0),
        ("452.25", 452.25),
        ("84,437", 84437.0),  # Shaib et al. Table 12 (thousands separated by commas)
        ("6,594,646", 6594646.0),
        ("4550", 4550.0),
    ],
)
def test_paper_number_reads_what_is_printed(printed, number):
    assert paper_number(printed) == pytest.approx(number, abs=1e-12)


def test_an_empty_value_is_nan_and_text_without_a_number_is_refused():
    assert math.isnan(paper_number(""))
    assert math.isnan(paper_number(None))
    with pytest.raises(ValueError, match="no number"):
        paper_number("n/a")


def _paper() -> pd.DataFrame:
    rows = [
        ("pr-llm", "Fig. 1", "Llama-2 7B Chat", "precision", "0.399", "read off the figure"),
        ("pr-llm", "Fig. 1", "Llama-2 7B", "precision", "0.365", ""),
        ("pr-llm", "Fig. 1", "Llama-2 7B Chat", "recall", "0.703", ""),
        ("pr-llm", "Fig. 1", "Llama-2 7B", "recall", "0.792", ""),
        ("pr-llm", "Fig. B.2", "each model", "MAUVE", "", FIGURE_NOTE),
    ]
    return pd.DataFrame(rows, columns=["paper", "table", "row", "column", "value", "note"])


def _scores() -> pd.DataFrame:
    """A tidy scores table as aggregate writes it: chat and base, three seeds each."""
    rows = []
    values = {
        ("chat", "precision"): [0.90, 0.92, 0.94],
        ("base", "precision"): [0.86, 0.87, 0.88],
        ("chat", "recall"): [0.93, 0.95, 0.97],
        ("base", "recall"): [0.89, 0.90, 0.91],
    }
    for (model, name), vals in values.items():
        for seed, v in enumerate(vals):
            rows.append(
                {
                    "dataset": "webtext",
                    "model": model,
                    "seed": seed,
                    "reference": "references",
                    "metric": "precision_recall",
                    "entry": "pr",
                    "name": name,
                    "value": v,
                    "scale": "0–1",
                    "n_candidate": 80 - seed,  # the fewest texts is 78
                    "n_reference": 80,
                    "lower": v - 0.05,
                    "upper": v + 0.04,
                    "level": 0.95,
                    "resamples": 1000,
                    "interval": "prompts",
                }
            )
    rows.append({**rows[0], "dataset": "other", "value": 0.1})  # never selected
    return pd.DataFrame(rows, columns=COLUMNS + EXTRA_COLUMNS)


def _chat_vs_base(name: str, column: str) -> Match:
    sel = {"dataset": "webtext", "entry": "pr", "name": name}
    return Match(
        paper=("Fig. 1", "Llama-2 7B Chat", column),
        ours={**sel, "model": "chat"},
        versus=(("Fig. 1", "Llama-2 7B", column), {**sel, "model": "base"}),
    )


def test_seeds_are_averaged_with_a_t_interval_and_the_direction_is_compared():
    out = side_by_side(
        _paper(),
        _scores(),
        [_chat_vs_base("precision", "precision"), _chat_vs_base("recall", "recall")],
    )
    assert list(out.columns) == SIDE_BY_SIDE_COLUMNS
    p, r = out.iloc[0], out.iloc[1]
    assert (p["table"], p["row"], p["column"], p["paper"]) == (
        "Fig. 1",
        "Llama-2 7B Chat",
        "precision",
        "0.399",
    )
    assert p["paper_value"] == pytest.approx(0.399)
    # chat precision over 3 seeds: 0.90, 0.92, 0.94 -> mean 0.92, sd 0.02
    half = T_975_2 * 0.02 / math.sqrt(3)
    assert p["ours"] == pytest.approx(0.92, abs=1e-12)
    assert (p["lower"], p["upper"]) == pytest.approx((0.92 - half, 0.92 + half), abs=1e-9)
    assert p["interval"] == "95% t over 3 rows" and p["n_rows"] == 3
    assert p["n"] == 78  # the fewest texts of any seed
    # the paper: chat 0.399 > base 0.365; ours: 0.92 > 0.87
    assert (p["paper_direction"], p["our_direction"], p["direction_agrees"]) == (
        "positive",
        "positive",
        True,
    )
    # recall: the paper's chat 0.703 < base 0.792; ours 0.95 > 0.90: the direction disagrees
    assert (r["paper_direction"], r["our_direction"], r["direction_agrees"]) == (
        "negative",
        "positive",
        False,
    )
    assert r["ours"] == pytest.approx(0.95, abs=1e-12)
    assert p["note"] == "read off the figure"


def test_a_t_interval_over_seeds_stays_on_the_value_s_scale():
    """Three seeds of a 0–1 value near 1: 0.90, 0.99, 1.00 (mean 0.9633, sd 0.0551): the t
    interval's upper end, 0.9633 + 4.303 · 0.0551 / √3 = 1.100, is cut to 1; the lower stays."""
    scores = _scores()
    chat_recall = (scores["model"] == "chat") & (scores["name"] == "recall")
    chat_recall &= scores["dataset"] == "webtext"
    scores.loc[chat_recall, "value"] = [0.90, 0.99, 1.00]
    row = side_by_side(_paper(), scores, [_chat_vs_base("recall", "recall")]).iloc[0]
    vals = np.array([0.90, 0.99, 1.00])
    half = T_975_2 * vals.std(ddof=1) / math.sqrt(3)
    assert vals.mean() + half > 1.09
    assert row["upper"] == 1.0
    assert row["lower"] == pytest.approx(vals.mean() - half, abs=1e-9)
    assert row["interval"] == "95% t over 3 rows, cut to its scale 0–1"


def test_one_row_keeps_its_own_interval_and_size(tmp_path):
    scores = _scores()
    path = tmp_path / "scores.csv"
    scores.to_csv(path, index=False)  # read back as the tidy table
    m = Match(
        paper=("Fig. 1", "Llama-2 7B", "recall"),
        ours={"dataset": "webtext", "model": "base", "seed": 2, "name": "recall"},
    )
    row = side_by_side(_paper(), path, [m]).iloc[0]
    assert row["ours"] == pytest.approx(0.91)
    assert (row["lower"], row["upper"]) == pytest.approx((0.86, 0.95))
    assert row["interval"] == "prompts" and row["n"] == 78 and row["n_rows"] == 1
    assert row["paper_direction"] is None and row["direction_agrees"] is None  # no versus


def test_a_figure_only_number_has_no_paper_value_and_no_direction():
    m = Match(
        paper=("Fig. B.2", "each model", "MAUVE"),
        ours={"dataset": "webtext", "model": "chat", "name": "precision"},
        versus=(("Fig. 1", "Llama-2 7B", "precision"), {"model": "base", "name": "precision"}),
    )
    row = side_by_side(_paper(), _scores(), [m]).iloc[0]
    assert row["paper"] == "" and math.isnan(row["paper_value"])
    assert row["paper_direction"] is None and row["our_direction"] == "positive"
    assert row["direction_agrees"] is None
    assert row["note"] == FIGURE_NOTE


def test_a_study_output_table_and_the_sign_against_zero():
    """Fig. 7 of the precision/recall paper (shipped with the biographies study) beside a
    correlation table of ours: Recall with Self-BLEU is −0.87 in the paper, +0.59 here."""
    ours = pd.DataFrame(
        {
            "a": ["recall", "precision"],
            "b": ["self_bleu", "mauve"],
            "method": ["spearman", "spearman"],
            "r": [0.59, 0.31],
            "lower": [-0.1, -0.3],
            "upper": [0.9, 0.8],
            "n": [15, 15],
        }
    )
    matches = [
        Match(("Fig. 7", "Recall", "Self-BLEU"), {"a": "recall", "b": "self_bleu"}, "zero", "r"),
        Match(("Fig. 7", "Precision", "MAUVE"), {"a": "precision", "b": "mauve"}, "zero", "r"),
    ]
    out = side_by_side("biographies", ours, matches)
    assert out["paper"].tolist() == ["-0.87", "0.75"]
    assert out["paper_value"].tolist() == pytest.approx([-0.87, 0.75])
    assert out["our_direction"].tolist() == ["positive", "positive"]
    assert out["direction_agrees"].tolist() == [False, True]
    assert out["n"].tolist() == [15, 15]
    assert out["interval"].tolist() == ["as given", "as given"]


def test_what_cannot_be_matched_is_an_error_naming_it():
    with pytest.raises(GenmetricsError, match="0 cell"):
        side_by_side(_paper(), _scores(), [Match(("Fig. 1", "Vicuna", "recall"), {})])
    with pytest.raises(GenmetricsError, match="no value of 'value' where"):
        side_by_side(
            _paper(), _scores(), [Match(("Fig. 1", "Llama-2 7B", "recall"), {"model": "gpt"})]
        )
    with pytest.raises(GenmetricsError, match="no column 'featurizer'"):
        side_by_side(
            _paper(), _scores(), [Match(("Fig. 1", "Llama-2 7B", "recall"), {"featurizer": "x"})]
        )
    with pytest.raises(GenmetricsError, match="no paper table"):
        paper_tables("no-such-study")


def test_the_shipped_tables_read_with_their_numbers():
    df = paper_tables("creative")
    cell = df[(df["table"] == "Table 1 (a)") & (df["row"] == "Recall")]
    assert cell.set_index("column")["number"].to_dict() == pytest.approx(
        {
            "Llama-2 70B Chat": 1.00,
            "Llama-2 13B Chat": 0.96,
            "Llama-2 7B Chat": 0.92,
            "Mistral 7B Instruct": 0.83,
            "Vicuna 7B": 0.96,
        }
    )
    figs = paper_tables("webtext")
    assert np.isnan(figs.loc[figs["value"].isna(), "number"]).all()
    assert (figs.loc[figs["value"].isna(), "note"] == FIGURE_NOTE).all()
