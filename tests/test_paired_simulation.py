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
fresh datasets (:func:`true_differences`: 200 datasets in the slow test).

Families and values: quality/diversity (``frechet``), diversity (``distinct_n``: distinct_1),
lexical (``mattr``), reference (``rouge``: rouge1, its headline), coherence (``coherence``).

Numbers (2026-11-29, 2 shared CPU cores, ``pytest -m slow``, 21:40): 60 null datasets of
three models, 900 tests: 4.1 % of the unadjusted p below 0.05; a Holm rejection in 6 of 60
datasets (0.10; binomial SD at 0.05: 0.028), BH the same. 60 datasets with the difference:
coverage of the true difference by the paired 95 % interval 94.0 % pooled over the five
values (300 cases, SD 1.4 %), per value Fréchet 96.7 %, distinct-1 98.3 %, MATTR 90.0 %,
ROUGE-1 95.0 %, coherence 90.0 % (60 each, SD 2.8 %). The default tests below are small
versions of these (about a minute on an idle 2-core machine).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
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


def null_rates(tables: list) -> dict[str, float]:
    """Unadjusted false-positive rate per test, and the share of datasets with any Holm or
    BH rejection (under the complete null both are the family-wise error)."""
    p = np.concatenate([t["p"].to_numpy(float) for t in tables])
    return {
        "tests": len(p),
        "raw": float(np.mean(p < 0.05)),
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
    """4 datasets with the known difference: at least 8 of the 20 differences are found (Holm p <
    0.05), each one found in the direction of the true difference (the mean over 20 fresh
    datasets), and the paired 95% intervals cover the true difference in at least 15 of 20."""
    truth = true_differences(20)
    tables = simulate(4, differ=True, resamples=60, seed=11)
    found = [r for t in tables for r in t[t["p_holm"] < 0.05].to_dict("records")]
    assert len(found) >= 8
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
    """The docs' numbers: 60 null datasets of three models (900 tests) and 60 with the known
    difference (true difference: the mean over 200 fresh datasets), 100 resamples; the Holm
    and BH family-wise false-positive rates at most 0.05 + 3 binomial SDs (0.13 over 60), the
    unadjusted rate within 0.05 ± 0.02, the coverage pooled over the five values within
    0.95 ± 0.02 + 2 binomial SDs (300 cases: ±2.5 %)."""
    null = null_rates(simulate(60, differ=False, resamples=100, seed=21))
    truth = true_differences(200)
    cov = coverage(simulate(60, differ=True, resamples=100, seed=22), truth)
    pooled = float(np.mean(list(cov.values())))
    print("null", null)
    print("coverage", cov, "pooled", pooled)
    assert null["holm"] <= 0.05 + binomial_slack(0.05, 60)
    assert null["bh"] <= 0.05 + binomial_slack(0.05, 60)
    assert abs(null["raw"] - 0.05) <= 0.02
    assert abs(pooled - 0.95) <= 0.02 + binomial_slack(0.95, 300, 2.0)
