"""Means over seeds with standard errors (Le Bronnec et al. (2024), Fig. B.2) and P/R
against the number of in-context examples (their Fig. 8): hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from genmetrics import GenmetricsError
from genmetrics.analysis.seed_means import few_shot_table, parsed_table, seed_means


def _rows(dataset, model, metric, name, values, entry=None, reference="references"):
    return [
        dict(
            dataset=dataset,
            model=model,
            seed=s,
            reference=reference,
            metric=metric,
            entry=entry or metric,
            name=name,
            value=v,
        )
        for s, v in enumerate(values)
    ]


def test_mean_std_and_standard_error_over_seeds():
    scores = pd.DataFrame(
        _rows("web", "a", "mauve", "mauve", [0.5, 0.6, 0.7])
        + _rows("web", "b", "mauve", "mauve", [0.9])
        + _rows("web", "references", "self_bleu", "self_bleu", [0.3])
        + _rows("web", "a", "self_bleu", "self_bleu", [0.1, 0.2])
    )
    t = seed_means(scores, ["mauve"])
    a = t[t["model"] == "a"].iloc[0]
    assert a["mean"] == pytest.approx(0.6) and a["std"] == pytest.approx(0.1)
    assert a["se"] == pytest.approx(0.1 / math.sqrt(3)) and a["n_seeds"] == 3
    # 95% t interval: 0.6 ± t(0.975, 2) · 0.1/√3, t(0.975, 2) = 4.302653 (by hand: 0.248414)
    assert (a["ci_low"], a["ci_high"]) == pytest.approx((0.351586, 0.848414), abs=1e-6)
    assert a["level"] == 0.95
    b = t[t["model"] == "b"].iloc[0]
    assert b["n_seeds"] == 1 and math.isnan(b["se"])  # one seed: no error bar
    assert math.isnan(b["ci_low"]) and math.isnan(b["ci_high"])
    assert set(t["model"]) == {"a", "b"}  # other metrics are not mixed in
    # the human references have no seeds: never a bar
    assert seed_means(scores, ["self_bleu"])["model"].tolist() == ["a"]


def test_few_shot_table_puts_variants_on_their_n(tmp_path):
    from genmetrics.figures.bars import few_shot_lines, value_bars

    scores = pd.DataFrame(
        _rows("bios-n0", "m", "precision_recall", "precision", [0.2, 0.4])
        + _rows("bios-n0", "m", "precision_recall", "recall", [0.5, 0.5])
        + _rows("bios-n3", "m", "precision_recall", "precision", [0.6, 0.8])
        + _rows("bios-n3", "m", "precision_recall", "recall", [0.3, 0.1])
        + _rows("web", "m", "precision_recall", "precision", [0.9, 0.9])
    )
    variants = {"bios-n0": {"dataset": "bios", "n": 0}, "bios-n3": {"dataset": "bios", "n": 3}}
    t = few_shot_table(scores, variants)
    assert t[["dataset", "name", "n"]].values.tolist() == [
        ["bios", "precision", 0],
        ["bios", "precision", 3],
        ["bios", "recall", 0],
        ["bios", "recall", 3],
    ]
    assert t["mean"].tolist() == pytest.approx([0.3, 0.7, 0.5, 0.2])
    assert t["se"].tolist() == pytest.approx([0.1, 0.1, 0.0, 0.1])  # std/sqrt(2)
    with pytest.raises(GenmetricsError, match="needs 'dataset' and 'n'"):
        few_shot_table(scores, {"bios-n0": {"n": 0}})
    stats = {
        ("bios-n0", "m", 0): {"texts": 50, "unparsed": 40},
        ("bios-n3", "m", 0): {"texts": 50, "unparsed": 5},
        ("web", "m", 0): {"texts": 50},
    }
    parsed = parsed_table(stats, variants)
    assert parsed[["n", "unparsed"]].values.tolist() == [[0, 40], [3, 5]]
    assert parsed["parsed_share"].tolist() == pytest.approx([0.2, 0.9])
    few_shot_lines(t, tmp_path / "fs.png", parsed)
    value_bars(seed_means(scores, ["precision_recall"]), tmp_path / "bars.png", "precision")
    assert (tmp_path / "fs.png").stat().st_size > 10_000
    assert (tmp_path / "bars.png").stat().st_size > 10_000


def test_mauve_bars_draw_the_t_interval_and_say_one_seed(tmp_path, monkeypatch):
    import genmetrics.figures.bars as module

    figs = []
    save = module._save
    monkeypatch.setattr(module, "_save", lambda fig, path: (figs.append(fig), save(fig, path)))
    scores = pd.DataFrame(
        _rows("web", "a", "mauve", "mauve", [0.5, 0.6, 0.7])
        + _rows("web", "b", "mauve", "mauve", [0.9])
    )
    table = seed_means(scores, ["mauve"])
    module.value_bars(table, tmp_path / "bars.png", "mauve")
    ax = figs[0].axes[0]
    from matplotlib.container import ErrorbarContainer

    (whiskers,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segments = whiskers.lines[2][0].get_segments()
    a_low, a_high = sorted(segments[0][:, 1])
    assert (a_low, a_high) == pytest.approx((0.351586, 0.848414), abs=1e-6)
    assert np.ptp(segments[1][:, 1]) == 0  # one seed: no whisker
    texts = [t.get_text() for t in ax.texts]
    assert "n = 3 seeds" in texts and "1 seed:\nno interval" in texts
    assert "95% t interval" in figs[0].get_suptitle()  # said once, in the figure's title
