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


def _write(path, rows):
    from genmetrics.io import write_jsonl

    write_jsonl(path, rows)
    return str(path)


def test_shortest_texts_pairs_references_by_their_own_id():
    from genmetrics.analysis.length import shortest_texts

    out = shortest_texts(
        {
            "refs": [{"id": "p1", "text": "a b c d"}, {"id": "p2", "text": "e f g"}],
            "gen": [
                {"id": "p1", "prompt_id": "p1", "text": "a b"},
                {"id": "p2", "prompt_id": "p2", "text": "e f g h"},
            ],
        }
    )
    assert [r["text"] for r in out["refs"]] == ["a b", "e f g"]
    assert [r["text"] for r in out["gen"]] == ["a b", "e f g"]
    assert out["refs"][0]["prompt_id"] == "p1" and out["refs"][0]["n_words_original"] == 4


def test_score_shortest_equals_scoring_the_cut_files(tmp_path):
    from genmetrics.analysis.length import score_shortest, shortest_texts
    from genmetrics.io import read_jsonl
    from genmetrics.scoring import score_files

    refs = [{"id": f"p{i}", "text": " ".join(f"w{j}" for j in range(3 + i))} for i in range(6)]
    gens = [
        {"id": f"p{i}", "prompt_id": f"p{i}", "text": " ".join(f"w{j % 4}" for j in range(9 - i))}
        for i in range(6)
    ]
    group = [_write(tmp_path / "refs.jsonl", refs), _write(tmp_path / "gen.jsonl", gens)]
    cut = shortest_texts({p: read_jsonl(p) for p in group})
    for name, ref in (("ngram_diversity", None), ("rouge", group[0])):
        got = score_shortest(name, group[1], ref, group, {})
        want = score_files(
            name,
            _write(tmp_path / "c.jsonl", cut[group[1]]),
            None if ref is None else _write(tmp_path / "r.jsonl", cut[ref]),
            {},
        )
        assert got["values"] == want["values"] and got["n"] == want["n"], name
        assert got["params"] == want["params"]
    lengths = [min(3 + i, 9 - i) for i in range(6)]
    assert got["values"]["mean_words"] == pytest.approx(np.mean(lengths))
    with pytest.raises(GenmetricsError, match="not in the group"):
        score_shortest("rouge", group[1], str(tmp_path / "other.jsonl"), group)
    with pytest.raises(GenmetricsError, match="only for metrics on texts"):
        score_shortest("precision_recall", group[1], group[0], group)


def test_length_analysis_of_the_scores_table():
    from genmetrics.analysis.length import length_analysis
    from genmetrics.metrics import get

    head = get("distinct_n").headline[0]  # the value the length analysis correlates
    rows = []
    for i, model in enumerate(["a", "b", "c", "d"]):
        for name, value in ((head, 1 - i / 10), ("mean_words", 10.0 + i)):
            rows.append(
                {
                    "dataset": "x",
                    "model": model,
                    "seed": 0,
                    "reference": None,
                    "metric": "distinct_n",
                    "entry": "distinct_n",
                    "name": name,
                    "value": value,
                }
            )
    corr, n = length_analysis(pd.DataFrame(rows))
    assert n == 4 and corr.loc[head, "spearman"] == pytest.approx(-1.0)
    empty, n = length_analysis(pd.DataFrame(rows[::2]))  # no mean_words
    assert empty.empty and list(empty.columns)[:1] == ["pearson"]
