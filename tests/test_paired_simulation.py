"""Paired differences validated by simulation (genmetrics.analysis.paired): synthetic
datasets of U = 30 prompts scored by real registered metrics of five families, with and
without a known difference between two models, through the score job's interval
(``score_loaded``: half-sample replicates over prompts) and the paired table.

The generator: prompt i has an embedding μ_i (8-d) and a topic (a permutation of a 600-word
vocabulary, Zipf-weighted); the human reference of prompt i and each model's continuation
are 20 words of the topic and an embedding μ_i + noise. Model b of the "difference" case
draws its words from the topic's 100 most frequent words only and its embedding is shifted by
0.5 along one axis: it is less diverse, less lexically rich, closer in words to the human
reference. The true difference of each value at U prompts is the mean difference over
fresh datasets (:func:`true_differences`: 1,000 datasets in the slow test).

Families and values: quality/diversity (``frechet``), diversity (``distinct_n``: distinct_1),
lexical (``mattr``), reference (``rouge``: rouge1, its headline), coherence (``coherence``).

The p-value is a paired t-test on the replicates (Student's t on ν = 25.3 degrees of
freedom at 30 prompts and 200 resamples), the interval the t interval that agrees with it
(:mod:`genmetrics.analysis.paired`). Numbers of :func:`test_simulation_at_scale`
(2026-11-29, 2 shared CPU cores, the same datasets as ``benchmarks/bench_paired_simulation.py
--null 400 --differ 300 --resamples 200 --truth 1000``: 20.4 min), with set statistics'
replicates rescaled by their measured rate (:mod:`genmetrics.scoring.set_variance`): 400 null
datasets of three models, 6,000 tests: 3.9 % of the unadjusted p below 0.05, per value
Fréchet 3.8 %, distinct-1 2.2 %, MATTR 4.1 %, ROUGE-1 5.3 %, coherence 3.9 % (1,200 tests
each, SD 0.6 %); a Holm rejection in 11 of 400 datasets (0.028; binomial SD at 0.05: 0.011),
BH in 12 (0.030); p below 0.05/15 in 0.18 % of tests (nominal 0.33 %). 300 datasets with the
difference (the true difference: the mean over 1,000 fresh datasets): coverage of the true
difference by the paired 95 % interval Fréchet 93.0 %, distinct-1 97.0 %, MATTR 95.0 %,
ROUGE-1 96.7 %, coherence 95.3 % (300 each, SD 1.3 %), 95.4 % pooled; the replicates' sd over
the sd of the difference across datasets 0.94, 1.15, 1.01, 1.00, 0.97. Before the rate was
measured (every value's replicates rescaled as a mean's), Fréchet's and distinct-1's
replicates were 1.47 and 1.32 times too spread: coverage 100 % and 99.3 %, false positives
0.2 % and 0.3 %. Under the normal reference (a bootstrap z-test on the same replicates) the
Holm rate was 0.055, and p fell below 0.05/15 in 0.64 % of the tests of the means. The default
tests below are small versions of these (about 30 s on an idle 2-core machine).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pandas as pd
import pytest

from genmetrics.analysis.paired import paired_differences
from genmetrics.metrics import get
from genmetrics.scoring.from_files import score_loaded
from genmetrics.scoring.intervals import DEFAULTS

U, DIM, WORDS_PER_TEXT = 30, 8, 20
VOCAB = [f"w{i:03d}" for i in range(600)]
ZIPF = 1.0 / np.arange(1, len(VOCAB) + 1)
#: entry → (metric, params, input: "emb" or "text", reference: None, "prompt" or "human")
ENTRIES = {
    "frechet": ("frechet", {}, "emb", "human"),
    "distinct_n": ("distinct_n", {"tokenizer": "whitespace"}, "text", None),
    "mattr": ("mattr", {"window": 10}, "text", None),
    "rouge": ("rouge", {"split_sentences": False}, "text", "human"),
    "coherence": ("coherence", {}, "emb", "prompt"),
}


def dataset(rng: np.random.Generator, differ: bool) -> dict:
    """One synthetic dataset: prompts' embeddings, the human references and two models."""
    mu = rng.normal(size=(U, DIM)).astype(np.float32)
    topics = [rng.permutation(len(VOCAB)) for _ in range(U)]

    def words(top: int) -> list[str]:
        out = []
        for t in topics:
            w = ZIPF[:top] / ZIPF[:top].sum()
            out.append(" ".join(VOCAB[j] for j in t[rng.choice(top, WORDS_PER_TEXT, p=w)]))
        return out

    def emb(shift: float) -> np.ndarray:
        e = mu + rng.normal(scale=0.8, size=(U, DIM)).astype(np.float32)
        e[:, 0] += shift
        return e

    data = {"prompt_emb": mu, "human_text": words(600), "human_emb": emb(0.0)}
    data["a"] = {"text": words(600), "emb": emb(0.0)}
    if differ:
        data["b"] = {"text": words(100), "emb": emb(0.5)}
    else:  # three models of one distribution: three pairs
        data["b"] = {"text": words(600), "emb": emb(0.0)}
        data["c"] = {"text": words(600), "emb": emb(0.0)}
    return data


