"""Length control: mean words, truncation to the shortest source per prompt, length correlation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.analysis.length import (
    length_correlation,
    mean_words,
    truncate_to_shortest,
    truncate_words,
)


def test_mean_words_and_truncate_words():
    assert mean_words(["a b c", "d", "  e\nf  "]) == pytest.approx(2.0)
    assert truncate_words("one  two\nthree four", 3) == "one  two\nthree"  # spacing kept
    assert truncate_words("one two", 5) == "one two"
    assert truncate_words("naïve café 日本", 2) == "naïve café"
    with pytest.raises(GenmetricsError):
        mean_words([])
    with pytest.raises(GenmetricsError):
        mean_words("a b")


def test_truncate_to_shortest():
    sources = {
        "human": [
            {"prompt_id": "p1", "text": "a b c d e"},
            {"prompt_id": "p2", "text": "x y"},
            {"prompt_id": "p3", "text": "only here"},
        ],
        "model": [
            {"prompt_id": "p1", "text": "1 2 3", "id": "m1"},
            {"prompt_id": "p1", "text": "1 2 3 4 5 6", "id": "m1b"},
            {"prompt_id": "p2", "text": "u v w z", "id": "m2"},
        ],
    }
    out = truncate_to_shortest(sources)
    assert [r["text"] for r in out["human"]] == ["a b c", "x y"]  # p3 dropped
    assert [r["text"] for r in out["model"]] == ["1 2 3", "1 2 3", "u v"]
    assert out["model"][1]["id"] == "m1b" and out["model"][1]["n_words_original"] == 6
    assert sources["model"][1]["text"] == "1 2 3 4 5 6"  # input untouched
    by_pos = truncate_to_shortest(
        {"a": [{"i": 0, "text": "a b"}], "b": [{"i": 0, "text": "c d e"}]}, key="i"
    )
    assert by_pos["b"][0]["text"] == "c d"
    with pytest.raises(GenmetricsError, match="no 'prompt_id'"):
        truncate_to_shortest({"a": [{"text": "x"}]})
    with pytest.raises(GenmetricsError, match="shared"):
        truncate_to_shortest(
            {"a": [{"prompt_id": 1, "text": "x"}], "b": [{"prompt_id": 2, "text": "y"}]}
        )


def test_length_correlation():
    df = pd.DataFrame(
        {
            "mean_words": [100.0, 200.0, 300.0, 400.0],
            "distinct_2": [0.9, 0.8, 0.75, 0.5],
            "mauve": [0.1, 0.4, 0.2, 0.3],
            "flat": [1.0, 1.0, 1.0, 1.0],
            "model": ["a", "b", "c", "d"],
        }
    )
    out = length_correlation(df)
    assert list(out.index) == ["distinct_2", "mauve", "flat"]
    assert out.loc["distinct_2", "spearman"] == pytest.approx(-1.0)
    assert out.loc["distinct_2", "pearson"] == pytest.approx(
        np.corrcoef(df.mean_words, df.distinct_2)[0, 1]
    )
    assert out.loc["mauve", "spearman"] == pytest.approx(
        stats.spearmanr(df.mean_words, df.mauve).statistic
    )
    assert np.isnan(out.loc["flat", "pearson"]) and out.loc["flat", "n"] == 4
    with pytest.raises(GenmetricsError, match="mean_words"):
        length_correlation(df.drop(columns="mean_words"))
