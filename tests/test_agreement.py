"""Human agreement (FACE-2 §5.3): Bradley–Terry strengths, metric judgments, agreement."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from scipy import optimize, stats

from genmetrics import GenmetricsError
from genmetrics.agreement.preference import agreement, bradley_terry, metric_judgments


def _rows(a: str, b: str, n_a: int, n_b: int, n_tie: int = 0) -> list[tuple[str, str, str]]:
    return [(a, b, "a")] * n_a + [(a, b, "b")] * n_b + [(a, b, "tie")] * n_tie


def _win_counts(rows, names, ties="half"):
    """wins[i, j] = times i beat j, written here independently of the module."""
    ix = {s: k for k, s in enumerate(names)}
    w = np.zeros((len(names), len(names)))
    for a, b, o in rows:
        i, j = ix[a], ix[b]
        if o == "a":
            w[i, j] += 1
        elif o == "b":
            w[j, i] += 1
        elif ties == "half":
            w[i, j] += 0.5
            w[j, i] += 0.5
    return w


# Transitive-ish data on three systems with every pair compared both ways.
THREE = (
    _rows("A", "B", 5, 2) + _rows("B", "C", 4, 3, 2) + _rows("A", "C", 6, 1) + _rows("C", "A", 1, 2)
)


def test_two_systems_closed_form():
    th = bradley_terry(_rows("A", "B", 3, 1))
    assert set(th) == {"A", "B"}
    assert th["A"] - th["B"] == pytest.approx(math.log(3), abs=1e-9)
    assert th["A"] + th["B"] == pytest.approx(0.0, abs=1e-12)  # log-strengths have mean 0
    # order of the pair in the tuple does not matter
    th2 = bradley_terry([("B", "A", "b")] * 3 + [("A", "B", "b")])
    assert th2["A"] - th2["B"] == pytest.approx(math.log(3), abs=1e-9)


def test_cyclic_balanced_case_is_all_equal():
    rows = _rows("A", "B", 2, 1) + _rows("B", "C", 2, 1) + _rows("C", "A", 2, 1)
    th = bradley_terry(rows)
    assert [th[s] for s in "ABC"] == pytest.approx([0.0, 0.0, 0.0], abs=1e-10)


def test_three_systems_mle_conditions():
    names = ["A", "B", "C"]
    th = bradley_terry(THREE)
    t = np.array([th[s] for s in names])
    w = _win_counts(THREE, names)
    n = w + w.T
    sig = 1 / (1 + np.exp(-(t[:, None] - t[None, :])))
    expected_wins = (n * sig).sum(axis=1)  # diagonal of n is 0
    np.testing.assert_allclose(expected_wins, w.sum(axis=1), atol=1e-8)
    assert t.mean() == pytest.approx(0.0, abs=1e-12)
    assert th["A"] > th["B"] > th["C"]


@pytest.mark.skipif(importlib.util.find_spec("choix") is not None, reason="choix covers this")
@pytest.mark.parametrize("ties", ["half", "drop"])
def test_matches_direct_likelihood_maximisation(ties):
    names = ["A", "B", "C", "D"]
    rows = THREE + _rows("D", "A", 2, 3, 1) + _rows("D", "C", 3, 1)
    w = _win_counts(rows, names, ties=ties)

    def nll(free):
        t = np.concatenate([[0.0], free])
        d = t[:, None] - t[None, :]
        return float(np.sum(w * np.logaddexp(0.0, -d)))  # −Σ w_ij log σ(θ_i − θ_j)

    res = optimize.minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-11})
    ref = np.concatenate([[0.0], res.x])
    ref -= ref.mean()
    th = bradley_terry(rows, ties=ties)
    np.testing.assert_allclose([th[s] for s in names], ref, atol=1e-6)


def test_ties_half_versus_drop():
    rows = _rows("A", "B", 2, 1, 2)
    half = bradley_terry(rows, ties="half")  # W_A = 2 + 1 = 3, W_B = 1 + 1 = 2
    drop = bradley_terry(rows, ties="drop")  # W_A = 2, W_B = 1
    assert half["A"] - half["B"] == pytest.approx(math.log(3 / 2), abs=1e-9)
    assert drop["A"] - drop["B"] == pytest.approx(math.log(2), abs=1e-9)
    # with "drop", a pair compared only through ties is not linked
    with pytest.raises(GenmetricsError, match="not connected"):
        bradley_terry(rows + [("B", "C", "tie"), ("C", "B", "tie")], ties="drop")
    with pytest.raises(GenmetricsError, match="ties"):
        bradley_terry(rows, ties="zero")


def test_alpha_regularises_all_wins_system():
    rows = _rows("A", "B", 3, 0)
    with pytest.raises(GenmetricsError, match="alpha") as e:
        bradley_terry(rows)
    assert "never wins: 'B'" in str(e.value) and "never loses: 'A'" in str(e.value)
    th = bradley_terry(rows, alpha=1.0)  # W_A = 3 + 1, W_B = 0 + 1
    assert all(math.isfinite(v) for v in th.values())
    assert th["A"] - th["B"] == pytest.approx(math.log(4), abs=1e-9)
    # a group that never loses to the rest, though every member wins and loses
    group = _rows("A", "B", 1, 1) + _rows("C", "D", 1, 1) + _rows("A", "C", 2, 0)
    with pytest.raises(GenmetricsError, match="never loses.*alpha"):
        bradley_terry(group)
    assert bradley_terry(group, alpha=0.5)["A"] > bradley_terry(group, alpha=0.5)["C"]


def test_disconnected_graph_names_components():
    rows = _rows("A", "B", 2, 1) + _rows("C", "D", 1, 2)
    with pytest.raises(GenmetricsError, match=r"\[\['A', 'B'\], \['C', 'D'\]\]"):
        bradley_terry(rows, alpha=1.0)


def test_bad_inputs_name_the_row():
    with pytest.raises(GenmetricsError, match=r"comparisons\[1\].*'win'"):
        bradley_terry([("A", "B", "a"), ("A", "B", "win")])
    with pytest.raises(GenmetricsError, match=r"comparisons\[0\].*itself"):
        bradley_terry([("A", "A", "a")])
    with pytest.raises(GenmetricsError, match="no comparisons"):
        bradley_terry([])
    with pytest.raises(GenmetricsError, match="converge"):
        bradley_terry(THREE, max_iter=2)


def test_metric_judgments_direction():
    a, b = [0.1, 0.5, 0.3, 0.30001], [0.2, 0.4, 0.3, 0.3]
    assert metric_judgments(a, b, higher_is_better=False) == ["a", "b", "tie", "b"]
    assert metric_judgments(a, b, higher_is_better=True) == ["b", "a", "tie", "a"]
    assert metric_judgments(a, b, higher_is_better=False, tie_tol=1e-3) == ["a", "b", "tie", "tie"]
    with pytest.raises(GenmetricsError, match="item 1"):
        metric_judgments([0.1, float("nan")], [0.2, 0.3], higher_is_better=False)
    with pytest.raises(GenmetricsError, match="equal length"):
        metric_judgments([0.1], [0.2, 0.3], higher_is_better=False)


# Ten items with a decisive human majority (A > B > C overall) and one human tie (last).
ITEMS = [
    ("A", "B"), ("B", "A"), ("A", "B"), ("B", "C"), ("C", "B"),
    ("B", "C"), ("A", "C"), ("C", "A"), ("A", "C"), ("A", "B"), ("A", "C"),
]  # fmt: skip
HUMAN = [
    ["a", "a", "b"], ["b", "b", "a"], ["b", "b", "a"], ["a", "a", "a"], ["b", "a", "b"],
    ["b", "b", "a"], ["a", "a", "b"], ["b", "b", "b"], ["b", "a", "b"], ["a", "a", "tie"],
    ["a", "b", "tie"],
]  # fmt: skip
MAJORITY = ["a", "b", "b", "a", "b", "b", "a", "b", "b", "a"]
# The metric follows the majority except on items 2 and 5; anything on the tied item 10.
METRIC = ["a", "b", "a", "a", "b", "a", "a", "b", "b", "a", "b"]


def test_agreement_item_level():
    assert sum(m == h for m, h in zip(METRIC, MAJORITY, strict=False)) == 8  # the fixture
    r = agreement(ITEMS, HUMAN, METRIC, n_boot=300, seed=1, alpha=0.5)
    assert r["item_agreement"] == pytest.approx(0.8, abs=1e-12)
    assert r["n_items"] == 11 and r["n_decisive_items"] == 10 and r["n_judgments"] == 33
    assert r["human_majority"] == {"a": 4, "b": 6, "tie": 1}
    lo, hi = r["pairwise_accuracy_ci"]
    assert 0 <= lo <= 0.8 <= hi <= 1 and lo < hi
    # the item-level CI is the bootstrap of ten 0/1 hits; with n_boot large it is ~[0.5, 1]
    assert lo >= 0.4
    # human strengths are the BT fit of all 33 annotator judgments
    assert r["human_bt"] == bradley_terry(
        [(*p, v) for p, vs in zip(ITEMS, HUMAN, strict=True) for v in vs], alpha=0.5
    )
    assert r["metric_bt"] == bradley_terry(
        [(*p, m) for p, m in zip(ITEMS, METRIC, strict=True)], alpha=0.5
    )


def test_agreement_rank_correlation_and_bootstrap():
    r = agreement(ITEMS, HUMAN, METRIC, n_boot=300, seed=1, alpha=0.5)
    h, m = r["human_bt"], r["metric_bt"]
    assert h["A"] > h["B"] > h["C"] and m["A"] > m["B"] > m["C"]
    assert r["spearman"] == pytest.approx(1.0) and r["kendall"] == pytest.approx(1.0)
    assert r["note"] is None
    lo, hi = r["spearman_ci"]
    assert -1 <= lo <= hi <= 1
    # with alpha > 0 only resamples whose metric strengths come out all equal are skipped
    assert r["spearman_boot_skipped"] < 30
    # alpha = 0: many resamples leave a system without a win or a loss; skipped and counted
    r0 = agreement(ITEMS, HUMAN, METRIC, n_boot=300, seed=1)
    assert r["spearman_boot_skipped"] < r0["spearman_boot_skipped"] < 300


def test_agreement_seeds():
    a = agreement(ITEMS, HUMAN, METRIC, n_boot=200, seed=3, alpha=0.5)
    b = agreement(ITEMS, HUMAN, METRIC, n_boot=200, seed=3, alpha=0.5)
    c = agreement(ITEMS, HUMAN, METRIC, n_boot=200, seed=4, alpha=0.5)
    assert a == b  # same seed, identical output
    assert a["pairwise_accuracy_ci"] == b["pairwise_accuracy_ci"]
    # other seed: same point estimates, other bootstrap draws
    assert c["item_agreement"] == a["item_agreement"] and c["spearman"] == a["spearman"]
    assert (c["pairwise_accuracy_ci"], c["spearman_ci"]) != (
        a["pairwise_accuracy_ci"],
        a["spearman_ci"],
    )


def test_agreement_two_systems_note_and_errors():
    items = [("X", "Y")] * 4
    human = [["a", "a"], ["a", "b"], ["b", "b"], ["a", "a"]]
    r = agreement(items, human, ["a", "a", "b", "b"], n_boot=50)
    assert r["spearman"] is None and r["kendall"] is None and r["spearman_ci"] is None
    assert "at least 3 systems" in r["note"]
    assert r["item_agreement"] == pytest.approx(2 / 3)  # majorities a, tie, b, a
    assert r["human_bt"]["X"] - r["human_bt"]["Y"] == pytest.approx(math.log(5 / 3))
    with pytest.raises(GenmetricsError, match=r"human\[1\]\[0\]"):
        agreement(items, [["a"], ["x"], ["a"], ["b"]], ["a"] * 4)
    with pytest.raises(GenmetricsError, match=r"metric\[3\]"):
        agreement(items, human, ["a", "a", "b", None])
    with pytest.raises(GenmetricsError, match=r"human\[0\].*string"):
        agreement(items, ["a", ["a"], ["a"], ["b"]], ["a"] * 4)
    with pytest.raises(GenmetricsError, match="differ in length"):
        agreement(items, human[:3], ["a"] * 4)
    with pytest.raises(GenmetricsError, match="metric judgments.*alpha"):
        agreement(items, human, ["a"] * 4)


def test_spearman_matches_scipy_on_returned_strengths():
    r = agreement(ITEMS, HUMAN, METRIC[:2] + ["b"] + METRIC[3:], n_boot=20, alpha=0.5)
    s = sorted(r["human_bt"])
    x = [r["human_bt"][k] for k in s]
    y = [r["metric_bt"][k] for k in s]
    assert r["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert r["item_agreement"] == pytest.approx(0.9)


def test_face_judgments_prefer_the_text_whose_spectrum_is_nearer_the_human_one():
    """Item by item: a text drawn from the human's own process beats one with its values
    shuffled in time (same values, no memory); mean surprisal is then a tie-free coin."""
    from genmetrics.agreement.preference import face_judgments

    rng = np.random.default_rng(0)

    def ar1(n, phi=0.85):
        x = np.zeros(n)
        for t in range(1, n):
            x[t] = phi * x[t - 1] + rng.normal()
        return np.abs(x) + 1.0

    human = [ar1(300) for _ in range(12)]
    close = [ar1(300) for _ in range(12)]
    shuffled = [rng.permutation(ar1(300)) for _ in range(12)]
    j = face_judgments(close, shuffled, human, {"pairing": "prompt"})
    assert j["corr"].count("a") >= 11 and j["ensemble3"].count("a") >= 10
    flipped = face_judgments(shuffled, close, human)
    assert flipped["corr"] == [{"a": "b", "b": "a", "tie": "tie"}[o] for o in j["corr"]]
    assert len(j["mean_surprisal"]) == 12
    short = face_judgments([np.array([1.0, 2.0])] + close[1:], shuffled, human)
    assert short["so"][0] == "tie"  # no spectrum for a 2-value text