PROMPTS = [f"p{i:02d}" for i in range(U)]
REF_ROWS = [{"id": p} for p in PROMPTS]


def records(data: dict, resamples: int, seed: int = 0) -> list[dict]:
    """The score records of both models for every entry (interval seed ``seed``)."""
    out = []
    iv = {**DEFAULTS, "resamples": resamples, "seed": seed, "asked": True}
    for model in [m for m in ("a", "b", "c") if m in data]:
        rows = [{"id": f"{model}{i}", "prompt_id": p} for i, p in enumerate(PROMPTS)]
        for entry, (metric, params, kind, ref) in ENTRIES.items():
            cand = data[model][kind]
            r = None if ref is None else data["prompt_emb" if ref == "prompt" else f"human_{kind}"]
            rec = score_loaded(
                get(metric),
                cand,
                rows,
                r,
                None if ref is None else REF_ROWS,
                params=params,
                interval=iv,
            )
            out.append(rec | {"dataset": "sim", "source": model, "entry": entry})
    return out


def point_differences(data: dict) -> dict[tuple[str, str], float]:
    """(entry, value) → a − b of the point values (no interval)."""
    vals = {}
    for entry, (metric, params, kind, ref) in ENTRIES.items():
        for model in ("a", "b"):
            rows = [{"id": f"{model}{i}", "prompt_id": p} for i, p in enumerate(PROMPTS)]
            r = None if ref is None else data["prompt_emb" if ref == "prompt" else f"human_{kind}"]
            got = score_loaded(
                get(metric),
                data[model][kind],
                rows,
                r,
                None if ref is None else REF_ROWS,
                params=params,
            )["values"]
            for v, x in got.items():
                vals[entry, v, model] = x
    return {(e, v): vals[e, v, "a"] - vals[e, v, "b"] for (e, v, m) in vals if m == "a"}


@cache
def true_differences(n: int = 400) -> dict[tuple[str, str], float]:
    """The expected difference a − b at U prompts: the mean over ``n`` fresh datasets."""
    rng = np.random.default_rng(12345)
    diffs = [point_differences(dataset(rng, differ=True)) for _ in range(n)]
    return {k: float(np.mean([d[k] for d in diffs])) for k in diffs[0]}


def simulate(reps: int, differ: bool, resamples: int, seed: int) -> list:
    """The paired tables of ``reps`` datasets."""
    rng = np.random.default_rng(seed)
    return [paired_differences(records(dataset(rng, differ), resamples, i)) for i in range(reps)]


def null_rates(tables: list) -> dict:
    """Unadjusted false-positive rate per test (pooled, and per value), and the share of
    datasets with any Holm or BH rejection (under the complete null both are the family-wise
    error)."""
    p = np.concatenate([t["p"].to_numpy(float) for t in tables])
    every = pd.concat(tables)
    return {
        "tests": len(p),
        "raw": float(np.mean(p < 0.05)),
        "raw_by_value": every.groupby("value")["p"]
        .apply(lambda x: float(np.mean(x < 0.05)))
        .to_dict(),
        "holm": float(np.mean([(t["p_holm"] < 0.05).any() for t in tables])),
        "bh": float(np.mean([(t["p_bh"] < 0.05).any() for t in tables])),
        "families": len({t_e for t in tables for t_e in t["entry"]}),
    }


