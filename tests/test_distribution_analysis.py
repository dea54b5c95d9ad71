"""analysis.distribution: seed/resample spread, N and k sweeps, AG-News set construction."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.analysis.distribution import (
    agnews_controlled_sets,
    check_orderings,
    controlled_experiment,
    default_ns,
    resample,
    run_metric,
    spread,
    sweep_k,
    sweep_n,
)
from genmetrics.metrics.precision_recall import prdc_exact


def blobs(seed: int, n: int, d: int = 6, n_modes: int = 4, scale: float = 1.0):
    centers = np.random.default_rng(42).normal(size=(4, d)) * 4
    rng = np.random.default_rng(seed)
    return centers[rng.integers(0, n_modes, n)] + rng.normal(size=(n, d)) * scale


def test_resample_is_seeded_and_without_replacement():
    pool = np.arange(100)[:, None] * np.ones((1, 2))
    a = resample(pool, 30, 3, seed=5)
    b = resample(pool, 30, 3, seed=5)
    assert len(a) == 3 and all(x.shape == (30, 2) for x in a)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert len(np.unique(a[0][:, 0])) == 30
    assert not np.array_equal(a[0], a[1])
    texts = [f"t{i}" for i in range(10)]
    assert len(set(resample(texts, 10, 1)[0])) == 10
    with pytest.raises(GenmetricsError):
        resample(texts, 11, 1)


def test_spread_by_hand_with_a_callable():
    """A toy metric (difference of means) makes every mean/std checkable by hand."""

    def toy(reference, candidate):
        return {"gap": float(np.mean(candidate) - np.mean(reference))}

    refs = [np.array([0.0]), np.array([1.0]), np.array([2.0])]
    cands = [np.array([10.0]), np.array([14.0])]
    rows = {r["vary"]: r for r in spread(toy, refs, cands)}
    # vary candidate: 10 - 0, 14 - 0
    assert rows["candidate"]["runs"] == [10.0, 14.0]
    assert rows["candidate"]["mean"] == 12.0
    assert rows["candidate"]["std"] == pytest.approx(np.sqrt(8.0))
    # vary reference: 10 - 0, 10 - 1, 10 - 2
    assert rows["reference"]["runs"] == [10.0, 9.0, 8.0]
    assert rows["reference"]["std"] == pytest.approx(1.0)
    # both: (0, 10), (1, 14)
    assert rows["both"]["runs"] == [10.0, 13.0]
    assert rows["both"]["n_runs"] == 2
    single = spread(toy, refs[:1], cands[:1])
    assert all(np.isnan(r["std"]) for r in single)


def test_spread_with_registered_metric():
    pool = blobs(0, 400)
    refs = resample(pool, 150, 3, seed=1)
    cands = [blobs(10 + s, 150, n_modes=2) for s in range(3)]  # drops 2 of 4 modes
    rows = spread("precision_recall", refs, cands, {"k": 3, "pca": False})
    got = {(r["vary"], r["value"]): r for r in rows}
    assert {v for v, _ in got} == {"candidate", "reference", "both"}
    direct = prdc_exact(refs[0], cands[1], [3])[3]
    assert got[("candidate", "recall")]["runs"][1] == pytest.approx(direct["recall"])
    # mode dropping: recall well below precision on average, and seeds vary a little
    assert got[("candidate", "recall")]["mean"] < got[("candidate", "precision")]["mean"] - 0.2
    assert 0 < got[("candidate", "recall")]["std"] < 0.1


def test_default_ns():
    assert default_ns(4000) == [100, 200, 500, 1000, 2000, 4000]
    assert default_ns(1000) == [100, 200, 500, 1000]
    assert default_ns(150) == [100, 150]


def test_sweep_n_matches_direct_computation_and_trends():
    p = blobs(1, 800)
    q = blobs(2, 800, scale=1.3)
    rows = sweep_n(p, q, [50, 200, 800], k=4, pca=False, repeats=2)
    assert [(r["n"], r["repeat"]) for r in rows] == [
        (50, 0),
        (50, 1),
        (200, 0),
        (200, 1),
        (800, 0),
        (800, 1),
    ]
    full = prdc_exact(p, q, [4])[4]
    last = rows[-1]
    for key in ("precision", "recall", "density", "coverage"):
        assert last[key] == pytest.approx(full[key])
    # repeats at N=50 differ (different subsamples), at full N they coincide
    assert rows[0]["precision"] != rows[1]["precision"] or rows[0]["recall"] != rows[1]["recall"]
    assert rows[-1] == {**rows[-2], "repeat": 1}
    with pytest.raises(GenmetricsError, match="sample sizes"):
        sweep_n(p, q, [900], pca=False)


def test_sweep_k_matches_prdc_and_is_monotone():
    prdc = pytest.importorskip("prdc")
    p = blobs(3, 300)
    q = blobs(4, 250, scale=1.2)
    rows = sweep_k(p, q, range(1, 11), pca=False)
    assert [r["k"] for r in rows] == list(range(1, 11))
    for r in (rows[0], rows[4], rows[9]):
        with contextlib.redirect_stdout(io.StringIO()):
            ref = prdc.compute_prdc(p, q, r["k"])
        for key in ("precision", "recall", "density", "coverage"):
            assert r[key] == pytest.approx(float(ref[key]), abs=1e-9)
    # larger k -> larger balls -> precision, recall and coverage never decrease
    for key in ("precision", "recall", "coverage"):
        vals = [r[key] for r in rows]
        assert all(b >= a for a, b in zip(vals[:-1], vals[1:], strict=True)), key
    # with PCA (default) the same call works on the reduced features
    assert len(sweep_k(p, q, [2, 5])) == 2


def _records():
    rng = np.random.default_rng(0)
    rows = []
    for lab in range(4):
        for i in range(60):
            rows.append({"label": lab, "text": f"topic{lab} item{i} {rng.integers(1e9)}"})
    rows.append({"label": 0, "text": rows[0]["text"]})  # a duplicate text
    return rows


def test_agnews_sets_composition():
    # World is needed for P (12) + Q1 (24) + Q2 (12) + Q3 (6) = 54 <= 60
    sets = agnews_controlled_sets(_records(), 24, seed=3)
    assert set(sets) == {"P", "Q1", "Q2", "Q3"}
    assert all(len(v) == 24 for v in sets.values())

    def labels(texts):
        return sorted({int(t.split()[0][-1]) for t in texts})

    assert labels(sets["P"]) == [0, 1] and labels(sets["Q2"]) == [0, 1]
    assert labels(sets["Q1"]) == [0]
    assert labels(sets["Q3"]) == [0, 1, 2, 3]
    counts = np.bincount([int(t.split()[0][-1]) for t in sets["Q3"]])
    assert counts.tolist() == [6, 6, 6, 6]
    everything = [t for v in sets.values() for t in v]
    assert len(everything) == len(set(everything))  # disjoint, no duplicates
    assert agnews_controlled_sets(_records(), 24, seed=3) == sets
    assert agnews_controlled_sets(_records(), 24, seed=4) != sets
    with pytest.raises(GenmetricsError, match="not enough"):
        agnews_controlled_sets(_records(), 40)


def test_controlled_experiment_on_synthetic_topics():
    """Topics as Gaussian blobs: Q1 drops a mode, Q3 adds two -> the expected orderings."""
    centers = np.random.default_rng(1).normal(size=(4, 8)) * 5
    rng = np.random.default_rng(2)

    def draw(labs, n):
        lab = np.asarray(labs)[rng.integers(0, len(labs), n)]
        return centers[lab] + rng.normal(size=(n, 8))

    emb = {
        "P": draw([0, 1], 300),
        "Q1": draw([0], 300),
        "Q2": draw([0, 1], 300),
        "Q3": draw([0, 1, 2, 3], 300),
    }
    rows = controlled_experiment(emb, {"precision_recall": {"pca": False}})
    assert {r["set"] for r in rows} == {"Q1", "Q2", "Q3"}
    assert check_orderings(rows, margin=0.2) == []
    swapped = [{**r, "set": {"Q1": "Q2", "Q2": "Q1"}.get(r["set"], r["set"])} for r in rows]
    assert check_orderings(swapped) and "recall" in check_orderings(swapped)[0]
    assert run_metric("precision_recall", emb["P"], emb["Q2"], {"pca": False})["recall"] > 0.8


def test_spread_analysis_and_table():
    from genmetrics.analysis.distribution import SPREAD_COLUMNS, spread_analysis, spread_table

    ref = blobs(0, 50)
    cands = [blobs(s, 40) for s in (1, 2, 3)]
    settings = {"reference_resamples": 2, "fraction": 0.8, "seed": 0}
    rec = spread_analysis("precision_recall", ref, cands, {"k": 3}, settings)
    assert rec["reference_size"] == 40 and rec["reference_pool"] == 50 and rec["seeds"] == 3
    by = {(r["vary"], r["value"]): r for r in rec["rows"]}
    assert by["candidate", "precision"]["n_runs"] == 3 and by["reference", "recall"]["n_runs"] == 2
    assert by["both", "precision"]["n_runs"] == 2
    again = spread_analysis("precision_recall", ref, cands, {"k": 3}, settings)
    assert again == rec
    assert rec["candidate_sizes"] == [40, 40, 40]
    keys = {"dataset": "d", "model": "m", "entry": "pr", "metric": "precision_recall"}
    table = spread_table([{**keys, **rec}])
    assert list(table.columns) == SPREAD_COLUMNS
    assert len(table) == len(rec["rows"]) and set(table.entry) == {"pr"}
    assert set(table.n_reference) == {40} and set(table.reference_pool) == {50}
    assert spread_table([]).empty


def test_spread_redraw_scores_each_draw_and_states_its_sets():
    """references: redraw: vary P runs the given draws (no resampling of them); the record
    says how the sets were drawn, from how many texts, and how much two of them share."""
    from genmetrics.analysis.distribution import run_metric, spread_analysis, spread_table

    pool = blobs(0, 200)
    cands = [blobs(s, 30) for s in (1, 2)]
    # draws 0 and 1 share text 0, draws 0 and 2 text 1, draws 1 and 2 none
    picks = [[0, *range(1, 30)], [0, *range(30, 59)], [1, *range(59, 88)]]
    draws = [([f"r{i}" for i in ix], pool[ix]) for ix in picks]
    settings = {"references": "redraw", "reference_resamples": 3, "seed": 0}
    rec = spread_analysis(
        "precision_recall", None, cands, {"k": 3}, settings, draws=draws, pool=200
    )
    assert rec["reference_sets"] == "redraw" and rec["reference_size"] == 30
    assert rec["reference_pool"] == 200
    assert rec["reference_overlap"] == pytest.approx((1 / 30 + 1 / 30 + 0) / 3)
    by = {(r["vary"], r["value"]): r for r in rec["rows"]}
    want = [run_metric("precision_recall", emb, cands[0], {"k": 3})["recall"] for _, emb in draws]
    assert by["reference", "recall"]["runs"] == pytest.approx(want)
    assert by["reference", "recall"]["std"] == pytest.approx(np.std(want, ddof=1))
    keys = {"dataset": "d", "model": "m", "entry": "pr", "metric": "precision_recall"}
    table = spread_table([{**keys, **rec}])
    assert set(table.reference_sets) == {"redraw"}
    assert "independent draws" in table[table.vary == "reference"].over.iloc[0]
    with pytest.raises(GenmetricsError, match="needs 3 reference draws, got 2"):
        spread_analysis("precision_recall", None, cands, {"k": 3}, settings, draws=draws[:2])


def test_cleaned_pool_is_what_the_sample_was_drawn_from():
    from genmetrics.analysis.distribution import cleaned_pool
    from genmetrics.data.clean import clean_rows

    # every kind of drop: a label filtered out, empty, duplicate, too short, too long
    rows = [
        {"id": str(i), "text": " ".join(["w"] * (i % 9)) + f" t{i % 40}", "k": "xy"[i % 5 == 0]}
        for i in range(100)
    ]
    rows += [{"id": "e", "text": " ", "k": "x"}]
    rows += [{"id": f"d{i}", "text": "w w w again", "k": "x"} for i in range(2)]
    options = {"min_words": 2, "max_words": 6, "dedupe": True, "filter": {"k": ["x"]}}
    whole, _ = clean_rows(rows, options)
    kept, stats = clean_rows(rows, {**options, "sample": 3, "seed": 1})
    assert len(kept) == 3 and cleaned_pool(stats) == len(whole)
    assert all(stats[k] for k in ("filtered", "empty", "duplicate", "too_short", "too_long"))
    kept, stats = clean_rows(rows, options)  # no sample: the pool is the output
    assert cleaned_pool(stats) == len(kept) == stats["output"]


def test_subsample_overlap_is_that_of_its_index_sets():
    from genmetrics.analysis.distribution import spread_analysis

    settings = {"reference_resamples": 3, "fraction": 0.8, "seed": 4}
    rec = spread_analysis("precision_recall", blobs(0, 50), [blobs(1, 40)], {"k": 3}, settings)
    ix = [set(np.random.default_rng(4 + i).choice(50, size=40, replace=False)) for i in range(3)]
    shared = [len(ix[a] & ix[b]) / 40 for a, b in ((0, 1), (0, 2), (1, 2))]
    assert rec["reference_sets"] == "subsample"
    assert rec["reference_overlap"] == pytest.approx(np.mean(shared))
    assert rec["reference_overlap"] > 0.6  # 40 of 50: two sets share 32 texts on average


def test_independent_reference_draws_move_recall_more_than_subsamples():
    """A controlled experiment: recall is a mean over the reference texts, so 80% subsamples
    of one set of 100 (which share 80% of their texts) vary less than sets of 100 drawn anew
    from a pool of 3,000 (about √0.2 ≈ 0.45 of the SD for a mean). Measured over five pools:
    ratios 1.4–3.0. (Precision, a mean over the model's texts, shows no such ordering.)"""
    from genmetrics.analysis.distribution import spread_analysis

    ratios = []
    for trial in range(5):
        rng = np.random.default_rng(trial)
        pool, cand = rng.normal(size=(3000, 8)), rng.normal(size=(100, 8)) + 0.3
        idx = [np.random.default_rng(100 + i).choice(3000, 100, replace=False) for i in range(15)]
        draws = [([str(j) for j in ix], pool[ix]) for ix in idx]
        params = {"k": 4, "pca": False}
        common = {"reference_resamples": 15, "seed": 0}
        red = spread_analysis(
            "precision_recall",
            None,
            [cand],
            params,
            {**common, "references": "redraw"},
            draws=draws,
            pool=3000,
        )
        sub = spread_analysis(
            "precision_recall", pool[idx[0]], [cand], params, {**common, "fraction": 0.8}
        )

        def sd(rec):
            return next(
                r["std"] for r in rec["rows"] if r["vary"] == "reference" and r["value"] == "recall"
            )

        ratios.append(sd(red) / sd(sub))
    assert min(ratios) > 1 and np.mean(ratios) > 1.5


def test_sweep_table_rows():
    from genmetrics.analysis.distribution import sweep_table

    ref, cand = blobs(0, 40), blobs(1, 40)
    settings = {
        "ns": [10, 40],
        "ks": [1, 3],
        "repeats": 1,
        "params": {"k": 3, "pca": False, "strict": True, "seed": 0, "method": "auto"},
    }
    df = sweep_table(ref, cand, settings, source="m/seed0")
    assert set(df.source) == {"m/seed0"} and list(df.columns[:1]) == ["source"]
    assert sorted(df[df.sweep == "n"]["n"]) == [10, 40]
    assert sorted(df[df.sweep == "k"]["k"]) == [1, 3]
    full = df[(df.sweep == "n") & (df.n == 40)].iloc[0]
    k3 = df[(df.sweep == "k") & (df.k == 3)].iloc[0]
    assert full["precision"] == pytest.approx(k3["precision"])


def test_sweep_table_sweeps_each_source_as_far_as_its_texts_go():
    """One config's N list serves sources of different sizes: N above the smaller set are
    replaced by its size (a set of 40 against 45 references: 10, 30, then 40, not 60)."""
    from genmetrics.analysis.distribution import sweep_sizes, sweep_table

    ref, cand = blobs(0, 45), blobs(1, 40)
    settings = {
        "ns": [60, 10, 30, 100],
        "ks": [3],
        "repeats": 2,
        "params": {"k": 3, "pca": False, "strict": True, "seed": 0, "method": "auto"},
    }
    df = sweep_table(ref, cand, settings, source="m/seed0")
    n_rows = df[df.sweep == "n"]
    assert sorted(set(n_rows["n"])) == [10, 30, 40]
    assert (n_rows.groupby("n").size() == 2).all()
    # at N = 40 the candidate set is whole: every repeat differs only in the references drawn
    direct = sweep_n(ref, cand, [40], k=3, pca=False, repeats=2)
    got = n_rows[n_rows.n == 40].sort_values("repeat")
    assert list(got["recall"]) == pytest.approx([r["recall"] for r in direct])
    assert sweep_sizes([10, 30], 40) == [10, 30]
    assert sweep_sizes([10, 40, 50], 40) == [10, 40]
    assert sweep_sizes([50, 60], 40) == [40]
    assert sweep_sizes(None, 40) is None
