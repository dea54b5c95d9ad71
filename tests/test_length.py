"""Length control: mean words, truncation to the shortest source per prompt, length correlation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.analysis.length import length_correlation, mean_words
from genmetrics.data.words import truncate_words
from genmetrics.scoring.length_control import truncate_to_shortest


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
            "mean_words": [100.0, 200.0, 300.0, 400.0, 500.0, 600.0],
            "distinct_2": [0.9, 0.8, 0.75, 0.5, 0.55, 0.3],
            "mauve": [0.1, 0.4, 0.2, 0.3, 0.6, 0.5],
            "flat": [1.0] * 6,
            "model": ["a", "b", "c", "d", "e", "f"],
        }
    )
    out = length_correlation(df)
    assert list(out.index) == ["distinct_2", "mauve", "flat"]
    # ranks of distinct_2: 6 5 4 2 3 1 against 1…6: Σd² = 68, ρ = 1 − 6·68/(6·35)
    assert out.loc["distinct_2", "spearman"] == pytest.approx(1 - 6 * 68 / 210)
    assert out.loc["distinct_2", "pearson"] == pytest.approx(
        np.corrcoef(df.mean_words, df.distinct_2)[0, 1]
    )
    assert out.loc["mauve", "spearman"] == pytest.approx(
        stats.spearmanr(df.mean_words, df.mauve).statistic
    )
    # Fisher z with the Bonett–Wright standard error sqrt((1 + ρ²/2)/(n − 3)), by hand
    assert out.loc["distinct_2", ["spearman_low", "spearman_high"]].tolist() == pytest.approx(
        [-0.9961326478, -0.3826513363]
    )
    assert out.loc["distinct_2", "level"] == 0.95
    assert out.loc["distinct_2", "interval"] == "fisher_z"
    assert np.isnan(out.loc["flat", "pearson"]) and out.loc["flat", "n"] == 6
    assert out.loc["flat", "constant"] and not out.loc["flat", "too_few"]
    with pytest.raises(GenmetricsError, match="mean_words"):
        length_correlation(df.drop(columns="mean_words"))


def test_fisher_interval_by_hand():
    from genmetrics.analysis.statistics import degenerate_interval, fisher_interval

    # r = 0.5 over 12 points: tanh(atanh(0.5) ± 1.959964 / 3)
    assert fisher_interval(0.5, 12) == pytest.approx((-0.1036416812, 0.8344542852))
    assert np.isnan(fisher_interval(0.5, 3)[0])  # n − 3 = 0: no interval
    low, high = fisher_interval(1.0, 20, method="spearman")
    assert (low, high) == (1.0, 1.0) and degenerate_interval(low, high)
    assert not degenerate_interval(np.nan, np.nan) and not degenerate_interval(0.2, 0.3)


def _drawn(monkeypatch):
    """The figures the length module draws, kept open for inspection."""
    import genmetrics.figures.length as module

    figs = []
    save = module._save
    monkeypatch.setattr(module, "_save", lambda fig, path: (figs.append(fig), save(fig, path)))
    return figs


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [ax.get_title() for ax in fig.axes]


def test_length_correlation_over_three_sources_says_too_few(tmp_path, monkeypatch):
    """Three sources (the demo's models) rank perfectly by length: ρ = 1, which is noise
    (p = 1/3). The table reports no ρ and the figure draws no bar and no number, only
    "too few"."""
    from matplotlib.patches import Rectangle

    from genmetrics.analysis.statistics import MIN_CORRELATION_POINTS
    from genmetrics.figures.length import length_figure

    df = pd.DataFrame(
        {"mean_words": [30.0, 40.0, 50.0], "distinct_2": [0.9, 0.8, 0.7], "mauve": [0.2, 0.4, 0.5]}
    )
    out = length_correlation(df)
    assert MIN_CORRELATION_POINTS == 5
    assert out["too_few"].all() and (out["n"] == 3).all()
    assert out[["spearman", "pearson", "spearman_low", "spearman_high"]].isna().all().all()
    figs = _drawn(monkeypatch)
    length_figure(out, tmp_path / "l.png", 3)
    (fig,) = figs
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_width() != 0]
    assert bars == []
    texts = _texts(fig)
    assert sum(t.startswith("too few sources") for t in texts) == 2, texts
    assert not any("1.00" in t or "ρ =" in t for t in texts), texts
    assert any("(n=3)" in t.get_text() for t in fig.axes[0].get_yticklabels())
    assert (tmp_path / "l.png").read_bytes()[:4] == b"\x89PNG"


def test_length_figure_states_n_and_the_interval(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    w = np.linspace(20, 80, 9)
    df = pd.DataFrame({"mean_words": w, "cr": w / 10, "d2": 1 - w / 100 + rng.normal(0, 0.05, 9)})
    out = length_correlation(df)
    from genmetrics.figures.length import length_figure

    figs = _drawn(monkeypatch)
    length_figure(out, tmp_path / "l.png", 9)
    texts = _texts(figs[0])
    lo, hi = out.loc["d2", ["spearman_low", "spearman_high"]]
    d2 = out.loc["d2", "spearman"]
    assert f"ρ = {d2:+.2f}  [{lo:+.2f}, {hi:+.2f}]" in texts
    # a perfect ρ has a zero-width interval: printed as none
    assert "ρ = +1.00  (no interval: a perfect ρ)" in texts
    assert not any("[+1.00, +1.00]" in t for t in texts)
    assert any("Fisher z" in t for t in texts)


def _write(path, rows):
    from genmetrics.io import write_jsonl

    write_jsonl(path, rows)
    return str(path)


def test_shortest_texts_pairs_references_by_their_own_id():
    from genmetrics.scoring.length_control import shortest_texts

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
    from genmetrics.io import read_jsonl
    from genmetrics.scoring.from_files import score_files
    from genmetrics.scoring.length_control import score_shortest, shortest_texts

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
    for i, model in enumerate(["a", "b", "c", "d", "e"]):
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
    assert n == 5 and corr.loc[head, "spearman"] == pytest.approx(-1.0)
    assert corr.loc[head, "n"] == 5 and not corr.loc[head, "too_few"]
    four, n = length_analysis(pd.DataFrame(rows[:8]))  # four sources: too few
    assert n == 4 and four.loc[head, "too_few"] and np.isnan(four.loc[head, "spearman"])
    empty, n = length_analysis(pd.DataFrame(rows[::2]))  # no mean_words
    assert empty.empty and list(empty.columns)[:1] == ["pearson"]