def coverage(tables: list, truth: dict) -> dict[tuple[str, str], float]:
    out = {}
    for key in truth:
        hits = []
        for t in tables:
            r = t[(t["entry"] == key[0]) & (t["value"] == key[1])]
            if len(r):
                hits.append(bool(r["lower"].iloc[0] <= truth[key] <= r["upper"].iloc[0]))
        if hits:
            out[key] = float(np.mean(hits))
    return out


def binomial_slack(p: float, n: int, k: float = 3.0) -> float:
    return k * math.sqrt(p * (1 - p) / n)


def test_no_difference_false_positives_stay_at_their_level():
    """6 null datasets of three models (3 pairs × 5 headline values: 90 tests): the
    unadjusted rate of p < 0.05 within three binomial SDs of 0.05 (a loose check: the tests
    of a dataset are correlated), and at most 1 of the 6 datasets with any Holm or BH
    rejection (at a family-wise level of 0.05, P(≥ 2 of 6) = 0.03)."""
    tables = simulate(6, differ=False, resamples=60, seed=7)
    r = null_rates(tables)
    assert r["families"] == 5 and r["tests"] == 90
    assert abs(r["raw"] - 0.05) <= binomial_slack(0.05, r["tests"])
    assert r["holm"] * 6 <= 1 and r["bh"] * 6 <= 1


def test_a_known_difference_is_found_and_covered():
    """4 datasets with the known difference: at least 3 of the 20 differences are found (Holm
    p < 0.05; the test at scale finds 1.7 per dataset: MATTR in 78 % of datasets, ROUGE-1 50 %,
    distinct-1 38 %, Fréchet 4 %, coherence 2 %, so 4 datasets find at most 2 with probability
    0.004 if the values were independent), each one found in the direction of the true
    difference (the mean over 20 fresh datasets; at scale 2 of the 516 differences found had
    the wrong sign, both coherence's, whose true difference is a quarter of its SD), and the
    paired 95% intervals cover the true difference in at least 15 of 20."""
    truth = true_differences(20)
    tables = simulate(4, differ=True, resamples=60, seed=11)
    found = [r for t in tables for r in t[t["p_holm"] < 0.05].to_dict("records")]
    assert len(found) >= 3
    for r in found:
        assert np.sign(r["difference"]) == np.sign(truth[r["entry"], r["value"]])
    hits = [
        r["lower"] <= truth[r["entry"], r["value"]] <= r["upper"]
        for t in tables
        for r in t.to_dict("records")
    ]
    assert len(hits) == 20 and sum(hits) >= 15


@pytest.mark.slow
def test_simulation_at_scale():
    """The docs' numbers (module docstring; about 20 min on 2 shared cores): 400 null datasets
    of three models (6,000 tests) and 300 with the known difference (true difference: the mean
    over 1,000 fresh datasets), 200 resamples. The Holm and BH family-wise false-positive
    rates at most 0.05 + 2 binomial SDs (0.072 over 400); every value's unadjusted rate at most
    0.05 + 3 binomial SDs (0.069 over 1,200); every value's coverage within 0.93–0.97
    (95 ± 2 %; 300 cases, SD 1.3 %)."""
    null = null_rates(simulate(400, differ=False, resamples=200, seed=21))
    truth = true_differences(1000)
    cov = coverage(simulate(300, differ=True, resamples=200, seed=22), truth)
    print("null", null)
    print("coverage", cov, "pooled", float(np.mean(list(cov.values()))))
    assert null["families"] == 5 and null["tests"] == 6000
    assert null["holm"] <= 0.05 + binomial_slack(0.05, 400, 2.0)
    assert null["bh"] <= 0.05 + binomial_slack(0.05, 400, 2.0)
    for value, rate in null["raw_by_value"].items():
        assert rate <= 0.05 + binomial_slack(0.05, 1200), value
    assert len(cov) == 5 and all(0.93 <= c <= 0.97 for c in cov.values()), cov
