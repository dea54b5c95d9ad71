"""Scaling analysis (FACE-2 §5.2, Table 2): valid cells, evaluator summary, paired bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from genmetrics import GenmetricsError
from genmetrics.studies.face2_scaling.bootstrap import bootstrap_valid_ratio
from genmetrics.studies.face2_scaling.valid_cells import (
    cell_validity,
    ensemble_valid,
    format_table,
    is_valid,
    summarise_evaluators,
    valid_cell_table,
)

# ---------------------------------------------------------------- is_valid


@pytest.mark.parametrize(
    ("values", "higher", "expected"),
    [
        ([1.0, 2.0, 3.0], True, True),
        ([1.0, 2.0, 3.0], False, False),
        ([3.0, 2.0, 1.0], False, True),
        ([3.0, 2.0, 1.0], True, False),
        ([1.0, 3.0, 2.0], True, False),  # middle model best: not ordered by size
        ([2.0, 1.0, 3.0], False, False),
        ([1.0, 2.0, 2.0], True, False),  # tie: invalid
        ([2.0, 2.0, 1.0], False, False),  # tie: invalid
        ([0.1, 0.2], True, True),
        ([0.2, 0.1], True, False),
        ([0.2, 0.1], False, True),
        ([0.5, 0.5], True, False),
        ([0.5, 0.5], False, False),
    ],
)
def test_is_valid_hand_cases(values, higher, expected):
    assert is_valid(values, higher) is expected


@pytest.mark.parametrize("values", [[1.0], [], [1.0, math.nan], [1.0, math.inf, 3.0]])
def test_is_valid_rejects_short_or_non_finite(values):
    with pytest.raises(GenmetricsError, match="values_by_size"):
        is_valid(values, True)


# ---------------------------------------------------------------- valid_cell_table

# members deliberately listed out of size order: the table must sort by size
FAMILIES = {"A": {"a3": 3.0, "a1": 1.0, "a2": 2.0}, "B": {"b2": 2.0, "b1": 1.0}}

# (task, model) -> value; a3 is missing on t3 -> A/t3 skipped
VALUES = {
    ("t1", "a1"): 1.0,
    ("t1", "a2"): 2.0,
    ("t1", "a3"): 3.0,  # A/t1 increasing
    ("t2", "a1"): 3.0,
    ("t2", "a2"): 2.0,
    ("t2", "a3"): 1.0,  # A/t2 decreasing
    ("t3", "a1"): 1.0,
    ("t3", "a2"): 2.0,  # A/t3: a3 missing
    ("t1", "b1"): 1.0,
    ("t1", "b2"): 2.0,  # B/t1 increasing
    ("t2", "b1"): 2.0,
    ("t2", "b2"): 2.0,  # B/t2 tie
    ("t3", "b1"): 1.0,
    ("t3", "b2"): 5.0,  # B/t3 increasing
}


def _scores(metrics, evaluator=None):
    rows = [
        {"metric": m, "task": t, "model": model, "value": v}
        for m in metrics
        for (t, model), v in VALUES.items()
    ]
    rows.append({"metric": metrics[0], "task": "t1", "model": "outsider", "value": 99.0})
    df = pd.DataFrame(rows).sample(frac=1.0, random_state=3).reset_index(drop=True)
    if evaluator is not None:
        df["evaluator"] = evaluator
    return df


def test_valid_cell_table_hand_counts():
    table = valid_cell_table(_scores(["hi", "lo"]), FAMILIES, {"hi": True, "lo": False})
    assert list(table.columns[:6]) == ["metric", "evaluator", "cells", "valid", "ratio", "baseline"]
    t = table.set_index("metric")
    # cells: A/t1, A/t2, B/t1, B/t2, B/t3 (A/t3 skipped)
    assert t.loc["hi", "cells"] == 5 and t.loc["lo", "cells"] == 5
    assert t.loc["hi", "skipped"] == 1 and t.loc["lo", "skipped"] == 1
    # hi: A/t1 ✓, A/t2 ✗, B/t1 ✓, B/t2 ✗ (tie), B/t3 ✓
    assert t.loc["hi", "valid"] == 3
    assert t.loc["hi", "ratio"] == pytest.approx(3 / 5)
    # lo: only A/t2 (decreasing) ✓; the B/t2 tie is invalid in both directions
    assert t.loc["lo", "valid"] == 1
    assert t.loc["lo", "ratio"] == pytest.approx(1 / 5)
    # baseline = mean(1/3!, 1/3!, 1/2!, 1/2!, 1/2!) = (1/6 + 1/6 + 1/2 + 1/2 + 1/2) / 5 = 11/30
    assert t.loc["hi", "baseline"] == pytest.approx(11 / 30)
    assert t.loc["lo", "baseline"] == pytest.approx(11 / 30)
    assert t.loc["hi", "evaluator"] is None
    detail = t.loc["hi", "cells_detail"].split("; ")
    assert sorted(detail) == sorted(["A/t1:✓", "A/t2:✗", "B/t1:✓", "B/t2:✗", "B/t3:✓"])
    assert "A/t3" in t.loc["hi", "skipped_detail"] and "a3" in t.loc["hi", "skipped_detail"]


def test_valid_cell_table_zero_cells_and_nan_as_missing():
    scores = pd.DataFrame(
        [
            {"metric": "z", "task": "t1", "model": "a1", "value": 0.3},
            {"metric": "z", "task": "t1", "model": "a2", "value": math.nan},  # missing
            {"metric": "z", "task": "t1", "model": "a3", "value": 0.9},
        ]
    )
    row = valid_cell_table(scores, FAMILIES, {"z": True}).iloc[0]
    assert row["cells"] == 0 and row["skipped"] == 1
    assert math.isnan(row["ratio"]) and math.isnan(row["baseline"])


def test_valid_cell_table_per_evaluator():
    a = _scores(["hi"], evaluator="e1")
    b = _scores(["hi"], evaluator="e2")
    b.loc[(b["task"] == "t2") & (b["model"] == "a1"), "value"] = 0.0  # A/t2 becomes 0, 2, 1: ✗
    b.loc[(b["task"] == "t2") & (b["model"] == "b2"), "value"] = 3.0  # B/t2 becomes 2, 3: ✓
    table = valid_cell_table(pd.concat([a, b]), FAMILIES, {"hi": True})
    assert list(table["evaluator"]) == ["e1", "e2"]
    assert list(table["valid"]) == [3, 4]


@pytest.mark.parametrize(
    ("families", "directions", "match"),
    [
        ({"A": {"a1": 1.0, "a2": 1.0}}, {"hi": True, "lo": False}, "family 'A'.*equal size"),
        ({"A": {"a1": 1.0}}, {"hi": True, "lo": False}, "family 'A'.*>= 2 members"),
        ({"A": {"a1": 1.0, "a2": -2.0}}, {"hi": True, "lo": False}, "model 'a2'"),
        (FAMILIES, {"hi": True}, "metric 'lo'"),
        (FAMILIES, {"hi": True, "lo": "yes"}, r"directions\['lo'\]"),
    ],
)
def test_valid_cell_table_errors(families, directions, match):
    with pytest.raises(GenmetricsError, match=match):
        valid_cell_table(_scores(["hi", "lo"]), families, directions)


def test_valid_cell_table_missing_column_and_duplicates():
    with pytest.raises(GenmetricsError, match="'value'"):
        valid_cell_table(_scores(["hi"]).drop(columns="value"), FAMILIES, {"hi": True})
    dup = pd.concat([_scores(["hi"]), _scores(["hi"]).iloc[:1]])
    with pytest.raises(GenmetricsError, match="expected one"):
        valid_cell_table(dup, FAMILIES, {"hi": True})


# ---------------------------------------------------------------- summarise_evaluators


def test_summarise_evaluators_mean_sd():
    table = pd.DataFrame(
        {
            "metric": ["face", "face", "mauve"],
            "evaluator": ["gpt2", "llama", "gpt2"],
            "ratio": [0.5, 1.0, 0.25],
        }
    )
    s = summarise_evaluators(table).set_index("metric")
    assert list(s.columns[:2]) == ["gpt2", "llama"]
    assert s.loc["face", "gpt2"] == 0.5 and s.loc["face", "llama"] == 1.0
    assert s.loc["face", "mean"] == pytest.approx(0.75)
    # sample SD of {0.5, 1.0}: sqrt(((0.25)^2 + (0.25)^2) / 1) = 0.25 * sqrt(2) = 0.35355
    assert s.loc["face", "sd"] == pytest.approx(0.3536, abs=1e-4)
    assert s.loc["face", "mean (SD)"] == "0.75 (0.35)"
    # one evaluator: SD undefined
    assert s.loc["mauve", "mean"] == pytest.approx(0.25)
    assert math.isnan(s.loc["mauve", "sd"]) and math.isnan(s.loc["mauve", "llama"])
    assert s.loc["mauve", "mean (SD)"] == "0.25"


def test_summarise_from_valid_cell_table_and_format():
    table = valid_cell_table(_scores(["hi", "lo"]), FAMILIES, {"hi": True, "lo": False})
    s = summarise_evaluators(table)
    assert "ratio" in s.columns  # no evaluator column
    text = format_table(s, table["baseline"].iloc[0], ci={"hi": (0.4, 0.8)})
    lines = text.splitlines()
    assert lines[0].split("|")[1].strip() == "metric" and "95% CI" in lines[0]
    assert lines[-1].split("|")[1].strip() == "random" and "0.37" in lines[-1]
    hi = next(line for line in lines if line.startswith("| hi "))
    assert "0.60" in hi and "[0.40, 0.80]" in hi
    lo = next(line for line in lines if line.startswith("| lo "))
    assert "0.20" in lo and "–" in lo  # no CI given for lo
    assert len({len(line) for line in lines}) == 1  # aligned columns


# ---------------------------------------------------------------- bootstrap

SIZES = {"F": {"s": 1.0, "m": 2.0, "l": 3.0}}


def _mean_of(items: np.ndarray):
    return lambda idx: float(items[idx].mean())


def _experiment(n_tasks, n_items, scale, null, seed=0):
    """Cells F/task_i; member value = mean of per-item numbers ~ N(size or 0, scale)."""
    rng = np.random.default_rng(seed)
    cells, n = {}, {}
    for i in range(n_tasks):
        key = ("F", f"task{i}")
        cells[key] = {
            m: _mean_of(rng.normal(0.0 if null else size, scale, n_items))
            for m, size in SIZES["F"].items()
        }
        n[key] = n_items
    return cells, n


def test_bootstrap_larger_models_clearly_better():
    cells, n = _experiment(n_tasks=8, n_items=30, scale=0.1, null=False)
    res = bootstrap_valid_ratio(cells, SIZES, n, True, n_boot=200, seed=1)
    assert res["failed"] == 0 and len(res["replicates"]) == 200
    assert res["low"] >= 0.9 and res["high"] == pytest.approx(1.0)
    # the same data judged lower-is-better is never valid
    res_lo = bootstrap_valid_ratio(cells, SIZES, n, False, n_boot=50, seed=1)
    assert res_lo["high"] == 0.0


def test_bootstrap_null_near_random_baseline():
    cells, n = _experiment(n_tasks=100, n_items=20, scale=1.0, null=True)
    res = bootstrap_valid_ratio(cells, SIZES, n, True, n_boot=300, seed=7)
    assert abs(res["mean"] - 1 / 6) < 0.1
    assert res["low"] <= res["mean"] <= res["high"]


def test_bootstrap_deterministic_and_paired():
    cells, n = _experiment(n_tasks=4, n_items=15, scale=1.0, null=True)
    a = bootstrap_valid_ratio(cells, SIZES, n, True, n_boot=50, seed=3)
    b = bootstrap_valid_ratio(cells, SIZES, n, True, n_boot=50, seed=3)
    c = bootstrap_valid_ratio(cells, SIZES, n, True, n_boot=50, seed=4)
    np.testing.assert_array_equal(a["replicates"], b["replicates"])
    assert (a["low"], a["high"], a["mean"]) == (b["low"], b["high"], b["mean"])
    assert not np.array_equal(a["replicates"], c["replicates"])

    # every member of a cell sees the same index array in a replicate; draws follow the
    # documented protocol rng.integers(0, n, n) per cell in sorted key order
    seen: dict[str, list[np.ndarray]] = {"s": [], "m": [], "l": []}

    def spy(model, value):
        def f(idx):
            seen[model].append(idx.copy())
            return value

        return f

    paired = {("F", "t"): {"s": spy("s", 1.0), "m": spy("m", 2.0), "l": spy("l", 3.0)}}
    bootstrap_valid_ratio(paired, SIZES, {("F", "t"): 9}, True, n_boot=5, seed=11)
    rng = np.random.default_rng(11)
    for r in range(5):
        expected = rng.integers(0, 9, 9)
        for model in seen:
            np.testing.assert_array_equal(seen[model][r], expected)


def test_bootstrap_counts_failed_replicates():
    n_items, n_boot, seed = 6, 100, 5

    def flaky(idx):
        if idx[0] == 0:
            raise GenmetricsError("degenerate resample")
        return float(idx.size)

    def nan_sometimes(idx):
        return math.nan if idx[0] == 1 else 10.0

    cells = {("F", "t"): {"s": lambda idx: 0.0, "m": flaky, "l": nan_sometimes}}
    res = bootstrap_valid_ratio(cells, SIZES, {("F", "t"): n_items}, True, n_boot, seed)
    rng = np.random.default_rng(seed)
    expected = sum(rng.integers(0, n_items, n_items)[0] in (0, 1) for _ in range(n_boot))
    assert 0 < expected < n_boot
    assert res["failed"] == expected
    assert len(res["replicates"]) == n_boot - expected
    assert np.all(res["replicates"] == 1.0)  # 0 < 6 < 10 whenever it succeeds


def test_bootstrap_all_failed_and_bad_inputs():
    def boom(idx):
        raise GenmetricsError("boom")

    cells = {("F", "t"): {"s": boom, "m": boom, "l": boom}}
    res = bootstrap_valid_ratio(cells, SIZES, {("F", "t"): 3}, True, 10, 0)
    assert res["failed"] == 10 and math.isnan(res["mean"]) and math.isnan(res["low"])

    ok = {("F", "t"): {"s": len, "m": len, "l": len}}
    with pytest.raises(GenmetricsError, match=r"\('F', 't'\).*every member"):
        bootstrap_valid_ratio(
            {("F", "t"): {"s": len, "m": len}}, SIZES, {("F", "t"): 3}, True, 5, 0
        )
    with pytest.raises(GenmetricsError, match="n_items"):
        bootstrap_valid_ratio(ok, SIZES, {}, True, 5, 0)
    with pytest.raises(GenmetricsError, match="family 'G'"):
        bootstrap_valid_ratio({("G", "t"): {"x": len}}, SIZES, {("G", "t"): 3}, True, 5, 0)
    with pytest.raises(GenmetricsError, match="n_boot"):
        bootstrap_valid_ratio(ok, SIZES, {("F", "t"): 3}, True, 0, 0)


def test_bootstrap_progress_bar_runs(capsys):
    cells, n = _experiment(n_tasks=2, n_items=5, scale=0.1, null=False)
    quiet = bootstrap_valid_ratio(cells, SIZES, n, True, 20, 2)
    loud = bootstrap_valid_ratio(cells, SIZES, n, True, 20, 2, progress=True)
    np.testing.assert_array_equal(quiet["replicates"], loud["replicates"])
    assert "bootstrap" in capsys.readouterr().err


# ---------------------------------------------------------------- ensembles

UP, DOWN = True, False  # a member's direction: higher is better / lower is better


@pytest.mark.parametrize(
    ("values_by_size", "directions", "expected"),
    [
        # SO↑, EMD↓, KL↓ over 3 models; KL prefers the smaller model on every pair: 2 of 3
        # members for the larger one on every pair -> valid
        ([[0.1, 0.5, 0.5], [0.2, 0.4, 0.6], [0.3, 0.3, 0.7]], [UP, DOWN, DOWN], True),
        # the same, with EMD also dissenting on the (s, m) pair only: 1 of 3 there -> invalid
        ([[0.1, 0.4, 0.5], [0.2, 0.45, 0.6], [0.3, 0.3, 0.7]], [UP, DOWN, DOWN], False),
        # two models; EMD tied, KL for the larger: 2 of 3 -> valid
        ([[0.1, 0.5, 0.5], [0.2, 0.5, 0.4]], [UP, DOWN, DOWN], True),
        # EMD tied, KL against: 1 for, 1 against, 1 tie -> not a majority
        ([[0.1, 0.5, 0.5], [0.2, 0.5, 0.6]], [UP, DOWN, DOWN], False),
        # two members tied, one for: 1 of 3 is not a majority (face.judge would call it won)
        ([[0.1, 0.5, 0.5], [0.2, 0.5, 0.5]], [UP, DOWN, DOWN], False),
        # every member tied
        ([[0.1, 0.5], [0.1, 0.5]], [UP, DOWN], False),
        # a majority cycle (three members ranking s<m<l, m<l<s, l<s<m): the majority prefers
        # m over s (2:1) and l over m (2:1) but s over l (2:1) -> invalid
        ([[1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [3.0, 2.0, 1.0]], [UP, UP, UP], False),
        # four models, no member orders all four (each swaps one neighbouring pair), yet
        # every pair has 2 of 3 members for the larger model -> valid
        (
            [[2.0, 1.0, 1.0], [1.0, 3.0, 2.0], [3.0, 2.0, 4.0], [4.0, 4.0, 3.0]],
            [UP, UP, UP],
            True,
        ),
        # five members, 3 for and 2 against on the one pair -> valid; 2 for, 3 against -> not
        ([[0, 0, 0, 1, 1], [1, 1, 1, 0, 0]], [UP] * 5, True),
        ([[0, 0, 1, 1, 1], [1, 1, 0, 0, 0]], [UP] * 5, False),
        # an even ensemble: 2 of 4 is not more than half
        ([[0, 0, 1, 1], [1, 1, 0, 0]], [UP] * 4, False),
    ],
)
def test_ensemble_valid_hand_cases(values_by_size, directions, expected):
    assert ensemble_valid(values_by_size, directions) is expected


@pytest.mark.parametrize(
    ("values", "higher"),
    [
        ([1.0, 2.0, 3.0], True),
        ([3.0, 2.0, 1.0], True),
        ([1.0, 2.0, 2.0], True),
        ([2.0, 1.0], False),
    ],
)
def test_ensemble_of_one_member_is_is_valid(values, higher):
    assert ensemble_valid([[v] for v in values], [higher]) is is_valid(values, higher)


@pytest.mark.parametrize(
    ("values_by_size", "directions", "match"),
    [
        ([[1.0, 2.0]], [UP, UP], ">= 2 models"),
        ([[1.0], [2.0]], [UP, UP], "1 member value"),
        ([[1.0, math.nan], [2.0, 1.0]], [UP, UP], "non-finite"),
        ([1.0, 2.0], [UP], "2-d"),
    ],
)
def test_ensemble_valid_refuses_bad_shapes(values_by_size, directions, match):
    with pytest.raises(GenmetricsError, match=match):
        ensemble_valid(values_by_size, directions)


def _ensemble_scores() -> pd.DataFrame:
    """Members so (↑), emd (↓), kl (↓) of family A (a1 < a2 < a3) on t1, t2 under evaluators
    e1 and e2; kl has no e2 scores."""
    vals = {
        # t1: so and emd for the larger models, kl against -> ensemble valid, kl alone not
        ("so", "e1", "t1"): [0.1, 0.2, 0.3],
        ("emd", "e1", "t1"): [0.5, 0.4, 0.3],
        ("kl", "e1", "t1"): [0.1, 0.2, 0.3],
        # t2: the cycle of the hand case above (three members ranking differently)
        ("so", "e1", "t2"): [1.0, 2.0, 3.0],
        ("emd", "e1", "t2"): [-3.0, -1.0, -2.0],
        ("kl", "e1", "t2"): [-2.0, -3.0, -1.0],
        ("so", "e2", "t1"): [0.3, 0.2, 0.1],
        ("emd", "e2", "t1"): [0.3, 0.4, 0.5],
    }
    rows = [
        {"metric": m, "evaluator": e, "task": t, "model": f"a{i + 1}", "value": v}
        for (m, e, t), vs in vals.items()
        for i, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_ensemble_rows_from_the_same_evaluators_members():
    fam = {"A": {"a1": 1.0, "a2": 2.0, "a3": 3.0}}
    directions = {"so": True, "emd": False, "kl": False}
    ens = {"ens3": ("so", "emd", "kl"), "ens2": ("so", "emd")}
    table = valid_cell_table(_ensemble_scores(), fam, directions, ens)
    rows = {(r.metric, r.evaluator): r for r in table.itertuples()}
    # ens3 under e1 only (kl has no e2 scores): t1 valid (2 of 3), t2 a cycle -> invalid
    assert (rows["ens3", "e1"].cells, rows["ens3", "e1"].valid) == (2, 1)
    assert rows["ens3", "e1"].cells_detail == "A/t1:✓; A/t2:✗"
    assert ("ens3", "e2") not in rows
    # ens2 (so, emd) under e2: both prefer the smaller models -> invalid
    assert (rows["ens2", "e2"].cells, rows["ens2", "e2"].valid) == (1, 0)
    # the members' own rows are unchanged: kl alone orders t1 the wrong way
    assert rows["kl", "e1"].cells_detail == "A/t1:✗; A/t2:✗"
    assert rows["ens3", "e1"].baseline == pytest.approx(1 / 6)
    assert list(table.metric[-3:]) == ["ens3", "ens2", "ens2"]  # after the metrics

    cells = cell_validity(_ensemble_scores(), fam, directions, ens)
    got = cells[cells.metric == "ens3"][["evaluator", "task", "valid", "members"]]
    assert got.values.tolist() == [["e1", "t1", True, 3], ["e1", "t2", False, 3]]


def test_ensemble_cell_with_a_missing_member_value_is_skipped():
    scores = _ensemble_scores()
    scores = scores[~((scores.metric == "kl") & (scores.task == "t2") & (scores.model == "a3"))]
    fam = {"A": {"a1": 1.0, "a2": 2.0, "a3": 3.0}}
    table = valid_cell_table(
        scores, fam, {"so": True, "emd": False, "kl": False}, {"ens3": ("so", "emd", "kl")}
    )
    row = table[table.metric == "ens3"].iloc[0]
    assert (row.cells, row.skipped) == (1, 1)
    assert row.skipped_detail == "A/t2(missing: a3)"


@pytest.mark.parametrize(
    ("ensembles", "match"),
    [
        ({"so": ("emd", "kl")}, "name of a scored metric"),
        ({"e": ("so", "so")}, "distinct"),
        ({"e": ()}, "distinct"),
        ({"e": ("so", "nope")}, r"\['nope'\] have no scores"),
    ],
)
def test_ensemble_errors(ensembles, match):
    fam = {"A": {"a1": 1.0, "a2": 2.0, "a3": 3.0}}
    with pytest.raises(GenmetricsError, match=match):
        valid_cell_table(
            _ensemble_scores(), fam, {"so": True, "emd": False, "kl": False}, ensembles
        )


def test_bootstrap_of_an_ensemble_row():
    """Members recompute on the same draw; each function returns (so↑, emd↓, kl↓)."""
    rng = np.random.default_rng(0)
    items = {m: rng.normal(size, 0.05, 20) for m, size in SIZES["F"].items()}

    def member_values(model, kl_sign):
        x = items[model]
        return lambda idx: (x[idx].mean(), -x[idx].mean(), kl_sign * x[idx].mean())

    # so and emd favour the larger models clearly; kl against: valid in every replicate
    cells = {("F", "t"): {m: member_values(m, +1.0) for m in SIZES["F"]}}
    res = bootstrap_valid_ratio(cells, SIZES, {("F", "t"): 20}, [True, False, False], 30, 0)
    assert res["failed"] == 0 and np.all(res["replicates"] == 1.0)
    # judged as the first member alone it is valid too; as kl alone never
    first = {("F", "t"): {m: (lambda idx, f=f: f(idx)[0]) for m, f in cells["F", "t"].items()}}
    assert bootstrap_valid_ratio(first, SIZES, {("F", "t"): 20}, True, 30, 0)["mean"] == 1.0
    both_wrong = {("F", "t"): {m: member_values(m, -1.0) for m in SIZES["F"]}}
    res = bootstrap_valid_ratio(both_wrong, SIZES, {("F", "t"): 20}, [False, True, True], 30, 0)
    assert np.all(res["replicates"] == 0.0)  # only one member for the larger model
    with pytest.raises(GenmetricsError, match="sequence of bools"):
        bootstrap_valid_ratio(cells, SIZES, {("F", "t"): 20}, "up", 30, 0)
